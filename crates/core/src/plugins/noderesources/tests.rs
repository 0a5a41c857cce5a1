//! Cases from upstream's `least_allocated_test.go`, `most_allocated_test.go`,
//! `requested_to_capacity_ratio_test.go`, `balanced_allocation_test.go` and
//! `fit_test.go`, run end to end: pod specs through `pod_requests`, node capacity
//! through `node_allocatable`, then the scorer or filter.

use k8s_openapi::api::core::v1::{NodeStatus, PodSpec};
use serde_json::{Value, json};

use super::balanced_allocation::balanced_allocation_score;
use super::fit::{IgnoredResources, InsufficientResource, insufficient_resources, is_unresolvable};
use super::least_allocated::{least_allocated_score, least_requested_score};
use super::most_allocated::{most_allocated_score, most_requested_score};
use super::requested_to_capacity_ratio::{
    UtilizationShapePoint, requested_to_capacity_ratio_resource_score,
    requested_to_capacity_ratio_score,
};
use super::resource_allocation::{
    NodeResources, ResourceAmounts, ResourceSpec, default_resources, is_best_effort,
    pod_request_list, score_inputs,
};
use crate::api::resources::{
    NonZeroRequests, PodResourceRequests, Resources, node_allocatable, pod_requests,
};

/// A pod with one container per request map (upstream's `st.MakePod().Req(..)`).
fn pod(containers: &[Value]) -> PodResourceRequests {
    let containers: Vec<Value> = containers
        .iter()
        .enumerate()
        .map(|(i, req)| json!({"name": format!("c{i}"), "resources": {"requests": req}}))
        .collect();
    let spec: PodSpec = serde_json::from_value(json!({ "containers": containers })).unwrap();
    pod_requests(&spec).unwrap()
}

/// A node's bookkeeping: its allocatable and the sums over the pods on it.
struct Node {
    allocatable: Resources,
    requested: Resources,
    non_zero: NonZeroRequests,
}

fn node(capacity: Value, pods: &[PodResourceRequests]) -> Node {
    let status: NodeStatus = serde_json::from_value(json!({ "allocatable": capacity })).unwrap();
    let allocatable = node_allocatable(&status).unwrap();
    let mut requested = Resources::default();
    let mut non_zero = NonZeroRequests::default();
    for p in pods {
        requested.add(&p.requested);
        non_zero.add(p.non_zero);
    }
    Node {
        allocatable,
        requested,
        non_zero,
    }
}

fn inputs(
    n: &Node,
    p: &PodResourceRequests,
    resources: &[ResourceSpec],
    use_requested: bool,
) -> (ResourceAmounts, ResourceAmounts) {
    let view = NodeResources {
        allocatable: &n.allocatable,
        requested: &n.requested,
        non_zero_requested: n.non_zero,
    };
    score_inputs(
        &view,
        resources,
        &pod_request_list(p, resources, use_requested),
        use_requested,
    )
}

fn least(n: &Node, p: &PodResourceRequests, resources: &[ResourceSpec]) -> i64 {
    let (req, alloc) = inputs(n, p, resources, false);
    least_allocated_score(&req, &alloc, resources)
}

fn most(n: &Node, p: &PodResourceRequests, resources: &[ResourceSpec]) -> i64 {
    let (req, alloc) = inputs(n, p, resources, false);
    most_allocated_score(&req, &alloc, resources)
}

fn balanced(n: &Node, p: &PodResourceRequests, resources: &[ResourceSpec]) -> i64 {
    let (req, alloc) = inputs(n, p, resources, true);
    balanced_allocation_score(&req, &alloc)
}

fn cap(cpu: &str, memory: &str) -> Value {
    json!({"cpu": cpu, "memory": memory, "pods": "110"})
}

fn req(cpu: &str, memory: &str) -> Value {
    json!({"cpu": cpu, "memory": memory})
}

const EXTENDED: &str = "example.com/foo";

#[test]
fn least_allocated_upstream_table() {
    let d = default_resources();
    let empty = pod(&[]);
    let big = pod(&[req("1000", "2000"), req("2000", "3000")]);
    // nothing scheduled, nothing requested
    assert_eq!(least(&node(cap("4000", "10000"), &[]), &empty, &d), 100);
    // nothing scheduled, resources requested, differently sized nodes: 37 and 50
    assert_eq!(least(&node(cap("4000", "10000"), &[]), &big, &d), 37);
    assert_eq!(least(&node(cap("6000", "10000"), &[]), &big, &d), 50);
    // no resources requested, pods (without containers) scheduled
    assert_eq!(
        least(
            &node(cap("4000", "10000"), &[pod(&[]), pod(&[])]),
            &empty,
            &d
        ),
        100
    );
    // no resources requested, pods scheduled with resources: 70 and 57
    let cpu_only = pod(&[req("3000", "0")]);
    let cpu_mem = pod(&[req("3000", "5000")]);
    assert_eq!(
        least(
            &node(cap("10000", "20000"), &[cpu_only.clone(), cpu_only.clone()]),
            &empty,
            &d
        ),
        70
    );
    assert_eq!(
        least(
            &node(cap("10000", "20000"), &[cpu_only.clone(), cpu_mem.clone()]),
            &empty,
            &d
        ),
        57
    );
    // resources requested, pods scheduled with resources: 57 and 45
    assert_eq!(
        least(
            &node(cap("10000", "20000"), std::slice::from_ref(&cpu_only)),
            &big,
            &d
        ),
        57
    );
    assert_eq!(
        least(
            &node(cap("10000", "20000"), std::slice::from_ref(&cpu_mem)),
            &big,
            &d
        ),
        45
    );
    // ... differently sized nodes: 57 and 60
    assert_eq!(
        least(
            &node(cap("10000", "50000"), std::slice::from_ref(&cpu_mem)),
            &big,
            &d
        ),
        60
    );
    // requested resources exceed node capacity: 50 and 25
    let p = pod(&[req("3000", "0")]);
    assert_eq!(
        least(
            &node(cap("4000", "10000"), std::slice::from_ref(&cpu_only)),
            &p,
            &d
        ),
        50
    );
    assert_eq!(
        least(
            &node(cap("4000", "10000"), std::slice::from_ref(&cpu_mem)),
            &p,
            &d
        ),
        25
    );
    // zero node resources
    assert_eq!(
        least(&node(json!({}), std::slice::from_ref(&cpu_mem)), &empty, &d),
        0
    );
    // different weights: (25·1 + 50·2) / 3 = 41, (50 + 100) / 3 = 50
    let w = [ResourceSpec::new("memory", 2), ResourceSpec::new("cpu", 1)];
    assert_eq!(least(&node(cap("4000", "10000"), &[]), &big, &w), 41);
    assert_eq!(least(&node(cap("6000", "10000"), &[]), &big, &w), 50);
}

#[test]
fn least_allocated_extended_resources() {
    let set = [
        ResourceSpec::new("cpu", 1),
        ResourceSpec::new("memory", 1),
        ResourceSpec::new(EXTENDED, 1),
    ];
    let mut with_ext = cap("6000", "10000");
    with_ext[EXTENDED] = json!("4");
    // bypass the extended resource when the pod does not request it: 50 and 50
    let p = pod(&[req("1000", "2000"), req("2000", "3000")]);
    assert_eq!(least(&node(cap("6000", "10000"), &[]), &p, &set), 50);
    assert_eq!(least(&node(with_ext.clone(), &[]), &p, &set), 50);
    // honour it when requested: node1 (4 of it) (50+50+50)/3 = 50; node2 (10) 60
    let p = pod(&[
        req("1000", "2000"),
        json!({"cpu": "2000", "memory": "3000", EXTENDED: "2"}),
    ]);
    let mut four = cap("6000", "10000");
    four[EXTENDED] = json!("4");
    let mut ten = cap("6000", "10000");
    ten[EXTENDED] = json!("10");
    assert_eq!(least(&node(four, &[]), &p, &set), 50);
    assert_eq!(least(&node(ten, &[]), &p, &set), 60);
    // a node without the resource leaves it out of the mean
    assert_eq!(least(&node(cap("6000", "10000"), &[]), &p, &set), 50);
}

#[test]
fn non_zero_defaults_count_in_least_allocated() {
    // A container without requests counts as 100m / 200Mi: on 1 cpu / 1000Mi, 90 and 80.
    let p = pod(&[json!({})]);
    let n = node(json!({"cpu": "1", "memory": "1000Mi"}), &[]);
    assert_eq!(least(&n, &p, &default_resources()), 85);
}

#[test]
fn most_allocated_upstream_table() {
    let d = default_resources();
    let empty = pod(&[]);
    let big = pod(&[req("1000", "2000"), req("2000", "3000")]);
    // nothing scheduled, nothing requested: 0
    assert_eq!(most(&node(cap("4000", "10000"), &[]), &empty, &d), 0);
    // nothing scheduled, resources requested: (75+50)/2 = 62; (50+50)/2 = 50
    assert_eq!(most(&node(cap("4000", "10000"), &[]), &big, &d), 62);
    assert_eq!(most(&node(cap("6000", "10000"), &[]), &big, &d), 50);
    // pods scheduled with resources, nothing requested: (60+0)/2 = 30; (60+25)/2 = 42
    let cpu_only = pod(&[req("3000", "0")]);
    let cpu_mem = pod(&[req("3000", "5000")]);
    assert_eq!(
        most(
            &node(cap("10000", "20000"), &[cpu_only.clone(), cpu_only.clone()]),
            &empty,
            &d
        ),
        30
    );
    assert_eq!(
        most(
            &node(cap("10000", "20000"), &[cpu_only.clone(), cpu_mem.clone()]),
            &empty,
            &d
        ),
        42
    );
    // requested beyond capacity is capped: cpu 6000/4000 → 100, memory 5000/10000 → 50
    let p = pod(&[req("3000", "0")]);
    assert_eq!(
        most(
            &node(cap("4000", "10000"), std::slice::from_ref(&cpu_mem)),
            &p,
            &d
        ),
        75
    );
    // weights: (75·1 + 50·2) / 3 = 58
    let w = [ResourceSpec::new("memory", 2), ResourceSpec::new("cpu", 1)];
    assert_eq!(most(&node(cap("4000", "10000"), &[]), &big, &w), 58);
    assert_eq!(most_requested_score(5, 0), 0);
    assert_eq!(least_requested_score(5, 0), 0);
    assert_eq!(least_requested_score(11, 10), 0);
}

#[test]
fn requested_to_capacity_ratio_shapes() {
    // TestBrokenLinearFunction-style checks, through the resource score (shape scores
    // are ×10 on the scheduler's scale).
    let shape = [
        UtilizationShapePoint {
            utilization: 10,
            score: 1,
        },
        UtilizationShapePoint {
            utilization: 90,
            score: 9,
        },
    ];
    for (requested, capacity, want) in [
        (0, 100, 10),
        (10, 100, 10),
        (15, 100, 15),
        (40, 100, 40),
        (90, 100, 90),
        (95, 100, 90),
        (5, 0, 90),
        (101, 100, 90),
    ] {
        assert_eq!(
            requested_to_capacity_ratio_resource_score(requested, capacity, &shape),
            want,
            "{requested}/{capacity}"
        );
    }
    // Bin packing shape {0:0, 100:10}: node score is the rounded weighted mean.
    let pack = [
        UtilizationShapePoint {
            utilization: 0,
            score: 0,
        },
        UtilizationShapePoint {
            utilization: 100,
            score: 10,
        },
    ];
    let d = default_resources();
    // cpu 3000/4000 → 75, memory 5000/10000 → 50: round(62.5) = 63
    let p = pod(&[req("1000", "2000"), req("2000", "3000")]);
    let (r, a) = inputs(&node(cap("4000", "10000"), &[]), &p, &d, false);
    assert_eq!(requested_to_capacity_ratio_score(&r, &a, &d, &pack), 63);
    // Zero scores are left out of the mean: cpu 0 → 0 (dropped), memory 50 → 50.
    let p = pod(&[req("0", "5000")]);
    let (r, a) = inputs(&node(cap("4000", "10000"), &[]), &p, &d, false);
    assert_eq!(requested_to_capacity_ratio_score(&r, &a, &d, &pack), 50);
    // Nothing scored at all: 0.
    assert_eq!(
        requested_to_capacity_ratio_score(&[0, 0], &[0, 0], &d, &pack),
        0
    );
}

#[test]
fn balanced_allocation_table() {
    let d = default_resources();
    let big = pod(&[req("1000", "2000"), req("2000", "3000")]);
    // cpu 0.75, memory 0.5: σ = 0.125 → 87; equal fractions → 100
    assert_eq!(balanced(&node(cap("4000", "10000"), &[]), &big, &d), 87);
    assert_eq!(balanced(&node(cap("6000", "10000"), &[]), &big, &d), 100);
    // pods scheduled with resources: 6000/10000 and 10000/20000 → σ = 0.05 → 95
    let cpu_mem = pod(&[req("3000", "5000")]);
    let cpu_only = pod(&[req("3000", "0")]);
    assert_eq!(
        balanced(
            &node(cap("10000", "20000"), std::slice::from_ref(&cpu_mem)),
            &big,
            &d
        ),
        95
    );
    // 6000/10000 and 5000/20000 → σ = 0.175 → 82 (82.5 truncated)
    assert_eq!(
        balanced(
            &node(cap("10000", "20000"), std::slice::from_ref(&cpu_only)),
            &big,
            &d
        ),
        82
    );
    // 6000/10000 and 10000/50000 → σ = 0.2 → 80
    assert_eq!(
        balanced(
            &node(cap("10000", "50000"), std::slice::from_ref(&cpu_mem)),
            &big,
            &d
        ),
        80
    );
    // fractions are capped at 1: cpu 6000/4000 → 1, memory 5000/10000 → σ = 0.25 → 75
    let p = pod(&[req("3000", "0")]);
    assert_eq!(
        balanced(
            &node(cap("4000", "10000"), std::slice::from_ref(&cpu_mem)),
            &p,
            &d
        ),
        75
    );
    // BalancedAllocation counts real requests: a pod without requests is best effort
    // (PreScore skips it), and defaults do not enter.
    let empty = pod(&[json!({})]);
    assert!(is_best_effort(&pod_request_list(&empty, &d, true)));
    assert!(!is_best_effort(&pod_request_list(&empty, &d, false)));
    // Three resources use the standard deviation proper.
    assert_eq!(balanced_allocation_score(&[1, 2, 3], &[4, 4, 4]), 79);
    assert_eq!(balanced_allocation_score(&[5], &[10]), 100);
    assert_eq!(balanced_allocation_score(&[], &[]), 100);
}

pub(super) fn resources(
    milli_cpu: i64,
    memory: i64,
    pods: i64,
    scalars: &[(&str, i64)],
    ephemeral: i64,
) -> Resources {
    let mut r = Resources::default();
    r.milli_cpu = milli_cpu;
    r.memory = memory;
    r.ephemeral_storage = ephemeral;
    r.allowed_pod_number = pods;
    for (name, v) in scalars {
        r.set_scalar(name, *v);
    }
    r
}

fn short(
    resource: &str,
    reason: &str,
    requested: i64,
    used: i64,
    capacity: i64,
    unresolvable: bool,
) -> InsufficientResource {
    InsufficientResource {
        resource: resource.into(),
        reason: reason.into(),
        requested,
        used,
        capacity,
        unresolvable,
    }
}

#[test]
fn fit_upstream_cases() {
    // makeResources(10, 20, 32, 5, 20, 5): 10m cpu, 20 bytes, 32 pods, 5 of extended A,
    // 20 ephemeral, 5 hugepages.
    let alloc = resources(
        10,
        20,
        32,
        &[("example.com/aaa", 5), ("hugepages-2Mi", 5)],
        20,
    );
    let none = IgnoredResources::default();
    let fits = |request: &Resources, used: &Resources| {
        insufficient_resources(request, &alloc, used, 0, &none)
    };

    // no resources requested always fits
    assert_eq!(
        fits(&Resources::default(), &resources(10, 20, 0, &[], 0)),
        vec![]
    );
    // too many resources fails
    assert_eq!(
        fits(&resources(1, 1, 0, &[], 0), &resources(10, 20, 0, &[], 0)),
        vec![
            short("cpu", "Insufficient cpu", 1, 10, 10, false),
            short("memory", "Insufficient memory", 1, 20, 20, false),
        ]
    );
    // the request alone exceeds the node: unresolvable
    let r = fits(&resources(11, 1, 0, &[], 0), &resources(0, 0, 0, &[], 0));
    assert_eq!(r, vec![short("cpu", "Insufficient cpu", 11, 0, 10, true)]);
    assert!(is_unresolvable(&r));
    // both fit exactly
    assert_eq!(
        fits(&resources(5, 5, 0, &[], 0), &resources(5, 15, 0, &[], 0)),
        vec![]
    );
    // extended resource over capacity
    assert_eq!(
        fits(
            &resources(1, 1, 0, &[("example.com/aaa", 1)], 0),
            &resources(0, 0, 0, &[("example.com/aaa", 5)], 0)
        ),
        vec![short(
            "example.com/aaa",
            "Insufficient example.com/aaa",
            1,
            5,
            5,
            false
        )]
    );
    // extended resource the node does not have
    assert_eq!(
        fits(
            &resources(1, 1, 0, &[("example.com/bbb", 1)], 0),
            &Resources::default()
        ),
        vec![short(
            "example.com/bbb",
            "Insufficient example.com/bbb",
            1,
            0,
            0,
            true
        )]
    );
    // zero request for a missing scalar is never short
    assert_eq!(
        fits(
            &resources(0, 0, 0, &[("example.com/bbb", 0)], 0),
            &Resources::default()
        ),
        vec![]
    );
    // hugepages over capacity, ephemeral storage over capacity
    assert_eq!(
        fits(
            &resources(0, 0, 0, &[("hugepages-2Mi", 6)], 25),
            &Resources::default()
        ),
        vec![
            short(
                "ephemeral-storage",
                "Insufficient ephemeral-storage",
                25,
                0,
                20,
                true
            ),
            short("hugepages-2Mi", "Insufficient hugepages-2Mi", 6, 0, 5, true),
        ]
    );
}

#[test]
fn fit_pod_count_and_ignored_resources() {
    let alloc = resources(10, 20, 1, &[], 0);
    let none = IgnoredResources::default();
    // even a pod requesting nothing needs a pod slot
    assert_eq!(
        insufficient_resources(
            &Resources::default(),
            &alloc,
            &Resources::default(),
            1,
            &none
        ),
        vec![short("pods", "Too many pods", 1, 1, 1, false)]
    );
    let r = insufficient_resources(
        &resources(20, 0, 0, &[], 0),
        &alloc,
        &Resources::default(),
        1,
        &none,
    );
    assert_eq!(
        r.iter().map(|r| &*r.reason).collect::<Vec<_>>(),
        vec!["Too many pods", "Insufficient cpu"]
    );

    let request = resources(
        0,
        0,
        0,
        &[
            ("example.com/aaa", 1),
            ("example.com/bbb", 1),
            ("other.io/x", 1),
            ("hugepages-2Mi", 1),
        ],
        0,
    );
    let alloc = resources(0, 0, 10, &[], 0);
    let ignored = IgnoredResources::new(["example.com/bbb"], ["other.io"]);
    assert_eq!(
        insufficient_resources(&request, &alloc, &Resources::default(), 0, &ignored)
            .iter()
            .map(|r| &*r.resource)
            .collect::<Vec<_>>(),
        vec!["example.com/aaa", "hugepages-2Mi"]
    );
    // only extended resources can be ignored
    assert!(!IgnoredResources::new(["hugepages-2Mi"], [""; 0]).ignores("hugepages-2Mi"));
}

/// Nodes in runs of equal and of different amounts (the shapes a walk over the nodes
/// meets), some full, some cordoned by resources alone, and a pod asking cpu and memory.
fn mixed_cluster() -> (crate::snapshot::Snapshot, crate::api::Pod) {
    use crate::plugins::testutil;
    let caps = [
        ("4", "32Gi", "110"),
        ("4", "32Gi", "110"),
        ("4", "32Gi", "110"),
        ("2", "8Gi", "110"),
        ("4", "32Gi", "110"),
        ("4", "32Gi", "1"),
        ("0", "32Gi", "110"),
        ("4", "0", "110"),
        ("1", "1Gi", "110"),
        ("4", "32Gi", "110"),
    ];
    let nodes: Vec<Value> = caps
        .iter()
        .enumerate()
        .map(|(i, (cpu, memory, pods))| {
            json!({"metadata": {"name": format!("n{i}")},
                   "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}})
        })
        .collect();
    let bound = |i: usize, node: usize, cpu: &str, memory: &str| {
        json!({"metadata": {"name": format!("b{i}"), "uid": format!("b{i}")},
               "spec": {"nodeName": format!("n{node}"),
                        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}})
    };
    let pods = [
        bound(0, 1, "1", "4Gi"),
        bound(1, 2, "1", "4Gi"),
        bound(2, 4, "3900m", "1Gi"),
        bound(3, 5, "100m", "1Gi"),
        bound(4, 9, "1", "4Gi"),
    ];
    let mut s = testutil::snapshot(&nodes, &pods);
    let p = testutil::pod(
        &mut s,
        json!({"metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}}}]}}),
    );
    (s, p)
}

/// The default profile's scoring loops, which reuse the last node's score when the
/// amounts repeat, give every node the score Score gives it alone, whatever the order.
#[test]
fn scoring_loops_give_each_node_its_own_score() {
    use super::{BalancedAllocation, Fit};
    use crate::config::{NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs};
    use crate::framework::{CycleState, NodeScore};
    use crate::snapshot::NodeId;
    let (s, pod) = mixed_cluster();
    let fit = Fit::new(&NodeResourcesFitArgs::default()).unwrap();
    let balanced =
        BalancedAllocation::new(&NodeResourcesBalancedAllocationArgs::default()).unwrap();
    let orders: [&[u32]; 3] = [
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        &[9, 1, 2, 1, 0, 0, 3, 2, 8, 6, 7, 1],
        &[4, 4, 5, 2, 9, 1],
    ];
    let plugins: [&dyn ScoreAndPre; 2] = [&fit, &balanced];
    for plugin in plugins {
        let mut state = CycleState::new();
        let all: Vec<NodeId> = s.nodes().iter().map(|n| n.id).collect();
        assert!(plugin.pre_score(&mut state, &pod, &all, &s).is_success());
        for order in orders {
            let nodes: Vec<NodeId> = order.iter().map(|&i| NodeId(i)).collect();
            let mut out: Vec<NodeScore> = Vec::new();
            plugin
                .score_nodes(&state, &pod, &nodes, &s, &mut out)
                .unwrap();
            let alone: Vec<NodeScore> = nodes
                .iter()
                .map(|&node| NodeScore {
                    node,
                    score: plugin.score(&state, &pod, s.node(node), &s).unwrap(),
                })
                .collect();
            assert_eq!(out, alone, "{} over {order:?}", plugin.name());
        }
        let distinct: std::collections::BTreeSet<i64> = all
            .iter()
            .map(|&n| plugin.score(&state, &pod, s.node(n), &s).unwrap())
            .collect();
        assert!(distinct.len() >= 3, "{}: {distinct:?}", plugin.name());
    }
}

/// PreScore and Score behind one reference, for the table above.
trait ScoreAndPre: crate::framework::PreScorePlugin + crate::framework::ScorePlugin {}
impl<T: crate::framework::PreScorePlugin + crate::framework::ScorePlugin> ScoreAndPre for T {}

/// NodeResourcesFit's screen rejects exactly the nodes its Filter rejects.
#[test]
fn fit_screen_rejects_what_filter_rejects() {
    use super::Fit;
    use crate::config::NodeResourcesFitArgs;
    use crate::framework::CycleState;
    let (s, pod) = mixed_cluster();
    let fit = Fit::new(&NodeResourcesFitArgs::default()).unwrap();
    let rejected = crate::plugins::testutil::screen_agrees(&fit, &CycleState::new(), &s, &pod);
    // n4 (cpu), n5 (pods), n6 (no cpu), n7 (no memory), n8 (memory).
    assert_eq!(rejected, 5);
}
