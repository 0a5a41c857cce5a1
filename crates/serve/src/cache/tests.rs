//! The live cache's event handling on its own, without a watcher: a pod bound before
//! its node arrives is parked and added with the node, a relist removes what it no longer
//! names, and a nomination to a node that is gone is reported once.

use super::{LiveCache, Update};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::runtime::watcher::Event;
use std::time::Duration;
use topospread::{Features, Scheduler, SchedulerConfig, Snapshot};

fn cache() -> LiveCache {
    let mut snapshot = Snapshot::new();
    let scheduler = Scheduler::new(
        &SchedulerConfig::default(),
        Features::default(),
        &mut snapshot,
    )
    .expect("the default profile builds");
    LiveCache::new(snapshot, scheduler)
}

fn node(name: &str) -> Node {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "uid": format!("uid-{name}"),
                     "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    }))
    .expect("a node")
}

fn pod(name: &str, node: Option<&str>, nominated: Option<&str>) -> Pod {
    let mut spec = serde_json::json!({"containers": [{"name": "c", "image": "i"}]});
    if let Some(n) = node {
        spec["nodeName"] = n.into();
    }
    let mut status =
        serde_json::json!({"phase": if node.is_some() { "Running" } else { "Pending" }});
    if let Some(n) = nominated {
        status["nominatedNodeName"] = n.into();
    }
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")},
        "spec": spec,
        "status": status
    }))
    .expect("a pod")
}

const NOW: Duration = Duration::from_secs(1);

/// Every kind listed once, empty, so the cache counts as synced.
fn list_everything(c: &mut LiveCache) {
    c.apply(Update::Pod(Event::Init), NOW);
    c.apply(Update::Pod(Event::InitDone), NOW);
    c.apply(Update::Node(Event::Init), NOW);
    c.apply(Update::Node(Event::InitDone), NOW);
    c.apply(Update::Service(Event::InitDone), NOW);
    c.apply(Update::ReplicationController(Event::InitDone), NOW);
    c.apply(Update::ReplicaSet(Event::InitDone), NOW);
    c.apply(Update::StatefulSet(Event::InitDone), NOW);
    c.apply(Update::PodDisruptionBudget(Event::InitDone), NOW);
    c.apply(Update::PriorityClass(Event::InitDone), NOW);
    c.apply(Update::Namespace(Event::InitDone), NOW);
    c.apply(Update::PersistentVolumeClaim(Event::InitDone), NOW);
    c.apply(Update::PersistentVolume(Event::InitDone), NOW);
    c.apply(Update::StorageClass(Event::InitDone), NOW);
    c.apply(Update::CsiNode(Event::InitDone), NOW);
}

#[test]
fn a_pod_bound_before_its_node_arrives_is_parked_then_added_with_the_node() {
    let mut c = cache();
    c.apply(
        Update::Pod(Event::Apply(pod("web-0", Some("n1"), None))),
        NOW,
    );
    assert_eq!(c.parked_pods(), 1);
    assert!(c.snapshot.pod_by_uid("uid-web-0").is_none());
    c.apply(Update::Node(Event::Apply(node("n1"))), NOW);
    assert_eq!(c.parked_pods(), 0);
    let id = c
        .snapshot
        .pod_by_uid("uid-web-0")
        .expect("added with its node");
    let on = c
        .snapshot
        .pod_node(id)
        .map(|n| c.snapshot.node(n).node.name.to_string());
    assert_eq!(on.as_deref(), Some("n1"));
}

#[test]
fn a_parked_pod_deleted_before_its_node_arrives_is_forgotten() {
    let mut c = cache();
    c.apply(
        Update::Pod(Event::Apply(pod("web-0", Some("n1"), None))),
        NOW,
    );
    c.apply(
        Update::Pod(Event::Delete(pod("web-0", Some("n1"), None))),
        NOW,
    );
    assert_eq!(c.parked_pods(), 0);
    c.apply(Update::Node(Event::Apply(node("n1"))), NOW);
    assert!(c.snapshot.pod_by_uid("uid-web-0").is_none());
}

#[test]
fn a_relist_removes_what_it_no_longer_names() {
    let mut c = cache();
    for n in ["n1", "n2"] {
        c.apply(Update::Node(Event::Apply(node(n))), NOW);
    }
    c.apply(Update::Pod(Event::Apply(pod("a", Some("n1"), None))), NOW);
    c.apply(Update::Pod(Event::Apply(pod("b", Some("n2"), None))), NOW);
    assert!(!c.synced());
    // A relist after a 410: n2 and pod b are gone from the cluster.
    c.apply(Update::Node(Event::Init), NOW);
    c.apply(Update::Node(Event::InitApply(node("n1"))), NOW);
    c.apply(Update::Node(Event::InitDone), NOW);
    c.apply(Update::Pod(Event::Init), NOW);
    c.apply(
        Update::Pod(Event::InitApply(pod("a", Some("n1"), None))),
        NOW,
    );
    c.apply(Update::Pod(Event::InitDone), NOW);
    assert!(c.snapshot.node_id("n1").is_some());
    assert!(c.snapshot.node_id("n2").is_none());
    assert!(c.snapshot.pod_by_uid("uid-a").is_some());
    assert!(c.snapshot.pod_by_uid("uid-b").is_none());
}

#[test]
fn a_nomination_to_a_node_that_is_gone_is_reported_once_and_only_when_synced() {
    let mut c = cache();
    c.apply(Update::Node(Event::Apply(node("n1"))), NOW);
    c.apply(Update::Pod(Event::Apply(pod("p", None, Some("gone")))), NOW);
    c.apply(Update::Pod(Event::Apply(pod("q", None, Some("n1")))), NOW);
    // Before every kind is listed, the node may just not have arrived yet.
    assert!(c.stale_nominations(None).is_empty());
    list_everything(&mut c);
    // The relists above named nothing; add the pods and node back as a watch would.
    c.apply(Update::Node(Event::Apply(node("n1"))), NOW);
    c.apply(Update::Pod(Event::Apply(pod("p", None, Some("gone")))), NOW);
    c.apply(Update::Pod(Event::Apply(pod("q", None, Some("n1")))), NOW);
    assert!(c.synced());
    let stale: Vec<String> = c
        .stale_nominations(None)
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(stale, ["p"]);
    assert!(c.stale_nominations(None).is_empty(), "reported once");
    // Once the field is cleared and set again, it is reported again.
    c.apply(Update::Pod(Event::Apply(pod("p", None, None))), NOW);
    c.apply(
        Update::Pod(Event::Apply(pod("p", None, Some("gone-too")))),
        NOW,
    );
    let again: Vec<String> = c
        .stale_nominations(Some("uid-p"))
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(again, ["p"]);
}
