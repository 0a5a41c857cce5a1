//! Least privilege by component: every request serve makes in a run (caches, binds,
//! conditions, events, preemption, leader election, graceful release) is allowed by the
//! base's deploy/rbac.yaml and the run uses every grant it holds; every request of the
//! guard is allowed by the base with deploy/components/guard, and the guard uses every
//! grant the component adds (none of which the base holds).

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

/// The base's RBAC (the scheduler alone).
const BASE: &str = "deploy/rbac.yaml";
/// What the guard component adds.
const GUARD: &str = "deploy/components/guard/rbac.yaml";

/// The rules of the (Cluster)Roles in `file` (relative to the repository).
fn rules(file: &str) -> Vec<Rule> {
    let path = format!("{}/../../{file}", env!("CARGO_MANIFEST_DIR"));
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

/// Whether `rule` allows `r` (a non-resource URL never: those are open to every
/// authenticated user, see [`allowed`]).
fn grants(rule: &Rule, r: &RequestRecord) -> bool {
    let Some(resource) = r.rbac_resource() else {
        return false;
    };
    let group = r.group.clone().unwrap_or_default();
    rule.namespace
        .as_ref()
        .is_none_or(|ns| r.namespace.as_ref() == Some(ns))
        && rule.groups.iter().any(|g| *g == group || g == "*")
        && rule.resources.iter().any(|x| *x == resource || x == "*")
        && rule.verbs.iter().any(|v| *v == r.verb || v == "*")
        && (rule.names.is_empty() || r.name.as_ref().is_some_and(|n| rule.names.contains(n)))
}

fn allowed(rules: &[Rule], r: &RequestRecord) -> bool {
    // Non-resource URLs (discovery) are open to every authenticated user.
    r.rbac_resource().is_none() || rules.iter().any(|rule| grants(rule, r))
}

/// Asserts every request `fake` recorded is allowed by the rules of `files`, and returns
/// the requests and the (verb, resource) pairs seen.
fn every_request_allowed(
    fake: &topospread_fakeapi::FakeApi,
    files: &[&str],
) -> (
    Vec<RequestRecord>,
    std::collections::BTreeSet<(String, String)>,
) {
    let rules: Vec<Rule> = files.iter().flat_map(|f| rules(f)).collect();
    let requests = fake.requests();
    let mut seen = std::collections::BTreeSet::new();
    for r in &requests {
        seen.insert((r.verb.clone(), r.rbac_resource().unwrap_or_default()));
        assert!(
            allowed(&rules, r),
            "{files:?} do not allow {} {} ({} {}?{})",
            r.verb,
            r.rbac_resource().unwrap_or_default(),
            r.method,
            r.path,
            r.query
        );
    }
    (requests, seen)
}

/// Each single grant (group, resource, verb) of `file`'s rules, with the rule it comes
/// from narrowed to it.
fn single_grants(file: &str) -> Vec<(String, Rule)> {
    let mut out = Vec::new();
    for rule in rules(file) {
        for g in &rule.groups {
            for res in &rule.resources {
                for v in &rule.verbs {
                    out.push((
                        format!("{v} {res} (group {g:?}, names {:?})", rule.names),
                        Rule {
                            namespace: rule.namespace.clone(),
                            groups: vec![g.clone()],
                            resources: vec![res.clone()],
                            verbs: vec![v.clone()],
                            names: rule.names.clone(),
                        },
                    ));
                }
            }
        }
    }
    out
}

/// Asserts every grant of `file` allowed at least one of `requests`, but for `unused`
/// (`verb resource` pairs a run cannot be made to need, each with why).
fn every_grant_used(file: &str, requests: &[RequestRecord], unused: &[(&str, &str)]) {
    for (name, grant) in single_grants(file) {
        let needed = requests.iter().any(|r| grants(&grant, r));
        let excused = unused
            .iter()
            .any(|(pair, _)| name.starts_with(&format!("{pair} ")));
        assert!(
            needed || excused,
            "{file} grants {name}, which the run never needed"
        );
    }
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

    let (requests, seen) = every_request_allowed(&fake, &[BASE]);
    every_grant_used(
        BASE,
        &requests,
        &[(
            "patch events",
            "a repeated event's series; one run records each event once",
        )],
    );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_of_the_guard_is_allowed_by_the_roles() {
    let fake = cluster(6);
    fake.insert(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default", "uid": "uid-web"},
        "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}))
        .unwrap();
    // Zone a's two pods share n00, so the controller's own order would empty zone a
    // first: the guard has costs to write.
    let placed = [
        ("web-a", "n00"),
        ("web-b", "n00"),
        ("web-c", "n01"),
        ("web-d", "n04"),
        ("web-e", "n02"),
        ("web-f", "n05"),
    ];
    for (name, node) in placed {
        fake.insert(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"},
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                    "uid": "uid-web", "controller": true}]},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}],
                "topologySpreadConstraints": [{"maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}}}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True",
                "lastTransitionTime": "2026-01-01T00:01:00Z"}]}}))
        .unwrap();
    }
    fake.clear_requests();

    let client = kube::Client::new(fake.router(), "default");
    let mut options = topospread_serve::guard::GuardOptions::new(config(false));
    options.identity = "rbac".into();
    let lease = topospread_serve::LeaseConfig {
        namespace: "topospread-system".into(),
        name: topospread_serve::guard::GUARD_LEASE_NAME.into(),
        identity: "rbac".into(),
        lease_duration: Duration::from_secs(15),
        renew_deadline: Duration::from_secs(10),
        retry_period: Duration::from_secs(2),
    };
    let metrics = std::sync::Arc::new(topospread_serve::Metrics::new());
    let guard = topospread_serve::guard::start_guard(client, options, Some(lease), metrics);
    eventually(
        Duration::from_secs(20),
        "deletion costs written",
        || async {
            placed.iter().any(|(p, _)| {
                fake.get("pods", "default", p).unwrap().unwrap()["metadata"]["annotations"]
                ["controller.kubernetes.io/pod-deletion-cost"]
                .is_string()
            })
        },
    )
    .await;
    guard.shutdown().await;

    let (requests, seen) = every_request_allowed(&fake, &[BASE, GUARD]);
    // The component's grants are the guard's: it needs each, and the base holds none.
    every_grant_used(GUARD, &requests, &[]);
    let base = rules(BASE);
    for (name, grant) in single_grants(GUARD) {
        assert!(
            requests
                .iter()
                .any(|r| grants(&grant, r) && !allowed(&base, r)),
            "{GUARD} grants {name}, which {BASE} already allows"
        );
    }
    for needed in [
        ("patch", "pods"),
        ("create", "leases"),
        ("watch", "replicasets"),
    ] {
        assert!(
            seen.contains(&(needed.0.to_string(), needed.1.to_string())),
            "the guard made no {needed:?} request: {seen:?}"
        );
    }
}
