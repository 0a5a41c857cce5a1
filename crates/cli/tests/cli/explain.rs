//! `explain KIND/NAME`: the next pending pod of a workload.

use super::{fixture, run, stderr, stdout};

#[test]
fn a_workload_is_explained_through_its_next_pending_pod() {
    let f = fixture("workloads.yaml");
    let by_workload = run(&["explain", "-f", &f, "sts/data/db"]);
    assert_eq!(
        by_workload.status.code(),
        Some(0),
        "{}",
        stderr(&by_workload)
    );
    let text = stdout(&by_workload);
    // The StatefulSet's first ordinal is its next pod; the same output as naming it.
    assert!(text.starts_with("pod data/db-0\n"), "{text}");
    let by_pod = run(&["explain", "-f", &f, "data/db-0"]);
    assert_eq!(stdout(&by_pod), text);
    let long = run(&["explain", "-f", &f, "statefulset/data/db"]);
    assert_eq!(stdout(&long), text);
}

#[test]
fn a_workload_with_every_pod_bound_says_how_to_see_the_next() {
    let f = fixture("controllers/live-deployment.yaml");
    let o = run(&["explain", "-f", &f, "deployment/web"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert!(
        err.contains("deployment default/web: no pending pod (2 pod(s), every one bound); --scale deployment/default/web=3"),
        "{err}"
    );
    let scaled = run(&[
        "explain",
        "-f",
        &f,
        "deployment/web",
        "--scale",
        "deployment/web=3",
    ]);
    assert_eq!(scaled.status.code(), Some(0), "{}", stderr(&scaled));
    let text = stdout(&scaled);
    assert!(text.starts_with("pod default/web-"), "{text}");
    assert!(text.contains("app=web: a=1 b=1 c=0"), "{text}");
}

#[test]
fn an_unknown_workload_names_the_ones_there_are() {
    let f = fixture("workloads.yaml");
    let o = run(&["explain", "-f", &f, "deployment/nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "deployment default/nope: not found in the files (workloads: statefulset/data/db, daemonset/kube-system/agent)"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn explain_summarises_a_constraint_with_many_domains() {
    // 40 hostnames: the spread is summarised (count, histogram, extremes), with the skew
    // the engine measures; the three zones are listed in full.
    let f = fixture("forty-nodes.yaml");
    let o = run(&["explain", "-f", &f, "deployment/web"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("Spread: matching pods per eligible domain, as PodTopologySpread counts\n  topology.kubernetes.io/zone maxSkew=1 DoNotSchedule app=web: zone-a=3 zone-b=3 zone-c=3 (min 3, skew 0)\n  kubernetes.io/hostname maxSkew=1 ScheduleAnyway app=web: (min 0, skew 1)\n    40 domains, 9 pods, min 0, max 1, skew 1\n    domains per pod count: 0: 31, 1: 9\n"),
        "{text}"
    );
    assert!(!text.contains("node-05=0 node-06=0"), "{text}");
}
