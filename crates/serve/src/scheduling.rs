//! The scheduling loop: one task owns the live cache, applies watch events and bind
//! results as they arrive, and pops one pod at a time from the queue (kube-scheduler's
//! `scheduleOne`), binding asynchronously. Cycles run in batches off the async workers
//! ([`tokio::task::block_in_place`]), so watches and binds keep their threads. When nothing can be popped it sleeps until
//! the next backoff expiry, the next unschedulable-leftover flush, a new message, a
//! leadership change or shutdown.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use kube::runtime::events::EventType;
use tokio::sync::mpsc::{Receiver, UnboundedReceiver, UnboundedSender};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot, watch};
use tokio::time::Instant;
use topospread::Attempt;
use topospread::snapshot::PodId;
use topospread::{Clock, PendingCounts};
use tracing::{debug, info, warn};

use crate::actions::{BindOutcome, PodRef, Writer};
use crate::cache::{LiveCache, Update};
use crate::clock::TokioClock;
use crate::leader::{LeaderState, Leadership};
use crate::metrics::Metrics;

/// How often `topospread_domain_skew` is recomputed.
const SKEW_EVERY: Duration = Duration::from_secs(15);
/// How often unschedulable pods that waited too long are retried (upstream: 30 s).
const FLUSH_UNSCHEDULABLE_EVERY: Duration = Duration::from_secs(30);
/// Binds in flight at once.
const MAX_IN_FLIGHT_BINDS: usize = 512;
/// Event writes in flight at once (the rest wait their turn, off the binding path).
const MAX_IN_FLIGHT_EVENTS: usize = 64;
/// Events waiting or in flight; past that, events are dropped (as client-go's
/// broadcaster drops them when its queue is full) rather than slowing scheduling.
const MAX_QUEUED_EVENTS: usize = 20_000;
/// Pod latencies kept for [`CacheView::latencies`] (the newest; older halves are dropped).
const MAX_LATENCIES: usize = 200_000;
/// How many workloads `topospread_domain_skew` reports by default.
pub const DEFAULT_SKEW_TOP: usize = 20;
/// Scheduling cycles run back to back before the loop applies what arrived meanwhile.
const CYCLES_PER_BATCH: usize = 64;
/// Watch events applied before the loop schedules again.
const WATCH_EVENTS_PER_TURN: usize = 4096;
/// How long shutdown waits for in-flight binds.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// What the loop receives besides watch events.
#[derive(Debug)]
pub(crate) enum Message {
    /// A bind finished.
    Bound {
        pod: PodRef,
        node: String,
        profile: String,
        started: Instant,
        outcome: BindOutcome,
    },
    /// A request for a view of the cache.
    Inspect(oneshot::Sender<CacheView>),
    /// A preemption victim's deletion failed (it stays, and no longer counts as
    /// terminating).
    PreemptionFailed {
        /// The victim's UID.
        victim: String,
    },
}

/// A copy of what the live cache holds, for tests, the bench and debugging.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheView {
    /// Every cached pod, `namespace/name` -> the node it is assumed or bound to, if any
    /// (as its object names it, even when that node is gone).
    pub pods: BTreeMap<String, Option<String>>,
    /// Every cached node.
    pub nodes: BTreeSet<String>,
    /// Every cached namespace's labels (`kubernetes.io/metadata.name` included).
    pub namespaces: BTreeMap<String, BTreeMap<String, String>>,
    /// Queue sizes.
    pub pending: PendingCounts,
    /// Bound pods waiting for their node's event.
    pub parked: usize,
    /// Whether every watcher finished its first list.
    pub synced: bool,
    /// When the first watch event arrived.
    pub first_event: Option<Instant>,
    /// When every watcher had finished its first list.
    pub synced_at: Option<Instant>,
    /// When the last successful bind completed.
    pub last_bind: Option<Instant>,
    /// Successful binds by this replica.
    pub binds: u64,
    /// Per bound pod (the newest 200,000 at most): from its first event as a pending
    /// pod to its bind's success.
    pub latencies: Vec<Duration>,
}

/// The loop's state.
pub(crate) struct Loop {
    pub(crate) cache: LiveCache,
    pub(crate) clock: TokioClock,
    pub(crate) rx: UnboundedReceiver<Message>,
    pub(crate) tx: UnboundedSender<Message>,
    /// Watch events, bounded ([`crate::watch::WATCH_BUFFER`]).
    pub(crate) watches: Receiver<Update>,
    /// Whether a watcher may still send.
    pub(crate) watching: bool,
    /// How many workloads `topospread_domain_skew` reports (the most skewed).
    pub(crate) skew_top: usize,
    pub(crate) writer: Writer,
    pub(crate) leadership: Leadership,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) readiness: crate::http::Readiness,
    pub(crate) in_flight: usize,
    pub(crate) binds: Arc<Semaphore>,
    pub(crate) events: Events,
    /// The last `PodScheduled=False` message written per pod UID, so an unchanged one is
    /// not written again.
    pub(crate) last_condition: HashMap<String, String>,
    /// When each pending pod was first seen, by UID.
    pub(crate) first_seen: HashMap<String, Instant>,
    pub(crate) first_event: Option<Instant>,
    pub(crate) synced_at: Option<Instant>,
    pub(crate) last_bind: Option<Instant>,
    pub(crate) bound: u64,
    pub(crate) latencies: Vec<Duration>,
}

/// Bounds on event writes, which run after the bind, off its concurrency slot.
#[derive(Clone)]
pub(crate) struct Events {
    queued: Arc<Semaphore>,
    in_flight: Arc<Semaphore>,
}

impl Events {
    /// A turn to write one event: waits for a writing slot, or `None` (the event is
    /// dropped) when too many events are already waiting.
    async fn admit(&self) -> Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)> {
        let queued = self.queued.clone().try_acquire_owned().ok()?;
        let writing = self.in_flight.clone().acquire_owned().await.ok()?;
        Some((queued, writing))
    }
}

/// Runs `f` (scheduling cycles: CPU work without awaits) so that the async worker it is
/// called on is not held: on a multi-threaded runtime the worker's other tasks move to
/// another thread meanwhile; on a current-thread runtime (tests) it runs in place.
pub(crate) fn off_the_workers<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// Why the loop stopped.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// Shutdown was asked for; in-flight binds were waited for.
    Shutdown,
    /// The lease was lost.
    LeaseLost,
}

impl Loop {
    #[allow(clippy::too_many_arguments)] // the loop's parts, each made by `start`
    pub(crate) fn new(
        cache: LiveCache,
        rx: UnboundedReceiver<Message>,
        tx: UnboundedSender<Message>,
        watches: Receiver<Update>,
        writer: Writer,
        leadership: Leadership,
        metrics: Arc<Metrics>,
        readiness: crate::http::Readiness,
    ) -> Self {
        Self {
            cache,
            clock: TokioClock::new(),
            rx,
            tx,
            watches,
            watching: true,
            skew_top: DEFAULT_SKEW_TOP,
            writer,
            leadership,
            metrics,
            readiness,
            in_flight: 0,
            binds: Arc::new(Semaphore::new(MAX_IN_FLIGHT_BINDS)),
            events: Events {
                queued: Arc::new(Semaphore::new(MAX_QUEUED_EVENTS)),
                in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT_EVENTS)),
            },
            last_condition: HashMap::new(),
            first_seen: HashMap::new(),
            first_event: None,
            synced_at: None,
            last_bind: None,
            bound: 0,
            latencies: Vec::new(),
        }
    }

    /// Runs until `stop` turns true or the lease is lost.
    pub(crate) async fn run(mut self, mut stop: watch::Receiver<bool>) -> Stopped {
        let mut next_flush = Instant::now() + FLUSH_UNSCHEDULABLE_EVERY;
        let mut since_gauges = 0u32;
        let mut next_skew = Instant::now() + SKEW_EVERY;
        loop {
            while let Ok(m) = self.rx.try_recv() {
                self.handle(m);
            }
            for _ in 0..WATCH_EVENTS_PER_TURN {
                match self.watches.try_recv() {
                    Ok(update) => self.apply_watch(update),
                    Err(_) => break,
                }
            }
            if *stop.borrow() {
                break;
            }
            if self.leadership.state() == LeaderState::Lost {
                return Stopped::LeaseLost;
            }
            let active = self.cache.synced() && self.leadership.is_valid();
            if active {
                let now = self.clock.now();
                if Instant::now() >= next_flush {
                    next_flush = Instant::now() + FLUSH_UNSCHEDULABLE_EVERY;
                    self.cache.scheduler.flush_unschedulable_leftover(now);
                }
                let cycles = off_the_workers(|| self.cycles());
                if cycles > 0 {
                    since_gauges += cycles;
                    if since_gauges >= 256 {
                        since_gauges = 0;
                        self.metrics.set_pending(&self.cache.scheduler.pending());
                    }
                    // After a batch (which ends early at a failed cycle: a pod popped
                    // from backoff again and again), yield so the tasks this loop
                    // spawned run (tokio keeps the last spawned one in this worker's
                    // slot, which no other worker steals).
                    tokio::task::yield_now().await;
                    continue;
                }
            }
            self.metrics.set_pending(&self.cache.scheduler.pending());
            if Instant::now() >= next_skew {
                next_skew = Instant::now() + SKEW_EVERY;
                self.update_skew();
            }
            let far = Instant::now() + Duration::from_secs(3600);
            let wake = if active {
                self.cache
                    .scheduler
                    .queue()
                    .next_backoff_expiry()
                    .map(|t| self.clock.instant(t))
                    .map_or(next_flush, |t| t.min(next_flush))
                    .min(next_skew)
            } else {
                far
            };
            tokio::select! {
                m = self.rx.recv() => {
                    if let Some(m) = m {
                        self.handle(m);
                    }
                }
                u = self.watches.recv(), if self.watching => match u {
                    Some(update) => self.apply_watch(update),
                    None => self.watching = false,
                },
                () = tokio::time::sleep_until(wake) => {}
                () = self.leadership.changed() => {}
                _ = stop.changed() => {}
            }
        }
        // Graceful: no more pops; wait for the binds under way.
        let deadline = Instant::now() + DRAIN_TIMEOUT;
        while self.in_flight > 0 {
            tokio::select! {
                m = self.rx.recv() => match m {
                    Some(m) => self.handle(m),
                    None => break,
                },
                () = tokio::time::sleep_until(deadline) => {
                    warn!(in_flight = self.in_flight, "shutdown: binds still in flight after the drain timeout");
                    break;
                }
            }
        }
        Stopped::Shutdown
    }

    /// Up to [`CYCLES_PER_BATCH`] scheduling cycles back to back, stopping early when the
    /// queue has nothing to pop or a cycle fails: how many ran.
    fn cycles(&mut self) -> u32 {
        let mut ran = 0;
        while ran < CYCLES_PER_BATCH as u32 {
            let started = Instant::now();
            let now = self.clock.now();
            let Some(attempt) = self
                .cache
                .scheduler
                .schedule_next(&mut self.cache.snapshot, now)
            else {
                return ran;
            };
            let errored = matches!(attempt, Attempt::Error { .. });
            self.carry_out(attempt, started);
            ran += 1;
            if errored {
                return ran;
            }
        }
        ran
    }

    /// Applies one watch event to the cache.
    fn apply_watch(&mut self, update: Update) {
        let at = Instant::now();
        self.first_event.get_or_insert(at);
        if let Update::Pod(
            kube::runtime::watcher::Event::Apply(p) | kube::runtime::watcher::Event::InitApply(p),
        ) = &update
            && p.spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .is_none()
            && let Some(uid) = &p.metadata.uid
            && !self.first_seen.contains_key(uid)
        {
            self.first_seen.insert(uid.clone(), at);
            self.metrics.incoming("active", "PodAdd");
        }
        if let Update::Pod(kube::runtime::watcher::Event::Delete(p)) = &update
            && let Some(uid) = &p.metadata.uid
        {
            self.first_seen.remove(uid);
            self.last_condition.remove(uid);
        }
        let was_synced = self.cache.synced();
        // After a node left, or for a pod that arrives: a nomination naming a
        // node that is gone is cleared.
        let stale_check = match &update {
            Update::Node(
                kube::runtime::watcher::Event::Delete(_) | kube::runtime::watcher::Event::InitDone,
            ) => Some(None),
            Update::Pod(
                kube::runtime::watcher::Event::Apply(p)
                | kube::runtime::watcher::Event::InitApply(p),
            ) if p
                .status
                .as_ref()
                .is_some_and(|s| s.nominated_node_name.is_some()) =>
            {
                p.metadata.uid.clone().map(Some)
            }
            _ => None,
        };
        self.cache.apply(update, self.clock.now());
        for _ in self.cache.take_overcommits() {
            self.metrics.node_overcommits.inc();
        }
        if let Some(only) = stale_check {
            self.clear_stale_nominations(only.as_deref());
        }
        if !was_synced && self.cache.synced() {
            self.clear_stale_nominations(None);
            info!(
                nodes = self.cache.snapshot.nodes().len(),
                pods = self.cache.snapshot.pods().count(),
                "caches synced"
            );
            self.readiness.set_ready();
            self.synced_at = Some(Instant::now());
        }
    }

    fn handle(&mut self, m: Message) {
        match m {
            Message::Bound {
                pod,
                node,
                profile,
                started,
                outcome,
            } => self.bound(pod, node, profile, started, outcome),
            Message::Inspect(reply) => {
                let _ = reply.send(self.view());
            }
            Message::PreemptionFailed { victim } => self.cache.preemption_failed(&victim),
        }
    }

    /// Clears `status.nominatedNodeName` of pending pods nominated to a node that no
    /// longer exists (all pods, or one), logging each once.
    fn clear_stale_nominations(&mut self, only: Option<&str>) {
        for pod in self.cache.stale_nominations(only) {
            info!(pod = %pod, "clearing nominatedNodeName: the node it names no longer exists");
            let writer = self.writer.clone();
            tokio::spawn(async move { writer.clear_nomination(&pod).await });
        }
    }

    /// Recomputes `topospread_domain_skew` for the [`Loop::skew_top`] most skewed
    /// workloads (label sets of the others are dropped).
    fn update_skew(&mut self) {
        let skews = crate::skew::most_skewed(
            crate::skew::workload_skews(&self.cache.snapshot),
            self.skew_top,
        );
        self.metrics.domain_skew.clear();
        for s in skews {
            self.metrics
                .domain_skew
                .get_or_create(&crate::metrics::SkewLabels {
                    namespace: s.namespace,
                    workload: s.workload,
                    topology_key: s.topology_key,
                })
                .set(i64::try_from(s.skew).unwrap_or(i64::MAX));
        }
    }

    fn view(&self) -> CacheView {
        let s = &self.cache.snapshot;
        CacheView {
            pods: s
                .pods()
                .map(|(_, p)| {
                    (
                        format!("{}/{}", s.symbols().resolve(p.namespace), p.name),
                        p.node_name.as_deref().map(str::to_string),
                    )
                })
                .collect(),
            nodes: s.nodes().iter().map(|n| n.node.name.to_string()).collect(),
            namespaces: s
                .namespaces()
                .map(|(ns, l)| (s.symbols().resolve(ns).to_string(), l.to_map(s.symbols())))
                .collect(),
            pending: self.cache.scheduler.pending(),
            parked: self.cache.parked_pods(),
            synced: self.cache.synced(),
            first_event: self.first_event,
            synced_at: self.synced_at,
            last_bind: self.last_bind,
            binds: self.bound,
            latencies: self.latencies.clone(),
        }
    }

    fn pod_ref(&self, id: PodId) -> Option<(PodRef, String)> {
        let s = &self.cache.snapshot;
        let p = s.pod(id)?;
        Some((
            PodRef {
                namespace: s.symbols().resolve(p.namespace).to_string(),
                name: p.name.to_string(),
                uid: p.uid.to_string(),
            },
            p.scheduler_name.to_string(),
        ))
    }

    fn bound(
        &mut self,
        pod: PodRef,
        node: String,
        profile: String,
        started: Instant,
        outcome: BindOutcome,
    ) {
        self.in_flight = self.in_flight.saturating_sub(1);
        let now = self.clock.now();
        let id = self.cache.snapshot.pod_by_uid(&pod.uid);
        let seconds = started.elapsed().as_secs_f64();
        match outcome {
            BindOutcome::Bound => {
                if let Some(id) = id {
                    let _ = self
                        .cache
                        .scheduler
                        .finish_binding(&mut self.cache.snapshot, id, now);
                }
                let at = Instant::now();
                self.last_bind = Some(at);
                self.bound += 1;
                if let Some(first) = self.first_seen.remove(&pod.uid) {
                    if self.latencies.len() >= MAX_LATENCIES {
                        self.latencies.drain(..MAX_LATENCIES / 2);
                    }
                    self.latencies.push(at - first);
                }
                self.last_condition.remove(&pod.uid);
                self.metrics.attempt("scheduled", &profile, seconds);
                debug!(pod = %pod, node, "bound");
            }
            BindOutcome::Gone(reason) => {
                // Deleted, or bound by someone else: its watch event says which.
                if let Some(id) = id {
                    let _ = self.cache.snapshot.forget_pod(id);
                }
                self.first_seen.remove(&pod.uid);
                info!(pod = %pod, node, reason, "binding dropped");
            }
            BindOutcome::Failed(reason) => {
                if let Some(id) = id {
                    let _ = self
                        .cache
                        .scheduler
                        .binding_failed(&mut self.cache.snapshot, id, now);
                }
                self.metrics.attempt("error", &profile, seconds);
                self.metrics.incoming("backoff", "BindingFailed");
                warn!(pod = %pod, node, reason, "binding failed; the pod backs off");
            }
            BindOutcome::NotLeader => {
                if let Some(id) = id {
                    let _ = self
                        .cache
                        .scheduler
                        .binding_failed(&mut self.cache.snapshot, id, now);
                }
                info!(pod = %pod, node, "not bound: the lease is no longer held");
            }
        }
    }

    /// Carries out a preemption the cycle decided on (upstream's `prepareCandidate`):
    /// the victims count as terminating at once, lower-priority pods nominated to the
    /// node lose their nomination, and each victim gets `DisruptionTarget`, is deleted
    /// and gets a `Preempted` event. The preemptor is retried when a victim's deletion
    /// reaches the cache (an assigned pod's deletion requeues it).
    fn preempt(&mut self, preemptor: &PodRef, profile: &str, p: &topospread::Preemption) {
        let node = self.cache.snapshot.node(p.node).node.name.to_string();
        self.metrics.preemption_attempts.inc();
        self.metrics
            .preemption_victims
            .observe(p.victims.len() as f64);
        self.cache.mark_preempting(&p.victims);
        for id in &p.cleared_nominations {
            let Some((pod, _)) = self.pod_ref(*id) else {
                continue;
            };
            info!(pod = %pod, node, preemptor = %preemptor, "clearing the nomination of a lower-priority pod");
            let writer = self.writer.clone();
            tokio::spawn(async move { writer.clear_nomination(&pod).await });
        }
        for v in &p.victims {
            let Some((victim, _)) = self.pod_ref(*v) else {
                continue;
            };
            info!(victim = %victim, preemptor = %preemptor, node, "preempting");
            let writer = self.writer.clone();
            let tx = self.tx.clone();
            let (preemptor, scheduler, node) =
                (preemptor.clone(), profile.to_string(), node.clone());
            tokio::spawn(async move {
                if !writer.preempt(&victim, &scheduler, &preemptor, &node).await {
                    let _ = tx.send(Message::PreemptionFailed { victim: victim.uid });
                }
            });
        }
    }

    fn carry_out(&mut self, attempt: Attempt, started: Instant) {
        let seconds = started.elapsed().as_secs_f64();
        match attempt {
            Attempt::Assumed { pod, node, .. } => {
                let Some((pod_ref, profile)) = self.pod_ref(pod) else {
                    return;
                };
                let node = self.cache.snapshot.node(node).node.name.to_string();
                self.in_flight += 1;
                let writer = self.writer.clone();
                let leadership = self.leadership.clone();
                let tx = self.tx.clone();
                let permits = self.binds.clone();
                let events = self.events.clone();
                tokio::spawn(async move {
                    let permit = permits.acquire_owned().await;
                    let outcome = if leadership.is_valid() {
                        writer.bind(&pod_ref, &node).await
                    } else {
                        BindOutcome::NotLeader
                    };
                    drop(permit);
                    let ok = outcome == BindOutcome::Bound;
                    let _ = tx.send(Message::Bound {
                        pod: pod_ref.clone(),
                        node: node.clone(),
                        profile,
                        started,
                        outcome,
                    });
                    if ok && let Some(_e) = events.admit().await {
                        let note = format!("Successfully assigned {pod_ref} to {node}");
                        writer
                            .event(&pod_ref, EventType::Normal, "Scheduled", "Binding", note)
                            .await;
                    }
                });
            }
            Attempt::Unschedulable {
                pod,
                message,
                preemption,
            } => {
                let Some((pod_ref, profile)) = self.pod_ref(pod) else {
                    return;
                };
                self.metrics.attempt("unschedulable", &profile, seconds);
                self.metrics
                    .incoming("unschedulable", "ScheduleAttemptFailure");
                let nominated = preemption
                    .as_ref()
                    .map(|p| self.cache.snapshot.node(p.node).node.name.to_string());
                if let Some(p) = &preemption {
                    self.preempt(&pod_ref, &profile, p);
                }
                let unchanged =
                    nominated.is_none() && self.last_condition.get(&pod_ref.uid) == Some(&message);
                if unchanged {
                    return;
                }
                self.last_condition
                    .insert(pod_ref.uid.clone(), message.clone());
                debug!(pod = %pod_ref, message, "unschedulable");
                let writer = self.writer.clone();
                let events = self.events.clone();
                tokio::spawn(async move {
                    writer
                        .mark_unschedulable(&pod_ref, &message, nominated.as_deref())
                        .await;
                    if let Some(_e) = events.admit().await {
                        writer
                            .event(
                                &pod_ref,
                                EventType::Warning,
                                "FailedScheduling",
                                "Scheduling",
                                message,
                            )
                            .await;
                    }
                });
            }
            Attempt::Error { pod, message } => {
                let profile = self.pod_ref(pod).map(|(_, p)| p).unwrap_or_default();
                self.metrics.attempt("error", &profile, seconds);
                self.metrics.incoming("backoff", "ScheduleAttemptFailure");
                warn!(?pod, message, "scheduling cycle failed");
            }
            // An attempt newer than this crate: nothing it knows how to write back.
            other => warn!(?other, "scheduling attempt this scheduler cannot carry out"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_long_batch_leaves_the_other_tasks_running() {
        // One worker: a batch held on it in place would stop the ticker.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let ticks = Arc::new(AtomicUsize::new(0));
            let t = ticks.clone();
            let ticker = tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    t.fetch_add(1, Ordering::SeqCst);
                }
            });
            tokio::time::sleep(Duration::from_millis(20)).await;
            let batch = tokio::spawn(async {
                off_the_workers(|| std::thread::sleep(Duration::from_millis(300)))
            });
            let before = ticks.load(Ordering::SeqCst);
            batch.await.unwrap();
            let during = ticks.load(Ordering::SeqCst) - before;
            ticker.abort();
            assert!(during >= 10, "{during} ticks in 300 ms");
        });
    }
}
