//! NodeResourcesFit's `RequestedToCapacityRatio` strategy: a user-shaped,
//! piecewise-linear function of utilization.

use super::resource_allocation::{MAX_NODE_SCORE, ResourceSpec};

/// The top of the score scale users write shapes in (`config.MaxCustomPriorityScore`).
pub(crate) const MAX_CUSTOM_PRIORITY_SCORE: i64 = 10;
/// Utilization is measured in percent.
const MAX_UTILIZATION: i64 = 100;

/// One point of the shape: utilization 0..=100 (percent) maps to score 0..=10.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UtilizationShapePoint {
    /// Utilization in percent.
    pub utilization: i32,
    /// Score on the 0..=10 scale.
    pub score: i32,
}

/// A shape's points scaled to the scheduler's 0..=100 range (score × 10).
fn scaled(shape: &[UtilizationShapePoint]) -> Vec<(i64, i64)> {
    shape
        .iter()
        .map(|p| {
            (
                i64::from(p.utilization),
                i64::from(p.score).wrapping_mul(MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE),
            )
        })
        .collect()
}

/// upstream's `BuildBrokenLinearFunction`: the first point's score below it, the last
/// point's above it, and integer linear interpolation in between.
fn broken_linear(shape: &[(i64, i64)], p: i64) -> i64 {
    let mut previous: Option<(i64, i64)> = None;
    for &(x, y) in shape {
        if p <= x {
            return match previous {
                None => y,
                Some((x0, y0)) => {
                    let span = x.wrapping_sub(x0);
                    if span == 0 {
                        y
                    } else {
                        y0.wrapping_add(y.wrapping_sub(y0).wrapping_mul(p.wrapping_sub(x0)) / span)
                    }
                }
            };
        }
        previous = Some((x, y));
    }
    previous.map_or(0, |(_, y)| y)
}

/// One resource's score: the shape at `requested · 100 / capacity` (integer
/// division), or at 100 when the capacity is 0 or exceeded.
pub fn requested_to_capacity_ratio_resource_score(
    requested: i64,
    capacity: i64,
    shape: &[UtilizationShapePoint],
) -> i64 {
    let shape = scaled(shape);
    resource_score(&shape, requested, capacity)
}

fn resource_score(shape: &[(i64, i64)], requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return broken_linear(shape, MAX_UTILIZATION);
    }
    broken_linear(shape, requested.wrapping_mul(MAX_UTILIZATION) / capacity)
}

/// The node's score: the weighted mean of the positive per-resource scores over the
/// resources the node has, rounded half away from zero (`math.Round`), or 0. Inputs
/// come from [`score_inputs`](super::resource_allocation::score_inputs) with
/// `use_requested = false`.
pub(crate) fn requested_to_capacity_ratio_score(
    requested: &[i64],
    allocatable: &[i64],
    resources: &[ResourceSpec],
    shape: &[UtilizationShapePoint],
) -> i64 {
    let shape = scaled(shape);
    let mut node_score: i64 = 0;
    let mut weight_sum: i64 = 0;
    for ((&req, &alloc), spec) in requested.iter().zip(allocatable).zip(resources) {
        if alloc == 0 {
            continue;
        }
        let score = resource_score(&shape, req, alloc);
        if score > 0 {
            node_score = node_score.wrapping_add(score.wrapping_mul(spec.weight));
            weight_sum = weight_sum.wrapping_add(spec.weight);
        }
    }
    if weight_sum == 0 {
        return 0;
    }
    // Go's int64(math.Round(x)) for the finite values a score can take.
    (node_score as f64 / weight_sum as f64).round() as i64
}
