//! VolumeBinding (`volume_binding.go`): a pod's bound claims must have their volume
//! reachable from the node; unbound `WaitForFirstConsumer` claims need an available
//! volume reachable from the node or a class allowed to provision there; unbound
//! Immediate claims stop the pod at PreFilter. Once a node is chosen, the scheduler
//! binds the claims there ([`bind_pod_volumes`]).
//!
//! Not modelled: storage capacity (`CSIStorageCapacity`, so "node(s) did not have
//! enough free storage" never appears) and capacity scoring (alpha, off), so PreScore
//! always skips; in-tree volumes are not translated to CSI.

mod binder;
mod provisioner;

pub use binder::{
    BoundVolumes, ERR_REASON_BIND_CONFLICT, ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NODE_CONFLICT_BEFORE_1_33, ERR_REASON_PV_NOT_EXIST, ERR_REASON_UNBOUND_IMMEDIATE,
    NOT_SUPPORTED_PROVISIONER, PodClaims, PodVolumes, bind_immediate_claims, bind_pod_volumes,
    find_matching_volume, find_pod_volumes, is_fully_bound, pod_claims,
};
pub use provisioner::{ImmediateProvision, TopologyChoice, ZONE_LABEL, provision_immediate_claims};

use crate::api::Pod;
use crate::framework::{
    ActionType as A, ClusterEvent, Code, CycleState, EventResource as R, FilterPlugin, NodeScore,
    Plugin, PreFilterPlugin, PreScorePlugin, ScorePlugin, Status,
};
use crate::snapshot::{NodeId, NodeInfo, Snapshot};
use crate::version::KubernetesVersion;

/// The plugin's registry name.
pub const NAME: &str = "VolumeBinding";

/// The VolumeBinding plugin, with its reasons worded as the chosen release words them.
#[derive(Clone, Copy, Debug)]
pub struct VolumeBinding {
    node_conflict: &'static str,
}

impl Default for VolumeBinding {
    /// The newest release's wording.
    fn default() -> Self {
        Self::for_release(KubernetesVersion::NEWEST)
    }
}

impl VolumeBinding {
    /// The plugin as `release` runs it: a bound volume whose node affinity excludes the
    /// node is "had volume node affinity conflict" up to 1.32 and "didn't match
    /// PersistentVolume's node affinity" from 1.33 (kubernetes PR 129887).
    pub(crate) fn for_release(release: KubernetesVersion) -> Self {
        Self {
            node_conflict: if release.minor >= 33 {
                ERR_REASON_NODE_CONFLICT
            } else {
                ERR_REASON_NODE_CONFLICT_BEFORE_1_33
            },
        }
    }
}

/// PreFilter's sorting of the pod's claims, read by Filter.
#[derive(Clone, Debug)]
struct State {
    claims: PodClaims,
}

impl Plugin for VolumeBinding {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Upstream's registrations (queueing hints off, as the queue runs): StorageClass
    /// add/update, claim and volume add/update, node add and label or taint update,
    /// CSINode add/update, CSIDriver update (and CSIStorageCapacity, not modelled).
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(R::StorageClass, A::ADD | A::UPDATE),
            ClusterEvent::new(R::PersistentVolumeClaim, A::ADD | A::UPDATE),
            ClusterEvent::new(R::PersistentVolume, A::ADD | A::UPDATE),
            ClusterEvent::new(
                R::Node,
                A::ADD | A::UPDATE_NODE_LABEL | A::UPDATE_NODE_TAINT,
            ),
            ClusterEvent::new(R::CsiNode, A::ADD | A::UPDATE),
            ClusterEvent::new(R::CsiDriver, A::UPDATE),
        ]
    }
}

impl PreFilterPlugin for VolumeBinding {
    fn pre_filter(&self, state: &mut CycleState, pod: &Pod, snapshot: &Snapshot) -> Status {
        if !snapshot.volumes_tracked() {
            return Status::skip();
        }
        let claims = match pod_claims(pod, snapshot) {
            Err(s) => return s,
            Ok(None) => return Status::skip(),
            Ok(Some(c)) => c,
        };
        if !claims.immediate.is_empty() {
            return Status::new(
                Code::UnschedulableAndUnresolvable,
                ERR_REASON_UNBOUND_IMMEDIATE,
            );
        }
        state.write(State { claims });
        Status::success()
    }
}

impl FilterPlugin for VolumeBinding {
    fn filter(&self, state: &CycleState, _: &Pod, node: &NodeInfo, snapshot: &Snapshot) -> Status {
        let s = match state.require::<State>(NAME) {
            Ok(s) => s,
            Err(e) => return e,
        };
        match find_pod_volumes(&s.claims, node.id, snapshot, self.node_conflict) {
            Ok(_) => Status::success(),
            Err(status) => status,
        }
    }
}

impl PreScorePlugin for VolumeBinding {
    /// Capacity scoring (`VolumeCapacityPriority`/`StorageCapacityScoring`) is off:
    /// upstream's PreScore skips without a scorer.
    fn pre_score(&self, _: &mut CycleState, _: &Pod, _: &[NodeId], _: &Snapshot) -> Status {
        Status::skip()
    }
}

impl ScorePlugin for VolumeBinding {
    fn score(&self, _: &CycleState, _: &Pod, _: &NodeInfo, _: &Snapshot) -> Result<i64, Status> {
        Ok(0)
    }

    fn normalize_score(&self, _: &CycleState, _: &Pod, _: &mut [NodeScore]) -> Status {
        Status::success()
    }
}

#[cfg(test)]
mod tests;
