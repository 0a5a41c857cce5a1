//! A pod's resource requests (upstream's `PodRequests` and the scheduler's non-zero
//! variants) and its host ports.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PodSpec};

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
}

impl Default for RequestOptions {
    fn default() -> Self {
        Self {
            pod_level_resources: true,
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
    pub fn score_request(&self, resource: &str, use_requested: bool) -> i64 {
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

/// [`pod_requests_with`] under the default feature gates.
pub fn pod_requests(spec: &PodSpec) -> Result<PodResourceRequests> {
    pod_requests_with(spec, RequestOptions::default())
}

/// A pod's requests, as upstream's `PodRequests` computes them for a pod that is not
/// running yet: the sum over containers; each init container's request (plus the
/// restartable init containers before it) as a floor; restartable (sidecar) init
/// containers added to the sum; pod-level requests replacing cpu/memory/hugepages when
/// set; overhead added last. Fails, naming the field, on a quantity that does not
/// parse or is negative.
pub fn pod_requests_with(spec: &PodSpec, options: RequestOptions) -> Result<PodResourceRequests> {
    let parsed = ParsedPod::parse(spec, options)?;
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

/// A container's requests, parsed.
struct ParsedContainer<'a> {
    requests: BTreeMap<&'a str, Quantity>,
    restartable: bool,
}

/// Every resource list of a pod spec, parsed once.
struct ParsedPod<'a> {
    containers: Vec<BTreeMap<&'a str, Quantity>>,
    init_containers: Vec<ParsedContainer<'a>>,
    /// Pod-level requests when `PodLevelResources` applies and they name a supported
    /// resource; only the supported entries.
    pod_level: Option<BTreeMap<&'a str, Quantity>>,
    overhead: BTreeMap<&'a str, Quantity>,
}

impl<'a> ParsedPod<'a> {
    fn parse(spec: &'a PodSpec, options: RequestOptions) -> Result<Self> {
        let container_requests = |c: &'a Container, field: &str, i: usize| {
            parse_list(
                c.resources.as_ref().and_then(|r| r.requests.as_ref()),
                &|| format!("spec.{field}[{i}].resources.requests"),
            )
        };
        let containers = spec
            .containers
            .iter()
            .enumerate()
            .map(|(i, c)| container_requests(c, "containers", i))
            .collect::<Result<Vec<_>>>()?;
        let init_containers = spec
            .init_containers
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| {
                Ok(ParsedContainer {
                    requests: container_requests(c, "initContainers", i)?,
                    restartable: c.restart_policy.as_deref() == Some("Always"),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let pod_level_list = parse_list(
            spec.resources.as_ref().and_then(|r| r.requests.as_ref()),
            &|| "spec.resources.requests".to_owned(),
        )?;
        let supported: BTreeMap<&str, Quantity> = pod_level_list
            .into_iter()
            .filter(|(name, _)| is_supported_pod_level_resource(name))
            .collect();
        let pod_level = (options.pod_level_resources && !supported.is_empty()).then_some(supported);
        let overhead = parse_list(spec.overhead.as_ref(), &|| "spec.overhead".to_owned())?;
        Ok(Self {
            containers,
            init_containers,
            pod_level,
            overhead,
        })
    }

    /// `PodRequests` with `defaults` filled in for containers that omit them
    /// (`NonMissingContainerRequests`).
    fn aggregate(&self, defaults: &[(&'a str, Quantity)]) -> BTreeMap<&'a str, Quantity> {
        let with_defaults = |requests: &BTreeMap<&'a str, Quantity>| {
            let mut filled = requests.clone();
            for (name, quantity) in defaults {
                filled.entry(name).or_insert(*quantity);
            }
            filled
        };
        let mut result = BTreeMap::new();
        for container in &self.containers {
            add_into(&mut result, &with_defaults(container));
        }
        // While init container i runs, the restartable init containers before it run
        // too (KEP-753).
        let mut restartable = BTreeMap::new();
        let mut init_floor = BTreeMap::new();
        for init in &self.init_containers {
            let requests = with_defaults(&init.requests);
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
        if let Some(pod_level) = &self.pod_level {
            for (name, quantity) in pod_level {
                result.insert(name, *quantity);
            }
        }
        add_into(&mut result, &self.overhead);
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
