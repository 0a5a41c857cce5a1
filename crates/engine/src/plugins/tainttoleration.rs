//! TaintToleration: Filter keeps pods off nodes with untolerated `NoSchedule`/`NoExecute`
//! taints; Score prefers nodes with fewer untolerated `PreferNoSchedule` taints.

use super::helper::default_normalize_score;
use crate::api::{Pod, TaintEffect, Toleration, find_untolerated_taint};
use crate::features::Features;
use crate::framework::{
    Code, CycleState, FilterPlugin, NodeScore, Plugin, PreScorePlugin, ScorePlugin, Status,
};
use crate::snapshot::{NodeId, NodeInfo, Snapshot};

/// The plugin's registry name.
pub const NAME: &str = "TaintToleration";

/// The TaintToleration plugin.
#[derive(Clone, Debug)]
pub struct TaintToleration {
    comparison_ops: bool,
}

impl TaintToleration {
    /// Builds the plugin; the Gt/Lt toleration gate is resolved here.
    pub fn new(features: Features) -> Self {
        Self {
            comparison_ops: features.taint_toleration_comparison_operators,
        }
    }
}

/// PreScore state: the pod's tolerations that can tolerate `PreferNoSchedule` taints.
#[derive(Clone, Debug, Default)]
pub struct PreScoreState {
    tolerations: Vec<Toleration>,
}

impl Plugin for TaintToleration {
    fn name(&self) -> &'static str {
        NAME
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
            Some(t) => Status::new(
                Code::UnschedulableAndUnresolvable,
                format!("node(s) had untolerated taint {{{}: {}}}", t.key, t.value),
            ),
        }
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
        state.write(PreScoreState { tolerations });
        Status::success()
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
        let s = state
            .read::<PreScoreState>()
            .ok_or_else(|| Status::error("TaintToleration: PreScore state not found"))?;
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
        Ok(i64::try_from(count).unwrap_or(i64::MAX))
    }

    fn normalize_score(&self, _: &CycleState, _: &Pod, scores: &mut [NodeScore]) -> Status {
        default_normalize_score(true, scores);
        Status::success()
    }
}
