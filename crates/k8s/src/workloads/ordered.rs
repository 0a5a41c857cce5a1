//! A StatefulSet under `podManagementPolicy: OrderedReady` (the default), as the
//! StatefulSet controller runs it (`updateStatefulSet` and `processReplica` in
//! kubernetes `pkg/controller/statefulset/stateful_set_control.go`): it walks its
//! ordinals from the lowest and creates the first missing one only when every ordinal
//! below it is Running and Ready, one pod per sync. A pod that is not yet Running and
//! Ready, or terminating, or that the API server refused, holds back every ordinal
//! above it. `Parallel` sets create every ordinal at once and are not held here.
//!
//! The simulation has no kubelet: a pod counts as Running and Ready once it is bound
//! (and not terminating). The controller syncs again only after the scheduler has
//! settled, as readiness takes seconds where a scheduling cycle takes milliseconds.

use super::RemovedPod;
use crate::admission::Admission;
use crate::build::{self, BuildError, Refused};
use crate::load::Source;
use k8s_openapi::api::core::v1::Pod;
use std::sync::Arc;
use topospread::snapshot::{PodId, Snapshot};

/// One ordinal of an [`OrderedSet`], lowest first.
#[derive(Clone, Debug)]
pub enum Ordinal {
    /// The pod exists (in the input, or created during the simulation).
    Created(String),
    /// The controller has not created it yet: the pod it will create.
    Missing(Box<Pod>),
    /// The API server refused it when the controller created it: the controller
    /// retries the same pod and goes no further.
    Refused(String),
}

impl Ordinal {
    /// The pod's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Created(n) | Self::Refused(n) => n,
            Self::Missing(p) => p.metadata.name.as_deref().unwrap_or_default(),
        }
    }
}

/// An OrderedReady StatefulSet whose missing ordinals are created one at a time.
#[derive(Clone, Debug)]
pub struct OrderedSet {
    /// Where the StatefulSet came from.
    pub source: Source,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its ordinals in `[0, replicas)` that exist or are to be made, lowest first.
    pub ordinals: Vec<Ordinal>,
    /// Its existing pods at or above `replicas`, highest first, still to be deleted
    /// (`processCondemned`): one per sync, once every ordinal below is Running and
    /// Ready.
    pub condemned: Vec<String>,
    /// The admission plugins the new pods go through (shared with every other pod
    /// created, for quotas).
    pub admission: Arc<Admission>,
}

/// What one sync of an [`OrderedSet`] did.
#[derive(Debug)]
pub enum Synced {
    /// Nothing: every ordinal exists, or one of them holds the rest back.
    Nothing,
    /// It created this pod, now pending in the snapshot.
    Created(PodId),
    /// The API server refused the pod it created.
    Refused(Box<Refused>),
    /// It deleted this condemned pod (a scale-down).
    Deleted(RemovedPod),
}

impl OrderedSet {
    /// Whether the pod `name` is one of the ordinals still to be created.
    pub fn holds(&self, name: &str) -> bool {
        self.ordinals
            .iter()
            .any(|o| matches!(o, Ordinal::Missing(_)) && o.name() == name)
    }

    /// The ordinals the controller has not created (those the API server refused
    /// aside, which are reported as refused), lowest first.
    pub fn not_created(&self) -> Vec<String> {
        self.ordinals
            .iter()
            .filter(|o| matches!(o, Ordinal::Missing(_)))
            .map(|o| o.name().to_string())
            .collect()
    }

    /// The first ordinal that is not Running and Ready (a pod not bound, terminating,
    /// gone, or refused), which holds back the ordinals above it.
    fn first_unready(&self, snapshot: &Snapshot) -> Option<&Ordinal> {
        self.ordinals.iter().find(|o| match o {
            Ordinal::Created(name) => !snapshot
                .pod_id(&self.namespace, name)
                .is_some_and(|id| Self::ready(snapshot, id)),
            Ordinal::Missing(_) | Ordinal::Refused(_) => true,
        })
    }

    /// Why the ordinals still missing were not created, as `kubectl describe` lets a
    /// user conclude: `web-2..web-4 not created: StatefulSet web (OrderedReady) waits
    /// for web-1 to be Running and Ready`; `None` when every ordinal exists.
    pub fn why_not_created(&self, snapshot: &Snapshot) -> Option<String> {
        let missing = self.not_created();
        let (first, last) = (missing.first()?, missing.last()?);
        let range = if first == last {
            first.clone()
        } else {
            format!("{first}..{last}")
        };
        let set = format!("StatefulSet {} (OrderedReady)", self.name);
        Some(match self.first_unready(snapshot) {
            Some(Ordinal::Refused(p)) => {
                format!("{range} not created: {set} retries {p}, which the API server refused")
            }
            Some(Ordinal::Created(p)) => {
                format!("{range} not created: {set} waits for {p} to be Running and Ready")
            }
            Some(Ordinal::Missing(_)) | None => format!("{range} not created: {set}"),
        })
    }

    /// Why the condemned pods still there were not deleted: `web-3..web-4 not removed:
    /// StatefulSet web (OrderedReady) scales down once web-1 is Running and Ready`.
    pub fn why_not_removed(&self, snapshot: &Snapshot) -> Option<String> {
        let left: Vec<&String> = self
            .condemned
            .iter()
            .filter(|p| snapshot.pod_id(&self.namespace, p).is_some())
            .collect();
        let (first, last) = (left.last()?, left.first()?);
        let range = if first == last {
            (*first).clone()
        } else {
            format!("{first}..{last}")
        };
        let set = format!("StatefulSet {} (OrderedReady)", self.name);
        Some(match self.first_unready(snapshot) {
            Some(o) => format!(
                "{range} not removed: {set} scales down once {} is Running and Ready",
                o.name()
            ),
            None => {
                let waits = left
                    .iter()
                    .rev()
                    .find(|p| {
                        snapshot
                            .pod_id(&self.namespace, p)
                            .is_some_and(|id| !Self::ready(snapshot, id))
                    })
                    .map_or(first.as_str(), |p| p.as_str());
                format!(
                    "{range} not removed: {set} deletes its condemned pods from the highest, each once the ones below are Running and Ready, and waits for {waits}"
                )
            }
        })
    }

    /// Whether pod `id` is Running and Ready: bound and not terminating.
    fn ready(snapshot: &Snapshot, id: PodId) -> bool {
        snapshot.pod_node(id).is_some() && snapshot.pod(id).is_some_and(|p| !p.terminating)
    }

    /// One sync of the controller: the first missing ordinal is created when every
    /// ordinal below it is bound (Running and Ready); once all are, the highest
    /// condemned pod is deleted through `delete` (`processCondemned`: a pod that is not
    /// Running and Ready goes only if it is the lowest such condemned pod); nothing
    /// otherwise. A created pod goes through admission into `snapshot`, pending; the
    /// caller queues it.
    pub fn sync(
        &mut self,
        snapshot: &mut Snapshot,
        delete: &mut dyn FnMut(&mut Snapshot, PodId),
    ) -> Result<Synced, BuildError> {
        let Some(index) = self
            .ordinals
            .iter()
            .position(|o| matches!(o, Ordinal::Missing(_)))
        else {
            if self.first_unready(snapshot).is_some() {
                return Ok(Synced::Nothing);
            }
            return Ok(self.condemn(snapshot, delete));
        };
        let blocked = self
            .first_unready(snapshot)
            .is_some_and(|o| !std::ptr::eq(o, &self.ordinals[index]));
        if blocked {
            return Ok(Synced::Nothing);
        }
        let Ordinal::Missing(pod) = &self.ordinals[index] else {
            return Ok(Synced::Nothing);
        };
        let name = pod.metadata.name.clone().unwrap_or_default();
        match build::admit_and_add_with(snapshot, pod, &self.source.file, &self.admission)? {
            Some(refused) => {
                self.ordinals[index] = Ordinal::Refused(name);
                Ok(Synced::Refused(Box::new(refused)))
            }
            None => {
                let id = snapshot.pod_id(&self.namespace, &name);
                self.ordinals[index] = Ordinal::Created(name);
                Ok(id.map_or(Synced::Nothing, Synced::Created))
            }
        }
    }
}

/// A note for a StatefulSet caught mid rolling update (`status.currentRevision` is not
/// `status.updateRevision`, strategy not `OnDelete`): the controller would go on
/// replacing its pods from the highest ordinal down (`updateStatefulSet`), which is
/// not simulated.
pub(super) fn rolling_update_note(
    source: &Source,
    set: &k8s_openapi::api::apps::v1::StatefulSet,
) -> Option<crate::notes::Note> {
    let status = set.status.as_ref()?;
    let (current, update) = (
        status.current_revision.as_deref()?,
        status.update_revision.as_deref()?,
    );
    let on_delete = set
        .spec
        .update_strategy
        .as_ref()
        .and_then(|u| u.type_.as_deref())
        == Some("OnDelete");
    if current == update || on_delete {
        return None;
    }
    Some(crate::notes::Note::new(
        format!(
            "{}: statefulset/{}",
            source.file,
            set.metadata.name.as_deref().unwrap_or_default()
        ),
        format!(
            "rolling update in progress (status.currentRevision {current}, updateRevision \
             {update}): not simulated: existing pods keep their revision and no pod is \
             replaced"
        ),
    ))
}

impl OrderedSet {
    /// `processCondemned` in monotonic mode, once every replica is Running and Ready.
    fn condemn(
        &mut self,
        snapshot: &mut Snapshot,
        delete: &mut dyn FnMut(&mut Snapshot, PodId),
    ) -> Synced {
        let ns = self.namespace.clone();
        // Gone already (or terminating, which the simulation does not wait out).
        self.condemned.retain(|p| {
            snapshot
                .pod_id(&ns, p)
                .is_some_and(|id| snapshot.pod(id).is_some_and(|pod| !pod.terminating))
        });
        let Some(target) = self.condemned.first().cloned() else {
            return Synced::Nothing;
        };
        let Some(id) = snapshot.pod_id(&ns, &target) else {
            return Synced::Nothing;
        };
        // The first unhealthy condemned pod is the lowest one not Running and Ready.
        let first_unhealthy = self
            .condemned
            .iter()
            .rev()
            .find(|p| {
                snapshot
                    .pod_id(&ns, p)
                    .is_some_and(|id| !Self::ready(snapshot, id))
            })
            .cloned();
        if !Self::ready(snapshot, id) && first_unhealthy.as_ref() != Some(&target) {
            return Synced::Nothing;
        }
        delete(snapshot, id);
        self.condemned.remove(0);
        Synced::Deleted(RemovedPod {
            namespace: ns,
            pod: target,
            controller: format!("statefulset/{}", self.name),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_manifests;
    use crate::workloads::expand;
    use topospread::config::SchedulerConfig;
    use topospread::features::Features;
    use topospread::scheduler::Scheduler;
    use topospread::simulation::Simulation;

    fn manifests(policy: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n1, labels: {{kubernetes.io/hostname: n1}}}}\nstatus: {{allocatable: {{cpu: '1', memory: 8Gi, pods: '110'}}}}\n---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: web}}\nspec:\n  replicas: 3\n{policy}  serviceName: web\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: c, image: i, resources: {{requests: {{cpu: 600m}}}}}}]}}\n"
        )
    }

    #[test]
    fn only_ordered_ready_sets_hold_their_ordinals() {
        let m = parse_manifests(&manifests(""), "web.yaml").expect("parses");
        let e = expand(&m.objects, 0);
        assert_eq!(e.ordered.len(), 1);
        let names: Vec<&str> = e.ordered[0].ordinals.iter().map(Ordinal::name).collect();
        assert_eq!(names, ["web-0", "web-1", "web-2"]);
        assert!(e.ordered[0].holds("web-2"));
        // The pods stay in the expansion (claims, notes, -o yaml read them there).
        assert_eq!(e.pods.len(), 3);

        let parallel = manifests("  podManagementPolicy: Parallel\n");
        let m = parse_manifests(&parallel, "web.yaml").expect("parses");
        let e = expand(&m.objects, 0);
        assert!(e.ordered.is_empty());
        assert_eq!(e.pods.len(), 3);
    }

    #[test]
    fn each_ordinal_waits_for_the_one_below_to_be_bound() {
        let m = parse_manifests(&manifests(""), "web.yaml").expect("parses");
        let mut e = expand(&m.objects, 0);
        let mut snapshot = build::build(m.objects.iter()).expect("builds").snapshot;
        let set = &mut e.ordered[0];
        let Ok(Synced::Created(first)) = set.sync(&mut snapshot, &mut |s, id| {
            s.remove_pod(id);
        }) else {
            panic!("web-0 not created");
        };
        // web-0 is not bound yet: nothing more.
        assert!(matches!(
            set.sync(&mut snapshot, &mut |s, id| {
                s.remove_pod(id);
            }),
            Ok(Synced::Nothing)
        ));
        assert_eq!(set.not_created(), ["web-1", "web-2"]);
        assert_eq!(
            set.why_not_created(&snapshot).as_deref(),
            Some(
                "web-1..web-2 not created: StatefulSet web (OrderedReady) waits for web-0 to be Running and Ready"
            )
        );
        let scheduler = Scheduler::new(
            &SchedulerConfig::default(),
            Features::default(),
            &mut snapshot,
        )
        .expect("scheduler");
        let mut sim = Simulation::new(scheduler);
        sim.enqueue(&snapshot, first).expect("queued");
        sim.run(&mut snapshot, |_, _| {}).expect("runs");
        assert!(snapshot.pod_node(first).is_some());
        // Bound, so Running and Ready: web-1 comes, and does not fit.
        let Ok(Synced::Created(second)) = set.sync(&mut snapshot, &mut |s, id| {
            s.remove_pod(id);
        }) else {
            panic!("web-1 not created");
        };
        sim.enqueue(&snapshot, second).expect("queued");
        sim.run(&mut snapshot, |_, _| {}).expect("runs");
        assert!(snapshot.pod_node(second).is_none());
        assert!(matches!(
            set.sync(&mut snapshot, &mut |s, id| {
                s.remove_pod(id);
            }),
            Ok(Synced::Nothing)
        ));
        assert_eq!(set.not_created(), ["web-2"]);
        assert!(!set.holds("web-1"));
        assert_eq!(
            set.why_not_created(&snapshot).as_deref(),
            Some(
                "web-2 not created: StatefulSet web (OrderedReady) waits for web-1 to be Running and Ready"
            )
        );
    }

    #[test]
    fn a_set_caught_mid_rolling_update_is_noted() {
        let text = |strategy: &str, update: &str| {
            format!(
                "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: web}}\nspec:\n  replicas: 1\n  updateStrategy: {{type: {strategy}}}\n  serviceName: web\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: c, image: i}}]}}\nstatus: {{replicas: 1, currentRevision: web-1a, updateRevision: {update}}}\n"
            )
        };
        let notes = |t: String| {
            let m = parse_manifests(&t, "web.yaml").expect("parses");
            expand(&m.objects, 0)
                .notes
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            notes(text("RollingUpdate", "web-2b")),
            [
                "web.yaml: statefulset/web: rolling update in progress (status.currentRevision web-1a, updateRevision web-2b): not simulated: existing pods keep their revision and no pod is replaced"
            ]
        );
        assert!(notes(text("RollingUpdate", "web-1a")).is_empty());
        assert!(notes(text("OnDelete", "web-2b")).is_empty());
    }

    #[test]
    fn a_scale_down_waits_for_the_ordinals_it_keeps() {
        let pod = |i: u32, node: &str| {
            format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web-{i}\n  labels: {{app: web}}\n  ownerReferences: [{{apiVersion: apps/v1, kind: StatefulSet, name: web, uid: u1, controller: true}}]\nspec:\n  containers: [{{name: c, image: i, resources: {{requests: {{cpu: 600m}}}}}}]\n{node}"
            )
        };
        let mut text = manifests("").replace("replicas: 3", "replicas: 2");
        text = text.replace("metadata: {name: web}", "metadata: {name: web, uid: u1}");
        text.push_str(&pod(0, "  nodeName: n1\n"));
        text.push_str(&pod(1, ""));
        text.push_str(&pod(2, "  nodeName: n1\n"));
        text.push_str(&pod(3, "  nodeName: n1\n"));
        let m = parse_manifests(&text, "web.yaml").expect("parses");
        let mut e = expand(&m.objects, 0);
        // Not removed before scheduling: the set's controller removes them.
        assert!(e.removed.is_empty(), "{:?}", e.removed);
        let set = &mut e.ordered[0];
        assert_eq!(set.condemned, ["web-3", "web-2"]);
        let mut snapshot = build::build(m.objects.iter()).expect("builds").snapshot;
        let mut deleted = Vec::new();
        let synced = set.sync(&mut snapshot, &mut |_, id| deleted.push(id));
        assert!(matches!(synced, Ok(Synced::Nothing)), "{synced:?}");
        assert!(deleted.is_empty());
        assert_eq!(
            set.why_not_removed(&snapshot).as_deref(),
            Some(
                "web-2..web-3 not removed: StatefulSet web (OrderedReady) scales down once web-1 is Running and Ready"
            )
        );
        // Once web-1 is gone from the picture (bound), web-3 goes first, then web-2.
        let one = snapshot.pod_id("default", "web-1").expect("web-1");
        snapshot.remove_pod(one);
        let mut bound = set.clone();
        bound.ordinals.truncate(1);
        let Ok(Synced::Deleted(r)) = bound.sync(&mut snapshot, &mut |s, id| {
            s.remove_pod(id);
        }) else {
            panic!("web-3 not deleted");
        };
        assert_eq!(
            (r.pod.as_str(), r.controller.as_str()),
            ("web-3", "statefulset/web")
        );
        let Ok(Synced::Deleted(r)) = bound.sync(&mut snapshot, &mut |s, id| {
            s.remove_pod(id);
        }) else {
            panic!("web-2 not deleted");
        };
        assert_eq!(r.pod, "web-2");
        assert!(bound.why_not_removed(&snapshot).is_none());
    }

    #[test]
    fn ordinals_start_at_spec_ordinals_start() {
        let text = manifests("  ordinals: {start: 3}\n");
        let m = parse_manifests(&text, "web.yaml").expect("parses");
        let e = expand(&m.objects, 0);
        let names: Vec<&str> = e.ordered[0].ordinals.iter().map(Ordinal::name).collect();
        assert_eq!(names, ["web-3", "web-4", "web-5"]);
        let labels = e.pods[0].pod.metadata.labels.clone().unwrap_or_default();
        assert_eq!(
            labels
                .get("apps.kubernetes.io/pod-index")
                .map(String::as_str),
            Some("3")
        );
    }
}
