//! A cycle with everything recorded, for people: `topospread explain`.

use super::{Cycle, ScheduleResult};
use crate::api::Pod;
use crate::framework::{NodePluginScores, Profile, Status};
use crate::plugins::podtopologyspread::{self as pts, PreScoreState};
use crate::plugins::registry::Point;
use crate::snapshot::{NodeId, Snapshot};
use crate::spread::PodSpread;
use std::collections::BTreeMap;

/// Every Filter plugin's verdict on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeFilterVerdicts {
    /// The node.
    pub node: NodeId,
    /// Whether the cycle itself ran Filter on this node (it stops once enough
    /// feasible nodes are found, and skips nodes a PreFilterResult excludes).
    pub evaluated: bool,
    /// Per Filter plugin in profile order (Skip where PreFilter switched it off).
    pub verdicts: Vec<(&'static str, Status)>,
}

/// One scheduling cycle, recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    pub score_counts: Vec<(String, BTreeMap<String, i64>)>,
    /// The chosen node or the failure.
    pub result: ScheduleResult,
    /// What DefaultPreemption decided when no node fit, if it found a candidate.
    pub preemption: Option<super::Preemption>,
}

impl Explanation {
    pub(super) fn from_cycle(
        profile: &Profile,
        snapshot: &Snapshot,
        pod: &Pod,
        c: Cycle,
        spread: PodSpread,
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
                .map(|n| NodeFilterVerdicts {
                    node: n.id,
                    evaluated: c.feasible.contains(&n.id)
                        || c.statuses.iter().any(|(id, _)| *id == n.id),
                    verdicts: profile.run_filter_all(&c.state, pod, n, snapshot),
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
            result: c.result,
            preemption: c.preemption,
        }
    }
}
