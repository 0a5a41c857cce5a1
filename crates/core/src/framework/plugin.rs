use super::{ClusterEvent, CycleState, Status};
use crate::api::Pod;
use crate::snapshot::{NodeId, NodeInfo, Snapshot};
use std::collections::BTreeSet;

/// The nodes PreFilter plugins allow (`PreFilterResult`): a plugin that returns none
/// allows every node; results of several plugins intersect.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreFilterResult {
    /// The allowed node names (possibly naming nodes the snapshot does not have).
    pub node_names: BTreeSet<Box<str>>,
}

impl PreFilterResult {
    /// Intersects two results, where `None` means all nodes (`PreFilterResult.Merge`).
    pub fn merge(a: Option<Self>, b: Option<Self>) -> Option<Self> {
        match (a, b) {
            (None, x) | (x, None) => x,
            (Some(a), Some(b)) => Some(Self {
                node_names: a.node_names.intersection(&b.node_names).cloned().collect(),
            }),
        }
    }
}

/// A pod waiting in the scheduling queue, as QueueSort compares it.
#[derive(Copy, Clone, Debug)]
pub struct QueuedPod<'a> {
    /// The pod.
    pub pod: &'a Pod,
    /// When it was added to the queue (a monotonic sequence number).
    pub arrival: u64,
}

/// QueueSort: orders the pods waiting to be scheduled.
pub trait QueueSortPlugin: Plugin {
    /// Whether `a` is scheduled before `b`.
    fn less(&self, a: QueuedPod<'_>, b: QueuedPod<'_>) -> bool;
}

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

/// PreEnqueue: decides whether a pod may enter the scheduling queue at all.
pub trait PreEnqueuePlugin: Plugin {
    /// Success, or why the pod waits outside the queue (no cycle runs for it).
    fn pre_enqueue(&self, pod: &Pod) -> Status;
}

/// What every plugin has: a name.
pub trait Plugin: Send + Sync {
    /// The plugin's registry name (e.g. `PodTopologySpread`).
    fn name(&self) -> &'static str;

    /// The cluster events that may make a pod this plugin rejected schedulable
    /// (`EventsToRegister`); by default every event.
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::WILDCARD]
    }
}

/// PreFilter: computes per-pod state once, before Filter runs on each node.
pub trait PreFilterPlugin: Plugin {
    /// Runs once per scheduling cycle. `Skip` switches this plugin's Filter off.
    fn pre_filter(&self, state: &mut CycleState, pod: &Pod, snapshot: &Snapshot) -> Status;

    /// [`Self::pre_filter`] with the nodes the plugin restricts the pod to, if any
    /// (`PreFilterResult`). Plugins that never restrict nodes keep the default.
    fn pre_filter_with_result(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        snapshot: &Snapshot,
    ) -> (Status, Option<PreFilterResult>) {
        (self.pre_filter(state, pod, snapshot), None)
    }

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

    /// For a Filter cheap enough to decide without building a status: its verdict for
    /// this cycle, prepared once, as a check of whether it rejects a node. The check
    /// rejects exactly the nodes Filter rejects, so the scheduler runs it ahead of the
    /// chain, leaves the plugin out of the chain, and works out a rejected node's status
    /// in profile order only when statuses are reported (no node fits). `None` (the
    /// default): the plugin does not screen. A plugin whose Filter may fail with an
    /// internal error returns `None` then, so the full chain reports it.
    fn screen<'a>(
        &'a self,
        _state: &'a CycleState,
        _pod: &'a Pod,
        _snapshot: &'a Snapshot,
    ) -> Option<Screening<'a>> {
        None
    }
}

/// A screening Filter's verdict for one cycle (see [`FilterPlugin::screen`]).
#[non_exhaustive]
pub enum Screening<'a> {
    /// Filter passes every node this cycle (e.g. NodeName for a pod that names none).
    PassesAll,
    /// Filter rejects exactly the nodes this check returns true for.
    Rejects(Screen<'a>),
    /// As [`Screening::Rejects`], and the check reads nothing but the pod and the node's
    /// [`NodeInfo`] (no cycle state, no other node or object), and whether the plugin
    /// screens at all (its PreFilter's Skip included) depends on the pod alone: its
    /// verdict on a node holds, until the node changes, for every pod identical to this
    /// one, so the scheduler keeps it across the cycles of a template's replicas.
    RejectsByNode(Screen<'a>),
}

/// A screening Filter's per-cycle check: true when the plugin rejects the node.
pub type Screen<'a> = Box<dyn Fn(&NodeInfo) -> bool + 'a>;

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

    /// Scores every node of `nodes` in order, appending to `out`. The default calls
    /// [`Self::score`] per node; plugins override it to read their cycle state once.
    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[NodeId],
        snapshot: &Snapshot,
        out: &mut Vec<NodeScore>,
    ) -> Result<(), Status> {
        score_each(nodes, snapshot, out, |node| {
            self.score(state, pod, node, snapshot)
        })
    }

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

/// Scores each node of `nodes` with `score`, appending to `out`: the loop behind
/// [`ScorePlugin::score_nodes`] for plugins that read their cycle state once first.
pub fn score_each(
    nodes: &[NodeId],
    snapshot: &Snapshot,
    out: &mut Vec<NodeScore>,
    mut score: impl FnMut(&NodeInfo) -> Result<i64, Status>,
) -> Result<(), Status> {
    out.reserve(nodes.len());
    for &node in nodes {
        let score = score(snapshot.node(node))?;
        out.push(NodeScore { node, score });
    }
    Ok(())
}
