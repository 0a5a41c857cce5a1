//! Scaling as the controllers do it: replica counts from the manifests or `--scale`,
//! extra pods removed in the ReplicaSet controller's order
//! ([`topospread_planning::controller::deletion_order`]) or, for a StatefulSet, from the
//! highest ordinal down.

use super::{Expander, controller_of, ns_of};
use crate::load::Object;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use std::collections::BTreeMap;
use topospread::convert::DEFAULT_NAMESPACE;
use topospread_planning::controller::DeletionCandidate;

/// An existing pod its controller removes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemovedPod {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub pod: String,
    /// Its controller, `replicaset/web-abc`.
    pub controller: String,
}

/// A `--scale KIND/[NAMESPACE/]NAME=N` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    /// `deployment`, `replicaset`, `replicationcontroller` or `statefulset`.
    pub kind: &'static str,
    /// The namespace (`default` when not given).
    pub namespace: String,
    /// The workload's name.
    pub name: String,
    /// The replicas asked for.
    pub replicas: i32,
}

/// A `--scale` value that is not `KIND/[NAMESPACE/]NAME=N`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--scale {value:?}: {message}")]
pub struct ScaleError {
    /// The value as given.
    pub value: String,
    /// What is wrong with it.
    pub message: String,
}

impl std::str::FromStr for Scale {
    type Err = ScaleError;

    fn from_str(value: &str) -> Result<Self, ScaleError> {
        let err = |message: String| ScaleError {
            value: value.to_string(),
            message,
        };
        let (target, n) = value
            .rsplit_once('=')
            .ok_or_else(|| err("expected KIND/NAME=N".into()))?;
        let replicas: i32 = n
            .trim()
            .parse()
            .ok()
            .filter(|r| *r >= 0)
            .ok_or_else(|| err(format!("{n:?} is not a replica count (0 or more)")))?;
        let mut parts = target.split('/');
        let (kind, namespace, name) = match (parts.next(), parts.next(), parts.next(), parts.next())
        {
            (Some(k), Some(name), None, None) => (k, DEFAULT_NAMESPACE, name),
            (Some(k), Some(ns), Some(name), None) => (k, ns, name),
            _ => return Err(err("expected KIND/NAME=N or KIND/NAMESPACE/NAME=N".into())),
        };
        let kind = match kind.to_ascii_lowercase().as_str() {
            "deployment" | "deployments" | "deploy" => "deployment",
            "replicaset" | "replicasets" | "rs" => "replicaset",
            "replicationcontroller" | "replicationcontrollers" | "rc" => "replicationcontroller",
            "statefulset" | "statefulsets" | "sts" => "statefulset",
            other => {
                return Err(err(format!(
                    "unknown kind {other:?} (deployment, replicaset, replicationcontroller or statefulset)"
                )));
            }
        };
        if name.is_empty() || namespace.is_empty() {
            return Err(err("expected KIND/NAME=N with a name".into()));
        }
        Ok(Self {
            kind,
            namespace: namespace.to_string(),
            name: name.to_string(),
            replicas,
        })
    }
}

/// What the deletion order reads of an existing pod.
pub(crate) fn candidate(p: &Pod) -> DeletionCandidate {
    DeletionCandidate::of_pod(p)
}

/// Whether `labels` match `selector` (matchLabels and matchExpressions); an empty
/// selector matches nothing here, as a controller adopts nothing with it.
pub(super) fn selector_matches(
    selector: &LabelSelector,
    labels: &BTreeMap<String, String>,
) -> bool {
    let ml = selector.match_labels.as_ref();
    let me = selector.match_expressions.as_ref();
    if ml.is_none_or(BTreeMap::is_empty) && me.is_none_or(Vec::is_empty) {
        return false;
    }
    requirements_match(selector, labels)
}

/// Whether `labels` meet every matchLabels entry and matchExpressions requirement of
/// `selector` (an operator it does not know matches nothing); callers decide what an
/// empty or absent selector means.
pub(crate) fn requirements_match(
    selector: &LabelSelector,
    labels: &BTreeMap<String, String>,
) -> bool {
    selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v))
        && selector.match_expressions.iter().flatten().all(|r| {
            let values = r.values.as_deref().unwrap_or_default();
            let got = labels.get(&r.key);
            match r.operator.as_str() {
                "In" => got.is_some_and(|g| values.contains(g)),
                "NotIn" => got.is_none_or(|g| !values.contains(g)),
                "Exists" => got.is_some(),
                "DoesNotExist" => got.is_none(),
                _ => false,
            }
        })
}

/// The ordinal of a StatefulSet pod `<set>-<n>`.
pub(super) fn ordinal(name: &str) -> Option<u64> {
    name.rsplit_once('-')?.1.parse().ok()
}

impl Expander<'_> {
    /// The replicas of workload `kind` `ns/name`: a `--scale` request for it, else the
    /// manifest's.
    pub(super) fn replicas_for(&mut self, kind: &str, ns: &str, name: &str, manifest: i32) -> i32 {
        for (i, s) in self.scale.iter().enumerate() {
            if s.kind == kind && s.namespace == ns && s.name == name {
                self.scaled[i] = true;
                return s.replicas;
            }
        }
        manifest
    }

    /// Notes the input ReplicaSets that a Deployment of the input owns or adopts, so they
    /// are expanded through their Deployment only.
    pub(super) fn claim_replica_sets(&mut self) {
        let objects = self.objects;
        for l in objects {
            if let Object::Deployment(d) = &l.object {
                for rs in self.replica_sets_of(d) {
                    let key = (
                        ns_of(&rs.metadata),
                        rs.metadata.name.clone().unwrap_or_default(),
                    );
                    if controller_of(&rs.metadata).is_none() {
                        self.claimed.insert(key);
                    }
                }
            }
        }
    }

    /// Removes pods of `existing` (active pods of `controller`) down to `want`: a
    /// StatefulSet's (`ordinals_from` its first ordinal) outside its ordinal range,
    /// highest first, else in the ReplicaSet controller's order.
    /// Records them in [`super::Expansion::removed`] and returns their names.
    pub(super) fn scale_down(
        &mut self,
        ns: &str,
        controller: &str,
        existing: &[String],
        want: usize,
        ordinals_from: Option<usize>,
    ) -> Vec<String> {
        let remove = existing.len().saturating_sub(want);
        let gone: Vec<String> = if let Some(start) = ordinals_from {
            // `updateStatefulSet`: the ordinals outside `[start, start + replicas)` are
            // condemned, highest first (the missing ones inside are created).
            let start = u64::try_from(start).unwrap_or(0);
            let end = start.saturating_add(u64::try_from(want).unwrap_or(u64::MAX));
            let mut v: Vec<&String> = existing
                .iter()
                .filter(|n| ordinal(n).is_some_and(|o| !(start..end).contains(&o)))
                .collect();
            v.sort_by_key(|n| std::cmp::Reverse(ordinal(n)));
            v.into_iter().cloned().collect()
        } else {
            let candidates: Vec<DeletionCandidate> = existing
                .iter()
                .map(|n| {
                    self.existing
                        .candidates
                        .get(&(ns.to_string(), n.clone()))
                        .cloned()
                        .unwrap_or_else(|| DeletionCandidate::created_pending(n))
                })
                .collect();
            let related: Vec<Option<String>> = match &self.related {
                Some(pods) => pods
                    .iter()
                    .map(|p| {
                        self.existing
                            .candidates
                            .get(&(ns.to_string(), p.clone()))
                            .and_then(|c| c.node.clone())
                    })
                    .collect(),
                None => candidates.iter().map(|c| c.node.clone()).collect(),
            };
            topospread_planning::controller::deletion_order_with(
                &candidates,
                &related,
                self.features.scale_down_times,
            )
            .into_iter()
            .take(remove)
            .map(|i| existing[i].clone())
            .collect()
        };
        for pod in &gone {
            self.out.removed.push(RemovedPod {
                namespace: ns.to_string(),
                pod: pod.clone(),
                controller: controller.to_string(),
            });
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_values_parse_as_kubectl_names_them() {
        let s: Scale = "deploy/web=3".parse().expect("a valid value");
        assert_eq!(
            (s.kind, s.namespace.as_str(), s.name.as_str(), s.replicas),
            ("deployment", "default", "web", 3)
        );
        let s: Scale = "sts/prod/db=0".parse().expect("a valid value");
        assert_eq!(
            (s.kind, s.namespace.as_str(), s.name.as_str()),
            ("statefulset", "prod", "db")
        );
        for bad in [
            "web=3",
            "deployment/web=-1",
            "deployment/web=x",
            "job/j=1",
            "deployment/=1",
        ] {
            assert!(bad.parse::<Scale>().is_err(), "{bad}");
        }
    }

    #[test]
    fn selectors_match_as_label_selectors_do() {
        let labels: BTreeMap<String, String> = [("app".into(), "web".into())].into();
        let sel = |json: serde_json::Value| -> LabelSelector {
            serde_json::from_value(json).expect("a selector")
        };
        assert!(selector_matches(
            &sel(serde_json::json!({"matchLabels": {"app": "web"}})),
            &labels
        ));
        assert!(!selector_matches(
            &sel(serde_json::json!({"matchLabels": {"app": "db"}})),
            &labels
        ));
        assert!(selector_matches(
            &sel(
                serde_json::json!({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]})
            ),
            &labels
        ));
        // A controller adopts nothing with an empty selector.
        assert!(!selector_matches(&sel(serde_json::json!({})), &labels));
    }

    #[test]
    fn statefulset_ordinals_are_read_from_the_name() {
        assert_eq!(ordinal("db-12"), Some(12));
        assert_eq!(ordinal("my-db-3"), Some(3));
        assert_eq!(ordinal("db"), None);
    }
}
