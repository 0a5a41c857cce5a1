//! StatefulSets as their controller runs them: `spec.ordinals.start` per release,
//! claims made with their ordinal, and a rolling update carried on through the
//! scheduler (`fixtures/statefulset/`).

use super::{fixture, run, stderr, stdout};
use serde_json::Value;

/// `simulate` on one fixture with `extra` arguments: stdout, stderr and exit code.
fn simulate(file: &str, extra: &[&str]) -> (String, String, i32) {
    let path = fixture(file);
    let mut args = vec!["simulate", "-f", path.as_str()];
    args.extend(extra);
    let o = run(&args);
    (stdout(&o), stderr(&o), o.status.code().unwrap_or(-1))
}

fn json(file: &str, extra: &[&str]) -> Value {
    let mut args = extra.to_vec();
    args.extend(["-o", "json"]);
    let (out, err, _) = simulate(file, &args);
    let Ok(v) = serde_json::from_str(&out) else {
        panic!("not JSON: {out}\n{err}")
    };
    v
}

fn workload<'a>(v: &'a Value, name: &str) -> &'a Value {
    let found = v["workloads"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|w| w["kind"] == "StatefulSet" && w["name"] == name);
    let Some(w) = found else {
        panic!("no StatefulSet {name}: {v}")
    };
    w
}

#[test]
fn a_rolling_update_recreates_the_highest_outdated_pod_and_stalls_on_its_new_constraint() {
    let v = json("statefulset/rolling-update.yaml", &[]);
    let web = workload(&v, "web");
    assert_eq!(
        web["rolling_update"],
        "rolling update to revision web-2b: replaced web-2; web-0, web-1 not replaced: StatefulSet web waits for web-2 to be Running and Ready",
        "{web}"
    );
    let pending: Vec<&str> = v["pods"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["node"].is_null())
        .filter_map(|p| p["pod"].as_str())
        .collect();
    assert_eq!(pending, ["web-2"], "{v}");

    // The cluster it leaves: web-2 recreated from the update revision, pending; the
    // others unchanged.
    let (yaml, err, _) = simulate("statefulset/rolling-update.yaml", &["-o", "yaml"]);
    let docs: Vec<&str> = yaml.split("---\n").collect();
    let pod = |name: &str| {
        docs.iter()
            .copied()
            .filter(|d| d.starts_with("apiVersion: v1\nkind: Pod\n") || d.contains("\nkind: Pod\n"))
            .filter(|d| d.contains(&format!("\n  name: {name}\n")))
            .collect::<Vec<_>>()
    };
    let two = pod("web-2");
    assert_eq!(two.len(), 1, "{yaml}\n{err}");
    assert!(two[0].contains("nginx:1.27"), "{}", two[0]);
    assert!(
        two[0].contains("controller-revision-hash: web-2b"),
        "{}",
        two[0]
    );
    assert!(!two[0].contains("nodeName"), "{}", two[0]);
    let one = pod("web-1");
    assert_eq!(one.len(), 1, "{yaml}");
    assert!(
        one[0].contains("nginx:1.26") && one[0].contains("nodeName: n1"),
        "{}",
        one[0]
    );

    let (text, _, code) = simulate("statefulset/rolling-update.yaml", &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("Rolling updates (StatefulSet controller)\n  default/web: rolling update to revision web-2b: replaced web-2;"), "{text}");
}

#[test]
fn a_held_back_ordinal_has_no_claim() {
    let (yaml, err, _) = simulate("statefulset/claims.yaml", &["-o", "yaml"]);
    assert!(yaml.contains("name: data-web-5\n"), "{yaml}\n{err}");
    assert!(yaml.contains("name: data-web-6\n"), "{yaml}");
    assert!(!yaml.contains("data-web-7"), "{yaml}");
    assert!(!yaml.contains("name: web-7\n"), "{yaml}");
    let v = json("statefulset/claims.yaml", &[]);
    assert_eq!(
        workload(&v, "web")["not_created"],
        serde_json::json!(["web-7"])
    );
}

#[test]
fn spec_ordinals_start_follows_the_release_and_its_gate() {
    let not_created = |extra: &[&str]| {
        workload(&json("statefulset/claims.yaml", extra), "web")["not_created"].clone()
    };
    assert_eq!(not_created(&[]), serde_json::json!(["web-7"]));
    assert_eq!(
        not_created(&["--kubernetes-version", "1.26"]),
        serde_json::json!(["web-2"])
    );
    assert_eq!(
        not_created(&[
            "--kubernetes-version",
            "1.26",
            "--feature-gates",
            "StatefulSetStartOrdinal=true"
        ]),
        serde_json::json!(["web-7"])
    );
    assert_eq!(
        not_created(&["--kubernetes-version", "1.25"]),
        serde_json::json!(["web-2"])
    );
    let v = json("statefulset/claims.yaml", &["--kubernetes-version", "1.26"]);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("spec.ordinals.start 5 dropped: the StatefulSetStartOrdinal gate is off"),
        "{notes}"
    );
    // GA and locked from 1.31, gone from 1.34.
    let (_, err, code) = simulate(
        "statefulset/claims.yaml",
        &[
            "--kubernetes-version",
            "1.31",
            "--feature-gates",
            "StatefulSetStartOrdinal=false",
        ],
    );
    assert_eq!(code, 2, "{err}");
    let (_, err, code) = simulate(
        "statefulset/claims.yaml",
        &[
            "--kubernetes-version",
            "1.34",
            "--feature-gates",
            "StatefulSetStartOrdinal=true",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("removed in 1.34"), "{err}");
}
