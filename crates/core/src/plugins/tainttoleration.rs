//! TaintToleration: Filter keeps pods off nodes with untolerated `NoSchedule`/`NoExecute`
//! taints; Score prefers nodes with fewer untolerated `PreferNoSchedule` taints.

use super::helper::default_normalize_score;
use crate::api::{Pod, TaintEffect, Toleration, find_untolerated_taint};
use crate::features::{Feature, Features};
use crate::framework::{ActionType as A, ClusterEvent, EventResource as R};
use crate::framework::{
    Code, CycleState, FilterPlugin, NodeScore, NodeScoreCache, Plugin, PreScorePlugin, ScorePlugin,
    Screening, Status,
};
use crate::snapshot::{NodeId, NodeInfo, Snapshot};

/// The plugin's registry name.
pub const NAME: &str = "TaintToleration";

/// The TaintToleration plugin.
#[derive(Clone, Debug)]
pub struct TaintToleration {
    comparison_ops: bool,
    /// The Filter reason leaves the taint out (from 1.35,
    /// [`KubernetesVersion::taint_reason_names_no_taint`](crate::version::KubernetesVersion::taint_reason_names_no_taint)).
    generic_reason: bool,
    /// Scores kept across cycles, by the pod's PreScore tolerations (a node's score
    /// reads only them and the node's taints).
    kept: NodeScoreCache<Vec<Toleration>>,
}

impl TaintToleration {
    /// Builds the plugin; the Gt/Lt toleration gate is resolved here.
    pub fn new(features: Features) -> Self {
        Self {
            comparison_ops: features.enabled(Feature::TaintTolerationComparisonOperators),
            generic_reason: features.kubernetes_version().taint_reason_names_no_taint(),
            kept: NodeScoreCache::default(),
        }
    }
}

/// PreScore state: the pod's tolerations that can tolerate `PreferNoSchedule` taints.
#[derive(Clone, Debug, Default)]
pub(crate) struct TaintPreScoreState {
    tolerations: Vec<Toleration>,
}

impl Plugin for TaintToleration {
    fn name(&self) -> &'static str {
        NAME
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(R::Node, A::ADD | A::UPDATE_NODE_TAINT),
            ClusterEvent::new(R::UnscheduledPod, A::UPDATE_POD_TOLERATION),
        ]
    }
}

impl FilterPlugin for TaintToleration {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo, _: &Snapshot) -> Status {
        match find_untolerated_taint(
            &node.node.taints,
            &pod.tolerations,
            self.comparison_ops,
            |t| t.effect.blocks_scheduling(),
        ) {
            None => Status::success(),
            Some(_) if self.generic_reason => Status::new(
                Code::UnschedulableAndUnresolvable,
                "node(s) had untolerated taint(s)",
            ),
            Some(t) => Status::new(
                Code::UnschedulableAndUnresolvable,
                format!("node(s) had untolerated taint {{{}: {}}}", t.key, t.value),
            ),
        }
    }

    /// A scan of the node's taints, as Filter's; rejecting tainted nodes early spares
    /// the message.
    fn screen<'a>(
        &'a self,
        _: &'a CycleState,
        pod: &'a Pod,
        _: &'a Snapshot,
    ) -> Option<Screening<'a>> {
        Some(Screening::RejectsByNode(Box::new(
            move |node: &NodeInfo| {
                find_untolerated_taint(
                    &node.node.taints,
                    &pod.tolerations,
                    self.comparison_ops,
                    |t| t.effect.blocks_scheduling(),
                )
                .is_some()
            },
        )))
    }
}

impl PreScorePlugin for TaintToleration {
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, _: &[NodeId], _: &Snapshot) -> Status {
        let tolerations = pod
            .tolerations
            .iter()
            .filter(|t| t.effect.is_none_or(|e| e == TaintEffect::PreferNoSchedule))
            .cloned()
            .collect();
        state.write(TaintPreScoreState { tolerations });
        Status::success()
    }
}

const PRE_SCORE_KEY: &str = "PreScoreTaintToleration";

impl TaintToleration {
    /// How many of the node's `PreferNoSchedule` taints the pod does not tolerate.
    fn node_score(&self, s: &TaintPreScoreState, node: &NodeInfo) -> i64 {
        let count = node
            .node
            .taints
            .iter()
            .filter(|t| t.effect == TaintEffect::PreferNoSchedule)
            .filter(|t| {
                !s.tolerations
                    .iter()
                    .any(|tol| tol.tolerates(t, self.comparison_ops))
            })
            .count();
        i64::try_from(count).unwrap_or(i64::MAX)
    }
}

impl ScorePlugin for TaintToleration {
    fn score(
        &self,
        state: &CycleState,
        _: &Pod,
        node: &NodeInfo,
        _: &Snapshot,
    ) -> Result<i64, Status> {
        let s = state.require::<TaintPreScoreState>(PRE_SCORE_KEY)?;
        Ok(self.node_score(s, node))
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        _: &Pod,
        nodes: &[NodeId],
        snapshot: &Snapshot,
        out: &mut Vec<NodeScore>,
    ) -> Result<(), Status> {
        let s = state.require::<TaintPreScoreState>(PRE_SCORE_KEY)?;
        self.kept
            .score_nodes(snapshot, &s.tolerations, nodes, out, |node| {
                self.node_score(s, node)
            });
        Ok(())
    }

    fn normalize_score(&self, _: &CycleState, _: &Pod, scores: &mut [NodeScore]) -> Status {
        default_normalize_score(true, scores);
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::testutil::{filter_only, pod, scores, snapshot};
    use serde_json::{Value, json};

    fn node(name: &str, taints: Value) -> Value {
        json!({"metadata": {"name": name}, "spec": {"taints": taints}})
    }

    fn tolerating(tolerations: Value) -> Value {
        json!({"metadata": {"name": "p"}, "spec": {"containers": [], "tolerations": tolerations}})
    }

    // Upstream's TestTaintTolerationFilter.
    #[test]
    fn filter_table() {
        let untolerated = |k: &str, v: &str| {
            (
                Code::UnschedulableAndUnresolvable,
                format!("node(s) had untolerated taint {{{k}: {v}}}"),
            )
        };
        let ok = (Code::Success, String::new());
        let dedicated_user1 =
            json!([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]);
        let cases = [
            (
                json!([]),
                dedicated_user1.clone(),
                untolerated("dedicated", "user1"),
            ),
            (
                json!([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]),
                dedicated_user1.clone(),
                ok.clone(),
            ),
            (
                json!([{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}]),
                dedicated_user1.clone(),
                untolerated("dedicated", "user1"),
            ),
            (
                json!([{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}]),
                json!([{"key": "foo", "value": "bar", "effect": "NoSchedule"}]),
                ok.clone(),
            ),
            (
                json!([{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"},
                       {"key": "foo", "operator": "Exists", "effect": "NoSchedule"}]),
                json!([{"key": "dedicated", "value": "user2", "effect": "NoSchedule"},
                       {"key": "foo", "value": "bar", "effect": "NoSchedule"}]),
                ok.clone(),
            ),
            (
                json!([{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}]),
                json!([{"key": "foo", "value": "bar", "effect": "NoSchedule"}]),
                untolerated("foo", "bar"),
            ),
            (
                json!([{"key": "foo", "operator": "Equal", "value": "bar"}]),
                json!([{"key": "foo", "value": "bar", "effect": "NoSchedule"}]),
                ok.clone(),
            ),
            (
                json!([{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}]),
                json!([{"key": "dedicated", "value": "user1", "effect": "PreferNoSchedule"}]),
                ok.clone(),
            ),
            (
                json!([]),
                json!([{"key": "dedicated", "value": "user1", "effect": "PreferNoSchedule"}]),
                ok.clone(),
            ),
        ];
        // Upstream's table as of 1.34, whose reasons still name the taint.
        let v1_34 = crate::version::KubernetesVersion { minor: 34 };
        let plugin = TaintToleration::new(Features::for_release(v1_34));
        let newest = TaintToleration::new(Features::default());
        for (i, (tolerations, taints, want)) in cases.into_iter().enumerate() {
            let mut s = snapshot(&[node("n", taints)], &[]);
            let p = pod(&mut s, tolerating(tolerations));
            assert_eq!(filter_only(&plugin, &s, &p), vec![want.clone()], "case {i}");
            // From 1.35 (PR 134740) the reason no longer names the taint.
            let generic = match want {
                (Code::Success, m) => (Code::Success, m),
                (code, _) => (code, "node(s) had untolerated taint(s)".to_string()),
            };
            assert_eq!(filter_only(&newest, &s, &p), vec![generic], "case {i}");
        }
    }

    // Upstream's TestTaintTolerationScore.
    #[test]
    fn score_table() {
        let pns = |k: &str, v: &str| json!({"key": k, "value": v, "effect": "PreferNoSchedule"});
        let tol = |k: &str, v: &str, e: &str| json!({"key": k, "operator": "Equal", "value": v, "effect": e});
        let cases = [
            (
                json!([tol("foo", "bar", "PreferNoSchedule")]),
                vec![json!([pns("foo", "bar")]), json!([pns("foo", "blah")])],
                vec![100, 0],
            ),
            (
                json!([
                    tol("cpu-type", "arm64", "PreferNoSchedule"),
                    tol("disk-type", "ssd", "PreferNoSchedule")
                ]),
                vec![
                    json!([]),
                    json!([pns("cpu-type", "arm64")]),
                    json!([pns("cpu-type", "arm64"), pns("disk-type", "ssd")]),
                ],
                vec![100, 100, 100],
            ),
            (
                json!([tol("foo", "bar", "PreferNoSchedule")]),
                vec![
                    json!([]),
                    json!([pns("cpu-type", "arm64")]),
                    json!([pns("cpu-type", "arm64"), pns("disk-type", "ssd")]),
                ],
                vec![100, 50, 0],
            ),
            (
                json!([
                    tol("cpu-type", "arm64", "NoSchedule"),
                    tol("disk-type", "ssd", "NoSchedule")
                ]),
                vec![
                    json!([]),
                    json!([{"key": "cpu-type", "value": "arm64", "effect": "NoSchedule"}]),
                    json!([pns("cpu-type", "arm64"), pns("disk-type", "ssd")]),
                ],
                vec![100, 100, 0],
            ),
            (
                json!([]),
                vec![json!([]), json!([pns("cpu-type", "arm64")])],
                vec![100, 0],
            ),
        ];
        let plugin = TaintToleration::new(Features::default());
        for (i, (tolerations, taints, want)) in cases.into_iter().enumerate() {
            let nodes: Vec<Value> = taints
                .into_iter()
                .enumerate()
                .map(|(j, t)| node(&format!("n{j}"), t))
                .collect();
            let mut s = snapshot(&nodes, &[]);
            let p = pod(&mut s, tolerating(tolerations));
            assert_eq!(scores(&plugin, &s, &p), Some(want), "case {i}");
        }
    }
}
