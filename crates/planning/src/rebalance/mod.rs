//! Rebalancing: plans that restore topology spread after scale-downs and outages.
//!
//! Topology spread is enforced only when a pod is scheduled. [`plan`] finds an ordered
//! list of moves (evict a pod from node A; its replacement, scheduled by the real
//! scheduler on the snapshot without it, lands on B) that lowers a global violation
//! measure ([`Violation`]: DoNotSchedule excess skew over every counting group, then
//! ScheduleAnyway excess) strictly at every step, so a plan always ends and the same
//! input gives the same plan. [`Strategy::Descheduler`] instead replays the
//! descheduler's RemovePodsViolatingTopologySpreadConstraint as its code does, in
//! evict-and-reschedule rounds, for comparison. [`plan_scale_down`] answers which pods a scale-down should remove to
//! keep the spread, with the `controller.kubernetes.io/pod-deletion-cost` values that
//! make the ReplicaSet controller remove exactly those.

mod candidates;
mod descheduler;
mod evictable;
mod greedy;
pub(crate) mod measure;
mod scale;
mod trial;

pub use evictable::{NotEvictable, descheduler_eviction_blocker, eviction_blocker};
pub use measure::Violation;
pub use scale::{DELETION_COST_ANNOTATION, DeletionCost, ScalePlan, plan_scale_down};
pub use topospread::spread::{ConstraintRef, ConstraintSpread};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use std::collections::BTreeMap;
use std::fmt;
use topospread::Features;
use topospread::config::SchedulerConfig;
use topospread::snapshot::Snapshot;

/// How the plan is made.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Strategy {
    /// Greedy moves checked with the scheduler, each lowering the global measure.
    #[default]
    Topospread,
    /// The descheduler's RemovePodsViolatingTopologySpreadConstraint, in rounds.
    Descheduler,
}

impl Strategy {
    /// The strategy's name as `--strategy` takes it and the reports print it.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Topospread => "topospread",
            Strategy::Descheduler => "descheduler",
        }
    }
}

/// What to plan for.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RebalanceOptions {
    /// Only pods of this namespace move (and only their workloads are reported).
    pub namespace: Option<String>,
    /// Only pods this selector matches move.
    pub selector: Option<LabelSelector>,
    /// At most this many moves (evictions for the descheduler strategy).
    pub max_moves: usize,
    /// The strategy.
    pub strategy: Strategy,
    /// Eviction blockers read off the manifests (`namespace`, `name`) -> why; see
    /// [`eviction_blocker`] (and [`descheduler_eviction_blocker`] for the descheduler
    /// strategy). Pods without an entry are judged on what the snapshot holds.
    pub blockers: BTreeMap<(String, String), NotEvictable>,
    /// Descheduler strategy: balance ScheduleAnyway constraints too (its `constraints`
    /// arg listing both), not only DoNotSchedule.
    pub descheduler_soft: bool,
    /// Descheduler strategy: evict-and-reschedule rounds before giving up.
    pub max_rounds: usize,
    /// Descheduler strategy: its `topologyBalanceNodeFit` arg (default true): a pod is
    /// evicted only if it fits a node of a domain below the average.
    pub topology_balance_node_fit: bool,
    /// Descheduler strategy: the default evictor's `nodeFit` arg (default false): a pod
    /// is evicted only if it fits some other node.
    pub descheduler_node_fit: bool,
    /// Descheduler strategy: its `namespaces.exclude` arg.
    pub exclude_namespaces: Vec<String>,
    /// Seeds the scheduler's tie-breaking among equally scored nodes.
    pub seed: u64,
}

impl Default for RebalanceOptions {
    fn default() -> Self {
        Self {
            namespace: None,
            selector: None,
            max_moves: 1000,
            strategy: Strategy::Topospread,
            blockers: BTreeMap::new(),
            descheduler_soft: false,
            max_rounds: 10,
            topology_balance_node_fit: true,
            descheduler_node_fit: false,
            exclude_namespaces: Vec::new(),
            seed: 0,
        }
    }
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// Why the plan makes the move; reports render it with [`fmt::Display`]
    /// (`zone maxSkew=1 DoNotSchedule app=web`, `make room for NAMESPACE/POD`...).
    pub reason: MoveReason,
}

/// Why a plan evicts a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MoveReason {
    /// The move lowers this constraint's excess the most.
    Repairs(ConstraintRef),
    /// The move frees room on a node for another pod's move (`NAMESPACE/POD`, when
    /// known).
    MakeRoom {
        /// The pod the room is made for.
        for_pod: Option<String>,
    },
    /// The move lowers the total excess skew though no one constraint's drops.
    LowersExcess,
    /// One of two pods evicted in one step (a swap, or a pair freeing a node).
    Together {
        /// Why this pod moves.
        reason: Box<MoveReason>,
        /// `NAMESPACE/POD` of the pod evicted with it.
        with: String,
    },
    /// The descheduler's RemovePodsViolatingTopologySpreadConstraint evicted the pod
    /// to balance this constraint.
    Balances {
        /// The constraint being balanced.
        constraint: ConstraintRef,
        /// The evict-and-reschedule round (from 1).
        round: usize,
        /// The replacement was scheduled back on the node it was evicted from.
        back_on_same_node: bool,
    },
}

impl fmt::Display for MoveReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveReason::Repairs(c) => write!(f, "{c}"),
            MoveReason::MakeRoom { for_pod: None } => f.write_str("make room"),
            MoveReason::MakeRoom { for_pod: Some(p) } => write!(f, "make room for {p}"),
            MoveReason::LowersExcess => f.write_str("lowers the total excess skew"),
            MoveReason::Together { reason, with } => {
                write!(f, "{reason} (evicted together with {with})")
            }
            MoveReason::Balances {
                constraint,
                round,
                back_on_same_node,
            } => {
                write!(f, "{constraint} (round {round})")?;
                if *back_on_same_node {
                    f.write_str("; the replacement lands back on the same node")?;
                }
                Ok(())
            }
        }
    }
}

/// A constraint the plan leaves violated, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unresolved {
    /// `namespace/kind/name` of the workloads declaring it.
    pub workload: String,
    /// The constraint.
    pub constraint: ConstraintRef,
    /// Why no move repairs it.
    pub why: String,
}

/// A workload's constraints.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkloadSpread {
    /// The namespace.
    pub namespace: String,
    /// `replicaset/web-7d9c`, `statefulset/db`, `pod/bare`.
    pub workload: String,
    /// Its constraints.
    pub constraints: Vec<ConstraintSpread>,
}

/// A plan and what it leads to.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Plan {
    /// The strategy that made it.
    pub strategy: Strategy,
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
    /// The cluster after the plan.
    pub snapshot: Snapshot,
}

/// Why no plan could be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum RebalanceError {
    /// `--namespace` / `-l` select no bound pod.
    #[error("no bound pod matches {what}")]
    NothingSelected {
        /// The namespace and selector, as given.
        what: String,
    },
    /// The selector does not compile.
    #[error("label selector: {0}")]
    Selector(String),
    /// The scheduler configuration cannot be built.
    #[error("scheduler configuration: {0}")]
    Config(String),
    /// `--scale` names no workload with bound pods.
    #[error("{kind}/{name} in namespace {namespace}: no such workload with bound pods")]
    UnknownWorkload {
        /// The kind as given.
        kind: String,
        /// The name.
        name: String,
        /// The namespace.
        namespace: String,
    },
    /// `--scale` asks for more replicas than there are.
    #[error("{workload}: scale to {to} is not a scale-down (it has {has} bound pods)")]
    NotAScaleDown {
        /// The workload.
        workload: String,
        /// Replicas asked for.
        to: usize,
        /// Bound pods now.
        has: usize,
    },
    /// A replacement pod could not be added back.
    #[error(transparent)]
    Snapshot(#[from] topospread::snapshot::SnapshotError),
}

impl From<topospread::spread::SpreadError> for RebalanceError {
    fn from(e: topospread::spread::SpreadError) -> Self {
        match e {
            topospread::spread::SpreadError::Config(message) => RebalanceError::Config(message),
            other => RebalanceError::Config(other.to_string()),
        }
    }
}

/// Plans a rebalance of `snapshot`'s bound pods with the scheduler `config` builds.
pub fn plan(
    snapshot: &Snapshot,
    config: &SchedulerConfig,
    features: Features,
    options: &RebalanceOptions,
) -> Result<Plan, RebalanceError> {
    plan_owned(snapshot.clone(), config, features, options)
}

/// [`plan`], trying the moves on `snapshot` itself: a caller done with it spares a
/// copy of the whole cluster.
pub fn plan_owned(
    snapshot: Snapshot,
    config: &SchedulerConfig,
    features: Features,
    options: &RebalanceOptions,
) -> Result<Plan, RebalanceError> {
    let mut ctx = trial::Context::new(snapshot, config, features, options)?;
    match options.strategy {
        Strategy::Topospread => greedy::run(&mut ctx, options),
        Strategy::Descheduler => descheduler::run(&mut ctx, options),
    }
}

#[cfg(test)]
mod tests;
