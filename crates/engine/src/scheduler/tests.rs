use super::*;
use crate::convert;
use k8s_openapi::api::core::v1 as core;
use serde_json::json;

fn snapshot(nodes: usize) -> Snapshot {
    let mut s = Snapshot::new();
    for i in 0..nodes {
        let n: core::Node = match serde_json::from_value(json!({
            "metadata": {"name": format!("n{i}"), "labels": {"kubernetes.io/hostname": format!("n{i}")}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
        })) {
            Ok(n) => n,
            Err(e) => panic!("{e}"),
        };
        let node = match convert::node(&n, s.symbols_mut()) {
            Ok(n) => n,
            Err(e) => panic!("{e}"),
        };
        if let Err(e) = s.add_node(node) {
            panic!("{e}");
        }
    }
    s
}

fn pod(s: &mut Snapshot, v: serde_json::Value) -> Pod {
    let p: core::Pod = match serde_json::from_value(v) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    };
    match convert::pod(&p, s.symbols_mut()) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

fn scheduler(s: &mut Snapshot) -> Scheduler {
    match Scheduler::new(&SchedulerConfig::default(), Features::default(), s) {
        Ok(x) => x,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn num_feasible_nodes_to_find_is_adaptive() {
    let mut s = snapshot(0);
    let sched = scheduler(&mut s);
    assert_eq!(sched.num_feasible_nodes_to_find(10), 10);
    assert_eq!(sched.num_feasible_nodes_to_find(99), 99);
    assert_eq!(sched.num_feasible_nodes_to_find(100), 100);
    // 1000 nodes: 50 - 1000/125 = 42%.
    assert_eq!(sched.num_feasible_nodes_to_find(1000), 420);
    // 5000 nodes: 50 - 40 = 10%.
    assert_eq!(sched.num_feasible_nodes_to_find(5000), 500);
    // 6000 nodes: 50 - 48 = 2% -> floor 5%.
    assert_eq!(sched.num_feasible_nodes_to_find(6000), 300);
    assert_eq!(sched.num_feasible_nodes_to_find(150), 100 + 3 - 3);
}

#[test]
fn unschedulable_message_counts_reasons() {
    let mut s = snapshot(3);
    let mut sched = scheduler(&mut s);
    let p = pod(
        &mut s,
        json!({"metadata": {"name": "big"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "8"}}}]}}),
    );
    match sched.schedule_one(&s, &p) {
        ScheduleResult::Unschedulable {
            message,
            node_statuses,
        } => {
            assert_eq!(message, "0/3 nodes are available: 3 Insufficient cpu.");
            assert_eq!(node_statuses.len(), 3);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn node_name_affinity_restricts_the_nodes_and_explains() {
    let mut s = snapshot(4);
    let mut sched = scheduler(&mut s);
    let p = pod(
        &mut s,
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}}}}}),
    );
    let e = sched.explain(&s, &p);
    assert_eq!(
        e.result,
        ScheduleResult::Scheduled {
            node: NodeId(2),
            evaluated_nodes: 1,
            feasible_nodes: 1
        }
    );
    assert_eq!(e.filter.iter().filter(|f| f.evaluated).count(), 1);
}

#[test]
fn ties_are_broken_reproducibly_and_spread() {
    let mut s = snapshot(4);
    let p = pod(
        &mut s,
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}),
    );
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let mut a = scheduler(&mut s);
        a.set_seed(seed);
        let mut b = scheduler(&mut s);
        b.set_seed(seed);
        let ra = a.schedule_one(&s, &p);
        assert_eq!(ra, b.schedule_one(&s, &p));
        if let ScheduleResult::Scheduled { node, .. } = ra {
            seen.insert(node);
        }
    }
    assert_eq!(
        seen.len(),
        4,
        "every equally good node gets picked for some seed"
    );
}
