//! A Deployment's rollout as `simulate -o json` writes it (the steps, each
//! interleaving's end, the stall), and the pods a scale-down removed; converted from
//! `topospread-k8s`'s workload reports, constraints named by their labels.

use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use topospread_k8s::workloads as k8s;

/// An existing pod its controller removes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RemovedPod {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub pod: String,
    /// Its controller, `replicaset/web-abc`.
    pub controller: String,
}

impl From<&k8s::RemovedPod> for RemovedPod {
    fn from(p: &k8s::RemovedPod) -> Self {
        Self {
            namespace: p.namespace.clone(),
            pod: p.pod.clone(),
            controller: p.controller.clone(),
        }
    }
}

/// One revision's pods at a point of the rollout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RevisionState {
    /// The ReplicaSet.
    pub replica_set: String,
    /// Its pods.
    pub pods: usize,
    /// Of which bound.
    pub bound: usize,
    /// Of which available (bound, Ready for `minReadySeconds`).
    pub available: usize,
    /// Per topology key of the template's spread constraints: bound pods per domain.
    pub spread: BTreeMap<String, BTreeMap<String, u32>>,
}

/// One sync of the deployment controller and where the revisions stood after it (and
/// after the scheduler settled).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StepReport {
    /// What the controller did: `scale replicaset/web-abc to 3`.
    pub action: String,
    /// Pods created by this step.
    pub created: Vec<String>,
    /// Pods deleted by this step.
    pub deleted: Vec<String>,
    /// Every revision after the step, new first.
    pub revisions: Vec<RevisionState>,
}

/// How a rollout went.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct RolloutReport {
    /// `namespace/name` of the Deployment.
    pub deployment: String,
    /// The new ReplicaSet.
    pub new_replica_set: String,
    /// Every step, in order.
    pub steps: Vec<StepReport>,
    /// Whether every old pod is gone and the new ReplicaSet has all replicas available.
    pub complete: bool,
    /// Every pod created, in order.
    pub created: Vec<String>,
    /// Every pod deleted, in order.
    pub deleted: Vec<String>,
    /// Where and why the rollout stopped short of complete; absent when it completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stalled: Option<RolloutStall>,
    /// The readiness model: seconds from binding until a pod is Ready (`--ready-after`).
    pub ready_after_seconds: u32,
    /// `spec.minReadySeconds`: seconds Ready before available.
    pub min_ready_seconds: i32,
    /// `spec.progressDeadlineSeconds`.
    pub progress_deadline_seconds: i32,
    /// Logical seconds from the first sync to the last move.
    pub duration_seconds: u64,
    /// The interleaving the steps follow (`controller first, ready together`).
    pub interleaving: String,
    /// How each interleaving ended, the steps' own first.
    pub interleavings: Vec<InterleavingReport>,
    /// Per spread constraint of the template: the skews the interleavings end with.
    pub end_skew: Vec<SkewRange>,
    /// `this rollout can leave the spread skewed; add matchLabelKeys: [pod-template-hash]`,
    /// with the constraints it concerns, when an end skew exceeds maxSkew or differs
    /// between interleavings and old and new pods count together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// When and why the Progressing condition turns False (ProgressDeadlineExceeded)
    /// although the rollout goes on: pods take longer than the deadline to become
    /// available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_exceeded: Option<String>,
}

/// How a rollout ended under one interleaving.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct InterleavingReport {
    /// `controller first, ready together`.
    pub name: String,
    /// Whether it completed.
    pub complete: bool,
    /// Syncs that moved.
    pub steps: usize,
    /// Logical seconds it took.
    pub duration_seconds: u64,
    /// Each spread constraint of the new pods at the end, as the scheduler counts it.
    pub end: Vec<EndSpread>,
}

/// One spread constraint counted at a rollout's end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct EndSpread {
    /// `topology.kubernetes.io/zone maxSkew=1 DoNotSchedule app=web`.
    pub constraint: String,
    /// Its topology key.
    pub topology_key: String,
    /// maxSkew.
    pub max_skew: i32,
    /// Matching pods per eligible domain.
    pub counts: BTreeMap<String, i64>,
    /// Largest count minus the global minimum.
    pub skew: i64,
    /// Its selector counts one revision only (`pod-template-hash` merged from
    /// matchLabelKeys).
    pub per_revision: bool,
}

/// One spread constraint's end skews over the interleavings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SkewRange {
    /// The constraint, as [`EndSpread::constraint`].
    pub constraint: String,
    /// maxSkew.
    pub max_skew: i32,
    /// The least end skew.
    pub min: i64,
    /// The greatest end skew.
    pub max: i64,
    /// Its selector counts one revision only (matchLabelKeys with `pod-template-hash`
    /// merged), so old pods never steer the new ones.
    pub per_revision: bool,
}

/// A rollout the deployment controller can carry no further: it made no move after the
/// scheduler settled, and the new pods it waits for stay Pending (kubernetes issue
/// 116629: with `maxUnavailable: 0` no old pod goes until a surge pod is available, and
/// a DoNotSchedule spread constraint may leave that pod no domain).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RolloutStall {
    /// The step it stalled after (1-based; 0 when not even the first could be made).
    pub step: usize,
    /// That step's action (`scale replicaset/web-abc to 1`); empty when step is 0.
    pub action: String,
    /// The old ReplicaSets' pods at the stall, summed.
    pub old_replicas: usize,
    /// Of which available (bound).
    pub old_available: usize,
    /// The new ReplicaSet's pods at the stall.
    pub new_replicas: usize,
    /// Of which available (bound).
    pub new_available: usize,
    /// `maxSurge` resolved for `spec.replicas` (absent for Recreate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<i32>,
    /// `maxUnavailable` resolved for `spec.replicas` (absent for Recreate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<i32>,
    /// The new pods that stay Pending, each with the scheduler's message.
    pub pending: Vec<StalledPod>,
    /// Whether a DoNotSchedule topology spread constraint rejects nodes for a pending
    /// new pod (`node(s) didn't match pod topology spread constraints`).
    pub topology_spread: bool,
    /// Why the controller cannot move, in one line.
    pub reason: String,
}

/// A new pod a stalled rollout waits for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StalledPod {
    /// Its name.
    pub pod: String,
    /// Why it stays Pending, as kube-scheduler's condition message says it.
    pub message: String,
}

impl From<&k8s::RevisionState> for RevisionState {
    fn from(r: &k8s::RevisionState) -> Self {
        Self {
            replica_set: r.replica_set.clone(),
            pods: r.pods,
            bound: r.bound,
            available: r.available,
            spread: r.spread.clone(),
        }
    }
}

impl From<&k8s::StepReport> for StepReport {
    fn from(s: &k8s::StepReport) -> Self {
        Self {
            action: s.action.clone(),
            created: s.created.clone(),
            deleted: s.deleted.clone(),
            revisions: s.revisions.iter().map(RevisionState::from).collect(),
        }
    }
}

impl From<&k8s::RolloutReport> for RolloutReport {
    fn from(r: &k8s::RolloutReport) -> Self {
        Self {
            deployment: r.deployment.clone(),
            new_replica_set: r.new_replica_set.clone(),
            steps: r.steps.iter().map(StepReport::from).collect(),
            complete: r.complete,
            created: r.created.clone(),
            deleted: r.deleted.clone(),
            stalled: r.stalled.as_ref().map(RolloutStall::from),
            ready_after_seconds: r.ready_after_seconds,
            min_ready_seconds: r.min_ready_seconds,
            progress_deadline_seconds: r.progress_deadline_seconds,
            duration_seconds: r.duration_seconds,
            interleaving: r.interleaving.clone(),
            interleavings: r
                .interleavings
                .iter()
                .map(InterleavingReport::from)
                .collect(),
            end_skew: r.end_skew.iter().map(SkewRange::from).collect(),
            warning: r.warning.clone(),
            deadline_exceeded: r.deadline_exceeded.clone(),
        }
    }
}

impl From<&k8s::InterleavingReport> for InterleavingReport {
    fn from(r: &k8s::InterleavingReport) -> Self {
        Self {
            name: r.name.clone(),
            complete: r.complete,
            steps: r.steps,
            duration_seconds: r.duration_seconds,
            end: r.end.iter().map(EndSpread::from).collect(),
        }
    }
}

impl From<&k8s::EndSpread> for EndSpread {
    fn from(e: &k8s::EndSpread) -> Self {
        Self {
            constraint: e.constraint.to_string(),
            topology_key: e.constraint.topology_key.clone(),
            max_skew: e.constraint.max_skew,
            counts: e.counts.clone(),
            skew: e.skew,
            per_revision: e.per_revision,
        }
    }
}

impl From<&k8s::SkewRange> for SkewRange {
    fn from(r: &k8s::SkewRange) -> Self {
        Self {
            constraint: r.constraint.to_string(),
            max_skew: r.constraint.max_skew,
            min: r.min,
            max: r.max,
            per_revision: r.per_revision,
        }
    }
}

impl From<&k8s::RolloutStall> for RolloutStall {
    fn from(s: &k8s::RolloutStall) -> Self {
        Self {
            step: s.step,
            action: s.action.clone(),
            old_replicas: s.old_replicas,
            old_available: s.old_available,
            new_replicas: s.new_replicas,
            new_available: s.new_available,
            max_surge: s.max_surge,
            max_unavailable: s.max_unavailable,
            pending: s
                .pending
                .iter()
                .map(|p| StalledPod {
                    pod: p.pod.clone(),
                    message: p.message.clone(),
                })
                .collect(),
            topology_spread: s.topology_spread,
            reason: s.reason.clone(),
        }
    }
}
