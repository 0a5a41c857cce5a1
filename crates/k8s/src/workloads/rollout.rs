//! A Deployment's rolling update (or recreate) carried out through the engine's
//! [`Simulation`]: each sync of the deployment controller
//! ([`topospread::controller::rollout_steps`]) creates the new ReplicaSet's pods, which
//! are scheduled through the one queue before the next sync, or deletes old pods in the
//! ReplicaSet controller's order. A pod counts as available once it is bound.

use crate::build;
use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use topospread::controller::{
    DeletionCandidate, PhaseRank, RolloutState, RolloutStep, Strategy, TimeScale,
    deletion_order_with, rollout_steps,
};
use topospread::plugins::podtopologyspread::{
    ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH,
};
use topospread::scheduler::PodOutcome;
use topospread::simulation::{Simulation, SimulationError};
use topospread::snapshot::Snapshot;

use crate::load::Source;

/// One ReplicaSet of a Deployment and its active pods.
#[derive(Clone, Debug, PartialEq, Eq)]
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
}

/// One revision's pods at a point of the rollout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RevisionState {
    /// The ReplicaSet.
    pub replica_set: String,
    /// Its pods.
    pub pods: usize,
    /// Of which bound.
    pub bound: usize,
    /// Per topology key of the template's spread constraints: bound pods per domain.
    pub spread: BTreeMap<String, BTreeMap<String, u32>>,
}

/// One sync of the deployment controller and where the revisions stood after it (and
/// after the scheduler settled).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
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
    /// The pods created, as the controller made them (for `-o yaml`).
    #[serde(skip)]
    pub created_pods: Vec<Pod>,
}

/// A rollout the deployment controller can carry no further: it made no move after the
/// scheduler settled, and the new pods it waits for stay Pending (kubernetes issue
/// 116629: with `maxUnavailable: 0` no old pod goes until a surge pod is available, and
/// a DoNotSchedule spread constraint may leave that pod no domain).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct StalledPod {
    /// Its name.
    pub pod: String,
    /// Why it stays Pending, as kube-scheduler's condition message says it.
    pub message: String,
}

/// The most syncs one rollout may take (each one moves at least one pod).
const MAX_STEPS: usize = 100_000;

impl Rollout {
    /// Carries the rollout out on `snapshot` through `sim`, step by step, scheduling
    /// the new pods through the queue after each step.
    pub fn run(
        &self,
        sim: &mut Simulation,
        snapshot: &mut Snapshot,
    ) -> Result<RolloutReport, SimulationError> {
        let ns = self.namespace.as_str();
        let mut new = self.new.clone();
        let mut old = self.old.clone();
        let mut report = RolloutReport {
            deployment: format!("{ns}/{}", self.deployment),
            new_replica_set: new.replica_set.clone(),
            steps: Vec::new(),
            complete: false,
            created: Vec::new(),
            deleted: Vec::new(),
            stalled: None,
            created_pods: Vec::new(),
        };
        let keys: Vec<String> = self
            .template
            .spec
            .iter()
            .flat_map(|s| s.topology_spread_constraints.iter().flatten())
            .map(|c| c.topology_key.clone())
            .collect();
        let mut made = 0usize;
        'syncs: for _ in 0..MAX_STEPS {
            let bound = |pods: &[String]| -> i32 {
                let n = pods
                    .iter()
                    .filter(|p| {
                        snapshot
                            .pod_id(ns, p)
                            .is_some_and(|id| snapshot.pod_node(id).is_some())
                    })
                    .count();
                i32::try_from(n).unwrap_or(i32::MAX)
            };
            let count = |pods: &[String]| i32::try_from(pods.len()).unwrap_or(i32::MAX);
            let state = RolloutState {
                replicas: self.replicas,
                new: (count(&new.pods), bound(&new.pods)),
                old: old
                    .iter()
                    .map(|r| (count(&r.pods), bound(&r.pods)))
                    .collect(),
            };
            let steps = rollout_steps(&state, self.strategy);
            if steps.is_empty() {
                report.complete = state.old.iter().all(|o| o.0 == 0)
                    && state.new.0 == self.replicas
                    && state.new.1 == self.replicas;
                if !report.complete {
                    report.stalled = Some(self.stall(sim, snapshot, &state, &new, &report));
                }
                break;
            }
            for step in steps {
                let mut created = Vec::new();
                let mut deleted = Vec::new();
                let action = match step {
                    RolloutStep::ScaleUpNew(to) => {
                        let to = usize::try_from(to).unwrap_or(0);
                        while new.pods.len() < to {
                            let name = self.fresh_name(snapshot, &new.replica_set, &mut made);
                            let mut pod = self.template.clone();
                            pod.metadata.name = Some(name.clone());
                            let Ok(None) = build::admit_and_add_with(
                                snapshot,
                                &pod,
                                &self.source.file,
                                &self.admission,
                            ) else {
                                break;
                            };
                            let Some(id) = snapshot.pod_id(ns, &name) else {
                                break;
                            };
                            // A pod no profile serves stays pending; the rollout waits.
                            let _ = sim.enqueue(snapshot, id);
                            new.pods.push(name.clone());
                            created.push(name);
                            report.created_pods.push(pod);
                        }
                        if created.is_empty() && new.pods.len() > to {
                            let related = related_pods(&new, &old);
                            deleted = self.scale_down(sim, snapshot, &mut new, to, &related);
                        }
                        format!("scale replicaset/{} to {}", new.replica_set, new.pods.len())
                    }
                    RolloutStep::ScaleDownOld { index, to } => {
                        let to = usize::try_from(to).unwrap_or(0);
                        let related = related_pods(&new, &old);
                        let Some(r) = old.get_mut(index) else {
                            continue;
                        };
                        deleted = self.scale_down(sim, snapshot, r, to, &related);
                        format!("scale replicaset/{} to {}", r.replica_set, r.pods.len())
                    }
                };
                if created.is_empty() && deleted.is_empty() {
                    // Admission refused the new pods: the controller cannot move.
                    let mut stall = self.stall(sim, snapshot, &state, &new, &report);
                    stall.reason = format!(
                        "the API server refused the new ReplicaSet's pods, so the controller cannot {action}"
                    );
                    report.stalled = Some(stall);
                    break 'syncs;
                }
                sim.run(snapshot, |_, _| {})?;
                report.created.extend(created.iter().cloned());
                report.deleted.extend(deleted.iter().cloned());
                let revisions = std::iter::once(&new)
                    .chain(&old)
                    .map(|r| revision_state(snapshot, ns, r, &keys))
                    .collect();
                report.steps.push(StepReport {
                    action,
                    created,
                    deleted,
                    revisions,
                });
            }
        }
        Ok(report)
    }

    /// Where the rollout stands now that the controller cannot move: the counts of
    /// `state`, the new pods still Pending and the scheduler's reason for each.
    fn stall(
        &self,
        sim: &Simulation,
        snapshot: &Snapshot,
        state: &RolloutState,
        new: &Revision,
        report: &RolloutReport,
    ) -> RolloutStall {
        let ns = self.namespace.as_str();
        let count = |n: i32| usize::try_from(n).unwrap_or(0);
        let pending: Vec<StalledPod> = new
            .pods
            .iter()
            .filter_map(|name| {
                let id = snapshot.pod_id(ns, name)?;
                match sim.scheduler().outcome(snapshot, id) {
                    PodOutcome::Bound(_) => None,
                    PodOutcome::Pending(message) => Some(StalledPod {
                        pod: name.clone(),
                        message,
                    }),
                    // An outcome newer than this crate names no pending reason to report.
                    _ => None,
                }
            })
            .collect();
        let topology_spread = pending.iter().any(|p| {
            p.message
                .replace(ERR_REASON_NODE_LABEL_NOT_MATCH, "")
                .contains(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        });
        let (max_surge, max_unavailable) = match self.strategy {
            Strategy::RollingUpdate {
                max_surge,
                max_unavailable,
            } => (Some(max_surge), Some(max_unavailable)),
            Strategy::Recreate => (None, None),
        };
        let waits = match pending.len() {
            0 => "the new pods it needs".to_string(),
            1 => format!("new pod {} stays Pending", pending[0].pod),
            n => format!("{n} new pods stay Pending"),
        };
        let mut reason = match (max_surge, max_unavailable) {
            (Some(surge), Some(0)) => format!(
                "maxUnavailable 0 keeps every old pod until a new one is available, maxSurge {surge} allows no further new pod, and {waits}"
            ),
            (Some(_), Some(unavailable)) => format!(
                "maxUnavailable {unavailable} is used up by pods not available, and {waits}"
            ),
            _ => format!("the controller waits for the new pods, and {waits}"),
        };
        if topology_spread {
            reason.push_str(
                ": a DoNotSchedule topology spread constraint rejects every node where room remains while the old pods hold their domains (kubernetes issue 116629)",
            );
        }
        let last = report.steps.last();
        RolloutStall {
            step: report.steps.len(),
            action: last.map(|s| s.action.clone()).unwrap_or_default(),
            old_replicas: state.old.iter().map(|o| count(o.0)).sum(),
            old_available: state.old.iter().map(|o| count(o.1)).sum(),
            new_replicas: count(state.new.0),
            new_available: count(state.new.1),
            max_surge,
            max_unavailable,
            pending,
            topology_spread,
            reason,
        }
    }

    /// Deletes pods of `r` down to `to`, in the ReplicaSet controller's order, ranked by
    /// the nodes of `related` (every pod of the Deployment); returns their names.
    fn scale_down(
        &self,
        sim: &mut Simulation,
        snapshot: &mut Snapshot,
        r: &mut Revision,
        to: usize,
        related: &[String],
    ) -> Vec<String> {
        let ns = self.namespace.as_str();
        let node_of = |name: &str| -> Option<String> {
            let id = snapshot.pod_id(ns, name)?;
            Some(snapshot.node(snapshot.pod_node(id)?).node.name.to_string())
        };
        let known: HashMap<&str, &DeletionCandidate> = self
            .candidates
            .iter()
            .map(|c| (c.name.as_str(), c))
            .collect();
        let candidates: Vec<DeletionCandidate> = r
            .pods
            .iter()
            .map(|name| {
                let mut c = known.get(name.as_str()).map_or_else(
                    || DeletionCandidate::created_pending(name),
                    |c| (*c).clone(),
                );
                c.node = node_of(name);
                if c.node.is_some() && c.phase == PhaseRank::Pending && c.created.is_none() {
                    // A pod the simulation bound is running and ready.
                    c.phase = PhaseRank::Running;
                    c.ready = true;
                }
                c
            })
            .collect();
        let related: Vec<Option<String>> = related.iter().map(|p| node_of(p)).collect();
        let remove = r.pods.len().saturating_sub(to);
        let order = deletion_order_with(&candidates, &related, self.times);
        let gone: Vec<String> = order
            .into_iter()
            .take(remove)
            .map(|i| r.pods[i].clone())
            .collect();
        for name in &gone {
            if let Some(id) = snapshot.pod_id(ns, name) {
                sim.delete_pod(snapshot, id);
            }
        }
        r.pods.retain(|p| !gone.contains(p));
        gone
    }

    /// `<replicaset>-<5 chars>`, free in the namespace.
    fn fresh_name(&self, snapshot: &Snapshot, rs: &str, made: &mut usize) -> String {
        loop {
            let name = format!("{rs}-{}", super::naming::suffix(self.seed, rs, *made, 0));
            *made += 1;
            if snapshot.pod_id(&self.namespace, &name).is_none() || *made > 1_000_000 {
                return name;
            }
        }
    }
}

/// Every pod of the Deployment (`getIndirectlyRelatedPods`): the ranks of the deletion
/// order count them all, whatever their ReplicaSet.
fn related_pods(new: &Revision, old: &[Revision]) -> Vec<String> {
    std::iter::once(new)
        .chain(old)
        .flat_map(|r| r.pods.iter().cloned())
        .collect()
}

/// `r`'s pods now: how many, how many bound, and per key the bound ones per domain.
fn revision_state(snapshot: &Snapshot, ns: &str, r: &Revision, keys: &[String]) -> RevisionState {
    let symbols = snapshot.symbols();
    let nodes: Vec<_> = r
        .pods
        .iter()
        .filter_map(|p| snapshot.pod_node(snapshot.pod_id(ns, p)?))
        .collect();
    let spread = keys
        .iter()
        .map(|k| {
            let mut counts: BTreeMap<String, u32> = BTreeMap::new();
            if let Some(key) = symbols.get(k) {
                for n in &nodes {
                    if let Some(v) = snapshot.node(*n).node.labels.get(key) {
                        *counts.entry(symbols.resolve(v).to_string()).or_default() += 1;
                    }
                }
            }
            (k.clone(), counts)
        })
        .collect();
    RevisionState {
        replica_set: r.replica_set.clone(),
        pods: r.pods.len(),
        bound: nodes.len(),
        spread,
    }
}
