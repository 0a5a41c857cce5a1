//! Scheduler configuration types (`kubescheduler.config.k8s.io/v1`), as written by users.
//!
//! These are the v1 wire shapes: they keep what the user wrote (including values the
//! validation will reject), so that validation can name the field and the bad value.

mod args;
mod component;
mod plugin_args;
mod scheduler;
mod strict;

pub use args::{DefaultingType, PodTopologySpreadArgs};
pub use component::{ClientConnection, LeaderElection, parse_duration};
pub use plugin_args::{
    DefaultPreemptionArgs, InterPodAffinityArgs, NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs, RequestedToCapacityRatioArg,
    ResourceSpecArg, ScoringStrategyArg, UtilizationShapePointArg,
};
pub use scheduler::{
    API_VERSION, DEFAULT_SCHEDULER_NAME, KIND, ParseError, PluginConfig, PluginRef, PluginSet,
    Plugins, ProfileConfig, SchedulerConfig,
};
pub(crate) use strict::decode as decode_strict;

/// A field of an object or of a plugin's args that cannot be used, named by its path
/// inside that object (`addedAffinity.requiredDuringScheduling...`, `labelSelector`).
#[derive(Clone, Debug, Default, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct FieldProblem {
    /// The path inside the object (empty: the object itself).
    pub field: String,
    /// What is wrong, in the API server's words.
    pub message: String,
}

impl FieldProblem {
    /// A problem at `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}
