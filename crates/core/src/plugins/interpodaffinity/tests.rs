//! Cases from upstream's interpodaffinity filtering_test.go and scoring_test.go.

use super::*;
use crate::framework::{Code, CycleState, FilterPlugin, PreFilterPlugin};
use crate::plugins::testutil::{filter_all, pod, scores, snapshot};
use serde_json::{Value, json};

fn node(name: &str, labels: Value) -> Value {
    json!({"metadata": {"name": name, "labels": labels}})
}

fn existing(name: &str, node: &str, labels: Value, affinity: Value) -> Value {
    json!({"metadata": {"name": name, "labels": labels},
           "spec": {"nodeName": node, "containers": [], "affinity": affinity}})
}

fn incoming(labels: Value, affinity: Value) -> Value {
    json!({"metadata": {"name": "incoming", "labels": labels},
           "spec": {"containers": [], "affinity": affinity}})
}

fn term(key: &str, op: &str, values: &[&str], topology: &str) -> Value {
    json!({"labelSelector": {"matchExpressions": [{"key": key, "operator": op, "values": values}]},
           "topologyKey": topology})
}

fn required_affinity(t: Value) -> Value {
    json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [t]}})
}

fn required_anti_affinity(t: Value) -> Value {
    json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [t]}})
}

fn run(nodes: &[Value], pods: &[Value], p: Value) -> Vec<(Code, String)> {
    let mut s = snapshot(nodes, pods);
    let p = pod(&mut s, p);
    filter_all(&InterPodAffinity::default(), &s, &p)
}

fn ok() -> (Code, String) {
    (Code::Success, String::new())
}

// TestRequiredAffinitySingleNode (a selection).
#[test]
fn required_affinity_single_node() {
    let n1 = node("node1", json!({"region": "r1", "zone": "z11"}));
    let sec = json!({"service": "securityscan"});
    let existing_sec = existing("p1", "node1", sec.clone(), json!(null));
    let affinity_fail = (
        Code::UnschedulableAndUnresolvable,
        ERR_REASON_AFFINITY_RULES_NOT_MATCH.to_string(),
    );

    assert_eq!(
        run(
            std::slice::from_ref(&n1),
            &[],
            incoming(sec.clone(), json!(null))
        ),
        vec![ok()],
        "no affinity"
    );
    assert_eq!(
        run(
            std::slice::from_ref(&n1),
            std::slice::from_ref(&existing_sec),
            incoming(
                sec.clone(),
                required_affinity(term("service", "In", &["securityscan", "value2"], "region"))
            )
        ),
        vec![ok()],
        "In matches the existing pod"
    );
    assert_eq!(
        run(
            std::slice::from_ref(&n1),
            std::slice::from_ref(&existing_sec),
            incoming(
                sec.clone(),
                required_affinity(term(
                    "service",
                    "NotIn",
                    &["securityscan3", "value3"],
                    "region"
                ))
            )
        ),
        vec![ok()],
        "NotIn matches the existing pod"
    );
    let mut diff_ns = term("service", "In", &["securityscan", "value2"], "region");
    diff_ns["namespaces"] = json!(["DiffNameSpace"]);
    assert_eq!(
        run(
            std::slice::from_ref(&n1),
            std::slice::from_ref(&existing_sec),
            incoming(sec.clone(), required_affinity(diff_ns))
        ),
        vec![affinity_fail.clone()],
        "term in another namespace"
    );
    assert_eq!(
        run(
            std::slice::from_ref(&n1),
            std::slice::from_ref(&existing_sec),
            incoming(
                sec.clone(),
                required_affinity(term(
                    "service",
                    "In",
                    &["antivirusscan", "value2"],
                    "region"
                ))
            )
        ),
        vec![affinity_fail],
        "selector matches nothing"
    );
    // The first pod of a self-affine group may land where its topology key exists.
    assert_eq!(
        run(
            std::slice::from_ref(&n1),
            &[],
            incoming(
                sec.clone(),
                required_affinity(term("service", "In", &["securityscan"], "region"))
            )
        ),
        vec![ok()],
        "self affinity, first pod"
    );
    assert_eq!(
        run(
            &[node("node1", json!({"zone": "z11"}))],
            &[],
            incoming(
                sec.clone(),
                required_affinity(term("service", "In", &["securityscan"], "region"))
            )
        )[0]
        .0,
        Code::UnschedulableAndUnresolvable,
        "node lacks the topology key"
    );
}

#[test]
fn required_anti_affinity_both_ways() {
    let n1 = node("node1", json!({"region": "r1", "zone": "z11"}));
    let sec = json!({"service": "securityscan"});
    // The incoming pod's anti-affinity matches the existing pod.
    assert_eq!(
        run(
            std::slice::from_ref(&n1),
            &[existing("p1", "node1", sec.clone(), json!(null))],
            incoming(
                json!({}),
                required_anti_affinity(term("service", "In", &["securityscan"], "zone"))
            )
        ),
        vec![(
            Code::Unschedulable,
            ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH.to_string()
        )]
    );
    // The existing pod's anti-affinity matches the incoming pod (symmetry).
    assert_eq!(
        run(
            &[
                n1.clone(),
                node("node2", json!({"region": "r1", "zone": "z22"}))
            ],
            &[existing(
                "p1",
                "node1",
                json!({}),
                required_anti_affinity(term("service", "In", &["securityscan"], "zone"))
            )],
            incoming(sec, json!(null))
        ),
        vec![
            (
                Code::Unschedulable,
                ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH.to_string()
            ),
            ok()
        ]
    );
}

#[test]
fn add_and_remove_pod_update_the_counts() {
    let nodes = [node("node1", json!({"zone": "z1"}))];
    let mut s = snapshot(&nodes, &[]);
    let plugin = InterPodAffinity::default();
    let p = pod(
        &mut s,
        incoming(
            json!({}),
            required_anti_affinity(term("app", "In", &["x"], "zone")),
        ),
    );
    let other = pod(
        &mut s,
        existing("o", "node1", json!({"app": "x"}), json!(null)),
    );
    let mut state = CycleState::new();
    assert!(plugin.pre_filter(&mut state, &p, &s).is_success());
    let n = &s.nodes()[0];
    assert!(plugin.filter(&state, &p, n, &s).is_success());
    assert!(plugin.add_pod(&mut state, &p, &other, n, &s).is_success());
    assert_eq!(plugin.filter(&state, &p, n, &s).code(), Code::Unschedulable);
    assert!(
        plugin
            .remove_pod(&mut state, &p, &other, n, &s)
            .is_success()
    );
    assert!(plugin.filter(&state, &p, n, &s).is_success());
}

// TestPreferredAffinity (a selection).
#[test]
fn preferred_affinity_scores() {
    let preferred = |kind: &str, key: &str, value: &str, topology: &str| {
        json!({kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "podAffinityTerm": term(key, "In", &[value], topology)}
        ]}})
    };
    let nodes = [
        node("machine1", json!({"region": "China"})),
        node("machine2", json!({"region": "India"})),
        node("machine3", json!({"az": "az1"})),
    ];
    let pods = [
        existing("p1", "machine1", json!({"security": "S1"}), json!(null)),
        existing("p2", "machine2", json!({"security": "S2"}), json!(null)),
    ];
    let plugin = InterPodAffinity::default();

    let mut s = snapshot(&nodes, &pods);
    let p = pod(&mut s, incoming(json!({}), json!(null)));
    assert_eq!(scores(&plugin, &s, &p), None, "no affinity anywhere: Skip");

    let p = pod(
        &mut s,
        incoming(
            json!({}),
            preferred("podAffinity", "security", "S1", "region"),
        ),
    );
    assert_eq!(scores(&plugin, &s, &p), Some(vec![100, 0, 0]));

    let nodes = [
        node("machine1", json!({"az": "az1"})),
        node("machine2", json!({"region": "China"})),
    ];
    let mut s = snapshot(&nodes, &pods);
    let p = pod(
        &mut s,
        incoming(
            json!({}),
            preferred("podAntiAffinity", "security", "S1", "az"),
        ),
    );
    assert_eq!(scores(&plugin, &s, &p), Some(vec![0, 100]));
}

#[test]
fn existing_required_affinity_counts_with_hard_weight() {
    let nodes = [
        node("machine1", json!({"region": "China"})),
        node("machine2", json!({"region": "India"})),
    ];
    let pods = [existing(
        "p1",
        "machine1",
        json!({}),
        required_affinity(term("security", "In", &["S1"], "region")),
    )];
    let mut s = snapshot(&nodes, &pods);
    let p = pod(&mut s, incoming(json!({"security": "S1"}), json!(null)));
    assert_eq!(
        scores(&InterPodAffinity::default(), &s, &p),
        Some(vec![100, 0])
    );
    let zero = InterPodAffinity::new(&InterPodAffinityArgs {
        hard_pod_affinity_weight: Some(0),
        ..InterPodAffinityArgs::default()
    })
    .unwrap();
    assert_eq!(scores(&zero, &s, &p), None);
}
