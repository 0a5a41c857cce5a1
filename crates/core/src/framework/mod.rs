//! The scheduling framework: extension points, verdicts and per-cycle state, as
//! kube-scheduler's `framework` package defines them.

mod cycle_state;
mod events;
mod node_scores;
mod plugin;
mod profile;
mod profiles;
mod registry;
mod runtime;
mod status;

pub use cycle_state::{CycleState, StateData};
pub use events::{ActionType, ClusterEvent, EventResource};
pub(crate) use node_scores::NodeScoreCache;
pub use plugin::{
    FilterPlugin, MAX_NODE_SCORE, NodeScore, Plugin, PreEnqueuePlugin, PreFilterPlugin,
    PreFilterResult, PreScorePlugin, QueueSortPlugin, QueuedPod, ScorePlugin, Screen, Screening,
    score_each,
};
pub use profile::{ConfigError, Profile};
pub use profiles::{
    Profiles, check_config, check_config_with, check_configuration, check_configuration_with,
};
pub use registry::{ArgsCheck, BuiltPlugin, Factory, Point, Registration, Registry, RegistryError};
pub(crate) use runtime::ScoreTable;
pub use runtime::{NodePluginScores, PluginScore};
pub use status::{Code, Status};
