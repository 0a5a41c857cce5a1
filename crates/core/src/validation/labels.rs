//! Label and label-selector validation (upstream:
//! `k8s.io/apimachinery/pkg/apis/meta/v1/validation`: `ValidateLabelName`,
//! `ValidateLabels`, `ValidateLabelSelector`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use super::field::{FieldError, FieldPath};
use super::names::{is_qualified_name, is_valid_label_value};

/// Origin of errors from [`validate_label_name`].
pub(crate) const ORIGIN_LABEL_KEY: &str = "format=k8s-label-key";

/// Options of [`validate_label_selector`] (upstream: `LabelSelectorValidationOptions`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelectorValidationOptions {
    /// Skip the label-value format check of `matchExpressions[*].values`.
    pub allow_invalid_label_value_in_selector: bool,
}

/// One Invalid error (origin `format=k8s-label-key`) per rule the label key breaks.
pub fn validate_label_name(name: &str, path: &FieldPath) -> Vec<FieldError> {
    is_qualified_name(name)
        .into_iter()
        .map(|msg| FieldError::invalid(path, name, msg).with_origin(ORIGIN_LABEL_KEY))
        .collect()
}

/// Validates a label map. Errors are reported at `path` itself (no `[key]` suffix), as
/// upstream. Upstream walks a Go map, so its order across keys is not stable; here keys
/// come in sorted order.
pub fn validate_labels(labels: &BTreeMap<String, String>, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, value) in labels {
        errs.extend(validate_label_name(key, path));
        errs.extend(
            is_valid_label_value(value)
                .into_iter()
                .map(|msg| FieldError::invalid(path, value, msg)),
        );
    }
    errs
}

/// Validates a label selector; `None` is valid.
pub fn validate_label_selector(
    selector: Option<&LabelSelector>,
    opts: LabelSelectorValidationOptions,
    path: &FieldPath,
) -> Vec<FieldError> {
    let Some(selector) = selector else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    if let Some(labels) = &selector.match_labels {
        errs.extend(validate_labels(labels, &path.child("matchLabels")));
    }
    let expressions_path = path.child("matchExpressions");
    for (i, requirement) in selector.match_expressions.iter().flatten().enumerate() {
        errs.extend(validate_label_selector_requirement(
            requirement,
            opts,
            &expressions_path.index(i),
        ));
    }
    errs
}

/// Validates one `matchExpressions` entry (upstream: `ValidateLabelSelectorRequirement`).
pub fn validate_label_selector_requirement(
    requirement: &LabelSelectorRequirement,
    opts: LabelSelectorValidationOptions,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let values = requirement.values.as_deref().unwrap_or_default();
    match requirement.operator.as_str() {
        "In" | "NotIn" => {
            if values.is_empty() {
                errs.push(FieldError::required(
                    &path.child("values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                ));
            }
        }
        "Exists" | "DoesNotExist" => {
            if !values.is_empty() {
                errs.push(FieldError::forbidden(
                    &path.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
        }
        other => errs.push(FieldError::invalid(
            &path.child("operator"),
            other,
            "not a valid selector operator",
        )),
    }
    errs.extend(validate_label_name(&requirement.key, &path.child("key")));
    if !opts.allow_invalid_label_value_in_selector {
        let values_path = path.child("values");
        for (i, value) in values.iter().enumerate() {
            errs.extend(
                is_valid_label_value(value)
                    .into_iter()
                    .map(|msg| FieldError::invalid(&values_path.index(i), value, msg)),
            );
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::field::ErrorType;

    fn req(key: &str, op: &str, values: Option<&[&str]>) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.to_string(),
            operator: op.to_string(),
            values: values.map(|v| v.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn selector_requirements() {
        let p = FieldPath::new("s");
        let opts = LabelSelectorValidationOptions::default();
        let e = validate_label_selector_requirement(&req("a", "In", None), opts, &p);
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].kind, e[0].field.as_str()),
            (ErrorType::Required, "s.values")
        );
        let e = validate_label_selector_requirement(&req("a", "Exists", Some(&["x"])), opts, &p);
        assert_eq!(
            (e[0].kind, e[0].field.as_str()),
            (ErrorType::Forbidden, "s.values")
        );
        let e = validate_label_selector_requirement(&req("a", "Gt", Some(&["1"])), opts, &p);
        assert_eq!(
            e[0].to_string(),
            "s.operator: Invalid value: \"Gt\": not a valid selector operator"
        );
        let e =
            validate_label_selector_requirement(&req("-a", "In", Some(&["x y", "ok"])), opts, &p);
        let fields: Vec<&str> = e.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["s.key", "s.values[0]"]);
        let lax = LabelSelectorValidationOptions {
            allow_invalid_label_value_in_selector: true,
        };
        assert_eq!(
            validate_label_selector_requirement(&req("a", "In", Some(&["x y"])), lax, &p).len(),
            0
        );
    }

    #[test]
    fn match_labels_errors_at_map_path() {
        let sel = LabelSelector {
            match_labels: Some(BTreeMap::from([("a=b".to_string(), "-".to_string())])),
            match_expressions: None,
        };
        let e = validate_label_selector(Some(&sel), Default::default(), &FieldPath::new("ls"));
        assert_eq!(e.len(), 2);
        assert!(e.iter().all(|e| e.field == "ls.matchLabels"));
        assert_eq!(e[0].origin, Some(ORIGIN_LABEL_KEY));
        assert_eq!(e[1].origin, None);
        assert!(
            validate_label_selector(None, Default::default(), &FieldPath::new("ls")).is_empty()
        );
    }
}
