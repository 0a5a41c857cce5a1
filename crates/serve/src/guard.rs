//! The live guard (`topospread guard --live`, `serve --guard`): keeps
//! `controller.kubernetes.io/pod-deletion-cost` on ReplicaSets' pods so that the
//! ReplicaSet controller's scale-ins keep topology spread ([`topospread_planning::guard`]).
//!
//! Each pass lists nodes, pods, ReplicaSets and Services (the default constraints'
//! selectors), plans, and patches only the pods whose cost must change, each patch
//! waiting on a token bucket. Each patch carries the resourceVersion the plan read, so
//! a pod changed meanwhile gets 409 Conflict: that is no failure, the change's own
//! watch event brings the next pass, which plans from the pod as it is. Any other
//! failed patch backs that pod off (1 s doubling to 5 min). A pass runs after a pod or ReplicaSet change (debounced) or every resync
//! period, and only while this replica holds the guard's own Lease when elected.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Node, ObjectReference, Pod, Service};
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::WatchStreamExt as _;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::watcher;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use topospread::convert::{self, DEFAULT_NAMESPACE};
use topospread::{Features, SchedulerConfig, Snapshot};
use topospread_planning::guard::{self, CostPatch, GuardError, GuardPlan, GuardPod};
use tracing::{debug, info, warn};

use crate::leader::Leadership;
use crate::limit::{ClientLimits, TokenBucket};
use crate::metrics::Metrics;

/// The guard's Lease, apart from the scheduler's.
pub const GUARD_LEASE_NAME: &str = "topospread-guard";
/// The reason of the event recorded on a ReplicaSet whose pods' costs were written.
pub const DELETION_COST_UPDATED: &str = "DeletionCostUpdated";
/// The first wait after a failed patch of a pod; it doubles up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait after failed patches of a pod.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// How long a pass waits after a change for more changes to gather.
const DEBOUNCE: Duration = Duration::from_secs(1);

/// How the guard runs.
#[derive(Clone, Debug)]
pub struct GuardOptions {
    /// The configuration whose PodTopologySpread defaults apply to pods without
    /// constraints of their own.
    pub config: SchedulerConfig,
    /// Feature gates.
    pub features: Features,
    /// Print the patches instead of writing them.
    pub dry_run: bool,
    /// Replace costs a user set by hand too.
    pub override_user_costs: bool,
    /// The rate of patches.
    pub limits: ClientLimits,
    /// A pass at least this often.
    pub resync: Duration,
    /// The events' reporting instance.
    pub identity: String,
}

impl GuardOptions {
    /// Defaults: writes, leaves users' costs alone, 5 patches a second (burst 10), a
    /// pass every 30 s.
    pub fn new(config: SchedulerConfig) -> Self {
        Self {
            config,
            features: Features::default(),
            dry_run: false,
            override_user_costs: false,
            limits: ClientLimits {
                qps: 5.0,
                burst: 10,
            },
            resync: Duration::from_secs(30),
            identity: crate::leader::default_identity(),
        }
    }
}

/// Why a pass failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GuardRunError {
    /// A list failed.
    #[error("listing {what}: {source}")]
    List {
        /// What was listed.
        what: &'static str,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The plan could not be made.
    #[error(transparent)]
    Plan(#[from] GuardError),
}

/// Whether the API server refused a write because the object changed since it was
/// read (`apierrors.IsConflict`: reason Conflict, code 409).
fn is_conflict(status: &kube::core::Status) -> bool {
    status.code == 409 && (status.reason.is_empty() || status.reason == "Conflict")
}

/// What one pass did.
#[derive(Clone, Debug, Default)]
pub struct PassReport {
    /// The plan.
    pub plan: GuardPlan,
    /// Patches written (in a dry run: printed).
    pub written: Vec<CostPatch>,
    /// Patches that failed, with the error.
    pub failed: Vec<(CostPatch, String)>,
    /// Patches not tried because their pod is backing off after a failure.
    pub deferred: Vec<CostPatch>,
    /// Patches the API server refused with 409 Conflict: the pod changed since the
    /// plan read it. No back-off and no blind retry: the next pass plans again from
    /// the pod as it is then.
    pub conflicts: Vec<CostPatch>,
}

/// The guard: its client, rate limit, backoffs and metrics.
pub struct Guard {
    client: kube::Client,
    options: GuardOptions,
    bucket: TokenBucket,
    /// Per pod (namespace, name): the next wait and when it may be patched again.
    backoff: HashMap<(String, String), (Duration, Instant)>,
    metrics: Arc<Metrics>,
    recorder: Recorder,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Guard {
    /// A guard talking through `client`, counting into `metrics`.
    pub fn new(client: kube::Client, options: GuardOptions, metrics: Arc<Metrics>) -> Self {
        let reporter = Reporter {
            controller: format!("{}-guard", crate::REPORTING_CONTROLLER),
            instance: Some(options.identity.clone()),
        };
        Self {
            recorder: Recorder::new(client.clone(), reporter),
            bucket: TokenBucket::new(options.limits),
            client,
            options,
            backoff: HashMap::new(),
            metrics,
        }
    }

    /// One pass: list, plan, write (or in a dry run print) the patches, record events.
    pub async fn pass(&mut self) -> Result<PassReport, GuardRunError> {
        let lp = ListParams::default();
        let list_err = |what| move |source| GuardRunError::List { what, source };
        let nodes = Api::<Node>::all(self.client.clone())
            .list(&lp)
            .await
            .map_err(list_err("nodes"))?
            .items;
        let pods = Api::<Pod>::all(self.client.clone())
            .list(&lp)
            .await
            .map_err(list_err("pods"))?
            .items;
        let sets = Api::<ReplicaSet>::all(self.client.clone())
            .list(&lp)
            .await
            .map_err(list_err("replicasets"))?
            .items;
        let services = Api::<Service>::all(self.client.clone())
            .list(&lp)
            .await
            .map_err(list_err("services"))?
            .items;
        // The ReplicaSet controller counts only active pods (`FilterActivePods`).
        let pods: Vec<Pod> = pods
            .into_iter()
            .filter(|p| {
                !matches!(
                    p.status.as_ref().and_then(|s| s.phase.as_deref()),
                    Some("Succeeded" | "Failed")
                )
            })
            .collect();
        let snapshot = snapshot_of(&nodes, &pods, &sets, &services);
        let facts: Vec<GuardPod> = pods.iter().map(GuardPod::of_pod).collect();
        let plan = guard::plan(
            &snapshot,
            &self.options.config,
            self.options.features,
            &facts,
            guard::GuardOptions {
                override_user_costs: self.options.override_user_costs,
                // LogarithmicScaleDown is on in every supported release; the controller
                // measures its buckets from the time it scales in, now.
                times: topospread_planning::controller::TimeScale::Logarithmic {
                    now_ns: std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX)),
                },
            },
        )?;
        for n in &plan.notes {
            debug!(note = %n, "guard");
        }
        self.metrics.set_guard_skew(&plan);
        let mut report = PassReport {
            plan,
            ..PassReport::default()
        };
        let now = Instant::now();
        for rs in report.plan.replica_sets.clone() {
            let mut written = 0usize;
            for patch in &rs.patches {
                let key = (patch.namespace.clone(), patch.pod.clone());
                if self
                    .backoff
                    .get(&key)
                    .is_some_and(|(_, until)| *until > now)
                {
                    report.deferred.push(patch.clone());
                    continue;
                }
                if self.options.dry_run {
                    // Written, not printed: a closed stdout must not stop the guard.
                    let _ = writeln!(
                        std::io::stdout(),
                        "kubectl patch pod {} -n {} --type merge -p '{}'",
                        patch.pod,
                        patch.namespace,
                        patch.merge_patch()
                    );
                    report.written.push(patch.clone());
                    continue;
                }
                self.bucket.clone().acquire().await;
                let api: Api<Pod> = Api::namespaced(self.client.clone(), &patch.namespace);
                match api
                    .patch(
                        &patch.pod,
                        &PatchParams::default(),
                        &Patch::Merge(patch.merge_patch()),
                    )
                    .await
                {
                    Ok(_) => {
                        self.backoff.remove(&key);
                        self.metrics.guard_patches.inc();
                        report.written.push(patch.clone());
                        written += 1;
                    }
                    Err(kube::Error::Api(status)) if is_conflict(&status) => {
                        debug!(pod = %format!("{}/{}", patch.namespace, patch.pod), message = %status.message, "the pod changed since the plan; the next pass plans again");
                        report.conflicts.push(patch.clone());
                    }
                    Err(e) => {
                        let wait = self.backoff.get(&key).map_or(FIRST_BACKOFF, |(w, _)| *w);
                        self.backoff
                            .insert(key, ((wait * 2).min(MAX_BACKOFF), now + wait));
                        let message = crate::describe(&e);
                        warn!(pod = %format!("{}/{}", patch.namespace, patch.pod), error = %message, retry_in = ?wait, "patching the deletion cost failed");
                        report.failed.push((patch.clone(), message));
                    }
                }
            }
            if written > 0
                && let Some(set) = sets.iter().find(|s| {
                    s.metadata.name.as_deref() == Some(rs.name.as_str())
                        && s.metadata.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)
                            == rs.namespace
                })
            {
                self.record(set, written, &rs).await;
            }
        }
        // Pods that no longer need a patch forget their backoff.
        let wanted: std::collections::HashSet<(String, String)> = report
            .plan
            .patches()
            .map(|p| (p.namespace.clone(), p.pod.clone()))
            .collect();
        self.backoff.retain(|k, _| wanted.contains(k));
        Ok(report)
    }

    /// The `DeletionCostUpdated` event on the ReplicaSet.
    async fn record(&self, set: &ReplicaSet, written: usize, rs: &guard::ReplicaSetGuard) {
        let skews: Vec<String> = rs
            .constraints
            .iter()
            .map(|c| {
                let s = |v: Option<i64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
                // By half only when it is more than one pod (never "by 0").
                let by_half = if rs.half > 1 {
                    format!(", by {}: {}", rs.half, s(c.after_half))
                } else {
                    String::new()
                };
                format!(
                    "{}: skew after a scale-in by 1: {}{by_half}",
                    c.constraint.topology_key,
                    s(c.after_one),
                )
            })
            .collect();
        let ev = Event {
            type_: EventType::Normal,
            reason: DELETION_COST_UPDATED.into(),
            note: Some(format!(
                "set controller.kubernetes.io/pod-deletion-cost on {written} pods so a scale-in removes pods from the most crowded domains first; {}",
                skews.join("; ")
            )),
            action: "Annotate".into(),
            secondary: None,
        };
        let reference = ObjectReference {
            api_version: Some("apps/v1".into()),
            kind: Some("ReplicaSet".into()),
            namespace: set.metadata.namespace.clone(),
            name: set.metadata.name.clone(),
            uid: set.metadata.uid.clone(),
            ..ObjectReference::default()
        };
        if let Err(e) = self.recorder.publish(&ev, &reference).await {
            debug!(replicaset = %format!("{}/{}", rs.namespace, rs.name), error = %crate::describe(&e), "recording an event failed");
        }
    }

    /// Runs passes until `stop`: after a pod or ReplicaSet change (debounced), every
    /// resync period, and only while `leadership` is valid.
    pub async fn run(mut self, mut leadership: Leadership, mut stop: watch::Receiver<bool>) {
        let changed = Arc::new(Notify::new());
        let watchers = [
            spawn_watch::<Pod>(&self.client, changed.clone()),
            spawn_watch::<ReplicaSet>(&self.client, changed.clone()),
        ];
        loop {
            if *stop.borrow() {
                break;
            }
            if leadership.is_valid() {
                match self.pass().await {
                    Ok(r) => {
                        if !r.written.is_empty() || !r.failed.is_empty() || !r.conflicts.is_empty()
                        {
                            info!(
                                written = r.written.len(),
                                failed = r.failed.len(),
                                conflicts = r.conflicts.len(),
                                deferred = r.deferred.len(),
                                dry_run = self.options.dry_run,
                                "guard pass"
                            );
                        }
                    }
                    Err(e) => warn!(error = %e, "guard pass failed"),
                }
            }
            tokio::select! {
                _ = stop.changed() => {}
                () = tokio::time::sleep(self.options.resync) => {}
                () = changed.notified() => tokio::time::sleep(DEBOUNCE).await,
                () = leadership.changed() => {}
            }
        }
        for w in watchers {
            w.abort();
        }
    }
}

/// A watch on every `K` that wakes `changed` on each event.
fn spawn_watch<K>(client: &kube::Client, changed: Arc<Notify>) -> tokio::task::JoinHandle<()>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::all(client.clone());
    tokio::spawn(async move {
        let mut events = watcher(api, watcher::Config::default())
            .default_backoff()
            .boxed();
        while let Some(e) = events.next().await {
            if e.is_ok() {
                changed.notify_one();
            }
        }
    })
}

/// The snapshot a pass plans on: nodes, active pods, and the workloads default
/// constraints read their selectors from.
fn snapshot_of(
    nodes: &[Node],
    pods: &[Pod],
    sets: &[ReplicaSet],
    services: &[Service],
) -> Snapshot {
    let mut snapshot = Snapshot::new();
    for n in nodes {
        match convert::node(n, snapshot.symbols_mut()) {
            Ok(node) => {
                if let Err(e) = snapshot.add_node(node) {
                    warn!(node = ?n.metadata.name, error = %e, "guard: node skipped");
                }
            }
            Err(e) => warn!(node = ?n.metadata.name, error = %e, "guard: node skipped"),
        }
    }
    for s in services {
        let ns = snapshot
            .symbols_mut()
            .intern(s.metadata.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE));
        let sel = convert::service_selector(s, snapshot.symbols_mut());
        snapshot.set_service(ns, s.metadata.name.as_deref().unwrap_or(""), sel);
    }
    for rs in sets {
        let ns = snapshot.symbols_mut().intern(
            rs.metadata
                .namespace
                .as_deref()
                .unwrap_or(DEFAULT_NAMESPACE),
        );
        let sel = convert::replica_set_selector(rs, snapshot.symbols_mut());
        snapshot.set_replica_set(ns, rs.metadata.name.as_deref().unwrap_or(""), sel);
    }
    for p in pods {
        match convert::pod(p, snapshot.symbols_mut()) {
            Ok(pod) => {
                if let Err(e) = snapshot.add_pod(pod) {
                    warn!(pod = ?p.metadata.name, error = %e, "guard: pod skipped");
                }
            }
            Err(e) => warn!(pod = ?p.metadata.name, error = %e, "guard: pod skipped"),
        }
    }
    snapshot
}

/// A running guard: its task, and its leadership.
#[derive(Debug)]
pub struct GuardRunning {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
    leadership: Leadership,
}

impl GuardRunning {
    /// Whether it holds its Lease (always, when not elected).
    pub fn leadership(&self) -> &Leadership {
        &self.leadership
    }

    /// Stops it and waits: the pass in flight finishes, the Lease is released.
    pub async fn shutdown(self) {
        self.stop.send_replace(true);
        let _ = self.task.await;
    }

    /// Waits for it to stop on its own (its Lease lost). Call [`Self::shutdown`] only
    /// if this has not returned.
    pub async fn wait(&mut self) {
        let _ = (&mut self.task).await;
    }
}

/// Serves the guard's /metrics and health endpoints on `addr` as `serving` says (HTTPS
/// with delegated authentication and authorization, as `serve` does, or plain HTTP for
/// local use). The task ends only when the server dies, with why: the caller stops.
pub async fn serve_endpoints(
    addr: std::net::SocketAddr,
    metrics: Arc<Metrics>,
    leadership: Leadership,
    serving: crate::http::Serving,
) -> crate::Result<tokio::task::JoinHandle<String>> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| crate::Error::Listen { addr, source })?;
    let readiness = crate::http::Readiness::default();
    readiness.follow(leadership);
    let app = crate::http::guarded(crate::http::router(metrics, readiness), serving.delegation);
    Ok(tokio::spawn(crate::http::serve(listener, app, serving.tls)))
}

/// Starts the guard on a tokio runtime, elected on `lease` when given (its own Lease,
/// [`GUARD_LEASE_NAME`] by default). Losing the Lease stops it.
pub fn start_guard(
    client: kube::Client,
    options: GuardOptions,
    lease: Option<crate::leader::LeaseConfig>,
    metrics: Arc<Metrics>,
) -> GuardRunning {
    let (stop_tx, stop_rx) = watch::channel(false);
    let elector = lease.map(|l| crate::leader::Elector::new(client.clone(), l));
    let leadership = elector
        .as_ref()
        .map_or_else(Leadership::always, crate::leader::Elector::leadership);
    let guard = Guard::new(client, options, metrics);
    let looped = leadership.clone();
    let task = tokio::spawn(async move {
        let (elector_stop_tx, elector_stop_rx) = watch::channel(false);
        let elector_task = elector.map(|e| tokio::spawn(e.run(elector_stop_rx)));
        let run = guard.run(looped, stop_rx);
        tokio::pin!(run);
        match elector_task {
            Some(mut elected) => {
                tokio::select! {
                    () = &mut run => {
                        elector_stop_tx.send_replace(true);
                        let _ = elected.await;
                    }
                    r = &mut elected => {
                        match r {
                            Ok(Err(e)) => warn!(error = %e, "the guard lost its lease: stopping"),
                            Ok(Ok(())) => info!("the guard's election ended: stopping"),
                            Err(e) => warn!(error = %e, "the guard's election failed: stopping"),
                        }
                    }
                }
            }
            None => run.await,
        }
    });
    GuardRunning {
        stop: stop_tx,
        task,
        leadership,
    }
}
