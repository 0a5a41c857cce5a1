//! Validation of the topology spread constraints of whole objects — Pods and the pod
//! templates of workloads — the way the API server validates them on create.
//!
//! ## Pods are mutated before they are validated
//!
//! On create, the API server first drops fields of disabled gates, then (pods only, not
//! templates) merges each `matchLabelKeys` key that the pod carries as a label into the
//! selector as `key In (value)` (RULES.md §3), and only then validates. A user validating
//! a manifest wants what `kubectl apply` would say, so [`validate_workload_create`] models
//! both steps. (The scenario cases instead validate a constraint list "as written", through
//! [`validate_topology_spread_constraints`].)
//!
//! One consequence, faithful to upstream: a Deployment whose template has
//! `matchLabelKeys: [app]` plus `matchLabels: {app: x}` is accepted (templates are not
//! merged and the merged check allows a key that only sits in `matchLabels`), but the
//! ReplicaSet controller's pods are then rejected on create. [`template_pods_create`]
//! reports that second verdict separately.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{
    Pod, PodSpec, PodTemplate, PodTemplateSpec, ReplicationController, TopologySpreadConstraint,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelectorRequirement, ObjectMeta};
use serde::de::DeserializeOwned;

use topospread::validation::{FieldError, FieldPath};
use topospread::validation::{PodValidationOptions, validate_topology_spread_constraints};

/// Feature gates of the API server that change topology spread validation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ApiServerFeatures {
    /// `MatchLabelKeysInPodTopologySpread` (beta, on by default).
    pub match_label_keys_in_pod_topology_spread: bool,
    /// `MatchLabelKeysInPodTopologySpreadSelectorMerge` (beta since v1.34, on by default).
    pub match_label_keys_in_pod_topology_spread_selector_merge: bool,
    /// The release's minor version (1.x): which apiVersions it serves.
    pub release: u32,
}

impl Default for ApiServerFeatures {
    /// The defaults of current Kubernetes: both gates on, the newest release.
    fn default() -> Self {
        Self {
            match_label_keys_in_pod_topology_spread: true,
            match_label_keys_in_pod_topology_spread_selector_merge: true,
            release: topospread::version::NEWEST_MINOR,
        }
    }
}

impl ApiServerFeatures {
    /// The API server's gates of one release (`--kubernetes-version`, `--feature-gates`).
    pub fn from_gates(gates: &topospread::version::FeatureGates) -> Self {
        Self {
            match_label_keys_in_pod_topology_spread: gates
                .enabled("MatchLabelKeysInPodTopologySpread"),
            match_label_keys_in_pod_topology_spread_selector_merge: gates
                .enabled("MatchLabelKeysInPodTopologySpreadSelectorMerge"),
            release: gates.version().minor,
        }
    }

    /// The validation options the API server derives on create.
    pub fn create_options(&self) -> PodValidationOptions {
        PodValidationOptions::create(
            self.match_label_keys_in_pod_topology_spread,
            self.match_label_keys_in_pod_topology_spread_selector_merge,
        )
    }

    fn merges_match_label_keys(&self) -> bool {
        self.match_label_keys_in_pod_topology_spread
            && self.match_label_keys_in_pod_topology_spread_selector_merge
    }
}

/// An object that holds a pod spec: a Pod, or a workload with a pod template.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum Workload {
    /// `v1/Pod`.
    Pod(Pod),
    /// `v1/PodTemplate`.
    PodTemplate(PodTemplate),
    /// `v1/ReplicationController`.
    ReplicationController(ReplicationController),
    /// `apps/v1/Deployment`.
    Deployment(Deployment),
    /// `apps/v1/ReplicaSet`.
    ReplicaSet(ReplicaSet),
    /// `apps/v1/StatefulSet`.
    StatefulSet(StatefulSet),
    /// `apps/v1/DaemonSet`.
    DaemonSet(DaemonSet),
    /// `batch/v1/Job`.
    Job(Job),
    /// `batch/v1/CronJob`.
    CronJob(CronJob),
}

/// Why an object could not be read as a [`Workload`].
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// The object has no string `kind`.
    #[error("object has no kind")]
    MissingKind,
    /// The object's kind is known but its content does not decode.
    #[error("{kind}: {source}")]
    Decode {
        /// The object's kind.
        kind: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
}

impl Workload {
    /// Reads an object by its `kind`. `Ok(None)` for kinds that hold no pod spec
    /// (Services, Nodes, ...).
    pub fn from_value(object: serde_json::Value) -> Result<Option<Self>, ObjectError> {
        let kind = object
            .get("kind")
            .and_then(serde_json::Value::as_str)
            .ok_or(ObjectError::MissingKind)?
            .to_string();
        fn decode<T: DeserializeOwned>(kind: &str, v: serde_json::Value) -> Result<T, ObjectError> {
            serde_json::from_value(v).map_err(|source| ObjectError::Decode {
                kind: kind.to_string(),
                source,
            })
        }
        let workload = match kind.as_str() {
            "Pod" => Self::Pod(decode(&kind, object)?),
            "PodTemplate" => Self::PodTemplate(decode(&kind, object)?),
            "ReplicationController" => Self::ReplicationController(decode(&kind, object)?),
            "Deployment" => Self::Deployment(decode(&kind, object)?),
            "ReplicaSet" => Self::ReplicaSet(decode(&kind, object)?),
            "StatefulSet" => Self::StatefulSet(decode(&kind, object)?),
            "DaemonSet" => Self::DaemonSet(decode(&kind, object)?),
            "Job" => Self::Job(decode(&kind, object)?),
            "CronJob" => Self::CronJob(decode(&kind, object)?),
            _ => return Ok(None),
        };
        Ok(Some(workload))
    }

    /// The object's kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Pod(_) => "Pod",
            Self::PodTemplate(_) => "PodTemplate",
            Self::ReplicationController(_) => "ReplicationController",
            Self::Deployment(_) => "Deployment",
            Self::ReplicaSet(_) => "ReplicaSet",
            Self::StatefulSet(_) => "StatefulSet",
            Self::DaemonSet(_) => "DaemonSet",
            Self::Job(_) => "Job",
            Self::CronJob(_) => "CronJob",
        }
    }

    /// The object's metadata.
    pub fn metadata(&self) -> &ObjectMeta {
        match self {
            Self::Pod(o) => &o.metadata,
            Self::PodTemplate(o) => &o.metadata,
            Self::ReplicationController(o) => &o.metadata,
            Self::Deployment(o) => &o.metadata,
            Self::ReplicaSet(o) => &o.metadata,
            Self::StatefulSet(o) => &o.metadata,
            Self::DaemonSet(o) => &o.metadata,
            Self::Job(o) => &o.metadata,
            Self::CronJob(o) => &o.metadata,
        }
    }

    /// The pod template and the path of its `spec` (`spec.template.spec`, ...); `None` for
    /// a Pod, or when the object has no template.
    pub fn pod_template(&self) -> Option<(FieldPath, &PodTemplateSpec)> {
        let spec_template = FieldPath::new("spec").child("template");
        let (path, template) = match self {
            Self::Pod(_) => return None,
            Self::PodTemplate(o) => (FieldPath::new("template"), o.template.as_ref()?),
            Self::ReplicationController(o) => (spec_template, o.spec.as_ref()?.template.as_ref()?),
            Self::Deployment(o) => (spec_template, &o.spec.template),
            Self::ReplicaSet(o) => (spec_template, o.spec.template.as_ref()?),
            Self::StatefulSet(o) => (spec_template, &o.spec.template),
            Self::DaemonSet(o) => (spec_template, &o.spec.template),
            Self::Job(o) => (spec_template, &o.spec.as_ref()?.template),
            Self::CronJob(o) => (
                FieldPath::new("spec")
                    .child("jobTemplate")
                    .child("spec")
                    .child("template"),
                &o.spec.job_template.spec.as_ref()?.template,
            ),
        };
        Some((path.child("spec"), template))
    }

    /// The pod spec, where it sits and the labels its pods carry (the Pod's own, or the
    /// template's); `None` when the object has no pod spec.
    pub fn pod_spec(&self) -> Option<PodSpecRef<'_>> {
        match self {
            Self::Pod(pod) => Some(PodSpecRef {
                path: FieldPath::new("spec"),
                spec: pod.spec.as_ref()?,
                labels: pod.metadata.labels.as_ref(),
            }),
            _ => {
                let (path, template) = self.pod_template()?;
                Some(PodSpecRef {
                    path,
                    spec: template.spec.as_ref()?,
                    labels: template.metadata.as_ref().and_then(|m| m.labels.as_ref()),
                })
            }
        }
    }
}

impl Workload {
    /// Whether [`Workload::from_object`] gives a workload for this object (without
    /// copying it).
    pub fn is_workload_kind(object: &crate::load::Object) -> bool {
        use crate::load::Object;
        matches!(
            object,
            Object::Pod(_)
                | Object::ReplicationController(_)
                | Object::Deployment(_)
                | Object::ReplicaSet(_)
                | Object::StatefulSet(_)
                | Object::DaemonSet(_)
                | Object::Job(_)
                | Object::CronJob(_)
        )
    }

    /// The workload behind a loaded object; `None` for kinds that hold no pod spec
    /// (Nodes, Services, scheduler configurations).
    pub fn from_object(object: &crate::load::Object) -> Option<Self> {
        use crate::load::Object;
        Some(match object {
            Object::Pod(o) => Self::Pod((**o).clone()),
            Object::ReplicationController(o) => Self::ReplicationController((**o).clone()),
            Object::Deployment(o) => Self::Deployment((**o).clone()),
            Object::ReplicaSet(o) => Self::ReplicaSet((**o).clone()),
            Object::StatefulSet(o) => Self::StatefulSet((**o).clone()),
            Object::DaemonSet(o) => Self::DaemonSet((**o).clone()),
            Object::Job(o) => Self::Job((**o).clone()),
            Object::CronJob(o) => Self::CronJob((**o).clone()),
            Object::Node(_)
            | Object::Service(_)
            | Object::PriorityClass(_)
            | Object::PodDisruptionBudget(_)
            | Object::Namespace(_)
            | Object::PersistentVolumeClaim(_)
            | Object::PersistentVolume(_)
            | Object::StorageClass(_)
            | Object::CsiNode(_)
            | Object::LimitRange(_)
            | Object::RuntimeClass(_)
            | Object::ResourceQuota(_)
            | Object::Unserved(_)
            | Object::SchedulerConfiguration(_)
            | Object::CompactPod(_) => {
                return None;
            }
        })
    }
}

/// A pod spec inside a [`Workload`].
#[derive(Clone, Debug, PartialEq)]
pub struct PodSpecRef<'a> {
    /// Path of the spec: `spec`, `spec.template.spec`, `spec.jobTemplate.spec.template.spec`.
    pub path: FieldPath,
    /// The spec.
    pub spec: &'a PodSpec,
    /// The labels of the pods: the Pod's, or the template's `metadata.labels`.
    pub labels: Option<&'a BTreeMap<String, String>>,
}

/// Validates the object's topology spread constraints as the API server does on create:
/// fields of disabled gates dropped, matchLabelKeys merged into the selectors of a Pod
/// (not of templates), then RULES.md §1 with the create-time options.
pub fn validate_workload_create(
    workload: &Workload,
    features: &ApiServerFeatures,
) -> Vec<FieldError> {
    let Some(pod_spec) = workload.pod_spec() else {
        return Vec::new();
    };
    if is_stored(workload.metadata()) {
        return validate_spec_stored(&pod_spec, features);
    }
    let is_pod = matches!(workload, Workload::Pod(_));
    validate_spec_create(&pod_spec, is_pod, features)
}

/// For a workload with a template: the errors a pod created from the template would get
/// (the template's labels merged, as for a Pod), at the template's paths. Empty for Pods.
/// Upstream accepts such a template and only rejects its pods; callers report these as
/// warnings about the workload, not as its validation errors.
pub fn template_pods_create(workload: &Workload, features: &ApiServerFeatures) -> Vec<FieldError> {
    if matches!(workload, Workload::Pod(_)) {
        return Vec::new();
    }
    let Some(pod_spec) = workload.pod_spec() else {
        return Vec::new();
    };
    validate_spec_create(&pod_spec, true, features)
}

/// Whether the object is one an API server stored (it has a `uid`, a
/// `resourceVersion` or a `creationTimestamp`, which only the server sets), rather than
/// a manifest meant for creation.
pub fn is_stored(meta: &ObjectMeta) -> bool {
    meta.uid.is_some() || meta.resource_version.is_some() || meta.creation_timestamp.is_some()
}

/// The topology spread checks of an object the API server already stores: no create-time
/// mutation (it happened when the server created it, under that server's gates), and
/// the update-time options with the object as its own old version, so whatever the
/// server accepted then (selectors it merged from `matchLabelKeys` from 1.34, or not
/// before) reads as accepted under any release.
pub(crate) fn validate_spec_stored(
    pod_spec: &PodSpecRef<'_>,
    features: &ApiServerFeatures,
) -> Vec<FieldError> {
    let Some(constraints) = pod_spec.spec.topology_spread_constraints.as_deref() else {
        return Vec::new();
    };
    let options = PodValidationOptions::update(
        features.match_label_keys_in_pod_topology_spread,
        features.match_label_keys_in_pod_topology_spread_selector_merge,
        constraints,
    );
    validate_topology_spread_constraints(
        constraints,
        &pod_spec.path.child("topologySpreadConstraints"),
        &options,
    )
}

/// [`validate_workload_create`] on a borrowed spec: `merge` for a Pod's own spec.
pub(crate) fn validate_spec_create(
    pod_spec: &PodSpecRef<'_>,
    merge: bool,
    features: &ApiServerFeatures,
) -> Vec<FieldError> {
    let Some(constraints) = pod_spec.spec.topology_spread_constraints.as_deref() else {
        return Vec::new();
    };
    let mut constraints = constraints.to_vec();
    if !features.match_label_keys_in_pod_topology_spread {
        // dropDisabledMatchLabelKeysFieldInTopologySpread (no old object on create)
        for c in &mut constraints {
            c.match_label_keys = None;
        }
    }
    if merge
        && features.merges_match_label_keys()
        && let Some(labels) = pod_spec.labels
    {
        merge_match_label_keys(&mut constraints, labels);
    }
    validate_topology_spread_constraints(
        &constraints,
        &pod_spec.path.child("topologySpreadConstraints"),
        &features.create_options(),
    )
}

/// The API server's create-time mutation of a pod's constraints
/// (`mutateTopologySpreadConstraints`): for each constraint with a selector, each
/// `matchLabelKeys` key the pod has as a label is appended to `matchExpressions` as
/// `key In (value)`. `matchLabelKeys` itself is kept.
pub fn merge_match_label_keys(
    constraints: &mut [TopologySpreadConstraint],
    pod_labels: &BTreeMap<String, String>,
) {
    for c in constraints {
        let Some(selector) = c.label_selector.as_mut() else {
            continue;
        };
        for key in c.match_label_keys.iter().flatten() {
            if let Some(value) = pod_labels.get(key) {
                selector
                    .match_expressions
                    .get_or_insert_with(Vec::new)
                    .push(LabelSelectorRequirement {
                        key: key.clone(),
                        operator: "In".to_string(),
                        values: Some(vec![value.clone()]),
                    });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use topospread::validation::ErrorType;

    fn constraint(extra: serde_json::Value) -> serde_json::Value {
        let mut c =
            json!({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"});
        if let (Some(c), Some(extra)) = (c.as_object_mut(), extra.as_object()) {
            c.extend(extra.clone());
        }
        c
    }

    fn workload(v: serde_json::Value) -> Workload {
        match Workload::from_value(v) {
            Ok(Some(w)) => w,
            other => panic!("not a workload: {other:?}"),
        }
    }

    #[test]
    fn paths_per_kind() {
        let spec = json!({"containers": [], "topologySpreadConstraints": [constraint(json!({"maxSkew": 0}))]});
        let template = json!({"metadata": {"labels": {"app": "x"}}, "spec": spec});
        let cases = [
            (
                json!({"apiVersion": "v1", "kind": "Pod", "spec": spec}),
                "spec",
            ),
            (
                json!({"apiVersion": "v1", "kind": "PodTemplate", "template": template}),
                "template.spec",
            ),
            (
                json!({"apiVersion": "v1", "kind": "ReplicationController", "spec": {"template": template}}),
                "spec.template.spec",
            ),
            (
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"selector": {}, "template": template}}),
                "spec.template.spec",
            ),
            (
                json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "spec": {"selector": {}, "template": template}}),
                "spec.template.spec",
            ),
            (
                json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {"selector": {}, "template": template}}),
                "spec.template.spec",
            ),
            (
                json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"selector": {}, "template": template}}),
                "spec.template.spec",
            ),
            (
                json!({"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": template}}),
                "spec.template.spec",
            ),
            (
                json!({"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}}),
                "spec.jobTemplate.spec.template.spec",
            ),
        ];
        for (object, prefix) in cases {
            let w = workload(object);
            let errs = validate_workload_create(&w, &ApiServerFeatures::default());
            let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
            assert_eq!(
                fields,
                [format!("{prefix}.topologySpreadConstraints[0].maxSkew")],
                "{}",
                w.kind()
            );
        }
    }

    #[test]
    fn other_kinds_and_bad_objects() {
        assert!(matches!(
            Workload::from_value(json!({"kind": "Service"})),
            Ok(None)
        ));
        assert!(matches!(
            Workload::from_value(json!({})),
            Err(ObjectError::MissingKind)
        ));
        assert!(matches!(
            Workload::from_value(json!({"kind": "Pod", "spec": 3})),
            Err(ObjectError::Decode { .. })
        ));
    }

    #[test]
    fn pod_create_merges_match_label_keys_first() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"app": "x"}},
            "spec": {"containers": [], "topologySpreadConstraints": [constraint(json!({
                "matchLabelKeys": ["app"], "labelSelector": {"matchLabels": {"app": "x"}}}))]}});
        let w = workload(pod.clone());
        let errs = validate_workload_create(&w, &ApiServerFeatures::default());
        assert_eq!(
            errs.iter()
                .map(|e| (e.kind, e.field.as_str()))
                .collect::<Vec<_>>(),
            [(ErrorType::Invalid, "spec.topologySpreadConstraints[0][0]")]
        );
        // SelectorMerge off: the legacy check, no merge; also rejected.
        let legacy = ApiServerFeatures {
            match_label_keys_in_pod_topology_spread_selector_merge: false,
            ..Default::default()
        };
        let errs = validate_workload_create(&w, &legacy);
        assert_eq!(
            errs[0].field,
            "spec.topologySpreadConstraints[0].matchLabelKeys[0]"
        );
        // matchLabelKeys gate off: the field is dropped before validation.
        let off = ApiServerFeatures {
            match_label_keys_in_pod_topology_spread: false,
            ..legacy
        };
        assert!(validate_workload_create(&w, &off).is_empty());
    }

    #[test]
    fn template_accepted_but_its_pods_rejected() {
        let template = json!({"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [],
            "topologySpreadConstraints": [constraint(json!({
                "matchLabelKeys": ["app"], "labelSelector": {"matchLabels": {"app": "x"}}}))]}});
        let w = workload(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template}}),
        );
        assert!(validate_workload_create(&w, &ApiServerFeatures::default()).is_empty());
        let pods = template_pods_create(&w, &ApiServerFeatures::default());
        assert_eq!(pods.len(), 1);
        assert_eq!(
            pods[0].field,
            "spec.template.spec.topologySpreadConstraints[0][0]"
        );
    }

    #[test]
    fn merge_appends_in_key_order_only_for_present_labels() {
        let mut cs: Vec<TopologySpreadConstraint> = serde_json::from_value(json!([
            constraint(json!({"matchLabelKeys": ["b", "missing", "a"], "labelSelector": {}})),
            constraint(json!({"matchLabelKeys": ["a"]})),
        ]))
        .unwrap();
        let labels = BTreeMap::from([
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "2".to_string()),
        ]);
        merge_match_label_keys(&mut cs, &labels);
        let exprs = cs[0]
            .label_selector
            .as_ref()
            .and_then(|s| s.match_expressions.clone())
            .unwrap_or_default();
        let keys: Vec<&str> = exprs.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["b", "a"]);
        assert_eq!(exprs[0].values.as_deref(), Some(&["2".to_string()][..]));
        assert!(cs[1].label_selector.is_none());
    }
}
