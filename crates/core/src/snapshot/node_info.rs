//! A node and the aggregates over the pods bound to it, kept current on every bind and
//! removal (upstream's `NodeInfo`): requested resources, host ports, affinity pods.

use super::HostPortInfo;
use super::{NodeId, PodId};
use crate::api::resources::{NonZeroRequests, Resources};
use crate::api::{Node, Pod};

/// A node and the pods bound to it.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    /// This node's index.
    pub id: NodeId,
    /// The node.
    pub node: Node,
    pods: Vec<PodId>,
    requested: Resources,
    non_zero_requested: NonZeroRequests,
    used_ports: HostPortInfo,
    pods_with_affinity: Vec<PodId>,
    pods_with_required_anti_affinity: Vec<PodId>,
}

fn remove_id(list: &mut Vec<PodId>, id: PodId) {
    if let Some(pos) = list.iter().position(|p| *p == id) {
        list.swap_remove(pos);
    }
}

impl NodeInfo {
    pub(super) fn new(id: NodeId, node: Node) -> Self {
        Self {
            id,
            node,
            pods: Vec::new(),
            requested: Resources::default(),
            non_zero_requested: NonZeroRequests::default(),
            used_ports: HostPortInfo::default(),
            pods_with_affinity: Vec::new(),
            pods_with_required_anti_affinity: Vec::new(),
        }
    }

    /// The pods bound to this node.
    pub fn pods(&self) -> &[PodId] {
        &self.pods
    }

    /// The sum of the bound pods' requests (`NodeInfo.Requested`).
    pub fn requested(&self) -> &Resources {
        &self.requested
    }

    /// The sum of the bound pods' non-zero cpu/memory requests (`NonZeroRequested`).
    pub(crate) fn non_zero_requested(&self) -> NonZeroRequests {
        self.non_zero_requested
    }

    /// The host ports the bound pods use (`UsedPorts`).
    pub(crate) fn used_ports(&self) -> &HostPortInfo {
        &self.used_ports
    }

    /// Bound pods with pod affinity or anti-affinity (`PodsWithAffinity`).
    pub(crate) fn pods_with_affinity(&self) -> &[PodId] {
        &self.pods_with_affinity
    }

    /// Bound pods with required anti-affinity (`PodsWithRequiredAntiAffinity`).
    pub(crate) fn pods_with_required_anti_affinity(&self) -> &[PodId] {
        &self.pods_with_required_anti_affinity
    }

    /// Adds a pod to this node's aggregates (the snapshot's nodes change only through
    /// [`Snapshot::bind`](super::Snapshot::bind); preemption uses this on a copy).
    pub(crate) fn add_pod(&mut self, id: PodId, pod: &Pod) {
        self.pods.push(id);
        self.requested.add(&pod.requests.requested);
        self.non_zero_requested.add(pod.requests.non_zero);
        for port in &pod.host_ports {
            self.used_ports.add(port);
        }
        if pod.affinity.has_affinity {
            self.pods_with_affinity.push(id);
        }
        if pod.affinity.has_required_anti_affinity() {
            self.pods_with_required_anti_affinity.push(id);
        }
    }

    /// Removes a pod from this node's aggregates (see [`Self::add_pod`]).
    pub(crate) fn remove_pod(&mut self, id: PodId, pod: &Pod) {
        remove_id(&mut self.pods, id);
        self.requested.sub(&pod.requests.requested);
        self.non_zero_requested.sub(pod.requests.non_zero);
        for port in &pod.host_ports {
            self.used_ports.remove(port);
        }
        remove_id(&mut self.pods_with_affinity, id);
        remove_id(&mut self.pods_with_required_anti_affinity, id);
    }
}
