//! Placements are identical with incremental counting on and off, on random clusters,
//! through the whole default profile: random constraints, node inclusion policies,
//! node selectors, tolerations, nodes without a zone, pods deleted, nodes added,
//! cordoned, resized and removed mid-run, runs of identical replicas, and preemption.
//! Off, incremental counting also keeps no Filter verdict or score across cycles, so the
//! same runs prove the per-node verdicts and scores kept for a template's replicas
//! decide as cycles run from scratch. They also prove that screening Filters (which skip
//! the rest of the chain on nodes they reject) decide exactly as the full chain
//! `explain` runs.

use k8s_openapi::api::core::v1::Toleration;
use proptest::prelude::*;
use std::collections::BTreeMap;
use topospread::builders::{NodeBuilder, PodBuilder};
use topospread::{Features, ScheduleResult, Scheduler, SchedulerConfig, Snapshot, convert};

/// A node: its zone (None = no zone label) and its taint (0: none, 1: NoSchedule,
/// 2: PreferNoSchedule).
type NodeSpec = (Option<u8>, u8);

/// One step of a run.
#[derive(Clone, Debug)]
enum Step {
    /// Schedule a new pod.
    Pod(PodSpec),
    /// Delete the n-th bound pod (modulo how many are bound).
    Delete(usize),
    /// Add a node.
    Node(NodeSpec),
    /// Schedule this many identical replicas of one pod, one cycle each.
    Replicas(PodSpec, u8),
    /// Cordon the n-th node (modulo the nodes), or uncordon it if cordoned.
    Cordon(usize),
    /// Give the n-th node 2 cpus instead of 1, or back.
    Resize(usize),
    /// Remove the n-th node.
    RemoveNode(usize),
}

/// A node as the run last set it.
#[derive(Clone, Debug)]
struct NodeState {
    name: String,
    spec: NodeSpec,
    cordoned: bool,
    big: bool,
    removed: bool,
}

#[derive(Clone, Debug)]
struct PodSpec {
    app: u8,
    /// (on hostname?, maxSkew, DoNotSchedule?) per constraint; none = system defaults.
    constraints: Vec<(bool, u8, bool)>,
    /// Node affinity policy Honor?, node taints policy Honor?
    policies: Option<(bool, bool)>,
    /// nodeSelector on a zone.
    zone_selector: Option<u8>,
    tolerates: bool,
    high_priority: bool,
    /// cpu request in millicores.
    cpu: u16,
}

fn node_object(s: &mut Snapshot, n: &NodeState) -> topospread::api::Node {
    let (zone, taint) = n.spec;
    let mut b = NodeBuilder::new(&n.name)
        .label("kubernetes.io/hostname", &n.name)
        .allocatable("cpu", if n.big { "2" } else { "1" })
        .allocatable("memory", "8Gi")
        .allocatable("pods", "20");
    if let Some(z) = zone {
        b = b.label("topology.kubernetes.io/zone", &format!("z{z}"));
    }
    match taint {
        1 => b = b.taint("dedicated", "x", "NoSchedule"),
        2 => b = b.taint("dedicated", "x", "PreferNoSchedule"),
        _ => {}
    }
    let mut node = b.build();
    if n.cordoned {
        node.spec.get_or_insert_with(Default::default).unschedulable = Some(true);
    }
    convert::node(&node, s.symbols_mut()).expect("valid node")
}

fn add_node(s: &mut Snapshot, nodes: &mut Vec<NodeState>, spec: NodeSpec) {
    let n = NodeState {
        name: format!("n{}", nodes.len()),
        spec,
        cordoned: false,
        big: false,
        removed: false,
    };
    let node = node_object(s, &n);
    s.add_node(node).expect("unique node");
    nodes.push(n);
}

fn build_pod(i: usize, p: &PodSpec) -> k8s_openapi::api::core::v1::Pod {
    let app = format!("a{}", p.app);
    let mut b = PodBuilder::new(&format!("p{i}"))
        .label("app", &app)
        .request("cpu", &format!("{}m", p.cpu));
    for &(hostname, skew, hard) in &p.constraints {
        let key = if hostname {
            "kubernetes.io/hostname"
        } else {
            "topology.kubernetes.io/zone"
        };
        let when = if hard {
            "DoNotSchedule"
        } else {
            "ScheduleAnyway"
        };
        b = b.spread(i32::from(skew), key, when, &[("app", &app)]);
        if let Some((affinity, taints)) = p.policies {
            let policy = |honor: bool| if honor { "Honor" } else { "Ignore" };
            b = b.inclusion_policies(policy(affinity), policy(taints));
        }
    }
    let mut pod = b.build();
    let spec = pod.spec.get_or_insert_with(Default::default);
    if let Some(z) = p.zone_selector {
        spec.node_selector = Some(BTreeMap::from([(
            "topology.kubernetes.io/zone".to_string(),
            format!("z{z}"),
        )]));
    }
    if p.tolerates {
        spec.tolerations = Some(vec![Toleration {
            key: Some("dedicated".to_string()),
            operator: Some("Exists".to_string()),
            ..Toleration::default()
        }]);
    }
    spec.priority = Some(if p.high_priority { 100 } else { 0 });
    pod
}

/// How each pod's cycle runs.
#[derive(Clone, Copy)]
enum Mode {
    /// `schedule_one` with incremental counting on or off.
    Schedule { incremental: bool },
    /// `explain`: every Filter on every node, no screening.
    Explain,
}

/// Runs the steps; what happened at each (placement, Pending, victims), by name.
fn run(nodes: &[NodeSpec], steps: &[Step], mode: Mode) -> Vec<String> {
    let incremental = !matches!(mode, Mode::Schedule { incremental: false });
    let mut s = Snapshot::new();
    s.set_incremental(incremental);
    let mut states = Vec::new();
    for n in nodes {
        add_node(&mut s, &mut states, *n);
    }
    let mut sched = Scheduler::new(&SchedulerConfig::default(), Features::default(), &mut s)
        .expect("default profile");
    sched.set_seed(7);
    let mut bound = Vec::new();
    let mut out = Vec::new();
    let mut next = 0;
    for step in steps {
        match step {
            Step::Node(spec) => {
                add_node(&mut s, &mut states, *spec);
                out.push("node added".to_string());
            }
            Step::Cordon(k) | Step::Resize(k) | Step::RemoveNode(k) => {
                let live: Vec<usize> = (0..states.len()).filter(|&i| !states[i].removed).collect();
                if live.len() < 2 {
                    continue;
                }
                let n = &mut states[live[k % live.len()]];
                match step {
                    Step::Cordon(_) => n.cordoned = !n.cordoned,
                    Step::Resize(_) => n.big = !n.big,
                    _ => n.removed = true,
                }
                let n = n.clone();
                if n.removed {
                    s.remove_node(&n.name).expect("a live node");
                    bound.retain(|id| s.pod_node(*id).is_some());
                    out.push(format!("removed {}", n.name));
                } else {
                    let node = node_object(&mut s, &n);
                    s.update_node(&n.name, node).expect("a live node");
                    out.push(format!("updated {n:?}"));
                }
            }
            Step::Delete(k) => {
                if !bound.is_empty() {
                    let id = bound.remove(k % bound.len());
                    let name = s.remove_pod(id).map(|p| p.name.to_string());
                    out.push(format!("deleted {name:?}"));
                }
            }
            Step::Pod(spec) | Step::Replicas(spec, _) => {
                let n = match step {
                    Step::Replicas(_, n) => usize::from(*n),
                    _ => 1,
                };
                for _ in 0..n {
                    next += 1;
                    let line =
                        schedule(&mut s, &mut sched, mode, &build_pod(next, spec), &mut bound);
                    out.extend(line);
                }
            }
        }
    }
    out
}

/// One pod's cycle (and its nominated retry after preemption); the pod is bound where it
/// lands.
fn schedule(
    s: &mut Snapshot,
    sched: &mut Scheduler,
    mode: Mode,
    pod: &k8s_openapi::api::core::v1::Pod,
    bound: &mut Vec<topospread::snapshot::PodId>,
) -> Vec<String> {
    let mut out = Vec::new();
    let p = convert::pod(pod, s.symbols_mut()).expect("valid pod");
    let (mut result, preemption) = match mode {
        Mode::Schedule { .. } => (sched.schedule_one(s, &p), sched.take_preemption()),
        Mode::Explain => {
            let e = sched.explain(s, &p);
            (e.result, e.preemption)
        }
    };
    if let Some(pre) = preemption {
        let victims: Vec<String> = pre
            .victims
            .iter()
            .filter_map(|v| s.remove_pod(*v).map(|p| p.name.to_string()))
            .collect();
        bound.retain(|b| !pre.victims.contains(b));
        out.push(format!("preempted {victims:?} on {}", pre.node.0));
        result = sched.schedule_nominated(s, &p, pre.node);
    }
    match result {
        ScheduleResult::Scheduled {
            node,
            evaluated_nodes,
            feasible_nodes,
        } => {
            out.push(format!(
                "{} -> {} ({feasible_nodes}/{evaluated_nodes} feasible)",
                p.name,
                s.node(node).node.name
            ));
            let id = s.add_pod(p).expect("unique pod");
            s.bind(id, node);
            bound.push(id);
        }
        ScheduleResult::Unschedulable { message, .. } => {
            out.push(format!("{} pending: {message}", p.name));
        }
        ScheduleResult::Error(e) => out.push(format!("{} error: {e}", p.name)),
        other => out.push(format!("{} {other:?}", p.name)),
    }
    out
}

fn node_spec() -> impl Strategy<Value = NodeSpec> {
    (
        prop::option::weighted(0.85, 0u8..3),
        prop::sample::select(vec![0u8, 0, 0, 1, 2]),
    )
}

fn pod_spec() -> impl Strategy<Value = PodSpec> {
    (
        0u8..3,
        prop::collection::vec((any::<bool>(), 1u8..3, any::<bool>()), 0..3),
        prop::option::of((any::<bool>(), any::<bool>())),
        prop::option::weighted(0.2, 0u8..3),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.2),
        prop::sample::select(vec![100u16, 300, 300, 700]),
    )
        .prop_map(
            |(app, constraints, policies, zone_selector, tolerates, high_priority, cpu)| PodSpec {
                app,
                constraints,
                policies,
                zone_selector,
                tolerates,
                high_priority,
                cpu,
            },
        )
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => pod_spec().prop_map(Step::Pod),
        3 => (pod_spec(), 2u8..8).prop_map(|(p, n)| Step::Replicas(p, n)),
        1 => any::<usize>().prop_map(Step::Delete),
        1 => node_spec().prop_map(Step::Node),
        1 => any::<usize>().prop_map(Step::Cordon),
        1 => any::<usize>().prop_map(Step::Resize),
        1 => any::<usize>().prop_map(Step::RemoveNode),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn incremental_and_from_scratch_place_alike(
        nodes in prop::collection::vec(node_spec(), 1..12),
        steps in prop::collection::vec(step(), 1..50),
    ) {
        prop_assert_eq!(
            run(&nodes, &steps, Mode::Schedule { incremental: true }),
            run(&nodes, &steps, Mode::Schedule { incremental: false })
        );
    }

    #[test]
    fn screening_decides_as_the_full_filter_chain(
        nodes in prop::collection::vec(node_spec(), 1..12),
        steps in prop::collection::vec(step(), 1..50),
    ) {
        prop_assert_eq!(
            run(&nodes, &steps, Mode::Schedule { incremental: true }),
            run(&nodes, &steps, Mode::Explain)
        );
    }
}
