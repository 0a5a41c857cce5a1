//! A Deployment's rollout still to be carried out, as the deployment controller sees it
//! (its revisions, strategy, pod template, the deletion order's view of its pods), and
//! the report of one carried out. The cluster driver (`topospread-driver`) runs it through
//! the scheduler, sync by sync, under each [`Interleaving`].

use k8s_openapi::api::core::v1::Pod;
use std::collections::BTreeMap;
use topospread::spread::ConstraintRef;
use topospread_planning::controller::{DeletionCandidate, Strategy, TimeScale};

use crate::load::Source;

/// One ReplicaSet of a Deployment and its active pods (none by default: a placeholder
/// while one is borrowed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Revision {
    /// The ReplicaSet.
    pub replica_set: String,
    /// Its active pods' names.
    pub pods: Vec<String>,
}

/// A Deployment whose template differs from its live ReplicaSets' (or whose old
/// ReplicaSets still have pods): the rollout still to be carried out.
#[derive(Clone, Debug)]
pub struct Rollout {
    /// Where the Deployment came from.
    pub source: Source,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub deployment: String,
    /// `spec.replicas` (after `--scale`).
    pub replicas: i32,
    /// Its strategy, resolved for `replicas`.
    pub strategy: Strategy,
    /// The new ReplicaSet (the Deployment's template), with its existing pods.
    pub new: Revision,
    /// The old ReplicaSets, oldest first.
    pub old: Vec<Revision>,
    /// The pod the new ReplicaSet creates (labels, owner reference; no name).
    pub template: Pod,
    /// What the deletion order reads of every existing pod of the Deployment.
    pub candidates: Vec<DeletionCandidate>,
    /// Fixes the new pods' name suffixes.
    pub seed: u64,
    /// How its ReplicaSets' scale-downs compare ready and creation times.
    pub times: TimeScale,
    /// The admission plugins the new pods go through (LimitRanges, RuntimeClasses).
    pub admission: std::sync::Arc<crate::admission::Admission>,
    /// `spec.minReadySeconds`: a pod is available this long after it is Ready.
    pub min_ready_seconds: i32,
    /// `spec.progressDeadlineSeconds` (600 when unset): how long the controller waits
    /// for progress before the Progressing condition turns False.
    pub progress_deadline_seconds: i32,
}

/// The order in which the deployment controller, the scheduler and the kubelets move
/// where a cluster races them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interleaving {
    /// The scheduler binds a sync's new pods before the controller's next sync; else
    /// the controller, whose next sync follows the ReplicaSet update at once, shrinks the
    /// old ReplicaSets first.
    pub scheduler_first: bool,
    /// Pods due at one instant become available one at a time, a sync after each; else
    /// all together, seen by one sync.
    pub one_at_a_time: bool,
}

impl Interleaving {
    /// Every interleaving; the first is the one a report's steps follow.
    pub const ALL: [Self; 4] = [
        Self {
            scheduler_first: false,
            one_at_a_time: false,
        },
        Self {
            scheduler_first: false,
            one_at_a_time: true,
        },
        Self {
            scheduler_first: true,
            one_at_a_time: false,
        },
        Self {
            scheduler_first: true,
            one_at_a_time: true,
        },
    ];

    /// `controller first, ready together`.
    pub fn name(self) -> String {
        format!(
            "{} first, ready {}",
            if self.scheduler_first {
                "scheduler"
            } else {
                "controller"
            },
            if self.one_at_a_time {
                "one at a time"
            } else {
                "together"
            }
        )
    }
}

/// One revision's pods at a point of the rollout.
#[derive(Clone, Debug, PartialEq, Eq)]
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
#[derive(Clone, Debug, PartialEq, Eq)]
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
#[derive(Clone, Debug, PartialEq)]
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
    pub stalled: Option<RolloutStall>,
    /// The pods created, as the controller made them (for `-o yaml`; not in reports).
    pub created_pods: Vec<Pod>,
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
    pub warning: Option<String>,
    /// When and why the Progressing condition turns False (ProgressDeadlineExceeded)
    /// although the rollout goes on: pods take longer than the deadline to become
    /// available.
    pub deadline_exceeded: Option<String>,
}

/// How a rollout ended under one interleaving.
#[derive(Clone, Debug, PartialEq)]
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndSpread {
    /// The constraint.
    pub constraint: ConstraintRef,
    /// Matching pods per eligible domain.
    pub counts: BTreeMap<String, i64>,
    /// Largest count minus the global minimum.
    pub skew: i64,
    /// Its selector counts one revision only (`pod-template-hash` merged from
    /// matchLabelKeys).
    pub per_revision: bool,
}

/// One spread constraint's end skews over the interleavings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkewRange {
    /// The constraint, as [`EndSpread::constraint`].
    pub constraint: ConstraintRef,
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
#[derive(Clone, Debug, PartialEq, Eq)]
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
    pub max_surge: Option<i32>,
    /// `maxUnavailable` resolved for `spec.replicas` (absent for Recreate).
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StalledPod {
    /// Its name.
    pub pod: String,
    /// Why it stays Pending, as kube-scheduler's condition message says it.
    pub message: String,
}
