//! One test per [`CacheError`], plus the life cycle the errors guard.

use super::super::WorkloadKind;
use super::*;
use crate::api::{Labels, Op, Requirement, Selector};
use crate::builders::{NodeBuilder, PodBuilder};
use crate::convert;

fn node(s: &mut Snapshot, name: &str, zone: &str) -> Node {
    let n = NodeBuilder::new(name)
        .label("zone", zone)
        .allocatable("cpu", "4")
        .allocatable("pods", "10")
        .build();
    convert::node(&n, s.symbols_mut()).expect("valid node")
}

fn pod(s: &mut Snapshot, name: &str, on: Option<&str>) -> Pod {
    let mut b = PodBuilder::new(name).label("app", "a").request("cpu", "1");
    if let Some(n) = on {
        b = b.node(n);
    }
    convert::pod(&b.build(), s.symbols_mut()).expect("valid pod")
}

/// Two nodes n0 (zone a) and n1 (zone b), one pending pod `p`.
fn cluster() -> (Snapshot, PodId) {
    let mut s = Snapshot::new();
    for (n, z) in [("n0", "a"), ("n1", "b")] {
        let n = node(&mut s, n, z);
        s.add_node(n).expect("unique");
    }
    let p = pod(&mut s, "p", None);
    let id = s.add_pod(p).expect("unique");
    (s, id)
}

#[test]
fn synthetic_uid_is_namespace_slash_name() {
    let (s, id) = cluster();
    assert_eq!(s.pod_by_uid("default/p"), Some(id));
}

#[test]
fn unknown_uid() {
    let (mut s, _) = cluster();
    let e = s.remove_pod_by_uid("nope").expect_err("refused");
    assert_eq!(e, CacheError::UnknownUid { uid: "nope".into() });
    assert_eq!(e.to_string(), "pod with uid nope: not in the cache");
    assert!(matches!(
        s.forget_pod("nope"),
        Err(CacheError::UnknownUid { .. })
    ));
    assert!(matches!(
        s.finish_binding("nope"),
        Err(CacheError::UnknownUid { .. })
    ));
}

#[test]
fn unknown_pod_id() {
    let (mut s, _) = cluster();
    let e = s.assume_pod(PodId(99), NodeId(0)).expect_err("refused");
    assert_eq!(e, CacheError::UnknownPodId { id: 99 });
}

#[test]
fn pod_not_found_on_update() {
    let (mut s, _) = cluster();
    let mut q = pod(&mut s, "q", None);
    q.uid = "u-q".into();
    let e = s.update_pod("u-q", q).expect_err("refused");
    assert_eq!(
        e.to_string(),
        "pod \"default/q\" (uid u-q): not in the cache"
    );
}

#[test]
fn uid_mismatch() {
    let (mut s, _) = cluster();
    let mut p = pod(&mut s, "p", None);
    p.uid = "other".into();
    let e = s.update_pod("default/p", p).expect_err("refused");
    assert!(matches!(e, CacheError::UidMismatch { ref new_uid, .. } if new_uid == "other"));
}

#[test]
fn duplicate_pod_on_rename() {
    let (mut s, _) = cluster();
    let q = pod(&mut s, "q", None);
    s.add_pod(q).expect("unique");
    let mut renamed = pod(&mut s, "q", None);
    renamed.uid = "default/p".into();
    let e = s.update_pod("default/p", renamed).expect_err("refused");
    assert!(matches!(e, CacheError::DuplicatePod { ref pod, .. } if pod == "default/q"));
}

#[test]
fn pod_node_not_found() {
    let (mut s, id) = cluster();
    let p = pod(&mut s, "p", Some("gone"));
    let e = s.update_pod("default/p", p).expect_err("refused");
    assert_eq!(
        e.to_string(),
        "pod \"default/p\" (uid default/p): spec.nodeName: node \"gone\" not in the cache"
    );
    assert_eq!(s.pod_state(id), Some(PodState::Pending));
}

#[test]
fn assume_twice_and_assume_bound() {
    let (mut s, id) = cluster();
    s.assume_pod(id, NodeId(0)).expect("pending pod");
    let e = s.assume_pod("default/p", NodeId(1)).expect_err("refused");
    assert!(matches!(e, CacheError::AlreadyAssumed { ref node, .. } if node == "n0"));
    let b = pod(&mut s, "b", Some("n1"));
    s.add_pod(b).expect("unique");
    let e = s.assume_pod("default/b", NodeId(0)).expect_err("refused");
    assert!(matches!(e, CacheError::AlreadyBound { ref node, .. } if node == "n1"));
}

#[test]
fn not_assumed() {
    let (mut s, _) = cluster();
    let e = s.forget_pod("default/p").expect_err("refused");
    assert_eq!(
        e.to_string(),
        "pod \"default/p\" (uid default/p): not assumed, so it cannot be forgotten"
    );
    let e = s.finish_binding("default/p").expect_err("refused");
    assert!(matches!(
        e,
        CacheError::NotAssumed {
            operation: "finish binding",
            ..
        }
    ));
}

#[test]
fn node_errors() {
    let (mut s, id) = cluster();
    let n = node(&mut s, "n9", "a");
    assert_eq!(
        s.update_node("n9", n.clone()).expect_err("refused"),
        CacheError::NodeNotFound { node: "n9".into() }
    );
    assert!(matches!(
        s.update_node("n0", n),
        Err(CacheError::NodeRenamed { .. })
    ));
    assert!(matches!(
        s.remove_node("n9"),
        Err(CacheError::NodeNotFound { .. })
    ));
    assert_eq!(
        s.assume_pod(id, NodeId(7)).expect_err("refused"),
        CacheError::UnknownNodeId { id: 7 }
    );
}

#[test]
fn workload_and_namespace_not_found() {
    let (mut s, _) = cluster();
    let ns = s.symbols_mut().intern("default");
    let e = s
        .remove_workload(WorkloadKind::ReplicaSet, ns, "rs")
        .expect_err("refused");
    assert_eq!(e.to_string(), "replicaset default/rs: not in the cache");
    s.set_service(ns, "svc", None);
    s.set_service(ns, "svc", Some(Labels::default()));
    assert_eq!(s.workloads().services.len(), 1);
    assert_eq!(s.remove_workload(WorkloadKind::Service, ns, "svc"), Ok(()));
    let other = s.symbols_mut().intern("other");
    assert!(matches!(
        s.remove_namespace(other),
        Err(CacheError::NamespaceNotFound { .. })
    ));
    assert!(s.remove_namespace(ns).is_ok());
}

#[test]
fn life_cycle_assume_confirm_forget() {
    let (mut s, id) = cluster();
    s.assume_pod(id, NodeId(0)).expect("pending");
    assert_eq!(s.node(NodeId(0)).pods(), &[id]);
    s.finish_binding(id).expect("assumed");
    assert_eq!(
        s.pod_state(id),
        Some(PodState::Assumed {
            binding_finished: true
        })
    );
    // the informer reports it on n1: confirmed and moved
    let landed = pod(&mut s, "p", Some("n1"));
    assert_eq!(s.add_pod(landed), Ok(id));
    assert_eq!(s.pod_state(id), Some(PodState::Added));
    assert!(s.node(NodeId(0)).pods().is_empty());
    assert_eq!(s.node(NodeId(1)).pods(), &[id]);
    // a second pod assumed and forgotten is pending again and counts nowhere
    let q = pod(&mut s, "q", None);
    let q = s.add_pod(q).expect("unique");
    s.assume_pod(q, NodeId(0)).expect("pending");
    s.forget_pod(q).expect("assumed");
    assert_eq!(s.pod_state(q), Some(PodState::Pending));
    assert!(s.node(NodeId(0)).pods().is_empty());
    assert_eq!(s.pod(q).and_then(|p| p.node_name.clone()), None);
}

#[test]
fn removed_node_keeps_pods_until_it_returns() {
    let (mut s, id) = cluster();
    let b = pod(&mut s, "b", Some("n0"));
    let b = s.add_pod(b).expect("unique");
    let removed = s.remove_node("n0").expect("known");
    assert_eq!(s.nodes().len(), 1);
    assert_eq!(s.node_id("n1"), Some(NodeId(0)));
    assert_eq!(s.pod_node(b), None);
    assert!(s.pod(b).is_some());
    s.add_node(removed).expect("back");
    assert_eq!(s.pod_node(b), s.node_id("n0"));
    // freed pod slots are reused
    s.remove_pod(id);
    let r = pod(&mut s, "r", None);
    assert_eq!(s.add_pod(r), Ok(id));
}

#[test]
fn prune_drops_groups_nobody_read_since_the_last_prune() {
    let (mut s, _) = cluster();
    let ns = s.symbols_mut().intern("default");
    let app = s.symbols_mut().intern("app");
    let (a, b) = (s.symbols_mut().intern("a"), s.symbols_mut().intern("b"));
    let sel_a = Selector::from_set(&Labels::from_pairs([(app, a)]));
    let sel_b = Selector::from_set(&Labels::from_pairs([(app, b)]));
    s.match_counts(ns, &sel_a);
    s.match_counts(ns, &sel_b);
    assert_eq!(s.tracked_groups(), 2);
    assert_eq!(s.prune_groups(), 0, "both read in this generation");
    s.match_counts(ns, &sel_a);
    assert_eq!(s.prune_groups(), 1);
    assert_eq!(s.tracked_groups(), 1);
    // the surviving group is still kept current
    let p = pod(&mut s, "x", Some("n0"));
    s.add_pod(p).expect("unique");
    assert_eq!(s.match_counts(ns, &sel_a).as_slice(), &[1, 0]);
}

#[test]
fn binding_a_pod_whose_node_is_gone_stops_waiting_for_it() {
    let (mut s, _) = cluster();
    let b = pod(&mut s, "b", Some("n0"));
    let b = s.add_pod(b).expect("unique");
    let n0 = s.remove_node("n0").expect("known");
    s.bind(b, NodeId(0));
    s.add_node(n0).expect("back");
    let total: usize = s.nodes().iter().map(|n| n.pods().len()).sum();
    assert_eq!(total, 1, "counted once, on n1");
    assert_eq!(s.pod_node(b), s.node_id("n1"));
}

#[test]
fn groups_prepared_in_one_pass_count_as_groups_built_one_by_one() {
    let (mut s, _) = cluster();
    let mut i = 0;
    for app in ["a", "b", "c"] {
        for tier in [Some("x"), Some("y"), None] {
            for node in ["n0", "n1", "n1"] {
                let mut b = PodBuilder::new(&format!("q{i}"))
                    .label("app", app)
                    .node(node);
                if let Some(t) = tier {
                    b = b.label("tier", t);
                }
                let p = convert::pod(&b.build(), s.symbols_mut()).expect("valid pod");
                s.add_pod(p).expect("unique");
                i += 1;
            }
        }
    }
    let ns = s.symbols_mut().intern("default");
    let sym = |s: &mut Snapshot, v: &str| s.symbols_mut().intern(v);
    let (app, tier) = (sym(&mut s, "app"), sym(&mut s, "tier"));
    let (a, b, x, y) = (
        sym(&mut s, "a"),
        sym(&mut s, "b"),
        sym(&mut s, "x"),
        sym(&mut s, "y"),
    );
    let req = |key, op| Requirement { key, op };
    let selectors = [
        Selector::from_requirements(vec![req(app, Op::In(Box::new([a])))]),
        Selector::from_requirements(vec![req(app, Op::In(Box::new([a, b])))]),
        Selector::from_requirements(vec![
            req(app, Op::In(Box::new([a, b]))),
            req(tier, Op::In(Box::new([x]))),
        ]),
        Selector::from_requirements(vec![req(tier, Op::NotIn(Box::new([x])))]),
        Selector::from_requirements(vec![req(tier, Op::Exists)]),
        Selector::from_requirements(vec![
            req(app, Op::In(Box::new([b]))),
            req(tier, Op::In(Box::new([y]))),
        ]),
        Selector::everything(),
        Selector::Nothing,
    ];
    s.prepare_counts(selectors.iter().map(|sel| (ns, sel.clone())));
    assert_eq!(s.tracked_groups(), selectors.len());
    let mut rebuilt = s.clone();
    rebuilt.set_incremental(false);
    for sel in &selectors {
        assert_eq!(
            s.match_counts(ns, sel),
            rebuilt.match_counts(ns, sel),
            "{sel:?}"
        );
    }
    assert_eq!(s.tracked_groups(), selectors.len(), "nothing built twice");
}
