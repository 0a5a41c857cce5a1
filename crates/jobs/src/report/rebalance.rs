//! A rebalance plan and a scale-down plan as their reports write them: moves with their
//! reasons rendered, the constraints left unresolved named by their labels.

use super::spread::{WorkloadSpread, workloads};
use schemars::JsonSchema;
use serde::Serialize;
use topospread_planning::rebalance as planning;

/// How far the cluster is from every constraint holding, compared lexicographically:
/// hard (DoNotSchedule) excess first, then soft (ScheduleAnyway). Excess of a group is
/// the sum over its domains of how far each count is above `global minimum + maxSkew`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct Violation {
    /// Total DoNotSchedule excess skew.
    pub hard: i64,
    /// Total ScheduleAnyway excess skew.
    pub soft: i64,
}

impl From<planning::Violation> for Violation {
    fn from(v: planning::Violation) -> Self {
        Self {
            hard: v.hard,
            soft: v.soft,
        }
    }
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct Move {
    /// The pod's namespace.
    pub namespace: String,
    /// The evicted pod.
    pub pod: String,
    /// The node it is evicted from.
    pub from: String,
    /// Where the scheduler places its replacement.
    pub to: String,
    /// Why the plan makes the move. Reports render it (`-o json` as the same string the
    /// text report prints: `zone maxSkew=1 DoNotSchedule app=web`, `make room for
    /// NAMESPACE/POD`...).
    pub reason: String,
}

impl From<&planning::Move> for Move {
    fn from(m: &planning::Move) -> Self {
        Self {
            namespace: m.namespace.clone(),
            pod: m.pod.clone(),
            from: m.from.clone(),
            to: m.to.clone(),
            reason: m.reason.to_string(),
        }
    }
}

/// A constraint the plan leaves violated, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct Unresolved {
    /// `namespace/kind/name` of the workloads declaring it.
    pub workload: String,
    /// The constraint.
    pub constraint: String,
    /// Why no move repairs it.
    pub why: String,
}

impl From<&planning::Unresolved> for Unresolved {
    fn from(u: &planning::Unresolved) -> Self {
        Self {
            workload: u.workload.clone(),
            constraint: u.constraint.to_string(),
            why: u.why.clone(),
        }
    }
}

/// A plan and what it leads to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct Plan {
    /// The strategy that made it.
    pub strategy: String,
    /// Moves in order (for the descheduler strategy: every eviction and where the
    /// replacement landed, round by round).
    pub moves: Vec<Move>,
    /// What is still violated, and why.
    pub unresolved: Vec<Unresolved>,
    /// Per workload in scope, before.
    pub before: Vec<WorkloadSpread>,
    /// Per workload in scope, after.
    pub after: Vec<WorkloadSpread>,
    /// The measure before.
    pub violation_before: Violation,
    /// The measure after.
    pub violation_after: Violation,
    /// In-scope DoNotSchedule constraints still above maxSkew at the end.
    pub final_violations: usize,
    /// Evict-and-reschedule rounds run (1 per move for the greedy strategy).
    pub rounds: usize,
    /// Replacements left Pending at the end (descheduler strategy).
    pub pending: usize,
}

impl From<&planning::Plan> for Plan {
    fn from(p: &planning::Plan) -> Self {
        Self {
            strategy: p.strategy.name().to_string(),
            moves: p.moves.iter().map(Move::from).collect(),
            unresolved: p.unresolved.iter().map(Unresolved::from).collect(),
            before: workloads(&p.before),
            after: workloads(&p.after),
            violation_before: p.violation_before.into(),
            violation_after: p.violation_after.into(),
            final_violations: p.final_violations,
            rounds: p.rounds,
            pending: p.pending,
        }
    }
}

/// One pod's deletion cost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct DeletionCost {
    /// The namespace.
    pub namespace: String,
    /// The pod.
    pub pod: String,
    /// Its node.
    pub node: String,
    /// The annotation's value: negative for pods to remove (first removed lowest), 0
    /// for pods to keep.
    pub cost: i64,
    /// Whether the scale-down removes it.
    pub delete: bool,
}

impl From<&planning::DeletionCost> for DeletionCost {
    fn from(d: &planning::DeletionCost) -> Self {
        Self {
            namespace: d.namespace.clone(),
            pod: d.pod.clone(),
            node: d.node.clone(),
            cost: d.cost,
            delete: d.delete,
        }
    }
}

/// Which pods go, and the spread before and after.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct ScalePlan {
    /// `namespace/name` of the controller.
    pub workload: String,
    /// Bound pods now.
    pub from: usize,
    /// Replicas asked for.
    pub to: usize,
    /// Every pod of the controller, removed ones first in removal order.
    pub pods: Vec<DeletionCost>,
    /// The measure over every constraint after removal.
    pub violation_after: Violation,
    /// The controller's constraints now.
    pub before: Vec<WorkloadSpread>,
    /// After the removal.
    pub after: Vec<WorkloadSpread>,
}

impl From<&planning::ScalePlan> for ScalePlan {
    fn from(p: &planning::ScalePlan) -> Self {
        Self {
            workload: p.workload.clone(),
            from: p.from,
            to: p.to,
            pods: p.pods.iter().map(DeletionCost::from).collect(),
            violation_after: p.violation_after.into(),
            before: workloads(&p.before),
            after: workloads(&p.after),
        }
    }
}
