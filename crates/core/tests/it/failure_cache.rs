//! The failure cache (a failed cycle's verdict reused for the identical pods that follow
//! while the cluster and the nominations are unchanged) decides exactly as running every
//! cycle: same placements, same pending messages, same preemptions and victims, on
//! random clusters with replicas of a few templates, priorities, full nodes, and
//! clusters changing between runs of the queue.

use proptest::prelude::*;
use topospread::PodOutcome;
use topospread::SimEvent;
use topospread::builders::{NodeBuilder, PodBuilder};
use topospread::snapshot::PodId;
use topospread::{Features, Scheduler, SchedulerConfig, Simulation, Snapshot, convert};

/// A pod template: its replicas are identical but for their names.
#[derive(Clone, Debug)]
struct Template {
    /// cpu request in millicores (nodes have 1000 or 2000).
    cpu: u32,
    /// 0, 100 or 1000.
    priority: i32,
    /// A zone constraint with this maxSkew (DoNotSchedule).
    spread: Option<u8>,
    /// A nodeSelector on zone z0.
    pinned: bool,
}

/// What happens before each run of the queue.
#[derive(Clone, Debug)]
enum Change {
    /// `n` replicas of template `t` are created.
    Replicas { t: usize, n: usize },
    /// The k-th pod (modulo the pods) is deleted.
    Delete(usize),
    /// A node with this many millicores joins.
    Node(u32),
}

fn add_node(s: &mut Snapshot, sim: &mut Simulation, cpu: u32) {
    let i = s.nodes().len();
    let name = format!("n{i}");
    let n = NodeBuilder::new(&name)
        .label("kubernetes.io/hostname", &name)
        .label("topology.kubernetes.io/zone", &format!("z{}", i % 2))
        .allocatable("cpu", &format!("{cpu}m"))
        .allocatable("memory", "8Gi")
        .allocatable("pods", "10")
        .build();
    let n = convert::node(&n, s.symbols_mut()).expect("valid node");
    let now = sim.now();
    sim.scheduler_mut()
        .add_node(s, n, now)
        .expect("unique node");
}

fn pod(name: &str, t: usize, tpl: &Template) -> k8s_openapi::api::core::v1::Pod {
    let app = format!("t{t}");
    let mut b = PodBuilder::new(name)
        .label("app", &app)
        .request("cpu", &format!("{}m", tpl.cpu))
        .owner("apps/v1", "ReplicaSet", &app);
    if let Some(skew) = tpl.spread {
        b = b.spread(
            i32::from(skew),
            "topology.kubernetes.io/zone",
            "DoNotSchedule",
            &[("app", &app)],
        );
    }
    let mut p = b.build();
    let spec = p.spec.get_or_insert_with(Default::default);
    spec.priority = Some(tpl.priority);
    if tpl.pinned {
        spec.node_selector =
            Some([("topology.kubernetes.io/zone".to_string(), "z0".to_string())].into());
    }
    p
}

/// Runs the changes, the queue after each; returns every event and every pod's
/// outcome, rendered, and how many cycles the cache answered.
fn run(
    nodes: &[u32],
    templates: &[Template],
    changes: &[Change],
    cache: bool,
) -> (Vec<String>, u64) {
    let mut s = Snapshot::new();
    let mut sched = Scheduler::new(&SchedulerConfig::default(), Features::default(), &mut s)
        .expect("default profile");
    sched.set_seed(11);
    sched.set_failure_cache(cache);
    let mut sim = Simulation::new(sched);
    for &cpu in nodes {
        add_node(&mut s, &mut sim, cpu);
    }
    let mut created: Vec<PodId> = Vec::new();
    let mut out = Vec::new();
    let mut next = 0usize;
    for change in changes {
        match change {
            Change::Replicas { t, n } => {
                let t = t % templates.len();
                for _ in 0..*n {
                    next += 1;
                    let p = pod(&format!("p{next}"), t, &templates[t]);
                    let p = convert::pod(&p, s.symbols_mut()).expect("valid pod");
                    let now = sim.now();
                    let id = sim
                        .scheduler_mut()
                        .add_pod(&mut s, p, now)
                        .expect("unique pod")
                        .expect("a profile serves it");
                    created.push(id);
                }
            }
            Change::Delete(k) => {
                let live: Vec<PodId> = created
                    .iter()
                    .copied()
                    .filter(|id| s.pod(*id).is_some())
                    .collect();
                if !live.is_empty() {
                    let id = live[k % live.len()];
                    let now = sim.now();
                    sim.scheduler_mut().delete_pod(&mut s, id, now);
                }
            }
            Change::Node(cpu) => add_node(&mut s, &mut sim, *cpu),
        }
        sim.run(&mut s, |_, _| {}).expect("settles");
    }
    for e in sim.events() {
        out.push(match e {
            SimEvent::Bound { pod, node, attempt } => format!(
                "bound {:?} to {} (attempt {attempt})",
                s.pod(*pod).map(|p| p.name.to_string()),
                node.0
            ),
            SimEvent::Preempted { victim, node, by } => {
                format!("preempted {} on {} by {}", victim.name, node.0, by.0)
            }
            SimEvent::Replaced {
                victim,
                replacement,
            } => format!("{victim} replaced by {}", replacement.0),
            other => format!("{other:?}"),
        });
    }
    for (id, p) in s.pods() {
        let outcome = match sim.scheduler().outcome(&s, id) {
            PodOutcome::Bound(n) => format!("on {}", n.0),
            PodOutcome::Pending(m) => format!("pending: {m}"),
            other => format!("{other:?}"),
        };
        out.push(format!("{}: {outcome}", p.name));
    }
    out.push(format!("cycles {}", sim.cycles()));
    (out, sim.scheduler().failure_cache_hits())
}

fn template() -> impl Strategy<Value = Template> {
    (
        prop::sample::select(vec![300u32, 700, 1500, 2500]),
        prop::sample::select(vec![0i32, 100, 1000]),
        prop::option::weighted(0.5, 1u8..3),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(cpu, priority, spread, pinned)| Template {
            cpu,
            priority,
            spread,
            pinned,
        })
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        6 => (0usize..4, 1usize..12).prop_map(|(t, n)| Change::Replicas { t, n }),
        1 => any::<usize>().prop_map(Change::Delete),
        1 => prop::sample::select(vec![1000u32, 2000]).prop_map(Change::Node),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn the_cache_decides_as_every_cycle_run_in_full(
        nodes in prop::collection::vec(prop::sample::select(vec![1000u32, 2000]), 1..8),
        templates in prop::collection::vec(template(), 1..4),
        changes in prop::collection::vec(change(), 1..10),
    ) {
        let (with, _) = run(&nodes, &templates, &changes, true);
        let (without, hits) = run(&nodes, &templates, &changes, false);
        prop_assert_eq!(hits, 0);
        prop_assert_eq!(with, without);
    }
}

#[test]
fn identical_replicas_that_fit_nowhere_run_one_cycle() {
    // Fits the 2-cpu node when it is empty, never the 1-cpu ones.
    let big = Template {
        cpu: 1500,
        priority: 1000,
        spread: Some(1),
        pinned: false,
    };
    // As important as the replicas: nothing can be evicted for them.
    let filler = Template {
        cpu: 900,
        priority: 1000,
        spread: None,
        pinned: false,
    };
    let changes = [
        Change::Replicas { t: 1, n: 4 },
        Change::Replicas { t: 0, n: 30 },
    ];
    let templates = [big, filler];
    let (with, hits) = run(&[1000, 1000, 2000], &templates, &changes, true);
    let (without, _) = run(&[1000, 1000, 2000], &templates, &changes, false);
    assert_eq!(with, without);
    assert_eq!(
        hits, 29,
        "every replica after the first is answered from the cache"
    );
    assert!(
        with.iter()
            .any(|l| l.contains("pending: 0/3 nodes are available")
                && l.contains("No preemption victims found")),
        "{with:#?}"
    );
}
