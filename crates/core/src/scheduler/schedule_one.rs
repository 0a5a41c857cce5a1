//! The queue-driven loop, as kube-scheduler's `schedule_one.go` and event handlers run
//! it: pods enter the queue, `schedule_next` pops one and runs its cycle against the
//! cache, assumes it on the chosen node or hands it back to the queue (nominated, when
//! preemption found victims), and cluster events move waiting pods back.

use super::{Preemption, ScheduleResult, Scheduler, failure_cache};
use crate::api::Pod;
use crate::framework::Point;
use crate::framework::{ActionType, ClusterEvent, EventResource, Status};
use crate::plugins::volumebinding;
use crate::queue::{PendingCounts, SchedulingQueue};
use crate::snapshot::{CacheError, NodeId, PodId, Snapshot, SnapshotError};

/// How many bindings pass between prunings of the cache's unused counting groups.
const PRUNE_EVERY: u32 = 4096;
use std::time::Duration;

/// What `schedule_next` did with the pod it popped.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Attempt {
    /// The pod was assumed on `node`: the caller binds it, then calls
    /// [`Scheduler::finish_binding`] (or [`Scheduler::binding_failed`]).
    Assumed {
        /// The pod.
        pod: PodId,
        /// The chosen node.
        node: NodeId,
        /// How many cycles the pod has had, this one included.
        attempts: u32,
        /// How many nodes passed Filter in this cycle.
        feasible_nodes: usize,
    },
    /// No node fits now; the pod waits in the queue for an event that may help.
    Unschedulable {
        /// The pod.
        pod: PodId,
        /// upstream's `FitError` message (with PostFilter's words).
        message: String,
        /// The victims to evict so the pod fits its nominated node, if preemption
        /// found some: the caller deletes each (then [`Scheduler::delete_pod`]).
        preemption: Option<Preemption>,
    },
    /// A plugin failed (not a verdict): the pod backs off.
    Error {
        /// The pod.
        pod: PodId,
        /// The error.
        message: String,
    },
}

/// Where a pod stands after the scheduler is done with it for now.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PodOutcome {
    /// Bound (or assumed) to a node.
    Bound(NodeId),
    /// Waiting, with the reason its last cycle gave (or that it has not run yet).
    Pending(String),
}

/// Why a pod cannot enter the queue.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnqueueError {
    /// No profile serves the pod's `spec.schedulerName`.
    #[error("pod {pod}: spec.schedulerName: no profile serves scheduler {scheduler:?}")]
    NoProfile {
        /// `namespace/name`.
        pod: String,
        /// The scheduler it asks for.
        scheduler: String,
    },
    /// The pod is not in the cache, or already bound.
    #[error("pod {pod:?}: not a pending pod of the cache")]
    NotPending {
        /// The pod.
        pod: PodId,
    },
    /// The queue refused it.
    #[error(transparent)]
    Queue(#[from] crate::queue::QueueError),
}

/// What a failed cycle does to the pod's nomination (upstream's `NominatingInfo`).
enum Nomination {
    /// Preemption chose a node: nominate the pod there.
    Nominate(Preemption),
    /// No node could be made to fit: clear it (`ModeOverride` with no node).
    Clear,
    /// Leave it as it is (`ModeNoop`): not eligible to preempt, or no PostFilter ran.
    Keep,
}

/// The plugins whose statuses rejected the pod; empty when one is unknown (then any
/// event may help).
fn rejecting_plugins(result: &ScheduleResult) -> Vec<&'static str> {
    let ScheduleResult::Unschedulable { node_statuses, .. } = result else {
        return Vec::new();
    };
    let mut out: Vec<&'static str> = Vec::new();
    for (_, s) in node_statuses {
        match s.plugin() {
            Some(p) if !out.contains(&p) => out.push(p),
            Some(_) => {}
            None => return Vec::new(),
        }
    }
    out
}

impl Scheduler {
    /// The scheduling queue.
    pub fn queue(&self) -> &SchedulingQueue {
        &self.queue
    }

    /// Retries the unschedulable pods that waited longer than
    /// `podMaxInUnschedulablePodsDuration` (`flushUnschedulablePodsLeftover`); the live
    /// scheduler calls it every 30 s, as kube-scheduler does. Returns how many moved.
    pub fn flush_unschedulable_leftover(&mut self, now: Duration) -> usize {
        self.queue.flush_unschedulable_leftover(now)
    }

    /// How many pods wait where.
    pub fn pending(&self) -> PendingCounts {
        self.queue.pending()
    }

    /// Adds a pending pod of the cache to the queue. A pod a PreEnqueue plugin holds
    /// back (scheduling gates) waits, gated, until it is updated. One that enters the
    /// queue with `status.nominatedNodeName` naming a node of the cache is nominated
    /// there, as the queue's `moveToActiveQ` does (`AddNominatedPod` with the pod's own
    /// status): its cycle tries that node first, and the node keeps its room for it
    /// against pods of lower or equal priority.
    pub fn enqueue(
        &mut self,
        snapshot: &Snapshot,
        id: PodId,
        now: Duration,
    ) -> Result<(), EnqueueError> {
        let pod = snapshot
            .pod(id)
            .filter(|_| snapshot.pod_node(id).is_none())
            .ok_or(EnqueueError::NotPending { pod: id })?;
        let profile =
            self.profile_index(&pod.scheduler_name)
                .ok_or_else(|| EnqueueError::NoProfile {
                    pod: format!("{}/{}", snapshot.symbols().resolve(pod.namespace), pod.name),
                    scheduler: pod.scheduler_name.to_string(),
                })?;
        let gated = self.held_back(id, pod, profile);
        self.queue.add(id, pod.priority, profile, gated, now)?;
        if !gated {
            self.nominate_named(snapshot, id);
        }
        Ok(())
    }

    /// Nominates the pod to the node its `status.nominatedNodeName` names, if the cache
    /// holds that node (upstream keeps a nomination to an unknown node, which no
    /// Filter ever reads); a nomination made in memory is never cleared here.
    fn nominate_named(&mut self, snapshot: &Snapshot, id: PodId) {
        let node = snapshot
            .pod(id)
            .and_then(|p| p.nominated_node_name.as_deref())
            .and_then(|n| snapshot.node_id(n));
        if let Some(n) = node
            && self.nominator.node_of(id) != Some(n)
        {
            self.nominator.add(id, n);
        }
    }

    /// Runs the profile's PreEnqueue plugins: whether they hold the pod back. A gated
    /// pod's reason is kept as its pending message, and cleared once it passes.
    fn held_back(&mut self, id: PodId, pod: &Pod, profile: usize) -> bool {
        let gate = self.profiles[profile].run_pre_enqueue(pod);
        if gate.is_success() {
            if self.queue.queue_of(id) == Some(crate::queue::QueueName::Gated) {
                self.last_failure.remove(&id);
            }
            return false;
        }
        self.last_failure.insert(id, gate.reasons().join(", "));
        true
    }

    /// A pending pod changed (labels, priority, scheduling gates): the queue re-keys it
    /// and a gated or unschedulable pod is tried again.
    pub(crate) fn pending_pod_updated(
        &mut self,
        snapshot: &Snapshot,
        id: PodId,
        now: Duration,
    ) -> Result<(), EnqueueError> {
        let pod = snapshot
            .pod(id)
            .ok_or(EnqueueError::NotPending { pod: id })?;
        let profile = self.profile_index(&pod.scheduler_name).unwrap_or(0);
        let gated = self.held_back(id, pod, profile);
        self.queue.update(id, pod.priority, gated, now)?;
        if !gated {
            self.nominate_named(snapshot, id);
        }
        Ok(())
    }

    /// Records the pod's cycles each time it is scheduled, for [`Self::explanation`];
    /// any number of pods may be recorded in one run (explain's workload pick).
    pub fn explain_pod(&mut self, id: PodId) {
        self.explain.entry(id).or_default();
    }

    /// The last recorded cycle of a pod named by [`Self::explain_pod`].
    pub fn explanation(&self, id: PodId) -> Option<&super::Explanation> {
        self.explain.get(&id)?.last.as_ref()
    }

    /// The failed cycle of that pod behind its last one: the latest earlier cycle whose
    /// preemption evicted pods and nominated a node for it (none when the last cycle
    /// is the pod's first, or no earlier cycle preempted).
    pub fn preempting_explanation(&self, id: PodId) -> Option<&super::Explanation> {
        self.explain.get(&id)?.preempting.as_ref()
    }

    /// Pops the next pod and runs its cycle. A pod that fits is assumed on its node in
    /// `snapshot` (counted there from now on); one that does not goes back to the queue,
    /// nominated when preemption found victims. `None` when no pod can be popped.
    pub fn schedule_next(&mut self, snapshot: &mut Snapshot, now: Duration) -> Option<Attempt> {
        let popped = self.queue.pop(now)?;
        let id = popped.pod;
        let Some(pod) = snapshot.pod(id) else {
            self.queue.delete(id);
            return self.schedule_next(snapshot, now);
        };
        let nominated = self.nominator.node_of(id);
        let recording = self.explain.contains_key(&id);
        // A pod with a nomination of its own runs a different cycle, and an explained
        // one must record its own: neither uses nor feeds the failure cache.
        let cacheable = !recording && nominated.is_none();
        let nominations = self.nominator.generation();
        if cacheable && let Some(f) = self.failures.lookup(snapshot, nominations, pod) {
            let (message, rejected_by) = (f.message.clone(), f.rejected_by.clone());
            let (advance, draws) = (f.start_advance, f.draws);
            // The side effects the cycle would have had.
            self.current = self.profile_index(&pod.scheduler_name).unwrap_or(0);
            let all = snapshot.nodes().len();
            if all > 0 {
                self.next_start_node_index = (self.next_start_node_index + advance) % all;
            }
            self.rng.skip(draws);
            return Some(self.unschedulable(
                snapshot,
                id,
                message,
                rejected_by,
                Nomination::Keep,
                popped.cycle,
                now,
            ));
        }
        let (start_before, draws_before) = (self.next_start_node_index, self.rng.draws());
        let (result, preemption, clears) = if recording {
            let (e, clears) = self.explained_cycle(snapshot, pod, nominated);
            let out = (e.result.clone(), e.preemption.clone(), clears);
            if let Some(recorded) = self.explain.get_mut(&id) {
                recorded.push(e);
            }
            out
        } else {
            let c = self.cycle(snapshot, pod, nominated, false);
            (c.result, c.preemption, c.clears_nomination)
        };
        Some(match result {
            ScheduleResult::Scheduled {
                node,
                feasible_nodes,
                ..
            } => {
                self.nominator.delete(id);
                self.queue.done(id);
                self.last_failure.remove(&id);
                // The pod was popped, so it is a pending pod of the cache.
                if let Err(e) = snapshot.assume_pod(id, node) {
                    let message = format!("error: {e}");
                    self.last_failure.insert(id, message.clone());
                    return Some(Attempt::Error { pod: id, message });
                }
                self.reserve_volumes(snapshot, id, node, now);
                self.cycles_since_prune += 1;
                if self.cycles_since_prune >= PRUNE_EVERY {
                    self.cycles_since_prune = 0;
                    snapshot.prune_groups();
                }
                Attempt::Assumed {
                    pod: id,
                    node,
                    attempts: popped.attempts,
                    feasible_nodes,
                }
            }
            ScheduleResult::Unschedulable { ref message, .. } => {
                let message = message.clone();
                let rejected_by = rejecting_plugins(&result);
                if cacheable && preemption.is_none() {
                    let all = snapshot.nodes().len().max(1);
                    let outcome = failure_cache::Outcome {
                        message: message.clone(),
                        rejected_by: rejected_by.clone(),
                        start_advance: (self.next_start_node_index + all - start_before % all)
                            % all,
                        draws: self.rng.draws().wrapping_sub(draws_before),
                    };
                    if let Some(pod) = snapshot.pod(id) {
                        self.failures.insert(snapshot, nominations, pod, outcome);
                    }
                }
                let nomination = match preemption {
                    Some(p) => Nomination::Nominate(p),
                    None if clears => Nomination::Clear,
                    None => Nomination::Keep,
                };
                self.unschedulable(
                    snapshot,
                    id,
                    message,
                    rejected_by,
                    nomination,
                    popped.cycle,
                    now,
                )
            }
            ScheduleResult::Error(s) => {
                let message = format!("error: {s}");
                self.last_failure.insert(id, message.clone());
                let _ = self.queue.add_backoff(id, now);
                Attempt::Error { pod: id, message }
            }
        })
    }

    /// VolumeBinding's Reserve and PreBind for a pod just assumed on `node`, when its
    /// profile runs the plugin: the pod's waiting claims are bound there, and pods
    /// waiting for a claim or volume change are told.
    fn reserve_volumes(&mut self, snapshot: &mut Snapshot, id: PodId, node: NodeId, now: Duration) {
        let Some(pod) = snapshot.pod(id) else {
            return;
        };
        let runs = self.profile_index(&pod.scheduler_name).is_some_and(|i| {
            self.profiles[i]
                .enabled(Point::Reserve)
                .iter()
                .any(|(n, _)| n == volumebinding::NAME)
        });
        if !runs {
            return;
        }
        let bound = volumebinding::bind_pod_volumes(snapshot, id, node);
        if bound.matched + bound.provisioned == 0 {
            return;
        }
        self.on_event(
            &ClusterEvent::new(EventResource::PersistentVolumeClaim, ActionType::UPDATE),
            now,
        );
        let pv_action = if bound.provisioned > 0 {
            ActionType::ADD | ActionType::UPDATE
        } else {
            ActionType::UPDATE
        };
        self.on_event(
            &ClusterEvent::new(EventResource::PersistentVolume, pv_action),
            now,
        );
    }

    /// Hands a pod whose cycle failed back to the queue, nominated when preemption found
    /// victims, and records its message. A new nomination takes the node from the
    /// lower-priority pods nominated there (`prepareCandidate`); a failed preemption
    /// clears the pod's own nomination only when no node could be made to fit.
    #[allow(clippy::too_many_arguments)]
    fn unschedulable(
        &mut self,
        snapshot: &Snapshot,
        id: PodId,
        message: String,
        rejected_by: Vec<&'static str>,
        nomination: Nomination,
        cycle: u64,
        now: Duration,
    ) -> Attempt {
        let preemption = match nomination {
            Nomination::Nominate(mut p) => {
                let priority = snapshot.pod(id).map_or(0, |pod| pod.priority);
                p.cleared_nominations = self
                    .nominator
                    .on_node(p.node)
                    .iter()
                    .copied()
                    .filter(|other| {
                        *other != id && snapshot.pod(*other).is_some_and(|o| o.priority < priority)
                    })
                    .collect();
                for other in &p.cleared_nominations {
                    self.nominator.delete(*other);
                }
                self.nominator.add(id, p.node);
                Some(p)
            }
            Nomination::Clear => {
                self.nominator.delete(id);
                None
            }
            Nomination::Keep => None,
        };
        self.last_failure.insert(id, message.clone());
        // The pod was popped, so it is in the queue.
        let _ = self.queue.add_unschedulable(id, rejected_by, cycle, now);
        Attempt::Unschedulable {
            pod: id,
            message,
            preemption,
        }
    }

    /// The binding of an assumed pod went through: pods waiting for a pod to be
    /// added may now fit.
    pub fn finish_binding(
        &mut self,
        snapshot: &mut Snapshot,
        id: PodId,
        now: Duration,
    ) -> Result<(), CacheError> {
        snapshot.finish_binding(id)?;
        self.on_event(&ClusterEvent::ASSIGNED_POD_ADD, now);
        Ok(())
    }

    /// The binding of an assumed pod failed: the cache forgets the assumption and the
    /// pod backs off in the queue (`handleBindingCycleError`).
    pub fn binding_failed(
        &mut self,
        snapshot: &mut Snapshot,
        id: PodId,
        now: Duration,
    ) -> Result<(), EnqueueError> {
        snapshot
            .forget_pod(id)
            .map_err(|_| EnqueueError::NotPending { pod: id })?;
        self.on_event(&ClusterEvent::ASSIGNED_POD_DELETE, now);
        self.enqueue(snapshot, id, now)?;
        // The failure handler is given `clearNominatedNode`: whatever the status says.
        self.nominator.delete(id);
        self.queue.add_backoff(id, now)?;
        Ok(())
    }

    /// A cluster event: every waiting pod a plugin that rejected it registered this
    /// event for goes back to the active (or backoff) queue.
    pub fn on_event(&mut self, event: &ClusterEvent, now: Duration) {
        let profiles = &self.profiles;
        self.queue.on_event(event, now, |profile, rejected_by, e| {
            profiles
                .get(profile)
                .is_none_or(|p| p.worth_requeuing(rejected_by, e))
        });
    }

    /// Adds a node to the cache and tells the queue.
    pub fn add_node(
        &mut self,
        snapshot: &mut Snapshot,
        node: crate::api::Node,
        now: Duration,
    ) -> Result<NodeId, SnapshotError> {
        let id = snapshot.add_node(node)?;
        self.on_event(&ClusterEvent::NODE_ADD, now);
        Ok(id)
    }

    /// Adds a pod to the cache: a bound one is counted on its node (and the queue is
    /// told), a pending one is queued.
    pub fn add_pod(
        &mut self,
        snapshot: &mut Snapshot,
        pod: Pod,
        now: Duration,
    ) -> Result<Result<PodId, EnqueueError>, SnapshotError> {
        let bound = pod.node_name.is_some();
        let id = snapshot.add_pod(pod)?;
        if bound {
            self.on_event(&ClusterEvent::ASSIGNED_POD_ADD, now);
            return Ok(Ok(id));
        }
        // The queue's Add nominates a pod its status names (`addNominatedPod`).
        Ok(self.enqueue(snapshot, id, now).map(|()| id))
    }

    /// Takes the pod's `status.nominatedNodeName` as its nomination (none when the
    /// status names none, or a node the cache does not hold).
    fn nominate_from_status(&mut self, snapshot: &Snapshot, id: PodId) {
        let node = snapshot
            .pod(id)
            .and_then(|p| p.nominated_node_name.as_deref())
            .and_then(|n| snapshot.node_id(n));
        match node {
            Some(n) if self.nominator.node_of(id) != Some(n) => self.nominator.add(id, n),
            Some(_) => {}
            None => {
                self.nominator.delete(id);
            }
        }
    }

    /// The pending pods nominated to `node`.
    pub fn nominated_to(&self, node: NodeId) -> Vec<PodId> {
        self.nominator.on_node(node).to_vec()
    }

    /// Deletes a pod from the cache and the queue (a victim of preemption, or a watch's
    /// DELETED event); a bound pod's room goes back to the queue's waiting pods.
    pub fn delete_pod(&mut self, snapshot: &mut Snapshot, id: PodId, now: Duration) -> Option<Pod> {
        let bound = snapshot.pod_node(id).is_some();
        self.queue.delete(id);
        self.nominator.delete(id);
        self.last_failure.remove(&id);
        let pod = snapshot.remove_pod(id)?;
        if bound {
            self.on_event(
                &ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE),
                now,
            );
        }
        Some(pod)
    }

    /// Where the pod stands: bound, or pending with its last cycle's reason.
    pub fn outcome(&self, snapshot: &Snapshot, id: PodId) -> PodOutcome {
        match snapshot.pod_node(id) {
            Some(node) => PodOutcome::Bound(node),
            None => PodOutcome::Pending(
                self.last_failure
                    .get(&id)
                    .cloned()
                    .unwrap_or_else(|| "waiting in the scheduling queue".into()),
            ),
        }
    }

    /// The node preemption nominated the pod to, if any.
    pub fn nominated_node(&self, id: PodId) -> Option<NodeId> {
        self.nominator.node_of(id)
    }

    /// The status a gated pod's PreEnqueue plugins gave, if it is gated.
    pub fn gate_status(&self, snapshot: &Snapshot, id: PodId) -> Option<Status> {
        let pod = snapshot.pod(id)?;
        let profile = self.profile_index(&pod.scheduler_name)?;
        let s = self.profiles[profile].run_pre_enqueue(pod);
        (!s.is_success()).then_some(s)
    }
}

/// The update actions between two versions of a node.
fn node_update(old: &crate::api::Node, new: &crate::api::Node) -> ActionType {
    let changes = [
        (old.labels != new.labels, ActionType::UPDATE_NODE_LABEL),
        (
            old.taints != new.taints || old.unschedulable != new.unschedulable,
            ActionType::UPDATE_NODE_TAINT,
        ),
        (
            old.allocatable != new.allocatable,
            ActionType::UPDATE_NODE_ALLOCATABLE,
        ),
    ];
    changes
        .into_iter()
        .filter(|(changed, _)| *changed)
        .map(|(_, a)| a)
        .reduce(|a, b| a | b)
        .unwrap_or(ActionType::UPDATE_OTHER)
}

impl Scheduler {
    /// A node changed: the cache follows, and pods waiting for such a change are
    /// retried.
    pub fn update_node(
        &mut self,
        snapshot: &mut Snapshot,
        node: crate::api::Node,
        now: Duration,
    ) -> Result<NodeId, CacheError> {
        let old = snapshot
            .node_id(&node.name)
            .map(|id| snapshot.node(id).node.clone());
        let action = old.map_or(ActionType::UPDATE_OTHER, |o| node_update(&o, &node));
        let name = node.name.clone();
        let id = snapshot.update_node(&name, node)?;
        self.on_event(&ClusterEvent::new(EventResource::Node, action), now);
        Ok(id)
    }

    /// A node was deleted: nominations to it are dropped.
    pub fn remove_node(
        &mut self,
        snapshot: &mut Snapshot,
        name: &str,
        now: Duration,
    ) -> Result<crate::api::Node, CacheError> {
        if let Some(id) = snapshot.node_id(name) {
            self.nominator.delete_node(id);
        }
        let node = snapshot.remove_node(name)?;
        self.on_event(
            &ClusterEvent::new(EventResource::Node, ActionType::DELETE),
            now,
        );
        Ok(node)
    }

    /// A pod changed (a watch's MODIFIED event): a pending pod is re-queued as it now
    /// is; a bound (or newly bound) one is recounted and waiting pods may be retried.
    pub fn update_pod(
        &mut self,
        snapshot: &mut Snapshot,
        pod: Pod,
        now: Duration,
    ) -> Result<PodId, CacheError> {
        let uid = pod.uid.clone();
        let old = snapshot.pod_by_uid(&uid).and_then(|id| snapshot.pod(id));
        let old_labels = old.map(|p| p.labels.clone());
        let old_nominated = old.and_then(|p| p.nominated_node_name.clone());
        let id = snapshot.update_pod(&uid, pod)?;
        if snapshot.pod_node(id).is_some() {
            self.queue.delete(id);
            self.nominator.delete(id);
            self.last_failure.remove(&id);
            let labels_changed = snapshot
                .pod(id)
                .is_some_and(|p| old_labels.as_ref() != Some(&p.labels));
            let action = if labels_changed {
                ActionType::UPDATE_POD_LABEL
            } else {
                ActionType::UPDATE_OTHER
            };
            self.on_event(&ClusterEvent::new(EventResource::AssignedPod, action), now);
        } else {
            if self.queue.contains(id) {
                let _ = self.pending_pod_updated(snapshot, id, now);
            } else {
                let _ = self.enqueue(snapshot, id, now);
            }
            // `UpdateNominatedPod`: a status that names a nomination, or stops naming
            // one, decides; while neither the old nor the new status names one, the
            // nomination made in memory stays (the status write may still be on its
            // way).
            let new_nominated = snapshot
                .pod(id)
                .and_then(|p| p.nominated_node_name.as_ref());
            if old_nominated.is_some() || new_nominated.is_some() {
                self.nominate_from_status(snapshot, id);
            }
        }
        Ok(id)
    }
}
