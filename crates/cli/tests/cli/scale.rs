//! `simulate` on dumps of live clusters: existing ReplicaSets and pods adopted,
//! `--scale`, scale-downs in the ReplicaSet controller's order, rollouts.

use super::{fixture, run, stderr, stdout};
use serde_json::Value;

const LIVE: &str = "controllers/live-deployment.yaml";
const ROLLOUT: &str = "controllers/rollout.yaml";

fn json(args: &[&str]) -> (Value, i32) {
    let o = run(args);
    let v = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}\n{}", stdout(&o), stderr(&o));
    });
    (v, o.status.code().unwrap())
}

fn pod_names(v: &Value) -> Vec<String> {
    v["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pod"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_deployment_running_all_its_replicas_creates_nothing() {
    let (v, code) = json(&["simulate", "-f", &fixture(LIVE), "-o", "json"]);
    assert_eq!(code, 0);
    assert!(pod_names(&v).is_empty(), "{v}");
    assert_eq!(v["workloads"][0]["pods"], 2);
    assert_eq!(v["removed"].as_array().unwrap().len(), 0);
}

#[test]
fn scale_up_creates_the_missing_pods_of_the_live_replicaset() {
    let (v, code) = json(&[
        "simulate",
        "-f",
        &fixture(LIVE),
        "--scale",
        "deployment/web=3",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0);
    let names = pod_names(&v);
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].starts_with("web-6f7c9d8b4-"), "{names:?}");
    // Zones a and b hold one pod each (the evicted pod in c does not count): c is next.
    assert_eq!(v["pods"][0]["node"], "n3");
}

#[test]
fn scale_down_removes_pods_in_the_controllers_order_and_reports_them() {
    let args = ["simulate", "-f", &fixture(LIVE), "--scale", "deploy/web=1"];
    let (v, code) = json(&[&args[..], &["-o", "json"]].concat());
    assert_eq!(code, 0);
    // Both pods ready on their own node, a day apart but in one log2 bucket of the time
    // since (LogarithmicScaleDown), without UIDs: upstream ranks them equal; by name.
    assert_eq!(v["removed"][0]["pod"], "web-6f7c9d8b4-bbbbb");
    assert_eq!(v["removed"][0]["controller"], "replicaset/web-6f7c9d8b4");
    assert_eq!(v["workloads"][0]["pods"], 1);
    let table = stdout(&run(&args));
    assert!(
        table.contains("Removed by their controller")
            && table.contains("default/web-6f7c9d8b4-bbbbb"),
        "{table}"
    );
}

/// Pods of one scale-up, Ready seconds apart: one log2 bucket of their time since
/// Ready, so the controller (LogarithmicScaleDown) removes the lowest UIDs, here the
/// pods Ready first, where exact ready times would remove the 4 most recent.
#[test]
fn scale_down_within_one_ready_bucket_goes_by_uid() {
    let (v, code) = json(&[
        "simulate",
        "-f",
        &fixture("controllers/scale-in-one-bucket.yaml"),
        "--scale",
        "deployment/default/web=2",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0);
    let removed: Vec<&str> = v["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pod"].as_str().unwrap())
        .collect();
    assert_eq!(
        removed,
        [
            "web-6f7c9d8b4-pod1",
            "web-6f7c9d8b4-pod2",
            "web-6f7c9d8b4-pod3",
            "web-6f7c9d8b4-pod4"
        ]
    );
}

#[test]
fn a_changed_template_rolls_out_step_by_step() {
    let (v, code) = json(&["simulate", "-f", &fixture(ROLLOUT), "-o", "json"]);
    assert_eq!(code, 0);
    let r = &v["rollouts"][0];
    assert_eq!(r["complete"], true, "{r}");
    assert_eq!(r["created"].as_array().unwrap().len(), 2);
    assert_eq!(
        r["deleted"].as_array().unwrap().len(),
        2,
        "both old pods are deleted"
    );
    // 25% of 2: surge 1, unavailable 0: never more than 3 pods, never fewer than 2 bound.
    for s in r["steps"].as_array().unwrap() {
        let revs = s["revisions"].as_array().unwrap();
        let pods: u64 = revs.iter().map(|x| x["pods"].as_u64().unwrap()).sum();
        let bound: u64 = revs.iter().map(|x| x["bound"].as_u64().unwrap()).sum();
        assert!(pods <= 3 && bound >= 2, "{s}");
    }
    let new = r["new_replica_set"].as_str().unwrap();
    assert_ne!(new, "web-6f7c9d8b4");
    assert!(pod_names(&v).iter().all(|p| p.starts_with(new)));
}

#[test]
fn scale_of_an_unknown_workload_is_refused() {
    let o = run(&[
        "simulate",
        "-f",
        &fixture(LIVE),
        "--scale",
        "deployment/nope=2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
    assert!(
        stderr(&o).contains("no deployment \"nope\" in namespace \"default\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_scale_values_are_refused() {
    for (value, says) in [
        ("deployment/web=-1", "is not a replica count"),
        ("deployment/web", "expected KIND/NAME=N"),
        ("pod/web=1", "unknown kind \"pod\""),
        ("deployment/a/b/c=1", "expected KIND/NAME=N"),
    ] {
        let o = run(&["simulate", "-f", &fixture(LIVE), "--scale", value]);
        assert_eq!(o.status.code(), Some(2), "{value}");
        assert!(stdout(&o).is_empty(), "{value}");
        assert!(stderr(&o).contains(says), "{value}: {}", stderr(&o));
    }
}

#[test]
fn a_rollout_whose_surge_pod_never_schedules_reports_the_stall() {
    const STALL: &str = "controllers/rollout-stall.yaml";
    let (v, code) = json(&["simulate", "-f", &fixture(STALL), "-o", "json"]);
    assert_eq!(code, 1, "the surge pod stays Pending: {v}");
    let r = &v["rollouts"][0];
    assert_eq!(r["complete"], false, "{r}");
    let s = &r["stalled"];
    assert_eq!(s["step"], 1, "{s}");
    assert_eq!(
        (
            &s["old_replicas"],
            &s["old_available"],
            &s["new_replicas"],
            &s["new_available"]
        ),
        (&3.into(), &3.into(), &1.into(), &0.into()),
        "{s}"
    );
    assert_eq!(
        (&s["max_surge"], &s["max_unavailable"]),
        (&1.into(), &0.into())
    );
    assert_eq!(s["topology_spread"], true, "{s}");
    let pending = s["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{s}");
    assert!(
        pending[0]["message"]
            .as_str()
            .unwrap()
            .contains("didn't match pod topology spread constraints"),
        "{s}"
    );
    assert!(s["reason"].as_str().unwrap().contains("116629"), "{s}");
    assert!(
        s["reason"].as_str().unwrap().ends_with(
            "the rollout can never finish: after progressDeadlineSeconds (600) the Deployment's Progressing condition turns False (ProgressDeadlineExceeded) and it stays as it is"
        ),
        "{s}"
    );

    let o = run(&["simulate", "-f", &fixture(STALL)]);
    let text = stdout(&o);
    let new = r["new_replica_set"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "Rollout of deployment default/web to replicaset {new}: 1 steps, 1 pods created, 0 deleted (stalled)"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  stalled after step 1 (scale replicaset/{new} to 1): old replicasets 3 pods (3 available), new replicaset 1 pods (0 available), maxSurge 1, maxUnavailable 0\n  why: maxUnavailable 0 keeps every old pod until a new one is available, maxSurge 1 allows no further new pod, and new pod {} stays Pending: a DoNotSchedule topology spread constraint",
            pending[0]["pod"].as_str().unwrap()
        )),
        "{text}"
    );
}

/// kubernetes#98215's shape (issue 44): old and new pods counted together, the old
/// ReplicaSet shrunk before the surge pods are scheduled; the new ReplicaSet ends
/// skewed in every interleaving, and the report says so and how to fix it.
#[test]
fn a_rollout_without_match_label_keys_reports_its_end_skews_and_warns() {
    const SKEW: &str = "controllers/rollout-skew.yaml";
    let (v, code) = json(&["simulate", "-f", &fixture(SKEW), "-o", "json"]);
    assert_eq!(code, 0, "the rollout completes: {v}");
    let r = &v["rollouts"][0];
    assert_eq!(r["complete"], true);
    assert_eq!(r["interleaving"], "controller first, ready together");
    // Step 2 shrinks the old ReplicaSet by 2 (12 - 7 - 3) with no new pod bound.
    let step2 = &r["steps"][1];
    assert_eq!(step2["action"], "scale replicaset/web-6f7c9d8b4 to 7");
    assert_eq!(step2["revisions"][0]["bound"], 0);
    let ils = r["interleavings"].as_array().unwrap();
    assert_eq!(ils.len(), 4);
    let skews: Vec<i64> = ils
        .iter()
        .map(|i| i["end"][0]["skew"].as_i64().unwrap())
        .collect();
    let range = &r["end_skew"][0];
    assert_eq!(range["min"].as_i64(), skews.iter().min().copied());
    assert_eq!(range["max"].as_i64(), skews.iter().max().copied());
    assert!(range["min"].as_i64().unwrap() > 1, "{range}");
    assert_eq!(
        ils[0]["end"][0]["counts"],
        serde_json::json!({"a": 3, "b": 4, "c": 2})
    );
    let text = stdout(&run(&["simulate", "-f", &fixture(SKEW)]));
    assert!(
        text.contains(
            "  warning: this rollout can leave the spread skewed; add `matchLabelKeys: [pod-template-hash]`"
        ),
        "{text}"
    );
    assert!(
        text.contains("  controller first, ready together: complete in 6 steps, 0s; topology.kubernetes.io/zone: a=3 b=4 c=2 skew 2"),
        "{text}"
    );
    // With matchLabelKeys the new revision counts itself only: 3/3/3, no warning.
    let fixed = std::fs::read_to_string(fixture(SKEW)).unwrap().replace(
        "labelSelector: {matchLabels: {app: web}}}",
        "labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [pod-template-hash]}",
    );
    let f = super::temp("rollout-skew-mlk.yaml", &fixed);
    let (v, code) = json(&["simulate", "-f", &f, "-o", "json"]);
    assert_eq!(code, 0);
    let r = &v["rollouts"][0];
    assert!(r.get("warning").is_none(), "{r}");
    assert_eq!(
        (&r["end_skew"][0]["min"], &r["end_skew"][0]["max"]),
        (&0.into(), &0.into())
    );
}

/// `--ready-after`: each wave of new pods waits that long (plus minReadySeconds) to be
/// available; beyond progressDeadlineSeconds the report names the deadline.
#[test]
fn ready_after_times_the_rollout_and_names_the_progress_deadline() {
    const SKEW: &str = "controllers/rollout-skew.yaml";
    let (v, code) = json(&[
        "simulate",
        "-f",
        &fixture(SKEW),
        "--ready-after",
        "5",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0);
    let r = &v["rollouts"][0];
    assert_eq!(r["ready_after_seconds"], 5);
    // Two waves wait for availability: 3 + 2 new pods, then 4.
    assert_eq!(r["duration_seconds"], 10, "{r}");
    assert!(r.get("deadline_exceeded").is_none());
    let o = run(&["simulate", "-f", &fixture(SKEW), "--ready-after", "601"]);
    assert_eq!(o.status.code(), Some(0), "the rollout still completes");
    assert!(
        stdout(&o).contains("  progress deadline: the Progressing condition turns False (ProgressDeadlineExceeded) 600s in: pods take 601s from binding to available, more than progressDeadlineSeconds 600; the rollout goes on"),
        "{}",
        stdout(&o)
    );
    let o = run(&["simulate", "-f", &fixture(SKEW), "--ready-after", "soon"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
    assert!(stderr(&o).contains("--ready-after"), "{}", stderr(&o));
}
