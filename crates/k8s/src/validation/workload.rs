//! The API server's rules for a workload's selector and pod template, those that decide
//! whether its pods can exist at all (`pkg/apis/apps/validation/validation.go`
//! `ValidateDeploymentSpec`, `ValidateReplicaSetSpec`, `ValidateStatefulSetSpec`,
//! `ValidateDaemonSetSpec`, `ValidatePodTemplateSpecForReplicaSet`;
//! `pkg/apis/batch/validation/validation.go` `validateJobSpec`,
//! `validateGeneratedSelector`, `ValidateJobTemplateSpec`; and `validateContainers`
//! of `pkg/apis/core/validation`). RULES.md §5 lists them in order.
//!
//! A typed object cannot tell `selector:` left out from `selector: {}` (k8s-openapi
//! reads both as an empty selector): an apps/v1 selector with neither `matchLabels` nor
//! `matchExpressions` is taken as left out (`Required`, and then matching no pod, as
//! upstream's nil selector does); one with empty ones as the empty selector.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use topospread::validation::{
    ErrorType, FieldError, FieldPath, LabelSelectorValidationOptions, go_quote,
    validate_label_selector,
};

use crate::load::Object;

/// The labels the Job controller's generated selector and template carry.
const JOB_GENERATED_KEYS: &[&str] = &[
    "controller-uid",
    "batch.kubernetes.io/controller-uid",
    "job-name",
    "batch.kubernetes.io/job-name",
];

/// Every workload-level error of `object` (empty for kinds without a pod template).
pub(crate) fn validate_workload_spec(object: &Object) -> Vec<FieldError> {
    let spec = FieldPath::new("spec");
    let template = spec.child("template");
    let mut errs = Vec::new();
    match object {
        Object::Deployment(d) => {
            let s = &d.spec;
            apps_selector(&mut errs, &s.selector, "deployment", &spec);
            template_for_replica_set(&mut errs, &s.selector, &s.template, &template);
            replica_set_restart(&mut errs, &s.template, &template, "ReplicaSet");
        }
        Object::ReplicaSet(r) => {
            let s = &r.spec;
            // Upstream's ReplicaSet check says "deployment" too.
            apps_selector(&mut errs, &s.selector, "deployment", &spec);
            match s.template.as_ref() {
                Some(t) => {
                    template_for_replica_set(&mut errs, &s.selector, t, &template);
                    replica_set_restart(&mut errs, t, &template, "ReplicaSet");
                }
                None => errs.push(FieldError::required(&template, "")),
            }
        }
        Object::StatefulSet(ss) => {
            let s = &ss.spec;
            apps_selector(&mut errs, &s.selector, "statefulset", &spec);
            template_for_replica_set(&mut errs, &s.selector, &s.template, &template);
            replica_set_restart(&mut errs, &s.template, &template, "StatefulSet");
        }
        Object::DaemonSet(ds) => {
            let s = &ds.spec;
            errs.extend(validate_label_selector(
                Some(&s.selector),
                LabelSelectorValidationOptions::default(),
                &spec.child("selector"),
            ));
            if !selects(&s.selector, labels_of(&s.template)) {
                errs.push(mismatch(&s.template, &template));
            }
            if is_present_but_empty(&s.selector) {
                errs.push(empty_selector(&s.selector, "daemonset", &spec));
            }
            containers(&mut errs, s.template.spec.as_ref(), &template);
            replica_set_restart(&mut errs, &s.template, &template, "DaemonSet");
        }
        Object::Job(j) => {
            if let Some(s) = j.spec.as_ref() {
                let manual = s.manual_selector == Some(true);
                match s.selector.as_ref() {
                    Some(sel) if manual => {
                        errs.extend(validate_label_selector(
                            Some(sel),
                            LabelSelectorValidationOptions::default(),
                            &spec.child("selector"),
                        ));
                        if !selects(sel, labels_of(&s.template)) {
                            errs.push(mismatch(&s.template, &template));
                        }
                    }
                    None if manual => errs.push(FieldError::required(&spec.child("selector"), "")),
                    Some(sel) if !generated_only(sel) => errs.push(raw(
                        ErrorType::Invalid,
                        &spec.child("selector"),
                        selector_string(sel),
                        "`selector` not auto-generated",
                    )),
                    _ => {}
                }
                containers(&mut errs, s.template.spec.as_ref(), &template);
                job_restart(&mut errs, s.template.spec.as_ref(), &template);
            }
        }
        Object::CronJob(cj) => {
            let jt = spec.child("jobTemplate").child("spec");
            if let Some(s) = cj.spec.job_template.spec.as_ref() {
                let template = jt.child("template");
                containers(&mut errs, s.template.spec.as_ref(), &template);
                job_restart(&mut errs, s.template.spec.as_ref(), &template);
                if let Some(sel) = s.selector.as_ref() {
                    errs.push(raw(
                        ErrorType::Invalid,
                        &jt.child("selector"),
                        selector_string(sel),
                        "`selector` will be auto-generated",
                    ));
                }
                if s.manual_selector == Some(true) {
                    errs.push(raw(
                        ErrorType::NotSupported,
                        &jt.child("manualSelector"),
                        "true".into(),
                        "supported values: \"nil\", \"false\"",
                    ));
                }
            }
        }
        Object::ReplicationController(rc) => {
            if let Some(s) = rc.spec.as_ref()
                && let Some(t) = s.template.as_ref()
            {
                // An empty selector is defaulted to the template's labels.
                if let Some(sel) = s.selector.as_ref().filter(|m| !m.is_empty()) {
                    let labels = labels_of(t);
                    if !sel.iter().all(|(k, v)| labels.get(k) == Some(v)) {
                        errs.push(mismatch(t, &template));
                    }
                }
                containers(&mut errs, t.spec.as_ref(), &template);
            }
        }
        Object::Pod(p) => {
            if let Some(s) = p.spec.as_ref()
                && s.containers.is_empty()
            {
                errs.push(FieldError::required(&spec.child("containers"), ""));
            }
        }
        _ => {}
    }
    errs
}

/// An apps/v1 selector: required, valid, not empty.
fn apps_selector(errs: &mut Vec<FieldError>, sel: &LabelSelector, kind: &str, spec: &FieldPath) {
    if is_absent(sel) {
        errs.push(FieldError::required(&spec.child("selector"), ""));
        return;
    }
    errs.extend(validate_label_selector(
        Some(sel),
        LabelSelectorValidationOptions::default(),
        &spec.child("selector"),
    ));
    if is_present_but_empty(sel) {
        errs.push(empty_selector(sel, kind, spec));
    }
}

/// `ValidatePodTemplateSpecForReplicaSet` / `ForStatefulSet`: the selector (unless it is
/// the empty one, which selects everything) matches the template's labels, and the
/// template has containers.
fn template_for_replica_set(
    errs: &mut Vec<FieldError>,
    sel: &LabelSelector,
    template: &PodTemplateSpec,
    path: &FieldPath,
) {
    let everything = !is_absent(sel) && is_present_but_empty(sel);
    if !everything && !selects(sel, labels_of(template)) {
        errs.push(mismatch(template, path));
    }
    containers(errs, template.spec.as_ref(), path);
}

/// `restartPolicy` Always (the default) and no `activeDeadlineSeconds`.
fn replica_set_restart(
    errs: &mut Vec<FieldError>,
    template: &PodTemplateSpec,
    path: &FieldPath,
    kind: &str,
) {
    let Some(spec) = template.spec.as_ref() else {
        return;
    };
    let spec_path = path.child("spec");
    if let Some(policy) = spec.restart_policy.as_deref().filter(|p| *p != "Always") {
        errs.push(FieldError::not_supported(
            &spec_path.child("restartPolicy"),
            policy,
            &["Always"],
        ));
    }
    if spec.active_deadline_seconds.is_some() {
        errs.push(FieldError::forbidden(
            &spec_path.child("activeDeadlineSeconds"),
            format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
}

/// A Job's pods: `restartPolicy` OnFailure or Never (left out, it is defaulted to
/// Always, which is refused).
fn job_restart(errs: &mut Vec<FieldError>, spec: Option<&PodSpec>, path: &FieldPath) {
    let policy = spec
        .and_then(|s| s.restart_policy.as_deref())
        .unwrap_or("Always");
    if policy != "OnFailure" && policy != "Never" {
        errs.push(FieldError::not_supported(
            &path.child("spec").child("restartPolicy"),
            policy,
            &["OnFailure", "Never"],
        ));
    }
}

/// `validateContainers`: at least one container.
fn containers(errs: &mut Vec<FieldError>, spec: Option<&PodSpec>, template: &FieldPath) {
    if spec.is_none_or(|s| s.containers.is_empty()) {
        errs.push(FieldError::required(
            &template.child("spec").child("containers"),
            "",
        ));
    }
}

fn labels_of(t: &PodTemplateSpec) -> &BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    t.metadata
        .as_ref()
        .and_then(|m| m.labels.as_ref())
        .unwrap_or(&EMPTY)
}

/// Neither `matchLabels` nor `matchExpressions` (see the module docs).
fn is_absent(sel: &LabelSelector) -> bool {
    sel.match_labels.is_none() && sel.match_expressions.is_none()
}

/// No requirement at all.
fn is_present_but_empty(sel: &LabelSelector) -> bool {
    sel.match_labels.as_ref().is_none_or(BTreeMap::is_empty)
        && sel.match_expressions.as_ref().is_none_or(Vec::is_empty)
}

/// `LabelSelectorAsSelector(sel).Matches(labels)`: a left-out selector matches
/// nothing, an empty one everything; an operator it does not know matches nothing.
fn selects(sel: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    if is_absent(sel) {
        return false;
    }
    crate::workloads::requirements_match(sel, labels)
}

/// A Job selector that only names the labels the Job controller generates.
fn generated_only(sel: &LabelSelector) -> bool {
    sel.match_labels
        .iter()
        .flatten()
        .all(|(k, _)| JOB_GENERATED_KEYS.contains(&k.as_str()))
        && sel
            .match_expressions
            .iter()
            .flatten()
            .all(|r| JOB_GENERATED_KEYS.contains(&r.key.as_str()))
}

/// "`selector` does not match template `labels`", at the template's labels.
fn mismatch(template: &PodTemplateSpec, path: &FieldPath) -> FieldError {
    let labels = template.metadata.as_ref().and_then(|m| m.labels.as_ref());
    raw(
        ErrorType::Invalid,
        &path.child("metadata").child("labels"),
        go_map(labels),
        "`selector` does not match template `labels`",
    )
}

fn empty_selector(sel: &LabelSelector, kind: &str, spec: &FieldPath) -> FieldError {
    raw(
        ErrorType::Invalid,
        &spec.child("selector"),
        selector_string(sel),
        &format!("empty selector is invalid for {kind}"),
    )
}

/// An error whose value is already rendered as Go renders it.
fn raw(kind: ErrorType, path: &FieldPath, value: String, detail: &str) -> FieldError {
    FieldError {
        field: path.to_string(),
        kind,
        bad_value: Some(value),
        detail: detail.to_string(),
        origin: None,
    }
}

/// A `map[string]string` as Go's `%#v` prints it (keys sorted).
fn go_map(labels: Option<&BTreeMap<String, String>>) -> String {
    let Some(labels) = labels else {
        return "map[string]string(nil)".into();
    };
    let entries: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{}:{}", go_quote(k), go_quote(v)))
        .collect();
    format!("map[string]string{{{}}}", entries.join(", "))
}

/// A `LabelSelector` as its generated `String()` prints it (what the API server shows).
fn selector_string(sel: &LabelSelector) -> String {
    let labels: String = sel
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}: {v},"))
        .collect();
    let expressions: String = sel
        .match_expressions
        .iter()
        .flatten()
        .map(|r| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                r.key,
                r.operator,
                r.values.as_deref().unwrap_or_default().join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_manifests;

    fn errors(text: &str) -> Vec<String> {
        let m = parse_manifests(text, "w.yaml").expect("parses");
        m.objects
            .iter()
            .flat_map(|l| validate_workload_spec(&l.object))
            .map(|e| e.to_string())
            .collect()
    }

    const CONTAINERS: &str = "containers: [{name: c, image: i}]";

    #[test]
    fn deployment_selector_required_non_empty_and_matching() {
        let d = |selector: &str, labels: &str| {
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  {selector}\n  template:\n    metadata: {{labels: {labels}}}\n    spec: {{{CONTAINERS}}}\n"
            )
        };
        assert!(errors(&d("selector: {matchLabels: {app: web}}", "{app: web}")).is_empty());
        assert_eq!(
            errors(&d("replicas: 1", "{app: web}")),
            [
                "spec.selector: Required value",
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
            ]
        );
        assert_eq!(
            errors(&d("selector: {matchLabels: {app: api}}", "{app: web}")),
            [
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`"
            ]
        );
        assert_eq!(
            errors(&d("selector: {matchLabels: {}}", "{app: web}")),
            [
                "spec.selector: Invalid value: &LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}: empty selector is invalid for deployment"
            ]
        );
    }

    #[test]
    fn templates_need_containers_and_the_right_restart_policy() {
        let got = errors(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [], restartPolicy: Never}\n",
        );
        assert_eq!(
            got,
            [
                "spec.template.spec.containers: Required value",
                "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
            ]
        );
        let got = errors(&format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: pi}}\nspec:\n  template:\n    spec: {{{CONTAINERS}}}\n"
        ));
        assert_eq!(
            got,
            [
                "spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\""
            ]
        );
    }

    #[test]
    fn daemonset_and_job_selectors() {
        let got = errors(&format!(
            "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: agent}}\nspec:\n  selector: {{matchLabels: {{app: agent}}}}\n  template:\n    metadata: {{labels: {{app: other}}}}\n    spec: {{{CONTAINERS}}}\n"
        ));
        assert_eq!(got.len(), 1);
        assert!(got[0].starts_with("spec.template.metadata.labels: Invalid value"));
        let job = |extra: &str| {
            format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: pi}}\nspec:\n  {extra}\n  template:\n    metadata: {{labels: {{app: pi}}}}\n    spec: {{restartPolicy: Never, {CONTAINERS}}}\n"
            )
        };
        assert_eq!(
            errors(&job("selector: {matchLabels: {app: pi}}")),
            [
                "spec.selector: Invalid value: &LabelSelector{MatchLabels:map[string]string{app: pi,},MatchExpressions:[]LabelSelectorRequirement{},}: `selector` not auto-generated"
            ]
        );
        assert!(
            errors(&job(
                "manualSelector: true\n  selector: {matchLabels: {app: pi}}"
            ))
            .is_empty()
        );
        assert_eq!(
            errors(&job("manualSelector: true")),
            ["spec.selector: Required value"]
        );
    }
}
