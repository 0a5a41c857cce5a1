//! The JSON the app serves beyond the jobs' own reports: the domains grouped for the
//! grid, and a what-if's request and before/after spread.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use topospread_jobs::show::ShowReport;
use topospread_jobs::simulate::SimulationReport;

/// The cluster as domains: the `show` report, and its nodes grouped by the outermost
/// topology key (zones) for a grid that stays readable at thousands of nodes.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ClusterView {
    /// The `show` report: marked pods per domain of each topology key.
    pub show: ShowReport,
    /// The key the nodes are grouped by (the outermost), when there is one.
    pub group_key: Option<String>,
    /// The key whose count each node shows (the innermost).
    pub node_key: Option<String>,
    /// Groups in domain order; nodes lacking the group key last, as `(no KEY)`.
    pub groups: Vec<DomainGroup>,
}

/// One domain of the outermost key, with its nodes.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct DomainGroup {
    /// The domain (label value).
    pub domain: String,
    /// Marked pods in the domain.
    pub count: Option<u32>,
    /// Its nodes, by name.
    pub nodes: Vec<NodeCell>,
}

/// One node of a group.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct NodeCell {
    /// `metadata.name`.
    pub name: String,
    /// Marked pods in the node's domain of the innermost key.
    pub count: Option<u32>,
}

/// `POST /api/whatif`: what to change before simulating again.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct WhatIfRequest {
    /// Replica counts, as `--scale` (`deployment/web=5`).
    #[serde(default)]
    pub scale: Vec<String>,
    /// Nodes drained, as `--drain`.
    #[serde(default)]
    pub drain: Vec<String>,
    /// Nodes lost by label, as `--lose KEY=VALUE`.
    #[serde(default)]
    pub lose: Vec<String>,
    /// Topology spread constraints of workload templates changed.
    #[serde(default)]
    pub constraints: Vec<ConstraintChange>,
}

/// One constraint of a workload's pod template, changed.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct ConstraintChange {
    /// `KIND/NAME` or `KIND/NAMESPACE/NAME` (`deployment/web`).
    pub workload: String,
    /// Which of `topologySpreadConstraints` (0 = the first).
    #[serde(default)]
    pub index: usize,
    /// The new `maxSkew`.
    pub max_skew: Option<i32>,
    /// The new `whenUnsatisfiable`.
    pub when_unsatisfiable: Option<String>,
}

/// One constraint's spread after scheduling.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ConstraintSpread {
    /// The topology key.
    pub topology_key: String,
    /// maxSkew.
    pub max_skew: i32,
    /// `DoNotSchedule` or `ScheduleAnyway`.
    pub when_unsatisfiable: String,
    /// Matching pods per domain.
    pub counts: BTreeMap<String, u32>,
    /// The skew PodTopologySpread measures.
    pub skew: u32,
}

/// One workload's pods and spread after scheduling.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct WorkloadSpread {
    /// `kind/namespace/name`.
    pub workload: String,
    /// Pods it has.
    pub pods: usize,
    /// Of them, bound.
    pub scheduled: usize,
    /// Of them, pending.
    pub pending: usize,
    /// Its constraints.
    pub constraints: Vec<ConstraintSpread>,
}

/// A simulation's outcome as the what-if compares it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SpreadView {
    /// Pods scheduled.
    pub scheduled: usize,
    /// Pods left pending.
    pub pending: usize,
    /// Per workload.
    pub workloads: Vec<WorkloadSpread>,
}

impl SpreadView {
    /// The spread a simulation report leaves.
    pub fn of(report: &SimulationReport) -> Self {
        Self {
            scheduled: report.scheduled,
            pending: report.pending,
            workloads: report
                .workloads
                .iter()
                .map(|w| WorkloadSpread {
                    workload: format!("{}/{}/{}", w.kind.to_lowercase(), w.namespace, w.name),
                    pods: w.pods,
                    scheduled: w.scheduled,
                    pending: w.pending,
                    constraints: w
                        .constraints
                        .iter()
                        .map(|c| ConstraintSpread {
                            topology_key: c.topology_key.clone(),
                            max_skew: c.max_skew,
                            when_unsatisfiable: c.when_unsatisfiable.clone(),
                            counts: c.after.clone(),
                            skew: c.skew_after,
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// `POST /api/whatif`'s answer: the cluster as loaded and after the change, side by side.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct WhatIfView {
    /// The simulation of the cluster as loaded.
    pub before: SpreadView,
    /// The simulation after the change.
    pub after: SpreadView,
    /// The changed simulation's whole report (drained nodes, pending pods and reasons).
    pub report: SimulationReport,
}

/// `GET /api/rebalance/moves`: a rebalancing plan's moves between the domains of one
/// topology key, with the arrows `rebalance -o html` draws for them.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct MovesView {
    /// The topology key whose domains the arrows join.
    pub topology_key: String,
    /// Every move of the plan, in order.
    pub moves: Vec<DomainMove>,
    /// The arrows: one `<svg>` element, its strings escaped.
    pub svg: String,
}

/// One move of a plan, between domains.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct DomainMove {
    /// `namespace/name` of the pod evicted.
    pub pod: String,
    /// The domain it is evicted from.
    pub from: String,
    /// The domain its replacement lands in.
    pub to: String,
}

/// `GET /api/capacity`: the capacity plan for the templates `ui --node-template` named,
/// with the pictures `capacity -o html` draws.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct CapacityView {
    /// The `CapacityReport`, as `capacity -o json` writes it.
    pub report: topospread_jobs::capacity::CapacityReport,
    /// The nodes added per zone, then each workload's spread per constraint after the
    /// verified run.
    pub figures: Vec<CapacityFigureView>,
}

/// One picture of the plan.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct CapacityFigureView {
    /// What it is of: `nodes added per zone`, or the workload.
    pub title: String,
    /// The caption: the constraint, its minimum and maxSkew band, its skew.
    pub caption: String,
    /// The bars as one `<svg>` element, its strings escaped.
    pub svg: String,
}
