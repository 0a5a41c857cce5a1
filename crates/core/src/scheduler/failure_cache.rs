//! Failed cycles remembered per equivalence class of pods, so the identical replicas of
//! one template that follow a failure skip the Filter walk over every node (and
//! preemption's search) while nothing they depend on has changed.
//!
//! Upstream has no such cache, so it must be exactly equivalent to running the cycle:
//! - a failure is kept only with the cluster's generation ([`Snapshot::generation`],
//!   bumped by every change to nodes, pods, workload objects and namespaces) and the
//!   nominator's generation; any change drops every entry;
//! - two pods are in one class when every field a cycle reads is equal: everything but
//!   `metadata.uid` and `metadata.name` (names matter only to the nominator, and a pod
//!   with a nomination of its own never uses the cache);
//! - the cycle's side effects on the scheduler are replayed: the rotating start index
//!   moves by as many nodes as the cycle processed, and the tie-break generator skips
//!   as many draws as preemption made (its random candidate offset).
//!
//! Only plain failures are kept: no preemption nominated, no error, no explanation
//! recorded.

use crate::api::Pod;
use crate::snapshot::Snapshot;

/// How many classes one generation remembers; older entries are dropped first.
const MAX_ENTRIES: usize = 64;

/// One remembered failure.
#[derive(Clone, Debug)]
pub(super) struct Failure {
    /// The pod whose cycle failed (its class's representative).
    pod: Pod,
    /// The pod's pending message (`FitError` plus PostFilter's words).
    pub(super) message: String,
    /// The plugins that rejected it (the queue's requeueing key).
    pub(super) rejected_by: Vec<&'static str>,
    /// How far the cycle moved the rotating start index.
    pub(super) start_advance: usize,
    /// How many values the cycle drew from the tie-break generator.
    pub(super) draws: u64,
}

/// Failures of the current generation, per class.
#[derive(Clone, Debug)]
pub(super) struct FailureCache {
    enabled: bool,
    /// (snapshot generation, nominator generation) the entries belong to.
    generation: (u64, u64),
    entries: Vec<Failure>,
    hits: u64,
}

impl Default for FailureCache {
    fn default() -> Self {
        Self {
            enabled: true,
            generation: (u64::MAX, u64::MAX),
            entries: Vec::new(),
            hits: 0,
        }
    }
}

/// Whether `a` and `b` get the same cycle: every field but the UID and the name equal.
/// The destructuring makes a new field of [`Pod`] a compile error here until it is
/// classified.
pub(super) fn same_class(a: &Pod, b: &Pod) -> bool {
    let Pod {
        uid: _,
        name: _,
        namespace,
        labels,
        node_name,
        terminating,
        priority,
        preemption_never,
        start_time,
        nominated_node_name,
        terminating_by_preemption,
        scheduler_name,
        controller,
        required_node_affinity,
        tolerations,
        spread_constraints,
        required_node_names,
        preferred_node_affinity,
        affinity,
        requests,
        host_ports,
        images,
        init_images,
        scheduling_gates,
        volumes,
    } = a;
    *namespace == b.namespace
        && *priority == b.priority
        && *preemption_never == b.preemption_never
        && *terminating == b.terminating
        && *terminating_by_preemption == b.terminating_by_preemption
        && *start_time == b.start_time
        && *node_name == b.node_name
        && *nominated_node_name == b.nominated_node_name
        && *scheduler_name == b.scheduler_name
        && *controller == b.controller
        && *labels == b.labels
        && *requests == b.requests
        && *tolerations == b.tolerations
        && *spread_constraints == b.spread_constraints
        && *required_node_affinity == b.required_node_affinity
        && *required_node_names == b.required_node_names
        && *preferred_node_affinity == b.preferred_node_affinity
        && *affinity == b.affinity
        && *host_ports == b.host_ports
        && *images == b.images
        && *init_images == b.init_images
        && *scheduling_gates == b.scheduling_gates
        && *volumes == b.volumes
}

impl FailureCache {
    /// Turns the cache on or off (off: every pod runs its whole cycle; the reference
    /// the cache is tested against).
    pub(super) fn set_enabled(&mut self, on: bool) {
        self.enabled = on;
        self.entries.clear();
    }

    /// Cycles answered from the cache so far.
    pub(super) fn hits(&self) -> u64 {
        self.hits
    }

    /// Drops the entries if the cluster or the nominations changed since they were kept.
    fn sync(&mut self, snapshot: &Snapshot, nominations: u64) {
        let now = (snapshot.generation(), nominations);
        if self.generation != now {
            self.entries.clear();
            self.generation = now;
        }
    }

    /// The failure remembered for `pod`'s class, if nothing changed since.
    pub(super) fn lookup(
        &mut self,
        snapshot: &Snapshot,
        nominations: u64,
        pod: &Pod,
    ) -> Option<&Failure> {
        if !self.enabled {
            return None;
        }
        self.sync(snapshot, nominations);
        let hit = self.entries.iter().position(|f| same_class(&f.pod, pod))?;
        self.hits += 1;
        self.entries.get(hit)
    }

    /// Remembers a failed cycle of `pod`, run on the cluster as it is now.
    pub(super) fn insert(
        &mut self,
        snapshot: &Snapshot,
        nominations: u64,
        pod: &Pod,
        failure: Outcome,
    ) {
        if !self.enabled {
            return;
        }
        self.sync(snapshot, nominations);
        if self.entries.iter().any(|f| same_class(&f.pod, pod)) {
            return;
        }
        if self.entries.len() >= MAX_ENTRIES {
            self.entries.remove(0);
        }
        self.entries.push(Failure {
            pod: pod.clone(),
            message: failure.message,
            rejected_by: failure.rejected_by,
            start_advance: failure.start_advance,
            draws: failure.draws,
        });
    }
}

/// What a failed cycle produced, to remember.
pub(super) struct Outcome {
    /// The pending message.
    pub(super) message: String,
    /// The rejecting plugins.
    pub(super) rejected_by: Vec<&'static str>,
    /// How far the start index moved.
    pub(super) start_advance: usize,
    /// Generator draws made.
    pub(super) draws: u64,
}
