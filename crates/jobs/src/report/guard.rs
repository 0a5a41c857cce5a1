//! The guard's plan as `guard -o json` writes it: per ReplicaSet the costs to write and
//! each constraint's predicted skews, the constraint named by its label.

use schemars::JsonSchema;
use serde::Serialize;
use topospread_planning::guard as planning;

/// One pod's new cost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct CostPatch {
    /// The namespace.
    pub namespace: String,
    /// The pod.
    pub pod: String,
    /// The node it runs on.
    pub node: String,
    /// The cost annotation now, if any.
    pub from: Option<String>,
    /// The cost to write (lower is removed first).
    pub to: i32,
    /// The pod's `metadata.resourceVersion` the plan was made from, if known: the
    /// patch carries it, so the API server refuses it (409 Conflict) when the pod
    /// changed since, and the next pass plans again from the pod as it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
}

impl From<&planning::CostPatch> for CostPatch {
    fn from(p: &planning::CostPatch) -> Self {
        Self {
            namespace: p.namespace.clone(),
            pod: p.pod.clone(),
            node: p.node.clone(),
            from: p.from.clone(),
            to: p.to,
            resource_version: p.resource_version.clone(),
        }
    }
}

/// One constraint of a ReplicaSet: its skew now and after scale-ins, as the
/// ReplicaSet controller's order would remove pods.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct ScaleInSkew {
    /// `zone maxSkew=1 DoNotSchedule app=web`.
    pub constraint: String,
    /// The topology key.
    pub topology_key: String,
    /// maxSkew.
    pub max_skew: i32,
    /// DoNotSchedule or ScheduleAnyway.
    pub when_unsatisfiable: String,
    /// The skew now.
    pub skew_now: i64,
    /// After a scale-in by one, with the guard's costs (`None` under two pods).
    pub after_one: Option<i64>,
    /// After a scale-in by half the pods, with the guard's costs.
    pub after_half: Option<i64>,
    /// After a scale-in by one with the costs as they are now.
    pub unguarded_after_one: Option<i64>,
    /// After a scale-in by half with the costs as they are now.
    pub unguarded_after_half: Option<i64>,
}

impl From<&planning::ScaleInSkew> for ScaleInSkew {
    fn from(c: &planning::ScaleInSkew) -> Self {
        Self {
            constraint: c.constraint.to_string(),
            topology_key: c.constraint.topology_key.clone(),
            max_skew: c.constraint.max_skew,
            when_unsatisfiable: c.constraint.when_unsatisfiable.as_str().to_string(),
            skew_now: c.skew_now,
            after_one: c.after_one,
            after_half: c.after_half,
            unguarded_after_one: c.unguarded_after_one,
            unguarded_after_half: c.unguarded_after_half,
        }
    }
}

/// The guard's answer for one ReplicaSet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct ReplicaSetGuard {
    /// The namespace.
    pub namespace: String,
    /// The ReplicaSet.
    pub name: String,
    /// Its active pods (not being deleted).
    pub pods: usize,
    /// How many pods "half" removes (`pods / 2`).
    pub half: usize,
    /// The costs to write, in the order the controller would then remove the pods.
    pub patches: Vec<CostPatch>,
    /// Pods whose cost a user set and the guard leaves alone.
    pub user_costs: Vec<String>,
    /// Each of its constraints, predicted.
    pub constraints: Vec<ScaleInSkew>,
}

impl From<&planning::ReplicaSetGuard> for ReplicaSetGuard {
    fn from(r: &planning::ReplicaSetGuard) -> Self {
        Self {
            namespace: r.namespace.clone(),
            name: r.name.clone(),
            pods: r.pods,
            half: r.half,
            patches: r.patches.iter().map(CostPatch::from).collect(),
            user_costs: r.user_costs.clone(),
            constraints: r.constraints.iter().map(ScaleInSkew::from).collect(),
        }
    }
}

/// Every ReplicaSet with spread constraints, and the pods the guard skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct GuardPlan {
    /// Per ReplicaSet, by namespace and name.
    pub replica_sets: Vec<ReplicaSetGuard>,
    /// Pods skipped and why (no owner, being deleted, a cost that is not an integer).
    pub notes: Vec<String>,
}

impl GuardPlan {
    /// Every patch, ReplicaSet by ReplicaSet.
    pub fn patches(&self) -> impl Iterator<Item = &CostPatch> {
        self.replica_sets.iter().flat_map(|r| &r.patches)
    }
}

impl From<&planning::GuardPlan> for GuardPlan {
    fn from(p: &planning::GuardPlan) -> Self {
        Self {
            replica_sets: p.replica_sets.iter().map(ReplicaSetGuard::from).collect(),
            notes: p.notes.clone(),
        }
    }
}
