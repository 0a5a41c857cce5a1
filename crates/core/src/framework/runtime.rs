//! Running a profile's plugins at each extension point, as upstream's framework runtime
//! does: Skip at PreFilter switches Filter off (and at PreScore, Score); PreFilter
//! results intersect; scores are normalized, range-checked, weighted and summed.

use super::{
    Code, CycleState, FilterPlugin, MAX_NODE_SCORE, NodeScore, PreFilterResult, Profile, Screen,
    Screening, Status,
};
use crate::api::Pod;
use crate::snapshot::{NodeId, NodeInfo, Snapshot};
use std::collections::BTreeSet;

/// One plugin's score for a node: raw, after NormalizeScore, and weighted.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PluginScore {
    /// The plugin.
    pub plugin: &'static str,
    /// What Score returned.
    pub raw: i64,
    /// After NormalizeScore.
    pub normalized: i64,
    /// `normalized × weight`.
    pub weighted: i64,
}

/// Every plugin's score for one node and their sum (`NodePluginScores`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NodePluginScores {
    /// The node.
    pub node: NodeId,
    /// Per plugin, in the profile's order.
    pub scores: Vec<PluginScore>,
    /// The sum of the weighted scores.
    pub total: i64,
}

/// The Filter plugins a cycle runs, in the profile's order (see
/// [`Profile::active_filters`]).
pub(crate) struct ActiveFilters<'a> {
    all: Vec<&'a dyn FilterPlugin>,
}

impl ActiveFilters<'_> {
    /// Splits the active plugins for a screened walk over the nodes: the screening
    /// checks ([`FilterPlugin::screen`]), and the chain of the plugins that do not
    /// screen, in profile order. A plugin that passes every node is in neither.
    pub(crate) fn screened<'s>(
        &'s self,
        state: &'s CycleState,
        pod: &'s Pod,
        snapshot: &'s Snapshot,
    ) -> ScreenedFilters<'s> {
        let mut checks = Vec::new();
        let mut by_node = Vec::new();
        let mut rest = Vec::new();
        for &pl in &self.all {
            match pl.screen(state, pod, snapshot) {
                Some(Screening::PassesAll) => {}
                Some(Screening::Rejects(check)) => checks.push(check),
                Some(Screening::RejectsByNode(check)) => by_node.push(check),
                None => rest.push(pl),
            }
        }
        ScreenedFilters {
            checks,
            by_node,
            rest: ActiveFilters { all: rest },
        }
    }

    /// Whether no plugin is left to run (every node passes).
    pub(crate) fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// Runs the Filter plugins on one node, stopping at the first rejection
    /// (`RunFilterPlugins`).
    pub(crate) fn run(
        &self,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        snapshot: &Snapshot,
    ) -> Status {
        for pl in &self.all {
            let s = pl.filter(state, pod, node, snapshot);
            if !s.is_success() {
                let name = pl.name();
                let s = if s.is_rejected() {
                    s
                } else {
                    Status::error(format!("running {name:?} filter plugin: {s}"))
                };
                return s.with_plugin(name);
            }
        }
        Status::success()
    }
}

/// The active Filter plugins split for a walk over many nodes (see
/// [`ActiveFilters::screened`]): a node any check rejects is infeasible, and a node
/// every check passes is decided by `rest` alone, as the whole chain would decide it.
pub(crate) struct ScreenedFilters<'s> {
    /// The screening checks that read cycle state: true when the plugin rejects the node.
    pub(crate) checks: Vec<Screen<'s>>,
    /// The screening checks that read only the pod and the node
    /// ([`Screening::RejectsByNode`]).
    pub(crate) by_node: Vec<Screen<'s>>,
    /// The plugins that do not screen, in profile order.
    pub(crate) rest: ActiveFilters<'s>,
}

impl ScreenedFilters<'_> {
    /// Whether a screening check that reads cycle state rejects the node.
    #[inline]
    pub(crate) fn rejects(&self, node: &NodeInfo) -> bool {
        self.checks.iter().any(|rejects| rejects(node))
    }

    /// Whether a screening check that reads only the pod and the node rejects it.
    #[inline]
    pub(crate) fn rejects_by_node(&self, node: &NodeInfo) -> bool {
        self.by_node.iter().any(|rejects| rejects(node))
    }
}

/// What PreFilter produced for the cycle.
#[derive(Debug)]
pub(crate) struct PreFilterOutcome {
    /// Success, or the rejection / error that ends the cycle.
    pub(crate) status: Status,
    /// The nodes the plugins allow, `None` = all.
    pub(crate) result: Option<PreFilterResult>,
    /// The plugins that restricted nodes (for the absent nodes' message).
    pub(crate) plugins_with_nodes: BTreeSet<&'static str>,
    /// Every plugin's own status, for explanations.
    pub(crate) verdicts: Vec<(&'static str, Status)>,
}

impl Profile {
    /// Runs the PreEnqueue plugins (`RunPreEnqueuePlugins`): the first that does not
    /// succeed keeps the pod out of the queue.
    pub(crate) fn run_pre_enqueue(&self, pod: &Pod) -> Status {
        for pl in &self.pre_enqueue {
            let s = pl.pre_enqueue(pod);
            if !s.is_success() {
                return s.with_plugin(pl.name());
            }
        }
        Status::success()
    }

    /// Runs every PreFilter plugin (`RunPreFilterPlugins`).
    pub(crate) fn run_pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        snapshot: &Snapshot,
    ) -> PreFilterOutcome {
        let mut out = PreFilterOutcome {
            status: Status::success(),
            result: None,
            plugins_with_nodes: BTreeSet::new(),
            verdicts: Vec::new(),
        };
        for pl in &self.pre_filter {
            let name = pl.name();
            let (s, r) = pl.pre_filter_with_result(state, pod, snapshot);
            out.verdicts.push((name, s.clone()));
            if s.is_skip() {
                state.skip_filter_plugin(name);
                continue;
            }
            match s.code() {
                Code::Success => {}
                Code::UnschedulableAndUnresolvable => {
                    out.status = s.with_plugin(name);
                    out.plugins_with_nodes.clear();
                    return out;
                }
                Code::Unschedulable => {
                    out.status = s.with_plugin(name);
                    continue;
                }
                _ => {
                    out.status = Status::error(format!("running PreFilter plugin {name:?}: {s}"))
                        .with_plugin(name);
                    out.plugins_with_nodes.clear();
                    return out;
                }
            }
            if r.is_some() {
                out.plugins_with_nodes.insert(name);
            }
            out.result = PreFilterResult::merge(out.result.take(), r);
            if out.result.as_ref().is_some_and(|r| r.node_names.is_empty()) {
                let list: Vec<&str> = out.plugins_with_nodes.iter().copied().collect();
                let msg = match list.as_slice() {
                    [one] => format!("node(s) didn't satisfy plugin {one}"),
                    _ => format!(
                        "node(s) didn't satisfy plugin(s) [{}] simultaneously",
                        list.join(" ")
                    ),
                };
                out.status = Status::new(Code::UnschedulableAndUnresolvable, msg);
                return out;
            }
        }
        out
    }

    /// The Filter plugins that run this cycle: those whose PreFilter did not Skip.
    /// Computed once per cycle so the per-node loop compares no plugin names.
    pub(crate) fn active_filters(&self, state: &CycleState) -> ActiveFilters<'_> {
        let all = self
            .filter
            .iter()
            .filter(|pl| !state.is_filter_skipped(pl.name()))
            .map(|pl| &**pl)
            .collect();
        ActiveFilters { all }
    }

    /// Every Filter plugin's verdict on one node (Skip for those PreFilter switched off).
    pub(crate) fn run_filter_all(
        &self,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        snapshot: &Snapshot,
    ) -> Vec<(&'static str, Status)> {
        self.filter
            .iter()
            .map(|pl| {
                let name = pl.name();
                if state.is_filter_skipped(name) {
                    (name, Status::skip())
                } else {
                    (name, pl.filter(state, pod, node, snapshot))
                }
            })
            .collect()
    }

    /// Runs every PreScore plugin (`RunPreScorePlugins`); the first failure is an error.
    pub(crate) fn run_pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[NodeId],
        snapshot: &Snapshot,
        verdicts: &mut Vec<(&'static str, Status)>,
    ) -> Status {
        for pl in &self.pre_score {
            let name = pl.name();
            let s = pl.pre_score(state, pod, nodes, snapshot);
            verdicts.push((name, s.clone()));
            if s.is_skip() {
                state.skip_score_plugin(name);
                continue;
            }
            if !s.is_success() {
                return Status::error(format!("running PreScore plugin {name:?}: {s}"))
                    .with_plugin(name);
            }
        }
        Status::success()
    }

    /// Runs Score, NormalizeScore and the weights for every node (`RunScorePlugins`):
    /// the weighted total per node, in `nodes` order, and with `record` each plugin's
    /// raw and normalized column (for explanations; the hot path keeps only totals).
    pub(crate) fn run_score(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[NodeId],
        snapshot: &Snapshot,
        record: bool,
    ) -> Result<ScoreTable, Status> {
        let mut table = ScoreTable {
            totals: vec![0; nodes.len()],
            columns: Vec::new(),
        };
        let mut scores: Vec<NodeScore> = Vec::with_capacity(nodes.len());
        for (pl, weight) in &self.score {
            let name = pl.name();
            if state.is_score_skipped(name) {
                continue;
            }
            scores.clear();
            pl.score_nodes(state, pod, nodes, snapshot, &mut scores)
                .map_err(|s| Status::error(format!("plugin {name:?} failed with: {s}")))?;
            if scores.len() != nodes.len() {
                return Err(Status::error(format!(
                    "plugin {name:?} scored {} of {} nodes",
                    scores.len(),
                    nodes.len()
                )));
            }
            let raw: Vec<i64> = if record {
                scores.iter().map(|s| s.score).collect()
            } else {
                Vec::new()
            };
            let s = pl.normalize_score(state, pod, &mut scores);
            if !s.is_success() {
                return Err(Status::error(format!("plugin {name:?} failed with: {s}")));
            }
            for (total, score) in table.totals.iter_mut().zip(&scores) {
                if !(0..=MAX_NODE_SCORE).contains(&score.score) {
                    return Err(Status::error(format!(
                        "plugin {name:?} returns an invalid score {}, it should in the range of [0, {MAX_NODE_SCORE}] after normalizing",
                        score.score
                    )));
                }
                *total += score.score * weight;
            }
            if record {
                table.columns.push(ScoreColumn {
                    plugin: name,
                    weight: *weight,
                    raw,
                    normalized: scores.iter().map(|s| s.score).collect(),
                });
            }
        }
        Ok(table)
    }
}

/// One Score plugin's scores over the scored nodes, in the nodes' order.
#[derive(Clone, Debug)]
pub(crate) struct ScoreColumn {
    plugin: &'static str,
    weight: i64,
    raw: Vec<i64>,
    normalized: Vec<i64>,
}

/// What [`Profile::run_score`] produced: totals always, plugin columns when recorded.
#[derive(Clone, Debug, Default)]
pub(crate) struct ScoreTable {
    /// The weighted sum per node.
    pub(crate) totals: Vec<i64>,
    columns: Vec<ScoreColumn>,
}

impl ScoreTable {
    /// Per node, every plugin's raw, normalized and weighted score (needs `record`).
    pub(crate) fn by_node(&self, nodes: &[NodeId]) -> Vec<NodePluginScores> {
        nodes
            .iter()
            .zip(&self.totals)
            .enumerate()
            .map(|(i, (&node, &total))| NodePluginScores {
                node,
                scores: self
                    .columns
                    .iter()
                    .map(|c| PluginScore {
                        plugin: c.plugin,
                        raw: c.raw[i],
                        normalized: c.normalized[i],
                        weighted: c.normalized[i] * c.weight,
                    })
                    .collect(),
                total,
            })
            .collect()
    }
}
