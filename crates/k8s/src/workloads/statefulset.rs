//! A StatefulSet expanded as its controller (`pkg/controller/statefulset`) would sync
//! it: ordinals from `spec.ordinals.start` where the release keeps that field, one claim
//! per `volumeClaimTemplates` entry and ordinal made with the ordinal, every pod
//! labelled with the set's update revision, and a rolling update of the pods at an older
//! revision ([`RollingUpdate`]).

use super::ordered::{OrderedSet, Ordinal, RollingUpdate};
use super::{ExpandedPod, Expander, Naming, Owner, REVISION_LABEL, STATEFULSET_POD_NAME_LABEL};
use super::{claims, naming, ns_of, scale};
use crate::load::{Object, Source};
use crate::notes::Note;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The pod-index label (`apps.kubernetes.io/pod-index`).
const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// Gives a pod made from the template its identity as ordinal `ordinal` of its set
/// (`initIdentity`): the pod-name and pod-index labels, and its hostname.
pub(super) fn identity(pod: &mut Pod, name: &str, ordinal: usize) {
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(STATEFULSET_POD_NAME_LABEL.into(), name.to_string());
    labels.insert(POD_INDEX_LABEL.into(), ordinal.to_string());
    pod.metadata.name = Some(name.to_string());
    let spec = pod.spec.get_or_insert_with(Default::default);
    spec.hostname = Some(name.to_string());
}

/// The revision the set's pods are updated to, and whether the status named it:
/// `status.updateRevision`, or for a manifest without one `<set>-<hash of the
/// template>` (the hash is topospread's, see [`naming::pod_template_hash`]). A status
/// that lags its spec (`observedGeneration` below `generation`) is still believed: the
/// controller makes a new revision only if the template changed, which the manifest
/// cannot tell, and believing it replaces no pod that a scale alone would keep.
fn update_revision(set: &StatefulSet) -> (String, bool) {
    let status = set.status.as_ref();
    if let Some(r) = status.and_then(|s| s.update_revision.clone()) {
        return (r, true);
    }
    let template = serde_json::to_value(&set.spec.template).unwrap_or_default();
    let collisions = status.and_then(|s| s.collision_count);
    let name = set.metadata.name.as_deref().unwrap_or_default();
    (
        format!(
            "{name}-{}",
            naming::pod_template_hash(&template, collisions)
        ),
        false,
    )
}

/// `getStatefulSetMaxUnavailable`: `rollingUpdate.maxUnavailable` (1 when left out) as
/// a count of `replicas`, a percentage rounded down, never below 1.
fn max_unavailable(value: Option<&IntOrString>, replicas: i32) -> usize {
    let n = match value {
        None => 1,
        Some(IntOrString::Int(n)) => i64::from(*n),
        Some(IntOrString::String(s)) => s
            .strip_suffix('%')
            .and_then(|p| p.trim().parse::<i64>().ok())
            .map_or(1, |p| p * i64::from(replicas) / 100),
    };
    usize::try_from(n).unwrap_or(0).max(1)
}

/// What [`Expander::ordered_set`] records of one set.
struct SetPlan {
    replicas: i32,
    start: usize,
    first_new: usize,
    claims: HashMap<String, Vec<PersistentVolumeClaim>>,
    monotonic: bool,
    update: Option<RollingUpdate>,
}

impl Expander<'_> {
    /// Expands one StatefulSet.
    pub(super) fn stateful_set(&mut self, s: &Source, ss: &StatefulSet) {
        let owner = Owner {
            api_version: "apps/v1",
            kind: "StatefulSet",
            meta: &ss.metadata,
        };
        let spec = &ss.spec;
        let ns = ns_of(&ss.metadata);
        let replicas = self.replicas_for(
            "statefulset",
            &ns,
            &owner.name(),
            spec.replicas.unwrap_or(1),
        );
        let first_new = self.out.pods.len();
        let start = self.start_ordinal(s, ss);
        let (revision, from_status) = update_revision(ss);
        let base = self.pods(
            s,
            &owner,
            "StatefulSet",
            Some(&spec.template),
            replicas,
            Naming::Ordinal { start },
            &[(REVISION_LABEL, revision.as_str())],
        );
        let mut existing: BTreeSet<(String, String)> = self
            .objects
            .iter()
            .chain(&self.out.claims)
            .filter_map(|l| match &l.object {
                Object::PersistentVolumeClaim(c) => Some((
                    ns_of(&c.metadata),
                    c.metadata.name.clone().unwrap_or_default(),
                )),
                _ => None,
            })
            .collect();
        let new_pods = &mut self.out.pods[first_new..];
        let made = claims::apply(ss, new_pods, &mut existing);
        let mut by_pod: HashMap<String, Vec<PersistentVolumeClaim>> = new_pods
            .iter()
            .map(|p| p.pod.metadata.name.clone().unwrap_or_default())
            .zip(made)
            .filter(|(_, c)| !c.is_empty())
            .collect();
        let monotonic = spec.pod_management_policy.as_deref() != Some("Parallel");
        let update = base.and_then(|base| {
            self.rolling_update(
                s,
                ss,
                &base,
                &revision,
                from_status,
                replicas,
                start,
                &mut existing,
            )
        });
        if !monotonic {
            // Parallel: every ordinal with its claims at once.
            let all = std::mem::take(&mut by_pod)
                .into_values()
                .flatten()
                .collect();
            self.out.claims.extend(claims::loaded(s, all));
            if update.is_none() {
                return;
            }
        }
        let plan = SetPlan {
            replicas,
            start,
            first_new,
            claims: by_pod,
            monotonic,
            update,
        };
        self.ordered_set(s, &owner, plan);
    }

    /// The rolling update of a set just expanded (its summary last): its existing pods
    /// in `[start, start + replicas)` whose revision is not `revision`, each with the pod
    /// that replaces it. `None` under `OnDelete`, or with nothing to replace.
    #[allow(clippy::too_many_arguments)]
    fn rolling_update(
        &mut self,
        s: &Source,
        ss: &StatefulSet,
        base: &Pod,
        revision: &str,
        from_status: bool,
        replicas: i32,
        start: usize,
        existing_claims: &mut BTreeSet<(String, String)>,
    ) -> Option<RollingUpdate> {
        let strategy = ss.spec.update_strategy.as_ref();
        if strategy.and_then(|u| u.type_.as_deref()) == Some("OnDelete") {
            return None;
        }
        let rolling = strategy.and_then(|u| u.rolling_update.as_ref());
        let summary = self.out.workloads.last()?;
        let ns = summary.namespace.clone();
        let first = u64::try_from(start).unwrap_or(0);
        let end = first.saturating_add(u64::try_from(replicas).unwrap_or(0));
        // `getPodRevision(pod) != updateRevision`. Without a status to name the update
        // revision, a pod without the label is taken as made from the template.
        let outdated: Vec<String> = summary
            .pods
            .iter()
            .filter(|p| scale::ordinal(p).is_some_and(|n| (first..end).contains(&n)))
            .filter(|p| {
                self.existing
                    .revisions
                    .get(&(ns.clone(), (*p).clone()))
                    .is_some_and(|r| match r {
                        Some(r) => r != revision,
                        None => from_status,
                    })
            })
            .cloned()
            .collect();
        if outdated.is_empty() {
            return None;
        }
        let mut replacements = HashMap::new();
        let mut pods: Vec<ExpandedPod> = outdated
            .iter()
            .map(|name| {
                let mut pod = base.clone();
                let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
                labels.insert(REVISION_LABEL.into(), revision.to_string());
                let ordinal = scale::ordinal(name)
                    .and_then(|n| usize::try_from(n).ok())
                    .unwrap_or(0);
                identity(&mut pod, name, ordinal);
                ExpandedPod {
                    source: s.clone(),
                    pod,
                }
            })
            .collect();
        let made = claims::apply(ss, &mut pods, existing_claims);
        for (p, c) in pods.into_iter().zip(made) {
            let name = p.pod.metadata.name.clone().unwrap_or_default();
            replacements.insert(name, (Box::new(p.pod), c));
        }
        let partition = rolling
            .and_then(|r| r.partition)
            .and_then(|p| u64::try_from(p).ok())
            .unwrap_or(0);
        let max_unavailable = self
            .features
            .max_unavailable_statefulset
            .then(|| max_unavailable(rolling.and_then(|r| r.max_unavailable.as_ref()), replicas));
        Some(RollingUpdate {
            revision: revision.to_string(),
            start: first,
            partition,
            max_unavailable,
            outdated,
            replacements,
            replaced: Vec::new(),
            recreated: Vec::new(),
        })
    }

    /// A StatefulSet's first ordinal: `spec.ordinals.start` while the release keeps the
    /// field (`StatefulSetStartOrdinal`), else 0, with a note when that drops a start
    /// the manifest sets (`dropStatefulSetDisabledFields` in
    /// `pkg/registry/apps/statefulset/strategy.go`, `getStartOrdinal` in the controller).
    fn start_ordinal(&mut self, s: &Source, ss: &k8s_openapi::api::apps::v1::StatefulSet) -> usize {
        let written = ss.spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0);
        if written == 0 {
            return 0;
        }
        if self.features.statefulset_start_ordinal {
            return usize::try_from(written).unwrap_or(0);
        }
        let release = self.features.release;
        let why = if release < 26 {
            format!(
                "Kubernetes 1.{release} has no spec.ordinals (StatefulSetStartOrdinal is first in 1.26)"
            )
        } else {
            "the StatefulSetStartOrdinal gate is off (--feature-gates StatefulSetStartOrdinal=true keeps it)".to_string()
        };
        self.out.notes.push(Note::new(
            format!(
                "{}: statefulset/{}",
                s.file,
                ss.metadata.name.as_deref().unwrap_or_default()
            ),
            format!(
                "spec.ordinals.start {written} dropped: {why}: the API server drops the field and the StatefulSet controller numbers its pods from 0"
            ),
        ));
        0
    }

    /// Records a StatefulSet just expanded, OrderedReady or with a rolling update (its summary last, its new pods
    /// from `first_new`): its ordinals in `[0, replicas)`, lowest first.
    fn ordered_set(&mut self, s: &Source, owner: &Owner<'_>, plan: SetPlan) {
        let SetPlan {
            replicas,
            start,
            first_new,
            claims,
            monotonic,
            update,
        } = plan;
        let Some(summary) = self.out.workloads.last() else {
            return;
        };
        // Its condemned ordinals go one at a time, once the others are Running and
        // Ready ([`OrderedSet::sync`]), not all before scheduling.
        // A Parallel set's are removed before scheduling, all at once.
        let controller = owner.object();
        let mut condemned = Vec::new();
        self.out.removed.retain(|r| {
            let mine = monotonic && r.namespace == summary.namespace && r.controller == controller;
            if mine {
                condemned.push(r.pod.clone());
            }
            !mine
        });
        let new = &self.out.pods[first_new..];
        let start = u64::try_from(start).unwrap_or(0);
        let end = start.saturating_add(u64::try_from(replicas).unwrap_or(0));
        let mut ordinals: Vec<(u64, Ordinal)> = summary
            .pods
            .iter()
            .filter_map(|name| {
                let n = scale::ordinal(name).filter(|n| (start..end).contains(n))?;
                let slot = match new
                    .iter()
                    .find(|p| p.pod.metadata.name.as_deref() == Some(name))
                {
                    Some(p) if monotonic => Ordinal::Missing(Box::new(p.pod.clone())),
                    _ => Ordinal::Created(name.clone()),
                };
                Some((n, slot))
            })
            .collect();
        if condemned.is_empty()
            && update.is_none()
            && !ordinals
                .iter()
                .any(|(_, o)| matches!(o, Ordinal::Missing(_)))
        {
            return;
        }
        ordinals.sort_by_key(|(n, _)| *n);
        // Until they go, the condemned pods are still the set's.
        if let Some(summary) = self.out.workloads.last_mut() {
            summary.pods.extend(condemned.iter().cloned());
        }
        let namespace = ns_of(owner.meta);
        self.out.ordered.push(OrderedSet {
            source: s.clone(),
            name: owner.name(),
            ordinals: ordinals.into_iter().map(|(_, o)| o).collect(),
            condemned,
            namespace,
            admission: self.admission.clone(),
            claims,
            created_claims: Vec::new(),
            monotonic,
            update,
        });
    }
}
