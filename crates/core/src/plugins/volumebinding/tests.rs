use super::*;
use crate::plugins::testutil::{filter_all, pod, snapshot, storage};
use crate::snapshot::PodId;
use serde_json::{Value, json};

const ZONE: &str = "topology.kubernetes.io/zone";

fn nodes() -> Vec<Value> {
    ["a", "b"]
        .iter()
        .map(|z| json!({"metadata": {"name": format!("node-{z}"), "labels": {ZONE: z}}}))
        .collect()
}

fn claim(name: &str, class: &str, extra: Value) -> Value {
    let mut c = json!({"kind": "PersistentVolumeClaim", "metadata": {"name": name},
        "spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}});
    if let (Some(spec), Some(extra)) = (c["spec"].as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    c
}

fn volume(name: &str, class: &str, zone: &str, size: &str) -> Value {
    json!({"kind": "PersistentVolume", "metadata": {"name": name},
        "spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"],
                 "capacity": {"storage": size}, "csi": {"driver": "d", "volumeHandle": name},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": ZONE, "operator": "In", "values": [zone]}]}]}}}})
}

fn class(name: &str, mode: &str, provisioner: &str, zones: &[&str]) -> Value {
    let mut c = json!({"kind": "StorageClass", "metadata": {"name": name},
        "provisioner": provisioner, "volumeBindingMode": mode});
    if !zones.is_empty() {
        c["allowedTopologies"] =
            json!([{"matchLabelExpressions": [{"key": ZONE, "values": zones}]}]);
    }
    c
}

fn claim_pod(name: &str, claims: &[&str]) -> Value {
    let volumes: Vec<_> = claims
        .iter()
        .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
        .collect();
    json!({"metadata": {"name": name}, "spec": {"containers": [], "volumes": volumes}})
}

fn run(objects: &[Value], claims: &[&str]) -> Vec<(Code, String)> {
    let mut s = snapshot(&nodes(), &[]);
    storage(&mut s, objects);
    let p = pod(&mut s, claim_pod("p", claims));
    filter_all(&VolumeBinding::default(), &s, &p)
}

use Code::{Success, UnschedulableAndUnresolvable as Unresolvable};

// volume_binding_test.go "all bound" / binder_test.go TestFindPodVolumesWithoutProvisioning
// "bound-pvc,pv-not-exists" and "immediate-unbound-pvc".
#[test]
fn bound_claims_follow_their_volume() {
    let bound = claim("data", "", json!({"volumeName": "pv-a"}));
    let mut bound_done = bound.clone();
    bound_done["metadata"]["annotations"] = json!({"pv.kubernetes.io/bind-completed": "yes"});
    let got = run(
        &[bound_done.clone(), volume("pv-a", "", "a", "1Gi")],
        &["data"],
    );
    assert_eq!(got[0].0, Success);
    assert_eq!(got[1], (Unresolvable, ERR_REASON_NODE_CONFLICT.into()));
    // Bound to a volume that does not exist.
    let got = run(&[bound_done], &["data"]);
    assert_eq!(got[0], (Unresolvable, ERR_REASON_PV_NOT_EXIST.into()));
    // Pre-bound by volumeName only: the PV controller has not bound it yet.
    let got = run(&[bound, volume("pv-a", "", "a", "1Gi")], &["data"]);
    assert!(
        got.iter()
            .all(|g| *g == (Unresolvable, ERR_REASON_UNBOUND_IMMEDIATE.into()))
    );
    // A claim that does not exist.
    let got = run(&[], &["data"]);
    assert_eq!(
        got[0],
        (
            Unresolvable,
            "persistentvolumeclaim \"data\" not found".into()
        )
    );
}

#[test]
fn immediate_claims_must_be_bound_before_scheduling() {
    let objects = [
        class("fast", "Immediate", "ebs.csi.aws.com", &[]),
        claim("data", "fast", json!({})),
    ];
    let got = run(&objects, &["data"]);
    assert!(
        got.iter()
            .all(|g| *g == (Unresolvable, ERR_REASON_UNBOUND_IMMEDIATE.into()))
    );
}

// binder_test.go TestFindPodVolumesWithProvisioning: WaitForFirstConsumer claims match an
// available volume reachable from the node, or provision where allowedTopologies allow.
#[test]
fn wait_for_first_consumer_matches_or_provisions() {
    let wffc = class(
        "local",
        "WaitForFirstConsumer",
        NOT_SUPPORTED_PROVISIONER,
        &[],
    );
    let got = run(
        &[
            wffc.clone(),
            claim("data", "local", json!({})),
            volume("pv-b", "local", "b", "5Gi"),
        ],
        &["data"],
    );
    assert_eq!(got[0], (Unresolvable, ERR_REASON_BIND_CONFLICT.into()));
    assert_eq!(got[1].0, Success);
    // Too small a volume does not match.
    let got = run(
        &[
            wffc,
            claim("data", "local", json!({})),
            volume("pv-b", "local", "b", "500Mi"),
        ],
        &["data"],
    );
    assert!(got.iter().all(|g| g.0 == Unresolvable));
    let zonal = class("zonal", "WaitForFirstConsumer", "ebs.csi.aws.com", &["a"]);
    let got = run(&[zonal, claim("data", "zonal", json!({}))], &["data"]);
    assert_eq!(got[0].0, Success);
    assert_eq!(got[1], (Unresolvable, ERR_REASON_BIND_CONFLICT.into()));
    let anywhere = class("any", "WaitForFirstConsumer", "ebs.csi.aws.com", &[]);
    let got = run(&[anywhere, claim("data", "any", json!({}))], &["data"]);
    assert!(got.iter().all(|g| g.0 == Success));
}

// The filer's case in small: once the first pod binds the shared claim, the volume is
// provisioned in its node's zone and every later pod follows it there.
#[test]
fn binding_provisions_in_the_nodes_topology() {
    let mut s = snapshot(&nodes(), &[]);
    storage(
        &mut s,
        &[
            class("zonal", "WaitForFirstConsumer", "ebs.csi.aws.com", &[]),
            claim("data", "zonal", json!({})),
            json!({"kind": "CSINode", "metadata": {"name": "node-b"},
                   "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-b",
                                         "topologyKeys": [ZONE]}]}}),
        ],
    );
    let first = pod(&mut s, claim_pod("first", &["data"]));
    let first = s.add_pod(first).expect("the snapshot takes the pod");
    assert_eq!(first, PodId(0));
    let node_b = s.node_id("node-b").expect("node-b exists");
    let done = bind_pod_volumes(&mut s, first, node_b);
    assert_eq!(done.provisioned, 1);
    let ns = s
        .symbols()
        .get("default")
        .expect("the default namespace exists");
    let c = s.persistent_volume_claim(ns, "data").cloned();
    let c = c.expect("the claim is kept");
    assert!(is_fully_bound(&c));
    let pv = c
        .volume_name
        .as_deref()
        .and_then(|n| s.persistent_volume(n));
    let pv = pv.expect("the volume exists");
    assert_eq!(pv.csi.as_ref().map(|c| &*c.0), Some("ebs.csi.aws.com"));
    let second = pod(&mut s, claim_pod("second", &["data"]));
    let got = filter_all(&VolumeBinding::default(), &s, &second);
    assert_eq!(got[0], (Unresolvable, ERR_REASON_NODE_CONFLICT.into()));
    assert_eq!(got[1].0, Success);
    // Up to 1.32 the same node is refused in the older words (kubernetes PR 129887).
    let old = VolumeBinding::for_release(KubernetesVersion { minor: 32 });
    let got = filter_all(&old, &s, &second);
    assert_eq!(
        got[0],
        (Unresolvable, ERR_REASON_NODE_CONFLICT_BEFORE_1_33.into())
    );
    assert_eq!(got[1].0, Success);
}

// pv_controller.go syncUnboundClaim: pre-bound claims and Immediate claims with a
// matching available volume are bound before the scheduler sees them.
#[test]
fn the_pv_controller_binds_immediate_claims() {
    let mut s = snapshot(&nodes(), &[]);
    storage(
        &mut s,
        &[
            class("manual", "Immediate", NOT_SUPPORTED_PROVISIONER, &[]),
            claim("pre", "manual", json!({"volumeName": "pv-pre"})),
            volume("pv-pre", "manual", "a", "1Gi"),
            claim("match", "manual", json!({})),
            volume("pv-big", "manual", "b", "10Gi"),
            volume("pv-small", "manual", "b", "2Gi"),
            claim(
                "none",
                "manual",
                json!({"resources": {"requests": {"storage": "50Gi"}}}),
            ),
        ],
    );
    assert_eq!(bind_immediate_claims(&mut s), 2);
    let ns = s
        .symbols()
        .get("default")
        .expect("the default namespace exists");
    let name = |c: &str| {
        s.persistent_volume_claim(ns, c)
            .and_then(|c| c.volume_name.as_deref().map(str::to_string))
    };
    assert_eq!(name("pre").as_deref(), Some("pv-pre"));
    assert_eq!(name("match").as_deref(), Some("pv-small"));
    assert_eq!(name("none"), None);
}

// Through the whole scheduler: the first pod's WaitForFirstConsumer claim is bound in
// its zone (Reserve/PreBind), and when its node is drained the StatefulSet's
// replacement follows the volume to the other node of that zone.
#[test]
fn a_drained_ordinal_follows_its_volume() {
    use crate::{Features, Scheduler, SchedulerConfig, Simulation};
    let zone_nodes = [("a1", "a"), ("b1", "b"), ("a2", "a")];
    let nodes: Vec<Value> = zone_nodes
        .iter()
        .map(|(n, z)| {
            json!({"metadata": {"name": n, "labels": {ZONE: z}},
                   "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}})
        })
        .collect();
    let mut s = snapshot(&nodes, &[]);
    storage(
        &mut s,
        &[
            class(
                "zonal",
                "WaitForFirstConsumer",
                "ebs.csi.aws.com",
                &["a", "b"],
            ),
            claim("data-db-0", "zonal", json!({})),
        ],
    );
    let mut manifest = claim_pod("db-0", &["data-db-0"]);
    manifest["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1",
        "kind": "StatefulSet", "name": "db", "uid": "s1", "controller": true}]);
    let p = pod(&mut s, manifest);
    s.add_pod(p).expect("the snapshot takes the pod");
    let scheduler = Scheduler::new(&SchedulerConfig::default(), Features::default(), &mut s)
        .expect("the scheduler builds from the test configuration");
    let mut sim = Simulation::new(scheduler);
    sim.enqueue_pending(&s);
    sim.run(&mut s, |_, _| {}).expect("the simulation runs");
    let placed = |s: &Snapshot| {
        let id = s.pod_id("default", "db-0")?;
        let node = s.pod_node(id)?;
        Some(s.node(node).node.name.to_string())
    };
    let first = placed(&s).expect("db-0 is bound");
    let ns = s
        .symbols()
        .get("default")
        .expect("the default namespace exists");
    assert!(
        s.persistent_volume_claim(ns, "data-db-0")
            .is_some_and(is_fully_bound)
    );
    let zone_of = |n: &str| zone_nodes.iter().find(|(m, _)| *m == n).map(|(_, z)| *z);
    sim.drain(&mut s, std::slice::from_ref(&first))
        .expect("the node drains");
    sim.run(&mut s, |_, _| {})
        .expect("the simulation runs after the drain");
    // Zone b has one node: a replacement there has nowhere to go and waits.
    match placed(&s) {
        Some(second) => {
            assert_ne!(second, first);
            assert_eq!(zone_of(&second), zone_of(&first));
        }
        None => assert_eq!(zone_of(&first), Some("b")),
    }
}

// EventsToRegister of the four volume plugins, as the default profile requeues with
// them: a claim update retries a pod VolumeBinding or VolumeZone rejected, not one
// VolumeRestrictions or NodeVolumeLimits rejected (they register claim adds only); a
// CSINode add retries NodeVolumeLimits' pods.
#[test]
fn volume_events_requeue_the_plugins_pods() {
    use crate::api::Symbols;
    use crate::config::ProfileConfig;
    use crate::framework::{ActionType as A, ClusterEvent, EventResource as R, Profile, Registry};
    let p = Profile::build(
        &Registry::in_tree(),
        &ProfileConfig::default(),
        0,
        crate::Features::default(),
        &mut Symbols::default(),
    )
    .expect("the default profile builds");
    let claim_update = ClusterEvent::new(R::PersistentVolumeClaim, A::UPDATE);
    let claim_add = ClusterEvent::new(R::PersistentVolumeClaim, A::ADD);
    let csi_node_add = ClusterEvent::new(R::CsiNode, A::ADD);
    let pv_update = ClusterEvent::new(R::PersistentVolume, A::UPDATE);
    assert!(p.worth_requeuing(&["VolumeBinding"], &claim_update));
    assert!(p.worth_requeuing(&["VolumeZone"], &pv_update));
    assert!(!p.worth_requeuing(&["VolumeRestrictions"], &claim_update));
    assert!(p.worth_requeuing(&["VolumeRestrictions"], &claim_add));
    assert!(!p.worth_requeuing(&["NodeVolumeLimits"], &pv_update));
    assert!(p.worth_requeuing(&["NodeVolumeLimits"], &csi_node_add));
    assert!(!p.worth_requeuing(&["VolumeZone"], &csi_node_add));
}

// A cache that does not track storage objects (the live scheduler's watches) passes
// every pod through the volume plugins; a tracked one finds the claim missing.
#[test]
fn untracked_storage_passes_every_pod() {
    let mut s = snapshot(&nodes(), &[]);
    let p = pod(&mut s, claim_pod("p", &["data"]));
    assert_eq!(
        filter_all(&VolumeBinding::default(), &s, &p)[0].0,
        Unresolvable
    );
    s.set_volumes_tracked(false);
    let mut state = CycleState::new();
    assert!(
        VolumeBinding::default()
            .pre_filter(&mut state, &p, &s)
            .is_skip()
    );
    let zone = crate::plugins::volumezone::VolumeZone;
    assert!(zone.pre_filter(&mut state, &p, &s).is_skip());
}
