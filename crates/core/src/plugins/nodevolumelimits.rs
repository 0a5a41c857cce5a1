//! NodeVolumeLimits (`nodevolumelimits/csi.go`, `CSILimits`): a node attaches at most
//! its CSINode's `allocatable.count` volumes of each CSI driver; a volume shared with a
//! pod already on the node is not counted twice.
//!
//! Not modelled: in-tree volumes migrated to CSI (translation), inline CSI volumes,
//! and the deprecated `attachable-volumes-csi-*` node allocatable.

use crate::api::{PersistentVolumeClaim, Pod, PodVolume};
use crate::framework::{
    ActionType as A, ClusterEvent, Code, CycleState, EventResource as R, FilterPlugin, Plugin,
    PreFilterPlugin, Status,
};
use crate::snapshot::{NodeInfo, Snapshot};
use std::collections::{BTreeMap, BTreeSet};

/// The plugin's registry name.
pub const NAME: &str = "NodeVolumeLimits";
/// Filter's reason (`ErrReasonMaxVolumeCountExceeded`).
pub(crate) const ERR_REASON_MAX_VOLUME_COUNT: &str = "node(s) exceed max volume count";

/// The NodeVolumeLimits plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeVolumeLimits;

impl Plugin for NodeVolumeLimits {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Upstream's registrations: a CSINode added, a pod deleted, a claim added.
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(R::CsiNode, A::ADD),
            ClusterEvent::new(R::AssignedPod, A::DELETE),
            ClusterEvent::new(R::PersistentVolumeClaim, A::ADD),
        ]
    }
}

impl PreFilterPlugin for NodeVolumeLimits {
    fn pre_filter(&self, _: &mut CycleState, pod: &Pod, snapshot: &Snapshot) -> Status {
        if snapshot.volumes_tracked() && pod.volumes.iter().any(|v| v.claim_name().is_some()) {
            Status::success()
        } else {
            Status::skip()
        }
    }
}

/// `getCSIDriverInfo`: the driver and unique volume name of a claim's volume; an
/// unbound claim counts under its class's provisioner with a per-claim handle.
fn driver_of(claim: &PersistentVolumeClaim, snapshot: &Snapshot) -> Option<(Box<str>, String)> {
    if let Some(pv) = claim
        .volume_name
        .as_deref()
        .and_then(|n| snapshot.persistent_volume(n))
    {
        let (driver, handle) = pv.csi.as_ref()?;
        return Some((driver.clone(), format!("{driver}/{handle}")));
    }
    if claim.storage_class.is_empty() {
        return None;
    }
    let class = snapshot.storage_class(&claim.storage_class)?;
    if class.provisioner.starts_with("kubernetes.io/") {
        return None;
    }
    let ns = snapshot.symbols().resolve(claim.namespace);
    Some((
        class.provisioner.clone(),
        format!("{}/-{ns}/{}", class.provisioner, claim.name),
    ))
}

/// `filterAttachableVolumes`: the pod's CSI volumes by unique name, with their driver.
/// A missing claim is an error for the pod being scheduled and skipped for pods
/// already on the node.
fn attachable(
    pod: &Pod,
    snapshot: &Snapshot,
    new_pod: bool,
    out: &mut BTreeMap<String, Box<str>>,
) -> Result<(), Status> {
    for (name, ephemeral) in pod.volumes.iter().filter_map(PodVolume::claim) {
        let Some(claim) = snapshot.persistent_volume_claim(pod.namespace, name) else {
            if new_pod {
                let ns = snapshot.symbols().resolve(pod.namespace);
                return Err(Status::new(
                    Code::UnschedulableAndUnresolvable,
                    format!("looking up PVC {ns}/{name}: persistentvolumeclaim {name:?} not found"),
                ));
            }
            continue;
        };
        if ephemeral && claim.owner_pod_uid.as_deref() != Some(&*pod.uid) {
            let ns = snapshot.symbols().resolve(pod.namespace);
            return Err(Status::error(format!(
                "PVC {ns}/{name} was not created for pod {ns}/{} (pod is not owner)",
                pod.name
            )));
        }
        if let Some((driver, unique)) = driver_of(claim, snapshot) {
            out.insert(unique, driver);
        }
    }
    Ok(())
}

impl FilterPlugin for NodeVolumeLimits {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo, snapshot: &Snapshot) -> Status {
        let mut new_volumes = BTreeMap::new();
        if let Err(s) = attachable(pod, snapshot, true, &mut new_volumes) {
            return s;
        }
        if new_volumes.is_empty() {
            return Status::success();
        }
        let Some(csi_node) = snapshot.csi_node(&node.node.name) else {
            return Status::success();
        };
        let limits: BTreeMap<&str, i64> = csi_node
            .drivers
            .iter()
            .filter_map(|d| Some((&*d.name, i64::from(d.allocatable?))))
            .collect();
        if limits.is_empty() {
            return Status::success();
        }
        let mut attached = BTreeMap::new();
        for p in node.pods().iter().filter_map(|p| snapshot.pod(*p)) {
            if let Err(s) = attachable(p, snapshot, false, &mut attached) {
                return s;
            }
        }
        let mut attached_count: BTreeMap<&str, i64> = BTreeMap::new();
        let mut shared = BTreeSet::new();
        for (unique, driver) in &attached {
            shared.insert(unique.as_str());
            *attached_count.entry(driver).or_default() += 1;
        }
        let mut new_count: BTreeMap<&str, i64> = BTreeMap::new();
        for (unique, driver) in &new_volumes {
            if !shared.contains(unique.as_str()) {
                *new_count.entry(driver).or_default() += 1;
            }
        }
        for (driver, count) in new_count {
            if let Some(max) = limits.get(driver)
                && attached_count.get(driver).copied().unwrap_or(0) + count > *max
            {
                return Status::new(Code::Unschedulable, ERR_REASON_MAX_VOLUME_COUNT);
            }
        }
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::testutil::{filter_all, pod, snapshot, storage};
    use serde_json::json;

    fn claim_pod(name: &str, node: Option<&str>, claims: &[&str]) -> serde_json::Value {
        let volumes: Vec<_> = claims
            .iter()
            .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
            .collect();
        json!({"metadata": {"name": name},
               "spec": {"containers": [], "nodeName": node, "volumes": volumes}})
    }

    fn bound(name: &str) -> [serde_json::Value; 2] {
        [
            json!({"kind": "PersistentVolumeClaim",
                   "metadata": {"name": name, "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                   "spec": {"volumeName": format!("pv-{name}"), "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}}}}),
            json!({"kind": "PersistentVolume", "metadata": {"name": format!("pv-{name}")},
                   "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
                            "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": format!("vol-{name}")}}}),
        ]
    }

    // TestCSILimits: a node with allocatable 2 for the driver and two volumes attached
    // takes a pod sharing one of them, not a pod with a third.
    #[test]
    fn csi_allocatable_count() {
        let mut s = snapshot(
            &[
                json!({"metadata": {"name": "a"}}),
                json!({"metadata": {"name": "b"}}),
            ],
            &[claim_pod("existing", Some("a"), &["one", "two"])],
        );
        let mut objects: Vec<serde_json::Value> = ["one", "two", "three"]
            .iter()
            .flat_map(|n| bound(n))
            .collect();
        objects.push(json!({"kind": "CSINode", "metadata": {"name": "a"},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-a", "allocatable": {"count": 2}}]}}));
        storage(&mut s, &objects);
        let p = pod(&mut s, claim_pod("shares", None, &["two"]));
        assert!(
            filter_all(&NodeVolumeLimits, &s, &p)
                .iter()
                .all(|g| g.0 == Code::Success)
        );
        let p = pod(&mut s, claim_pod("third", None, &["three"]));
        let got = filter_all(&NodeVolumeLimits, &s, &p);
        assert_eq!(
            got[0],
            (Code::Unschedulable, ERR_REASON_MAX_VOLUME_COUNT.into())
        );
        assert_eq!(got[1].0, Code::Success);
        let p = pod(&mut s, claim_pod("lost", None, &["nope"]));
        assert_eq!(
            filter_all(&NodeVolumeLimits, &s, &p)[0].1,
            "looking up PVC default/nope: persistentvolumeclaim \"nope\" not found"
        );
    }
}
