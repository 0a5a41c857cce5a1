//! Every request serve makes in a run (caches, binds, conditions, events, preemption,
//! leader election, graceful release) is allowed by deploy/rbac.yaml.

use std::time::Duration;

use serde_json::{Value, json};
use topospread_fakeapi::RequestRecord;

use crate::support::*;

/// A rule of a (Cluster)Role, and the namespace it applies in (`None`: every one).
struct Rule {
    namespace: Option<String>,
    groups: Vec<String>,
    resources: Vec<String>,
    verbs: Vec<String>,
    names: Vec<String>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

fn rules() -> Vec<Rule> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/rbac.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    let mut out = Vec::new();
    for d in docs {
        let namespace = match d["kind"].as_str() {
            Some("ClusterRole") => None,
            Some("Role") => Some(d["metadata"]["namespace"].as_str().unwrap().to_string()),
            _ => continue,
        };
        for r in d["rules"].as_array().unwrap() {
            out.push(Rule {
                namespace: namespace.clone(),
                groups: strings(&r["apiGroups"]),
                resources: strings(&r["resources"]),
                verbs: strings(&r["verbs"]),
                names: strings(&r["resourceNames"]),
            });
        }
    }
    out
}

fn allowed(rules: &[Rule], r: &RequestRecord) -> bool {
    let Some(resource) = r.rbac_resource() else {
        // Non-resource URLs (discovery) are open to every authenticated user.
        return true;
    };
    let group = r.group.clone().unwrap_or_default();
    rules.iter().any(|rule| {
        rule.namespace
            .as_ref()
            .is_none_or(|ns| r.namespace.as_ref() == Some(ns))
            && rule.groups.iter().any(|g| *g == group || g == "*")
            && rule.resources.iter().any(|x| *x == resource || x == "*")
            && rule.verbs.iter().any(|v| *v == r.verb || v == "*")
            && (rule.names.is_empty() || r.name.as_ref().is_some_and(|n| rule.names.contains(n)))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_is_allowed_by_the_cluster_role() {
    let fake = cluster(3);
    fake.insert(
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "high"}, "value": 1000}),
    )
    .unwrap();
    fake.insert(node("small", "a", "1")).unwrap();
    for i in 0..6 {
        fake.insert(spread_pod(&format!("p-{i}"), "p")).unwrap();
    }
    let mut stuck = spread_pod("stuck", "stuck");
    stuck["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    fake.insert(stuck).unwrap();
    // A preemption: a low-priority pod fills "small", a high-priority one wants it.
    fake.insert(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "low", "namespace": "default"},
        "spec": {"nodeName": "small", "containers": [{"name": "c", "image": "x",
            "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Running"}}))
        .unwrap();
    fake.insert(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "high", "namespace": "default"},
        "spec": {"schedulerName": SCHEDULER, "priorityClassName": "high",
            "nodeSelector": {"kubernetes.io/hostname": "small"},
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}))
        .unwrap();
    fake.clear_requests();

    let running = start(&fake, options(true, "rbac"));
    eventually(
        Duration::from_secs(20),
        "pods bound, the preemptor included",
        || async {
            placements(&fake)
                .iter()
                .all(|(name, node)| name == "default/stuck" || node.is_some())
                && fake.get("pods", "default", "low").unwrap().is_none()
        },
    )
    .await;
    eventually(
        Duration::from_secs(10),
        "FailedScheduling recorded",
        || async {
            fake.list("events.events.k8s.io", Some("default"))
                .unwrap()
                .iter()
                .any(|e| e["reason"] == "FailedScheduling")
        },
    )
    .await;
    running.shutdown().await.unwrap();

    let rules = rules();
    let requests = fake.requests();
    let mut seen = std::collections::BTreeSet::new();
    for r in &requests {
        seen.insert((r.verb.clone(), r.rbac_resource().unwrap_or_default()));
        assert!(
            allowed(&rules, r),
            "deploy/rbac.yaml does not allow {} {} ({} {}?{})",
            r.verb,
            r.rbac_resource().unwrap_or_default(),
            r.method,
            r.path,
            r.query
        );
    }
    // The run exercised what the role grants.
    for needed in [
        ("create", "pods/binding"),
        ("patch", "pods/status"),
        ("delete", "pods"),
        ("create", "events"),
        ("update", "leases"),
        ("watch", "pods"),
    ] {
        assert!(
            seen.contains(&(needed.0.to_string(), needed.1.to_string())),
            "the run made no {needed:?} request: {seen:?}"
        );
    }
}
