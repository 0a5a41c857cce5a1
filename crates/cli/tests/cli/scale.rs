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
