//! NodeUnschedulable: keeps pods off cordoned nodes (`spec.unschedulable`) unless they
//! tolerate the `node.kubernetes.io/unschedulable:NoSchedule` taint.

use crate::api::{Pod, Taint, TaintEffect};
use crate::features::{Feature, Features};
use crate::framework::{ActionType as A, ClusterEvent, EventResource as R};
use crate::framework::{Code, CycleState, FilterPlugin, Plugin, Screening, Status};
use crate::snapshot::{NodeInfo, Snapshot};

/// The plugin's registry name.
pub const NAME: &str = "NodeUnschedulable";
/// Filter's reason (`ErrReasonUnschedulable`).
pub(crate) const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";
/// The taint a cordoned node is treated as carrying.
pub(crate) const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// The NodeUnschedulable plugin.
#[derive(Clone, Debug)]
pub struct NodeUnschedulable {
    taint: Taint,
    comparison_ops: bool,
}

impl NodeUnschedulable {
    /// Builds the plugin; the Gt/Lt toleration gate is resolved here.
    pub fn new(features: Features) -> Self {
        Self {
            taint: Taint {
                key: TAINT_NODE_UNSCHEDULABLE.into(),
                value: "".into(),
                effect: TaintEffect::NoSchedule,
            },
            comparison_ops: features.enabled(Feature::TaintTolerationComparisonOperators),
        }
    }
}

impl Plugin for NodeUnschedulable {
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

impl FilterPlugin for NodeUnschedulable {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo, _: &Snapshot) -> Status {
        if node.node.unschedulable
            && !pod
                .tolerations
                .iter()
                .any(|t| t.tolerates(&self.taint, self.comparison_ops))
        {
            return Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE);
        }
        Status::success()
    }

    /// The pod's tolerations are read once: a pod that tolerates the taint passes
    /// every node, any other is rejected by cordoned nodes alone.
    fn screen<'a>(
        &'a self,
        _: &'a CycleState,
        pod: &'a Pod,
        _: &'a Snapshot,
    ) -> Option<Screening<'a>> {
        let tolerated = pod
            .tolerations
            .iter()
            .any(|t| t.tolerates(&self.taint, self.comparison_ops));
        Some(if tolerated {
            Screening::PassesAll
        } else {
            Screening::RejectsByNode(Box::new(|node: &NodeInfo| node.node.unschedulable))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::testutil::{filter_only, pod, screen_agrees, snapshot};
    use serde_json::json;

    // Upstream's TestNodeUnschedulable.
    #[test]
    fn filter_table() {
        let plugin = NodeUnschedulable::new(Features::default());
        let no = (
            Code::UnschedulableAndUnresolvable,
            ERR_REASON_UNSCHEDULABLE.to_string(),
        );
        let ok = (Code::Success, String::new());
        let tolerate = json!([{"key": TAINT_NODE_UNSCHEDULABLE, "operator": "Exists", "effect": "NoSchedule"}]);
        let cases = [
            (json!(false), json!([]), ok.clone()),
            (json!(true), json!([]), no),
            (json!(null), json!([]), ok.clone()),
            (json!(true), tolerate, ok),
        ];
        for (i, (unschedulable, tolerations, want)) in cases.into_iter().enumerate() {
            let mut s = snapshot(
                &[json!({"metadata": {"name": "n"}, "spec": {"unschedulable": unschedulable}})],
                &[],
            );
            let p = pod(
                &mut s,
                json!({"metadata": {"name": "p"}, "spec": {"containers": [], "tolerations": tolerations}}),
            );
            assert_eq!(filter_only(&plugin, &s, &p), vec![want], "case {i}");
        }
    }

    #[test]
    fn screen_rejects_what_filter_rejects() {
        let plugin = NodeUnschedulable::new(Features::default());
        let nodes: Vec<serde_json::Value> = [json!(false), json!(true), json!(null), json!(true)]
            .into_iter()
            .enumerate()
            .map(|(i, u)| json!({"metadata": {"name": format!("n{i}")}, "spec": {"unschedulable": u}}))
            .collect();
        let mut s = snapshot(&nodes, &[]);
        let state = CycleState::new();
        let tolerate = json!([{"key": TAINT_NODE_UNSCHEDULABLE, "operator": "Exists", "effect": "NoSchedule"}]);
        let other = json!([{"key": "other", "operator": "Exists", "effect": "NoSchedule"}]);
        for (tolerations, rejected) in [(json!([]), 2), (other, 2), (tolerate, 0)] {
            let p = pod(
                &mut s,
                json!({"metadata": {"name": "p"}, "spec": {"containers": [], "tolerations": tolerations}}),
            );
            assert_eq!(
                screen_agrees(&plugin, &state, &s, &p),
                rejected,
                "{tolerations}"
            );
        }
    }
}
