//! Validation of pod topology spread, with the API server's and kube-scheduler's rules.
//!
//! [`FieldError`] prints as kubectl shows API errors. Everything here is pure: no I/O.

mod args;
mod field;
mod labels;
mod names;
mod objects;
mod pod;

pub use args::validate_pod_topology_spread_args;
pub use field::{
    ErrorType, FieldError, FieldPath, GoValue, aggregate_message, dedup_by_message, go_quote,
};
pub use labels::{
    LabelSelectorValidationOptions, validate_label_name, validate_label_selector,
    validate_label_selector_requirement, validate_labels,
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
