//! The cluster's release: `/version` read at start-up decides the semantics. On 1.27 to
//! 1.37 a spread constraint with `labelSelector: {}` counts no pod (kubernetes PR
//! 116607); from 1.38 (PR 141340) it counts every pod of the namespace.

use std::time::Duration;

use serde_json::json;
use topospread::version::FeatureGates;
use topospread_fakeapi::FakeApi;
use topospread_serve::{ReleaseSource, choose_release, server_release};

use crate::support::{SCHEDULER, eventually, node, options, start};

/// A cluster of zones a (room) and b (no room), two pods running in zone a, and a
/// pending pod whose zone constraint selects with `labelSelector: {}`.
fn cluster(minor: u32) -> FakeApi {
    let fake = FakeApi::builder().kubernetes_minor(minor).build();
    fake.insert(node("a1", "a", "8")).unwrap();
    fake.insert(node("b1", "b", "100m")).unwrap();
    for i in 0..2 {
        fake.insert(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("running-{i}"), "namespace": "default", "labels": {"app": "other"}},
            "spec": {"nodeName": "a1", "containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Running"}}))
            .unwrap();
    }
    fake.insert(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "empty-selector", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"schedulerName": SCHEDULER,
            "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}],
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}]}}))
    .unwrap();
    fake
}

/// Starts serve as the cluster's release, as `topospread serve` does.
async fn serve_as_cluster(fake: &FakeApi, minor: u32) -> topospread_serve::Running {
    let client = kube::Client::new(fake.router(), "default");
    let release = server_release(&client, "fake").await.unwrap();
    assert_eq!(
        release.git_version,
        format!("v1.{minor}.0-topospread-fakeapi")
    );
    let choice = choose_release(Some(release), None, false, "fake").unwrap();
    assert_eq!(
        (choice.version.minor, choice.source),
        (minor, ReleaseSource::Cluster)
    );
    let gates = FeatureGates::new(choice.version);
    let mut o = options(false, "a");
    o.features = gates.scheduler_features();
    o.request_options = gates.request_options();
    start(fake, o)
}

fn pod(fake: &FakeApi) -> serde_json::Value {
    fake.get("pods", "default", "empty-selector")
        .unwrap()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_32_cluster_gets_1_32_semantics() {
    let fake = cluster(32);
    let running = serve_as_cluster(&fake, 32).await;
    // 1.32 counts no pod for `{}`: zone a holds 0 + 1 against zone b's 0, skew 1.
    eventually(Duration::from_secs(10), "bound to a1", || async {
        pod(&fake)["spec"]["nodeName"] == "a1"
    })
    .await;
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_38_cluster_counts_every_pod_for_an_empty_selector() {
    let fake = cluster(38);
    let running = serve_as_cluster(&fake, 38).await;
    // 1.38 counts both running pods: zone a would hold 3 against zone b's 0.
    eventually(Duration::from_secs(10), "PodScheduled=False", || async {
        pod(&fake)["status"]["conditions"]
            .as_array()
            .is_some_and(|cs| {
                cs.iter().any(|c| {
                    c["type"] == "PodScheduled"
                        && c["reason"] == "Unschedulable"
                        && c["message"].as_str().is_some_and(|m| {
                            m.contains("didn't match pod topology spread constraints")
                        })
                })
            })
    })
    .await;
    assert!(pod(&fake)["spec"]["nodeName"].is_null());
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsupported_cluster_is_refused_unless_forced() {
    let fake = FakeApi::builder().kubernetes_minor(24).build();
    let client = kube::Client::new(fake.router(), "default");
    let release = server_release(&client, "fake").await.unwrap();
    let e = choose_release(Some(release.clone()), None, false, "fake").unwrap_err();
    assert!(
        matches!(
            e,
            topospread_serve::Error::Client(
                topospread_serve::ClientError::UnsupportedRelease { .. }
            )
        ),
        "{e}"
    );
    let forced = choose_release(Some(release), None, true, "fake").unwrap();
    assert_eq!(
        (forced.version.minor, forced.source),
        (25, ReleaseSource::NearestToCluster)
    );
}
