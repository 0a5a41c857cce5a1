//! Invariants of the incremental state, checked on random clusters:
//! - PreFilter's domain counts after any sequence of add_pod/remove_pod equal the counts
//!   PreFilter computes from scratch on the cluster those operations describe;
//! - the tracked global minimum is the true minimum over eligible domains;
//! - the snapshot's incremental per-node counts equal counts rebuilt from the pods.

use proptest::prelude::*;
use std::collections::BTreeMap;
use topospread::Features;
use topospread::api::{Labels, Pod, Selector, SpreadConstraintSpec, WhenUnsatisfiable};
use topospread::builders::{NodeBuilder, PodBuilder};
use topospread::config::PodTopologySpreadArgs;
use topospread::convert;
use topospread::framework::{CycleState, PreFilterPlugin};
use topospread::plugins::podtopologyspread::{PodTopologySpread, PreFilterState};
use topospread::snapshot::{NodeId, PodId, Snapshot};

/// A generated cluster: node (zone, tainted) pairs, and pods as (node, app, namespace).
#[derive(Clone, Debug)]
struct Cluster {
    nodes: Vec<(u8, bool)>,
    pods: Vec<(usize, u8, u8)>,
}

fn cluster() -> impl Strategy<Value = Cluster> {
    (1usize..8)
        .prop_flat_map(|n| {
            (
                prop::collection::vec((0u8..4, any::<bool>()), n),
                prop::collection::vec((0..n, 0u8..3, 0u8..2), 0..30),
            )
        })
        .prop_map(|(nodes, pods)| Cluster { nodes, pods })
}

/// One operation on the PreFilter state: add a new pod, or remove an existing one.
#[derive(Clone, Debug)]
enum Op {
    Add { node: usize, app: u8, ns: u8 },
    Remove { nth: usize },
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            (0usize..8, 0u8..3, 0u8..2).prop_map(|(node, app, ns)| Op::Add { node, app, ns }),
            (0usize..64).prop_map(|nth| Op::Remove { nth }),
        ],
        0..25,
    )
}

fn make_pod(s: &mut Snapshot, name: String, node: Option<&str>, app: u8, ns: u8) -> Pod {
    let mut b = PodBuilder::new(&name)
        .namespace(&format!("ns{ns}"))
        .label("app", &format!("a{app}"));
    if let Some(node) = node {
        b = b.node(node);
    }
    convert::pod(&b.build(), s.symbols_mut()).expect("valid pod")
}

/// Builds a snapshot from the cluster plus extra pods, minus removed ones.
fn build(c: &Cluster, live: &[(String, usize, u8, u8)]) -> Snapshot {
    let mut s = Snapshot::new();
    for (i, (zone, tainted)) in c.nodes.iter().enumerate() {
        let mut b = NodeBuilder::new(&format!("n{i}"))
            .label("zone", &format!("z{zone}"))
            .label("host", &format!("n{i}"));
        if *tainted {
            b = b.taint("t", "", "NoSchedule");
        }
        let node = convert::node(&b.build(), s.symbols_mut()).expect("valid node");
        s.add_node(node).expect("unique node");
    }
    for (name, node, app, ns) in live {
        let node_name = format!("n{node}");
        let p = make_pod(&mut s, name.clone(), Some(&node_name), *app, *ns);
        s.add_pod(p).expect("valid pod");
    }
    s
}

fn incoming(s: &mut Snapshot, key: &str, taints_honor: bool) -> Pod {
    let mut p = make_pod(s, "incoming".into(), None, 0, 0);
    let symbols = s.symbols_mut();
    let (k, v) = (symbols.intern("app"), symbols.intern("a0"));
    let selector = Selector::from_set(&Labels::from_pairs([(k, v)]));
    p.spread_constraints = vec![SpreadConstraintSpec {
        max_skew: 1,
        topology_key: symbols.intern(key),
        when_unsatisfiable: WhenUnsatisfiable::DoNotSchedule,
        selector,
        min_domains: None,
        node_affinity_policy: None,
        node_taints_policy: taints_honor.then_some(topospread::api::NodeInclusionPolicy::Honor),
        match_label_keys: Vec::new(),
    }]
    .into();
    p
}

fn plugin(s: &mut Snapshot) -> PodTopologySpread {
    let args = PodTopologySpreadArgs {
        defaulting_type: Some("List".into()),
        ..Default::default()
    };
    PodTopologySpread::new(&args, Features::default(), s.symbols_mut()).expect("valid args")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn add_remove_equals_rebuild(c in cluster(), ops in ops(), zone_key in any::<bool>(), honor in any::<bool>()) {
        let key = if zone_key { "zone" } else { "host" };
        let mut live: Vec<(String, usize, u8, u8)> = c
            .pods
            .iter()
            .enumerate()
            .map(|(i, (node, app, ns))| (format!("p{i}"), *node, *app, *ns))
            .collect();
        let mut snapshot = build(&c, &live);
        let pl = plugin(&mut snapshot);
        let pod = incoming(&mut snapshot, key, honor);
        let mut state = CycleState::new();
        let status = pl.pre_filter(&mut state, &pod, &snapshot);
        prop_assert!(status.is_success());
        for (i, op) in ops.iter().enumerate() {
            match op {
                Op::Add { node, app, ns } => {
                    let node = node % c.nodes.len();
                    let name = format!("x{i}");
                    let p = make_pod(&mut snapshot, name.clone(), Some(&format!("n{node}")), *app, *ns);
                    let info = snapshot.node(NodeId(node as u32));
                    prop_assert!(pl.add_pod(&mut state, &pod, &p, info, &snapshot).is_success());
                    live.push((name, node, *app, *ns));
                }
                Op::Remove { nth } => {
                    if live.is_empty() { continue; }
                    let (name, node, app, ns) = live.remove(nth % live.len());
                    let p = make_pod(&mut snapshot, name, Some(&format!("n{node}")), app, ns);
                    let info = snapshot.node(NodeId(node as u32));
                    prop_assert!(pl.remove_pod(&mut state, &pod, &p, info, &snapshot).is_success());
                }
            }
        }
        let tracked = state.read::<PreFilterState>().expect("state written");
        let mut fresh_snapshot = build(&c, &live);
        let fresh_plugin = plugin(&mut fresh_snapshot);
        let fresh_pod = incoming(&mut fresh_snapshot, key, honor);
        let mut fresh = CycleState::new();
        fresh_plugin.pre_filter(&mut fresh, &fresh_pod, &fresh_snapshot);
        let fresh = fresh.read::<PreFilterState>().expect("state written");
        let counts = tracked.domain_counts(&snapshot);
        prop_assert_eq!(&counts, &fresh.domain_counts(&fresh_snapshot));
        let true_min: Vec<Option<i64>> = counts
            .iter()
            .map(|m: &BTreeMap<String, i64>| m.values().min().copied())
            .collect();
        prop_assert_eq!(tracked.minimums(), true_min);
    }

    #[test]
    fn incremental_counts_equal_rebuilt(c in cluster(), removals in prop::collection::vec(0usize..64, 0..10)) {
        let mut s = build(&c, &[]);
        let (k, v) = (s.symbols_mut().intern("app"), s.symbols_mut().intern("a1"));
        let selector = Selector::from_set(&Labels::from_pairs([(k, v)]));
        let ns = s.symbols_mut().intern("ns0");
        // Register the group before any pod exists, so every later change is incremental.
        let _ = s.match_counts(ns, &selector);
        let mut ids: Vec<PodId> = Vec::new();
        for (i, (node, app, pns)) in c.pods.iter().enumerate() {
            let p = make_pod(&mut s, format!("p{i}"), Some(&format!("n{node}")), *app, *pns);
            ids.push(s.add_pod(p).expect("valid pod"));
        }
        for r in removals {
            if ids.is_empty() { break; }
            let id = ids.remove(r % ids.len());
            s.remove_pod(id);
        }
        let incremental = s.match_counts(ns, &selector);
        s.set_incremental(false);
        let rebuilt = s.match_counts(ns, &selector);
        prop_assert_eq!(incremental, rebuilt);
    }
}
