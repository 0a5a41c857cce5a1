//! Builders for plugin unit tests: manifests as JSON, a snapshot, and the framework
//! calls in the order the runtime makes them.

use crate::api::Pod;
use crate::convert;
use crate::framework::{
    Code, CycleState, FilterPlugin, NodeScore, PreFilterPlugin, PreScorePlugin, ScorePlugin,
};
use crate::snapshot::{NodeId, Snapshot};
use k8s_openapi::api::core::v1 as core;
use serde_json::Value;

/// A snapshot from node and (bound) pod manifests.
pub(crate) fn snapshot(nodes: &[Value], pods: &[Value]) -> Snapshot {
    let mut s = Snapshot::new();
    s.set_volumes_tracked(true);
    for n in nodes {
        let n: core::Node =
            serde_json::from_value(n.clone()).expect("the test object deserializes");
        let node = convert::node(&n, s.symbols_mut()).expect("the test node converts");
        s.add_node(node).expect("the snapshot takes the node");
    }
    for p in pods {
        let p = pod(&mut s, p.clone());
        s.add_pod(p).expect("the snapshot takes the pod");
    }
    s
}

/// Adds storage objects (PersistentVolumeClaim, PersistentVolume, StorageClass,
/// CSINode manifests, told apart by `kind`) to a snapshot.
pub(crate) fn storage(s: &mut Snapshot, objects: &[Value]) {
    use k8s_openapi::api::storage::v1 as st;
    fn parse<T: serde::de::DeserializeOwned>(v: &Value) -> T {
        serde_json::from_value(v.clone()).expect("the test object deserializes")
    }
    for o in objects {
        let sym = s.symbols_mut();
        match o.get("kind").and_then(Value::as_str) {
            Some("PersistentVolumeClaim") => {
                let c = convert::persistent_volume_claim(&parse(o), sym);
                s.set_persistent_volume_claim(c.expect("the test claim converts"));
            }
            Some("PersistentVolume") => {
                let v = convert::persistent_volume(&parse(o), sym);
                s.set_persistent_volume(v.expect("the test volume converts"));
            }
            Some("StorageClass") => {
                let c = convert::storage_class(&parse::<st::StorageClass>(o), sym);
                s.set_storage_class(c.expect("the test storage class converts"));
            }
            Some("CSINode") => {
                let n = convert::csi_node(&parse::<st::CSINode>(o), sym);
                s.set_csi_node(n.expect("the test CSINode converts"));
            }
            other => panic!("not a storage kind: {other:?}"),
        }
    }
}

/// A pod from its manifest.
pub(crate) fn pod(s: &mut Snapshot, v: Value) -> Pod {
    let p: core::Pod = serde_json::from_value(v).expect("the test object deserializes");
    convert::pod(&p, s.symbols_mut()).expect("the test pod converts")
}

/// PreFilter (if any), then Filter on every node unless PreFilter skipped: each node's
/// code and first reason.
pub(crate) fn filter_all<P: PreFilterPlugin + FilterPlugin>(
    plugin: &P,
    s: &Snapshot,
    pod: &Pod,
) -> Vec<(Code, String)> {
    let mut state = CycleState::new();
    let pre = plugin.pre_filter(&mut state, pod, s);
    s.nodes()
        .iter()
        .map(|n| {
            let st = if pre.is_skip() {
                crate::framework::Status::success()
            } else if !pre.is_success() {
                pre.clone()
            } else {
                plugin.filter(&state, pod, n, s)
            };
            (
                st.code(),
                st.reasons()
                    .first()
                    .map(|r| r.to_string())
                    .unwrap_or_default(),
            )
        })
        .collect()
}

/// Filter alone on every node (for plugins without PreFilter).
pub(crate) fn filter_only<P: FilterPlugin>(
    plugin: &P,
    s: &Snapshot,
    pod: &Pod,
) -> Vec<(Code, String)> {
    let state = CycleState::new();
    s.nodes()
        .iter()
        .map(|n| {
            let st = plugin.filter(&state, pod, n, s);
            (
                st.code(),
                st.reasons()
                    .first()
                    .map(|r| r.to_string())
                    .unwrap_or_default(),
            )
        })
        .collect()
}

/// PreScore over every node, Score, NormalizeScore: the normalized scores, or `None`
/// when PreScore skipped.
pub(crate) fn scores<P: PreScorePlugin + ScorePlugin>(
    plugin: &P,
    s: &Snapshot,
    pod: &Pod,
) -> Option<Vec<i64>> {
    let mut state = CycleState::new();
    let nodes: Vec<NodeId> = s.nodes().iter().map(|n| n.id).collect();
    let pre = plugin.pre_score(&mut state, pod, &nodes, s);
    if pre.is_skip() {
        return None;
    }
    assert!(pre.is_success(), "{pre}");
    let mut out: Vec<NodeScore> = nodes
        .iter()
        .map(|&node| NodeScore {
            node,
            score: plugin
                .score(&state, pod, s.node(node), s)
                .expect("the plugin scores the node"),
        })
        .collect();
    let st = plugin.normalize_score(&state, pod, &mut out);
    assert!(st.is_success(), "{st}");
    Some(out.iter().map(|s| s.score).collect())
}

/// Checks a screening Filter against its Filter on every node: a check rejects exactly
/// the nodes Filter rejects, and a plugin that passes every node rejects none. Returns
/// how many nodes the screen rejected.
pub(crate) fn screen_agrees<P: FilterPlugin>(
    plugin: &P,
    state: &CycleState,
    s: &Snapshot,
    pod: &Pod,
) -> usize {
    let screening = plugin
        .screen(state, pod, s)
        .unwrap_or_else(|| panic!("{} does not screen", plugin.name()));
    let mut rejected = 0;
    for n in s.nodes() {
        let screened = match &screening {
            crate::framework::Screening::PassesAll => false,
            crate::framework::Screening::Rejects(check)
            | crate::framework::Screening::RejectsByNode(check) => check(n),
        };
        let filter = plugin.filter(state, pod, n, s);
        assert_eq!(
            screened,
            !filter.is_success(),
            "{} on node {}: filter says {filter}",
            plugin.name(),
            n.node.name
        );
        rejected += usize::from(screened);
    }
    rejected
}
