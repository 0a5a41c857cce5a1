//! Property: after any stream of cache events (nodes added, updated, removed; pods
//! added, updated, removed, assumed, forgotten, confirmed; groups pruned), the live
//! snapshot equals one rebuilt from scratch from the objects that survive: per-node
//! pods and aggregates, match counts, PodTopologySpread's domain sums, and a probe
//! pod's scheduling cycle (placement and every score).

use super::domain_counts::NodeFilter;
use super::{NodeId, Snapshot};
use crate::api::resources::HostPort;
use crate::api::{Labels, Pod, Selector, Sym};
use crate::builders::{NodeBuilder, PodBuilder};
use crate::{Features, ScheduleResult, Scheduler, SchedulerConfig, convert};
use proptest::prelude::*;
use smallvec::smallvec;
use std::collections::BTreeMap;

const NODES: u8 = 5;
const PODS: u8 = 10;

#[derive(Clone, Debug)]
enum Ev {
    /// Add node i (zone, tainted); an update if it exists.
    Node(u8, Option<u8>, bool),
    RemoveNode(u8),
    /// Add pod i (app, node); an update if it exists.
    Pod(u8, u8, Option<u8>),
    RemovePod(u8),
    Assume(u8, u8),
    Forget(u8),
    Finish(u8),
    Prune,
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        3 => (0..NODES, prop::option::of(0..3u8), any::<bool>()).prop_map(|(i, z, t)| Ev::Node(i, z, t)),
        1 => (0..NODES).prop_map(Ev::RemoveNode),
        5 => (0..PODS, 0..3u8, prop::option::of(0..NODES)).prop_map(|(i, a, n)| Ev::Pod(i, a, n)),
        2 => (0..PODS).prop_map(Ev::RemovePod),
        3 => (0..PODS, 0..NODES).prop_map(|(i, n)| Ev::Assume(i, n)),
        1 => (0..PODS).prop_map(Ev::Forget),
        1 => (0..PODS).prop_map(Ev::Finish),
        1 => Just(Ev::Prune),
    ]
}

fn node(s: &mut Snapshot, i: u8, zone: Option<u8>, tainted: bool) -> crate::api::Node {
    let name = format!("n{i}");
    let mut b = NodeBuilder::new(&name)
        .label("kubernetes.io/hostname", &name)
        .allocatable("cpu", "2")
        .allocatable("memory", "8Gi")
        .allocatable("pods", "20");
    if let Some(z) = zone {
        b = b.label("topology.kubernetes.io/zone", &format!("z{z}"));
    }
    if tainted {
        b = b.taint("dedicated", "x", "NoSchedule");
    }
    convert::node(&b.build(), s.symbols_mut()).expect("the test node converts")
}

fn pod(s: &mut Snapshot, i: u8, app: u8, on: Option<u8>) -> Pod {
    let mut b = PodBuilder::new(&format!("p{i}"))
        .label("app", &format!("a{app}"))
        .request("cpu", "300m");
    if let Some(n) = on {
        b = b.node(&format!("n{n}"));
    }
    let mut p = b.build();
    p.metadata.uid = Some(format!("u{i}"));
    if i.is_multiple_of(3)
        && let Some(c) = p.spec.as_mut().and_then(|s| s.containers.first_mut())
    {
        c.ports = Some(vec![k8s_openapi::api::core::v1::ContainerPort {
            container_port: 80,
            host_port: Some(8000 + i32::from(i)),
            ..Default::default()
        }]);
    }
    convert::pod(&p, s.symbols_mut()).expect("the test pod converts")
}

fn probe(s: &mut Snapshot) -> Pod {
    let b = PodBuilder::new("probe")
        .label("app", "a0")
        .request("cpu", "300m")
        .spread(
            1,
            "topology.kubernetes.io/zone",
            "ScheduleAnyway",
            &[("app", "a0")],
        )
        .spread(
            1,
            "kubernetes.io/hostname",
            "DoNotSchedule",
            &[("app", "a0")],
        );
    convert::pod(&b.build(), s.symbols_mut()).expect("the test pod converts")
}

/// Applies one event; errors are part of the stream (they must leave no trace).
fn apply(s: &mut Snapshot, e: &Ev) {
    match *e {
        Ev::Node(i, z, t) => {
            let n = node(s, i, z, t);
            let name = format!("n{i}");
            if s.node_id(&name).is_some() {
                let _ = s.update_node(&name, n);
            } else {
                let _ = s.add_node(n);
            }
        }
        Ev::RemoveNode(i) => {
            let _ = s.remove_node(&format!("n{i}"));
        }
        Ev::Pod(i, app, on) => {
            let p = pod(s, i, app, on);
            let uid = format!("u{i}");
            if s.pod_by_uid(&uid).is_some() {
                let _ = s.update_pod(&uid, p);
            } else {
                let _ = s.add_pod(p);
            }
        }
        Ev::RemovePod(i) => {
            let _ = s.remove_pod_by_uid(&format!("u{i}"));
        }
        Ev::Assume(i, n) => {
            if let Some(node) = s.node_id(&format!("n{n}")) {
                let _ = s.assume_pod(format!("u{i}").as_str(), node);
            }
        }
        Ev::Forget(i) => {
            let _ = s.forget_pod(format!("u{i}").as_str());
        }
        Ev::Finish(i) => {
            let _ = s.finish_binding(format!("u{i}").as_str());
        }
        Ev::Prune => {
            s.prune_groups();
        }
    }
}

/// A snapshot built from scratch from the live one's surviving objects: its nodes in
/// order, then its pods that count somewhere or are pending.
fn rebuild(s: &Snapshot) -> Snapshot {
    let mut r = Snapshot::new();
    *r.symbols_mut() = s.symbols().clone();
    for n in s.nodes() {
        r.add_node(n.node.clone())
            .expect("the snapshot takes the node");
    }
    for (id, p) in s.pods() {
        if s.pod_node(id).is_some() || p.node_name.is_none() {
            r.add_pod(p.clone()).expect("the snapshot takes the pod");
        }
    }
    *r.workloads_mut() = s.workloads().clone();
    r
}

/// A domain sum keyed by value text (domain indices may differ between snapshots).
fn sums(s: &Snapshot, ns: Sym, sel: &Selector, key: Sym, f: &NodeFilter) -> String {
    let c = s.domain_counts(ns, sel, key, f);
    let domains = s.domains(key);
    let by_value: BTreeMap<String, i64> = c
        .iter()
        .map(|(d, n)| {
            let name = match domains {
                Some(k) if d < k.len() => {
                    s.symbols().resolve(k.value(u32::try_from(d).unwrap_or(0)))
                }
                _ => "<missing>",
            };
            (name.to_string(), n)
        })
        .collect();
    format!("{by_value:?} min={} eligible={}", c.min(), c.eligible())
}

/// Everything compared, as text, in node order.
fn observe(s: &mut Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    for n in s.nodes() {
        let mut uids: Vec<&str> = n
            .pods()
            .iter()
            .filter_map(|p| s.pod(*p).map(|p| &*p.uid))
            .collect();
        uids.sort_unstable();
        let ports: Vec<i32> = (8000..8012)
            .filter(|p| {
                n.used_ports().check_conflict(&HostPort {
                    ip: "0.0.0.0".into(),
                    protocol: "TCP".into(),
                    port: *p,
                })
            })
            .collect();
        out.push(format!(
            "{} #{} pods={uids:?} req={:?} nz={:?} ports={ports:?}",
            n.node.name,
            n.id.0,
            n.requested(),
            n.non_zero_requested()
        ));
    }
    let names = |it: &mut dyn Iterator<Item = &super::NodeInfo>| -> Vec<String> {
        it.map(|n| n.node.name.to_string()).collect()
    };
    out.push(format!(
        "affinity={:?} anti={:?}",
        names(&mut s.nodes_with_pod_affinity()),
        names(&mut s.nodes_with_required_anti_affinity())
    ));
    let ns = s.symbols_mut().intern("default");
    let app = s.symbols_mut().intern("app");
    let keys = [
        s.symbols_mut().intern("topology.kubernetes.io/zone"),
        s.symbols_mut().intern("kubernetes.io/hostname"),
    ];
    for a in 0..3 {
        let v = s.symbols_mut().intern(&format!("a{a}"));
        let sel = Selector::from_set(&Labels::from_pairs([(app, v)]));
        out.push(format!("counts a{a}={:?}", s.match_counts(ns, &sel)));
        for key in keys {
            for taints in [false, true] {
                let f = NodeFilter {
                    required_keys: smallvec![key],
                    affinity: None,
                    tolerations: taints.then(|| (std::sync::Arc::from([]), false)),
                };
                out.push(format!(
                    "sums a{a} {key:?} {taints}: {}",
                    sums(s, ns, &sel, key, &f)
                ));
            }
        }
    }
    let p = probe(s);
    let mut sched = Scheduler::new(&SchedulerConfig::default(), Features::default(), s)
        .expect("the scheduler builds from the test configuration");
    sched.set_seed(3);
    let result = match sched.schedule_one(s, &p) {
        ScheduleResult::Scheduled { node, .. } => format!("on {}", s.node(node).node.name),
        other => format!("{other:?}"),
    };
    out.push(result);
    let e = sched.explain(s, &p);
    out.push(format!("{:?}", e.scores));
    out.push(format!("{:?} {:?}", e.spread, e.score_counts));
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn live_cache_equals_a_rebuild(events in prop::collection::vec(ev(), 1..40)) {
        let mut s = Snapshot::new();
        for (i, e) in events.iter().enumerate() {
            apply(&mut s, e);
            let live = observe(&mut s);
            let mut r = rebuild(&s);
            let fresh = observe(&mut r);
            prop_assert_eq!(live, fresh, "after event {} {:?}", i, e);
            // Every stored pod still has its id by UID and a consistent node.
            for (id, p) in s.pods() {
                prop_assert_eq!(s.pod_by_uid(&p.uid), Some(id));
                if let Some(n) = s.pod_node(id) {
                    prop_assert!(s.node(n).pods().contains(&id));
                    prop_assert_eq!(p.node_name.as_deref(), Some(&*s.node(n).node.name));
                }
            }
            prop_assert!(s.nodes().iter().enumerate().all(|(i, n)| n.id == NodeId(u32::try_from(i).unwrap_or(0))));
        }
    }
}
