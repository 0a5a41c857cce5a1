//! A cycle with everything recorded, for people: `topospread explain`.

use super::{Cycle, ScheduleResult, nominator};
use crate::api::Pod;
use crate::framework::Point;
use crate::framework::{NodePluginScores, Profile, Status};
use crate::plugins::podtopologyspread::{self as pts, PreScoreState};
use crate::snapshot::{NodeId, Snapshot};
use crate::spread::PodSpread;
use std::collections::BTreeMap;

/// Every Filter plugin's verdict on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NodeFilterVerdicts {
    /// The node.
    pub node: NodeId,
    /// Whether the cycle itself ran Filter on this node (it stops once enough
    /// feasible nodes are found, and skips nodes a PreFilterResult excludes).
    pub evaluated: bool,
    /// Per Filter plugin in profile order (Skip where PreFilter switched it off).
    pub verdicts: Vec<(&'static str, Status)>,
    /// The pending pods nominated to this node that Filter counted here (`namespace/name`:
    /// equal or higher priority, `RunFilterPluginsWithNominatedPods`); the verdicts are
    /// those with them added when that rejects the node.
    pub nominated: Vec<String>,
}

/// A pod preemption chose to evict, as it was when the cycle chose it (it is gone from
/// the cache once evicted).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Victim {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// Its priority.
    pub priority: i32,
}

/// One scheduling cycle, recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Explanation {
    /// Each PreFilter plugin's status.
    pub pre_filter: Vec<(&'static str, Status)>,
    /// Each node's Filter verdicts (empty when PreFilter rejected the pod).
    pub filter: Vec<NodeFilterVerdicts>,
    /// Each PreScore plugin's status (empty when scoring did not run: one feasible
    /// node or none).
    pub pre_score: Vec<(&'static str, Status)>,
    /// Each feasible node's scores per plugin (empty when scoring did not run).
    pub scores: Vec<NodePluginScores>,
    /// The pod's constraints (hard, then soft) as PodTopologySpread counts them when
    /// the cycle starts: matching pods per eligible domain and skew (the same count as
    /// every spread report). Empty when the profile does not run the plugin.
    pub spread: PodSpread,
    /// PodTopologySpread's soft constraints as Score saw them: each constraint with its
    /// matching pods per domain of the scored nodes (empty when Score did not run).
    pub score_counts: Vec<(crate::spread::ConstraintRef, BTreeMap<String, i64>)>,
    /// The chosen node or the failure.
    pub result: ScheduleResult,
    /// What DefaultPreemption decided when no node fit, if it found a candidate.
    pub preemption: Option<super::Preemption>,
    /// The preemption's victims, most important first (empty without a preemption).
    pub victims: Vec<Victim>,
    /// The node the pod was nominated to when the cycle began: Filter ran on it alone
    /// first, and the cycle took it without looking further when it passed
    /// (`schedule_one.go` `evaluateNominatedNode`).
    pub nominated: Option<NodeId>,
}

/// The cycles of the explained pod worth showing: the last one, and the last earlier
/// one whose preemption evicted pods for it (the failed cycle behind the last).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Recorded {
    pub(super) preempting: Option<Explanation>,
    pub(super) last: Option<Explanation>,
}

impl Recorded {
    /// Records the pod's newest cycle.
    pub(super) fn push(&mut self, e: Explanation) {
        if let Some(previous) = self.last.take()
            && previous.preemption.is_some()
        {
            self.preempting = Some(previous);
        }
        self.last = Some(e);
    }
}

impl Explanation {
    pub(super) fn from_cycle(
        profile: &Profile,
        snapshot: &Snapshot,
        pod: &Pod,
        c: Cycle,
        spread: PodSpread,
        nominated: Option<NodeId>,
        nominations: &super::nominator::Nominator,
    ) -> Self {
        let runs_spread = [Point::Filter, Point::Score]
            .iter()
            .any(|&p| profile.enabled(p).iter().any(|(n, _)| n == pts::NAME));
        let rejected_at_pre_filter = c.diagnosis.pre_filter_msg.is_some();
        let filter = if rejected_at_pre_filter {
            Vec::new()
        } else {
            snapshot
                .nodes()
                .iter()
                .map(|n| {
                    let counted = nominator::counted(nominations, snapshot, pod, n.id);
                    // With the nominated pods added first; if that passes, Filter runs
                    // again without them, as the cycle did.
                    let with =
                        nominator::with_nominated(profile, nominations, &c.state, pod, n, snapshot)
                            .ok()
                            .flatten()
                            .map(|(state, node)| {
                                profile.run_filter_all(&state, pod, &node, snapshot)
                            })
                            .filter(|v| v.iter().any(|(_, s)| !s.is_success() && !s.is_skip()));
                    NodeFilterVerdicts {
                        node: n.id,
                        evaluated: c.feasible.contains(&n.id)
                            || c.statuses.iter().any(|(id, _)| *id == n.id),
                        verdicts: with
                            .unwrap_or_else(|| profile.run_filter_all(&c.state, pod, n, snapshot)),
                        nominated: counted,
                    }
                })
                .collect()
        };
        Self {
            pre_filter: c.pre_filter,
            filter,
            pre_score: c.pre_score,
            scores: c.scores.by_node(&c.feasible),
            spread: if runs_spread {
                spread
            } else {
                PodSpread::default()
            },
            score_counts: c
                .state
                .read::<PreScoreState>()
                .filter(|_| !c.state.is_score_skipped(pts::NAME))
                .map(|s| s.domain_counts(&c.feasible, snapshot))
                .unwrap_or_default(),
            victims: c
                .preemption
                .iter()
                .flat_map(|p| &p.victims)
                .filter_map(|id| snapshot.pod(*id))
                .map(|v| Victim {
                    namespace: snapshot.symbols().resolve(v.namespace).to_string(),
                    name: v.name.to_string(),
                    priority: v.priority,
                })
                .collect(),
            result: c.result,
            preemption: c.preemption,
            nominated: nominated.filter(|n| n.index() < snapshot.nodes().len()),
        }
    }
}
