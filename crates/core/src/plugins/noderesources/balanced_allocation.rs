//! NodeResourcesBalancedAllocation: favour nodes whose resources would be used in
//! similar proportions once the pod lands.

use super::resource_allocation::{MAX_NODE_SCORE, pairs};
use smallvec::SmallVec;

/// The node's score: `(1 − σ) · 100`, truncated, where σ is the standard deviation of
/// the fractions `requested / allocatable` (each capped at 1) over the resources the
/// node has. With two resources σ is `|f₀ − f₁| / 2`; with one or none it is 0.
///
/// Inputs come from [`score_inputs`](super::resource_allocation::score_inputs) with
/// `use_requested = true` (BalancedAllocation counts real requests, not the non-zero
/// defaults). Weights play no part.
pub fn balanced_allocation_score(requested: &[i64], allocatable: &[i64]) -> i64 {
    balanced_score(pairs(requested, allocatable))
}

/// [`balanced_score`] for exactly two resources (cpu and memory, the default), without
/// collecting the fractions: the score of every node of a default profile.
#[inline]
pub(crate) fn balanced_score_of_two(amounts: [(i64, i64); 2]) -> i64 {
    let fraction = |(req, alloc): (i64, i64)| (req as f64 / alloc as f64).min(1.0);
    let std = match amounts {
        [a, b] if a.1 != 0 && b.1 != 0 => ((fraction(a) - fraction(b)) / 2.0).abs(),
        _ => 0.0,
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

/// [`balanced_allocation_score`] over `(requested, allocatable)` pairs as
/// [`resource_amounts`](super::resource_allocation::resource_amounts) yields them.
#[inline]
pub(crate) fn balanced_score(amounts: impl Iterator<Item = (i64, i64)>) -> i64 {
    let mut fractions: SmallVec<[f64; 4]> = SmallVec::new();
    let mut total = 0.0_f64;
    for (req, alloc) in amounts {
        if alloc == 0 {
            continue;
        }
        let fraction = (req as f64 / alloc as f64).min(1.0);
        total += fraction;
        fractions.push(fraction);
    }
    let std = match fractions.as_slice() {
        [a, b] => ((a - b) / 2.0).abs(),
        f if f.len() > 2 => {
            let n = f.len() as f64;
            let mean = total / n;
            let sum: f64 = f.iter().map(|x| (x - mean) * (x - mean)).sum();
            (sum / n).sqrt()
        }
        _ => 0.0,
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

/// The score from 1.36 on (kubernetes PR 135573): how the pod changes the node's
/// balance. `with` and `without` are [`balanced_score`]s of the node with and without
/// the pod; no change scores 75, the best improvement 100, the worst 50.
#[inline]
pub(crate) fn balance_change_score(with: i64, without: i64) -> i64 {
    let half = MAX_NODE_SCORE / 2;
    half + (half + with - without).div_euclid(2)
}

/// The `(requested, allocatable)` amounts without the pod's own requests: the node's
/// balance before the pod, over the same resources.
#[inline]
pub(crate) fn without_pod(
    amounts: impl Iterator<Item = (i64, i64)>,
    pod_requests: &[i64],
) -> impl Iterator<Item = (i64, i64)> {
    amounts
        .zip(pod_requests.iter().copied().chain(std::iter::repeat(0)))
        .map(|((req, alloc), pod)| {
            if alloc == 0 {
                (0, 0)
            } else {
                (req.wrapping_sub(pod), alloc)
            }
        })
}
