//! The API server's validation of the objects topospread reads, and lints.
//!
//! The core's rules ([`topospread::validation`]: field paths, label and name syntax,
//! topologySpreadConstraints, the scheduler's configuration) are re-exported here beside
//! the object-level ones:
//! - [`validate_workload_create`]: a Pod or workload as the API server sees it on create
//!   (disabled fields dropped, matchLabelKeys merged into a Pod's selector first).
//! - [`validate_objects`]: every loaded object as the API server validates it on create
//!   (names, labels, replicas, resources, and the above), for every command.
//! - [`validate_scheduler_configuration`]: the PodTopologySpread args of a
//!   `KubeSchedulerConfiguration` document.
//! - [`lint`]: what is accepted but will not do what was meant ([`lint_workload`],
//!   [`ClusterLinter`]), each finding with a stable code (`TS001`...).
//!
//! The rules, their order and their upstream functions are listed in
//! `tests/conformance/validation/RULES.md`. Everything here is pure: no I/O.

mod admit;
mod config;
pub mod lint;
mod objects;
mod policy;
mod workload;

pub(crate) use admit::requests_above_limits;
pub use admit::{Refusal, validate_cluster, validate_objects, validate_objects_with};
pub use config::{ConfigDecodeError, pod_topology_spread_args, validate_scheduler_configuration};
pub use lint::{
    ClusterLinter, FIRST_POD_TEMPLATE_HASH, InputPods, Lint, LintCode, LintPod, LintPods, Severity,
    controller_added_labels, first_pod, hard_constraints, lint_node, lint_pod_affinity,
    lint_workload, minimum_held_by_unusable_nodes,
};
pub use objects::{
    ApiServerFeatures, ObjectError, PodSpecRef, Workload, is_stored, merge_match_label_keys,
    template_pods_create, validate_workload_create,
};
pub use topospread::validation::*;
