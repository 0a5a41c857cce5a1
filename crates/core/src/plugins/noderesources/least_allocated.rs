//! NodeResourcesFit's `LeastAllocated` strategy (the default): favour nodes with
//! more room left.

use super::resource_allocation::{MAX_NODE_SCORE, ResourceSpec, pairs, weighted_mean};

/// One resource's score: `(capacity − requested) · 100 / capacity`, integer division;
/// 0 when the capacity is 0 or already exceeded.
pub fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    capacity
        .wrapping_sub(requested)
        .wrapping_mul(MAX_NODE_SCORE)
        .wrapping_div(capacity)
}

/// The node's score: the weighted mean (integer division) of
/// [`least_requested_score`] over the resources it has. Inputs come from
/// [`score_inputs`](super::resource_allocation::score_inputs) with
/// `use_requested = false`.
pub fn least_allocated_score(
    requested: &[i64],
    allocatable: &[i64],
    resources: &[ResourceSpec],
) -> i64 {
    weighted_mean(
        pairs(requested, allocatable),
        resources,
        least_requested_score,
    )
}

/// [`least_allocated_score`] for exactly two resources (cpu and memory, the default)
/// with their `weights`: the score of every node of a default profile, without the
/// strategy dispatch and the walk over the resource list.
#[inline]
pub(crate) fn least_allocated_of_two(amounts: [(i64, i64); 2], weights: [i64; 2]) -> i64 {
    let mut score: i64 = 0;
    let mut weight_sum: i64 = 0;
    for ((req, alloc), weight) in amounts.into_iter().zip(weights) {
        if alloc != 0 {
            score = score.wrapping_add(least_requested_score(req, alloc).wrapping_mul(weight));
            weight_sum = weight_sum.wrapping_add(weight);
        }
    }
    if weight_sum == 0 {
        0
    } else {
        score.wrapping_div(weight_sum)
    }
}
