//! A constraint's spread as the reports write it: its label, key, maxSkew and
//! whenUnsatisfiable beside the counts per domain.

use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use topospread_planning::rebalance as planning;

/// One constraint's counts per domain and skew.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct ConstraintSpread {
    /// `zone maxSkew=1 DoNotSchedule app=web`.
    pub constraint: String,
    /// The topology key.
    pub topology_key: String,
    /// maxSkew.
    pub max_skew: i32,
    /// DoNotSchedule or ScheduleAnyway.
    pub when_unsatisfiable: String,
    /// Matching pods per eligible domain.
    pub counts: BTreeMap<String, i64>,
    /// Largest count minus the global minimum (0 when fewer than minDomains domains).
    pub skew: i64,
    /// How far the counts are above `minimum + maxSkew`, summed over domains.
    pub excess: i64,
}

impl From<&topospread::spread::ConstraintSpread> for ConstraintSpread {
    fn from(c: &topospread::spread::ConstraintSpread) -> Self {
        Self {
            constraint: c.constraint.to_string(),
            topology_key: c.constraint.topology_key.clone(),
            max_skew: c.constraint.max_skew,
            when_unsatisfiable: c.constraint.when_unsatisfiable.as_str().to_string(),
            counts: c.counts.clone(),
            skew: c.skew,
            excess: c.excess,
        }
    }
}

/// A workload's constraints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct WorkloadSpread {
    /// The namespace.
    pub namespace: String,
    /// `replicaset/web-7d9c`, `statefulset/db`, `pod/bare`.
    pub workload: String,
    /// Its constraints.
    pub constraints: Vec<ConstraintSpread>,
}

impl From<&planning::WorkloadSpread> for WorkloadSpread {
    fn from(w: &planning::WorkloadSpread) -> Self {
        Self {
            namespace: w.namespace.clone(),
            workload: w.workload.clone(),
            constraints: w.constraints.iter().map(ConstraintSpread::from).collect(),
        }
    }
}

/// Every workload's constraints, converted.
pub(crate) fn workloads(ws: &[planning::WorkloadSpread]) -> Vec<WorkloadSpread> {
    ws.iter().map(WorkloadSpread::from).collect()
}
