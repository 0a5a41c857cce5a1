//! The guard: `controller.kubernetes.io/pod-deletion-cost` values that make the
//! ReplicaSet controller's own scale-down remove pods from the most crowded topology
//! domains first, so that a scale-in by any count keeps spread wherever it can.
//!
//! Upstream scales in without regard to spread (kubernetes issues 124149 and 124306;
//! KEP-2185 declined it), but `ActivePodsWithRanks.Less` in
//! `pkg/controller/controller_utils.go` ranks pods of the same state by their deletion
//! cost. The planner walks the removal that keeps the ReplicaSet's constraints best,
//! one pod at a time, and writes costs so [`deletion_order_with`] (topospread's model of
//! that order) follows it. What it predicts always comes from that model, never from
//! the walk itself.
//!
//! Choices: several constraints are ranked together, DoNotSchedule excess first, then
//! ScheduleAnyway excess (the rebalance [`Violation`]), then evenness (the sum of
//! squared domain counts), then the node holding most of the ReplicaSet's pods (a
//! hostname spread and the controller's own co-location rank), then the latest name.
//! A cost a user set by hand stays as it is and the guard orders only its own pods
//! around it. Co-location ranks count the ReplicaSet's own pods (upstream counts every
//! ReplicaSet of the Deployment); they only break ties between equal costs, which the
//! guard never writes twice within a ReplicaSet.

mod tally;

use crate::controller::{
    DELETION_COST_ANNOTATION, DeletionCandidate, TimeScale, deletion_order_with,
    parse_deletion_cost,
};
use crate::rebalance::Violation;
use crate::rebalance::measure::{Groups, WorkloadRef};
use std::collections::BTreeMap;
use tally::Tally;
use topospread::Features;
use topospread::config::SchedulerConfig;
use topospread::plugins::podtopologyspread::CountingGroup;
use topospread::snapshot::{PodId, Snapshot};
use topospread::spread::{ConstraintRef, SpreadPlugins, excess};

/// The annotation that marks a cost as the guard's: its value is the cost the guard
/// last wrote, so a cost that differs from it was set by someone else.
pub const MANAGED_ANNOTATION: &str = "topospread.io/deletion-cost-managed";

/// What the guard reads of one pod besides its place in the snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardPod {
    /// Its namespace.
    pub namespace: String,
    /// Kind and name of its controller (the owner reference with `controller: true`).
    pub controller: Option<(String, String)>,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// What the ReplicaSet controller's order reads of it (name, node, phase, ...).
    pub candidate: DeletionCandidate,
    /// The `controller.kubernetes.io/pod-deletion-cost` annotation, as written.
    pub cost: Option<String>,
    /// The [`MANAGED_ANNOTATION`], as written.
    pub managed: Option<String>,
    /// `metadata.resourceVersion` as the plan read it: the patch's precondition.
    pub resource_version: Option<String>,
}

impl GuardPod {
    /// What the guard reads of a pod: its controller reference, whether it is being
    /// deleted, the deletion order's fields and the two annotations.
    pub fn of_pod(p: &k8s_openapi::api::core::v1::Pod) -> Self {
        let annotation = |key: &str| {
            p.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(key))
                .cloned()
        };
        Self {
            namespace: p
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| topospread::convert::DEFAULT_NAMESPACE.to_string()),
            controller: p
                .metadata
                .owner_references
                .iter()
                .flatten()
                .find(|o| o.controller == Some(true))
                .map(|o| (o.kind.clone(), o.name.clone())),
            deleting: p.metadata.deletion_timestamp.is_some(),
            candidate: DeletionCandidate::of_pod(p),
            cost: annotation(DELETION_COST_ANNOTATION),
            managed: annotation(MANAGED_ANNOTATION),
            resource_version: p
                .metadata
                .resource_version
                .clone()
                .filter(|v| !v.is_empty()),
        }
    }
}

/// How the guard treats costs it did not write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GuardOptions {
    /// Replace costs a user set by hand too (they are left alone otherwise).
    pub override_user_costs: bool,
    /// How the controller's order, the guard's judge of a scale-in, compares ready and
    /// creation times (LogarithmicScaleDown and the controller's clock).
    pub times: TimeScale,
}

/// One pod's new cost.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    pub resource_version: Option<String>,
}

impl CostPatch {
    /// The JSON merge patch that writes the cost and marks it as the guard's, with the
    /// planned-from `resourceVersion` as its precondition when known (a merge patch
    /// carrying `metadata.resourceVersion` is refused with 409 Conflict unless it is
    /// the object's current one, as the API server's optimistic concurrency does).
    pub fn merge_patch(&self) -> serde_json::Value {
        let value = self.to.to_string();
        let mut patch = serde_json::json!({
            "metadata": {
                "annotations": {
                    DELETION_COST_ANNOTATION: value,
                    MANAGED_ANNOTATION: value,
                }
            }
        });
        if let Some(rv) = &self.resource_version {
            patch["metadata"]["resourceVersion"] = serde_json::Value::String(rv.clone());
        }
        patch
    }
}

/// One constraint of a ReplicaSet: its skew now and after scale-ins, as the
/// ReplicaSet controller's order would remove pods.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScaleInSkew {
    /// The constraint, as reports name it (`zone maxSkew=1 DoNotSchedule app=web`).
    pub constraint: ConstraintRef,
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

/// The guard's answer for one ReplicaSet.
#[derive(Clone, Debug, PartialEq, Eq)]
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

impl ReplicaSetGuard {
    /// Whether a DoNotSchedule constraint ends above maxSkew after the predicted
    /// scale-in by one or by half, with the guard's costs.
    pub fn violated_after_scale_in(&self) -> bool {
        self.constraints.iter().any(|c| {
            c.constraint.is_hard()
                && [c.after_one, c.after_half]
                    .into_iter()
                    .flatten()
                    .any(|s| s > i64::from(c.constraint.max_skew))
        })
    }
}

/// Every ReplicaSet with spread constraints, and the pods the guard skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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

/// Why the guard cannot plan.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum GuardError {
    /// The scheduler configuration cannot be built.
    #[error("scheduler configuration: {0}")]
    Config(String),
    /// A pod could not be put back into the working snapshot.
    #[error(transparent)]
    Snapshot(#[from] topospread::snapshot::SnapshotError),
}

impl From<topospread::spread::SpreadError> for GuardError {
    fn from(e: topospread::spread::SpreadError) -> Self {
        match e {
            topospread::spread::SpreadError::Config(message) => GuardError::Config(message),
            other => GuardError::Config(other.to_string()),
        }
    }
}

/// A pod's cost annotation as the guard reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cost {
    Absent,
    /// Written by the guard (the marker holds the same value).
    Managed(i32),
    /// Set by someone else.
    User(i32),
    /// Not an integer: the controller reads 0 (`GetDeletionCostFromPodAnnotations`
    /// fails and `ActivePodsWithRanks.Less` ignores the error).
    Invalid,
}

impl Cost {
    fn read(pod: &GuardPod) -> Self {
        let Some(raw) = pod.cost.as_deref() else {
            return Self::Absent;
        };
        match parse_deletion_cost(raw) {
            None => Self::Invalid,
            Some(c) if pod.managed.as_deref() == Some(raw) => Self::Managed(c),
            Some(c) => Self::User(c),
        }
    }

    /// The value the controller ranks by.
    fn value(self) -> i32 {
        match self {
            Self::Managed(c) | Self::User(c) => c,
            Self::Absent | Self::Invalid => 0,
        }
    }
}

/// One active pod of the ReplicaSet being planned.
struct Member<'a> {
    pod: &'a GuardPod,
    /// Its id in the working snapshot while bound there (removal and re-adding may
    /// change it).
    id: Option<PodId>,
    cost: Cost,
    /// The guard may write its cost.
    free: bool,
}

/// The measure of a ReplicaSet's constraints at one point of a scale-in.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Measure {
    violation: Violation,
    skews: Vec<i64>,
}

/// Plans the costs for every ReplicaSet in `pods` whose pods carry topology spread
/// constraints (their own or the profile's defaults), on `snapshot` (bound pods).
pub fn plan(
    snapshot: &Snapshot,
    config: &SchedulerConfig,
    features: Features,
    pods: &[GuardPod],
    options: GuardOptions,
) -> Result<GuardPlan, GuardError> {
    plan_with::<Tally>(snapshot, config, features, pods, options)
}

/// What the planner reads while one ReplicaSet's pods are removed one at a time:
/// [`Tally`] keeps each constraint's domain counts and moves them by one per removal;
/// the tests' reference recounts the snapshot after every trial removal.
trait Removals: Sized {
    /// Prepares for `members` (sorted by name) of one ReplicaSet.
    fn start(snapshot: &Snapshot, groups: &[&CountingGroup], members: &[Member]) -> Self;

    /// The order in which the guard wants its own (free, bound) pods removed: each
    /// time, among the pods of the state the controller removes first (phase, then
    /// readiness), the one whose removal leaves the best [`RemovalRank`], of equal pods
    /// the latest name. Only the latest-named such pod of each node is weighed.
    fn walk(
        &mut self,
        snapshot: &mut Snapshot,
        groups: &[&CountingGroup],
        members: &mut [Member],
    ) -> Result<Vec<usize>, GuardError>;

    /// The measure after each removal of `order` (member indices), in turn.
    fn scale_in(
        &mut self,
        snapshot: &mut Snapshot,
        groups: &[&CountingGroup],
        members: &mut [Member],
        order: &[usize],
    ) -> Result<Vec<Measure>, GuardError>;
}

/// [`plan`], with `R` measuring each ReplicaSet's removals.
fn plan_with<R: Removals>(
    snapshot: &Snapshot,
    config: &SchedulerConfig,
    features: Features,
    pods: &[GuardPod],
    options: GuardOptions,
) -> Result<GuardPlan, GuardError> {
    let mut snapshot = snapshot.clone();
    let plugins = SpreadPlugins::new(config, features, &mut snapshot)?;
    let groups = Groups::build(&snapshot, &plugins, |_| true);
    let mut out = GuardPlan::default();
    let mut sets: BTreeMap<(&str, &str), Vec<&GuardPod>> = BTreeMap::new();
    for pod in pods {
        let name = &pod.candidate.name;
        match &pod.controller {
            None => {
                let constrained = snapshot
                    .pod_id(&pod.namespace, name)
                    .and_then(|id| snapshot.pod(id))
                    .is_some_and(|p| !p.spread_constraints.is_empty());
                if pod.cost.is_some() || constrained {
                    out.notes.push(format!(
                        "pod {}/{name}: no owner, so no ReplicaSet scale-in removes it; skipped",
                        pod.namespace
                    ));
                }
            }
            Some((kind, rs)) if kind == "ReplicaSet" => {
                sets.entry((&pod.namespace, rs)).or_default().push(pod);
            }
            Some(_) => {}
        }
    }
    let mut too_small = 0usize;
    for ((namespace, name), members) in sets {
        let owner = WorkloadRef {
            namespace: namespace.to_string(),
            name: format!("replicaset/{name}"),
        };
        let rs_groups: Vec<&CountingGroup> = groups
            .list
            .iter()
            .filter(|g| g.owners.contains(&owner))
            .map(|g| &g.group)
            .collect();
        // Terminating pods are not counted by any group: a ReplicaSet whose pods are all
        // being deleted is still one the guard skips, when its pods carry constraints.
        let all_deleting_constrained = members.iter().all(|p| p.deleting)
            && members.iter().any(|p| {
                snapshot
                    .pod_id(namespace, &p.candidate.name)
                    .and_then(|id| snapshot.pod(id))
                    .is_some_and(|pod| !pod.spread_constraints.is_empty())
            });
        if rs_groups.is_empty() && !all_deleting_constrained {
            continue;
        }
        let mut active: Vec<Member> = Vec::new();
        for p in members {
            let name = &p.candidate.name;
            if p.deleting {
                out.notes
                    .push(format!("pod {namespace}/{name}: being deleted; skipped"));
                continue;
            }
            let cost = Cost::read(p);
            let id = snapshot
                .pod_id(namespace, name)
                .filter(|&id| snapshot.pod_node(id).is_some());
            if cost == Cost::Invalid {
                out.notes.push(format!(
                    "pod {namespace}/{name}: {DELETION_COST_ANNOTATION} {:?} is not an integer (the ReplicaSet controller reads 0); left alone",
                    p.cost.as_deref().unwrap_or_default()
                ));
            }
            let free = id.is_some()
                && match cost {
                    Cost::Absent | Cost::Managed(_) => true,
                    Cost::User(_) => options.override_user_costs,
                    Cost::Invalid => false,
                };
            active.push(Member {
                pod: p,
                id,
                cost,
                free,
            });
        }
        // A ReplicaSet of one pod cannot scale in and keep a pod: no order to plan.
        if active.len() < 2 {
            too_small += 1;
            continue;
        }
        let mut members = active;
        members.sort_by(|a, b| a.pod.candidate.name.cmp(&b.pod.candidate.name));
        out.replica_sets.push(plan_replica_set::<R>(
            &mut snapshot,
            &rs_groups,
            namespace,
            name,
            &mut members,
            options.times,
        )?);
    }
    if too_small > 0 {
        out.notes.push(format!(
            "{too_small} ReplicaSet(s) with spread constraints and fewer than 2 active pods skipped: a scale-in leaves no pod to spread"
        ));
    }
    Ok(out)
}

/// The costs and predictions for one ReplicaSet's `members` (sorted by name).
fn plan_replica_set<R: Removals>(
    snapshot: &mut Snapshot,
    groups: &[&CountingGroup],
    namespace: &str,
    name: &str,
    members: &mut [Member],
    times: TimeScale,
) -> Result<ReplicaSetGuard, GuardError> {
    let now = measure(snapshot, groups);
    let mut removals = R::start(snapshot, groups, members);
    let walk_order = removals.walk(snapshot, groups, members)?;
    let m = i32::try_from(walk_order.len()).unwrap_or(i32::MAX);
    let mut target: Vec<Option<i32>> = vec![None; members.len()];
    for (i, &k) in walk_order.iter().enumerate() {
        target[k] = Some(i32::try_from(i).unwrap_or(i32::MAX).saturating_sub(m));
    }
    let current: Vec<i32> = members.iter().map(|m| m.cost.value()).collect();
    let proposed: Vec<i32> = members
        .iter()
        .zip(&target)
        .map(|(m, t)| t.unwrap_or(m.cost.value()))
        .collect();
    let unguarded = scale_in(&mut removals, snapshot, groups, members, &current, times)?;
    let guarded = scale_in(&mut removals, snapshot, groups, members, &proposed, times)?;
    // Minimal churn: costs that already give every scale-in a measure as good as the
    // guard's are kept as they are.
    let already_good = unguarded
        .iter()
        .zip(&guarded)
        .all(|(u, g)| u.violation <= g.violation);
    let (after, costs) = if already_good {
        (&unguarded, &current)
    } else {
        (&guarded, &proposed)
    };
    let order = controller_order(members, costs, times);
    let mut patches = Vec::new();
    if !already_good {
        for &k in &order {
            let (member, Some(to)) = (&members[k], target[k]) else {
                continue;
            };
            if member.cost == Cost::Managed(to) {
                continue;
            }
            let node = member
                .id
                .and_then(|id| snapshot.pod_node(id))
                .map(|n| snapshot.node(n).node.name.to_string())
                .unwrap_or_default();
            patches.push(CostPatch {
                namespace: namespace.to_string(),
                pod: member.pod.candidate.name.clone(),
                node,
                from: member.pod.cost.clone(),
                to,
                resource_version: member.pod.resource_version.clone(),
            });
        }
    }
    let n = members.len();
    let half = n / 2;
    let at = |steps: &[Measure], k: usize, g: usize| -> Option<i64> {
        (k >= 1 && k < n).then(|| steps.get(k - 1).map(|s| s.skews[g]))?
    };
    let constraints = groups
        .iter()
        .enumerate()
        .map(|(g, group)| ScaleInSkew {
            constraint: ConstraintRef::of(group, snapshot),
            skew_now: now.skews[g],
            after_one: at(after, 1, g),
            after_half: at(after, half, g),
            unguarded_after_one: at(&unguarded, 1, g),
            unguarded_after_half: at(&unguarded, half, g),
        })
        .collect();
    let user_costs = members
        .iter()
        .filter(|m| matches!(m.cost, Cost::User(_)) && !m.free)
        .map(|m| m.pod.candidate.name.clone())
        .collect();
    Ok(ReplicaSetGuard {
        namespace: namespace.to_string(),
        name: name.to_string(),
        pods: n,
        half,
        patches,
        user_costs,
        constraints,
    })
}

/// The measure after each scale-in by 1..n-1 pods in the controller's order with
/// `costs`.
fn scale_in<R: Removals>(
    removals: &mut R,
    snapshot: &mut Snapshot,
    groups: &[&CountingGroup],
    members: &mut [Member],
    costs: &[i32],
    times: TimeScale,
) -> Result<Vec<Measure>, GuardError> {
    let mut order = controller_order(members, costs, times);
    order.truncate(members.len().saturating_sub(1));
    removals.scale_in(snapshot, groups, members, &order)
}

/// The members' indices in the ReplicaSet controller's order with `costs`.
fn controller_order(members: &[Member], costs: &[i32], times: TimeScale) -> Vec<usize> {
    let candidates: Vec<DeletionCandidate> = members
        .iter()
        .zip(costs)
        .map(|(m, &c)| DeletionCandidate {
            deletion_cost: c,
            ..m.pod.candidate.clone()
        })
        .collect();
    let related: Vec<Option<String>> = candidates.iter().map(|c| c.node.clone()).collect();
    deletion_order_with(&candidates, &related, times)
}

/// How good removing a pod is, lower first: the excess left, the evenness left, and
/// (reversed) how many of the ReplicaSet's pods share its node.
type RemovalRank = (Violation, i64, std::cmp::Reverse<usize>);

/// Each group's skew and the groups' excess, hard and soft.
fn measure(snapshot: &Snapshot, groups: &[&CountingGroup]) -> Measure {
    let mut violation = Violation::default();
    let mut skews = Vec::with_capacity(groups.len());
    for g in groups {
        let counts = g.counts(snapshot);
        let e = excess(g, &counts);
        if g.when == topospread::api::WhenUnsatisfiable::DoNotSchedule {
            violation.hard += e;
        } else {
            violation.soft += e;
        }
        let max = counts.iter().map(|(_, c)| c).max();
        skews.push(max.map_or(0, |max| max - g.min_match(&counts)));
    }
    Measure { violation, skews }
}

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
