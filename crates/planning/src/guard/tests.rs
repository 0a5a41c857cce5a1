//! The guard on small clusters, with the ReplicaSet controller's model
//! ([`deletion_order`]) as the judge of what a scale-in removes.

use super::*;
use crate::controller::{PhaseRank, deletion_order};
use proptest::prelude::*;
use topospread::builders::{NodeBuilder, PodBuilder};
use topospread::convert;

const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

/// A cluster of `zones` zones with `nodes` nodes each (`z{i}-n{j}`) and web pods,
/// `(name, node)`, of ReplicaSet `web` spread over zones (maxSkew 1, DoNotSchedule).
fn cluster(zones: usize, nodes: usize, pods: &[(String, String)]) -> Snapshot {
    let mut s = Snapshot::new();
    for z in 0..zones {
        for n in 0..nodes {
            let name = format!("z{z}-n{n}");
            let node = NodeBuilder::new(&name)
                .label(ZONE, &format!("z{z}"))
                .label(HOST, &name)
                .allocatable("cpu", "64")
                .allocatable("memory", "64Gi")
                .allocatable("pods", "110")
                .build();
            let node = convert::node(&node, s.symbols_mut()).expect("node converts");
            s.add_node(node).expect("node is new");
        }
    }
    for (name, node) in pods {
        let pod = PodBuilder::new(name)
            .label("app", "web")
            .owner("apps/v1", "ReplicaSet", "web")
            .request("cpu", "100m")
            .node(node)
            .spread(1, ZONE, "DoNotSchedule", &[("app", "web")])
            .build();
        let pod = convert::pod(&pod, s.symbols_mut()).expect("pod converts");
        s.add_pod(pod).expect("pod is new");
    }
    s
}

/// What the guard reads of a running, ready web pod created at `created`.
fn fact(name: &str, node: &str, created: i64) -> GuardPod {
    GuardPod {
        namespace: "default".into(),
        controller: Some(("ReplicaSet".into(), "web".into())),
        deleting: false,
        candidate: DeletionCandidate {
            name: name.into(),
            uid: String::new(),
            node: Some(node.into()),
            phase: PhaseRank::Running,
            ready: true,
            deletion_cost: 0,
            ready_since: Some(created),
            restarts: 0,
            created: Some(created),
        },
        cost: None,
        managed: None,
        resource_version: Some(format!("{created}")),
    }
}

fn run(s: &Snapshot, facts: &[GuardPod], options: GuardOptions) -> GuardPlan {
    plan(
        s,
        &SchedulerConfig::default(),
        Features::default(),
        facts,
        options,
    )
    .expect("plan")
}

/// Writes the plan's patches into the facts, as the API server would.
fn apply(facts: &mut [GuardPod], plan: &GuardPlan) {
    for p in plan.patches() {
        let f = facts
            .iter_mut()
            .find(|f| f.candidate.name == p.pod)
            .expect("a patched pod exists");
        f.cost = Some(p.to.to_string());
        f.managed = Some(p.to.to_string());
    }
}

/// Zone counts after the controller removes `k` pods, reading the costs as the
/// controller does (0 for absent or non-integer).
fn zone_counts_after(facts: &[GuardPod], zones: usize, k: usize) -> Vec<i64> {
    let candidates: Vec<DeletionCandidate> = facts
        .iter()
        .map(|f| DeletionCandidate {
            deletion_cost: f.cost.as_deref().and_then(|c| c.parse().ok()).unwrap_or(0),
            ..f.candidate.clone()
        })
        .collect();
    let related: Vec<Option<String>> = candidates.iter().map(|c| c.node.clone()).collect();
    let gone: Vec<usize> = deletion_order(&candidates, &related)
        .into_iter()
        .take(k)
        .collect();
    let mut counts = vec![0i64; zones];
    for (i, c) in candidates.iter().enumerate() {
        if gone.contains(&i) {
            continue;
        }
        let node = c.node.as_deref().expect("bound");
        let zone: usize = node[1..node.find('-').expect("z{i}-n{j}")]
            .parse()
            .expect("zone index");
        counts[zone] += 1;
    }
    counts
}

fn skew(counts: &[i64]) -> i64 {
    counts.iter().max().unwrap_or(&0) - counts.iter().min().unwrap_or(&0)
}

/// Whether some choice of `remaining` of the pods counted in `counts` keeps every
/// zone within `max_skew` of the smallest: a floor `l` (at most the smallest count,
/// as pods are only removed) with `zones * l <= remaining <= sum(min(c, l + max_skew))`.
fn placement_allows(counts: &[i64], remaining: i64, max_skew: i64) -> bool {
    let floor = counts.iter().copied().min().unwrap_or(0);
    (0..=floor).any(|l| {
        let high: i64 = counts.iter().map(|&c| c.min(l + max_skew)).sum();
        l * counts.len() as i64 <= remaining && remaining <= high
    })
}

/// Zone z0 holds its two pods on one node, the others spread over two: the
/// controller's co-location rank removes both z0 pods first and leaves 0-2-2.
fn crowded_node() -> (Snapshot, Vec<GuardPod>) {
    let pods: Vec<(String, String)> = [
        ("web-a", "z0-n0"),
        ("web-b", "z0-n0"),
        ("web-c", "z1-n0"),
        ("web-d", "z1-n1"),
        ("web-e", "z2-n0"),
        ("web-f", "z2-n1"),
    ]
    .iter()
    .map(|(p, n)| (p.to_string(), n.to_string()))
    .collect();
    let facts = pods.iter().map(|(p, n)| fact(p, n, 100)).collect();
    (cluster(3, 2, &pods), facts)
}

#[test]
fn costs_turn_a_2_1_0_scale_in_into_an_even_one() {
    let (s, facts) = crowded_node();
    let plan = run(&s, &facts, GuardOptions::default());
    assert!(plan.notes.is_empty(), "{:?}", plan.notes);
    let rs = &plan.replica_sets[0];
    assert_eq!(
        (rs.namespace.as_str(), rs.name.as_str()),
        ("default", "web")
    );
    assert_eq!((rs.pods, rs.half), (6, 3));
    let c = &rs.constraints[0];
    assert_eq!(c.skew_now, 0);
    assert_eq!(c.unguarded_after_half, Some(2));
    assert_eq!(c.after_one, Some(1));
    assert_eq!(c.after_half, Some(0));
    assert!(!rs.violated_after_scale_in());
    assert_eq!(rs.patches.len(), 6, "every pod needs a cost");
    let mut patched = facts.clone();
    apply(&mut patched, &plan);
    assert_eq!(zone_counts_after(&patched, 3, 3), [1, 1, 1]);
    assert_eq!(zone_counts_after(&facts, 3, 3), [0, 2, 1]);
}

#[test]
fn a_second_pass_patches_nothing() {
    let (s, mut facts) = crowded_node();
    let first = run(&s, &facts, GuardOptions::default());
    apply(&mut facts, &first);
    let second = run(&s, &facts, GuardOptions::default());
    assert_eq!(second.patches().count(), 0);
    assert_eq!(second.replica_sets[0].constraints[0].after_half, Some(0));
}

#[test]
fn costs_that_already_keep_the_spread_are_left_alone() {
    // Evenly placed pods, one per node: the controller's own order already removes
    // them without breaking maxSkew, so nothing is written.
    let pods: Vec<(String, String)> = (0..6)
        .map(|i| (format!("web-{i}"), format!("z{}-n{}", i % 3, i / 3)))
        .collect();
    let facts: Vec<GuardPod> = pods
        .iter()
        .enumerate()
        .map(|(i, (p, n))| fact(p, n, 100 + i as i64))
        .collect();
    let s = cluster(3, 2, &pods);
    let plan = run(&s, &facts, GuardOptions::default());
    assert_eq!(plan.patches().count(), 0);
    for k in 1..6 {
        assert!(skew(&zone_counts_after(&facts, 3, k)) <= 1, "k={k}");
    }
}

#[test]
fn a_users_cost_is_kept_unless_overridden() {
    let (s, mut facts) = crowded_node();
    facts[2].cost = Some("5".into());
    let plan = run(&s, &facts, GuardOptions::default());
    let rs = &plan.replica_sets[0];
    assert_eq!(rs.user_costs, ["web-c"]);
    assert!(rs.patches.iter().all(|p| p.pod != "web-c"));
    assert_eq!(rs.patches.len(), 5);
    // A cost the guard wrote and a user changed since is the user's too.
    facts[2].managed = Some("-3".into());
    let plan = run(&s, &facts, GuardOptions::default());
    assert_eq!(plan.replica_sets[0].user_costs, ["web-c"]);
    let plan = run(
        &s,
        &facts,
        GuardOptions {
            override_user_costs: true,
            ..GuardOptions::default()
        },
    );
    let rs = &plan.replica_sets[0];
    assert!(rs.user_costs.is_empty());
    let web_c = rs
        .patches
        .iter()
        .find(|p| p.pod == "web-c")
        .expect("patched");
    assert_eq!(web_c.from.as_deref(), Some("5"));
}

#[test]
fn bad_pods_are_noted_and_never_patched() {
    let (mut s, mut facts) = crowded_node();
    facts[0].cost = Some("cheap".into());
    facts[1].deleting = true;
    let bare = PodBuilder::new("bare")
        .label("app", "web")
        .node("z1-n0")
        .spread(1, ZONE, "DoNotSchedule", &[("app", "web")])
        .build();
    let bare = convert::pod(&bare, s.symbols_mut()).expect("pod converts");
    s.add_pod(bare).expect("pod is new");
    let mut bare_fact = fact("bare", "z1-n0", 100);
    bare_fact.controller = None;
    facts.push(bare_fact);
    let plan = run(&s, &facts, GuardOptions::default());
    let notes = plan.notes.join("\n");
    assert!(
        notes.contains("pod default/web-a: controller.kubernetes.io/pod-deletion-cost \"cheap\" is not an integer"),
        "{notes}"
    );
    assert!(
        notes.contains("pod default/web-b: being deleted"),
        "{notes}"
    );
    assert!(notes.contains("pod default/bare: no owner"), "{notes}");
    let patched: Vec<&str> = plan.patches().map(|p| p.pod.as_str()).collect();
    for skipped in ["web-a", "web-b", "bare"] {
        assert!(!patched.contains(&skipped), "{skipped} in {patched:?}");
    }
    assert_eq!(plan.replica_sets[0].pods, 5);
}

#[test]
fn merge_patch_marks_the_cost_as_the_guards() {
    let patch = CostPatch {
        namespace: "default".into(),
        pod: "web-a".into(),
        node: "n".into(),
        from: None,
        to: -3,
        resource_version: None,
    };
    assert_eq!(
        patch.merge_patch(),
        serde_json::json!({"metadata": {"annotations": {
            DELETION_COST_ANNOTATION: "-3",
            MANAGED_ANNOTATION: "-3",
        }}})
    );
}

#[test]
fn patches_carry_the_planned_from_resource_version() {
    let (s, facts) = crowded_node();
    let plan = run(&s, &facts, GuardOptions::default());
    let patches: Vec<&CostPatch> = plan.patches().collect();
    assert!(!patches.is_empty());
    for p in patches {
        let fact = facts
            .iter()
            .find(|f| f.candidate.name == p.pod)
            .expect("a patch is for a planned pod");
        assert_eq!(p.resource_version, fact.resource_version);
        assert_eq!(
            p.merge_patch()["metadata"]["resourceVersion"],
            serde_json::json!(fact.resource_version.as_deref().unwrap_or_default())
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// After the guard's costs, every scale-in by k in 1..n-1, as the ReplicaSet
    /// controller's model orders it, keeps the zone skew within maxSkew whenever some
    /// choice of the remaining pods allows it.
    #[test]
    fn every_scale_in_keeps_spread_where_placement_allows(
        zones in 2usize..5,
        placement in proptest::collection::vec((0usize..4, 0usize..2, 0i64..50, proptest::option::of(-20i32..20)), 2..16),
    ) {
        let pods: Vec<(String, String)> = placement
            .iter()
            .enumerate()
            .map(|(i, (z, n, _, _))| (format!("web-{i:02}"), format!("z{}-n{n}", z % zones)))
            .collect();
        let s = cluster(zones, 2, &pods);
        let mut facts: Vec<GuardPod> = pods
            .iter()
            .zip(&placement)
            .map(|((p, n), (_, _, created, cost))| {
                let mut f = fact(p, n, *created);
                // Costs the guard wrote earlier, for another placement.
                f.cost = cost.map(|c| c.to_string());
                f.managed = f.cost.clone();
                f
            })
            .collect();
        let plan = run(&s, &facts, GuardOptions::default());
        apply(&mut facts, &plan);
        let n = facts.len();
        let now = zone_counts_after(&facts, zones, 0);
        for k in 1..n {
            let after = zone_counts_after(&facts, zones, k);
            if placement_allows(&now, (n - k) as i64, 1) {
                prop_assert!(skew(&after) <= 1, "k={k}: {now:?} -> {after:?}");
            }
        }
        let again = run(&s, &facts, GuardOptions::default());
        prop_assert_eq!(again.patches().count(), 0);
    }
}

/// One constraint of a ReplicaSet in the comparison: hostname (else zone), maxSkew,
/// DoNotSchedule (else ScheduleAnyway), minDomains (hard only), node inclusion
/// policies Honor, and whether it selects `tier=front` besides the app.
type ConstraintSpec = (bool, i32, bool, Option<i32>, bool, bool);

/// One pod in the comparison: owner (ReplicaSet web, ReplicaSet api, a Job, none),
/// node (none: pending), the `tier=front` label, phase rank, ready, created, cost
/// (none, the guard's, a user's, not an integer) and value, being deleted.
type PodSpec = (
    usize,
    Option<usize>,
    bool,
    usize,
    bool,
    i64,
    (usize, i32),
    bool,
);

/// Nodes `n{i}` in zone `z{zone}` (zone 3: no zone label), some tainted; pods of two
/// ReplicaSets (web, api), a Job's and a bare pod (both labelled `app=web`, so web's
/// constraints count them), each with its ReplicaSet's constraints.
fn mixed_cluster(
    nodes: &[(usize, bool)],
    constraints: &[Vec<ConstraintSpec>; 2],
    pods: &[PodSpec],
) -> (Snapshot, Vec<GuardPod>) {
    let mut s = Snapshot::new();
    for (i, &(zone, tainted)) in nodes.iter().enumerate() {
        let name = format!("n{i}");
        let mut b = NodeBuilder::new(&name)
            .label(HOST, &name)
            .allocatable("cpu", "64")
            .allocatable("memory", "64Gi")
            .allocatable("pods", "110");
        if zone < 3 {
            b = b.label(ZONE, &format!("z{zone}"));
        }
        if tainted {
            b = b.taint("dedicated", "batch", "NoSchedule");
        }
        let node = convert::node(&b.build(), s.symbols_mut()).expect("node converts");
        s.add_node(node).expect("node is new");
    }
    let mut facts = Vec::new();
    for (i, &(owner, node, tier, phase, ready, created, (cost_kind, cost), deleting)) in
        pods.iter().enumerate()
    {
        let app = if owner == 1 { "api" } else { "web" };
        let name = format!("{app}-{i:02}");
        let mut b = PodBuilder::new(&name)
            .label("app", app)
            .request("cpu", "100m");
        if tier {
            b = b.label("tier", "front");
        }
        let controller = match owner {
            0 | 1 => {
                b = b.owner("apps/v1", "ReplicaSet", app);
                Some(("ReplicaSet".to_string(), app.to_string()))
            }
            2 => {
                b = b.owner("batch/v1", "Job", "batch");
                Some(("Job".to_string(), "batch".to_string()))
            }
            _ => None,
        };
        let node = node.map(|n| format!("n{}", n % nodes.len()));
        if let Some(n) = &node {
            b = b.node(n);
        }
        let specs = &constraints[usize::from(owner == 1)];
        for &(host, skew, hard, _, honor, tiered) in specs {
            let mut labels = vec![("app", app)];
            if tiered {
                labels.push(("tier", "front"));
            }
            let when = if hard {
                "DoNotSchedule"
            } else {
                "ScheduleAnyway"
            };
            b = b.spread(skew, if host { HOST } else { ZONE }, when, &labels);
            if honor {
                b = b.inclusion_policies("Honor", "Honor");
            }
        }
        let mut pod = b.build();
        if let Some(cs) = pod
            .spec
            .as_mut()
            .and_then(|s| s.topology_spread_constraints.as_mut())
        {
            for (c, &(_, _, hard, min_domains, _, _)) in cs.iter_mut().zip(specs) {
                if hard {
                    c.min_domains = min_domains;
                }
            }
        }
        let pod = convert::pod(&pod, s.symbols_mut()).expect("pod converts");
        s.add_pod(pod).expect("pod is new");
        let (cost, managed) = match cost_kind {
            0 => (None, None),
            1 => (Some(cost.to_string()), Some(cost.to_string())),
            2 => (Some(cost.to_string()), None),
            _ => (Some("cheap".to_string()), None),
        };
        facts.push(GuardPod {
            namespace: "default".into(),
            controller,
            deleting,
            candidate: DeletionCandidate {
                name,
                uid: String::new(),
                phase: match (&node, phase) {
                    (None, _) | (_, 0) => PhaseRank::Pending,
                    (_, 1) => PhaseRank::Unknown,
                    _ => PhaseRank::Running,
                },
                node,
                ready,
                deletion_cost: 0,
                ready_since: Some(created),
                restarts: 0,
                created: Some(created),
            },
            cost,
            managed,
            resource_version: Some(format!("{i}")),
        });
    }
    (s, facts)
}

/// The incremental planner against the reference recount, with its default bucketing,
/// every constraint bucketed by count (fine), and every one by domain (coarse).
fn planners_agree(s: &Snapshot, facts: &[GuardPod], options: GuardOptions) -> GuardPlan {
    let config = SchedulerConfig::default();
    let features = Features::default();
    let reference = plan_with::<reference::Recount>(s, &config, features, facts, options);
    let incremental = plan_with::<Tally>(s, &config, features, facts, options);
    assert_eq!(incremental, reference, "default bucketing");
    let fine = plan_with::<Tally<0>>(s, &config, features, facts, options);
    assert_eq!(fine, reference, "every constraint bucketed by count");
    let coarse = plan_with::<Tally<{ usize::MAX }>>(s, &config, features, facts, options);
    assert_eq!(coarse, reference, "every constraint bucketed by domain");
    reference.expect("plan")
}

#[test]
fn the_incremental_planner_matches_the_reference_over_many_domains() {
    // 3 zones x 10 nodes, zone and hostname spread (30 hostname domains: bucketed by
    // count by default), pods crowded on a few nodes and one zone, some not ready.
    let nodes: Vec<(usize, bool)> = (0..30).map(|i| (i % 3, false)).collect();
    let constraints = [
        vec![
            (false, 1, true, None, false, false),
            (true, 1, false, None, false, false),
        ],
        vec![(true, 2, true, Some(3), false, false)],
    ];
    let pods: Vec<PodSpec> = (0..70)
        .map(|i: usize| {
            let owner = usize::from(i % 5 == 4);
            let node = (i * i) % 11 * 3 % 30;
            let ready = !i.is_multiple_of(7);
            (
                owner,
                Some(node),
                false,
                2,
                ready,
                (i % 13) as i64,
                (0, 0),
                false,
            )
        })
        .collect();
    let (s, facts) = mixed_cluster(&nodes, &constraints, &pods);
    let plan = planners_agree(&s, &facts, GuardOptions::default());
    assert_eq!(plan.replica_sets.len(), 2);
    assert!(plan.patches().count() > 0, "crowded pods need costs");
}

fn constraint_spec() -> impl Strategy<Value = ConstraintSpec> {
    (
        any::<bool>(),
        1i32..=3,
        any::<bool>(),
        proptest::option::of(1i32..=4),
        proptest::bool::weighted(0.3),
        proptest::bool::weighted(0.3),
    )
}

fn pod_spec() -> impl Strategy<Value = PodSpec> {
    (
        prop_oneof![6 => Just(0usize), 3 => Just(1usize), 1 => Just(2usize), 1 => Just(3usize)],
        proptest::option::weighted(0.85, 0usize..16),
        proptest::bool::weighted(0.3),
        prop_oneof![1 => Just(0usize), 1 => Just(1usize), 6 => Just(2usize)],
        proptest::bool::weighted(0.8),
        0i64..30,
        (
            prop_oneof![5 => Just(0usize), 3 => Just(1usize), 1 => Just(2usize), 1 => Just(3usize)],
            -20i32..20,
        ),
        proptest::bool::weighted(0.05),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The incremental planner gives the reference's plan (order, costs, patches,
    /// predictions, notes) on random small clusters: several constraints, maxSkew 1..3,
    /// minDomains, nodes without the zone label or tainted (with inclusion policies),
    /// pending and unbound pods, pods of other owners, every phase and readiness, and
    /// costs of every kind.
    #[test]
    fn the_incremental_planner_matches_the_reference(
        nodes in proptest::collection::vec((0usize..4, proptest::bool::weighted(0.15)), 1..9),
        web in proptest::collection::vec(constraint_spec(), 1..4),
        api in proptest::collection::vec(constraint_spec(), 1..3),
        pods in proptest::collection::vec(pod_spec(), 1..24),
        override_user_costs in proptest::bool::weighted(0.2),
    ) {
        let (s, facts) = mixed_cluster(&nodes, &[web, api], &pods);
        planners_agree(
            &s,
            &facts,
            GuardOptions {
                override_user_costs,
                ..GuardOptions::default()
            },
        );
    }
}

#[test]
fn a_replica_set_that_cannot_scale_in_is_skipped_with_a_note() {
    let pods = vec![("web-a".to_string(), "z0-n0".to_string())];
    let facts = pods
        .iter()
        .map(|(p, n)| fact(p, n, 100))
        .collect::<Vec<_>>();
    let plan = run(&cluster(3, 1, &pods), &facts, GuardOptions::default());
    assert!(plan.replica_sets.is_empty(), "{:?}", plan.replica_sets);
    assert_eq!(
        plan.notes,
        [
            "1 ReplicaSet(s) with spread constraints and fewer than 2 active pods skipped: a scale-in leaves no pod to spread"
        ]
    );
}

/// A ReplicaSet whose pods are all being deleted has no active pod to order: each pod's
/// note, and the ReplicaSet counted among those skipped.
#[test]
fn a_replica_set_whose_pods_are_all_being_deleted_is_counted_as_skipped() {
    let pods = vec![
        ("web-a".to_string(), "z0-n0".to_string()),
        ("web-b".to_string(), "z1-n0".to_string()),
    ];
    let mut facts = pods
        .iter()
        .map(|(p, n)| fact(p, n, 100))
        .collect::<Vec<_>>();
    for f in &mut facts {
        f.deleting = true;
    }
    let plan = run(&cluster(3, 1, &pods), &facts, GuardOptions::default());
    assert!(plan.replica_sets.is_empty(), "{:?}", plan.replica_sets);
    assert_eq!(
        plan.notes,
        [
            "pod default/web-a: being deleted; skipped",
            "pod default/web-b: being deleted; skipped",
            "1 ReplicaSet(s) with spread constraints and fewer than 2 active pods skipped: a scale-in leaves no pod to spread"
        ]
    );
}
