//! Validation of pod topology spread, with the API server's and kube-scheduler's rules.
//!
//! - [`validate_topology_spread_constraints`]: a pod's `spec.topologySpreadConstraints`
//!   (`pkg/apis/core/validation`), with [`PodValidationOptions`] choosing between the
//!   legacy and the merged matchLabelKeys check.
//! - [`validate_pod_topology_spread_args`]: the plugin's `PodTopologySpreadArgs`, and
//!   [`validate_kube_scheduler_configuration`]: kube-scheduler's start-up validation.
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
mod field;
mod labels;
mod names;
mod pod;
mod scheduler_config;

pub use args::validate_pod_topology_spread_args;
pub use field::{
    ErrorType, FieldError, FieldPath, GoValue, aggregate_message, dedup_by_message, go_quote,
};
pub use labels::{
    LabelSelectorValidationOptions, validate_label_name, validate_label_selector,
    validate_label_selector_requirement, validate_labels,
};
pub use names::{is_dns1123_subdomain, is_qualified_name, is_valid_label_value};
pub use pod::{
    PodValidationOptions, validate_match_label_keys_legacy, validate_match_label_keys_merged,
    validate_topology_spread_constraints,
};
pub use scheduler_config::{
    validate_default_preemption_args, validate_kube_scheduler_configuration,
};
