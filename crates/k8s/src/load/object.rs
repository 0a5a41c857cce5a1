//! The typed objects the loader gives ([`Object`]), and how they drop what nothing reads.

use super::{CompactPod, Unserved};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{
    LimitRange, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod,
    ReplicationController, ResourceQuota, Service,
};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

/// A typed Kubernetes object, boxed: a dump holds tens of thousands, and the types differ
/// in size by kilobytes.
#[derive(Clone, Debug)]
pub enum Object {
    /// A v1 Node.
    Node(Box<Node>),
    /// A v1 Pod.
    Pod(Box<Pod>),
    /// A v1 Service.
    Service(Box<Service>),
    /// An apps/v1 ReplicaSet.
    ReplicaSet(Box<ReplicaSet>),
    /// A v1 ReplicationController.
    ReplicationController(Box<ReplicationController>),
    /// An apps/v1 StatefulSet.
    StatefulSet(Box<StatefulSet>),
    /// An apps/v1 Deployment.
    Deployment(Box<Deployment>),
    /// An apps/v1 DaemonSet.
    DaemonSet(Box<DaemonSet>),
    /// A batch/v1 Job.
    Job(Box<Job>),
    /// A batch/v1 CronJob.
    CronJob(Box<CronJob>),
    /// A scheduling.k8s.io/v1 PriorityClass.
    PriorityClass(Box<PriorityClass>),
    /// A policy/v1 PodDisruptionBudget.
    PodDisruptionBudget(Box<PodDisruptionBudget>),
    /// A v1 Namespace (its labels, read by pod affinity's `namespaceSelector`).
    Namespace(Box<Namespace>),
    /// A v1 PersistentVolumeClaim (the volume plugins read it).
    PersistentVolumeClaim(Box<PersistentVolumeClaim>),
    /// A v1 PersistentVolume.
    PersistentVolume(Box<PersistentVolume>),
    /// A storage.k8s.io/v1 StorageClass.
    StorageClass(Box<StorageClass>),
    /// A storage.k8s.io/v1 CSINode (per-driver volume limits and topology keys).
    CsiNode(Box<CSINode>),
    /// A v1 LimitRange (the LimitRanger admission plugin's defaults and bounds).
    LimitRange(Box<LimitRange>),
    /// A node.k8s.io/v1 RuntimeClass (the RuntimeClass admission plugin's overhead and
    /// scheduling).
    RuntimeClass(Box<RuntimeClass>),
    /// A v1 ResourceQuota (the ResourceQuota admission plugin's limits on pods).
    ResourceQuota(Box<ResourceQuota>),
    /// A built-in kind in an apiVersion some supported release does not serve (a
    /// `policy/v1beta1` PodDisruptionBudget, a `resource.k8s.io/v1` ResourceClaim before
    /// 1.34): not read, refused by itself in such a release (see [`api_serving`](super::api_serving)).
    Unserved(Box<Unserved>),
    /// A `kubescheduler.config.k8s.io/v1` KubeSchedulerConfiguration, untyped here.
    SchedulerConfiguration(Value),
    /// A v1 Pod bound to a node, read in compact form (see [`Compactor`](super::Compactor)): it has no
    /// k8s-openapi object, so no [`Object::metadata`].
    CompactPod(Box<CompactPod>),
}

impl Object {
    /// Drops what nothing here reads and a dump is full of (`managedFields`, the API
    /// server's record of field ownership, which only the value-tree reader builds: the
    /// fast route skips it while typing), and gives back the room lists were read into:
    /// a one-container pod's lists otherwise hold room for four, kilobytes per pod.
    /// Used on every object the loader reads, and on a live cluster's listed objects.
    pub fn drop_unread(&mut self) {
        if let Some(meta) = self.metadata_mut() {
            meta.managed_fields = None;
            shrink(&mut meta.owner_references);
        }
        match self {
            Object::Pod(p) => {
                if let Some(spec) = p.spec.as_mut() {
                    shrink_pod_spec(spec);
                }
                if let Some(status) = p.status.as_mut() {
                    shrink(&mut status.conditions);
                    shrink(&mut status.container_statuses);
                    shrink(&mut status.init_container_statuses);
                    shrink(&mut status.host_ips);
                    shrink(&mut status.pod_ips);
                }
            }
            Object::Node(n) => {
                if let Some(status) = n.status.as_mut() {
                    shrink(&mut status.conditions);
                    shrink(&mut status.addresses);
                    shrink(&mut status.images);
                }
                if let Some(spec) = n.spec.as_mut() {
                    shrink(&mut spec.taints);
                }
            }
            _ => {}
        }
    }

    /// The object's metadata (`None` for a scheduler configuration, which has none).
    pub fn metadata(&self) -> Option<&ObjectMeta> {
        Some(match self {
            Object::Node(o) => &o.metadata,
            Object::Pod(o) => &o.metadata,
            Object::Service(o) => &o.metadata,
            Object::ReplicaSet(o) => &o.metadata,
            Object::ReplicationController(o) => &o.metadata,
            Object::StatefulSet(o) => &o.metadata,
            Object::Deployment(o) => &o.metadata,
            Object::DaemonSet(o) => &o.metadata,
            Object::Job(o) => &o.metadata,
            Object::CronJob(o) => &o.metadata,
            Object::PriorityClass(o) => &o.metadata,
            Object::PodDisruptionBudget(o) => &o.metadata,
            Object::Namespace(o) => &o.metadata,
            Object::PersistentVolumeClaim(o) => &o.metadata,
            Object::PersistentVolume(o) => &o.metadata,
            Object::StorageClass(o) => &o.metadata,
            Object::CsiNode(o) => &o.metadata,
            Object::LimitRange(o) => &o.metadata,
            Object::RuntimeClass(o) => &o.metadata,
            Object::ResourceQuota(o) => &o.metadata,
            Object::Unserved(o) => &o.metadata,
            Object::SchedulerConfiguration(_) | Object::CompactPod(_) => return None,
        })
    }

    /// The object's metadata, to change it (see [`Object::metadata`]).
    pub fn metadata_mut(&mut self) -> Option<&mut ObjectMeta> {
        Some(match self {
            Object::Node(o) => &mut o.metadata,
            Object::Pod(o) => &mut o.metadata,
            Object::Service(o) => &mut o.metadata,
            Object::ReplicaSet(o) => &mut o.metadata,
            Object::ReplicationController(o) => &mut o.metadata,
            Object::StatefulSet(o) => &mut o.metadata,
            Object::Deployment(o) => &mut o.metadata,
            Object::DaemonSet(o) => &mut o.metadata,
            Object::Job(o) => &mut o.metadata,
            Object::CronJob(o) => &mut o.metadata,
            Object::PriorityClass(o) => &mut o.metadata,
            Object::PodDisruptionBudget(o) => &mut o.metadata,
            Object::Namespace(o) => &mut o.metadata,
            Object::PersistentVolumeClaim(o) => &mut o.metadata,
            Object::PersistentVolume(o) => &mut o.metadata,
            Object::StorageClass(o) => &mut o.metadata,
            Object::CsiNode(o) => &mut o.metadata,
            Object::LimitRange(o) => &mut o.metadata,
            Object::RuntimeClass(o) => &mut o.metadata,
            Object::ResourceQuota(o) => &mut o.metadata,
            Object::Unserved(o) => &mut o.metadata,
            Object::SchedulerConfiguration(_) | Object::CompactPod(_) => return None,
        })
    }

    /// The object's kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Object::Node(_) => "Node",
            Object::Pod(_) | Object::CompactPod(_) => "Pod",
            Object::Service(_) => "Service",
            Object::ReplicaSet(_) => "ReplicaSet",
            Object::ReplicationController(_) => "ReplicationController",
            Object::StatefulSet(_) => "StatefulSet",
            Object::Deployment(_) => "Deployment",
            Object::DaemonSet(_) => "DaemonSet",
            Object::Job(_) => "Job",
            Object::CronJob(_) => "CronJob",
            Object::PriorityClass(_) => "PriorityClass",
            Object::PodDisruptionBudget(_) => "PodDisruptionBudget",
            Object::Namespace(_) => "Namespace",
            Object::PersistentVolumeClaim(_) => "PersistentVolumeClaim",
            Object::PersistentVolume(_) => "PersistentVolume",
            Object::StorageClass(_) => "StorageClass",
            Object::CsiNode(_) => "CSINode",
            Object::LimitRange(_) => "LimitRange",
            Object::RuntimeClass(_) => "RuntimeClass",
            Object::ResourceQuota(_) => "ResourceQuota",
            Object::Unserved(o) => o.kind,
            Object::SchedulerConfiguration(_) => "KubeSchedulerConfiguration",
        }
    }
}

fn shrink<T>(v: &mut Option<Vec<T>>) {
    if let Some(v) = v {
        v.shrink_to_fit();
    }
}

fn shrink_pod_spec(spec: &mut k8s_openapi::api::core::v1::PodSpec) {
    spec.containers.shrink_to_fit();
    for c in &mut spec.containers {
        shrink(&mut c.ports);
        shrink(&mut c.env);
        shrink(&mut c.volume_mounts);
    }
    shrink(&mut spec.init_containers);
    shrink(&mut spec.tolerations);
    shrink(&mut spec.volumes);
    shrink(&mut spec.topology_spread_constraints);
}
