//! `topospread guard -f` end to end on `tests/guard/*.yaml`: the patches as a table,
//! JSON and merge-patch YAML, the skew predicted after scale-ins, pods skipped with a
//! note, and exit codes.

use super::{run, stderr, stdout, temp};
use std::path::PathBuf;

fn shape(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/guard")
        .join(format!("{name}.yaml"))
        .display()
        .to_string()
}

#[test]
fn guard_table_lists_patches_and_predicted_skew() {
    let o = run(&["guard", "-f", &shape("crowded-node")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("ReplicaSet default/web: 6 pods, 6 patches"),
        "{out}"
    );
    assert!(
        out.contains("skew now 0; after scale-in by 1: 1 (without the costs 1); by 3: 0 (without the costs 2)"),
        "{out}"
    );
}

#[test]
fn guard_json_costs_remove_the_crowded_zone_first_once() {
    let o = run(&["guard", "-f", &shape("crowded-node"), "-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    // A versioned document, as the other reports (schema: crates/jobs/schema).
    assert_eq!(v["apiVersion"], "topospread.dev/v1alpha1");
    assert_eq!(v["kind"], "GuardReport");
    let rs = &v["replica_sets"][0];
    let patches = rs["patches"].as_array().expect("patches");
    assert_eq!(patches.len(), 6);
    // In removal order, lowest cost first: the first three come from three zones.
    let costs: Vec<i64> = patches
        .iter()
        .map(|p| p["to"].as_i64().expect("to"))
        .collect();
    assert_eq!(costs, [-6, -5, -4, -3, -2, -1]);
    let zones: Vec<char> = patches[..3]
        .iter()
        .map(|p| {
            p["node"]
                .as_str()
                .expect("node")
                .chars()
                .next()
                .expect("zone letter")
        })
        .collect();
    let mut sorted = zones.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ['a', 'b', 'c'], "{zones:?}");
    assert_eq!(rs["constraints"][0]["after_half"], 0);
    assert_eq!(rs["constraints"][0]["unguarded_after_half"], 2);
}

#[test]
fn guard_yaml_patches_applied_leave_nothing_to_patch() {
    let o = run(&["guard", "-f", &shape("crowded-node"), "-o", "yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let docs = stdout(&o);
    assert_eq!(docs.matches("kind: Pod").count(), 6, "{docs}");
    assert!(
        docs.contains("controller.kubernetes.io/pod-deletion-cost: \"-6\"\n    topospread.io/deletion-cost-managed: \"-6\""),
        "{docs}"
    );
    // Apply the patches to the dump, as `kubectl patch --type merge` would.
    let mut dump = std::fs::read_to_string(shape("crowded-node")).expect("fixture");
    for doc in docs.split("---\n").filter(|d| d.contains("kind: Pod")) {
        let name = doc
            .lines()
            .find_map(|l| l.strip_prefix("  name: "))
            .expect("name")
            .trim_matches('"');
        let cost = doc
            .lines()
            .find_map(|l| l.strip_prefix("    controller.kubernetes.io/pod-deletion-cost: "))
            .expect("cost");
        dump = dump.replace(
            &format!("  name: {name}\n"),
            &format!(
                "  name: {name}\n  annotations:\n    controller.kubernetes.io/pod-deletion-cost: {cost}\n    topospread.io/deletion-cost-managed: {cost}\n"
            ),
        );
    }
    let patched = temp("guarded.yaml", &dump);
    let again = run(&["guard", "-f", &patched, "-o", "json"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let v: serde_json::Value = serde_json::from_str(&stdout(&again)).expect("json");
    assert_eq!(
        v["replica_sets"][0]["patches"].as_array().map(Vec::len),
        Some(0),
        "{v}"
    );
    assert_eq!(v["replica_sets"][0]["constraints"][0]["after_half"], 0);
}

#[test]
fn guard_notes_bad_pods_and_never_patches_them() {
    let o = run(&["guard", "-f", &shape("bad-pods"), "-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let notes = v["notes"].to_string();
    assert!(notes.contains("pod default/web-a: controller.kubernetes.io/pod-deletion-cost \\\"cheap\\\" is not an integer"), "{notes}");
    assert!(
        notes.contains("pod default/web-b: being deleted; skipped"),
        "{notes}"
    );
    assert!(notes.contains("pod default/bare: no owner"), "{notes}");
    let rs = &v["replica_sets"][0];
    assert_eq!(rs["user_costs"], serde_json::json!(["web-g"]));
    let patched: Vec<&str> = rs["patches"]
        .as_array()
        .expect("patches")
        .iter()
        .map(|p| p["pod"].as_str().expect("pod"))
        .collect();
    for skipped in ["web-a", "web-b", "bare", "web-g"] {
        assert!(!patched.contains(&skipped), "{skipped} in {patched:?}");
    }
}

#[test]
fn guard_without_input_is_refused() {
    let o = run(&["guard"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = run(&["guard", "-f", "/nonexistent/dump.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("/nonexistent/dump.yaml"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn guard_yaml_patches_carry_the_dumps_resource_version() {
    let dump = std::fs::read_to_string(shape("crowded-node")).expect("fixture");
    let dump = dump.replacen(
        "  name: web-a\n",
        "  name: web-a\n  resourceVersion: \"4711\"\n",
        1,
    );
    let o = run(&["guard", "-f", &temp("versioned.yaml", &dump), "-o", "yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let docs = stdout(&o);
    let web_a = docs
        .split("---\n")
        .find(|d| d.contains("name: \"web-a\""))
        .expect("a patch of web-a");
    assert!(
        web_a.contains("  namespace: \"default\"\n  resourceVersion: \"4711\"\n  annotations:\n"),
        "{web_a}"
    );
    let others = docs.split("---\n").filter(|d| d.contains("kind: Pod"));
    assert_eq!(
        others.filter(|d| d.contains("resourceVersion")).count(),
        1,
        "only web-a had a version in the dump: {docs}"
    );
}

#[test]
fn guard_prints_its_planning_time_on_stderr() {
    let o = run(&["guard", "-f", &shape("crowded-node"), "-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    let Some(line) = err
        .lines()
        .find(|l| l.starts_with("planned 6 patches over 1 replicasets in "))
    else {
        panic!("no timing line: {err}")
    };
    let ms = line
        .trim_start_matches("planned 6 patches over 1 replicasets in ")
        .trim_end_matches(" ms");
    assert!(ms.parse::<u64>().is_ok(), "{line}");
    // stdout stays the plan alone.
    assert!(serde_json::from_str::<serde_json::Value>(&stdout(&o)).is_ok());
}

/// Nodes in zones za..zc and ReplicaSets of 1, 2 (both being deleted), 2, 3 and 4
/// pods spread over zones, each pod carrying the zone constraint.
fn replica_sets_of_every_size() -> String {
    let mut items = Vec::new();
    for zone in ["za", "zb", "zc"] {
        items.push(serde_json::json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": format!("{zone}-1"), "labels": {
                "topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": format!("{zone}-1")}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}));
    }
    for (rs, pods, deleting) in [
        ("one", 1, false),
        ("gone", 2, true),
        ("two", 2, false),
        ("three", 3, false),
        ("four", 4, false),
    ] {
        for i in 0..pods {
            let mut metadata = serde_json::json!({"name": format!("{rs}-{i}"), "namespace": "default",
                "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"app": rs},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                    "uid": format!("uid-{rs}"), "controller": true}]});
            if deleting {
                metadata["deletionTimestamp"] = "2026-01-01T00:05:00Z".into();
            }
            items.push(
                serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
                "spec": {"nodeName": format!("{}-1", ["za", "zb", "zc"][i % 3]),
                    "containers": [{"name": "c", "image": "i"}],
                    "topologySpreadConstraints": [{"maxSkew": 1,
                        "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"app": rs}}}]},
                "status": {"phase": "Running"}}),
            );
        }
    }
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

/// A ReplicaSet that cannot scale in and keep a pod gets no row, and is counted in the
/// note: one of one active pod, and one whose pods are all being deleted. One of 2 or 3
/// pods, whose half is one pod, gets the scale-in by 1 alone: never a "by 0" row nor
/// "by 1" twice.
#[test]
fn guard_skips_replica_sets_that_cannot_scale_in_and_prints_no_by_0() {
    let f = temp("guard-sizes.json", &replica_sets_of_every_size());
    let o = run(&["guard", "-f", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for skipped in ["default/one", "default/gone"] {
        assert!(!out.contains(&format!("ReplicaSet {skipped}:")), "{out}");
    }
    assert!(
        out.contains("note: 2 ReplicaSet(s) with spread constraints and fewer than 2 active pods skipped: a scale-in leaves no pod to spread"),
        "{out}"
    );
    assert!(!out.contains("by 0"), "{out}");
    for rs in ["two: 2 pods", "three: 3 pods", "four: 4 pods"] {
        assert!(out.contains(&format!("ReplicaSet default/{rs}")), "{out}");
    }
    let predictions: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("after scale-in by 1"))
        .collect();
    assert_eq!(predictions.len(), 3, "{out}");
    // In the table's order: four, three, two.
    assert!(predictions[0].contains("; by 2: "), "{out}");
    for p in &predictions[1..] {
        assert_eq!(
            p.matches("by ").count(),
            1,
            "half of 2 or 3 is one pod: {p}"
        );
    }

    let o = run(&["guard", "-f", &f, "-o", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let sets = v["replica_sets"].as_array().expect("replica_sets");
    let names: Vec<&str> = sets.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["four", "three", "two"], "{v}");
    assert!(sets.iter().all(|s| s["pods"].as_u64() >= Some(2)), "{v}");
}
