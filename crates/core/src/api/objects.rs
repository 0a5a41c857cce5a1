use super::resources::{HostPort, PodResourceRequests, Resources};
use super::{
    DisruptionBudgets, Labels, PodAffinity, PreferredNodeAffinity, PriorityClasses,
    RequiredNodeAffinity, Selector, SpreadConstraintSpec, Sym, Taint, Toleration,
};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The kind of a pod's controller, as the default-spreading selector needs it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ControllerKind {
    /// `v1` ReplicationController.
    ReplicationController,
    /// `apps/v1` ReplicaSet.
    ReplicaSet,
    /// `apps/v1` StatefulSet.
    StatefulSet,
    /// `apps/v1` DaemonSet: its pods belong to their node and leave with it.
    DaemonSet,
    /// Any other controller (Job, a CRD...).
    Other,
}

/// A pod's controlling owner reference.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ControllerRef {
    /// The controller's kind (by exact apiVersion and kind, as upstream compares GVKs).
    pub kind: ControllerKind,
    /// The controller's name, in the pod's namespace.
    pub name: Box<str>,
}

/// A pod, in the compact form the scheduler works on.
#[derive(Clone, Debug)]
pub struct Pod {
    /// `metadata.uid`, or `namespace/name` when the manifest leaves it out: the key the
    /// snapshot's cache operations find the pod by.
    pub uid: Box<str>,
    /// `metadata.name`.
    pub name: Box<str>,
    /// `metadata.namespace` (`default` when left out).
    pub namespace: Sym,
    /// `metadata.labels`.
    pub labels: Labels,
    /// `spec.nodeName`, as written.
    pub node_name: Option<Box<str>>,
    /// `metadata.deletionTimestamp` is set: the pod is terminating and not counted.
    pub terminating: bool,
    /// `spec.priority` (0 when left out).
    pub priority: i32,
    /// `spec.preemptionPolicy` is `Never`: the pod may not preempt others.
    pub preemption_never: bool,
    /// `status.startTime` in nanoseconds since the Unix epoch; `None` for a pod that has
    /// not started (upstream's `GetPodStartTime` then takes "now": later than any start).
    pub start_time: Option<i128>,
    /// `status.nominatedNodeName`: the node an earlier preemption nominated.
    pub nominated_node_name: Option<Box<str>>,
    /// Terminating because the scheduler preempted it: `metadata.deletionTimestamp` set
    /// and a `DisruptionTarget` condition that is `True` with reason
    /// `PreemptionByScheduler` (`podTerminatingByPreemption`).
    pub terminating_by_preemption: bool,
    /// `spec.schedulerName` (`default-scheduler` when left out).
    pub scheduler_name: Box<str>,
    /// The controlling owner, if any.
    pub controller: Option<ControllerRef>,
    /// `spec.nodeSelector` and required node affinity.
    pub required_node_affinity: Arc<RequiredNodeAffinity>,
    /// `spec.tolerations`.
    pub tolerations: Arc<[Toleration]>,
    /// `spec.topologySpreadConstraints`.
    pub spread_constraints: Arc<[SpreadConstraintSpec]>,
    /// Node names required node affinity pins the pod to (`matchFields` on
    /// `metadata.name`), for NodeAffinity's `PreFilterResult`; `None` = unrestricted.
    pub required_node_names: Option<BTreeSet<Box<str>>>,
    /// `preferredDuringSchedulingIgnoredDuringExecution` of node affinity, when set.
    pub preferred_node_affinity: Option<Arc<PreferredNodeAffinity>>,
    /// Inter-pod affinity and anti-affinity.
    pub affinity: Arc<PodAffinity>,
    /// Resource requests (`PodRequests`, non-zero requests).
    pub requests: PodResourceRequests,
    /// Host ports the containers bind.
    pub host_ports: Vec<HostPort>,
    /// Container images, init containers first, normalized once as ImageLocality
    /// compares them (`:latest` added to an untagged name).
    pub images: Arc<[Box<str>]>,
    /// How many of `images` are init containers' (ImageLocality counts them from 1.30).
    pub init_images: usize,
    /// `spec.schedulingGates` names: while any remains, the pod is not scheduled.
    pub scheduling_gates: Vec<Box<str>>,
    /// The volumes the volume plugins read (claims, ephemeral claims, in-tree disks).
    pub volumes: Vec<super::PodVolume>,
}

/// A node, in the compact form the scheduler works on.
#[derive(Clone, Debug)]
pub struct Node {
    /// `metadata.name`.
    pub name: Box<str>,
    /// `metadata.labels`.
    pub labels: Labels,
    /// `spec.taints`.
    pub taints: Vec<Taint>,
    /// `spec.unschedulable`.
    pub unschedulable: bool,
    /// `status.allocatable`.
    pub allocatable: Resources,
    /// `status.images`: each image's names and size in bytes.
    pub images: Vec<NodeImage>,
}

/// One entry of a node's `status.images`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeImage {
    /// `names`.
    pub names: Vec<Box<str>>,
    /// `sizeBytes`.
    pub size: i64,
}

/// The selector-bearing objects that default spreading derives a pod's selector from.
#[derive(Clone, Debug, Default)]
pub struct Workloads {
    /// Services: namespace and `spec.selector` (a map; `None` selects nothing).
    pub services: Vec<(Sym, Box<str>, Option<Labels>)>,
    /// ReplicationControllers: namespace, name, `spec.selector` (a map).
    pub replication_controllers: Vec<(Sym, Box<str>, Option<Labels>)>,
    /// ReplicaSets: namespace, name, compiled `spec.selector` (`None` if it does not parse).
    pub replica_sets: Vec<(Sym, Box<str>, Option<Selector>)>,
    /// StatefulSets: namespace, name, compiled `spec.selector` (`None` if it does not parse).
    pub stateful_sets: Vec<(Sym, Box<str>, Option<Selector>)>,
    /// PriorityClasses, which Priority admission resolves pods' priorities from.
    pub priority_classes: PriorityClasses,
    /// PodDisruptionBudgets, which DefaultPreemption tries not to violate.
    pub disruption_budgets: DisruptionBudgets,
}
