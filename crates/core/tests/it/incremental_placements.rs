//! Placements are identical with incremental counting on and off, on random clusters,
//! through the whole default profile: random constraints, node inclusion policies,
//! node selectors, tolerations, nodes without a zone, pods deleted and nodes added
//! mid-run, and preemption. The same runs prove that screening Filters (which skip the
//! rest of the chain on nodes they reject) decide exactly as the full chain `explain`
//! runs.

use k8s_openapi::api::core::v1::Toleration;
use proptest::prelude::*;
use std::collections::BTreeMap;
use topospread::builders::{NodeBuilder, PodBuilder};
use topospread::{Features, ScheduleResult, Scheduler, SchedulerConfig, Snapshot, convert};

/// A node: its zone (None = no zone label) and whether it is tainted.
type NodeSpec = (Option<u8>, bool);

/// One step of a run.
#[derive(Clone, Debug)]
enum Step {
    /// Schedule a new pod.
    Pod(PodSpec),
    /// Delete the n-th bound pod (modulo how many are bound).
    Delete(usize),
    /// Add a node.
    Node(NodeSpec),
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
}

fn add_node(s: &mut Snapshot, i: usize, (zone, tainted): NodeSpec) {
    let name = format!("n{i}");
    let mut b = NodeBuilder::new(&name)
        .label("kubernetes.io/hostname", &name)
        .allocatable("cpu", "1")
        .allocatable("memory", "8Gi")
        .allocatable("pods", "20");
    if let Some(z) = zone {
        b = b.label("topology.kubernetes.io/zone", &format!("z{z}"));
    }
    if tainted {
        b = b.taint("dedicated", "x", "NoSchedule");
    }
    let n = convert::node(&b.build(), s.symbols_mut()).expect("valid node");
    s.add_node(n).expect("unique node");
}

fn build_pod(i: usize, p: &PodSpec) -> k8s_openapi::api::core::v1::Pod {
    let app = format!("a{}", p.app);
    let mut b = PodBuilder::new(&format!("p{i}"))
        .label("app", &app)
        .request("cpu", "300m");
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
    for (i, n) in nodes.iter().enumerate() {
        add_node(&mut s, i, *n);
    }
    let mut sched = Scheduler::new(&SchedulerConfig::default(), Features::default(), &mut s)
        .expect("default profile");
    sched.set_seed(7);
    let mut bound = Vec::new();
    let mut out = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Node(spec) => {
                let i = s.nodes().len();
                add_node(&mut s, i, *spec);
                out.push("node added".to_string());
            }
            Step::Delete(k) => {
                if !bound.is_empty() {
                    let id = bound.remove(k % bound.len());
                    let name = s.remove_pod(id).map(|p| p.name.to_string());
                    out.push(format!("deleted {name:?}"));
                }
            }
            Step::Pod(spec) => {
                let p = convert::pod(&build_pod(i, spec), s.symbols_mut()).expect("valid pod");
                let (mut result, preemption) = match mode {
                    Mode::Schedule { .. } => (sched.schedule_one(&s, &p), sched.take_preemption()),
                    Mode::Explain => {
                        let e = sched.explain(&s, &p);
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
                    result = sched.schedule_nominated(&s, &p, pre.node);
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
            }
        }
    }
    out
}

fn node_spec() -> impl Strategy<Value = NodeSpec> {
    (
        prop::option::weighted(0.85, 0u8..3),
        prop::bool::weighted(0.25),
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
    )
        .prop_map(
            |(app, constraints, policies, zone_selector, tolerates, high_priority)| PodSpec {
                app,
                constraints,
                policies,
                zone_selector,
                tolerates,
                high_priority,
            },
        )
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => pod_spec().prop_map(Step::Pod),
        1 => any::<usize>().prop_map(Step::Delete),
        1 => node_spec().prop_map(Step::Node),
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
