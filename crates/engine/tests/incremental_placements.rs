//! Placements are identical with incremental counting on and off, on random clusters,
//! through the whole default profile.

use proptest::prelude::*;
use topospread::builders::{NodeBuilder, PodBuilder};
use topospread::{Features, ScheduleResult, Scheduler, SchedulerConfig, Snapshot, convert};

fn cluster(nodes: &[(u8, bool)], incremental: bool) -> Snapshot {
    let mut s = Snapshot::new();
    s.set_incremental(incremental);
    for (i, (zone, tainted)) in nodes.iter().enumerate() {
        let name = format!("n{i}");
        let mut b = NodeBuilder::new(&name)
            .label("topology.kubernetes.io/zone", &format!("z{zone}"))
            .label("kubernetes.io/hostname", &name)
            .allocatable("cpu", "4")
            .allocatable("memory", "8Gi")
            .allocatable("pods", "20");
        if *tainted {
            b = b.taint("dedicated", "x", "NoSchedule");
        }
        let n = convert::node(&b.build(), s.symbols_mut()).expect("valid node");
        s.add_node(n).expect("unique node");
    }
    s
}

/// Schedules the pods in order, binding each; the chosen node names (None = Pending).
fn placements(
    nodes: &[(u8, bool)],
    pods: &[(u8, u8, bool)],
    incremental: bool,
) -> Vec<Option<String>> {
    let mut s = cluster(nodes, incremental);
    let mut sched = Scheduler::new(&SchedulerConfig::default(), Features::default(), &mut s)
        .expect("default profile");
    sched.set_seed(7);
    let mut out = Vec::new();
    for (i, (app, skew, hard)) in pods.iter().enumerate() {
        let when = if *hard {
            "DoNotSchedule"
        } else {
            "ScheduleAnyway"
        };
        let key = if i % 2 == 0 {
            "topology.kubernetes.io/zone"
        } else {
            "kubernetes.io/hostname"
        };
        let p = PodBuilder::new(&format!("p{i}"))
            .label("app", &format!("a{app}"))
            .request("cpu", "200m")
            .spread(i32::from(*skew), key, when, &[("app", &format!("a{app}"))])
            .build();
        let p = convert::pod(&p, s.symbols_mut()).expect("valid pod");
        match sched.schedule_one(&s, &p) {
            ScheduleResult::Scheduled { node, .. } => {
                out.push(Some(s.node(node).node.name.to_string()));
                let id = s.add_pod(p).expect("unique pod");
                s.bind(id, node);
            }
            _ => out.push(None),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn incremental_and_from_scratch_place_alike(
        nodes in prop::collection::vec((0u8..3, prop::bool::weighted(0.2)), 1..12),
        pods in prop::collection::vec((0u8..2, 1u8..3, any::<bool>()), 1..40),
    ) {
        prop_assert_eq!(placements(&nodes, &pods, true), placements(&nodes, &pods, false));
    }
}
