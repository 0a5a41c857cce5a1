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
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use std::collections::HashMap;
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
    /// The claims of its `volumeClaimTemplates` each missing ordinal still has to make,
    /// by pod name: created just before the pod, as the controller does
    /// (`createPersistentVolumeClaims` in `stateful_pod_control.go`), so an ordinal held
    /// back has none and binds no volume.
    pub claims: HashMap<String, Vec<PersistentVolumeClaim>>,
    /// The claims created so far, in creation order (for `-o yaml`).
    pub created_claims: Vec<PersistentVolumeClaim>,
    /// `podManagementPolicy: OrderedReady` (`monotonic` upstream): each ordinal waits
    /// for those below it. A `Parallel` set is held here only for a rolling update; its
    /// missing ordinals are created without waiting.
    pub monotonic: bool,
    /// The rolling update still to carry out, if the set has pods at an older revision.
    pub update: Option<RollingUpdate>,
}

/// A StatefulSet's rolling update (`updateStrategy.type: RollingUpdate`, the default),
/// as `updateStatefulSet` in `stateful_set_control.go` carries it out once every
/// replica is created (and, for OrderedReady, Running and Ready): it deletes the pod
/// with the highest ordinal at or above `partition` whose `controller-revision-hash`
/// is not the update revision, and recreates that ordinal from the set's template; the
/// next one goes once the recreated pod is Running and Ready. Under
/// `MaxUnavailableStatefulSet` (`updateStatefulSetAfterInvariantEstablished`) it
/// deletes up to `maxUnavailable` pods less those unavailable at once.
#[derive(Clone, Debug)]
pub struct RollingUpdate {
    /// The revision pods are updated to (`status.updateRevision`, or for a manifest
    /// without status `<set>-<hash of its template>`).
    pub revision: String,
    /// The first ordinal (`spec.ordinals.start`): `partition` counts from it.
    pub start: u64,
    /// `rollingUpdate.partition`: ordinals below `start + partition` keep their revision.
    pub partition: u64,
    /// `rollingUpdate.maxUnavailable` under MaxUnavailableStatefulSet (1 by default);
    /// `None` while the gate is off: one pod at a time, each waiting for the ones above.
    pub max_unavailable: Option<usize>,
    /// The existing pods at an older revision not yet replaced, by name.
    pub outdated: Vec<String>,
    /// The pod each outdated ordinal is recreated as (from the update revision), with
    /// the claims it creates that do not exist.
    pub replacements: HashMap<String, (Box<Pod>, Vec<PersistentVolumeClaim>)>,
    /// The pods deleted for the update, in order.
    pub replaced: Vec<String>,
    /// The replacements created, in order (for `-o yaml`).
    pub recreated: Vec<Pod>,
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
    /// It deleted these pods at an older revision (a rolling update); their ordinals
    /// are recreated from the update revision by the next syncs.
    Updated(Vec<String>),
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
            if self.monotonic && self.first_unready(snapshot).is_some() {
                return Ok(Synced::Nothing);
            }
            let synced = self.condemn(snapshot, delete);
            // Scaling takes precedence over updates (`updateStatefulSet`).
            if !matches!(synced, Synced::Nothing) || !self.condemned.is_empty() {
                return Ok(synced);
            }
            return Ok(self.roll(snapshot, delete));
        };
        let blocked = self.monotonic
            && self
                .first_unready(snapshot)
                .is_some_and(|o| !std::ptr::eq(o, &self.ordinals[index]));
        if blocked {
            return Ok(Synced::Nothing);
        }
        let Ordinal::Missing(pod) = &self.ordinals[index] else {
            return Ok(Synced::Nothing);
        };
        let name = pod.metadata.name.clone().unwrap_or_default();
        if let Some(claims) = self.claims.remove(&name) {
            // Refused claims stay out; the pod then waits for them, as in a cluster.
            build::add_created_claims(snapshot, &claims);
            self.created_claims.extend(claims);
        }
        match build::admit_and_add_with(snapshot, pod, &self.source.file, &self.admission)? {
            Some(refused) => {
                self.ordinals[index] = Ordinal::Refused(name);
                Ok(Synced::Refused(Box::new(refused)))
            }
            None => {
                let id = snapshot.pod_id(&self.namespace, &name);
                if let Some(u) = self.update.as_mut()
                    && u.replaced.contains(&name)
                {
                    u.recreated.push((**pod).clone());
                }
                self.ordinals[index] = Ordinal::Created(name);
                Ok(id.map_or(Synced::Nothing, Synced::Created))
            }
        }
    }
}

impl OrderedSet {
    /// The update step of a sync, once every replica exists (and, for OrderedReady, is
    /// Running and Ready) and no condemned pod is left (`updateStatefulSet`, or
    /// `updateStatefulSetAfterInvariantEstablished` under MaxUnavailableStatefulSet).
    fn roll(
        &mut self,
        snapshot: &mut Snapshot,
        delete: &mut dyn FnMut(&mut Snapshot, PodId),
    ) -> Synced {
        let Some(u) = self.update.as_ref() else {
            return Synced::Nothing;
        };
        let ns = self.namespace.clone();
        // Ordinals from the highest, down to the partition.
        let targets: Vec<usize> = (0..self.ordinals.len())
            .rev()
            .filter(|i| {
                super::scale::ordinal(self.ordinals[*i].name())
                    .is_some_and(|n| n.saturating_sub(u.start) >= u.partition)
            })
            .collect();
        let outdated = |o: &Ordinal| match o {
            Ordinal::Created(name) => {
                u.outdated.contains(name)
                    && snapshot
                        .pod_id(&ns, name)
                        .and_then(|id| snapshot.pod(id))
                        .is_some_and(|p| !p.terminating)
            }
            _ => false,
        };
        let ready = |o: &Ordinal| match o {
            Ordinal::Created(name) => snapshot
                .pod_id(&ns, name)
                .is_some_and(|id| Self::ready(snapshot, id)),
            Ordinal::Missing(_) | Ordinal::Refused(_) => false,
        };
        let mut doomed = Vec::new();
        match u.max_unavailable {
            None => {
                for &i in &targets {
                    let o = &self.ordinals[i];
                    if outdated(o) {
                        doomed.push(i);
                        break;
                    }
                    if !ready(o) {
                        break;
                    }
                }
            }
            Some(max) => {
                let unavailable = self.ordinals.iter().filter(|o| !ready(o)).count();
                let room = max.saturating_sub(unavailable);
                doomed.extend(
                    targets
                        .iter()
                        .copied()
                        .filter(|i| outdated(&self.ordinals[*i]))
                        .take(room),
                );
            }
        }
        let mut deleted = Vec::new();
        for i in doomed {
            let name = self.ordinals[i].name().to_string();
            let Some(id) = snapshot.pod_id(&ns, &name) else {
                continue;
            };
            let Some(u) = self.update.as_mut() else {
                break;
            };
            let Some((pod, claims)) = u.replacements.remove(&name) else {
                continue;
            };
            delete(snapshot, id);
            u.outdated.retain(|p| *p != name);
            u.replaced.push(name.clone());
            if !claims.is_empty() {
                self.claims.insert(name.clone(), claims);
            }
            self.ordinals[i] = Ordinal::Missing(pod);
            deleted.push(name);
        }
        if deleted.is_empty() {
            Synced::Nothing
        } else {
            Synced::Updated(deleted)
        }
    }

    /// Whether a rolling update has pods to replace or replaced some.
    pub fn updating(&self) -> bool {
        self.update
            .as_ref()
            .is_some_and(|u| !u.outdated.is_empty() || !u.replaced.is_empty())
    }

    /// Where its rolling update stands, as `kubectl rollout status` lets a user
    /// conclude: `rolling update to revision web-6b: replaced web-2, web-1; web-0 not
    /// replaced: StatefulSet web waits for web-1 to be Running and Ready`; `None`
    /// without one.
    pub fn update_status(&self, snapshot: &Snapshot) -> Option<String> {
        let u = self.update.as_ref().filter(|_| self.updating())?;
        let mut out = format!("rolling update to revision {}", u.revision);
        let (left, kept): (Vec<&String>, Vec<&String>) = u.outdated.iter().partition(|p| {
            super::scale::ordinal(p).is_some_and(|n| n.saturating_sub(u.start) >= u.partition)
        });
        let unready = self.first_unready(snapshot).map(|o| o.name().to_string());
        if left.is_empty() && unready.is_none() {
            out.push_str(" complete");
        }
        if !u.replaced.is_empty() {
            out.push_str(&format!(": replaced {}", u.replaced.join(", ")));
        }
        if !left.is_empty() {
            let names: Vec<&str> = left.iter().map(|p| p.as_str()).collect();
            let why = match &unready {
                Some(p) => format!(
                    "StatefulSet {} waits for {p} to be Running and Ready",
                    self.name
                ),
                None => format!("StatefulSet {} has not reached them", self.name),
            };
            out.push_str(&format!("; {} not replaced: {why}", names.join(", ")));
        } else if let Some(p) = &unready {
            out.push_str(&format!("; {p} is not Running and Ready"));
        }
        if !kept.is_empty() {
            let names: Vec<&str> = kept.iter().map(|p| p.as_str()).collect();
            out.push_str(&format!(
                "; {} kept at their revision by partition {}",
                names.join(", "),
                u.partition
            ));
        }
        Some(out)
    }
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
    use crate::workloads::{WorkloadFeatures, expand};
    use topospread::Features;
    use topospread::Scheduler;
    use topospread::Simulation;
    use topospread::config::SchedulerConfig;

    /// Runs the default scheduler over `pod` until it is bound or given up on; the
    /// simulation is returned for the pods that come next.
    fn schedule(snapshot: &mut Snapshot, pod: PodId) -> Simulation {
        let scheduler = Scheduler::new(&SchedulerConfig::default(), Features::default(), snapshot)
            .expect("scheduler");
        let mut sim = Simulation::new(scheduler);
        sim.enqueue(snapshot, pod).expect("queued");
        sim.run(snapshot, |_, _| {}).expect("runs");
        sim
    }

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
        let mut sim = schedule(&mut snapshot, first);
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

    /// A set at revision web-1a whose update revision is web-2b, its three pods bound.
    fn mid_update(strategy: &str, policy: &str) -> String {
        let mut text = format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n1, labels: {{kubernetes.io/hostname: n1}}}}\nstatus: {{allocatable: {{cpu: '4', memory: 8Gi, pods: '110'}}}}\n---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: web, uid: u1}}\nspec:\n  replicas: 3\n{policy}  updateStrategy: {strategy}\n  serviceName: web\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: c, image: i:2}}]}}\nstatus: {{replicas: 3, currentRevision: web-1a, updateRevision: web-2b}}\n"
        );
        for i in 0..3 {
            text.push_str(&format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web-{i}\n  labels: {{app: web, controller-revision-hash: web-1a}}\n  ownerReferences: [{{apiVersion: apps/v1, kind: StatefulSet, name: web, uid: u1, controller: true}}]\nspec:\n  containers: [{{name: c, image: i:1}}]\n  nodeName: n1\n"
            ));
        }
        text
    }

    #[test]
    fn a_rolling_update_replaces_the_highest_outdated_ordinal_first() {
        let m =
            parse_manifests(&mid_update("{type: RollingUpdate}", ""), "web.yaml").expect("parses");
        let mut e = expand(&m.objects, 0);
        assert!(e.notes.is_empty(), "{:?}", e.notes);
        let set = &mut e.ordered[0];
        assert!(set.updating());
        let mut snapshot = build::build(m.objects.iter()).expect("builds").snapshot;
        let mut remove = |s: &mut Snapshot, id: PodId| {
            s.remove_pod(id);
        };
        let synced = set.sync(&mut snapshot, &mut remove);
        assert!(
            matches!(&synced, Ok(Synced::Updated(p)) if p == &["web-2"]),
            "{synced:?}"
        );
        assert!(snapshot.pod_id("default", "web-2").is_none());
        let Ok(Synced::Created(id)) = set.sync(&mut snapshot, &mut remove) else {
            panic!("web-2 not recreated");
        };
        let pod = snapshot.pod(id).expect("web-2");
        let revision = snapshot.symbols().get(super::super::REVISION_LABEL);
        let value = revision.and_then(|k| pod.labels.get(k));
        assert_eq!(value.map(|v| snapshot.symbols().resolve(v)), Some("web-2b"));
        // web-2 is not bound yet: web-1 waits.
        assert!(matches!(
            set.sync(&mut snapshot, &mut remove),
            Ok(Synced::Nothing)
        ));
        assert_eq!(
            set.update_status(&snapshot).as_deref(),
            Some(
                "rolling update to revision web-2b: replaced web-2; web-0, web-1 not replaced: StatefulSet web waits for web-2 to be Running and Ready"
            )
        );
        schedule(&mut snapshot, id);
        let synced = set.sync(&mut snapshot, &mut remove);
        assert!(
            matches!(&synced, Ok(Synced::Updated(p)) if p == &["web-1"]),
            "{synced:?}"
        );
        assert_eq!(set.update.as_ref().map(|u| u.recreated.len()), Some(1));
    }

    #[test]
    fn partition_on_delete_and_max_unavailable_shape_the_update() {
        let outdated = |strategy: &str, policy: &str, features: WorkloadFeatures| {
            let m = parse_manifests(&mid_update(strategy, policy), "web.yaml").expect("parses");
            let e = crate::workloads::expand_with(
                &m.objects,
                crate::workloads::ExpandOptions {
                    seed: 0,
                    max_pods: 100,
                    scale: &[],
                    features,
                },
            )
            .map_err(|(e, _)| e)
            .expect("expands");
            let mut snapshot = build::build(m.objects.iter()).expect("builds").snapshot;
            let Some(mut set) = e.ordered.into_iter().next() else {
                return Vec::new();
            };
            match set.sync(&mut snapshot, &mut |s, id| {
                s.remove_pod(id);
            }) {
                Ok(Synced::Updated(p)) => p,
                other => panic!("{other:?}"),
            }
        };
        let newest = WorkloadFeatures::default();
        let mut legacy = newest;
        legacy.max_unavailable_statefulset = false;
        assert!(outdated("{type: OnDelete}", "", newest).is_empty());
        let partition = "{type: RollingUpdate, rollingUpdate: {partition: 2}}";
        assert_eq!(outdated(partition, "", newest), ["web-2"]);
        let burst = "{type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}";
        assert_eq!(outdated(burst, "", newest), ["web-2", "web-1"]);
        assert_eq!(
            outdated(burst, "  podManagementPolicy: Parallel\n", newest),
            ["web-2", "web-1"]
        );
        // While MaxUnavailableStatefulSet is off the field is dropped: one at a time.
        assert_eq!(outdated(burst, "", legacy), ["web-2"]);
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
