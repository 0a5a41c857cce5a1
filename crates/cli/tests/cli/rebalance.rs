//! `topospread rebalance` end to end on the generated cluster shapes
//! (`tests/rebalance/*.yaml`): the plan table, JSON, YAML as the next input, the
//! descheduler replay, `--scale`, and exit codes 0/1/2.

use super::{run, stderr, stdout, temp};
use std::path::PathBuf;

fn shape(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/rebalance")
        .join(format!("{name}.yaml"))
        .display()
        .to_string()
}

#[test]
fn rebalance_table_for_a_full_zone() {
    let o = run(&["rebalance", "-f", &shape("full-zone")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("rebalance_full_zone", stdout(&o));
}

#[test]
fn rebalance_json_lists_moves_and_spread() {
    let o = run(&["rebalance", "-f", &shape("scale-down-2-1-0"), "-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let moves = v["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 1);
    assert_eq!(moves[0]["from"], "a1");
    assert_eq!(moves[0]["to"], "c1");
    assert_eq!(
        moves[0]["reason"],
        "topology.kubernetes.io/zone maxSkew=1 DoNotSchedule app=web"
    );
    assert_eq!(v["before"][0]["constraints"][0]["skew"], 2);
    assert_eq!(v["after"][0]["constraints"][0]["skew"], 0);
    assert_eq!(v["unresolved"].as_array().map(Vec::len), Some(0));
}

#[test]
fn rebalance_yaml_is_a_balanced_next_input() {
    let o = run(&["rebalance", "-f", &shape("zone-outage"), "-o", "yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let next = temp("rebalanced.yaml", &stdout(&o));
    let again = run(&["rebalance", "-f", &next, "-o", "json"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let v: serde_json::Value = serde_json::from_str(&stdout(&again)).expect("json");
    assert_eq!(v["moves"].as_array().map(Vec::len), Some(0), "{v}");
}

#[test]
fn rebalance_a_budget_that_forbids_the_move_exits_1() {
    let o = run(&["rebalance", "-f", &shape("pdb-forbids")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("PodDisruptionBudget default/web-pdb allows no disruptions"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn rebalance_descheduler_strategy_reports_rounds() {
    let o = run(&[
        "rebalance",
        "-f",
        &shape("zone-vs-hostname"),
        "--strategy",
        "descheduler",
        "-o",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["strategy"], "descheduler");
    assert_eq!(v["moves"].as_array().map(Vec::len), Some(6));
    assert_eq!(v["rounds"], 4);
}

#[test]
fn rebalance_scale_prints_deletion_costs() {
    let o = run(&[
        "rebalance",
        "-f",
        &shape("scale-plan-10-to-3"),
        "--scale",
        "replicaset/web=3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let removed = out
        .lines()
        .filter(|l| l.starts_with("kubectl annotate") && l.contains("# remove"))
        .count();
    assert_eq!(removed, 7, "{out}");
    assert!(out.contains("controller.kubernetes.io/pod-deletion-cost=-7 --overwrite"));
    assert!(out.contains("    after:  za=1 zb=1 zc=1  skew 0"), "{out}");
}

/// `--scale` reads what `simulate --scale` reads: `deployment/NAMESPACE/NAME=N` too.
#[test]
fn rebalance_scale_takes_simulates_namespaced_form() {
    let f = super::fixture("controllers/live-deployment.yaml");
    let o = run(&["rebalance", "-f", &f, "--scale", "deployment/default/web=1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("scale 2 -> 1 removes 1 pods"), "{out}");
    assert!(out.contains("deployment/web"), "{out}");
    let o = run(&["rebalance", "-f", &f, "--scale", "deploy/prod/web=1"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("deployment \"web\" in namespace prod: no such workload"),
        "{err}"
    );
    let o = run(&[
        "rebalance",
        "-f",
        &f,
        "--scale",
        "deploy/prod/web=1",
        "-n",
        "default",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("names namespace \"prod\" but --namespace is \"default\""),
        "{}",
        stderr(&o)
    );
}

/// The descheduler ends successfully when its namespace or selector matches no pod (a
/// CronJob's run while the app is scaled to zero): an empty plan with a note, exit 0.
#[test]
fn the_descheduler_replay_selecting_nothing_is_an_empty_plan() {
    let f = shape("scale-down-2-1-0");
    for extra in [["-l", "app=nope"], ["--namespace", "prod"]] {
        let mut args = vec!["rebalance", "-f", f.as_str(), "--strategy", "descheduler"];
        args.extend_from_slice(&extra);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains("0 moves"), "{out}");
        assert!(
            out.contains("the descheduler evicts nothing and ends successfully"),
            "{extra:?}: {out}"
        );
    }
}

#[test]
fn rebalance_bad_input_exits_2_with_one_line() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["-l", "app=nope"],
            "no bound pod matches selector app in (nope)",
        ),
        (
            &["--namespace", "prod"],
            "no bound pod matches namespace \"prod\"",
        ),
        (
            &["--scale", "replicaset/api=1"],
            "replicaset/api in namespace default: no such workload with bound pods",
        ),
        (&["--scale", "web"], "expected KIND/NAME=N"),
    ];
    for (extra, want) in cases {
        let f = shape("scale-down-2-1-0");
        let mut args = vec!["rebalance", "-f", f.as_str()];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(want), "{extra:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(stdout(&o).is_empty());
    }
}

/// Two zones; zb's only node has half a cpu, too little for a web pod.
const NO_ROOM_IN_ZB: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {topology.kubernetes.io/zone: za}}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: b1, labels: {topology.kubernetes.io/zone: zb}}
status: {allocatable: {cpu: 500m, memory: 8Gi, pods: "110"}}
"#;

fn web_pod(name: &str) -> String {
    format!(
        r#"---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
  labels: {{app: web}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: u1, controller: true}}]
spec:
  nodeName: a1
  containers: [{{name: c, image: registry.k8s.io/pause:3.10, resources: {{requests: {{cpu: "1"}}}}}}]
  topologySpreadConstraints:
  - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}}}
status: {{phase: Running}}
"#
    )
}

#[test]
fn rebalance_yaml_writes_a_pending_replacement_as_pending() {
    let text = format!("{NO_ROOM_IN_ZB}{}{}", web_pod("web-0"), web_pod("web-1"));
    let file = temp("no-room-in-zb.yaml", &text);
    // Without topologyBalanceNodeFit the descheduler evicts a pod that fits nowhere.
    let o = run(&[
        "rebalance",
        "-f",
        &file,
        "--strategy",
        "descheduler",
        "--no-topology-balance-node-fit",
        "-o",
        "yaml",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let pods: Vec<serde_json::Value> = out
        .split("---\n")
        .filter_map(|d| serde_saphyr::from_str::<serde_json::Value>(d).ok())
        .filter(|v| v["kind"] == "Pod")
        .collect();
    assert_eq!(pods.len(), 2, "{out}");
    let pending: Vec<&serde_json::Value> = pods
        .iter()
        .filter(|p| p["spec"]["nodeName"].is_null())
        .collect();
    assert_eq!(pending.len(), 1, "{out}");
    assert_eq!(pending[0]["status"]["phase"], "Pending", "{out}");
    // Fed back in, the pending pod is scheduled (or stays pending), not evicted again.
    let next = temp("no-room-in-zb-next.yaml", &out);
    let again = run(&[
        "rebalance",
        "-f",
        &next,
        "--strategy",
        "descheduler",
        "-o",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&again)).expect("json");
    let evicted: Vec<&str> = v["moves"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["pod"].as_str())
        .collect();
    let name = pending[0]["metadata"]["name"].as_str().unwrap_or_default();
    assert!(!evicted.contains(&name), "{v}");
}

#[test]
fn rebalance_yaml_writes_a_pending_pod_as_pending_with_the_default_strategy_too() {
    // web-2 asks for more cpu than any node has: it stays Pending through the plan.
    let big = web_pod("web-2")
        .replace("  nodeName: a1\n", "")
        .replace("cpu: \"1\"", "cpu: \"64\"")
        .replace("status: {phase: Running}", "status: {phase: Pending}");
    let text = format!(
        "{NO_ROOM_IN_ZB}{}{}{big}",
        web_pod("web-0"),
        web_pod("web-1")
    );
    let file = temp("pending-default.yaml", &text);
    let o = run(&["rebalance", "-f", &file, "-o", "yaml"]);
    let out = stdout(&o);
    let pods: Vec<serde_json::Value> = out
        .split("---\n")
        .filter_map(|d| serde_saphyr::from_str::<serde_json::Value>(d).ok())
        .filter(|v| v["kind"] == "Pod")
        .collect();
    assert_eq!(pods.len(), 3, "{out}{}", stderr(&o));
    let web2 = pods
        .iter()
        .find(|p| p["metadata"]["name"] == "web-2")
        .expect("web-2 is written");
    assert!(web2["spec"]["nodeName"].is_null(), "{web2}");
    assert_eq!(web2["status"]["phase"], "Pending", "{web2}");
    // The bound pods keep their node and phase.
    for p in pods.iter().filter(|p| p["metadata"]["name"] != "web-2") {
        assert!(p["spec"]["nodeName"].is_string(), "{p}");
        assert_eq!(p["status"]["phase"], "Running", "{p}");
    }
}
