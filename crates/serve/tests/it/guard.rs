//! The live guard against the fake API server: it patches the pods whose cost must
//! change, a second pass patches nothing, a user's own cost is left alone, a dry run
//! writes nothing, a failed patch backs off, and an event lands on the ReplicaSet.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use topospread_fakeapi::{FakeApi, Faults};
use topospread_serve::guard::{DELETION_COST_UPDATED, Guard, GuardOptions};
use topospread_serve::{ClientLimits, Metrics};

use crate::support::*;

const COST: &str = "controller.kubernetes.io/pod-deletion-cost";
const MANAGED: &str = "topospread.io/deletion-cost-managed";

/// A running, ready pod of ReplicaSet `web` on `node`, spread over zones.
fn web_pod(name: &str, node: &str, cost: Option<&str>) -> Value {
    let mut p = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"},
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                "uid": "uid-web", "controller": true}]},
        "spec": {"nodeName": node,
            "containers": [{"name": "c", "image": "nginx",
                "resources": {"requests": {"cpu": "100m"}}}],
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                 "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True",
            "lastTransitionTime": "2026-01-01T00:01:00Z"}]}});
    if let Some(c) = cost {
        p["metadata"]["annotations"] = json!({COST: c});
    }
    p
}

/// Zones a (n00, n03), b (n01, n04) and c (n02, n05); zone a's two pods share
/// n00, so the controller's co-location rank alone would empty zone a first.
fn crowded(user_cost_on_c: bool) -> FakeApi {
    let fake = cluster(6);
    fake.insert(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default", "uid": "uid-web"},
        "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}))
        .unwrap();
    for (name, node) in [
        ("web-a", "n00"),
        ("web-b", "n00"),
        ("web-c", "n01"),
        ("web-d", "n04"),
        ("web-e", "n02"),
        ("web-f", "n05"),
    ] {
        let cost = (user_cost_on_c && name == "web-c").then_some("7");
        fake.insert(web_pod(name, node, cost)).unwrap();
    }
    fake
}

fn guard(fake: &FakeApi, dry_run: bool) -> (Guard, Arc<Metrics>) {
    let client = kube::Client::new(fake.router(), "default");
    let mut options = GuardOptions::new(config(false));
    options.dry_run = dry_run;
    options.identity = "guard-test".into();
    options.limits = ClientLimits::UNLIMITED;
    let metrics = Arc::new(Metrics::new());
    (Guard::new(client, options, metrics.clone()), metrics)
}

fn annotations(fake: &FakeApi, pod: &str) -> Value {
    let p = fake.get("pods", "default", pod).unwrap().unwrap();
    p["metadata"]["annotations"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_patches_once_and_then_leaves_the_costs_alone() {
    let fake = crowded(false);
    let (mut g, metrics) = guard(&fake, false);
    let first = g.pass().await.unwrap();
    assert_eq!(first.written.len(), 6, "{:?}", first.plan);
    assert!(first.failed.is_empty());
    for pod in ["web-a", "web-b", "web-c", "web-d", "web-e", "web-f"] {
        let a = annotations(&fake, pod);
        assert!(a[COST].is_string(), "{pod}: {a}");
        assert_eq!(a[COST], a[MANAGED], "{pod}: {a}");
    }
    let rs = &first.plan.replica_sets[0];
    assert_eq!(rs.constraints[0].after_half, Some(0));
    assert_eq!(rs.constraints[0].unguarded_after_half, Some(2));
    let text = metrics.encode();
    assert!(text.contains("topospread_guard_patches_total 6"), "{text}");
    assert!(
        text.contains("topospread_guard_predicted_skew{namespace=\"default\",replicaset=\"web\",topology_key=\"topology.kubernetes.io/zone\",scale_in=\"half\"} 0"),
        "{text}"
    );
    // Minimal churn: the second pass finds nothing to change.
    let second = g.pass().await.unwrap();
    assert!(second.written.is_empty(), "{:?}", second.written);
    // The event on the ReplicaSet.
    eventually(
        Duration::from_secs(10),
        "the DeletionCostUpdated event",
        || async {
            let events = fake
                .list("events.events.k8s.io", Some("default"))
                .unwrap_or_default();
            events.iter().any(|e| {
                e["reason"] == DELETION_COST_UPDATED
                    && e["regarding"]["kind"] == "ReplicaSet"
                    && e["regarding"]["name"] == "web"
            })
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_own_cost_is_left_alone() {
    let fake = crowded(true);
    let (mut g, _) = guard(&fake, false);
    let pass = g.pass().await.unwrap();
    assert!(pass.written.iter().all(|p| p.pod != "web-c"));
    assert_eq!(pass.plan.replica_sets[0].user_costs, ["web-c"]);
    let a = annotations(&fake, "web-c");
    assert_eq!(a[COST], "7");
    assert!(a.get(MANAGED).is_none(), "{a}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_writes_nothing() {
    let fake = crowded(false);
    let (mut g, metrics) = guard(&fake, true);
    let pass = g.pass().await.unwrap();
    assert_eq!(pass.written.len(), 6);
    for pod in ["web-a", "web-f"] {
        assert!(annotations(&fake, pod).get(COST).is_none(), "{pod}");
    }
    assert!(
        metrics
            .encode()
            .contains("topospread_guard_patches_total 0")
    );
    assert!(
        fake.list("events.events.k8s.io", Some("default"))
            .unwrap()
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_patch_backs_off() {
    let fake = crowded(false);
    let (mut g, _) = guard(&fake, false);
    fake.set_faults(Faults::seeded(1).fail_requests(Some("patch"), Some("pods"), 1.0));
    let first = g.pass().await.unwrap();
    assert_eq!(first.failed.len(), 6);
    // At once again: every pod is still backing off, nothing is tried.
    let second = g.pass().await.unwrap();
    assert!(second.failed.is_empty() && second.written.is_empty());
    assert_eq!(second.deferred.len(), 6);
    fake.clear_faults();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let third = g.pass().await.unwrap();
    assert_eq!(third.written.len(), 6, "{:?}", third.failed);
}
