//! `simulate --drain NODE` (cordon and evict, as `kubectl drain`), `--remove-node NODE`
//! and `--lose KEY=VALUE` (nodes deleted before scheduling).

use super::{fixture, run, stderr, stdout};

fn zones() -> String {
    fixture("whatif/zones.yaml")
}

fn json(args: &[&str]) -> (serde_json::Value, i32) {
    let o = run(args);
    let v = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    (v, o.status.code().expect("exit code"))
}

#[test]
fn a_removed_nodes_replicas_land_elsewhere_and_bare_pods_are_lost() {
    let f = zones();
    let (v, code) = json(&["simulate", "-f", &f, "--remove-node", "c1", "-o", "json"]);
    assert_eq!(code, 0, "every replica rescheduled");
    let d = &v["drained"];
    assert_eq!(d["nodes"], serde_json::json!(["c1"]));
    assert_eq!(d["rescheduled"], 1);
    assert_eq!(d["pending"], 0);
    assert_eq!(d["lost"], serde_json::json!(["default/debug"]));
    assert_eq!(d["daemon_pods"], serde_json::json!(["default/logs-x"]));
    // The replacement keeps zone-c at 2: c2 is the only node there and maxSkew holds.
    let pods = v["pods"].as_array().expect("pods");
    assert_eq!(pods.len(), 1);
    assert_eq!(pods[0]["node"], "c2");
    let web = &v["workloads"][0];
    assert_eq!(
        (web["pods"].as_u64(), web["pending"].as_u64()),
        (Some(6), Some(0))
    );
}

#[test]
fn losing_a_zone_leaves_a_min_domains_workload_pending_and_says_why() {
    let f = zones();
    let o = run(&[
        "simulate",
        "-f",
        &f,
        "--lose",
        "topology.kubernetes.io/zone=zone-c",
    ]);
    assert_eq!(o.status.code(), Some(1), "replicas stay Pending");
    let out = stdout(&o);
    assert!(out.contains("Removed 2 node(s): c1, c2"), "{out}");
    assert!(
        out.contains("replicaset/web (namespace default): 2 replaced, 0 rescheduled, 2 pending"),
        "{out}"
    );
    assert!(
        out.contains("cannot satisfy: topology.kubernetes.io/zone minDomains=3: 2 domain(s) left"),
        "{out}"
    );
    let (v, _) = json(&[
        "simulate",
        "-f",
        &f,
        "--lose",
        "topology.kubernetes.io/zone=zone-c",
        "-o",
        "json",
    ]);
    assert_eq!(v["drained"]["pending"], 2);
    assert_eq!(v["pending"], 2);
}

#[test]
fn unknown_nodes_and_labels_nothing_carries_are_refused() {
    let f = zones();
    for (flag, value, want) in [
        ("--drain", "nope", "--drain nope: node \"nope\" not found"),
        (
            "--remove-node",
            "nope",
            "--remove-node nope: node \"nope\" not found",
        ),
        ("--lose", "zone", "--lose zone: want KEY=VALUE"),
        (
            "--lose",
            "topology.kubernetes.io/zone=zone-x",
            "no node is labelled topology.kubernetes.io/zone=zone-x",
        ),
    ] {
        let o = run(&["simulate", "-f", &f, flag, value]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
        assert!(stdout(&o).is_empty(), "no partial output");
    }
}

#[test]
fn a_yaml_snapshot_after_a_removal_leaves_the_node_and_its_pods_out_and_writes_the_replacements() {
    let o = run(&[
        "simulate",
        "-f",
        &zones(),
        "--remove-node",
        "c1",
        "-o",
        "yaml",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let docs: Vec<serde_json::Value> = out
        .split("---\n")
        .map(|d| serde_saphyr::from_str(d).expect("each document is YAML"))
        .collect();
    let named = |kind: &str, name: &str| {
        docs.iter()
            .any(|d| d["kind"] == kind && d["metadata"]["name"] == name)
    };
    assert!(!named("Node", "c1"), "the removed node is gone");
    assert!(named("Node", "c2"));
    assert!(!named("Pod", "debug"), "a bare pod is lost with its node");
    assert!(
        !named("Pod", "logs-x"),
        "a DaemonSet pod leaves with its node"
    );
    let on_c1 = docs
        .iter()
        .filter(|d| d["kind"] == "Pod" && d["spec"]["nodeName"] == "c1")
        .count();
    assert_eq!(on_c1, 0, "nothing still runs on the removed node");
    let on_c2 = docs
        .iter()
        .filter(|d| d["kind"] == "Pod" && d["spec"]["nodeName"] == "c2")
        .count();
    assert!(on_c2 >= 1, "the replacement landed on c2: {out}");
    // What is written reads back as a cluster.
    let dir = std::env::temp_dir().join(format!("topospread-drain-yaml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let written = dir.join("after.yaml");
    std::fs::write(&written, &out).expect("write");
    let back = run(&["validate", "-f", written.to_str().expect("utf-8 path")]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(back.status.code(), Some(0), "{}", stderr(&back));
}

/// Two static pods on c1 (one mirror owned by its Node, as the kubelet makes them; one
/// only annotated) and a bare pod on c2.
const STATIC_PODS: &str = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "kube-proxy-c1", "namespace": "kube-system", "uid": "m-1", "annotations": {"kubernetes.io/config.mirror": "0f1e"}, "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "c1", "uid": "n-c1", "controller": true}]}, "spec": {"nodeName": "c1", "containers": [{"name": "c", "image": "kube-proxy"}]}, "status": {"phase": "Running"}}
---
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "etcd-c1", "namespace": "kube-system", "uid": "m-2", "annotations": {"kubernetes.io/config.mirror": "9a8b"}}, "spec": {"nodeName": "c1", "containers": [{"name": "c", "image": "etcd"}]}, "status": {"phase": "Running"}}
---
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "scratch", "namespace": "default", "uid": "b-1"}, "spec": {"nodeName": "c2", "containers": [{"name": "c", "image": "busybox"}]}, "status": {"phase": "Running"}}
"#;

#[test]
fn static_pods_go_with_their_node_and_bare_pods_are_lost_not_replaced() {
    let extra = super::temp("static-pods.yaml", STATIC_PODS);
    let f = zones();
    let args = |out: &'static str| {
        vec![
            "simulate".to_string(),
            "-f".into(),
            f.clone(),
            "-f".into(),
            extra.clone(),
            "--lose".into(),
            "topology.kubernetes.io/zone=zone-c".into(),
            "-o".into(),
            out.into(),
        ]
    };
    let a = args("json");
    let (v, _) = json(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let d = &v["drained"];
    assert_eq!(
        d["mirror_pods"],
        serde_json::json!(["kube-system/kube-proxy-c1", "kube-system/etcd-c1"])
    );
    assert_eq!(
        d["lost"],
        serde_json::json!(["default/debug", "default/scratch"])
    );
    assert_eq!(d["daemon_pods"], serde_json::json!(["default/logs-x"]));
    // Only the ReplicaSet's two pods are replaced: nothing recreates the others.
    let controllers: Vec<&str> = d["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .map(|w| w["controller"].as_str().expect("controller"))
        .collect();
    assert_eq!(controllers, ["replicaset/web"]);
    assert_eq!(v["pods"].as_array().expect("pods").len(), 2, "{v}");
    // The table says so.
    let t = run(&a[..a.len() - 2]
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    let out = stdout(&t);
    assert!(
        out.contains("2 lost (no controller); 1 DaemonSet pod(s) gone with their nodes"),
        "{out}"
    );
    assert!(
        out.contains(
            "2 static pod(s) gone with their nodes: kube-system/kube-proxy-c1, kube-system/etcd-c1"
        ),
        "{out}"
    );
    // The snapshot written after it holds none of them, nor any copy elsewhere.
    let y = args("yaml");
    let o = run(&y.iter().map(String::as_str).collect::<Vec<_>>());
    let written = stdout(&o);
    for gone in ["kube-proxy-c1", "etcd-c1", "scratch", "debug", "logs-x"] {
        assert!(
            !written.contains(&format!("name: {gone}\n")),
            "{gone} written: {written}"
        );
    }
}

/// zone-c's only node drained (cordoned, kept) under the default `nodeTaintsPolicy:
/// Ignore`: zone-c still counts, with 0 pods, so neither replacement may go to zone-a or
/// zone-b (skew 2 > maxSkew 1) and both stay Pending, as in a cluster.
#[test]
fn draining_the_only_node_of_a_zone_leaves_the_replacements_pending() {
    let f = fixture("whatif/zone-c-one-node.yaml");
    let (v, code) = json(&["simulate", "-f", &f, "--drain", "c1", "-o", "json"]);
    assert_eq!(code, 1, "replacements pending: {v}");
    let d = &v["drained"];
    assert_eq!(d["cordoned"], serde_json::json!(["c1"]));
    assert_eq!(d["nodes"], serde_json::json!([]), "the node stays");
    assert_eq!(d["kept"], serde_json::json!(["default/logs-c1"]));
    assert_eq!(
        (d["rescheduled"].as_u64(), d["pending"].as_u64()),
        (Some(0), Some(2))
    );
    let out = stdout(&run(&["simulate", "-f", &f, "--drain", "c1"]));
    assert!(
        out.contains("Drained 1 node(s) as kubectl drain does (cordoned, kept): c1"),
        "{out}"
    );
    assert!(!out.contains("Removed"), "{out}");
    // Deleting the node instead: zone-c is gone, both land in zone-a and zone-b.
    let (v, code) = json(&["simulate", "-f", &f, "--remove-node", "c1", "-o", "json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["drained"]["nodes"], serde_json::json!(["c1"]));
    assert_eq!(v["drained"]["rescheduled"], 2);
    // nodeTaintsPolicy: Honor leaves the cordoned node (its unschedulable taint) out of
    // the domains: the replacements schedule.
    let honor = std::fs::read_to_string(&f).expect("fixture").replace(
        "\"whenUnsatisfiable\": \"DoNotSchedule\"",
        "\"whenUnsatisfiable\": \"DoNotSchedule\", \"nodeTaintsPolicy\": \"Honor\"",
    );
    let h = super::temp("zone-c-honor.yaml", &honor);
    let (v, code) = json(&["simulate", "-f", &h, "--drain", "c1", "-o", "json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["drained"]["rescheduled"], 2);
    let nodes: Vec<&str> = v["pods"]
        .as_array()
        .expect("pods")
        .iter()
        .map(|p| p["node"].as_str().unwrap_or("-"))
        .collect();
    assert!(nodes.iter().all(|n| *n == "a1" || *n == "b1"), "{nodes:?}");
    // Written back, the node is cordoned.
    let o = run(&["simulate", "-f", &h, "--drain", "c1", "-o", "yaml"]);
    let out = stdout(&o);
    assert!(out.contains("unschedulable: true"), "{out}");
}

/// kubectl's filters: a bare pod and an emptyDir pod are refused (kubectl would need
/// --force / --delete-emptydir-data) and stay; a budget allowing no disruption keeps
/// the replicas on the node, and the cluster is left short: exit 1.
#[test]
fn a_drain_reports_what_kubectl_refuses_and_what_a_budget_blocks() {
    let f = fixture("whatif/zone-c-one-node.yaml");
    let extra = super::temp(
        "drain-extra.yaml",
        r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare", "namespace": "default"}, "spec": {"nodeName": "c1", "containers": [{"name": "c", "image": "busybox"}]}}
---
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cache-1", "namespace": "default", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "cache", "uid": "rs-cache", "controller": true}]}, "spec": {"nodeName": "c1", "volumes": [{"name": "scratch", "emptyDir": {}}], "containers": [{"name": "c", "image": "redis"}]}}
---
{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web-pdb", "namespace": "default"}, "spec": {"minAvailable": 6, "selector": {"matchLabels": {"app": "web"}}}, "status": {"disruptionsAllowed": 0, "currentHealthy": 6, "desiredHealthy": 6, "expectedPods": 6}}
"#,
    );
    let (v, code) = json(&[
        "simulate", "-f", &f, "-f", &extra, "--drain", "c1", "-o", "json",
    ]);
    assert_eq!(code, 1, "{v}");
    let d = &v["drained"];
    let refused: Vec<&str> = d["refused"]
        .as_array()
        .expect("refused")
        .iter()
        .map(|r| r["pod"].as_str().expect("pod"))
        .collect();
    assert_eq!(refused, ["default/bare", "default/cache-1"]);
    assert!(
        d["refused"][1]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("--delete-emptydir-data")),
        "{d}"
    );
    let blocked: Vec<(&str, &str)> = d["blocked"]
        .as_array()
        .expect("blocked")
        .iter()
        .map(|b| {
            (
                b["pod"].as_str().expect("pod"),
                b["budget"].as_str().expect("budget"),
            )
        })
        .collect();
    assert_eq!(
        blocked,
        [
            ("default/web-5", "default/web-pdb"),
            ("default/web-6", "default/web-pdb")
        ]
    );
    let out = stdout(&run(&["simulate", "-f", &f, "-f", &extra, "--drain", "c1"]));
    assert!(
        out.contains("PodDisruptionBudget default/web-pdb blocks the eviction of default/web-5"),
        "{out}"
    );
}

/// A budget allowing one disruption: kubectl evicts one pod, and the next only once the
/// first one's replacement is Ready. Under Honor the replacement schedules, so both go;
/// under Ignore it stays Pending, the budget never allows again, and the second pod stays.
#[test]
fn a_budget_allowing_one_lets_the_drain_go_on_only_as_replacements_become_ready() {
    let f = std::fs::read_to_string(fixture("whatif/zone-c-one-node.yaml")).expect("fixture");
    let pdb = r#"
---
{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web-pdb", "namespace": "default"}, "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}, "status": {"disruptionsAllowed": 1, "currentHealthy": 6, "desiredHealthy": 5, "expectedPods": 6}}
"#;
    let ignore = super::temp("zone-c-pdb-ignore.yaml", &format!("{f}{pdb}"));
    let (v, code) = json(&["simulate", "-f", &ignore, "--drain", "c1", "-o", "json"]);
    assert_eq!(code, 1, "{v}");
    let d = &v["drained"];
    assert_eq!(
        (d["rescheduled"].as_u64(), d["pending"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(
        d["blocked"],
        serde_json::json!([{"pod": "default/web-6", "budget": "default/web-pdb"}])
    );
    let honor = f.replace(
        "\"whenUnsatisfiable\": \"DoNotSchedule\"",
        "\"whenUnsatisfiable\": \"DoNotSchedule\", \"nodeTaintsPolicy\": \"Honor\"",
    );
    let honor = super::temp("zone-c-pdb-honor.yaml", &format!("{honor}{pdb}"));
    let (v, code) = json(&["simulate", "-f", &honor, "--drain", "c1", "-o", "json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["drained"]["rescheduled"], 2);
    assert!(v["drained"].get("blocked").is_none(), "{v}");
}
