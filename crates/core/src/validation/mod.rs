//! Validation of pod topology spread, with the API server's and kube-scheduler's rules.
//!
//! - [`validate_topology_spread_constraints`]: a pod's `spec.topologySpreadConstraints`
//!   (`pkg/apis/core/validation`), with [`PodValidationOptions`] choosing between the
//!   legacy and the merged matchLabelKeys check.
//! - [`validate_workload_create`]: a Pod or workload as the API server sees it on create
//!   (disabled fields dropped, matchLabelKeys merged into a Pod's selector first).
//! - [`validate_pod_topology_spread_args`]: the plugin's `PodTopologySpreadArgs`, and
//!   [`validate_scheduler_configuration`] for those inside a `KubeSchedulerConfiguration`.
//! - [`lint`]: what is accepted but will not do what was meant ([`lint_workload`],
//!   [`ClusterLinter`]), each finding with a stable code (`TS001`...).
//! - [`FieldError`] prints as kubectl shows API errors:
//!   `spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero`.
//!
//! The rules, their order and their upstream functions are listed in
//! `tests/conformance/validation/RULES.md`. Everything here is pure: no I/O.
//!
//! ```
//! use k8s_openapi::api::core::v1::TopologySpreadConstraint;
//! use topospread::validation::{FieldPath, PodValidationOptions, validate_topology_spread_constraints};
//!
//! let c = TopologySpreadConstraint {
//!     max_skew: 0,
//!     topology_key: "topology.kubernetes.io/zone".into(),
//!     when_unsatisfiable: "DoNotSchedule".into(),
//!     ..Default::default()
//! };
//! let path = FieldPath::new("spec").child("topologySpreadConstraints");
//! let errors = validate_topology_spread_constraints(&[c], &path, &PodValidationOptions::create(true, true));
//! assert_eq!(
//!     errors[0].to_string(),
//!     "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"
//! );
//! ```

mod args;
mod case;
mod config;
mod field;
mod labels;
pub mod lint;
mod names;
mod objects;
mod pod;
mod scheduler_config;

pub use args::validate_pod_topology_spread_args;
pub use case::{
    CaseFileError, ExpectedError, ValidationCase, ValidationCaseFile, ValidationExpectation,
};
pub use config::{ConfigError, pod_topology_spread_args, validate_scheduler_configuration};
pub use field::{
    ErrorType, FieldError, FieldPath, GoValue, aggregate_message, dedup_by_message, go_quote,
};
pub use labels::{
    LabelSelectorValidationOptions, validate_label_name, validate_label_selector,
    validate_label_selector_requirement, validate_labels,
};
pub use lint::{
    ClusterLinter, FIRST_POD_TEMPLATE_HASH, Lint, LintCode, Severity, controller_added_labels,
    first_pod, lint_workload,
};
pub use names::{is_dns1123_subdomain, is_qualified_name, is_valid_label_value};
pub use objects::{
    ApiServerFeatures, ObjectError, PodSpecRef, Workload, merge_match_label_keys,
    template_pods_create, validate_workload_create,
};
pub use pod::{
    PodValidationOptions, validate_match_label_keys_legacy, validate_match_label_keys_merged,
    validate_topology_spread_constraints,
};
pub use scheduler_config::{
    validate_default_preemption_args, validate_kube_scheduler_configuration,
};
