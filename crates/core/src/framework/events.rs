//! Cluster events and the plugins' interest in them (upstream's `ClusterEvent`,
//! `ActionType` and `EnqueueExtensions.EventsToRegister`): a pod a plugin rejected goes
//! back to the active queue only on an event that plugin says could make it fit.

use std::fmt;
use std::ops::BitOr;

/// What kind of object an event is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventResource {
    /// A pod bound (or assumed) to a node.
    AssignedPod,
    /// A pod waiting to be scheduled (its own updates, e.g. scheduling gates removed).
    UnscheduledPod,
    /// A node.
    Node,
    /// A Service, ReplicaSet, StatefulSet or ReplicationController (default spreading
    /// derives selectors from them).
    Workload,
    /// A PodDisruptionBudget or PriorityClass (preemption reads them).
    Policy,
    /// A PersistentVolumeClaim (the volume plugins read them).
    PersistentVolumeClaim,
    /// A PersistentVolume.
    PersistentVolume,
    /// A StorageClass.
    StorageClass,
    /// A CSINode.
    CsiNode,
    /// A CSIDriver.
    CsiDriver,
    /// Any resource (a registration only).
    Any,
}

/// A set of actions, as upstream's `ActionType` bit mask.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct ActionType(u32);

impl ActionType {
    /// The object was created.
    pub const ADD: Self = Self(1);
    /// The object was deleted.
    pub const DELETE: Self = Self(1 << 1);
    /// A node's allocatable resources changed.
    pub const UPDATE_NODE_ALLOCATABLE: Self = Self(1 << 2);
    /// A node's labels changed.
    pub const UPDATE_NODE_LABEL: Self = Self(1 << 3);
    /// A node's taints (or `spec.unschedulable`) changed.
    pub const UPDATE_NODE_TAINT: Self = Self(1 << 4);
    /// A node's conditions changed.
    pub const UPDATE_NODE_CONDITION: Self = Self(1 << 5);
    /// A pod's labels changed.
    pub const UPDATE_POD_LABEL: Self = Self(1 << 6);
    /// A pod's resource requests went down.
    pub const UPDATE_POD_SCALE_DOWN: Self = Self(1 << 7);
    /// A pod's tolerations changed.
    pub const UPDATE_POD_TOLERATION: Self = Self(1 << 8);
    /// A pod's last scheduling gate was removed.
    pub const UPDATE_POD_SCHEDULING_GATES_ELIMINATED: Self = Self(1 << 9);
    /// Any other update.
    pub const UPDATE_OTHER: Self = Self(1 << 10);
    /// Every kind of update.
    pub const UPDATE: Self = Self((1 << 11) - 1 - 1 - (1 << 1));
    /// Every action.
    pub const ALL: Self = Self((1 << 11) - 1);

    /// Whether the two sets share an action.
    pub(crate) fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }
}

impl BitOr for ActionType {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl fmt::Debug for ActionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [&str; 11] = [
            "Add",
            "Delete",
            "UpdateNodeAllocatable",
            "UpdateNodeLabel",
            "UpdateNodeTaint",
            "UpdateNodeCondition",
            "UpdatePodLabel",
            "UpdatePodScaleDown",
            "UpdatePodToleration",
            "UpdatePodSchedulingGatesEliminated",
            "UpdateOther",
        ];
        if *self == Self::ALL {
            return f.write_str("All");
        }
        let names: Vec<&str> = NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect();
        f.write_str(&names.join("|"))
    }
}

/// An event in the cluster, or a registration for a class of events.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClusterEvent {
    /// The object's kind.
    pub resource: EventResource,
    /// What happened (a registration may name several actions).
    pub action: ActionType,
}

impl ClusterEvent {
    /// Every event (what a plugin that registers nothing is interested in).
    pub const WILDCARD: Self = Self::new(EventResource::Any, ActionType::ALL);
    /// A pod was bound or assumed.
    pub(crate) const ASSIGNED_POD_ADD: Self =
        Self::new(EventResource::AssignedPod, ActionType::ADD);
    /// A bound pod was deleted (or evicted by preemption).
    pub(crate) const ASSIGNED_POD_DELETE: Self =
        Self::new(EventResource::AssignedPod, ActionType::DELETE);
    /// A node was added.
    pub const NODE_ADD: Self = Self::new(EventResource::Node, ActionType::ADD);

    /// An event or registration.
    pub const fn new(resource: EventResource, action: ActionType) -> Self {
        Self { resource, action }
    }

    /// Whether this event is one `registered` covers.
    pub fn matches(&self, registered: &ClusterEvent) -> bool {
        (registered.resource == EventResource::Any || registered.resource == self.resource)
            && registered.action.intersects(self.action)
    }

    /// A short label for logs and metrics (`Node/Add`, `AssignedPod/Delete`).
    pub fn label(&self) -> String {
        format!("{:?}/{:?}", self.resource, self.action)
    }
}
