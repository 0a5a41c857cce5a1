//! NodeName: a pod that names a node (`spec.nodeName`) fits only that node.

use crate::api::Pod;
use crate::framework::{ActionType as A, ClusterEvent, EventResource as R};
use crate::framework::{Code, CycleState, FilterPlugin, Plugin, Screening, Status};
use crate::snapshot::{NodeInfo, Snapshot};

/// The plugin's registry name.
pub const NAME: &str = "NodeName";
/// Filter's reason (`ErrReason`).
pub(crate) const ERR_REASON: &str = "node(s) didn't match the requested node name";

/// The NodeName plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeName;

impl Plugin for NodeName {
    fn name(&self) -> &'static str {
        NAME
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::new(R::Node, A::ADD)]
    }
}

impl FilterPlugin for NodeName {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo, _: &Snapshot) -> Status {
        match &pod.node_name {
            Some(name) if *name != node.node.name => {
                Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON)
            }
            _ => Status::success(),
        }
    }

    /// A pod that names no node passes every node; one that does, only that node.
    fn screen<'a>(
        &'a self,
        _: &'a CycleState,
        pod: &'a Pod,
        _: &'a Snapshot,
    ) -> Option<Screening<'a>> {
        Some(match &pod.node_name {
            None => Screening::PassesAll,
            Some(name) => {
                Screening::RejectsByNode(Box::new(move |node: &NodeInfo| *name != node.node.name))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::testutil::{filter_only, pod, screen_agrees, snapshot};
    use serde_json::json;

    // Upstream's TestNodeName.
    #[test]
    fn filter_table() {
        let mut s = snapshot(&[json!({"metadata": {"name": "foo"}})], &[]);
        let cases = [
            (json!(null), Code::Success),
            (json!("foo"), Code::Success),
            (json!("bar"), Code::UnschedulableAndUnresolvable),
        ];
        for (node_name, want) in cases {
            let p = pod(
                &mut s,
                json!({"metadata": {"name": "p"}, "spec": {"containers": [], "nodeName": node_name}}),
            );
            let got = filter_only(&NodeName, &s, &p);
            assert_eq!(got[0].0, want, "{node_name}");
        }
    }

    #[test]
    fn screen_rejects_what_filter_rejects() {
        let names = ["foo", "bar", "baz"].map(|n| json!({"metadata": {"name": n}}));
        let mut s = snapshot(&names, &[]);
        let state = CycleState::new();
        for (node_name, rejected) in [(json!(null), 0), (json!("bar"), 2), (json!("qux"), 3)] {
            let p = pod(
                &mut s,
                json!({"metadata": {"name": "p"}, "spec": {"containers": [], "nodeName": node_name}}),
            );
            assert_eq!(
                screen_agrees(&NodeName, &state, &s, &p),
                rejected,
                "{node_name}"
            );
        }
        let p = pod(
            &mut s,
            json!({"metadata": {"name": "p"}, "spec": {"containers": []}}),
        );
        assert!(matches!(
            NodeName.screen(&state, &p, &s),
            Some(Screening::PassesAll)
        ));
    }
}
