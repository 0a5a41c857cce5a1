use super::{CycleState, Status};
use crate::api::Pod;
use crate::snapshot::{NodeId, NodeInfo, Snapshot};

/// The highest score a Score plugin gives after normalization (`framework.MaxNodeScore`).
pub const MAX_NODE_SCORE: i64 = 100;

/// A node and its score from one plugin.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NodeScore {
    /// The node.
    pub node: NodeId,
    /// Its score.
    pub score: i64,
}

/// What every plugin has: a name.
pub trait Plugin: Send + Sync {
    /// The plugin's registry name (e.g. `PodTopologySpread`).
    fn name(&self) -> &'static str;
}

/// PreFilter: computes per-pod state once, before Filter runs on each node.
pub trait PreFilterPlugin: Plugin {
    /// Runs once per scheduling cycle. `Skip` switches this plugin's Filter off.
    fn pre_filter(&self, state: &mut CycleState, pod: &Pod, snapshot: &Snapshot) -> Status;

    /// Updates the PreFilter state as if `added` were bound to `node` (preemption path).
    fn add_pod(
        &self,
        _state: &mut CycleState,
        _pod: &Pod,
        _added: &Pod,
        _node: &NodeInfo,
        _snapshot: &Snapshot,
    ) -> Status {
        Status::success()
    }

    /// Updates the PreFilter state as if `removed` left `node` (preemption path).
    fn remove_pod(
        &self,
        _state: &mut CycleState,
        _pod: &Pod,
        _removed: &Pod,
        _node: &NodeInfo,
        _snapshot: &Snapshot,
    ) -> Status {
        Status::success()
    }
}

/// Filter: decides whether the pod may run on one node.
pub trait FilterPlugin: Plugin {
    /// Success, or why the node does not fit.
    fn filter(&self, state: &CycleState, pod: &Pod, node: &NodeInfo, snapshot: &Snapshot)
    -> Status;
}

/// PreScore: computes per-pod state once, before Score runs on each feasible node.
pub trait PreScorePlugin: Plugin {
    /// Runs once per cycle over the feasible nodes. `Skip` switches this plugin's Score off.
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        feasible: &[NodeId],
        snapshot: &Snapshot,
    ) -> Status;
}

/// Score: ranks feasible nodes; scores are then normalized to `0..=MAX_NODE_SCORE`.
pub trait ScorePlugin: Plugin {
    /// The node's raw score.
    fn score(
        &self,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        snapshot: &Snapshot,
    ) -> Result<i64, Status>;

    /// Rescales all raw scores of this plugin in place (`NormalizeScore`).
    fn normalize_score(
        &self,
        _state: &CycleState,
        _pod: &Pod,
        _scores: &mut [NodeScore],
    ) -> Status {
        Status::success()
    }
}
