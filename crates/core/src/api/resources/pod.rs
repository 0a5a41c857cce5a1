//! A pod's resource requests (upstream's `PodRequests` and the scheduler's non-zero
//! variants) and its host ports.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, ContainerStatus, PodSpec, PodStatus};

use super::{CPU, MEMORY, Resources, Result, is_hugepage_resource_name, parse_list};
use crate::api::quantity::Quantity;

/// CPU the scheduler assumes, for scoring, for a container that requests none: 100m.
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
/// Memory the scheduler assumes, for scoring, for a container that requests none: 200Mi.
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// How to compute requests; the feature gates that change `PodRequests`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestOptions {
    /// `PodLevelResources` (beta, on by default since 1.34): `spec.resources.requests`
    /// for cpu, memory and hugepages replace the containers' sum.
    pub pod_level_resources: bool,
    /// `InPlacePodVerticalScaling` (on by default since 1.33): a running pod's
    /// allocated and actuated requests from its status count too.
    pub in_place_pod_vertical_scaling: bool,
    /// `SidecarContainers` (on by default since 1.29): an init container with
    /// `restartPolicy: Always` runs beside the regular ones. While the gate is off the
    /// API server drops that field, so such a container counts as a plain init container.
    pub sidecar_containers: bool,
}

impl Default for RequestOptions {
    fn default() -> Self {
        Self {
            pod_level_resources: true,
            in_place_pod_vertical_scaling: true,
            sidecar_containers: true,
        }
    }
}

/// The non-zero cpu and memory requests: what scoring counts for a pod, with 100m cpu
/// and 200Mi memory for each container that leaves them out (an explicit `0` stays 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NonZeroRequests {
    /// CPU in thousandths of a core.
    pub milli_cpu: i64,
    /// Memory in bytes.
    pub memory: i64,
}

impl NonZeroRequests {
    /// Adds `other` (saturating); a node's `NonZeroRequested` is the sum over its pods.
    pub fn add(&mut self, other: NonZeroRequests) {
        self.milli_cpu = self.milli_cpu.saturating_add(other.milli_cpu);
        self.memory = self.memory.saturating_add(other.memory);
    }

    /// Subtracts `other` (saturating), for a pod leaving a node.
    pub fn sub(&mut self, other: NonZeroRequests) {
        self.milli_cpu = self.milli_cpu.saturating_sub(other.milli_cpu);
        self.memory = self.memory.saturating_sub(other.memory);
    }
}

/// Everything the default plugins need to know about a pod's resource requests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodResourceRequests {
    /// `PodRequests` as a resource vector: what NodeResourcesFit checks, and what the
    /// pod adds to its node's `Requested`. `allowed_pod_number` is always 0.
    pub requested: Resources,
    /// What the pod adds to its node's `NonZeroRequested` once bound (upstream's
    /// `calculateResource`).
    pub non_zero: NonZeroRequests,
    /// The incoming pod's cpu/memory as the scorers that do not use `requested`
    /// (LeastAllocated, MostAllocated, RequestedToCapacityRatio) count it. Equal to
    /// `non_zero` unless pod-level requests are set.
    pub score_non_zero: NonZeroRequests,
}

impl PodResourceRequests {
    /// The pod's request for `resource` as a resource-allocation scorer sees it
    /// (`calculatePodResourceRequest`): `use_requested` is true for
    /// BalancedAllocation, false for NodeResourcesFit's scoring strategies. Resources
    /// the scheduler does not track (not cpu, memory, ephemeral-storage or a scalar
    /// resource) count as 0.
    pub(crate) fn score_request(&self, resource: &str, use_requested: bool) -> i64 {
        match resource {
            CPU if !use_requested => self.score_non_zero.milli_cpu,
            MEMORY if !use_requested => self.score_non_zero.memory,
            CPU => self.requested.milli_cpu,
            MEMORY => self.requested.memory,
            super::EPHEMERAL_STORAGE => self.requested.ephemeral_storage,
            _ => self.requested.scalar(resource),
        }
    }
}

/// [`pod_requests_with`] under the default feature gates, for a pod as its spec
/// describes it (no status): the pod being scheduled.
pub fn pod_requests(spec: &PodSpec) -> Result<PodResourceRequests> {
    pod_requests_with(spec, None, RequestOptions::default())
}

/// A pod's requests, as upstream's `PodRequests` computes them: the sum over
/// containers; each init container's request (plus the restartable init containers
/// before it) as a floor; restartable (sidecar) init containers added to the sum;
/// pod-level requests replacing cpu/memory/hugepages when set; overhead added last.
///
/// Pass the pod's `status` for a pod already on a node: with
/// `in_place_pod_vertical_scaling`, each container then counts the larger of its spec,
/// allocated (`status.containerStatuses[].allocatedResources`) and actuated
/// (`...resources.requests`) requests, as `NodeInfo` does for resized pods (only the
/// latter two when the resize is `Infeasible`). Pass `None` for the pod being
/// scheduled: NodeResourcesFit never looks at status.
///
/// Fails, naming the field, on a quantity that does not parse or is negative.
pub fn pod_requests_with(
    spec: &PodSpec,
    status: Option<&PodStatus>,
    options: RequestOptions,
) -> Result<PodResourceRequests> {
    let status = status.filter(|_| options.in_place_pod_vertical_scaling);
    let parsed = ParsedPod::parse(spec, status, options)?;
    let requests = parsed.aggregate(&[]);

    let mut requested = Resources::default();
    for (name, quantity) in &requests {
        if *name != super::PODS {
            requested.add_quantity(name, quantity);
        }
    }

    let defaults = [
        (CPU, Quantity::from_milli(DEFAULT_MILLI_CPU_REQUEST)),
        (MEMORY, Quantity::from_value(DEFAULT_MEMORY_REQUEST)),
    ];
    // NodeInfo: defaults for every container unless pod-level requests are set, then
    // only for what the pod requests nowhere (getNonMissingContainerRequests).
    let node_defaults: Vec<(&str, Quantity)> = if parsed.pod_level.is_some() {
        defaults
            .iter()
            .filter(|(name, _)| !requests.contains_key(name))
            .copied()
            .collect()
    } else {
        defaults.to_vec()
    };
    let non_zero = non_zero_of(&parsed.aggregate(&node_defaults));
    let score_non_zero = non_zero_of(&parsed.aggregate(&defaults));

    Ok(PodResourceRequests {
        requested,
        non_zero,
        score_non_zero,
    })
}

fn non_zero_of(requests: &BTreeMap<&str, Quantity>) -> NonZeroRequests {
    NonZeroRequests {
        milli_cpu: requests.get(CPU).map_or(0, Quantity::milli_value),
        memory: requests.get(MEMORY).map_or(0, Quantity::value),
    }
}

type List<'a> = BTreeMap<&'a str, Quantity>;

/// A container's requests, parsed: from its spec, and from its status when the pod
/// runs and in-place resize applies.
struct ParsedContainer<'a> {
    spec: List<'a>,
    /// `allocatedResources`, when the status lists the container and has them.
    allocated: Option<List<'a>>,
    /// `resources.requests`, when the status lists the container and has them.
    actuated: Option<List<'a>>,
    restartable: bool,
}

/// Which requests a container contributes (upstream's `containerSpecRequests`,
/// `containerAllocatedRequests`, `containerActuatedRequests`).
#[derive(Clone, Copy)]
enum Source {
    Spec,
    Allocated,
    Actuated,
}

impl<'a> ParsedContainer<'a> {
    fn requests(&self, source: Source, infeasible: bool) -> Option<&List<'a>> {
        let fallback = if infeasible { None } else { Some(&self.spec) };
        match source {
            Source::Spec => Some(&self.spec),
            Source::Allocated => self.allocated.as_ref().or(fallback),
            Source::Actuated => self
                .actuated
                .as_ref()
                .or(self.allocated.as_ref())
                .or(fallback),
        }
    }
}

/// Every resource list of a pod, parsed once.
struct ParsedPod<'a> {
    containers: Vec<ParsedContainer<'a>>,
    init_containers: Vec<ParsedContainer<'a>>,
    /// Whether the status was given (and in-place resize applies).
    use_status: bool,
    /// The pod's `PodResizePending` condition says `Infeasible`.
    infeasible: bool,
    /// Pod-level requests when `PodLevelResources` applies and they name a supported
    /// resource; only the supported entries.
    pod_level: Option<List<'a>>,
    overhead: List<'a>,
}

impl<'a> ParsedPod<'a> {
    fn parse(
        spec: &'a PodSpec,
        status: Option<&'a PodStatus>,
        options: RequestOptions,
    ) -> Result<Self> {
        let find_status = |name: &str| -> Option<(usize, &'a ContainerStatus, &'static str)> {
            let status = status?;
            let find = |list: &'a Option<Vec<ContainerStatus>>, field: &'static str| {
                list.iter()
                    .flatten()
                    .enumerate()
                    .find(|(_, cs)| cs.name == name)
                    .map(|(i, cs)| (i, cs, field))
            };
            find(&status.container_statuses, "containerStatuses")
                .or_else(|| find(&status.init_container_statuses, "initContainerStatuses"))
        };
        let parse_container =
            |c: &'a Container, field: &str, i: usize| -> Result<ParsedContainer<'a>> {
                let spec = parse_list(
                    c.resources.as_ref().and_then(|r| r.requests.as_ref()),
                    &|| format!("spec.{field}[{i}].resources.requests"),
                )?;
                let (mut allocated, mut actuated) = (None, None);
                if let Some((j, cs, status_field)) = find_status(&c.name) {
                    if let Some(list) = cs.allocated_resources.as_ref() {
                        allocated = Some(parse_list(Some(list), &|| {
                            format!("status.{status_field}[{j}].allocatedResources")
                        })?);
                    }
                    if let Some(list) = cs.resources.as_ref().and_then(|r| r.requests.as_ref()) {
                        actuated = Some(parse_list(Some(list), &|| {
                            format!("status.{status_field}[{j}].resources.requests")
                        })?);
                    }
                }
                Ok(ParsedContainer {
                    spec,
                    allocated,
                    actuated,
                    restartable: options.sidecar_containers
                        && c.restart_policy.as_deref() == Some("Always"),
                })
            };
        let containers = spec
            .containers
            .iter()
            .enumerate()
            .map(|(i, c)| parse_container(c, "containers", i))
            .collect::<Result<Vec<_>>>()?;
        let init_containers = spec
            .init_containers
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| parse_container(c, "initContainers", i))
            .collect::<Result<Vec<_>>>()?;
        let pod_level_list = parse_list(
            spec.resources.as_ref().and_then(|r| r.requests.as_ref()),
            &|| "spec.resources.requests".to_owned(),
        )?;
        let supported: List<'a> = pod_level_list
            .into_iter()
            .filter(|(name, _)| is_supported_pod_level_resource(name))
            .collect();
        let pod_level = (options.pod_level_resources && !supported.is_empty()).then_some(supported);
        let overhead = parse_list(spec.overhead.as_ref(), &|| "spec.overhead".to_owned())?;
        // IsPodResizeInfeasible: the first PodResizePending condition decides.
        let infeasible = status
            .and_then(|s| s.conditions.as_ref())
            .and_then(|conditions| conditions.iter().find(|c| c.type_ == "PodResizePending"))
            .is_some_and(|c| c.reason.as_deref() == Some("Infeasible"));
        Ok(Self {
            containers,
            init_containers,
            use_status: status.is_some(),
            infeasible,
            pod_level,
            overhead,
        })
    }

    /// `PodRequests` with `defaults` filled in for containers that omit them
    /// (`NonMissingContainerRequests`).
    fn aggregate(&self, defaults: &[(&'a str, Quantity)]) -> List<'a> {
        let mut result = if self.use_status {
            let spec = self.aggregate_containers(Source::Spec, defaults);
            let allocated = self.aggregate_containers(Source::Allocated, defaults);
            let actuated = self.aggregate_containers(Source::Actuated, defaults);
            let mut result = actuated;
            max_into(&mut result, &allocated);
            if !self.infeasible {
                max_into(&mut result, &spec);
            }
            result
        } else {
            self.aggregate_containers(Source::Spec, defaults)
        };
        if let Some(pod_level) = &self.pod_level {
            for (name, quantity) in pod_level {
                result.insert(name, *quantity);
            }
        }
        add_into(&mut result, &self.overhead);
        result
    }

    /// `aggregateContainerResourcesByFn`: containers summed, init containers as a
    /// floor, sidecars in both.
    fn aggregate_containers(&self, source: Source, defaults: &[(&'a str, Quantity)]) -> List<'a> {
        let empty = List::new();
        let with_defaults = |container: &ParsedContainer<'a>| {
            let mut filled = container
                .requests(source, self.infeasible)
                .unwrap_or(&empty)
                .clone();
            for (name, quantity) in defaults {
                filled.entry(name).or_insert(*quantity);
            }
            filled
        };
        let mut result = List::new();
        for container in &self.containers {
            add_into(&mut result, &with_defaults(container));
        }
        // While init container i runs, the restartable init containers before it run
        // too (KEP-753).
        let mut restartable = List::new();
        let mut init_floor = List::new();
        for init in &self.init_containers {
            let requests = with_defaults(init);
            let in_use = if init.restartable {
                add_into(&mut result, &requests);
                add_into(&mut restartable, &requests);
                restartable.clone()
            } else {
                let mut combined = requests;
                add_into(&mut combined, &restartable);
                combined
            };
            max_into(&mut init_floor, &in_use);
        }
        max_into(&mut result, &init_floor);
        result
    }
}

/// cpu, memory and `hugepages-*` may be requested at pod level.
fn is_supported_pod_level_resource(name: &str) -> bool {
    name == CPU || name == MEMORY || is_hugepage_resource_name(name)
}

fn add_into<'a>(list: &mut BTreeMap<&'a str, Quantity>, other: &BTreeMap<&'a str, Quantity>) {
    for (name, quantity) in other {
        let entry = list.entry(name).or_insert(Quantity::ZERO);
        *entry = entry.saturating_add(*quantity);
    }
}

fn max_into<'a>(list: &mut BTreeMap<&'a str, Quantity>, other: &BTreeMap<&'a str, Quantity>) {
    for (name, quantity) in other {
        let entry = list.entry(name).or_insert(*quantity);
        if *quantity > *entry {
            *entry = *quantity;
        }
    }
}

/// A host port a container binds (`HostPortInfo`'s key).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostPort {
    /// Host IP; `0.0.0.0` when the spec leaves it empty.
    pub ip: Box<str>,
    /// Protocol; `TCP` when the spec leaves it empty.
    pub protocol: Box<str>,
    /// The host port, always positive.
    pub port: i32,
}

/// The host ports the pod's (regular, not init) containers bind, with upstream's
/// defaults applied; ports without a positive `hostPort` are left out, as the
/// NodePorts plugin and `NodeInfo.UsedPorts` both leave them out.
pub fn host_ports(spec: &PodSpec) -> Vec<HostPort> {
    spec.containers
        .iter()
        .flat_map(|c| c.ports.iter().flatten())
        .filter_map(|p| {
            let port = p.host_port.filter(|&port| port > 0)?;
            let ip = match p.host_ip.as_deref() {
                None | Some("") => "0.0.0.0",
                Some(ip) => ip,
            };
            let protocol = match p.protocol.as_deref() {
                None | Some("") => "TCP",
                Some(protocol) => protocol,
            };
            Some(HostPort {
                ip: ip.into(),
                protocol: protocol.into(),
                port,
            })
        })
        .collect()
}
