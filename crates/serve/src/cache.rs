//! The live cache: watch events applied, one at a time, to the core's [`Snapshot`] and
//! [`Scheduler`] through their incremental handlers (`add_pod`, `update_pod`,
//! `delete_pod`, `add_node`, ...), as kube-scheduler's event handlers feed its cache
//! and queue. Nothing here rebuilds the world per event.
//!
//! A relist (the watcher's `Init` .. `InitDone`, after a 410 or at start) is applied as
//! it streams in; at `InitDone` whatever the cache holds of that kind and the list did
//! not name is removed, as an informer's replace does.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::Hasher;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, ReplicationController, Service,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use kube::runtime::watcher::Event;
use topospread::api::{DisruptionBudget, Labels, Selector};
use topospread::convert::{self, DEFAULT_NAMESPACE};
use topospread::framework::{ActionType, ClusterEvent, EventResource};
use topospread::snapshot::{CacheError, PodId, PodState, SnapshotError, WorkloadKind};
use topospread::{Scheduler, Snapshot};
use tracing::{debug, warn};

use crate::actions::PodRef;

/// The kinds of objects the scheduler watches.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Pods without Succeeded/Failed.
    Pod,
    /// Nodes.
    Node,
    /// Services (default spreading).
    Service,
    /// ReplicationControllers (default spreading).
    ReplicationController,
    /// ReplicaSets (default spreading).
    ReplicaSet,
    /// StatefulSets (default spreading).
    StatefulSet,
    /// PodDisruptionBudgets (preemption).
    PodDisruptionBudget,
    /// PriorityClasses (priority of pods the API server did not resolve).
    PriorityClass,
    /// Namespaces (their labels, read by pod affinity's `namespaceSelector`).
    Namespace,
    /// PersistentVolumeClaims (the volume plugins).
    PersistentVolumeClaim,
    /// PersistentVolumes (the volume plugins).
    PersistentVolume,
    /// StorageClasses (volume binding's delayed claims, their allowed topologies).
    StorageClass,
    /// CSINodes (per-driver volume limits and topology keys).
    CsiNode,
}

impl Kind {
    /// Every watched kind.
    pub const ALL: [Kind; 13] = [
        Kind::Pod,
        Kind::Node,
        Kind::Service,
        Kind::ReplicationController,
        Kind::ReplicaSet,
        Kind::StatefulSet,
        Kind::PodDisruptionBudget,
        Kind::PriorityClass,
        Kind::Namespace,
        Kind::PersistentVolumeClaim,
        Kind::PersistentVolume,
        Kind::StorageClass,
        Kind::CsiNode,
    ];

    /// The scheduler's name for this kind's objects, for the queue's event hints.
    fn event_resource(self) -> Option<EventResource> {
        Some(match self {
            Kind::PersistentVolumeClaim => EventResource::PersistentVolumeClaim,
            Kind::PersistentVolume => EventResource::PersistentVolume,
            Kind::StorageClass => EventResource::StorageClass,
            Kind::CsiNode => EventResource::CsiNode,
            _ => return None,
        })
    }
}

/// One watch event of one kind.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "each event is moved once from its watch into the bounded channel and applied; boxing would allocate per event for no saving"
)]
pub enum Update {
    /// A pod event.
    Pod(Event<Pod>),
    /// A node event.
    Node(Event<Node>),
    /// A Service event.
    Service(Event<Service>),
    /// A ReplicationController event.
    ReplicationController(Event<ReplicationController>),
    /// A ReplicaSet event.
    ReplicaSet(Event<ReplicaSet>),
    /// A StatefulSet event.
    StatefulSet(Event<StatefulSet>),
    /// A PodDisruptionBudget event.
    PodDisruptionBudget(Event<PodDisruptionBudget>),
    /// A PriorityClass event.
    PriorityClass(Event<PriorityClass>),
    /// A Namespace event.
    Namespace(Event<Namespace>),
    /// A PersistentVolumeClaim event.
    PersistentVolumeClaim(Event<PersistentVolumeClaim>),
    /// A PersistentVolume event.
    PersistentVolume(Event<PersistentVolume>),
    /// A StorageClass event.
    StorageClass(Event<StorageClass>),
    /// A CSINode event.
    CsiNode(Event<CSINode>),
}

/// `namespace/name` of an object's metadata.
fn key(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or(""),
        meta.name.as_deref().unwrap_or("")
    )
}

/// What of a pod the scheduler reads, hashed: a MODIFIED event that changes none of it
/// (a status the kubelet or this scheduler wrote) is skipped, as upstream's
/// `isPodUpdated` skips it, so a pod is not re-queued by its own condition patch.
fn fingerprint(p: &Pod) -> u64 {
    let status = p.status.as_ref();
    let disruption = status
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .filter(|c| c.type_ == "DisruptionTarget")
        .map(|c| (&c.status, &c.reason))
        .collect::<Vec<_>>();
    let relevant = (
        &p.metadata.labels,
        &p.metadata.owner_references,
        &p.metadata.deletion_timestamp,
        &p.spec,
        status.and_then(|s| s.start_time.as_ref()),
        status.and_then(|s| s.nominated_node_name.as_ref()),
        status.and_then(|s| s.phase.as_ref()),
        disruption,
    );
    let mut h = HashWriter(DefaultHasher::new());
    let _ = serde_json::to_writer(&mut h, &relevant);
    h.0.finish()
}

/// Feeds encoded bytes straight into a hasher (no string built per event).
struct HashWriter(DefaultHasher);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

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

    /// What `id`'s arrival took its node beyond: each of cpu, memory and the pod count
    /// (the resources every node lists) that it took from within its allocatable to
    /// above it. A node already over stays counted once, at the pod that crossed.
    fn over_allocatable(&self, id: PodId) -> Vec<String> {
        let (Some(node), Some(pod)) = (self.snapshot.pod_node(id), self.snapshot.pod(id)) else {
            return Vec::new();
        };
        let info = self.snapshot.node(node);
        let (requested, allocatable) = (info.requested(), &info.node.allocatable);
        let added = &pod.requests.requested;
        let crossed = |now: i64, by: i64, limit: i64| now > limit && now - by <= limit;
        let mut over = Vec::new();
        if crossed(requested.milli_cpu, added.milli_cpu, allocatable.milli_cpu) {
            over.push(format!(
                "cpu: {}m requested of {}m allocatable",
                requested.milli_cpu, allocatable.milli_cpu
            ));
        }
        if crossed(requested.memory, added.memory, allocatable.memory) {
            over.push(format!(
                "memory: {} requested of {} allocatable",
                requested.memory, allocatable.memory
            ));
        }
        let pods = i64::try_from(info.pods().len()).unwrap_or(i64::MAX);
        if crossed(pods, 1, allocatable.allowed_pod_number) {
            over.push(format!(
                "pods: {pods} bound of {} allocatable",
                allocatable.allowed_pod_number
            ));
        }
        over
    }

    /// Marks preemption victims whose deletion this replica is sending as terminating
    /// by preemption (see `preempting`). An assumed victim keeps its state; its next
    /// event carries the mark.
    pub fn mark_preempting(&mut self, victims: &[PodId]) {
        for &id in victims {
            let Some(p) = self.snapshot.pod(id) else {
                continue;
            };
            let uid = p.uid.to_string();
            if !p.terminating_by_preemption && self.snapshot.pod_state(id) == Some(PodState::Added)
            {
                let mut marked = p.clone();
                marked.terminating_by_preemption = true;
                let _ = self.snapshot.update_pod(&uid, marked);
            }
            self.preempting.insert(uid);
        }
    }

    /// A victim's deletion failed: it no longer counts as terminating.
    pub fn preemption_failed(&mut self, uid: &str) {
        if !self.preempting.remove(uid) {
            return;
        }
        if let Some(id) = self.snapshot.pod_by_uid(uid)
            && self.snapshot.pod_state(id) == Some(PodState::Added)
            && let Some(p) = self.snapshot.pod(id)
        {
            let mut unmarked = p.clone();
            unmarked.terminating_by_preemption = false;
            let _ = self.snapshot.update_pod(uid, unmarked);
        }
    }

    /// Pending pods (all, or the one with `only` as UID) whose `status.nominatedNodeName`
    /// names a node the synced cache does not hold, each reported once: the caller
    /// clears the field, so no pod stays nominated to a node that no longer exists.
    pub fn stale_nominations(&mut self, only: Option<&str>) -> Vec<PodRef> {
        if !self.synced() {
            return Vec::new();
        }
        let s = &self.snapshot;
        let ids: Vec<PodId> = match only {
            Some(uid) => s.pod_by_uid(uid).into_iter().collect(),
            None => s.pods().map(|(id, _)| id).collect(),
        };
        let mut out = Vec::new();
        for id in ids {
            let Some(p) = s.pod(id) else { continue };
            let stale = s.pod_node(id).is_none()
                && p.nominated_node_name
                    .as_deref()
                    .is_some_and(|n| s.node_id(n).is_none());
            if stale && self.stale_reported.insert(p.uid.to_string()) {
                out.push(PodRef {
                    namespace: s.symbols().resolve(p.namespace).to_string(),
                    name: p.name.to_string(),
                    uid: p.uid.to_string(),
                });
            }
        }
        out
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

    /// After a relist: removes what the cache holds of `kind` that the list did not name.
    fn remove_unlisted(&mut self, kind: Kind, seen: &HashSet<String>, now: Duration) {
        let s = &mut self.snapshot;
        let ns_key = |s: &Snapshot, ns, name: &str| format!("{}/{name}", s.symbols().resolve(ns));
        match kind {
            Kind::Pod => {
                let gone: Vec<_> = s
                    .pods()
                    .filter(|(_, p)| !seen.contains(&*p.uid))
                    .map(|(id, p)| (id, p.uid.to_string()))
                    .collect();
                for (id, uid) in gone {
                    debug!(uid, "pod vanished during a relist");
                    self.scheduler.delete_pod(&mut self.snapshot, id, now);
                    self.fingerprints.remove(&uid);
                }
                for parked in self.parked.values_mut() {
                    parked.retain(|uid, _| seen.contains(uid));
                }
                self.parked.retain(|_, p| !p.is_empty());
            }
            Kind::Node => {
                let gone: Vec<String> = s
                    .nodes()
                    .iter()
                    .map(|n| n.node.name.to_string())
                    .filter(|n| !seen.contains(&format!("/{n}")))
                    .collect();
                for name in gone {
                    let _ = self.scheduler.remove_node(&mut self.snapshot, &name, now);
                }
            }
            Kind::Service | Kind::ReplicationController | Kind::ReplicaSet | Kind::StatefulSet => {
                let w = s.workloads();
                let (wk, names): (WorkloadKind, Vec<_>) = match kind {
                    Kind::Service => (
                        WorkloadKind::Service,
                        w.services
                            .iter()
                            .map(|(ns, n, _)| (*ns, n.clone()))
                            .collect(),
                    ),
                    Kind::ReplicationController => (
                        WorkloadKind::ReplicationController,
                        w.replication_controllers
                            .iter()
                            .map(|(ns, n, _)| (*ns, n.clone()))
                            .collect(),
                    ),
                    Kind::ReplicaSet => (
                        WorkloadKind::ReplicaSet,
                        w.replica_sets
                            .iter()
                            .map(|(ns, n, _)| (*ns, n.clone()))
                            .collect(),
                    ),
                    _ => (
                        WorkloadKind::StatefulSet,
                        w.stateful_sets
                            .iter()
                            .map(|(ns, n, _)| (*ns, n.clone()))
                            .collect(),
                    ),
                };
                for (ns, name) in names {
                    if !seen.contains(&ns_key(s, ns, &name)) {
                        let _ = s.remove_workload(wk, ns, &name);
                    }
                }
            }
            Kind::PodDisruptionBudget => {
                let gone: Vec<_> = s
                    .workloads()
                    .disruption_budgets
                    .iter()
                    .filter(|b| !seen.contains(&ns_key(s, b.namespace, &b.name)))
                    .map(|b| (b.namespace, b.name.clone()))
                    .collect();
                for (ns, name) in gone {
                    s.workloads_mut().disruption_budgets.remove(ns, &name);
                }
            }
            Kind::PriorityClass => {
                let gone: Vec<_> = s
                    .workloads()
                    .priority_classes
                    .iter()
                    .filter(|c| !seen.contains(&format!("/{}", c.name)))
                    .map(|c| c.name.clone())
                    .collect();
                for name in gone {
                    s.workloads_mut().priority_classes.remove(&name);
                }
            }
            Kind::PersistentVolumeClaim
            | Kind::PersistentVolume
            | Kind::StorageClass
            | Kind::CsiNode => {
                let gone: Vec<String> = self
                    .storage
                    .get(&kind)
                    .into_iter()
                    .flatten()
                    .filter(|k| !seen.contains(*k))
                    .cloned()
                    .collect();
                for k in gone {
                    self.delete_storage(kind, &k, now);
                }
            }
            Kind::Namespace => {
                let gone: Vec<_> = s
                    .namespaces()
                    .map(|(ns, _)| ns)
                    .filter(|ns| !seen.contains(&format!("/{}", s.symbols().resolve(*ns))))
                    .collect();
                for ns in gone {
                    self.forget_namespace(ns);
                }
            }
        }
    }

    /// A pod was added or changed.
    fn apply_pod(&mut self, p: &Pod, now: Duration) {
        let Some(uid) = p.metadata.uid.as_deref().filter(|u| !u.is_empty()) else {
            warn!(
                pod = key(&p.metadata),
                "skipping a pod without metadata.uid"
            );
            return;
        };
        let existing = self.snapshot.pod_by_uid(uid);
        let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
        if matches!(phase, Some("Succeeded" | "Failed")) {
            self.forget_uid(uid, now);
            return;
        }
        let fp = fingerprint(p);
        if existing.is_some() && self.fingerprints.get(uid) == Some(&fp) {
            return;
        }
        let spec = p.spec.as_ref();
        let node_name = spec
            .and_then(|s| s.node_name.as_deref())
            .filter(|n| !n.is_empty());
        if node_name.is_none() {
            let scheduler = spec
                .and_then(|s| s.scheduler_name.as_deref())
                .unwrap_or("default-scheduler");
            let ours = self.scheduler.profile_index(scheduler).is_some();
            if !ours || p.metadata.deletion_timestamp.is_some() {
                // Not ours to schedule, or being deleted (`skipPodSchedule`): a pending
                // copy is dropped; an assumed one waits for its deletion event.
                if let Some(id) = existing
                    && self.snapshot.pod_state(id) == Some(PodState::Pending)
                {
                    self.scheduler.delete_pod(&mut self.snapshot, id, now);
                    self.fingerprints.remove(uid);
                }
                return;
            }
        }
        let mut object = p.clone();
        if object.spec.as_ref().is_some_and(|s| s.priority.is_none()) {
            // A real API server resolved it at admission; resolve it the same way when
            // it did not (the fake, or a pod created before its class).
            let _ = topospread::admission::resolve_priority(
                &mut object,
                &self.snapshot.workloads().priority_classes,
            );
        }
        let options = self.snapshot.request_options();
        let mut pod = match convert::pod_with(&object, self.snapshot.symbols_mut(), options) {
            Ok(pod) => pod,
            Err(e) => {
                warn!(pod = key(&p.metadata), error = %e, "skipping a pod that does not convert");
                return;
            }
        };
        if self.preempting.contains(uid) {
            pod.terminating_by_preemption = true;
        }
        if pod.nominated_node_name.is_none() {
            self.stale_reported.remove(uid);
        }
        let result = match existing {
            Some(id) => match self.scheduler.update_pod(&mut self.snapshot, pod, now) {
                Ok(_) => Ok(()),
                Err(CacheError::PodNodeNotFound { node, .. }) => {
                    self.scheduler.delete_pod(&mut self.snapshot, id, now);
                    self.fingerprints.remove(uid);
                    self.park(node, uid, p);
                    return;
                }
                Err(e) => Err(e.to_string()),
            },
            None => match self.scheduler.add_pod(&mut self.snapshot, pod, now) {
                Ok(Ok(id)) => {
                    // New to the cache and bound: this replica did not place it (its own
                    // binds are assumed first).
                    if node_name.is_some() {
                        self.note_overcommit(id, p);
                    }
                    Ok(())
                }
                Ok(Err(e)) => Err(e.to_string()),
                Err(SnapshotError::UnknownNode { node, .. }) => {
                    self.park(node, uid, p);
                    return;
                }
                Err(e) => Err(e.to_string()),
            },
        };
        match result {
            Ok(()) => {
                self.fingerprints.insert(uid.to_string(), fp);
            }
            Err(e) => {
                // In the cache if it got that far; remember it so the same object is not
                // retried on every resync.
                if self.snapshot.pod_by_uid(uid).is_some() {
                    self.fingerprints.insert(uid.to_string(), fp);
                }
                warn!(pod = key(&p.metadata), error = %e, "pod event not applied");
            }
        }
    }

    /// Records and logs it when `id` (bound by someone else) left its node overcommitted.
    fn note_overcommit(&mut self, id: PodId, p: &Pod) {
        let over = self.over_allocatable(id);
        if over.is_empty() {
            return;
        }
        let node = p
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        let pod = key(&p.metadata);
        warn!(
            node = %node,
            pod = %pod,
            over = %over.join("; "),
            "a pod bound by another scheduler left the node requesting more than its allocatable: two schedulers raced for the same room, and the kubelet will reject a pod"
        );
        self.overcommits.push(Overcommit { node, pod, over });
    }

    /// Keeps a bound pod until its node arrives.
    fn park(&mut self, node: String, uid: &str, p: &Pod) {
        debug!(pod = key(&p.metadata), node, "pod waits for its node");
        self.unpark(uid);
        self.parked
            .entry(node)
            .or_default()
            .insert(uid.to_string(), p.clone());
    }

    /// Drops a parked pod, wherever it is parked.
    fn unpark(&mut self, uid: &str) {
        self.parked.retain(|_, pods| {
            pods.remove(uid);
            !pods.is_empty()
        });
    }

    /// Removes a pod from the cache and the queue (and its nomination: a preemptor
    /// deleted while its victims go frees the room it was promised).
    fn forget_uid(&mut self, uid: &str, now: Duration) {
        if let Some(id) = self.snapshot.pod_by_uid(uid) {
            if let Some(node) = self.scheduler.nominated_node(id) {
                debug!(
                    uid,
                    node = %self.snapshot.node(node).node.name,
                    "a nominated pod is gone; its nomination is dropped"
                );
            }
            self.scheduler.delete_pod(&mut self.snapshot, id, now);
        }
        self.fingerprints.remove(uid);
        self.preempting.remove(uid);
        self.stale_reported.remove(uid);
        self.unpark(uid);
    }

    fn delete_pod(&mut self, p: &Pod, now: Duration) {
        if let Some(uid) = p.metadata.uid.as_deref() {
            self.forget_uid(uid, now);
        }
    }

    fn apply_node(&mut self, n: &Node, now: Duration) {
        let node = match convert::node(n, self.snapshot.symbols_mut()) {
            Ok(node) => node,
            Err(e) => {
                warn!(node = n.metadata.name.as_deref().unwrap_or(""), error = %e, "skipping a node that does not convert");
                return;
            }
        };
        let name = node.name.to_string();
        let result = if self.snapshot.node_id(&name).is_some() {
            self.scheduler
                .update_node(&mut self.snapshot, node, now)
                .map(|_| ())
                .map_err(|e| e.to_string())
        } else {
            self.scheduler
                .add_node(&mut self.snapshot, node, now)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        if let Err(e) = result {
            warn!(node = name, error = %e, "node event not applied");
            return;
        }
        if let Some(pods) = self.parked.remove(&name) {
            for p in pods.values() {
                self.apply_pod(p, now);
            }
        }
    }

    fn delete_node(&mut self, n: &Node, now: Duration) {
        if let Some(name) = n.metadata.name.as_deref()
            && self.snapshot.node_id(name).is_some()
        {
            let _ = self.scheduler.remove_node(&mut self.snapshot, name, now);
        }
    }

    fn namespace(
        &mut self,
        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    ) -> topospread::api::Sym {
        self.snapshot
            .symbols_mut()
            .intern(meta.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE))
    }

    fn apply_service(&mut self, o: &Service, _: Duration) {
        let ns = self.namespace(&o.metadata);
        let sel = o
            .spec
            .as_ref()
            .and_then(|s| s.selector.as_ref())
            .map(|m| Labels::from_map(Some(m), self.snapshot.symbols_mut()));
        let name = o.metadata.name.as_deref().unwrap_or("");
        self.snapshot.set_service(ns, name, sel);
    }

    fn apply_rc(&mut self, o: &ReplicationController, _: Duration) {
        let ns = self.namespace(&o.metadata);
        let sel = o
            .spec
            .as_ref()
            .and_then(|s| s.selector.as_ref())
            .map(|m| Labels::from_map(Some(m), self.snapshot.symbols_mut()));
        let name = o.metadata.name.as_deref().unwrap_or("");
        self.snapshot.set_replication_controller(ns, name, sel);
    }

    fn apply_rs(&mut self, o: &ReplicaSet, _: Duration) {
        let ns = self.namespace(&o.metadata);
        let sel =
            Selector::from_label_selector(Some(&o.spec.selector), self.snapshot.symbols_mut()).ok();
        let name = o.metadata.name.as_deref().unwrap_or("");
        self.snapshot.set_replica_set(ns, name, sel);
    }

    fn apply_sts(&mut self, o: &StatefulSet, _: Duration) {
        let ns = self.namespace(&o.metadata);
        let sel =
            Selector::from_label_selector(Some(&o.spec.selector), self.snapshot.symbols_mut()).ok();
        let name = o.metadata.name.as_deref().unwrap_or("");
        self.snapshot.set_stateful_set(ns, name, sel);
    }

    fn delete_workload(
        &mut self,
        kind: WorkloadKind,
        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    ) {
        let ns = self.namespace(meta);
        let _ = self
            .snapshot
            .remove_workload(kind, ns, meta.name.as_deref().unwrap_or(""));
    }

    fn apply_pdb(&mut self, o: &PodDisruptionBudget, _: Duration) {
        let ns = self.namespace(&o.metadata);
        let budget = DisruptionBudget::from_k8s(o, ns, self.snapshot.symbols_mut());
        self.snapshot.workloads_mut().disruption_budgets.add(budget);
    }

    fn delete_pdb(&mut self, o: &PodDisruptionBudget, _: Duration) {
        let ns = self.namespace(&o.metadata);
        self.snapshot
            .workloads_mut()
            .disruption_budgets
            .remove(ns, o.metadata.name.as_deref().unwrap_or(""));
    }

    fn apply_priority_class(&mut self, o: &PriorityClass, _: Duration) {
        self.snapshot
            .workloads_mut()
            .priority_classes
            .add(topospread::api::PriorityClass::from_k8s(o));
    }

    /// A namespace was added or its labels changed: pod affinity's `namespaceSelector`
    /// reads them.
    fn apply_namespace(&mut self, o: &Namespace, _: Duration) {
        let Some(name) = o.metadata.name.as_deref().filter(|n| !n.is_empty()) else {
            warn!("skipping a namespace without metadata.name");
            return;
        };
        let ns = self.snapshot.symbols_mut().intern(name);
        let labels = Labels::from_map(o.metadata.labels.as_ref(), self.snapshot.symbols_mut());
        self.snapshot.set_namespace(ns, &labels);
    }

    fn delete_namespace(&mut self, o: &Namespace, _: Duration) {
        if let Some(name) = o.metadata.name.as_deref() {
            let ns = self.snapshot.symbols_mut().intern(name);
            self.forget_namespace(ns);
        }
    }

    /// Drops a namespace's labels. One that still holds cached pods keeps only its
    /// `kubernetes.io/metadata.name` label (the API server deletes a namespace's pods
    /// before the namespace itself).
    fn forget_namespace(&mut self, ns: topospread::api::Sym) {
        let _ = self.snapshot.remove_namespace(ns);
        if self.snapshot.pods().any(|(_, p)| p.namespace == ns) {
            self.snapshot.set_namespace(ns, &Labels::default());
        }
    }
    /// A claim was added or changed (the API server already gave it its default class).
    fn apply_claim(&mut self, o: &PersistentVolumeClaim, now: Duration) {
        match convert::persistent_volume_claim(o, self.snapshot.symbols_mut()) {
            Ok(c) => {
                self.snapshot.set_persistent_volume_claim(c);
                self.stored(Kind::PersistentVolumeClaim, key(&o.metadata), now);
            }
            Err(e) => {
                warn!(claim = key(&o.metadata), error = %e, "skipping a claim that does not convert")
            }
        }
    }

    /// A PersistentVolume was added or changed.
    fn apply_volume(&mut self, o: &PersistentVolume, now: Duration) {
        match convert::persistent_volume(o, self.snapshot.symbols_mut()) {
            Ok(v) => {
                self.snapshot.set_persistent_volume(v);
                self.stored(Kind::PersistentVolume, key(&o.metadata), now);
            }
            Err(e) => {
                warn!(volume = key(&o.metadata), error = %e, "skipping a volume that does not convert")
            }
        }
    }

    /// A StorageClass was added or changed.
    fn apply_storage_class(&mut self, o: &StorageClass, now: Duration) {
        match convert::storage_class(o, self.snapshot.symbols_mut()) {
            Ok(c) => {
                self.snapshot.set_storage_class(c);
                self.stored(Kind::StorageClass, key(&o.metadata), now);
            }
            Err(e) => {
                warn!(class = key(&o.metadata), error = %e, "skipping a StorageClass that does not convert")
            }
        }
    }

    /// A CSINode was added or changed.
    fn apply_csi_node(&mut self, o: &CSINode, now: Duration) {
        match convert::csi_node(o, self.snapshot.symbols_mut()) {
            Ok(n) => {
                self.snapshot.set_csi_node(n);
                self.stored(Kind::CsiNode, key(&o.metadata), now);
            }
            Err(e) => {
                warn!(csinode = key(&o.metadata), error = %e, "skipping a CSINode that does not convert")
            }
        }
    }

    /// Records a storage object as cached and tells the queue, so pods that waited for
    /// a claim, a volume or a class are retried (upstream's VolumeBinding hints).
    fn stored(&mut self, kind: Kind, k: String, now: Duration) {
        let added = self.storage.entry(kind).or_default().insert(k);
        let action = if added {
            ActionType::ADD
        } else {
            ActionType::UPDATE
        };
        self.storage_event(kind, action, now);
    }

    /// Removes the storage object `namespace/name` of `kind` from the cache.
    fn delete_storage(&mut self, kind: Kind, k: &str, now: Duration) {
        if let Some(keys) = self.storage.get_mut(&kind) {
            keys.remove(k);
        }
        let (namespace, name) = k.split_once('/').unwrap_or(("", k));
        match kind {
            Kind::PersistentVolumeClaim => {
                let ns = self.snapshot.symbols_mut().intern(namespace);
                self.snapshot.remove_persistent_volume_claim(ns, name);
            }
            Kind::PersistentVolume => {
                self.snapshot.remove_persistent_volume(name);
            }
            Kind::StorageClass => {
                self.snapshot.remove_storage_class(name);
            }
            Kind::CsiNode => {
                self.snapshot.remove_csi_node(name);
            }
            _ => return,
        }
        self.storage_event(kind, ActionType::DELETE, now);
    }

    fn storage_event(&mut self, kind: Kind, action: ActionType, now: Duration) {
        if let Some(resource) = kind.event_resource() {
            self.scheduler
                .on_event(&ClusterEvent::new(resource, action), now);
        }
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
