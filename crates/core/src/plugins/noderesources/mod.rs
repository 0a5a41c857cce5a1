//! NodeResourcesFit and NodeResourcesBalancedAllocation: the pure arithmetic behind
//! them (upstream's `pkg/scheduler/framework/plugins/noderesources`).
//!
//! Each function works on integers already taken from the pod
//! ([`crate::api::resources::PodResourceRequests`]) and the node (allocatable,
//! `Requested`, `NonZeroRequested`), so the plugin wrappers only gather those and
//! turn the results into statuses and scores.

pub mod balanced_allocation;
pub mod fit;
pub mod least_allocated;
pub mod most_allocated;
mod plugin;
pub mod requested_to_capacity_ratio;
pub mod resource_allocation;

pub use plugin::{
    BALANCED_ALLOCATION_NAME, BalancedAllocation, BalancedPreScoreState, FIT_NAME, Fit,
    FitPreScoreState, ResourceArgsError,
};

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
