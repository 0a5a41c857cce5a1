//! Objects the files apply over objects already read (a dump, a live cluster, an
//! earlier file), as `kubectl apply` updates an existing object: the API server refuses
//! changes to immutable fields (`ValidateDeploymentUpdate`, `ValidateReplicaSetUpdate`,
//! `ValidateDaemonSetUpdate`, `ValidateStatefulSetUpdate`, `ValidateJobUpdate`), and
//! fields the manifest leaves out keep their live value where the three-way merge keeps
//! them: `spec.replicas` set by `kubectl scale` or an HPA stays unless the object's
//! last-applied configuration had it. Identity, status and annotations carry over.

use crate::load::{Loaded, Object};
use crate::notes::Note;
use crate::validation::Refusal;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use serde_json::Value;
use std::collections::HashMap;
use topospread::validation::{FieldError, FieldPath, GoValue, go_quote};

/// The annotation `kubectl apply` keeps the applied manifest in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// What applying the files over earlier objects did.
#[derive(Debug, Default)]
pub struct Applied {
    /// One note per object a later one was applied over.
    pub notes: Vec<Note>,
    /// Later objects the API server refuses as updates (immutable fields): left out, the
    /// earlier object kept.
    pub refused: Vec<Refusal>,
}

/// Applies each workload (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job) that
/// names the same object as an earlier one over it: the merged object (named by the later
/// one's source) takes the earlier one's place and the later one leaves the list; one the API server would refuse leaves
/// it too, with its refusal.
pub fn apply_over(objects: &mut Vec<Loaded>) -> Applied {
    let mut applied = Applied::default();
    let mut holder: HashMap<(&'static str, String, String), usize> = HashMap::new();
    let mut gone = vec![false; objects.len()];
    for i in 0..objects.len() {
        let Some(key) = key(&objects[i].object) else {
            continue;
        };
        let Some(&earlier) = holder.get(&key) else {
            holder.insert(key, i);
            continue;
        };
        gone[i] = true;
        let (old, new) = (&objects[earlier], &objects[i]);
        if let Some(error) = immutable_change(&old.object, &new.object) {
            let meta = new.object.metadata();
            applied.refused.push(Refusal {
                source: new.source.clone(),
                kind: new.object.kind(),
                namespace: meta.and_then(|m| m.namespace.clone()),
                name: meta.and_then(|m| m.name.clone()),
                error,
                object_only: true,
            });
            continue;
        }
        let Some((merged, kept)) = merge(&old.object, &new.object) else {
            continue;
        };
        let mut message = format!("applied over the object read from {}", old.source.file);
        if let Some(replicas) = kept {
            message.push_str(&format!(
                " (spec.replicas {replicas} kept: the manifest leaves it out, as kubectl apply keeps it)"
            ));
        }
        applied.notes.push(Note::new(
            format!(
                "{}: {}/{} (namespace {})",
                new.source.file,
                key.0.to_lowercase(),
                key.2,
                key.1
            ),
            message,
        ));
        // The merged object is the manifest's, where the earlier object was.
        objects[earlier].source = objects[i].source.clone();
        objects[earlier].object = merged;
    }
    let mut index = 0;
    objects.retain(|_| {
        index += 1;
        !gone[index - 1]
    });
    applied
}

/// The identity of a workload object: kind, namespace, name.
fn key(object: &Object) -> Option<(&'static str, String, String)> {
    if !matches!(
        object,
        Object::Deployment(_)
            | Object::ReplicaSet(_)
            | Object::StatefulSet(_)
            | Object::DaemonSet(_)
            | Object::Job(_)
    ) {
        return None;
    }
    let meta = object.metadata()?;
    let name = meta.name.clone().filter(|n| !n.is_empty())?;
    let ns = meta.namespace.clone().unwrap_or_else(|| "default".into());
    Some((object.kind(), ns, name))
}

/// The API server's refusal of `new` as an update of `old`, if any.
fn immutable_change(old: &Object, new: &Object) -> Option<FieldError> {
    let selector = FieldPath::new("spec").child("selector");
    let immutable = |old: Option<&LabelSelector>, new: Option<&LabelSelector>| {
        let new = new?;
        (!same_selector(old, Some(new)))
            .then(|| FieldError::invalid(&selector, GoSelector(new), "field is immutable"))
    };
    match (old, new) {
        (Object::Deployment(o), Object::Deployment(n)) => {
            immutable(Some(&o.spec.selector), Some(&n.spec.selector))
        }
        (Object::ReplicaSet(o), Object::ReplicaSet(n)) => {
            immutable(Some(&o.spec.selector), Some(&n.spec.selector))
        }
        (Object::DaemonSet(o), Object::DaemonSet(n)) => {
            immutable(Some(&o.spec.selector), Some(&n.spec.selector))
        }
        (Object::Job(o), Object::Job(n)) => immutable(
            o.spec.as_ref().and_then(|s| s.selector.as_ref()),
            n.spec.as_ref().and_then(|s| s.selector.as_ref()),
        ),
        (Object::StatefulSet(o), Object::StatefulSet(n)) => {
            let (o, n) = (&o.spec, &n.spec);
            let policy = |p: Option<&String>| p.map_or("OrderedReady", String::as_str).to_string();
            let changed = !same_selector(Some(&o.selector), Some(&n.selector))
                || o.service_name.as_deref().unwrap_or("")
                    != n.service_name.as_deref().unwrap_or("")
                || policy(o.pod_management_policy.as_ref())
                    != policy(n.pod_management_policy.as_ref())
                || claim_templates(o.volume_claim_templates.as_deref())
                    != claim_templates(n.volume_claim_templates.as_deref());
            changed.then(|| {
                FieldError::forbidden(
                    &FieldPath::new("spec"),
                    "updates to statefulset spec for fields other than 'replicas', 'ordinals', \
                     'template', 'updateStrategy', 'revisionHistoryLimit', \
                     'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
                )
            })
        }
        _ => None,
    }
}

/// Whether two selectors select alike (match labels as a map, expressions in order).
fn same_selector(a: Option<&LabelSelector>, b: Option<&LabelSelector>) -> bool {
    let labels =
        |s: Option<&LabelSelector>| s.and_then(|s| s.match_labels.clone()).unwrap_or_default();
    let exprs = |s: Option<&LabelSelector>| {
        s.and_then(|s| s.match_expressions.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|e| (e.key, e.operator, e.values.unwrap_or_default()))
            .collect::<Vec<_>>()
    };
    labels(a) == labels(b) && exprs(a) == exprs(b)
}

/// What of each claim template the API server's defaults leave as written: name, modes,
/// size, class, selector and volume mode (`Filesystem` when left out).
fn claim_templates(
    templates: Option<&[k8s_openapi::api::core::v1::PersistentVolumeClaim]>,
) -> Vec<String> {
    templates
        .unwrap_or_default()
        .iter()
        .map(|t| {
            let spec = t.spec.clone().unwrap_or_default();
            format!(
                "{:?}|{:?}|{:?}|{:?}|{:?}|{}",
                t.metadata.name,
                spec.access_modes.unwrap_or_default(),
                spec.resources.and_then(|r| r.requests).unwrap_or_default(),
                spec.storage_class_name,
                spec.selector,
                spec.volume_mode.as_deref().unwrap_or("Filesystem"),
            )
        })
        .collect()
}

/// `new` applied over `old`: `new`'s spec, `old`'s identity, status and the annotations
/// and labels `new` does not set; `spec.replicas` kept from `old` when `new` leaves it
/// out and `old`'s last-applied configuration did not set it (then also returned).
fn merge(old: &Object, new: &Object) -> Option<(Object, Option<i64>)> {
    let old_value = to_value(old)?;
    let mut merged = to_value(new)?;
    let old_meta = old.metadata()?;
    let mut kept = None;
    if merged.pointer("/spec/replicas").is_none()
        && let Some(replicas) = old_value.pointer("/spec/replicas").and_then(Value::as_i64)
        && !last_applied_sets_replicas(old_meta)
        && let Some(spec) = merged.get_mut("spec").and_then(Value::as_object_mut)
    {
        spec.insert("replicas".into(), replicas.into());
        kept = Some(replicas);
    }
    if let Some(status) = old_value.get("status") {
        merged["status"] = status.clone();
    }
    let meta = merged.get_mut("metadata")?.as_object_mut()?;
    for field in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "generation",
        "ownerReferences",
    ] {
        if let Some(v) = old_value.pointer(&format!("/metadata/{field}")) {
            meta.entry(field).or_insert_with(|| v.clone());
        }
    }
    for field in ["annotations", "labels"] {
        let Some(Value::Object(old_map)) = old_value.pointer(&format!("/metadata/{field}")) else {
            continue;
        };
        let entry = meta
            .entry(field)
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Value::Object(map) = entry {
            for (k, v) in old_map {
                map.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    let object = match new {
        Object::Deployment(_) => Object::Deployment(serde_json::from_value(merged).ok()?),
        Object::ReplicaSet(_) => Object::ReplicaSet(serde_json::from_value(merged).ok()?),
        Object::StatefulSet(_) => Object::StatefulSet(serde_json::from_value(merged).ok()?),
        Object::DaemonSet(_) => Object::DaemonSet(serde_json::from_value(merged).ok()?),
        Object::Job(_) => Object::Job(serde_json::from_value(merged).ok()?),
        _ => return None,
    };
    Some((object, kept))
}

/// Whether the object's last-applied configuration sets `spec.replicas` (then a
/// manifest without it removes it, and the default applies).
fn last_applied_sets_replicas(meta: &ObjectMeta) -> bool {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .is_some_and(|v| v.pointer("/spec/replicas").is_some())
}

fn to_value(object: &Object) -> Option<Value> {
    match object {
        Object::Deployment(o) => serde_json::to_value(o).ok(),
        Object::ReplicaSet(o) => serde_json::to_value(o).ok(),
        Object::StatefulSet(o) => serde_json::to_value(o).ok(),
        Object::DaemonSet(o) => serde_json::to_value(o).ok(),
        Object::Job(o) => serde_json::to_value(o).ok(),
        _ => None,
    }
}

/// A label selector as Go's `%#v` prints a `metav1.LabelSelector` in a `field.Invalid`.
struct GoSelector<'a>(&'a LabelSelector);

impl GoValue for GoSelector<'_> {
    fn render(&self) -> String {
        let labels = match &self.0.match_labels {
            None => "map[string]string(nil)".to_string(),
            Some(m) => {
                let pairs: Vec<String> = m
                    .iter()
                    .map(|(k, v)| format!("{}:{}", go_quote(k), go_quote(v)))
                    .collect();
                format!("map[string]string{{{}}}", pairs.join(", "))
            }
        };
        let exprs = match &self.0.match_expressions {
            None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
            Some(list) => {
                let items: Vec<String> = list
                    .iter()
                    .map(|e| {
                        let values = match &e.values {
                            None => "[]string(nil)".to_string(),
                            Some(v) => format!(
                                "[]string{{{}}}",
                                v.iter().map(|s| go_quote(s)).collect::<Vec<_>>().join(", ")
                            ),
                        };
                        format!(
                            "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{values}}}",
                            go_quote(&e.key),
                            go_quote(&e.operator)
                        )
                    })
                    .collect();
                format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
            }
        };
        format!("v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{exprs}}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_manifests;

    fn objects(text: &str) -> Vec<Loaded> {
        parse_manifests(text, "a.yaml").expect("parses").objects
    }

    const LIVE: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default, uid: u1, annotations: {deployment.kubernetes.io/revision: '3'}}\nspec:\n  replicas: 7\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx:1}]}\n";

    #[test]
    fn replicas_left_out_keep_the_live_value_and_identity_carries_over() {
        let manifest = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx:2}]}\n";
        let mut objs = objects(&format!("{LIVE}{manifest}"));
        let applied = apply_over(&mut objs);
        assert_eq!(objs.len(), 1);
        assert!(applied.refused.is_empty());
        let Object::Deployment(d) = &objs[0].object else {
            panic!("a Deployment")
        };
        let spec = &d.spec;
        assert_eq!(spec.replicas, Some(7));
        let image = spec
            .template
            .spec
            .as_ref()
            .map(|s| s.containers[0].image.clone());
        assert_eq!(image, Some(Some("nginx:2".into())));
        assert_eq!(d.metadata.uid.as_deref(), Some("u1"));
        let revision = d
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("deployment.kubernetes.io/revision"));
        assert_eq!(revision.map(String::as_str), Some("3"));
        assert_eq!(applied.notes.len(), 1);
        assert!(
            applied.notes[0].message.contains("spec.replicas 7 kept"),
            "{:?}",
            applied.notes
        );
    }

    #[test]
    fn replicas_the_last_apply_set_are_reset_when_left_out() {
        let live = LIVE.replace(
            "annotations: {",
            "annotations: {kubectl.kubernetes.io/last-applied-configuration: '{\"spec\":{\"replicas\":7}}', ",
        );
        let manifest = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c}]}\n";
        let mut objs = objects(&format!("{live}{manifest}"));
        apply_over(&mut objs);
        let Object::Deployment(d) = &objs[0].object else {
            panic!("a Deployment")
        };
        assert_eq!(d.spec.replicas, None);
    }

    #[test]
    fn a_changed_selector_is_refused_and_the_live_object_kept() {
        let manifest = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  selector: {matchLabels: {app: web, tier: fe}}\n  template:\n    metadata: {labels: {app: web, tier: fe}}\n    spec: {containers: [{name: c}]}\n";
        let mut objs = objects(&format!("{LIVE}{manifest}"));
        let applied = apply_over(&mut objs);
        assert_eq!(objs.len(), 1);
        let Object::Deployment(d) = &objs[0].object else {
            panic!("a Deployment")
        };
        assert_eq!(d.metadata.uid.as_deref(), Some("u1"));
        assert_eq!(applied.refused.len(), 1);
        assert_eq!(
            applied.refused[0].to_string(),
            "a.yaml: deployment/web (namespace default): spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\", \"tier\":\"fe\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
        );
    }

    #[test]
    fn a_statefulsets_claim_templates_and_service_cannot_change() {
        let live = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: default}\nspec:\n  replicas: 3\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: c}]}\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeMode: Filesystem}\n";
        let same = live
            .replace("replicas: 3", "replicas: 5")
            .replace(", volumeMode: Filesystem", "");
        let mut objs = objects(&format!("{live}---\n{same}"));
        let applied = apply_over(&mut objs);
        assert!(applied.refused.is_empty(), "{:?}", applied.refused);
        let bigger = live.replace("1Gi", "2Gi");
        let mut objs = objects(&format!("{live}---\n{bigger}"));
        let applied = apply_over(&mut objs);
        assert_eq!(applied.refused.len(), 1);
        assert!(applied.refused[0].to_string().ends_with("spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"));
    }
}
