//! The kinds of objects the scheduler watches, their watch events, and the keys and
//! fingerprints the cache stores them by.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, ReplicationController, Service,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use kube::runtime::watcher::Event;
use topospread::framework::EventResource;

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
    pub(super) fn event_resource(self) -> Option<EventResource> {
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
pub(super) fn key(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or(""),
        meta.name.as_deref().unwrap_or("")
    )
}

/// What of a pod the scheduler reads, hashed: a MODIFIED event that changes none of it
/// (a status the kubelet or this scheduler wrote) is skipped, as upstream's
/// `isPodUpdated` skips it, so a pod is not re-queued by its own condition patch.
pub(super) fn fingerprint(p: &Pod) -> u64 {
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
