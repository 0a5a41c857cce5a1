//! The live cache: watch events applied, one at a time, to the core's [`Snapshot`] and
//! [`Scheduler`] through their incremental handlers (`add_pod`, `update_pod`,
//! `delete_pod`, `add_node`, ...), as kube-scheduler's event handlers feed its cache
//! and queue. Nothing here rebuilds the world per event.
//!
//! A relist (the watcher's `Init` .. `InitDone`, after a 410 or at start) is applied as
//! it streams in; at `InitDone` whatever the cache holds of that kind and the list did
//! not name is removed, as an informer's replace does.
//!
//! The rooms: the watched kinds and their events ([`Kind`], [`Update`]), pods (bound,
//! parked until their node, preempting, nominated), the other objects, and the relist's
//! removal of what a list no longer names.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::runtime::watcher::Event;
use topospread::snapshot::WorkloadKind;
use topospread::{Scheduler, Snapshot};
use tracing::debug;

mod kinds;
mod objects;
mod pods;
mod relist;

use kinds::key;
pub use kinds::{Kind, Update};

/// The live cache: the snapshot and the scheduler (queue included), fed by watch events.
pub struct LiveCache {
    /// The core's cache.
    pub snapshot: Snapshot,
    /// The core's scheduler: profiles, queue, nominator.
    pub scheduler: Scheduler,
    /// What each cached pod's object looked like (see [`fingerprint`]), by UID.
    fingerprints: HashMap<String, u64>,
    /// Bound pods whose node the cache does not know yet (the pod's event came before
    /// the node's), by node name then UID; added when the node arrives.
    parked: HashMap<String, HashMap<String, Pod>>,
    /// Kinds being relisted, with the keys listed so far.
    relisting: HashMap<Kind, HashSet<String>>,
    /// Kinds whose first list completed.
    listed: HashSet<Kind>,
    /// Preemption victims this replica is deleting, by UID: counted as terminating by
    /// preemption (as upstream sees a victim whose graceful deletion has started) until
    /// their deletion arrives, so their preemptor waits for them instead of preempting
    /// again elsewhere.
    preempting: HashSet<String>,
    /// Pending pods whose `status.nominatedNodeName` names a node that no longer exists,
    /// already reported by [`LiveCache::stale_nominations`] (reported once each).
    stale_reported: HashSet<String>,
    /// The keys (`namespace/name`) of the storage objects cached, by kind: what a relist
    /// that no longer names them removes.
    storage: HashMap<Kind, HashSet<String>>,
    /// Bound pods that arrived placed by someone else and left their node requesting
    /// more than it has, since the last [`LiveCache::take_overcommits`].
    overcommits: Vec<Overcommit>,
}

/// A node that a bound pod placed by someone else (another scheduler, or a pod written
/// with `nodeName`) left requesting more than its allocatable: two schedulers raced for
/// the same room, and the kubelet will reject a pod (`OutOfcpu`, `OutOfpods`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overcommit {
    /// The node.
    pub node: String,
    /// The pod whose arrival overcommitted it (`namespace/name`).
    pub pod: String,
    /// Each resource over, as `cpu: 1100m requested of 1000m allocatable`.
    pub over: Vec<String>,
}

impl std::fmt::Debug for LiveCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveCache")
            .field("pods", &self.snapshot.pods().count())
            .field("nodes", &self.snapshot.nodes().len())
            .field("parked", &self.parked.len())
            .finish_non_exhaustive()
    }
}

impl LiveCache {
    /// An empty cache around `scheduler` and the `snapshot` it was built with. The
    /// storage objects are watched, so the snapshot tracks them: a claim the cache does
    /// not hold is missing, as in kube-scheduler's listers.
    pub fn new(mut snapshot: Snapshot, scheduler: Scheduler) -> Self {
        snapshot.set_volumes_tracked(true);
        Self {
            snapshot,
            scheduler,
            fingerprints: HashMap::new(),
            parked: HashMap::new(),
            relisting: HashMap::new(),
            listed: HashSet::new(),
            preempting: HashSet::new(),
            stale_reported: HashSet::new(),
            storage: HashMap::new(),
            overcommits: Vec::new(),
        }
    }

    /// The overcommits seen since the last call (see [`Overcommit`]).
    pub fn take_overcommits(&mut self) -> Vec<Overcommit> {
        std::mem::take(&mut self.overcommits)
    }

    /// Whether every watched kind finished its first list (readiness).
    pub fn synced(&self) -> bool {
        Kind::ALL.iter().all(|k| self.listed.contains(k))
    }

    /// Pods waiting for their node to appear.
    pub fn parked_pods(&self) -> usize {
        self.parked.values().map(HashMap::len).sum()
    }

    /// Applies one watch event.
    pub fn apply(&mut self, update: Update, now: Duration) {
        match update {
            Update::Pod(e) => self.event(Kind::Pod, e, now, Self::apply_pod, Self::delete_pod),
            Update::Node(e) => self.event(Kind::Node, e, now, Self::apply_node, Self::delete_node),
            Update::Service(e) => {
                self.event(Kind::Service, e, now, Self::apply_service, |c, s, _| {
                    c.delete_workload(WorkloadKind::Service, &s.metadata)
                })
            }
            Update::ReplicationController(e) => self.event(
                Kind::ReplicationController,
                e,
                now,
                Self::apply_rc,
                |c, o, _| c.delete_workload(WorkloadKind::ReplicationController, &o.metadata),
            ),
            Update::ReplicaSet(e) => {
                self.event(Kind::ReplicaSet, e, now, Self::apply_rs, |c, o, _| {
                    c.delete_workload(WorkloadKind::ReplicaSet, &o.metadata)
                })
            }
            Update::StatefulSet(e) => {
                self.event(Kind::StatefulSet, e, now, Self::apply_sts, |c, o, _| {
                    c.delete_workload(WorkloadKind::StatefulSet, &o.metadata)
                })
            }
            Update::PodDisruptionBudget(e) => self.event(
                Kind::PodDisruptionBudget,
                e,
                now,
                Self::apply_pdb,
                Self::delete_pdb,
            ),
            Update::PriorityClass(e) => self.event(
                Kind::PriorityClass,
                e,
                now,
                Self::apply_priority_class,
                |c, o, _| {
                    let name = o.metadata.name.as_deref().unwrap_or("");
                    c.snapshot.workloads_mut().priority_classes.remove(name);
                },
            ),
            Update::Namespace(e) => self.event(
                Kind::Namespace,
                e,
                now,
                Self::apply_namespace,
                Self::delete_namespace,
            ),
            Update::PersistentVolumeClaim(e) => self.event(
                Kind::PersistentVolumeClaim,
                e,
                now,
                Self::apply_claim,
                |c, o, now| c.delete_storage(Kind::PersistentVolumeClaim, &key(&o.metadata), now),
            ),
            Update::PersistentVolume(e) => self.event(
                Kind::PersistentVolume,
                e,
                now,
                Self::apply_volume,
                |c, o, now| c.delete_storage(Kind::PersistentVolume, &key(&o.metadata), now),
            ),
            Update::StorageClass(e) => self.event(
                Kind::StorageClass,
                e,
                now,
                Self::apply_storage_class,
                |c, o, now| c.delete_storage(Kind::StorageClass, &key(&o.metadata), now),
            ),
            Update::CsiNode(e) => {
                self.event(Kind::CsiNode, e, now, Self::apply_csi_node, |c, o, now| {
                    c.delete_storage(Kind::CsiNode, &key(&o.metadata), now)
                })
            }
        }
    }

    /// The common shape of every kind's events, relists included.
    fn event<K: kube::Resource>(
        &mut self,
        kind: Kind,
        event: Event<K>,
        now: Duration,
        apply: fn(&mut Self, &K, Duration),
        delete: fn(&mut Self, &K, Duration),
    ) {
        match event {
            Event::Apply(o) => apply(self, &o, now),
            Event::Delete(o) => delete(self, &o, now),
            Event::Init => {
                self.relisting.insert(kind, HashSet::new());
            }
            Event::InitApply(o) => {
                let k = if kind == Kind::Pod {
                    o.meta().uid.clone().unwrap_or_default()
                } else {
                    key(o.meta())
                };
                self.relisting.entry(kind).or_default().insert(k);
                apply(self, &o, now);
            }
            Event::InitDone => {
                let seen = self.relisting.remove(&kind).unwrap_or_default();
                self.remove_unlisted(kind, &seen, now);
                if self.listed.insert(kind) {
                    debug!(?kind, objects = seen.len(), "initial list done");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
