//! NodeResourcesFit's `MostAllocated` strategy: favour fuller nodes (bin packing).

use super::resource_allocation::{MAX_NODE_SCORE, ResourceSpec, pairs, weighted_mean};

/// One resource's score: `requested · 100 / capacity`, integer division, with the
/// request capped at the capacity (non-zero defaults can push it past); 0 when the
/// capacity is 0.
pub fn most_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 {
        return 0;
    }
    requested
        .min(capacity)
        .wrapping_mul(MAX_NODE_SCORE)
        .wrapping_div(capacity)
}

/// The node's score: the weighted mean (integer division) of
/// [`most_requested_score`] over the resources it has. Inputs come from
/// [`score_inputs`](super::resource_allocation::score_inputs) with
/// `use_requested = false`.
pub fn most_allocated_score(
    requested: &[i64],
    allocatable: &[i64],
    resources: &[ResourceSpec],
) -> i64 {
    weighted_mean(
        pairs(requested, allocatable),
        resources,
        most_requested_score,
    )
}
