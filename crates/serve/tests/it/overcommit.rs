//! Two schedulers, one node: a pod another scheduler binds onto room topospread already
//! gave away is noticed, logged and counted (`topospread_node_overcommits_total`).

use std::time::Duration;

use serde_json::json;

use crate::support::*;

fn overcommits(running: &topospread_serve::Running) -> Option<u64> {
    running
        .handle()
        .metrics()
        .encode()
        .lines()
        .find_map(|l| l.strip_prefix("topospread_node_overcommits_total "))
        .and_then(|v| v.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_another_scheduler_binds_over_the_nodes_room_is_counted() {
    let fake = topospread_fakeapi::FakeApi::new();
    fake.insert(node("only", "a", "1")).unwrap();
    let mut mine = spread_pod("mine", "mine");
    mine["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("600m");
    fake.insert(mine).unwrap();
    let running = start(&fake, options(false, "overcommit"));
    eventually(Duration::from_secs(10), "mine bound", || async {
        all_bound(&fake)
    })
    .await;
    assert_eq!(overcommits(&running), Some(0));

    // Another scheduler binds 600m onto the same 1-cpu node.
    fake.insert(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "theirs", "namespace": "default"},
        "spec": {"schedulerName": "default-scheduler", "nodeName": "only",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "600m"}}}]},
        "status": {"phase": "Running"}}))
        .unwrap();
    eventually(
        Duration::from_secs(10),
        "the overcommit counted",
        || async { overcommits(&running) == Some(1) },
    )
    .await;

    // A pod arriving on a node already over did not cross the line: not counted again.
    fake.insert(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "small", "namespace": "default"},
        "spec": {"schedulerName": "default-scheduler", "nodeName": "only",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]},
        "status": {"phase": "Running"}}))
        .unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(overcommits(&running), Some(1));
    running.shutdown().await.unwrap();
}
