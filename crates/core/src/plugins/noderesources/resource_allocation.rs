//! What the resource-allocation scorers share (upstream's `resource_allocation.go`):
//! which resources they look at, with what weight, and how a node's requested and
//! allocatable amounts are read for each.

use crate::api::resources::{
    CPU, EPHEMERAL_STORAGE, MEMORY, NonZeroRequests, PodResourceRequests, Resources,
    is_scalar_resource_name,
};
use smallvec::SmallVec;

/// The highest score a plugin gives a node.
pub const MAX_NODE_SCORE: i64 = 100;
/// The lowest score a plugin gives a node.
pub const MIN_NODE_SCORE: i64 = 0;

/// Per-resource amounts for one node, one entry per scored resource; inline for the
/// usual two or three resources so scoring a node allocates nothing.
pub(crate) type ResourceAmounts = SmallVec<[i64; 4]>;

/// A resource a scorer looks at and its weight (`config.ResourceSpec`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourceSpec {
    /// Resource name.
    pub name: Box<str>,
    /// Weight, 1..=100 once validated.
    pub weight: i64,
    /// What the name denotes, classified once so scoring does not compare strings.
    kind: ResourceKind,
}

/// How a scored resource's amounts are read from a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ResourceKind {
    Cpu,
    Memory,
    EphemeralStorage,
    /// Extended, hugepages, prefixed native or attachable volumes.
    Scalar,
    /// Any other name: read from the scalar list, but counted even when not requested.
    Other,
}

impl ResourceSpec {
    /// A resource and its weight.
    pub fn new(name: &str, weight: i64) -> Self {
        let kind = match name {
            CPU => ResourceKind::Cpu,
            MEMORY => ResourceKind::Memory,
            EPHEMERAL_STORAGE => ResourceKind::EphemeralStorage,
            _ if is_scalar_resource_name(name) => ResourceKind::Scalar,
            _ => ResourceKind::Other,
        };
        Self {
            name: name.into(),
            weight,
            kind,
        }
    }
}

/// The resources both NodeResourcesFit's scoring strategy and
/// NodeResourcesBalancedAllocation default to: cpu and memory, weight 1 each.
pub(crate) fn default_resources() -> Vec<ResourceSpec> {
    vec![ResourceSpec::new(CPU, 1), ResourceSpec::new(MEMORY, 1)]
}

/// What a node has and what its pods request, as `NodeInfo` keeps them.
#[derive(Debug, Clone, Copy)]
pub struct NodeResources<'a> {
    /// `NodeInfo.Allocatable`.
    pub allocatable: &'a Resources,
    /// `NodeInfo.Requested`: the sum of the node's pods' requests.
    pub requested: &'a Resources,
    /// `NodeInfo.NonZeroRequested`: the sum of their non-zero cpu/memory requests.
    pub non_zero_requested: NonZeroRequests,
}

/// The incoming pod's request for each of `resources`, in order
/// (`calculatePodResourceRequestList`). `use_requested` is true for
/// BalancedAllocation and false for NodeResourcesFit's strategies.
pub fn pod_request_list(
    pod: &PodResourceRequests,
    resources: &[ResourceSpec],
    use_requested: bool,
) -> Vec<i64> {
    resources
        .iter()
        .map(|r| pod.score_request(&r.name, use_requested))
        .collect()
}

/// Whether every entry of a request list is zero. BalancedAllocation skips such
/// (best-effort) pods at PreScore, so it scores no node for them.
pub(crate) fn is_best_effort(pod_requests: &[i64]) -> bool {
    pod_requests.iter().all(|&r| r == 0)
}

/// `(allocatable, requested including the pod)` for one resource on one node
/// (`calculateResourceAllocatableRequest`): cpu and memory come from
/// `NonZeroRequested` unless `use_requested`; a scalar resource the pod does not
/// request, or one the node does not list, gives `(0, 0)` so it is left out.
pub(crate) fn allocatable_and_requested(
    node: &NodeResources<'_>,
    resource: &ResourceSpec,
    pod_request: i64,
    use_requested: bool,
) -> (i64, i64) {
    if pod_request == 0 && resource.kind == ResourceKind::Scalar {
        return (0, 0);
    }
    let (cpu, memory) = if use_requested {
        (node.requested.milli_cpu, node.requested.memory)
    } else {
        (
            node.non_zero_requested.milli_cpu,
            node.non_zero_requested.memory,
        )
    };
    match resource.kind {
        ResourceKind::Cpu => (node.allocatable.milli_cpu, cpu.wrapping_add(pod_request)),
        ResourceKind::Memory => (node.allocatable.memory, memory.wrapping_add(pod_request)),
        ResourceKind::EphemeralStorage => (
            node.allocatable.ephemeral_storage,
            node.requested.ephemeral_storage.wrapping_add(pod_request),
        ),
        ResourceKind::Scalar | ResourceKind::Other => {
            match node.allocatable.scalar_entry(&resource.name) {
                Some(allocatable) => (
                    allocatable,
                    node.requested
                        .scalar(&resource.name)
                        .wrapping_add(pod_request),
                ),
                None => (0, 0),
            }
        }
    }
}

/// `(requested, allocatable)` per resource in `resources`, computed as the scorer
/// iterates; entries whose allocatable is 0 come out as `(0, 0)` (upstream's
/// `resourceAllocationScorer.score`). `pod_requests` comes from [`pod_request_list`].
#[inline]
pub fn resource_amounts<'a>(
    node: &'a NodeResources<'a>,
    resources: &'a [ResourceSpec],
    pod_requests: &'a [i64],
    use_requested: bool,
) -> impl Iterator<Item = (i64, i64)> + 'a {
    resources
        .iter()
        .zip(pod_requests)
        .map(move |(resource, &pod_request)| {
            let (alloc, req) =
                allocatable_and_requested(node, resource, pod_request, use_requested);
            if alloc == 0 { (0, 0) } else { (req, alloc) }
        })
}

/// Whether `resources` is cpu then memory, the default list: the scorers then read the
/// two fields directly ([`cpu_memory_amounts`]) instead of walking the list.
pub(crate) fn is_cpu_then_memory(resources: &[ResourceSpec]) -> bool {
    matches!(
        resources,
        [a, b] if a.kind == ResourceKind::Cpu && b.kind == ResourceKind::Memory
    )
}

/// [`resource_amounts`] for a list that [`is_cpu_then_memory`]: the same two pairs, read
/// straight from the node's fields (the scorers' per-node hot path).
#[inline]
pub(crate) fn cpu_memory_amounts(
    node: &NodeResources<'_>,
    pod_requests: &[i64],
    use_requested: bool,
) -> [(i64, i64); 2] {
    let (cpu, memory) = if use_requested {
        (node.requested.milli_cpu, node.requested.memory)
    } else {
        (
            node.non_zero_requested.milli_cpu,
            node.non_zero_requested.memory,
        )
    };
    let pair = |alloc: i64, req: i64| if alloc == 0 { (0, 0) } else { (req, alloc) };
    let want = |i: usize| pod_requests.get(i).copied().unwrap_or(0);
    [
        pair(node.allocatable.milli_cpu, cpu.wrapping_add(want(0))),
        pair(node.allocatable.memory, memory.wrapping_add(want(1))),
    ]
}

/// [`resource_amounts`] collected: the `(requested, allocatable)` vectors.
pub fn score_inputs(
    node: &NodeResources<'_>,
    resources: &[ResourceSpec],
    pod_requests: &[i64],
    use_requested: bool,
) -> (ResourceAmounts, ResourceAmounts) {
    resource_amounts(node, resources, pod_requests, use_requested).unzip()
}

/// The weighted mean of per-resource scores over the resources the node has
/// (allocatable ≠ 0), with integer division as upstream: `Σ score·w / Σ w`, or 0.
/// `amounts` yields `(requested, allocatable)` per resource, in `resources` order.
#[inline]
pub(crate) fn weighted_mean(
    amounts: impl Iterator<Item = (i64, i64)>,
    resources: &[ResourceSpec],
    per_resource: impl Fn(i64, i64) -> i64,
) -> i64 {
    let mut node_score: i64 = 0;
    let mut weight_sum: i64 = 0;
    for ((req, alloc), spec) in amounts.zip(resources) {
        if alloc == 0 {
            continue;
        }
        node_score = node_score.wrapping_add(per_resource(req, alloc).wrapping_mul(spec.weight));
        weight_sum = weight_sum.wrapping_add(spec.weight);
    }
    if weight_sum == 0 {
        return 0;
    }
    node_score.wrapping_div(weight_sum)
}

/// Pairs two slices as [`weighted_mean`]'s `(requested, allocatable)` input.
pub(crate) fn pairs<'a>(
    requested: &'a [i64],
    allocatable: &'a [i64],
) -> impl Iterator<Item = (i64, i64)> + 'a {
    requested.iter().copied().zip(allocatable.iter().copied())
}
