//! The storage objects in serve's cache: a pod whose claim is bound to a zonal volume is
//! scheduled only where the volume is reachable (VolumeBinding's `FindPodVolumes` and
//! VolumeZone), and a claim created after its pod brings the pod back from the
//! unschedulable pods (VolumeBinding's PersistentVolumeClaim/PersistentVolume hints).

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

/// A 10Gi volume reachable from `zone` only, reserved for the claim `default/<claim>`.
fn zonal_volume(name: &str, zone: &str, claim: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
        "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
            "storageClassName": "",
            "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": format!("vol-{name}")},
            "claimRef": {"namespace": "default", "name": claim},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}}},
        "status": {"phase": "Bound"}})
}

/// The claim `default/<name>`, bound to `volume` (as the PV controller leaves it).
fn bound_claim(name: &str, volume: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default",
            "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": volume,
            "resources": {"requests": {"storage": "10Gi"}}},
        "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "10Gi"}}})
}

/// A pending pod of ours mounting the claim `default/<claim>`.
fn pod_with_claim(name: &str, claim: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "db"}},
        "spec": {"schedulerName": SCHEDULER,
            "containers": [{"name": "c", "image": "postgres",
                "resources": {"requests": {"cpu": "100m"}}}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}})
}

/// The zone of the node `pod` is bound to, if it is bound.
fn zone_of(fake: &topospread_fakeapi::FakeApi, pod: &str) -> Option<String> {
    let node = placements(fake).get(&format!("default/{pod}")).cloned()??;
    let n = fake.get("nodes", "", &node).unwrap()?;
    n["metadata"]["labels"]["topology.kubernetes.io/zone"]
        .as_str()
        .map(str::to_string)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_bound_to_a_zonal_volume_pins_its_pods_to_that_zone() {
    // Nine nodes over zones a, b, c; each pod's volume is in one zone, so each pod can go
    // to that zone's three nodes only, whatever the scores say elsewhere.
    let fake = cluster(9);
    for (i, zone) in ["b", "c", "b", "a"].iter().enumerate() {
        let (pv, claim, pod) = (format!("pv-{i}"), format!("data-{i}"), format!("db-{i}"));
        fake.insert(zonal_volume(&pv, zone, &claim)).unwrap();
        fake.insert(bound_claim(&claim, &pv)).unwrap();
        fake.insert(pod_with_claim(&pod, &claim)).unwrap();
    }
    let running = start(&fake, options(false, "a"));
    eventually(Duration::from_secs(20), "every pod bound", || async {
        all_bound(&fake)
    })
    .await;
    running.shutdown().await.unwrap();
    for (i, zone) in ["b", "c", "b", "a"].iter().enumerate() {
        assert_eq!(
            zone_of(&fake, &format!("db-{i}")).as_deref(),
            Some(*zone),
            "{:?}",
            placements(&fake)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_waits_for_its_claim_and_follows_the_volume_once_it_exists() {
    let fake = cluster(6);
    fake.insert(pod_with_claim("late", "late-data")).unwrap();
    let running = start(&fake, options(false, "a"));
    // Without its claim the pod is unschedulable (`persistentvolumeclaim "late-data" not
    // found`), so it stays pending.
    eventually(Duration::from_secs(10), "a failed attempt", || async {
        running
            .handle()
            .metrics()
            .encode()
            .contains("scheduler_schedule_attempts_total{result=\"unschedulable\"")
    })
    .await;
    assert_eq!(placements(&fake)["default/late"], None);
    fake.insert(zonal_volume("pv-late", "c", "late-data"))
        .unwrap();
    fake.insert(bound_claim("late-data", "pv-late")).unwrap();
    eventually(Duration::from_secs(20), "the pod bound", || async {
        all_bound(&fake)
    })
    .await;
    running.shutdown().await.unwrap();
    assert_eq!(zone_of(&fake, "late").as_deref(), Some("c"));
}
