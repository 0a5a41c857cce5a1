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

/// A client on `fake` that, on the first PATCH of pod `web-a`, changes that pod in the
/// store first: the pod changed between the guard's list and its patch.
fn racing_client(fake: &FakeApi) -> kube::Client {
    use std::sync::atomic::{AtomicBool, Ordering};
    use tower::ServiceExt as _;
    let router = fake.router();
    let store = fake.clone();
    let raced = Arc::new(AtomicBool::new(false));
    let service = tower::service_fn(move |req: axum::http::Request<kube::client::Body>| {
        let router = router.clone();
        if req.method() == axum::http::Method::PATCH
            && req.uri().path() == "/api/v1/namespaces/default/pods/web-a"
            && !raced.swap(true, Ordering::SeqCst)
        {
            store
                .modify("pods", "default", "web-a", |p| {
                    p["metadata"]["labels"]["touched"] = json!("yes");
                })
                .unwrap();
        }
        router.oneshot(req)
    });
    kube::Client::new(service, "default")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_changed_since_the_plan_conflicts_and_is_planned_again() {
    let fake = crowded(false);
    let mut options = GuardOptions::new(config(false));
    options.identity = "guard-test".into();
    options.limits = ClientLimits::UNLIMITED;
    let mut g = Guard::new(racing_client(&fake), options, Arc::new(Metrics::new()));
    let first = g.pass().await.unwrap();
    // web-a's patch carried the resourceVersion the plan read; the pod changed since.
    let conflicted: Vec<&str> = first.conflicts.iter().map(|p| p.pod.as_str()).collect();
    assert_eq!(conflicted, ["web-a"], "{first:?}");
    assert!(first.conflicts[0].resource_version.is_some());
    assert!(
        first.failed.is_empty(),
        "a conflict is no failure: {first:?}"
    );
    assert_eq!(first.written.len(), 5);
    assert!(annotations(&fake, "web-a").get(COST).is_none());
    let log = fake.requests();
    let patches = log
        .iter()
        .filter(|r| r.verb == "patch" && r.path.ends_with("/pods/web-a"))
        .count();
    assert_eq!(patches, 1, "no blind retry with a fresh version");
    // No back-off: the next pass plans from the pods as they are. The five costs
    // written already keep every scale-in within maxSkew, so web-a needs none now.
    let second = g.pass().await.unwrap();
    assert!(
        second.deferred.is_empty() && second.failed.is_empty() && second.conflicts.is_empty(),
        "{second:?}"
    );
    let rs = &second.plan.replica_sets[0];
    assert_eq!(rs.pods, 6);
    assert_eq!(rs.constraints[0].after_one, Some(1), "{rs:?}");
    assert_eq!(rs.constraints[0].after_half, Some(0), "{rs:?}");
    // Whatever it writes carries the versions it read: nothing conflicts.
    let now = fake.get("pods", "default", "web-a").unwrap().unwrap();
    for p in second.written.iter().filter(|p| p.pod == "web-a") {
        assert_eq!(
            p.resource_version.as_deref(),
            now["metadata"]["resourceVersion"].as_str()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fake_refuses_a_merge_patch_with_a_stale_resource_version() {
    let fake = crowded(false);
    let client = kube::Client::new(fake.router(), "default");
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = kube::Api::default_namespaced(client);
    let rv = fake.get("pods", "default", "web-b").unwrap().unwrap()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    fake.modify("pods", "default", "web-b", |p| {
        p["metadata"]["labels"]["touched"] = json!("yes");
    })
    .unwrap();
    let patch = json!({"metadata": {"resourceVersion": rv, "annotations": {COST: "1"}}});
    let err = pods
        .patch(
            "web-b",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(patch),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err}");
    };
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        status.message,
        "Operation cannot be fulfilled on pods \"web-b\": the object has been modified; please apply your changes to the latest version and try again"
    );
    assert!(annotations(&fake, "web-b").get(COST).is_none());
}
