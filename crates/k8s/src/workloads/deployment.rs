//! Deployments as the deployment controller handles them: it claims its ReplicaSets
//! (controller owner reference, else its selector over orphans), the one whose template
//! equals its own once `pod-template-hash` is ignored (`EqualIgnoreHash`) is the current
//! revision, and the others are old revisions a rollout scales down.

use super::{
    Expander, Naming, Owner, POD_TEMPLATE_HASH_LABEL, ns_of, pod_template_hash,
    rollout::{Revision, Rollout},
    selector_matches,
};
use crate::load::{Loaded, Object, Source};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::collections::BTreeMap;
use topospread_planning::controller::{IntOrPercent, Strategy};

/// The template without its `pod-template-hash` label, for `EqualIgnoreHash`.
fn without_hash(t: &PodTemplateSpec) -> PodTemplateSpec {
    let mut t = t.clone();
    if let Some(m) = t.metadata.as_mut()
        && let Some(labels) = m.labels.as_mut()
    {
        labels.remove(POD_TEMPLATE_HASH_LABEL);
        if labels.is_empty() {
            m.labels = None;
        }
    }
    if t.metadata
        .as_ref()
        .is_some_and(|m| *m == ObjectMeta::default())
    {
        t.metadata = None;
    }
    t
}

/// `maxSurge` / `maxUnavailable` as written (`25%` or `1`); the default when absent.
fn int_or_percent(v: Option<&IntOrString>) -> IntOrPercent {
    match v {
        Some(IntOrString::Int(n)) => IntOrPercent::Int(*n),
        Some(IntOrString::String(s)) => s
            .strip_suffix('%')
            .and_then(|p| p.parse().ok())
            .map_or(IntOrPercent::Percent(25), IntOrPercent::Percent),
        None => IntOrPercent::Percent(25),
    }
}

/// The Deployment's strategy, resolved for `replicas`.
pub(crate) fn strategy(d: &Deployment, replicas: i32) -> Strategy {
    let s = d.spec.strategy.as_ref();
    if s.and_then(|s| s.type_.as_deref()) == Some("Recreate") {
        return Strategy::Recreate;
    }
    let ru = s.and_then(|s| s.rolling_update.as_ref());
    Strategy::rolling(
        int_or_percent(ru.and_then(|r| r.max_surge.as_ref())),
        int_or_percent(ru.and_then(|r| r.max_unavailable.as_ref())),
        replicas,
    )
}

impl<'a> Expander<'a> {
    /// The ReplicaSets a Deployment owns or would adopt, oldest first.
    pub(super) fn replica_sets_of(&self, d: &Deployment) -> Vec<&'a ReplicaSet> {
        let ns = ns_of(&d.metadata);
        let name = d.metadata.name.clone().unwrap_or_default();
        let selector = Some(&d.spec.selector);
        let mut v: Vec<&'a ReplicaSet> = self
            .objects
            .iter()
            .filter_map(|l| match &l.object {
                Object::ReplicaSet(rs) if ns_of(&rs.metadata) == ns => Some(&**rs),
                _ => None,
            })
            .filter(|rs| match super::controller_of(&rs.metadata) {
                Some(o) => o.kind == "Deployment" && o.name == name,
                None => selector.is_some_and(|sel| {
                    selector_matches(sel, rs.metadata.labels.as_ref().unwrap_or(&BTreeMap::new()))
                }),
            })
            .collect();
        v.sort_by_key(|rs| {
            (
                rs.metadata.creation_timestamp.as_ref().map(|t| t.0),
                rs.metadata.name.clone(),
            )
        });
        v
    }

    /// Expands a Deployment: the current ReplicaSet's missing pods (or extra pods
    /// removed), or a rollout from the old ReplicaSets to the new one.
    pub(super) fn deployment(&mut self, s: &Source, d: &'a Deployment) {
        let object = format!("deployment/{}", d.metadata.name.as_deref().unwrap_or(""));
        let spec = &d.spec;
        let ns = ns_of(&d.metadata);
        let name = d.metadata.name.clone().unwrap_or_default();
        let replicas = self.replicas_for("deployment", &ns, &name, spec.replicas.unwrap_or(1));
        let sets = self.replica_sets_of(d);
        let wanted = without_hash(&spec.template);
        let current = sets.iter().copied().find(|rs| {
            rs.spec
                .template
                .as_ref()
                .is_some_and(|t| without_hash(t) == wanted)
        });
        let pods_of = |x: &Self, rs: &ReplicaSet| -> Vec<String> {
            x.existing
                .owned(&ns, "ReplicaSet", rs.metadata.name.as_deref().unwrap_or(""))
                .to_vec()
        };
        let old: Vec<Revision> = sets
            .iter()
            .filter(|rs| current.is_none_or(|c| !std::ptr::eq::<ReplicaSet>(**rs, c)))
            .map(|rs| Revision {
                replica_set: rs.metadata.name.clone().unwrap_or_default(),
                pods: pods_of(self, rs),
            })
            .filter(|r| !r.pods.is_empty())
            .collect();
        // Every pod of the Deployment, for the co-location ranks of the deletion order.
        let related: Vec<String> = sets.iter().flat_map(|rs| pods_of(self, rs)).collect();
        if spec.paused == Some(true) && current.is_none() && !old.is_empty() {
            // A paused Deployment is scaled but not rolled out (`sync` without rollout).
            self.out.notes.push(crate::notes::Note::new(
                format!("{}: {object}", s.file),
                "paused: its new template is not rolled out",
            ));
            self.out.workloads.push(super::WorkloadSummary {
                kind: "Deployment",
                namespace: ns.clone(),
                name: name.clone(),
                pods: old.iter().flat_map(|r| r.pods.clone()).collect(),
            });
            return;
        }
        let (rs, created_rs) = match current {
            Some(rs) => (rs.clone(), false),
            None => match self.new_replica_set(s, d, &object) {
                Some(rs) => (rs, true),
                None => return,
            },
        };
        let rs_name = rs.metadata.name.clone().unwrap_or_default();
        let template = rs.spec.template.clone();
        let rs_owner = Owner {
            api_version: "apps/v1",
            kind: "ReplicaSet",
            meta: &rs.metadata,
        };
        let before = self.out.errors.len();
        if old.is_empty() {
            self.related = Some(related);
            self.pods(
                s,
                &rs_owner,
                "Deployment",
                template.as_ref(),
                replicas,
                Naming::Random,
                &[],
            );
            self.related = None;
        } else if let Some(t) = template.as_ref()
            && let Some(base) = self.template_pod(s, &rs_owner, t, &ns)
        {
            let new = Revision {
                replica_set: rs_name.clone(),
                pods: self.existing.owned(&ns, "ReplicaSet", &rs_name).to_vec(),
            };
            let mut pods: Vec<String> = old.iter().flat_map(|r| r.pods.clone()).collect();
            pods.extend(new.pods.iter().cloned());
            let candidates = related
                .iter()
                .filter_map(|p| self.existing.candidates.get(&(ns.clone(), p.clone())))
                .cloned()
                .collect();
            self.out.rollouts.push(Rollout {
                source: s.clone(),
                namespace: ns.clone(),
                deployment: name.clone(),
                replicas,
                strategy: strategy(d, replicas),
                new,
                old,
                template: base,
                candidates,
                seed: self.seed,
                times: self.features.scale_down_times,
                admission: self.admission.clone(),
                min_ready_seconds: spec.min_ready_seconds.unwrap_or(0).max(0),
                progress_deadline_seconds: spec.progress_deadline_seconds.unwrap_or(600),
            });
            self.out.workloads.push(super::WorkloadSummary {
                kind: "Deployment",
                namespace: ns.clone(),
                name: rs_name.clone(),
                pods,
            });
        }
        // Name the Deployment, not its ReplicaSet, in template errors and reports.
        for e in self.out.errors[before..]
            .iter_mut()
            .chain(&mut self.too_many)
        {
            e.object.clone_from(&object);
        }
        if let Some(w) = self.out.workloads.last_mut()
            && w.name == rs_name
        {
            w.name.clone_from(&name);
        }
        if created_rs {
            self.out.replica_sets.push(Loaded {
                source: s.clone(),
                object: Object::ReplicaSet(Box::new(rs)),
            });
        }
    }

    /// The ReplicaSet the deployment controller would create for the Deployment's
    /// template: `<deployment>-<hash>`, the hash recomputed with a collision count when
    /// that name is taken by a ReplicaSet with another template.
    fn new_replica_set(&mut self, s: &Source, d: &Deployment, object: &str) -> Option<ReplicaSet> {
        let spec = &d.spec;
        let template_json = match serde_json::to_value(&spec.template) {
            Ok(v) => v,
            Err(e) => {
                self.error(s, object.to_string(), "spec.template", e.to_string());
                return None;
            }
        };
        let ns = ns_of(&d.metadata);
        let name = d.metadata.name.clone().unwrap_or_default();
        let mut collisions = None;
        let hash = loop {
            let hash = pod_template_hash(&template_json, collisions);
            let taken = self
                .existing
                .replica_sets
                .contains(&(ns.clone(), format!("{name}-{hash}")));
            if !taken || collisions.unwrap_or(0) >= 16 {
                break hash;
            }
            collisions = Some(collisions.map_or(1, |c| c + 1));
        };
        let mut template = spec.template.clone();
        let meta = template.metadata.get_or_insert_with(Default::default);
        meta.labels
            .get_or_insert_with(BTreeMap::new)
            .insert(POD_TEMPLATE_HASH_LABEL.into(), hash.clone());
        let mut selector: LabelSelector = spec.selector.clone();
        selector
            .match_labels
            .get_or_insert_with(BTreeMap::new)
            .insert(POD_TEMPLATE_HASH_LABEL.into(), hash.clone());
        let owner = Owner {
            api_version: "apps/v1",
            kind: "Deployment",
            meta: &d.metadata,
        };
        let rs_labels = meta.labels.clone().unwrap_or_default();
        Some(ReplicaSet {
            metadata: ObjectMeta {
                name: Some(format!("{name}-{hash}")),
                namespace: Some(ns),
                labels: Some(rs_labels),
                owner_references: Some(vec![owner.reference()]),
                ..Default::default()
            },
            spec: ReplicaSetSpec {
                replicas: Some(spec.replicas.unwrap_or(1)),
                selector,
                template: Some(template),
                min_ready_seconds: spec.min_ready_seconds,
            },
            status: None,
        })
    }
}
