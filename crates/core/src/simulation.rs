//! Scheduling on a virtual clock: the same queue and cycle the live scheduler runs,
//! with binding immediate and preemption's evictions carried out at once. A run ends
//! when the queue can make no more progress (every pod bound or waiting for an event
//! that will not come). `simulate`, `explain`, the scenario runner and the benchmarks
//! all schedule through it.

use crate::api::{ControllerKind, Pod};
use crate::queue::{Clock, VirtualClock};
use crate::scheduler::{Attempt, EnqueueError, Scheduler};
use crate::snapshot::{NodeId, PodId, Snapshot, SnapshotError};
use std::time::Duration;

/// Something that happened in a run, in order.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum SimEvent {
    /// A pod was bound.
    Bound {
        /// The pod.
        pod: PodId,
        /// Its node.
        node: NodeId,
        /// Its scheduling attempts so far, this one included.
        attempt: u32,
    },
    /// A pod was evicted so a higher-priority pod fits.
    Preempted {
        /// The evicted pod, as it was.
        victim: Box<Pod>,
        /// The node it ran on.
        node: NodeId,
        /// The preemptor.
        by: PodId,
    },
    /// A preempted pod's controller created its replacement, now pending.
    Replaced {
        /// `namespace/name` of the evicted pod.
        victim: String,
        /// The new pod.
        replacement: PodId,
    },
}

/// Why a run stopped early.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimulationError {
    /// More cycles ran than the run allows: some pods kept preempting each other.
    #[error("stopped after {cycles} scheduling cycles without settling")]
    NoProgress {
        /// The cycles run.
        cycles: u64,
    },
    /// A replacement pod could not be added.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// A node to drain is not in the snapshot.
    #[error("node {node:?} not found")]
    UnknownNode {
        /// The node's name.
        node: String,
    },
}

/// What draining nodes did to the pods they ran (`namespace/name` each).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Drained {
    /// The nodes removed.
    pub nodes: Vec<String>,
    /// Pods whose controller created a replacement, now pending: (evicted pod, new pod).
    pub replaced: Vec<(String, PodId)>,
    /// Pods nothing recreates: no controller.
    pub lost: Vec<String>,
    /// DaemonSet pods, which leave with their node.
    pub daemon_pods: Vec<String>,
    /// Mirror (static) pods: the node's kubelet runs them, so they leave with it.
    pub mirror_pods: Vec<String>,
    /// Nodes drained as `kubectl drain` does: cordoned and kept, their pods evicted.
    pub cordoned: Vec<String>,
    /// Pods a drain leaves on their cordoned node (DaemonSet, mirror, terminating).
    pub kept: Vec<String>,
    /// Pods `kubectl drain` refuses to evict without an override: (pod, its message).
    pub refused: Vec<(String, String)>,
    /// Pods whose eviction a PodDisruptionBudget still refuses once no replacement can
    /// become Ready any more: (pod, `namespace/name` of the budget).
    pub blocked: Vec<(String, String)>,
}

/// What `kubectl drain` does with one pod of a node it drains (its filters, in
/// `k8s.io/kubectl/pkg/drain/filters.go`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DrainAction {
    /// Evicted through the Eviction API, its PodDisruptionBudgets permitting.
    Evict,
    /// Left where it is: a DaemonSet pod (`--ignore-daemonsets`), a mirror pod, a
    /// terminating pod.
    Keep,
    /// kubectl refuses to drain while it is there, with this message.
    Refuse(String),
}

/// A scheduler on a virtual clock.
#[derive(Debug)]
pub struct Simulation {
    scheduler: Scheduler,
    clock: VirtualClock,
    events: Vec<SimEvent>,
    cycles: u64,
    /// Names handed to replacement pods, so they are unique and reproducible.
    replacements: u64,
}

impl Simulation {
    /// A simulation driving `scheduler`.
    pub fn new(scheduler: Scheduler) -> Self {
        Self {
            scheduler,
            clock: VirtualClock::new(),
            events: Vec::new(),
            cycles: 0,
            replacements: 0,
        }
    }

    /// The scheduler.
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    /// The scheduler, to configure it (seed, explained pod).
    pub fn scheduler_mut(&mut self) -> &mut Scheduler {
        &mut self.scheduler
    }

    /// What happened so far.
    pub fn events(&self) -> &[SimEvent] {
        &self.events
    }

    /// Scheduling cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// The virtual time.
    pub fn now(&self) -> Duration {
        self.clock.now()
    }

    /// Queues one pending pod of the snapshot.
    pub fn enqueue(&mut self, snapshot: &Snapshot, id: PodId) -> Result<(), EnqueueError> {
        self.scheduler.enqueue(snapshot, id, self.clock.now())
    }

    /// Queues every pending, non-terminating pod of the snapshot, in the snapshot's
    /// order; returns the pods no profile serves, with the reason.
    pub fn enqueue_pending(&mut self, snapshot: &Snapshot) -> Vec<(PodId, EnqueueError)> {
        let pending: Vec<PodId> = snapshot
            .pods()
            .filter(|(id, p)| snapshot.pod_node(*id).is_none() && !p.terminating)
            .map(|(id, _)| id)
            .collect();
        pending
            .into_iter()
            .filter_map(|id| self.enqueue(snapshot, id).err().map(|e| (id, e)))
            .collect()
    }

    /// A controller creates `pod`: it joins the snapshot and, when not bound, the queue
    /// (a run then schedules it through the same queue as every other pod).
    pub fn create_pod(
        &mut self,
        snapshot: &mut Snapshot,
        pod: Pod,
    ) -> Result<Result<PodId, EnqueueError>, SnapshotError> {
        self.scheduler.add_pod(snapshot, pod, self.clock.now())
    }

    /// A controller deletes pod `id`: it leaves the snapshot and the queue, and the
    /// pods waiting for a bound pod's deletion are moved to retry.
    pub fn delete_pod(&mut self, snapshot: &mut Snapshot, id: PodId) -> Option<Pod> {
        self.scheduler.delete_pod(snapshot, id, self.clock.now())
    }

    /// Runs until the queue can make no more progress. `on_attempt` sees every
    /// cycle's outcome once it is carried out (for progress bars and measurements).
    pub fn run(
        &mut self,
        snapshot: &mut Snapshot,
        mut on_attempt: impl FnMut(&Snapshot, &Attempt),
    ) -> Result<(), SimulationError> {
        // Enough for every pod to be retried after every event it waits for, with room
        // for preemption chains; a run past it is a livelock, not a schedule.
        let limit = 1_000 + 200 * (snapshot.pods().count() as u64 + 1);
        let mut run_cycles = 0;
        loop {
            let now = self.clock.now();
            let Some(attempt) = self.scheduler.schedule_next(snapshot, now) else {
                match self.scheduler.queue().next_backoff_expiry() {
                    Some(t) if t > now => {
                        self.clock.advance_to(t);
                        continue;
                    }
                    _ => return Ok(()),
                }
            };
            self.cycles += 1;
            run_cycles += 1;
            if run_cycles > limit {
                return Err(SimulationError::NoProgress { cycles: run_cycles });
            }
            match &attempt {
                Attempt::Assumed {
                    pod,
                    node,
                    attempts,
                    ..
                } => {
                    // Binding is immediate here: the assumed pod is confirmed at once.
                    if self.scheduler.finish_binding(snapshot, *pod, now).is_err() {
                        continue;
                    }
                    self.events.push(SimEvent::Bound {
                        pod: *pod,
                        node: *node,
                        attempt: *attempts,
                    });
                }
                Attempt::Unschedulable {
                    pod,
                    preemption: Some(p),
                    ..
                } => {
                    for v in &p.victims {
                        self.evict(snapshot, *v, p.node, *pod)?;
                    }
                }
                Attempt::Unschedulable { .. } | Attempt::Error { .. } => {}
            }
            on_attempt(snapshot, &attempt);
        }
    }

    /// Drains `nodes` as `kubectl drain` does: each is cordoned (`spec.unschedulable`,
    /// with the `node.kubernetes.io/unschedulable:NoSchedule` taint the node lifecycle
    /// controller adds) and stays; `action` sorts its pods; those to evict go in
    /// `namespace/name` order, each only while every PodDisruptionBudget covering it
    /// allows a disruption. A replacement that becomes Ready (binds) gives its budgets
    /// the disruption back, so evictions resume after a run, as kubectl retries them.
    pub fn cordon_and_drain(
        &mut self,
        snapshot: &mut Snapshot,
        nodes: &[String],
        action: &dyn Fn(&Pod, &str) -> DrainAction,
    ) -> Result<Drained, SimulationError> {
        if let Some(node) = nodes.iter().find(|n| snapshot.node_id(n).is_none()) {
            return Err(SimulationError::UnknownNode { node: node.clone() });
        }
        let now = self.clock.now();
        let mut drained = Drained::default();
        let mut evict: Vec<(String, PodId)> = Vec::new();
        for name in nodes {
            let Some(id) = snapshot.node_id(name) else {
                continue;
            };
            let mut node = snapshot.node(id).node.clone();
            node.unschedulable = true;
            if !node.taints.iter().any(|t| {
                &*t.key == UNSCHEDULABLE_TAINT && t.effect == crate::api::TaintEffect::NoSchedule
            }) {
                node.taints.push(crate::api::Taint {
                    key: UNSCHEDULABLE_TAINT.into(),
                    value: "".into(),
                    effect: crate::api::TaintEffect::NoSchedule,
                });
            }
            self.scheduler
                .update_node(snapshot, node, now)
                .map_err(|_| SimulationError::UnknownNode { node: name.clone() })?;
            drained.cordoned.push(name.clone());
            let mut pods: Vec<(String, PodId)> = snapshot
                .node(id)
                .pods()
                .iter()
                .filter_map(|&p| {
                    let pod = snapshot.pod(p)?;
                    let full =
                        format!("{}/{}", snapshot.symbols().resolve(pod.namespace), pod.name);
                    Some((full, p))
                })
                .collect();
            pods.sort();
            for (full, p) in pods {
                let Some(pod) = snapshot.pod(p) else {
                    continue;
                };
                match action(pod, &full) {
                    DrainAction::Evict => evict.push((full, p)),
                    DrainAction::Keep => drained.kept.push(full),
                    DrainAction::Refuse(message) => drained.refused.push((full, message)),
                }
            }
        }
        // The budgets covering each pod, and what each allows now.
        let symbols = snapshot.symbols();
        let budgets: Vec<(String, i32)> = snapshot
            .workloads()
            .disruption_budgets
            .iter()
            .map(|b| {
                (
                    format!("{}/{}", symbols.resolve(b.namespace), b.name),
                    b.disruptions_allowed,
                )
            })
            .collect();
        let covering = |id: PodId| -> Vec<usize> {
            let Some(pod) = snapshot.pod(id) else {
                return Vec::new();
            };
            snapshot
                .workloads()
                .disruption_budgets
                .iter()
                .enumerate()
                .filter(|(_, b)| b.covers(pod.namespace, &pod.labels, symbols))
                .map(|(i, _)| i)
                .collect()
        };
        let mut waiting: Vec<(String, PodId, Vec<usize>)> = evict
            .into_iter()
            .map(|(full, id)| {
                let c = covering(id);
                (full, id, c)
            })
            .collect();
        let mut allowed: Vec<i32> = budgets.iter().map(|b| b.1).collect();
        let mut recovering: Vec<(PodId, Vec<usize>)> = Vec::new();
        loop {
            let mut now_evicted = Vec::new();
            waiting.retain(|(full, id, c)| {
                if c.iter().all(|&i| allowed[i] > 0) {
                    c.iter().for_each(|&i| allowed[i] -= 1);
                    now_evicted.push((full.clone(), *id, c.clone()));
                    false
                } else {
                    true
                }
            });
            for (full, id, c) in now_evicted {
                let now = self.clock.now();
                let Some(pod) = self.scheduler.delete_pod(snapshot, id, now) else {
                    continue;
                };
                let Some(r) = self.replacement(&pod) else {
                    continue;
                };
                if let Ok(rid) = self.scheduler.add_pod(snapshot, r, now)? {
                    self.events.push(SimEvent::Replaced {
                        victim: full.clone(),
                        replacement: rid,
                    });
                    drained.replaced.push((full, rid));
                    recovering.push((rid, c));
                }
            }
            if waiting.is_empty() {
                break;
            }
            // kubectl retries the refused evictions; the budgets allow again as the
            // replacements become Ready.
            self.run(snapshot, |_, _| {})?;
            let before = recovering.len();
            recovering.retain(|(rid, c)| {
                if snapshot.pod_node(*rid).is_some() {
                    c.iter().for_each(|&i| allowed[i] += 1);
                    false
                } else {
                    true
                }
            });
            if recovering.len() == before {
                break;
            }
        }
        for (full, _, c) in waiting {
            let budget = c
                .iter()
                .find(|&&i| allowed[i] <= 0)
                .map_or_else(String::new, |&i| budgets[i].0.clone());
            drained.blocked.push((full, budget));
        }
        Ok(drained)
    }

    /// Removes `nodes` (drained, or lost in an outage) as the cluster would see it: each
    /// pod they ran is deleted, and one owned by a controller (other than a DaemonSet)
    /// comes back as a new pending pod of that controller, queued for [`Simulation::run`].
    /// Every name is checked before anything changes.
    pub fn drain(
        &mut self,
        snapshot: &mut Snapshot,
        nodes: &[String],
    ) -> Result<Drained, SimulationError> {
        self.drain_with_static_pods(snapshot, nodes, &|_| false)
    }

    /// [`Simulation::drain`], where the pods `is_static` names (`namespace/name`) are
    /// static pods' mirrors: they go with their node, whatever owns them.
    pub fn drain_with_static_pods(
        &mut self,
        snapshot: &mut Snapshot,
        nodes: &[String],
        is_static: &dyn Fn(&str) -> bool,
    ) -> Result<Drained, SimulationError> {
        if let Some(node) = nodes.iter().find(|n| snapshot.node_id(n).is_none()) {
            return Err(SimulationError::UnknownNode { node: node.clone() });
        }
        let now = self.clock.now();
        let mut drained = Drained::default();
        let mut replacements = Vec::new();
        for name in nodes {
            let Some(id) = snapshot.node_id(name) else {
                continue;
            };
            let pods: Vec<PodId> = snapshot.node(id).pods().to_vec();
            for p in pods {
                let Some(pod) = self.scheduler.delete_pod(snapshot, p, now) else {
                    continue;
                };
                let full = format!("{}/{}", snapshot.symbols().resolve(pod.namespace), pod.name);
                if is_static(&full) {
                    drained.mirror_pods.push(full);
                    continue;
                }
                match pod.controller.as_ref().map(|c| &c.kind) {
                    None => drained.lost.push(full),
                    Some(ControllerKind::DaemonSet) => drained.daemon_pods.push(full),
                    Some(_) => {
                        if let Some(r) = self.replacement(&pod) {
                            replacements.push((full, r));
                        }
                    }
                }
            }
            self.scheduler
                .remove_node(snapshot, name, now)
                .map_err(|_| SimulationError::UnknownNode { node: name.clone() })?;
            drained.nodes.push(name.clone());
        }
        for (victim, r) in replacements {
            if let Ok(id) = self.scheduler.add_pod(snapshot, r, now)? {
                self.events.push(SimEvent::Replaced {
                    victim: victim.clone(),
                    replacement: id,
                });
                drained.replaced.push((victim, id));
            }
        }
        Ok(drained)
    }

    /// The pod a controller creates in place of `pod`: pending, under a new name (a
    /// StatefulSet keeps the ordinal's name).
    fn replacement(&mut self, pod: &Pod) -> Option<Pod> {
        let c = pod.controller.as_ref()?;
        let mut r = pod.clone();
        r.node_name = None;
        // A new pod: no status, so no nomination (the evicted pod's may be stale).
        r.nominated_node_name = None;
        if c.kind != ControllerKind::StatefulSet {
            self.replacements += 1;
            r.name = replacement_name(&c.name, self.replacements).into();
        }
        Some(r)
    }

    /// Evicts a victim, and has its controller create a replacement.
    fn evict(
        &mut self,
        snapshot: &mut Snapshot,
        victim: PodId,
        node: NodeId,
        by: PodId,
    ) -> Result<(), SimulationError> {
        let now = self.clock.now();
        let Some(pod) = self.scheduler.delete_pod(snapshot, victim, now) else {
            return Ok(());
        };
        let name = format!("{}/{}", snapshot.symbols().resolve(pod.namespace), pod.name);
        let replacement = self.replacement(&pod);
        self.events.push(SimEvent::Preempted {
            victim: Box::new(pod),
            node,
            by,
        });
        if let Some(r) = replacement
            && let Ok(id) = self.scheduler.add_pod(snapshot, r, now)?
        {
            self.events.push(SimEvent::Replaced {
                victim: name,
                replacement: id,
            });
        }
        Ok(())
    }
}

/// A controller-style name (`<controller>-<5 characters>`), reproducible per run.
/// The taint the node lifecycle controller keeps on a cordoned node
/// (`TaintNodeUnschedulable`), which NodeUnschedulable and nodeTaintsPolicy read.
const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

fn replacement_name(controller: &str, n: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5DEE_CE66;
    let mut suffix = String::with_capacity(5);
    for _ in 0..5 {
        suffix.push(ALPHABET[(x % ALPHABET.len() as u64) as usize] as char);
        x /= ALPHABET.len() as u64;
    }
    format!("{controller}-{suffix}")
}
