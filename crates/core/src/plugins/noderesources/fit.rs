//! NodeResourcesFit's Filter: does the pod's request fit in what the node has left?

use std::collections::BTreeSet;

use crate::api::resources::{
    CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resources, is_extended_resource_name,
};

/// Reason when the node already runs as many pods as it allows.
pub(crate) const REASON_TOO_MANY_PODS: &str = "Too many pods";
/// Reason when the node lacks cpu.
pub(crate) const REASON_INSUFFICIENT_CPU: &str = "Insufficient cpu";
/// Reason when the node lacks memory.
pub(crate) const REASON_INSUFFICIENT_MEMORY: &str = "Insufficient memory";
/// Reason when the node lacks ephemeral storage.
pub(crate) const REASON_INSUFFICIENT_EPHEMERAL_STORAGE: &str = "Insufficient ephemeral-storage";

/// One resource the node is short of, as upstream's `InsufficientResource`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InsufficientResource {
    /// The resource name (`pods`, `cpu`, `memory`, `ephemeral-storage` or a scalar).
    pub resource: Box<str>,
    /// Upstream's reason string: `Too many pods` or `Insufficient <resource>`.
    pub reason: Box<str>,
    /// What the pod asks for (1 for pods; milli-cpu for cpu).
    pub requested: i64,
    /// What the node's pods already request (the pod count for pods).
    pub used: i64,
    /// What the node has (its allocatable).
    pub capacity: i64,
    /// Whether the request exceeds the node's whole allocatable, so that evicting pods
    /// (preemption) cannot help. Never set for `Too many pods`.
    pub unresolvable: bool,
}

/// NodeResourcesFit's `ignoredResources` and `ignoredResourceGroups`: extended
/// resources the filter does not check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoredResources {
    names: BTreeSet<Box<str>>,
    groups: BTreeSet<Box<str>>,
}

impl IgnoredResources {
    /// Ignore the extended resources named in `names`, and every extended resource
    /// whose prefix (the part before `/`) is in `groups`.
    pub fn new<N, G>(names: N, groups: G) -> Self
    where
        N: IntoIterator,
        N::Item: AsRef<str>,
        G: IntoIterator,
        G::Item: AsRef<str>,
    {
        Self {
            names: names.into_iter().map(|n| n.as_ref().into()).collect(),
            groups: groups.into_iter().map(|g| g.as_ref().into()).collect(),
        }
    }

    /// Whether the filter skips `name`. Only extended resources can be ignored.
    pub fn ignores(&self, name: &str) -> bool {
        if !is_extended_resource_name(name) {
            return false;
        }
        let prefix = name.split('/').next().unwrap_or(name);
        self.names.contains(name) || self.groups.contains(prefix)
    }
}

/// The resources the node is short of for `request` (the pod's
/// [`PodResourceRequests::requested`](crate::api::resources::PodResourceRequests)),
/// in upstream's order: pods, cpu, memory, ephemeral-storage, then scalar resources
/// (sorted by name; upstream walks a Go map, so its order there is random).
///
/// A resource the pod requests 0 of is never short; a scalar resource the node does
/// not list has 0 allocatable, so any positive request for it is short.
pub fn insufficient_resources(
    request: &Resources,
    allocatable: &Resources,
    requested_on_node: &Resources,
    pods_on_node: usize,
    ignored: &IgnoredResources,
) -> Vec<InsufficientResource> {
    let mut short = Vec::new();
    let pods_on_node = i64::try_from(pods_on_node).unwrap_or(i64::MAX);
    if pods_on_node.saturating_add(1) > allocatable.allowed_pod_number {
        short.push(InsufficientResource {
            resource: PODS.into(),
            reason: REASON_TOO_MANY_PODS.into(),
            requested: 1,
            used: pods_on_node,
            capacity: allocatable.allowed_pod_number,
            unresolvable: false,
        });
    }

    let mut check = |resource: &str, reason: &str, want: i64, used: i64, capacity: i64| {
        if want > 0 && want > capacity.saturating_sub(used) {
            short.push(InsufficientResource {
                resource: resource.into(),
                reason: reason.into(),
                requested: want,
                used,
                capacity,
                unresolvable: want > capacity,
            });
        }
    };
    check(
        CPU,
        REASON_INSUFFICIENT_CPU,
        request.milli_cpu,
        requested_on_node.milli_cpu,
        allocatable.milli_cpu,
    );
    check(
        MEMORY,
        REASON_INSUFFICIENT_MEMORY,
        request.memory,
        requested_on_node.memory,
        allocatable.memory,
    );
    check(
        EPHEMERAL_STORAGE,
        REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
        request.ephemeral_storage,
        requested_on_node.ephemeral_storage,
        allocatable.ephemeral_storage,
    );
    for (name, want) in request.scalars() {
        if want == 0 || ignored.ignores(name) {
            continue;
        }
        check(
            name,
            &format!("Insufficient {name}"),
            want,
            requested_on_node.scalar(name),
            allocatable.scalar(name),
        );
    }
    short
}

/// Whether the node has room for `request`: exactly when [`insufficient_resources`]
/// finds nothing short, without building the list. Filter runs this on every node it
/// visits and builds the reasons only for nodes that reject the pod.
pub fn fits(
    request: &Resources,
    allocatable: &Resources,
    requested_on_node: &Resources,
    pods_on_node: usize,
    ignored: &IgnoredResources,
) -> bool {
    let pods_on_node = i64::try_from(pods_on_node).unwrap_or(i64::MAX);
    if pods_on_node.saturating_add(1) > allocatable.allowed_pod_number {
        return false;
    }
    let room =
        |want: i64, used: i64, capacity: i64| want <= 0 || want <= capacity.saturating_sub(used);
    room(
        request.milli_cpu,
        requested_on_node.milli_cpu,
        allocatable.milli_cpu,
    ) && room(request.memory, requested_on_node.memory, allocatable.memory)
        && room(
            request.ephemeral_storage,
            requested_on_node.ephemeral_storage,
            allocatable.ephemeral_storage,
        )
        && request.scalars().all(|(name, want)| {
            want == 0
                || ignored.ignores(name)
                || room(
                    want,
                    requested_on_node.scalar(name),
                    allocatable.scalar(name),
                )
        })
}

/// Whether Filter's verdict is `UnschedulableAndUnresolvable` rather than
/// `Unschedulable`: some resource exceeds the node's whole allocatable.
pub(crate) fn is_unresolvable(short: &[InsufficientResource]) -> bool {
    short.iter().any(|r| r.unresolvable)
}
