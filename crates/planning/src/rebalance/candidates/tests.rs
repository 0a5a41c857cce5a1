//! The kept candidates against the straightforward search, after moves, trials, undos
//! and reused pod slots, and whole plans made with each.

use super::reference::Reference;
use super::{Index, Search};
use crate::rebalance::greedy::run_with;
use crate::rebalance::trial::Context;
use crate::rebalance::{Plan, RebalanceOptions};
use k8s_openapi::api::policy::v1 as policy;
use proptest::prelude::*;
use topospread::Features;
use topospread::api::DisruptionBudget;
use topospread::builders::{NodeBuilder, PodBuilder};
use topospread::config::SchedulerConfig;
use topospread::convert;
use topospread::snapshot::{NodeId, PodId, Snapshot};

const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

/// A pod of the random clusters: `workload` 0 is ReplicaSet `web` (zone, DoNotSchedule),
/// 1 is ReplicaSet `api` (zone ScheduleAnyway, hostname DoNotSchedule honouring
/// taints), 2 a bare `web` pod no controller recreates; `variant` 1 adds a canary label,
/// 2 a larger request, 3 makes it terminating.
#[derive(Clone, Debug)]
struct PodSpec {
    workload: usize,
    node: usize,
    variant: usize,
}

#[derive(Clone, Debug)]
struct ClusterSpec {
    zones: usize,
    per_zone: usize,
    /// A node without the zone label.
    unzoned: bool,
    /// A node tainted NoSchedule (the hostname constraint leaves it out).
    tainted: bool,
    pods: Vec<PodSpec>,
    /// A budget allowing no disruption of canaries.
    budget: bool,
}

fn cluster_spec() -> impl Strategy<Value = ClusterSpec> {
    (
        2usize..4,
        1usize..3,
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec((0usize..3, 0usize..16, 0usize..4), 1..28),
        any::<bool>(),
    )
        .prop_map(
            |(zones, per_zone, unzoned, tainted, pods, budget)| ClusterSpec {
                zones,
                per_zone,
                unzoned,
                tainted,
                pods: pods
                    .into_iter()
                    .map(|(workload, node, variant)| PodSpec {
                        workload,
                        node,
                        variant,
                    })
                    .collect(),
                budget,
            },
        )
}

fn node_names(spec: &ClusterSpec) -> Vec<String> {
    let mut names: Vec<String> = (0..spec.zones * spec.per_zone)
        .map(|i| format!("n{i}"))
        .collect();
    if spec.unzoned {
        names.push("bare".into());
    }
    if spec.tainted {
        names.push("tainted".into());
    }
    names
}

fn pod(name: &str, p: &PodSpec, node: &str) -> k8s_openapi::api::core::v1::Pod {
    let app = if p.workload == 1 { "api" } else { "web" };
    let mut b = PodBuilder::new(name)
        .label("app", app)
        .request("cpu", if p.variant == 2 { "300m" } else { "100m" })
        .node(node);
    if p.workload < 2 {
        b = b.owner("apps/v1", "ReplicaSet", app);
    }
    if p.variant == 1 {
        b = b.label("tier", "canary");
    }
    b = if p.workload == 1 {
        b.spread(1, ZONE, "ScheduleAnyway", &[("app", "api")])
            .spread(1, HOST, "DoNotSchedule", &[("app", "api")])
            .inclusion_policies("Ignore", "Honor")
    } else {
        b.spread(1, ZONE, "DoNotSchedule", &[("app", "web")])
    };
    let mut pod = b.build();
    if p.variant == 3 {
        pod.metadata.deletion_timestamp =
            Some(serde_json::from_value(serde_json::json!("2026-11-01T10:00:00Z")).expect("time"));
    }
    pod
}

fn build(spec: &ClusterSpec) -> Snapshot {
    let mut s = Snapshot::new();
    for (i, name) in node_names(spec).iter().enumerate() {
        let mut n = NodeBuilder::new(name)
            .label(HOST, name)
            .allocatable("cpu", "4")
            .allocatable("pods", "110");
        if name != "bare" {
            n = n.label(ZONE, &format!("z{}", i % spec.zones));
        }
        if name == "tainted" {
            n = n.taint("dedicated", "batch", "NoSchedule");
        }
        let n = convert::node(&n.build(), s.symbols_mut()).expect("node converts");
        s.add_node(n).expect("node is new");
    }
    let names = node_names(spec);
    for (k, p) in spec.pods.iter().enumerate() {
        let pod = pod(&format!("p{k:02}"), p, &names[p.node % names.len()]);
        let pod = convert::pod(&pod, s.symbols_mut()).expect("pod converts");
        s.add_pod(pod).expect("pod is new");
    }
    if spec.budget {
        let pdb: policy::PodDisruptionBudget = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "canaries", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"tier": "canary"}}},
            "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1,
                       "expectedPods": 1}
        }))
        .expect("pdb");
        let ns = s.symbols_mut().intern("default");
        let budget = DisruptionBudget::from_k8s(&pdb, ns, s.symbols_mut());
        s.workloads_mut().disruption_budgets.add(budget);
    }
    s
}

fn context(s: &Snapshot) -> Option<Context> {
    Context::new(
        s.clone(),
        &SchedulerConfig::default(),
        Features::default(),
        &RebalanceOptions::default(),
    )
    .ok()
}

/// The bound pods in slot order.
fn bound(ctx: &Context) -> Vec<PodId> {
    ctx.snapshot
        .pods()
        .filter(|(id, _)| ctx.snapshot.pod_node(*id).is_some())
        .map(|(id, _)| id)
        .collect()
}

/// One change to the planner's cluster, as the strategy makes them.
fn apply(ctx: &mut Context, op: (usize, usize, usize), fresh: usize) {
    let (kind, a, b) = op;
    let pods = bound(ctx);
    let Some(&id) = pods.get(a % pods.len().max(1)) else {
        return;
    };
    let nodes = ctx.snapshot.nodes().len();
    match kind {
        // A move kept.
        0 => {
            ctx.try_move(id).expect("move");
        }
        // A trial undone.
        1 => {
            if let Some(applied) = ctx.try_move(id).expect("move") {
                ctx.undo(applied).expect("undo");
            }
        }
        // A checked move replayed.
        2 => {
            let to = NodeId(u32::try_from(b % nodes).expect("few nodes"));
            ctx.move_to(id, to).expect("move");
        }
        // The slot reused by another pod, of another shape and workload.
        _ => {
            ctx.remove_pod(id);
            let node = ctx.node_name(NodeId(u32::try_from(b % nodes).expect("few nodes")));
            let spec = PodSpec {
                workload: b % 2,
                node: 0,
                variant: 1,
            };
            let p = pod(&format!("new-{fresh}"), &spec, &node);
            let p = convert::pod(&p, ctx.snapshot.symbols_mut()).expect("pod converts");
            let reused = ctx.add_pod(p).expect("pod is new");
            assert_eq!(reused, id, "the freed slot is reused");
        }
    }
    ctx.groups.refresh(&ctx.snapshot);
}

/// What a report shows of a plan.
fn shown(p: &Plan) -> String {
    format!(
        "{:?}\n{:?}\n{:?}\n{:?} {} {}",
        p.moves, p.unresolved, p.after, p.violation_after, p.final_violations, p.rounds
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// After every change the strategy makes to its cluster (a move, a trial undone, a
    /// replayed move, a slot reused by another pod), the kept candidates are the ones a
    /// fresh read of every pod gives: the same groups in the same order, the same first
    /// pods by name, totals, blocked reasons, second pods and crowding.
    #[test]
    fn the_kept_candidates_are_a_fresh_reads(
        spec in cluster_spec(),
        ops in proptest::collection::vec((0usize..4, 0usize..64, 0usize..16), 0..10),
        limit in prop_oneof![Just(1usize), Just(2), Just(64)],
    ) {
        let s = build(&spec);
        let Some(mut ctx) = context(&s) else {
            return Err(TestCaseError::reject("no bound pod in scope"));
        };
        let mut index = Index::default();
        let warm = index.candidates(&mut ctx, limit);
        prop_assert_eq!(&warm, &Reference.candidates(&mut ctx, limit));
        for (k, op) in ops.into_iter().enumerate() {
            apply(&mut ctx, op, k);
            let warm = index.candidates(&mut ctx, limit);
            let fresh = Reference.candidates(&mut ctx, limit);
            prop_assert_eq!(&warm, &fresh, "after {:?}", op);
        }
    }

    /// Whole plans made with the kept candidates and with the straightforward search
    /// are the same: moves, reasons, what stays unresolved, and the spread after.
    #[test]
    fn plans_with_kept_candidates_are_the_reference_plans(spec in cluster_spec()) {
        let s = build(&spec);
        let options = RebalanceOptions::default();
        let (Some(mut a), Some(mut b)) = (context(&s), context(&s)) else {
            return Err(TestCaseError::reject("no bound pod in scope"));
        };
        let kept = run_with(&mut a, &options, &mut Index::default()).expect("plan");
        let fresh = run_with(&mut b, &options, &mut Reference).expect("plan");
        prop_assert_eq!(shown(&kept), shown(&fresh));
    }
}

/// Six alike pods are one candidate; after a move, and after a slot is reused by a pod
/// of another shape, the kept candidates are a fresh read's (the canary is tried on its
/// own).
#[test]
fn a_reused_slot_is_read_afresh() {
    let spec = ClusterSpec {
        zones: 3,
        per_zone: 1,
        unzoned: false,
        tainted: false,
        pods: (0..6)
            .map(|_| PodSpec {
                workload: 0,
                node: 0,
                variant: 0,
            })
            .collect(),
        budget: false,
    };
    let s = build(&spec);
    let mut ctx = context(&s).expect("context");
    let mut index = Index::default();
    let first = index.candidates(&mut ctx, 64);
    assert_eq!(first.per_group.len(), 1);
    assert_eq!(first.per_group[0].total, 1, "six alike pods, one candidate");
    assert_eq!(first.second.len(), 1, "a second pod for pairs");
    let id = first.per_group[0].first[0];
    assert!(ctx.try_move(id).expect("move").is_some());
    ctx.groups.refresh(&ctx.snapshot);
    // A slot reused by a canary of the same ReplicaSet, on the crowded node.
    let gone = ctx.snapshot.pod_id("default", "p05").expect("p05 bound");
    ctx.remove_pod(gone);
    let canary = PodSpec {
        workload: 0,
        node: 0,
        variant: 1,
    };
    let canary = convert::pod(&pod("canary", &canary, "n0"), ctx.snapshot.symbols_mut())
        .expect("pod converts");
    assert_eq!(ctx.add_pod(canary).expect("pod is new"), gone);
    ctx.groups.refresh(&ctx.snapshot);
    let warm = index.candidates(&mut ctx, 64);
    assert_eq!(warm.per_group[0].total, 2, "the canary is tried on its own");
    assert_eq!(warm, Reference.candidates(&mut ctx, 64));
}
