//! A StatefulSet's `volumeClaimTemplates`, as the StatefulSet controller applies them
//! (`getPersistentVolumeClaims` and `updateStorage` in `stateful_set_utils.go`): each
//! new pod gets one claim per template, named `<template>-<set>-<ordinal>`, mounted
//! through a `persistentVolumeClaim` volume under the template's name; a claim that
//! already exists is used as it is.

use super::ExpandedPod;
use crate::load::{Loaded, Object, Source};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Volume,
};
use std::collections::BTreeSet;

/// The claim name of `template` for the pod of `ordinal` (`getPersistentVolumeClaimName`).
pub(super) fn claim_name(template: &str, set: &str, ordinal: &str) -> String {
    format!("{template}-{set}-{ordinal}")
}

/// Mounts the set's claims in each of `pods` (new pods of `set`, named
/// `<set>-<ordinal>`) and returns, pod by pod, the claims to create with it: those not
/// in `existing` (namespace, name), each added to it. The controller creates a pod's
/// claims just before the pod (`createPersistentVolumeClaims` in
/// `stateful_pod_control.go`), so an ordinal it holds back has none.
pub(super) fn apply(
    set: &StatefulSet,
    pods: &mut [ExpandedPod],
    existing: &mut BTreeSet<(String, String)>,
) -> Vec<Vec<PersistentVolumeClaim>> {
    let spec = &set.spec;
    let templates = spec.volume_claim_templates.as_deref().unwrap_or_default();
    if templates.is_empty() {
        return vec![Vec::new(); pods.len()];
    }
    let set_name = set.metadata.name.as_deref().unwrap_or("");
    let namespace = set
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| topospread::convert::DEFAULT_NAMESPACE.to_string());
    let selector_labels = spec.selector.match_labels.clone().unwrap_or_default();
    let mut out = Vec::with_capacity(pods.len());
    for p in pods {
        let mut made = Vec::new();
        let pod_name = p.pod.metadata.name.clone().unwrap_or_default();
        let ordinal = pod_name
            .strip_prefix(set_name)
            .and_then(|r| r.strip_prefix('-'))
            .unwrap_or("");
        let pod_spec = p.pod.spec.get_or_insert_with(Default::default);
        for t in templates {
            let template = t.metadata.name.as_deref().unwrap_or("");
            let name = claim_name(template, set_name, ordinal);
            let volume = Volume {
                name: template.to_string(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: name.clone(),
                    read_only: None,
                }),
                ..Volume::default()
            };
            let volumes = pod_spec.volumes.get_or_insert_with(Vec::new);
            match volumes.iter_mut().find(|v| v.name == template) {
                Some(v) => *v = volume,
                None => volumes.push(volume),
            }
            if !existing.insert((namespace.clone(), name.clone())) {
                continue;
            }
            let mut claim: PersistentVolumeClaim = t.clone();
            claim.metadata.name = Some(name);
            claim.metadata.namespace = Some(namespace.clone());
            let labels = claim.metadata.labels.get_or_insert_with(Default::default);
            labels.extend(selector_labels.clone());
            claim.status = None;
            made.push(claim);
        }
        out.push(made);
    }
    out
}

/// Claims as objects of the input, from `source`.
pub(super) fn loaded(source: &Source, claims: Vec<PersistentVolumeClaim>) -> Vec<Loaded> {
    claims
        .into_iter()
        .map(|c| Loaded {
            source: source.clone(),
            object: Object::PersistentVolumeClaim(Box::new(c)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_claim_per_template_and_ordinal() {
        let set: StatefulSet = serde_json::from_value(json!({
            "metadata": {"name": "db", "namespace": "prod"},
            "spec": {"selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": []}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"},
                        "spec": {"accessModes": ["ReadWriteOnce"],
                                 "resources": {"requests": {"storage": "1Gi"}}}}]}
        }))
        .expect("the test StatefulSet deserializes");
        let source = Source {
            file: "f.yaml".into(),
            document: 1,
            item: None,
        };
        let mut pods: Vec<ExpandedPod> = ["db-0", "db-1"]
            .iter()
            .map(|n| ExpandedPod {
                source: source.clone(),
                pod: serde_json::from_value(json!({"metadata": {"name": n}}))
                    .expect("the test object deserializes"),
            })
            .collect();
        let mut existing = BTreeSet::from([("prod".to_string(), "data-db-1".to_string())]);
        let claims = apply(&set, &mut pods, &mut existing);
        let names: Vec<Vec<String>> = claims
            .iter()
            .map(|c| c.iter().filter_map(|c| c.metadata.name.clone()).collect())
            .collect();
        assert_eq!(names, [vec!["data-db-0".to_string()], vec![]]);
        let c = &claims[0][0];
        assert_eq!(c.metadata.namespace.as_deref(), Some("prod"));
        assert_eq!(
            c.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("app"))
                .map(String::as_str),
            Some("db")
        );
        let mounted = pods[1]
            .pod
            .spec
            .as_ref()
            .and_then(|s| s.volumes.as_ref())
            .and_then(|v| v.first())
            .and_then(|v| v.persistent_volume_claim.as_ref())
            .map(|c| c.claim_name.clone());
        assert_eq!(mounted.as_deref(), Some("data-db-1"));
    }
}
