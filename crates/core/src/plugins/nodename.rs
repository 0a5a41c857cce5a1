//! NodeName: a pod that names a node (`spec.nodeName`) fits only that node.

use crate::api::Pod;
use crate::framework::{ActionType as A, ClusterEvent, EventResource as R};
use crate::framework::{Code, CycleState, FilterPlugin, Plugin, Status};
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::testutil::{filter_only, pod, snapshot};
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
}
