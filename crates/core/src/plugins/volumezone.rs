//! VolumeZone (`volume_zone.go`): the zone and region labels of the volumes bound to a
//! pod's claims must match the node's (a node with no zone or region label fits any).

use crate::api::{Pod, PodVolume, Sym};
use crate::framework::{
    ActionType as A, ClusterEvent, Code, CycleState, EventResource as R, FilterPlugin, Plugin,
    PreFilterPlugin, Status,
};
use crate::snapshot::{NodeInfo, Snapshot};

/// The plugin's registry name.
pub const NAME: &str = "VolumeZone";
/// Filter's reason (`ErrReasonConflict`).
pub(crate) const ERR_REASON_CONFLICT: &str = "node(s) had no available volume zone";

/// The labels VolumeZone compares, in upstream's order (`topologyLabels`).
const TOPOLOGY_LABELS: [&str; 4] = [
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
];

/// The GA label a beta one stands for (`translateToGALabel`).
fn ga_label(key: &str) -> &str {
    match key {
        "failure-domain.beta.kubernetes.io/region" => "topology.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone" => "topology.kubernetes.io/zone",
        k => k,
    }
}

/// One topology label of a bound volume: its key and the zones it allows (a value
/// `a__b` allows both, `LabelZonesToSet`).
#[derive(Clone, Debug)]
struct PvTopology {
    key: &'static str,
    values: Vec<Box<str>>,
}

#[derive(Clone, Debug)]
struct State {
    topologies: Vec<PvTopology>,
}

/// The VolumeZone plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct VolumeZone;

impl Plugin for VolumeZone {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Upstream's registrations (queueing hints off, as the queue runs): StorageClass
    /// add, node add and label or taint update, claim add/update, volume add/update.
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(R::StorageClass, A::ADD),
            ClusterEvent::new(
                R::Node,
                A::ADD | A::UPDATE_NODE_LABEL | A::UPDATE_NODE_TAINT,
            ),
            ClusterEvent::new(R::PersistentVolumeClaim, A::ADD | A::UPDATE),
            ClusterEvent::new(R::PersistentVolume, A::ADD | A::UPDATE),
        ]
    }
}

fn unresolvable(reason: impl Into<String>) -> Status {
    Status::new(Code::UnschedulableAndUnresolvable, reason.into())
}

/// `getPVbyPod`: the topology labels of the volumes bound to the pod's claims
/// (`persistentVolumeClaim` volumes only); unbound `WaitForFirstConsumer` claims are
/// left for VolumeBinding.
fn pv_topologies(pod: &Pod, snapshot: &Snapshot) -> Result<Vec<PvTopology>, Status> {
    let symbols = snapshot.symbols();
    let mut out = Vec::new();
    for v in &pod.volumes {
        let PodVolume::Claim { claim } = v else {
            continue;
        };
        if claim.is_empty() {
            return Err(unresolvable("PersistentVolumeClaim had no name"));
        }
        let Some(c) = snapshot.persistent_volume_claim(pod.namespace, claim) else {
            return Err(unresolvable(format!(
                "persistentvolumeclaim {claim:?} not found"
            )));
        };
        let Some(pv_name) = c.volume_name.as_deref() else {
            if c.storage_class.is_empty() {
                return Err(unresolvable(
                    "PersistentVolumeClaim had no pv name and storageClass name",
                ));
            }
            let Some(class) = snapshot.storage_class(&c.storage_class) else {
                return Err(unresolvable(format!(
                    "storageclass.storage.k8s.io {:?} not found",
                    c.storage_class
                )));
            };
            if class.wait_for_first_consumer {
                continue;
            }
            return Err(unresolvable("PersistentVolume had no name"));
        };
        let Some(pv) = snapshot.persistent_volume(pv_name) else {
            return Err(unresolvable(format!(
                "persistentvolume {pv_name:?} not found"
            )));
        };
        for key in TOPOLOGY_LABELS {
            let Some(value) = symbols.get(key).and_then(|k| pv.labels.get(k)) else {
                continue;
            };
            let values = symbols
                .resolve(value)
                .split("__")
                .map(str::trim)
                .filter(|z| !z.is_empty())
                .map(Into::into)
                .collect();
            out.push(PvTopology { key, values });
        }
    }
    Ok(out)
}

impl PreFilterPlugin for VolumeZone {
    fn pre_filter(&self, state: &mut CycleState, pod: &Pod, snapshot: &Snapshot) -> Status {
        if !snapshot.volumes_tracked() {
            return Status::skip();
        }
        match pv_topologies(pod, snapshot) {
            Err(s) => s,
            Ok(t) if t.is_empty() => Status::skip(),
            Ok(topologies) => {
                state.write(State { topologies });
                Status::success()
            }
        }
    }
}

impl FilterPlugin for VolumeZone {
    fn filter(&self, state: &CycleState, _: &Pod, node: &NodeInfo, snapshot: &Snapshot) -> Status {
        let s = match state.require::<State>(NAME) {
            Ok(s) => s,
            Err(e) => return e,
        };
        let symbols = snapshot.symbols();
        let label =
            |key: &str| -> Option<Sym> { symbols.get(key).and_then(|k| node.node.labels.get(k)) };
        if TOPOLOGY_LABELS.iter().all(|k| label(k).is_none()) {
            return Status::success();
        }
        for t in &s.topologies {
            let value = label(t.key).or_else(|| label(ga_label(t.key)));
            let fits = value.is_some_and(|v| t.values.iter().any(|z| **z == *symbols.resolve(v)));
            if !fits {
                return Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_CONFLICT);
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

    fn claim(name: &str, volume: &str) -> serde_json::Value {
        json!({"kind": "PersistentVolumeClaim", "metadata": {"name": name},
               "spec": {"volumeName": volume, "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}}}})
    }

    fn volume(name: &str, labels: serde_json::Value) -> serde_json::Value {
        json!({"kind": "PersistentVolume", "metadata": {"name": name, "labels": labels},
               "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
                        "csi": {"driver": "d", "volumeHandle": name}}})
    }

    fn claim_pod(claims: &[&str]) -> serde_json::Value {
        let volumes: Vec<_> = claims
            .iter()
            .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
            .collect();
        json!({"metadata": {"name": "p", "namespace": "default"},
               "spec": {"containers": [], "volumes": volumes}})
    }

    // Upstream's TestSingleZone and TestMultiZone (volume_zone_test.go): a bound volume's
    // zone must be the node's; `a__b` allows both; a node without zone labels fits.
    #[test]
    fn zone_labels_of_bound_volumes() {
        let mut s = snapshot(
            &[
                json!({"metadata": {"name": "a", "labels": {"topology.kubernetes.io/zone": "us-west1-a"}}}),
                json!({"metadata": {"name": "b", "labels": {"topology.kubernetes.io/zone": "us-west1-b"}}}),
                json!({"metadata": {"name": "c", "labels": {"topology.kubernetes.io/zone": "us-west1-c"}}}),
                json!({"metadata": {"name": "none"}}),
            ],
            &[],
        );
        storage(
            &mut s,
            &[
                claim("one", "pv-one"),
                volume(
                    "pv-one",
                    json!({"topology.kubernetes.io/zone": "us-west1-a"}),
                ),
                claim("multi", "pv-multi"),
                volume(
                    "pv-multi",
                    json!({"failure-domain.beta.kubernetes.io/zone": "us-west1-b__us-west1-c"}),
                ),
            ],
        );
        let p = pod(&mut s, claim_pod(&["one"]));
        let got: Vec<Code> = filter_all(&VolumeZone, &s, &p)
            .into_iter()
            .map(|c| c.0)
            .collect();
        use Code::*;
        assert_eq!(
            got,
            [
                Success,
                UnschedulableAndUnresolvable,
                UnschedulableAndUnresolvable,
                Success
            ]
        );
        let p = pod(&mut s, claim_pod(&["multi"]));
        let got = filter_all(&VolumeZone, &s, &p);
        assert_eq!(
            got[0],
            (UnschedulableAndUnresolvable, ERR_REASON_CONFLICT.into())
        );
        assert_eq!(got[1].0, Success);
        assert_eq!(got[2].0, Success);
    }

    // getPVbyPod's refusals: a missing claim or volume, an unbound Immediate claim.
    #[test]
    fn missing_objects_are_unresolvable() {
        let mut s = snapshot(&[json!({"metadata": {"name": "a"}})], &[]);
        storage(
            &mut s,
            &[
                claim("dangling", "pv-gone"),
                json!({"kind": "StorageClass", "metadata": {"name": "now"}, "provisioner": "p"}),
                json!({"kind": "PersistentVolumeClaim", "metadata": {"name": "unbound"},
                       "spec": {"storageClassName": "now", "accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": "1Gi"}}}}),
            ],
        );
        let cases = [
            ("nope", "persistentvolumeclaim \"nope\" not found"),
            ("dangling", "persistentvolume \"pv-gone\" not found"),
            ("unbound", "PersistentVolume had no name"),
        ];
        for (c, want) in cases {
            let p = pod(&mut s, claim_pod(&[c]));
            let mut state = CycleState::new();
            let st = VolumeZone.pre_filter(&mut state, &p, &s);
            assert_eq!(st.code(), Code::UnschedulableAndUnresolvable, "{c}");
            assert_eq!(st.reasons()[0], want, "{c}");
        }
        let p = pod(
            &mut s,
            json!({"metadata": {"name": "q"}, "spec": {"containers": []}}),
        );
        assert!(
            VolumeZone
                .pre_filter(&mut CycleState::new(), &p, &s)
                .is_skip()
        );
    }
}
