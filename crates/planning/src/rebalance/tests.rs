//! The planner on small clusters: minimality for one constraint, make room, budgets,
//! scale-down, the descheduler replay, determinism.

use super::*;
use k8s_openapi::api::policy::v1 as policy;
use std::collections::BTreeSet;
use topospread::api::DisruptionBudget;
use topospread::builders::{NodeBuilder, PodBuilder};
use topospread::convert;

const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

/// A cluster of `(node, zone)` with `cpu` allocatable each.
fn cluster(nodes: &[(&str, &str)], cpu: &str) -> Snapshot {
    let mut s = Snapshot::new();
    for (name, zone) in nodes {
        let n = NodeBuilder::new(name)
            .label(ZONE, zone)
            .label(HOST, name)
            .allocatable("cpu", cpu)
            .allocatable("memory", "64Gi")
            .allocatable("pods", "110")
            .build();
        let n = convert::node(&n, s.symbols_mut()).expect("node converts");
        s.add_node(n).expect("node is new");
    }
    s
}

fn add(s: &mut Snapshot, pod: k8s_openapi::api::core::v1::Pod) {
    let p = convert::pod(&pod, s.symbols_mut()).expect("pod converts");
    s.add_pod(p).expect("pod is new");
}

/// A `web` pod of ReplicaSet `web` spread over zones (maxSkew 1, DoNotSchedule).
fn web(name: &str, node: &str) -> PodBuilder {
    PodBuilder::new(name)
        .label("app", "web")
        .owner("apps/v1", "ReplicaSet", "web")
        .request("cpu", "100m")
        .node(node)
        .spread(1, ZONE, "DoNotSchedule", &[("app", "web")])
}

/// One node per zone (`n0` in `z0`, ...), `counts[i]` web pods on `n{i}`.
fn zones_with(counts: &[usize]) -> Snapshot {
    let names: Vec<(String, String)> = (0..counts.len())
        .map(|i| (format!("n{i}"), format!("z{i}")))
        .collect();
    let refs: Vec<(&str, &str)> = names
        .iter()
        .map(|(n, z)| (n.as_str(), z.as_str()))
        .collect();
    let mut s = cluster(&refs, "16");
    let mut k = 0;
    for (i, c) in counts.iter().enumerate() {
        for _ in 0..*c {
            add(
                &mut s,
                web(&format!("web-{k:02}"), &format!("n{i}")).build(),
            );
            k += 1;
        }
    }
    s
}

fn run(s: &Snapshot, options: &RebalanceOptions) -> Plan {
    plan(s, &SchedulerConfig::default(), Features::default(), options).expect("plan")
}

/// [`run`] with the scheduler of release `1.minor`.
fn run_at(minor: u32, s: &Snapshot, options: &RebalanceOptions) -> Plan {
    let release = topospread::version::KubernetesVersion { minor };
    plan(
        s,
        &SchedulerConfig::default(),
        Features::for_release(release),
        options,
    )
    .expect("plan")
}

/// The fewest moves that bring `counts` to maxSkew 1: the excess over the balanced
/// target, the larger targets going to the larger domains.
fn known_minimum(counts: &[usize]) -> usize {
    let total: usize = counts.iter().sum();
    let (q, r) = (total / counts.len(), total % counts.len());
    let mut sorted = counts.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    sorted
        .iter()
        .enumerate()
        .map(|(i, c)| c.saturating_sub(q + usize::from(i < r)))
        .sum()
}

fn zone_counts(p: &Plan) -> Vec<i64> {
    let c = &p.after[0].constraints[0];
    c.counts.values().copied().collect()
}

#[test]
fn one_constraint_takes_the_known_minimum_of_moves() {
    for counts in [
        vec![6, 0, 0],
        vec![5, 1, 0],
        vec![3, 3, 0],
        vec![4, 4, 0, 0],
        vec![7, 2, 0],
        vec![3, 3, 1, 0],
        vec![9, 0, 0, 0, 1],
    ] {
        let s = zones_with(&counts);
        let p = run(&s, &RebalanceOptions::default());
        assert_eq!(
            p.moves.len(),
            known_minimum(&counts),
            "{counts:?}: {:#?}",
            p.moves
        );
        assert_eq!(p.final_violations, 0, "{counts:?}");
        let after = zone_counts(&p);
        let (max, min) = (after.iter().max(), after.iter().min());
        assert!(
            max.zip(min).is_some_and(|(a, b)| a - b <= 1),
            "{counts:?} -> {after:?}"
        );
        assert!(p.unresolved.is_empty(), "{:?}", p.unresolved);
        assert!(p.moves.iter().all(|m| m.from != m.to));
    }
}

#[test]
fn a_balanced_cluster_needs_no_move() {
    let s = zones_with(&[2, 2, 1]);
    let p = run(&s, &RebalanceOptions::default());
    assert!(p.moves.is_empty());
    assert_eq!(p.violation_after, Violation::default());
}

#[test]
fn the_same_input_gives_the_same_plan() {
    let s = zones_with(&[5, 1, 0, 2]);
    let a = run(&s, &RebalanceOptions::default());
    let b = run(&s, &RebalanceOptions::default());
    assert_eq!(a.moves, b.moves);
    assert!(!a.moves.is_empty());
    // The repaired constraint is named.
    assert!(
        a.moves[0]
            .reason
            .to_string()
            .contains("maxSkew=1 DoNotSchedule"),
        "{}",
        a.moves[0].reason
    );
}

#[test]
fn a_budget_without_disruptions_blocks_every_move() {
    let mut s = zones_with(&[4, 0, 0]);
    let pdb: policy::PodDisruptionBudget = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web-pdb", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 4, "desiredHealthy": 4,
                   "expectedPods": 4}
    }))
    .expect("pdb");
    let ns = s.symbols_mut().intern("default");
    let budget = DisruptionBudget::from_k8s(&pdb, ns, s.symbols_mut());
    s.workloads_mut().disruption_budgets.add(budget);
    let p = run(&s, &RebalanceOptions::default());
    assert!(p.moves.is_empty(), "{:?}", p.moves);
    assert_eq!(p.final_violations, 1);
    assert_eq!(p.unresolved.len(), 1);
    assert!(
        p.unresolved[0]
            .why
            .contains("PodDisruptionBudget default/web-pdb allows no disruptions"),
        "{}",
        p.unresolved[0].why
    );
}

#[test]
fn pods_no_controller_recreates_never_move() {
    let mut s = cluster(&[("n0", "z0"), ("n1", "z1")], "16");
    for i in 0..3 {
        let pod = PodBuilder::new(&format!("bare-{i}"))
            .label("app", "web")
            .node("n0")
            .spread(1, ZONE, "DoNotSchedule", &[("app", "web")])
            .build();
        add(&mut s, pod);
    }
    let p = run(&s, &RebalanceOptions::default());
    assert!(p.moves.is_empty());
    assert!(p.unresolved[0].why.contains("not managed by a controller"));
}

#[test]
fn a_full_zone_gets_room_made_first() {
    let mut s = cluster(&[("a1", "za"), ("b1", "zb"), ("c1", "zc")], "1");
    for i in 0..4 {
        add(&mut s, web(&format!("web-{i}"), "a1").build());
    }
    add(&mut s, web("web-4", "b1").build());
    // Two batch pods fill c1, the only node of the empty zone.
    for i in 0..2 {
        let filler = PodBuilder::new(&format!("batch-{i}"))
            .label("app", "batch")
            .owner("apps/v1", "ReplicaSet", "batch")
            .request("cpu", "500m")
            .node("c1")
            .build();
        add(&mut s, filler);
    }
    let p = run(&s, &RebalanceOptions::default());
    assert_eq!(p.final_violations, 0, "{:#?}", p);
    let helper = p
        .moves
        .iter()
        .find(|m| m.pod.starts_with("batch-"))
        .expect("the batch pod makes room");
    assert!(
        helper
            .reason
            .to_string()
            .starts_with("make room for default/web-"),
        "{}",
        helper.reason
    );
    assert_eq!(helper.from, "c1");
    assert_eq!(zone_counts(&p), vec![2, 2, 1]);
}

#[test]
fn the_selector_must_match_a_bound_pod() {
    let s = zones_with(&[2, 0]);
    let options = RebalanceOptions {
        selector: Some(LabelSelector {
            match_labels: Some([("app".to_string(), "nope".to_string())].into()),
            ..LabelSelector::default()
        }),
        ..RebalanceOptions::default()
    };
    let err = plan(
        &s,
        &SchedulerConfig::default(),
        Features::default(),
        &options,
    )
    .expect_err("nothing selected");
    assert_eq!(err.to_string(), "no bound pod matches selector app=nope");
}

#[test]
fn scale_down_ten_to_three_keeps_one_per_zone() {
    let mut s = cluster(&[("n0", "z0"), ("n1", "z1"), ("n2", "z2")], "16");
    for i in 0..10 {
        add(
            &mut s,
            web(&format!("web-{i}"), &format!("n{}", i % 3)).build(),
        );
    }
    let p = plan_scale_down(
        &s,
        &SchedulerConfig::default(),
        Features::default(),
        "default",
        "web",
        "replicaset/web",
        3,
    )
    .expect("scale plan");
    let deleted: Vec<&DeletionCost> = p.pods.iter().filter(|d| d.delete).collect();
    assert_eq!(deleted.len(), 7);
    assert!(deleted.iter().all(|d| d.cost < 0));
    assert!(p.pods.iter().filter(|d| !d.delete).all(|d| d.cost == 0));
    let after: Vec<i64> = p.after[0].constraints[0].counts.values().copied().collect();
    assert_eq!(after, vec![1, 1, 1]);
    let costs: Vec<i64> = deleted.iter().map(|d| d.cost).collect();
    assert_eq!(costs, vec![-7, -6, -5, -4, -3, -2, -1]);
}

#[test]
fn scale_down_refuses_an_unknown_workload_and_a_scale_up() {
    let s = zones_with(&[2, 1]);
    let cfg = SchedulerConfig::default();
    let err = plan_scale_down(
        &s,
        &cfg,
        Features::default(),
        "default",
        "api",
        "replicaset/api",
        1,
    )
    .expect_err("unknown");
    assert!(matches!(err, RebalanceError::UnknownWorkload { .. }));
    let err = plan_scale_down(
        &s,
        &cfg,
        Features::default(),
        "default",
        "web",
        "replicaset/web",
        9,
    )
    .expect_err("not down");
    assert!(matches!(err, RebalanceError::NotAScaleDown { has: 3, .. }));
}

#[test]
fn the_descheduler_replay_balances_one_constraint_in_rounds() {
    let s = zones_with(&[6, 0, 0]);
    let options = RebalanceOptions {
        strategy: Strategy::Descheduler,
        ..RebalanceOptions::default()
    };
    let p = run(&s, &options);
    assert!(p.rounds >= 1);
    assert_eq!(p.final_violations, 0, "{:#?}", p.moves);
    assert!(p.moves.len() >= known_minimum(&[6, 0, 0]));
}

#[test]
fn zone_and_hostname_together_are_repaired_without_looping() {
    // Two zones; zone a has two nodes. Every pod carries a zone and a hostname
    // constraint; all six start on a1.
    let mut s = cluster(
        &[("a1", "za"), ("a2", "za"), ("b1", "zb"), ("b2", "zb")],
        "16",
    );
    for i in 0..6 {
        let pod = web(&format!("web-{i}"), "a1")
            .spread(1, HOST, "DoNotSchedule", &[("app", "web")])
            .build();
        add(&mut s, pod);
    }
    let p = run(&s, &RebalanceOptions::default());
    assert_eq!(p.final_violations, 0, "{:#?}", p.moves);
    // 6 pods over 4 nodes: 2,2,1,1 at best, so at least 4 pods leave a1.
    assert_eq!(p.moves.len(), 4, "{:#?}", p.moves);
}

/// `web` pod `name` on `node`, its spec edited by `f`.
fn web_with(
    name: &str,
    node: &str,
    f: impl FnOnce(&mut k8s_openapi::api::core::v1::PodSpec),
) -> k8s_openapi::api::core::v1::Pod {
    let mut pod = web(name, node).build();
    if let Some(spec) = pod.spec.as_mut() {
        f(spec);
    }
    pod
}

fn pinned_to(zone: &str) -> impl FnOnce(&mut k8s_openapi::api::core::v1::PodSpec) {
    let zone = zone.to_string();
    move |spec| {
        spec.node_selector = Some([(ZONE.to_string(), zone)].into_iter().collect());
    }
}

fn descheduler_once() -> RebalanceOptions {
    RebalanceOptions {
        strategy: Strategy::Descheduler,
        max_rounds: 1,
        ..RebalanceOptions::default()
    }
}

#[test]
fn the_descheduler_evicts_the_highest_priority_pods_first() {
    // balanceDomains pops pods off the end of a list sorted by ascending priority.
    let mut s = cluster(&[("n0", "z0"), ("n1", "z1")], "16");
    for (i, prio) in [100, 0, 50, 0].into_iter().enumerate() {
        add(
            &mut s,
            web_with(&format!("web-{i}"), "n0", |spec| spec.priority = Some(prio)),
        );
    }
    let p = run(&s, &descheduler_once());
    let mut evicted: Vec<&str> = p.moves.iter().map(|m| m.pod.as_str()).collect();
    evicted.sort_unstable();
    assert_eq!(evicted, ["web-0", "web-2"], "{:#?}", p.moves);
}

#[test]
fn the_descheduler_counts_a_pinned_pod_as_moved_without_evicting_it() {
    // [5, 0]: two pods are taken from the end of z0's list. Pods with a nodeSelector
    // sort first and pods that fit a node of z1 last, so the free ones go.
    let mut s = cluster(&[("n0", "z0"), ("n1", "z1")], "16");
    add(&mut s, web_with("web-0", "n0", pinned_to("z0")));
    add(&mut s, web_with("web-1", "n0", pinned_to("z0")));
    add(&mut s, web("web-2", "n0").build());
    add(&mut s, web("web-3", "n0").build());
    add(&mut s, web("web-4", "n0").build());
    let p = run(&s, &descheduler_once());
    assert_eq!(p.moves.len(), 2, "{:#?}", p.moves);
    assert!(p.moves.iter().all(|m| m.pod != "web-0" && m.pod != "web-1"));
    // [6, 0, 0] with one free pod: two are taken toward z1 (the free one and a pinned
    // one, which is counted as moved but not evicted), then two toward z2 (both
    // pinned): one eviction in all.
    let mut s = cluster(&[("n0", "z0"), ("n1", "z1"), ("n2", "z2")], "16");
    for i in 0..5 {
        add(&mut s, web_with(&format!("web-{i}"), "n0", pinned_to("z0")));
    }
    add(&mut s, web("web-5", "n0").build());
    let p = run(&s, &descheduler_once());
    assert_eq!(
        p.moves.iter().map(|m| m.pod.as_str()).collect::<Vec<_>>(),
        ["web-5"],
        "{:#?}",
        p.moves
    );
}

#[test]
fn the_descheduler_goes_on_to_the_next_domain() {
    // [0, 3, 3] (avg 2): z1 gives one to z0, then z2 gives one too.
    let s = zones_with(&[0, 3, 3]);
    let p = run(&s, &descheduler_once());
    let from: BTreeSet<&str> = p.moves.iter().map(|m| m.from.as_str()).collect();
    assert_eq!(p.moves.len(), 2, "{:#?}", p.moves);
    assert_eq!(from, ["n1", "n2"].into_iter().collect());
}

#[test]
fn the_default_strategy_tries_the_movable_pod_of_a_workload() {
    // Both pods of ReplicaSet web sit on a1; web-0 is pinned to za by a nodeSelector,
    // web-1 is not. Only web-1 can repair the spread.
    let mut s = cluster(&[("a1", "za"), ("b1", "zb")], "16");
    add(&mut s, web_with("web-0", "a1", pinned_to("za")));
    add(&mut s, web_with("web-1", "a1", |_| {}));
    add(&mut s, web_with("web-2", "a1", pinned_to("za")));
    let p = run(&s, &RebalanceOptions::default());
    assert_eq!(p.final_violations, 0, "{:#?} {:?}", p.moves, p.unresolved);
    assert_eq!(p.moves.len(), 1);
    assert_eq!(p.moves[0].pod, "web-1");
}

#[test]
fn the_default_strategy_moves_crowding_pods_without_the_constraint() {
    // One pod carries the constraint; the crowd that breaks it (same labels, another
    // ReplicaSet, no constraint) sits in za.
    let mut s = cluster(&[("a1", "za"), ("b1", "zb"), ("c1", "zc")], "16");
    add(&mut s, web("guard", "b1").build());
    for i in 0..8 {
        let pod = PodBuilder::new(&format!("crowd-{i}"))
            .label("app", "web")
            .owner("apps/v1", "ReplicaSet", "crowd")
            .request("cpu", "100m")
            .node("a1")
            .build();
        add(&mut s, pod);
    }
    let p = run_at(35, &s, &RebalanceOptions::default());
    assert_eq!(p.final_violations, 0, "{:#?} {:?}", p.moves, p.unresolved);
    assert!(p.moves.iter().all(|m| m.from != m.to), "{:#?}", p.moves);
    assert!(p.moves.iter().all(|m| m.pod.starts_with("crowd-")));
    // From 1.36 BalancedAllocation scores the change in balance (PR 135573): the empty
    // node of zc loses a point to the guard's node of zb, which ties them, and the
    // seeded tie-break sends every replacement to zb, which lowers nothing. The
    // planner says so instead of planning moves the scheduler would not make.
    let p = run(&s, &RebalanceOptions::default());
    assert!(p.moves.iter().all(|m| m.from != m.to), "{:#?}", p.moves);
    assert!(
        p.final_violations == 0 || !p.unresolved.is_empty(),
        "{p:#?}"
    );
}

/// Nodes `(name, zone, pool)` with 16 cpu each.
fn pooled(nodes: &[(&str, &str, &str)]) -> Snapshot {
    let mut s = Snapshot::new();
    for (name, zone, pool) in nodes {
        let n = NodeBuilder::new(name)
            .label(ZONE, zone)
            .label(HOST, name)
            .label("pool", pool)
            .allocatable("cpu", "16")
            .allocatable("memory", "64Gi")
            .allocatable("pods", "110")
            .build();
        let n = convert::node(&n, s.symbols_mut()).expect("node converts");
        s.add_node(n).expect("node is new");
    }
    s
}

#[test]
fn the_descheduler_counts_only_the_pods_its_evictor_and_selector_list() {
    // z0 has 3 web pods; z1 has 2 pods with the same labels that the evictor refuses
    // (no owner reference). Upstream lists only evictable pods, so it sees [3, 0] and
    // evicts; counting the strays would see [3, 2] and do nothing.
    let mut s = cluster(&[("n0", "z0"), ("n1", "z1")], "16");
    for i in 0..3 {
        add(&mut s, web(&format!("web-{i}"), "n0").build());
    }
    let mut options = descheduler_once();
    for i in 0..2 {
        let name = format!("stray-{i}");
        add(&mut s, web(&name, "n1").build());
        options
            .blockers
            .insert(("default".into(), name), NotEvictable::NoOwner);
    }
    let p = run(&s, &options);
    assert!(!p.moves.is_empty(), "{:#?}", p.moves);
    assert!(p.moves.iter().all(|m| m.pod.starts_with("web-")));
    // The same with the strays outside the label selector instead (`-l tier=front`).
    let mut s = cluster(&[("n0", "z0"), ("n1", "z1")], "16");
    for i in 0..3 {
        add(
            &mut s,
            web(&format!("web-{i}"), "n0")
                .label("tier", "front")
                .build(),
        );
    }
    for i in 0..2 {
        add(&mut s, web(&format!("stray-{i}"), "n1").build());
    }
    let mut options = descheduler_once();
    options.selector = Some(LabelSelector {
        match_labels: Some([("tier".to_string(), "front".to_string())].into()),
        ..LabelSelector::default()
    });
    let p = run(&s, &options);
    assert!(!p.moves.is_empty(), "{:#?}", p.moves);
    assert!(p.moves.iter().all(|m| m.pod.starts_with("web-")));
}

#[test]
fn the_descheduler_counts_pods_on_nodes_the_constraint_excludes() {
    // The pods require pool=a (nodeAffinityPolicy Honor excludes n2 from the
    // domains' nodes), but three of them run on n2 in z1: upstream counts a pod on any
    // node carrying the key, so z0 and z1 hold 3 each and nothing is evicted.
    let mut s = pooled(&[("n0", "z0", "a"), ("n1", "z1", "a"), ("n2", "z1", "b")]);
    let in_pool_a = |spec: &mut k8s_openapi::api::core::v1::PodSpec| {
        spec.node_selector = Some([("pool".to_string(), "a".to_string())].into());
    };
    for i in 0..3 {
        add(&mut s, web_with(&format!("web-{i}"), "n0", in_pool_a));
    }
    for i in 3..6 {
        add(&mut s, web_with(&format!("web-{i}"), "n2", in_pool_a));
    }
    let p = run(&s, &descheduler_once());
    assert!(p.moves.is_empty(), "{:#?}", p.moves);
}

#[test]
fn the_descheduler_node_fit_looks_only_below_the_average() {
    // [4, 0, 2], average 2: only z1 is below it, and its node has no room. z2 has room
    // but is not below the average, so with topologyBalanceNodeFit the taken pods fit
    // nowhere, are counted as moved, and none is evicted.
    let mut s = Snapshot::new();
    for (name, zone, cpu) in [("n0", "z0", "16"), ("n1", "z1", "50m"), ("n2", "z2", "16")] {
        let n = NodeBuilder::new(name)
            .label(ZONE, zone)
            .label(HOST, name)
            .allocatable("cpu", cpu)
            .allocatable("memory", "64Gi")
            .allocatable("pods", "110")
            .build();
        let n = convert::node(&n, s.symbols_mut()).expect("node converts");
        s.add_node(n).expect("node is new");
    }
    for (i, node) in ["n0", "n0", "n0", "n0", "n2", "n2"].into_iter().enumerate() {
        add(&mut s, web(&format!("web-{i}"), node).build());
    }
    let p = run(&s, &descheduler_once());
    assert!(p.moves.is_empty(), "{:#?}", p.moves);
    // Without topologyBalanceNodeFit it evicts pods that then fit no node (z1 is full).
    let options = RebalanceOptions {
        topology_balance_node_fit: false,
        ..descheduler_once()
    };
    assert!(!run(&s, &options).moves.is_empty());
}

#[test]
fn the_descheduler_evictor_takes_any_owner_reference() {
    let mut pod = web("web-0", "n0").build();
    assert_eq!(descheduler_eviction_blocker(&pod), None);
    // Not a controller reference: upstream's evictor accepts it, the default rules do not.
    for o in pod.metadata.owner_references.iter_mut().flatten() {
        o.controller = Some(false);
    }
    assert_eq!(descheduler_eviction_blocker(&pod), None);
    assert_eq!(eviction_blocker(&pod), Some(NotEvictable::NoController));
    // A DaemonSet owner blocks whether or not it is the controller.
    for o in pod.metadata.owner_references.iter_mut().flatten() {
        o.kind = "DaemonSet".into();
    }
    assert_eq!(
        descheduler_eviction_blocker(&pod),
        Some(NotEvictable::DaemonSet)
    );
    pod.metadata.owner_references = None;
    assert_eq!(
        descheduler_eviction_blocker(&pod),
        Some(NotEvictable::NoOwner)
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    /// The default strategy on random zone counts (two nodes a zone): it returns, every
    /// move changes the pod's node (no eviction that lands back where it was), no pod
    /// moves twice, it takes the known minimum of moves, and the spread ends within maxSkew.
    #[test]
    fn the_default_strategy_ends_with_real_moves_only(
        counts in proptest::collection::vec(0usize..7, 2..5)
    ) {
        let total: usize = counts.iter().sum();
        proptest::prop_assume!(total > 0);
        let nodes: Vec<(String, String)> = (0..counts.len())
            .flat_map(|z| (0..2).map(move |k| (format!("n{z}-{k}"), format!("z{z}"))))
            .collect();
        let refs: Vec<(&str, &str)> =
            nodes.iter().map(|(n, z)| (n.as_str(), z.as_str())).collect();
        let mut s = cluster(&refs, "16");
        let mut k = 0;
        for (z, c) in counts.iter().enumerate() {
            for i in 0..*c {
                add(&mut s, web(&format!("web-{k:02}"), &format!("n{z}-{}", i % 2)).build());
                k += 1;
            }
        }
        let p = run(&s, &RebalanceOptions::default());
        proptest::prop_assert!(p.moves.iter().all(|m| m.from != m.to), "{:#?}", p.moves);
        let moved: BTreeSet<&str> = p.moves.iter().map(|m| m.pod.as_str()).collect();
        proptest::prop_assert_eq!(moved.len(), p.moves.len());
        proptest::prop_assert_eq!(p.moves.len(), known_minimum(&counts));
        proptest::prop_assert_eq!(p.final_violations, 0);
    }
}
