//! Preemption in the live loop holds the room it makes (issue #28): a controller
//! recreates every evicted pod at once, and neither those replacements nor a second
//! preemptor may take a nominated node's room.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::runtime::watcher;
use serde_json::{Value, json};
use topospread_fakeapi::FakeApi;

use crate::support::*;

fn high_class(fake: &FakeApi) {
    fake.insert(
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "high"}, "value": 1000}),
    )
    .unwrap();
}

/// A low-priority (0) 3-CPU pod of the `low` workload, bound to `node` when given.
fn low(name: &str, node: Option<&str>) -> Value {
    let mut p = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "low"}},
        "spec": {"schedulerName": SCHEDULER, "containers": [{"name": "c", "image": "x",
            "resources": {"requests": {"cpu": "3"}}}]}});
    if let Some(n) = node {
        p["spec"]["nodeName"] = json!(n);
        p["status"] = json!({"phase": "Running"});
    }
    p
}

/// A high-priority 3-CPU pod spread over zones (maxSkew 1, DoNotSchedule).
fn high(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "high"}},
        "spec": {"schedulerName": SCHEDULER, "priorityClassName": "high",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "3"}}}],
            "topologySpreadConstraints": [{"maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "high"}}}]}})
}

fn pod(fake: &FakeApi, name: &str) -> Option<Value> {
    fake.get("pods", "default", name).unwrap()
}

/// Plays the ReplicaSet of the `low` pods: each deletion is answered by a new pending
/// replacement. Returns the deleted pods as last seen.
fn replica_set(fake: &FakeApi) -> Arc<Mutex<Vec<Pod>>> {
    let deleted = Arc::new(Mutex::new(Vec::new()));
    let (fake, out) = (fake.clone(), deleted.clone());
    tokio::spawn(async move {
        let client = kube::Client::new(fake.router(), "default");
        let api: Api<Pod> = Api::namespaced(client, "default");
        let mut events = std::pin::pin!(watcher::watcher(
            api,
            watcher::Config::default().labels("app=low")
        ));
        let mut n = 0;
        while let Some(e) = events.next().await {
            if let Ok(watcher::Event::Delete(p)) = e {
                out.lock().unwrap().push(p);
                fake.insert(low(&format!("low-r{n}"), None)).unwrap();
                n += 1;
            }
        }
    });
    deleted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preemption_evicts_the_minimum_and_holds_the_room_against_replacements() {
    let fake = FakeApi::new();
    high_class(&fake);
    for i in 0..15 {
        let name = format!("n{i:02}");
        fake.insert(node(&name, ["a", "b", "c"][i % 3], "4"))
            .unwrap();
        fake.insert(low(&format!("low-{i:02}"), Some(&name)))
            .unwrap();
    }
    let deleted = replica_set(&fake);
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Samples the server while it runs: a node nominated to two unbound preemptors at
    // once, or a node holding more than its 4 CPU, is recorded.
    let violations = Arc::new(Mutex::new(Vec::<String>::new()));
    let monitor = {
        let (fake, violations) = (fake.clone(), violations.clone());
        tokio::spawn(async move {
            loop {
                let pods = fake.list("pods", Some("default")).unwrap();
                let mut nominated: BTreeMap<String, Vec<String>> = BTreeMap::new();
                let mut cpu: BTreeMap<String, u32> = BTreeMap::new();
                for p in &pods {
                    let name = p["metadata"]["name"].as_str().unwrap().to_string();
                    match (
                        p["spec"]["nodeName"].as_str(),
                        p["status"]["nominatedNodeName"].as_str(),
                    ) {
                        (Some(n), _) => *cpu.entry(n.to_string()).or_default() += 3,
                        (None, Some(n)) if name.starts_with("high") => {
                            nominated.entry(n.to_string()).or_default().push(name)
                        }
                        _ => {}
                    }
                }
                {
                    let mut v = violations.lock().unwrap();
                    v.extend(
                        nominated
                            .iter()
                            .filter(|(_, ps)| ps.len() > 1)
                            .map(|(n, ps)| format!("{n} nominated to {ps:?}")),
                    );
                    v.extend(
                        cpu.iter()
                            .filter(|(_, c)| **c > 4)
                            .map(|(n, c)| format!("{n} holds {c} CPU")),
                    );
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    for i in 0..3 {
        fake.insert(high(&format!("high-{i}"))).unwrap();
    }
    let running = start(&fake, options(false, "a"));
    eventually(Duration::from_secs(20), "the preemptors bound", || async {
        (0..3).all(|i| pod(&fake, &format!("high-{i}")).unwrap()["spec"]["nodeName"].is_string())
    })
    .await;
    // Give stray binds and evictions time to show.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    running.shutdown().await.unwrap();
    monitor.abort();

    let violations = violations.lock().unwrap().clone();
    assert!(violations.is_empty(), "{violations:?}");
    let deleted = deleted.lock().unwrap().clone();
    assert_eq!(
        deleted.len(),
        3,
        "victims: {:?}",
        deleted
            .iter()
            .map(|p| p.metadata.name.clone())
            .collect::<Vec<_>>()
    );
    // Each victim got the DisruptionTarget condition before its deletion.
    for v in &deleted {
        let c = v
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == "DisruptionTarget"));
        let Some(c) = c else {
            panic!("{:?} has no DisruptionTarget", v.metadata.name)
        };
        assert_eq!(
            (c.status.as_str(), c.reason.as_deref()),
            ("True", Some("PreemptionByScheduler"))
        );
        assert_eq!(
            c.message.as_deref(),
            Some("topospread: preempting to accommodate a higher priority pod")
        );
    }
    let victim_nodes: BTreeSet<String> = deleted
        .iter()
        .map(|p| p.spec.as_ref().unwrap().node_name.clone().unwrap())
        .collect();
    // The preemptors sit where their victims were, one per zone, each bound once.
    let mut zones = BTreeSet::new();
    let mut high_nodes = BTreeSet::new();
    let counts = fake.binding_counts();
    for i in 0..3 {
        let name = format!("high-{i}");
        let p = pod(&fake, &name).unwrap();
        let node = p["spec"]["nodeName"].as_str().unwrap().to_string();
        let n: usize = node[1..].parse().unwrap();
        zones.insert(["a", "b", "c"][n % 3]);
        high_nodes.insert(node);
        assert_eq!(
            counts.get(&("default".into(), name.clone())),
            Some(&1),
            "{name}"
        );
    }
    assert_eq!(zones.len(), 3);
    assert_eq!(high_nodes, victim_nodes);
    // No replacement took a nominated node's room; none is left nominated.
    for p in fake.list("pods", Some("default")).unwrap() {
        let name = p["metadata"]["name"].as_str().unwrap();
        if name.starts_with("low-r") {
            assert!(p["spec"]["nodeName"].is_null(), "{name} was bound");
            assert!(
                p["status"]["nominatedNodeName"].is_null(),
                "{name} is nominated"
            );
        }
    }
    // `Preempted` on each victim as upstream writes it: the preemptor's UID and the node
    // in the note, the preemptor as related object.
    let events = fake.list("events.events.k8s.io", Some("default")).unwrap();
    let preempted: Vec<&Value> = events
        .iter()
        .filter(|e| e["reason"] == "Preempted")
        .collect();
    assert_eq!(preempted.len(), 3, "{preempted:?}");
    for e in preempted {
        let preemptor = e["related"]["name"].as_str().unwrap();
        let p = pod(&fake, preemptor).unwrap();
        let victim = deleted
            .iter()
            .find(|v| v.metadata.name.as_deref() == e["regarding"]["name"].as_str())
            .unwrap();
        let node = victim.spec.as_ref().unwrap().node_name.clone().unwrap();
        assert_eq!(
            e["note"],
            format!(
                "Preempted by pod {} on node {node}",
                p["metadata"]["uid"].as_str().unwrap()
            )
        );
        assert_eq!(p["spec"]["nodeName"], node.as_str());
        assert_eq!(e["related"]["kind"], "Pod");
    }
}

/// One 2-CPU node `n0` running a low pod whose deletion a finalizer holds (it stays,
/// terminating), and a high-priority pod that preempts it.
async fn preemptor_waiting_on_a_terminating_victim() -> (FakeApi, topospread_serve::Running) {
    let fake = FakeApi::new();
    high_class(&fake);
    fake.insert(node("n0", "a", "2")).unwrap();
    let mut victim = low("victim", Some("n0"));
    victim["metadata"]["finalizers"] = json!(["test/hold"]);
    victim["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("2");
    fake.insert(victim).unwrap();
    let mut p = high("preemptor");
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("2");
    fake.insert(p).unwrap();
    let running = start(&fake, options(false, "a"));
    eventually(
        Duration::from_secs(10),
        "the victim terminating",
        || async {
            pod(&fake, "victim").is_some_and(|v| v["metadata"]["deletionTimestamp"].is_string())
                && pod(&fake, "preemptor").unwrap()["status"]["nominatedNodeName"] == "n0"
        },
    )
    .await;
    (fake, running)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nominated_node_that_disappears_leaves_no_pod_nominated_to_it() {
    let (fake, running) = preemptor_waiting_on_a_terminating_victim().await;
    fake.delete("nodes", "", "n0").unwrap();
    eventually(
        Duration::from_secs(10),
        "the nomination cleared",
        || async { pod(&fake, "preemptor").unwrap()["status"]["nominatedNodeName"].is_null() },
    )
    .await;
    // A new node with room: the preemptor goes there, once.
    fake.insert(node("n1", "a", "2")).unwrap();
    eventually(Duration::from_secs(10), "the preemptor bound", || async {
        pod(&fake, "preemptor").unwrap()["spec"]["nodeName"] == "n1"
    })
    .await;
    running.shutdown().await.unwrap();
    assert_eq!(fake.bindings("default", "preemptor"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preemptor_deleted_mid_preemption_frees_the_room_it_was_promised() {
    let (fake, running) = preemptor_waiting_on_a_terminating_victim().await;
    // A lower-priority pod arrives; the room is promised to the preemptor.
    let mut late = low("late", None);
    late["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("2");
    fake.insert(late).unwrap();
    fake.delete("pods", "default", "preemptor").unwrap();
    fake.modify("pods", "default", "victim", |p| {
        p["metadata"]["finalizers"] = json!([]);
    })
    .unwrap();
    assert!(pod(&fake, "victim").is_none());
    eventually(
        Duration::from_secs(10),
        "the late pod takes the room",
        || async { pod(&fake, "late").unwrap()["spec"]["nodeName"] == "n0" },
    )
    .await;
    running.shutdown().await.unwrap();
    assert_eq!(fake.bindings("default", "late"), 1);
    assert_eq!(fake.bindings("default", "preemptor"), 0);
}
