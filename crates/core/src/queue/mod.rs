//! The scheduling queue, as kube-scheduler's `PriorityQueue`: pods wait in the active
//! queue (PrioritySort order), in the backoff queue after a failed attempt, or among the
//! unschedulable pods until a cluster event one of their rejecting plugins registered
//! could make them fit. Gated pods (a PreEnqueue plugin said no) wait until they are
//! updated. Time is passed in by the caller, so the same queue runs on a virtual clock
//! (simulation) and on a real one (the live scheduler).

mod clock;

pub use clock::{Clock, SystemClock, VirtualClock};

use crate::framework::ClusterEvent;
use crate::snapshot::PodId;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::time::Duration;

/// Default `podInitialBackoffSeconds`.
pub(crate) const DEFAULT_POD_INITIAL_BACKOFF: Duration = Duration::from_secs(1);
/// Default `podMaxBackoffSeconds`.
pub(crate) const DEFAULT_POD_MAX_BACKOFF: Duration = Duration::from_secs(10);
/// How long a pod stays among the unschedulable ones before it is retried anyway
/// (`podMaxInUnschedulablePodsDuration`).
pub(crate) const DEFAULT_MAX_IN_UNSCHEDULABLE: Duration = Duration::from_secs(5 * 60);

/// Errors of queue operations; each names the pod.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueueError {
    /// The pod is already queued.
    #[error("pod {pod:?}: already in the scheduling queue")]
    AlreadyQueued {
        /// The pod.
        pod: PodId,
    },
    /// The pod is not in the queue.
    #[error("pod {pod:?}: not in the scheduling queue")]
    NotQueued {
        /// The pod.
        pod: PodId,
    },
}

/// Where a queued pod waits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueueName {
    /// Ready to be popped.
    Active,
    /// Waiting for its backoff to expire.
    Backoff,
    /// Waiting for a cluster event that may make it schedulable.
    Unschedulable,
    /// Held by a PreEnqueue plugin (scheduling gates) until it is updated.
    Gated,
    /// Popped: a scheduling cycle (or binding) is under way.
    InFlight,
}

/// How many pods wait where (`scheduler_pending_pods{queue}`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PendingCounts {
    /// In the active queue.
    pub active: usize,
    /// In the backoff queue.
    pub backoff: usize,
    /// Among the unschedulable pods.
    pub unschedulable: usize,
    /// Gated.
    pub gated: usize,
}

/// A popped pod, with what its cycle needs to know.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Popped {
    /// The pod.
    pub pod: PodId,
    /// Its profile's index.
    pub profile: usize,
    /// The scheduling cycle this attempt runs in.
    pub cycle: u64,
    /// How many times the pod has been popped, this attempt included.
    pub attempts: u32,
}

/// The queue's view of a pod.
#[derive(Clone, Debug)]
struct Info {
    priority: i32,
    profile: usize,
    /// When the pod was last added or requeued (PrioritySort's tie-break).
    timestamp: Duration,
    /// Arrival order, the tie-break among equal timestamps.
    seq: u64,
    attempts: u32,
    /// The plugins that rejected the pod in its last cycle (empty: any event helps).
    rejected_by: Vec<&'static str>,
    queue: QueueName,
    /// Bumped on every move, so stale heap entries are skipped.
    generation: u64,
}

#[derive(PartialEq, Eq)]
struct ActiveKey {
    priority: i32,
    timestamp: Duration,
    seq: u64,
    pod: PodId,
    generation: u64,
}

impl Ord for ActiveKey {
    /// Greater pops first: higher priority, then the earlier timestamp (PrioritySort).
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority
            .cmp(&other.priority)
            .then_with(|| other.timestamp.cmp(&self.timestamp))
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for ActiveKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Queue settings from the KubeSchedulerConfiguration.
#[derive(Copy, Clone, Debug)]
pub struct QueueConfig {
    /// `podInitialBackoffSeconds`.
    pub initial_backoff: Duration,
    /// `podMaxBackoffSeconds`.
    pub max_backoff: Duration,
    /// `podMaxInUnschedulablePodsDuration`.
    pub max_in_unschedulable: Duration,
    /// Pop from the backoff queue when the active queue is empty
    /// (`SchedulerPopFromBackoffQ`, on by default since 1.33).
    pub pop_from_backoff: bool,
}

impl Default for QueueConfig {
    fn default() -> Self {
        Self {
            initial_backoff: DEFAULT_POD_INITIAL_BACKOFF,
            max_backoff: DEFAULT_POD_MAX_BACKOFF,
            max_in_unschedulable: DEFAULT_MAX_IN_UNSCHEDULABLE,
            pop_from_backoff: true,
        }
    }
}

/// The scheduling queue.
#[derive(Default)]
pub struct SchedulingQueue {
    config: QueueConfig,
    pods: HashMap<PodId, Info>,
    active: BinaryHeap<ActiveKey>,
    backoff: BinaryHeap<Reverse<(Duration, u64, PodId, u64)>>,
    /// The pods among the unschedulable ones, so an event visits only them.
    unschedulable: BTreeSet<PodId>,
    next_seq: u64,
    scheduling_cycle: u64,
    move_request_cycle: u64,
    incoming: u64,
}

impl std::fmt::Debug for SchedulingQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchedulingQueue")
            .field("pending", &self.pending())
            .field("scheduling_cycle", &self.scheduling_cycle)
            .finish_non_exhaustive()
    }
}

impl SchedulingQueue {
    /// An empty queue.
    pub fn new(config: QueueConfig) -> Self {
        Self {
            config,
            ..Self::default()
        }
    }

    /// The backoff after `attempts` failed attempts: the initial backoff doubled per
    /// further attempt, capped at the maximum (`calculateBackoffDuration`).
    pub(crate) fn backoff_duration(&self, attempts: u32) -> Duration {
        let mut d = self.config.initial_backoff;
        for _ in 1..attempts {
            d = d.saturating_mul(2);
            if d >= self.config.max_backoff {
                return self.config.max_backoff;
            }
        }
        d.min(self.config.max_backoff)
    }

    /// Adds a new pending pod: to the active queue, or held as gated.
    pub fn add(
        &mut self,
        pod: PodId,
        priority: i32,
        profile: usize,
        gated: bool,
        now: Duration,
    ) -> Result<(), QueueError> {
        if self.pods.contains_key(&pod) {
            return Err(QueueError::AlreadyQueued { pod });
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.incoming += 1;
        self.pods.insert(
            pod,
            Info {
                priority,
                profile,
                timestamp: now,
                seq,
                attempts: 0,
                rejected_by: Vec::new(),
                queue: QueueName::Gated,
                generation: 0,
            },
        );
        let to = if gated {
            QueueName::Gated
        } else {
            QueueName::Active
        };
        self.move_to(pod, to, now);
        Ok(())
    }

    /// A pending pod changed (its priority, or its scheduling gates): it is re-keyed,
    /// and a gated or unschedulable pod is tried again (`Update`).
    pub fn update(
        &mut self,
        pod: PodId,
        priority: i32,
        gated: bool,
        now: Duration,
    ) -> Result<(), QueueError> {
        let info = self.info_mut(pod)?;
        info.priority = priority;
        let to = match (info.queue, gated) {
            (QueueName::InFlight, _) => return Ok(()),
            (_, true) => QueueName::Gated,
            (QueueName::Backoff, false) => QueueName::Backoff,
            (_, false) => QueueName::Active,
        };
        self.move_to(pod, to, now);
        Ok(())
    }

    /// The queue's record of a pod it holds.
    fn info_mut(&mut self, pod: PodId) -> Result<&mut Info, QueueError> {
        self.pods.get_mut(&pod).ok_or(QueueError::NotQueued { pod })
    }

    /// Forgets a pod (deleted, or bound by someone else).
    pub fn delete(&mut self, pod: PodId) {
        self.pods.remove(&pod);
        self.unschedulable.remove(&pod);
    }

    /// Whether the pod is queued (in flight included).
    pub fn contains(&self, pod: PodId) -> bool {
        self.pods.contains_key(&pod)
    }

    /// Where the pod waits.
    pub(crate) fn queue_of(&self, pod: PodId) -> Option<QueueName> {
        self.pods.get(&pod).map(|i| i.queue)
    }

    /// The plugins that rejected the pod in its last cycle.
    pub fn rejected_by(&self, pod: PodId) -> &[&'static str] {
        self.pods
            .get(&pod)
            .map_or(&[], |i| i.rejected_by.as_slice())
    }

    /// Pops the next pod to schedule: the head of the active queue after moving every
    /// pod whose backoff expired; with an empty active queue, the backoff queue's head.
    pub fn pop(&mut self, now: Duration) -> Option<Popped> {
        self.flush_backoff_completed(now);
        let pod = self.pop_active().or_else(|| {
            if self.config.pop_from_backoff {
                self.pop_backoff()
            } else {
                None
            }
        })?;
        self.scheduling_cycle += 1;
        let info = self.pods.get_mut(&pod)?;
        info.attempts += 1;
        info.queue = QueueName::InFlight;
        info.generation += 1;
        Some(Popped {
            pod,
            profile: info.profile,
            cycle: self.scheduling_cycle,
            attempts: info.attempts,
        })
    }

    fn pop_active(&mut self) -> Option<PodId> {
        while let Some(k) = self.active.pop() {
            if self.is_current(k.pod, QueueName::Active, k.generation) {
                return Some(k.pod);
            }
        }
        None
    }

    fn pop_backoff(&mut self) -> Option<PodId> {
        while let Some(Reverse((_, _, pod, generation))) = self.backoff.pop() {
            if self.is_current(pod, QueueName::Backoff, generation) {
                return Some(pod);
            }
        }
        None
    }

    fn is_current(&self, pod: PodId, queue: QueueName, generation: u64) -> bool {
        self.pods
            .get(&pod)
            .is_some_and(|i| i.queue == queue && i.generation == generation)
    }

    /// The pod's cycle ended without a node: `rejected_by` are the plugins that
    /// turned it down. It waits among the unschedulable pods, or in backoff when an
    /// event arrived while it was in flight (`AddUnschedulableIfNotPresent`).
    pub(crate) fn add_unschedulable(
        &mut self,
        pod: PodId,
        rejected_by: Vec<&'static str>,
        cycle: u64,
        now: Duration,
    ) -> Result<(), QueueError> {
        let info = self.info_mut(pod)?;
        info.rejected_by = rejected_by;
        info.timestamp = now;
        let to = if self.move_request_cycle >= cycle {
            QueueName::Backoff
        } else {
            QueueName::Unschedulable
        };
        self.move_to(pod, to, now);
        Ok(())
    }

    /// The pod's cycle or binding failed with an error: it waits out its backoff.
    pub(crate) fn add_backoff(&mut self, pod: PodId, now: Duration) -> Result<(), QueueError> {
        let info = self.info_mut(pod)?;
        info.rejected_by.clear();
        info.timestamp = now;
        self.move_to(pod, QueueName::Backoff, now);
        Ok(())
    }

    /// The pod was bound: it leaves the queue.
    pub fn done(&mut self, pod: PodId) {
        self.delete(pod);
    }

    /// A cluster event happened: every unschedulable pod that `worth` says it may help
    /// moves to backoff (still backing off) or to the active queue
    /// (`MoveAllToActiveOrBackoffQueue`). `worth(profile, rejected_by)` decides.
    pub(crate) fn on_event(
        &mut self,
        event: &ClusterEvent,
        now: Duration,
        mut worth: impl FnMut(usize, &[&'static str], &ClusterEvent) -> bool,
    ) -> usize {
        self.move_request_cycle = self.scheduling_cycle;
        let moved: Vec<PodId> = self
            .unschedulable
            .iter()
            .filter(|id| {
                self.pods
                    .get(id)
                    .is_some_and(|i| worth(i.profile, &i.rejected_by, event))
            })
            .copied()
            .collect();
        for pod in &moved {
            self.requeue(*pod, now);
        }
        moved.len()
    }

    /// Unschedulable pods that waited longer than `podMaxInUnschedulablePodsDuration`
    /// are retried anyway (`flushUnschedulablePodsLeftover`).
    pub fn flush_unschedulable_leftover(&mut self, now: Duration) -> usize {
        let max = self.config.max_in_unschedulable;
        let stale: Vec<PodId> = self
            .unschedulable
            .iter()
            .filter(|id| {
                self.pods
                    .get(id)
                    .is_some_and(|i| now.saturating_sub(i.timestamp) > max)
            })
            .copied()
            .collect();
        for pod in &stale {
            self.requeue(*pod, now);
        }
        stale.len()
    }

    fn requeue(&mut self, pod: PodId, now: Duration) {
        let to = if self.backoff_expiry(pod).is_some_and(|t| t > now) {
            QueueName::Backoff
        } else {
            QueueName::Active
        };
        self.move_to(pod, to, now);
    }

    /// Moves pods whose backoff expired to the active queue (`flushBackoffQCompleted`).
    pub(crate) fn flush_backoff_completed(&mut self, now: Duration) {
        while let Some(Reverse((expiry, _, pod, generation))) = self.backoff.peek().copied() {
            if !self.is_current(pod, QueueName::Backoff, generation) {
                self.backoff.pop();
                continue;
            }
            if expiry > now {
                break;
            }
            self.backoff.pop();
            self.move_to(pod, QueueName::Active, now);
        }
    }

    /// When the earliest backoff expires, if any pod backs off: where a virtual clock
    /// jumps to when the active queue is empty.
    pub fn next_backoff_expiry(&self) -> Option<Duration> {
        self.backoff
            .iter()
            .filter(|Reverse((_, _, pod, g))| self.is_current(*pod, QueueName::Backoff, *g))
            .map(|Reverse((t, ..))| *t)
            .min()
    }

    fn backoff_expiry(&self, pod: PodId) -> Option<Duration> {
        let info = self.pods.get(&pod)?;
        (info.attempts > 0).then(|| info.timestamp + self.backoff_duration(info.attempts))
    }

    fn move_to(&mut self, pod: PodId, to: QueueName, now: Duration) {
        let expiry = self.backoff_expiry(pod).unwrap_or(now);
        let Some(info) = self.pods.get_mut(&pod) else {
            return;
        };
        if info.queue == QueueName::Unschedulable {
            self.unschedulable.remove(&pod);
        }
        if to == QueueName::Unschedulable {
            self.unschedulable.insert(pod);
        }
        info.queue = to;
        info.generation += 1;
        match to {
            QueueName::Active => self.active.push(ActiveKey {
                priority: info.priority,
                timestamp: info.timestamp,
                seq: info.seq,
                pod,
                generation: info.generation,
            }),
            QueueName::Backoff => {
                self.backoff
                    .push(Reverse((expiry, info.seq, pod, info.generation)));
            }
            QueueName::Unschedulable | QueueName::Gated | QueueName::InFlight => {}
        }
    }

    /// How many pods wait where.
    pub fn pending(&self) -> PendingCounts {
        let mut c = PendingCounts::default();
        for i in self.pods.values() {
            match i.queue {
                QueueName::Active => c.active += 1,
                QueueName::Backoff => c.backoff += 1,
                QueueName::Unschedulable => c.unschedulable += 1,
                QueueName::Gated => c.gated += 1,
                QueueName::InFlight => {}
            }
        }
        c
    }

    /// Pods ever added (`scheduler_queue_incoming_pods_total`).
    pub fn incoming_total(&self) -> u64 {
        self.incoming
    }

    /// Whether a pop could return a pod now or after some backoff.
    pub fn has_runnable(&self) -> bool {
        self.pods
            .values()
            .any(|i| matches!(i.queue, QueueName::Active | QueueName::Backoff))
    }

    /// Every queued pod with where it waits.
    pub fn queued(&self) -> impl Iterator<Item = (PodId, QueueName)> + '_ {
        self.pods.iter().map(|(id, i)| (*id, i.queue))
    }
}

#[cfg(test)]
mod tests;
