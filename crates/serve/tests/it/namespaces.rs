//! Namespaces are watched: pod affinity's `namespaceSelector` sees their labels live,
//! and a relabelled namespace is seen by the next pod.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

fn namespace(name: &str, team: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "labels": {"team": team}}})
}

/// A running `db` pod of namespace `ns`, bound to `node`.
fn db(ns: &str, node: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "db", "namespace": ns, "labels": {"app": "db"}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "db"}]},
        "status": {"phase": "Running"}})
}

/// A pending pod in `default` that must share a zone with a `db` pod of a namespace
/// labelled `team: b`.
fn follower(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulerName": SCHEDULER,
            "containers": [{"name": "c", "image": "nginx"}],
            "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": "db"}},
                "namespaceSelector": {"matchLabels": {"team": "b"}},
                "topologyKey": "topology.kubernetes.io/zone"}]}}}})
}

fn zone_of(fake: &topospread_fakeapi::FakeApi, pod: &str) -> Option<String> {
    let node = placements(fake).get(&format!("default/{pod}")).cloned()??;
    let node = fake.get("nodes", "", &node).unwrap()?;
    node["metadata"]["labels"]["topology.kubernetes.io/zone"]
        .as_str()
        .map(str::to_string)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_selector_affinity_follows_namespace_labels() {
    // n00, n03, n06 in zone a; n01, n04, n07 in b; n02, n05, n08 in c.
    let fake = cluster(9);
    fake.insert(namespace("team-a", "a")).unwrap();
    fake.insert(namespace("team-b", "b")).unwrap();
    fake.insert(db("team-a", "n00")).unwrap();
    fake.insert(db("team-b", "n01")).unwrap();
    fake.insert(follower("first")).unwrap();
    let running = start(&fake, options(false, "a"));
    eventually(Duration::from_secs(20), "first bound", || async {
        zone_of(&fake, "first").is_some()
    })
    .await;
    assert_eq!(zone_of(&fake, "first").as_deref(), Some("b"));

    // Swap the teams: the next follower goes where team-a's db runs.
    fake.insert(namespace("team-c", "c")).unwrap();
    fake.modify("namespaces", "", "team-b", |ns| {
        ns["metadata"]["labels"]["team"] = json!("x");
    })
    .unwrap();
    fake.modify("namespaces", "", "team-a", |ns| {
        ns["metadata"]["labels"]["team"] = json!("b");
    })
    .unwrap();
    eventually(Duration::from_secs(20), "the relabel seen", || async {
        let view = running.handle().cache_view().await;
        view.is_some_and(|v| {
            v.namespaces
                .get("team-a")
                .and_then(|l| l.get("team"))
                .map(String::as_str)
                == Some("b")
        })
    })
    .await;
    fake.insert(follower("second")).unwrap();
    eventually(Duration::from_secs(20), "second bound", || async {
        zone_of(&fake, "second").is_some()
    })
    .await;
    assert_eq!(zone_of(&fake, "second").as_deref(), Some("a"));
    running.shutdown().await.unwrap();
}
