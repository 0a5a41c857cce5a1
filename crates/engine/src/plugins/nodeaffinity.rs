//! NodeAffinity: Filter by `spec.nodeSelector` and required node affinity (with a
//! `PreFilterResult` for `matchFields` on `metadata.name`); Score by preferred terms.

use super::helper::default_normalize_score;
use crate::api::Pod;
use crate::framework::{
    Code, CycleState, FilterPlugin, NodeScore, Plugin, PreFilterPlugin, PreFilterResult,
    PreScorePlugin, ScorePlugin, Status,
};
use crate::snapshot::{NodeId, NodeInfo, Snapshot};

/// The plugin's registry name.
pub const NAME: &str = "NodeAffinity";
/// Filter's reason (`ErrReasonPod`).
pub const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";
/// PreFilter's reason when the terms pin the pod to no node name (`errReasonConflict`).
pub const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";

/// The NodeAffinity plugin (without `addedAffinity`).
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeAffinity;

impl Plugin for NodeAffinity {
    fn name(&self) -> &'static str {
        NAME
    }
}

impl PreFilterPlugin for NodeAffinity {
    fn pre_filter(&self, state: &mut CycleState, pod: &Pod, snapshot: &Snapshot) -> Status {
        self.pre_filter_with_result(state, pod, snapshot).0
    }

    fn pre_filter_with_result(
        &self,
        _: &mut CycleState,
        pod: &Pod,
        _: &Snapshot,
    ) -> (Status, Option<PreFilterResult>) {
        if pod.required_node_affinity.is_empty() {
            return (Status::skip(), None);
        }
        match &pod.required_node_names {
            None => (Status::success(), None),
            Some(names) if names.is_empty() => (
                Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_CONFLICT),
                None,
            ),
            Some(names) => (
                Status::success(),
                Some(PreFilterResult {
                    node_names: names.clone(),
                }),
            ),
        }
    }
}

impl FilterPlugin for NodeAffinity {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo, snapshot: &Snapshot) -> Status {
        if pod.required_node_affinity.matches(
            &node.node.labels,
            &node.node.name,
            snapshot.symbols(),
        ) {
            Status::success()
        } else {
            Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_POD)
        }
    }
}

impl PreScorePlugin for NodeAffinity {
    fn pre_score(&self, _: &mut CycleState, pod: &Pod, _: &[NodeId], _: &Snapshot) -> Status {
        match &pod.preferred_node_affinity {
            None => Status::skip(),
            Some(p) => match &p.error {
                Some(e) => Status::error(e.clone()),
                None => Status::success(),
            },
        }
    }
}

impl ScorePlugin for NodeAffinity {
    fn score(
        &self,
        _: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        snapshot: &Snapshot,
    ) -> Result<i64, Status> {
        Ok(pod.preferred_node_affinity.as_ref().map_or(0, |p| {
            p.score(&node.node.labels, &node.node.name, snapshot.symbols())
        }))
    }

    fn normalize_score(&self, _: &CycleState, _: &Pod, scores: &mut [NodeScore]) -> Status {
        default_normalize_score(false, scores);
        Status::success()
    }
}
