//! VolumeRestrictions (`volume_restrictions.go`): a `ReadWriteOncePod` claim is used
//! by one pod at a time in the whole cluster, and the in-tree disks that allow one
//! writer (GCE PD, AWS EBS, iSCSI, Ceph RBD) are not mounted twice on a node unless
//! every mount is read-only.

use crate::api::{AccessModes, Pod, PodVolume};
use crate::framework::{
    ActionType as A, ClusterEvent, Code, CycleState, EventResource as R, FilterPlugin, Plugin,
    PreFilterPlugin, Status,
};
use crate::snapshot::{NodeInfo, Snapshot};

/// The plugin's registry name.
pub const NAME: &str = "VolumeRestrictions";
/// Filter's reason for a disk already mounted on the node (`ErrReasonDiskConflict`).
pub(crate) const ERR_REASON_DISK_CONFLICT: &str = "node(s) had no available disk";
/// Filter's reason for a `ReadWriteOncePod` claim in use
/// (`ErrReasonReadWriteOncePodConflict`).
pub(crate) const ERR_REASON_RWOP_CONFLICT: &str =
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

/// PreFilter's state: the pod's `ReadWriteOncePod` claims and how many pods use them.
#[derive(Clone, Debug)]
struct State {
    rwop_claims: Vec<Box<str>>,
    conflicts: i64,
}

impl State {
    /// `conflictingPVCRefCountForPod`: the pod's claim volumes among the RWOP claims.
    fn refs(&self, pod: &Pod) -> i64 {
        let n = pod
            .volumes
            .iter()
            .filter(|v| matches!(v, PodVolume::Claim { claim } if self.rwop_claims.contains(claim)))
            .count();
        i64::try_from(n).unwrap_or(i64::MAX)
    }
}

/// The VolumeRestrictions plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct VolumeRestrictions;

impl Plugin for VolumeRestrictions {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Upstream's registrations (queueing hints off, as the queue runs): a pod
    /// deleted, a node added or its labels or taints updated, a claim added.
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(R::AssignedPod, A::DELETE),
            ClusterEvent::new(
                R::Node,
                A::ADD | A::UPDATE_NODE_TAINT | A::UPDATE_NODE_LABEL,
            ),
            ClusterEvent::new(R::PersistentVolumeClaim, A::ADD),
        ]
    }
}

impl PreFilterPlugin for VolumeRestrictions {
    fn pre_filter(&self, state: &mut CycleState, pod: &Pod, snapshot: &Snapshot) -> Status {
        let needs_check = pod.volumes.iter().any(PodVolume::needs_restrictions_check);
        let mut rwop_claims: Vec<Box<str>> = Vec::new();
        // Without tracked storage objects only the in-tree disks are checked.
        let claims = pod.volumes.iter().filter(|_| snapshot.volumes_tracked());
        for v in claims {
            let PodVolume::Claim { claim } = v else {
                continue;
            };
            let Some(c) = snapshot.persistent_volume_claim(pod.namespace, claim) else {
                return Status::new(
                    Code::UnschedulableAndUnresolvable,
                    format!("persistentvolumeclaim {claim:?} not found"),
                );
            };
            if c.access_modes.contains(AccessModes::READ_WRITE_ONCE_POD)
                && !rwop_claims.contains(claim)
            {
                rwop_claims.push(claim.clone());
            }
        }
        let conflicts = rwop_claims
            .iter()
            .filter(|c| snapshot.is_claim_used_by_pods(pod.namespace, c))
            .count();
        let conflicts = i64::try_from(conflicts).unwrap_or(i64::MAX);
        if !needs_check && conflicts == 0 {
            return Status::skip();
        }
        state.write(State {
            rwop_claims,
            conflicts,
        });
        Status::success()
    }

    fn add_pod(
        &self,
        state: &mut CycleState,
        _: &Pod,
        added: &Pod,
        _: &NodeInfo,
        _: &Snapshot,
    ) -> Status {
        match state.require_mut::<State>(NAME) {
            Ok(s) => {
                s.conflicts += s.refs(added);
                Status::success()
            }
            Err(e) => e,
        }
    }

    fn remove_pod(
        &self,
        state: &mut CycleState,
        _: &Pod,
        removed: &Pod,
        _: &NodeInfo,
        _: &Snapshot,
    ) -> Status {
        match state.require_mut::<State>(NAME) {
            Ok(s) => {
                s.conflicts -= s.refs(removed);
                Status::success()
            }
            Err(e) => e,
        }
    }
}

impl FilterPlugin for VolumeRestrictions {
    fn filter(
        &self,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        snapshot: &Snapshot,
    ) -> Status {
        let disks = pod.volumes.iter().filter(|v| v.needs_restrictions_check());
        for v in disks {
            let conflict = node
                .pods()
                .iter()
                .filter_map(|p| snapshot.pod(*p))
                .any(|existing| existing.volumes.iter().any(|e| v.conflicts_with(e)));
            if conflict {
                return Status::new(Code::Unschedulable, ERR_REASON_DISK_CONFLICT);
            }
        }
        match state.require::<State>(NAME) {
            Ok(s) if s.conflicts > 0 => Status::new(Code::Unschedulable, ERR_REASON_RWOP_CONFLICT),
            Ok(_) => Status::success(),
            Err(e) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::testutil::{filter_all, pod, snapshot, storage};
    use serde_json::json;

    fn disk_pod(name: &str, node: Option<&str>, ro: bool) -> serde_json::Value {
        json!({"metadata": {"name": name},
               "spec": {"containers": [], "nodeName": node,
                        "volumes": [{"name": "d", "gcePersistentDisk": {"pdName": "foo", "readOnly": ro}}]}})
    }

    // TestGCEDiskConflicts: the same PD on the node conflicts unless both are read-only.
    #[test]
    fn disk_conflicts_on_the_node() {
        let mut s = snapshot(
            &[
                json!({"metadata": {"name": "a"}}),
                json!({"metadata": {"name": "b"}}),
            ],
            &[disk_pod("existing", Some("a"), false)],
        );
        let p = pod(&mut s, disk_pod("new", None, false));
        let got = filter_all(&VolumeRestrictions, &s, &p);
        assert_eq!(
            got[0],
            (Code::Unschedulable, ERR_REASON_DISK_CONFLICT.into())
        );
        assert_eq!(got[1].0, Code::Success);
    }

    fn rwop_pod(name: &str, node: Option<&str>) -> serde_json::Value {
        json!({"metadata": {"name": name},
               "spec": {"containers": [], "nodeName": node,
                        "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "only"}}]}})
    }

    // TestAccessModeConflicts: a ReadWriteOncePod claim in use rejects every node
    // (Unschedulable, so preemption may evict the user); RemovePod clears it.
    #[test]
    fn read_write_once_pod_conflicts_cluster_wide() {
        let mut s = snapshot(
            &[
                json!({"metadata": {"name": "a"}}),
                json!({"metadata": {"name": "b"}}),
            ],
            &[rwop_pod("user", Some("a"))],
        );
        storage(
            &mut s,
            &[
                json!({"kind": "PersistentVolumeClaim", "metadata": {"name": "only"},
                     "spec": {"accessModes": ["ReadWriteOncePod"],
                              "resources": {"requests": {"storage": "1Gi"}}}}),
            ],
        );
        let p = pod(&mut s, rwop_pod("new", None));
        let got = filter_all(&VolumeRestrictions, &s, &p);
        assert!(
            got.iter()
                .all(|g| *g == (Code::Unschedulable, ERR_REASON_RWOP_CONFLICT.to_string()))
        );
        let mut state = CycleState::new();
        assert!(
            VolumeRestrictions
                .pre_filter(&mut state, &p, &s)
                .is_success()
        );
        let user = s.pod(crate::snapshot::PodId(0)).cloned();
        let user = user.expect("the user pod exists");
        let node = s.node(crate::snapshot::NodeId(0));
        assert!(
            VolumeRestrictions
                .remove_pod(&mut state, &p, &user, node, &s)
                .is_success()
        );
        assert!(VolumeRestrictions.filter(&state, &p, node, &s).is_success());
        // With no user, the plugin has nothing to check.
        let mut free = snapshot(&[json!({"metadata": {"name": "a"}})], &[]);
        storage(
            &mut free,
            &[
                json!({"kind": "PersistentVolumeClaim", "metadata": {"name": "only"},
                     "spec": {"accessModes": ["ReadWriteOncePod"],
                              "resources": {"requests": {"storage": "1Gi"}}}}),
            ],
        );
        let p = pod(&mut free, rwop_pod("new", None));
        assert!(
            VolumeRestrictions
                .pre_filter(&mut CycleState::new(), &p, &free)
                .is_skip()
        );
    }
}
