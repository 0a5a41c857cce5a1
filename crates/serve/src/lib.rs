//! topospread-serve: the live scheduler. It watches a cluster (pods, nodes, the
//! workload objects default spreading reads, PodDisruptionBudgets, PriorityClasses,
//! Namespaces)
//! into topospread's cache and queue, schedules the pods whose `spec.schedulerName` is
//! one of the configuration's profiles with kube-scheduler's semantics, binds them
//! through `pods/binding`, writes `PodScheduled` conditions, events and preemptions,
//! and, when `leaderElection.leaderElect` is on, schedules only while holding the Lease.
//!
//! ```no_run
//! # async fn demo(client: kube::Client) -> Result<(), topospread_serve::Error> {
//! use topospread_serve::{Options, start};
//!
//! let options = Options::new(topospread::SchedulerConfig::default());
//! let running = start(client, options)?;
//! // ... until SIGTERM:
//! running.shutdown().await
//! # }
//! ```

mod actions;
mod auth;
mod cache;
mod client;
mod clock;
mod error;
pub mod guard;
mod http;
mod leader;
mod metrics;
mod release;
mod scheduling;
mod skew;
mod tls;
mod watch;

pub use actions::{BindOutcome, PodRef, classify_bind_error};
pub use auth::{
    ALWAYS_ALLOW_GROUP, DEFAULT_ALWAYS_ALLOW_PATHS, DEFAULT_CACHE_TTL, Decision, Delegation,
    ReviewError, UserInfo,
};
pub use cache::{Kind, LiveCache, Overcommit, Update};
pub use client::{client, client_over, clients};
pub use clock::TokioClock;
pub use error::{Error, Result};
pub use guard::{Guard, GuardOptions, GuardRunning, start_guard};
pub use http::{Endpoints, Readiness, Serving, guarded, router};
pub use leader::{
    Blocked, DEFAULT_LEASE_NAME, Elector, KUBE_SCHEDULER_LEASE, LeaderState, Leadership,
    LeaseConfig, SERVICE_ACCOUNT_NAMESPACE_FILE, default_identity, namespace_from,
    running_namespace,
};
pub use metrics::{GuardSkewLabels, LogCounter, Metrics, log_lines_dropped};
pub use release::{choose_release, server_release, wait_for_release};
pub use scheduling::{CacheView, DEFAULT_SKEW_TOP};
pub use tls::{TlsConfig, host_name};
/// The client side, from crate `topospread-kubeclient` (the `--live` commands' too).
pub use topospread_kubeclient::{
    Backoff, ClientLimits, ClientOptions, Error as ClientError, Lean, ReleaseChoice, ReleaseSource,
    ServerRelease, client_from_config, describe, describe_watch, limit, status_line, user_agent,
};
pub use watch::POD_FIELD_SELECTOR;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch as signal};
use tokio::task::JoinHandle;
use topospread::{Features, Scheduler, SchedulerConfig, Snapshot};
use tracing::{error, info};

use scheduling::{Loop, Message, Stopped};

/// What `/readyz` says until every watcher has finished its first list.
const CACHES_NOT_SYNCED: &str = "caches not synced: waiting for the initial lists";

/// `reportingController` of the events this scheduler records.
pub const REPORTING_CONTROLLER: &str = "topospread";

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The KubeSchedulerConfiguration (profiles, backoff, leader election).
    pub config: SchedulerConfig,
    /// Feature gates.
    pub features: Features,
    /// How pods' requests are computed (`PodLevelResources`).
    pub request_options: topospread::api::resources::RequestOptions,
    /// Where `/metrics`, `/healthz` and `/readyz` listen; `None`: nowhere.
    pub listen: Option<SocketAddr>,
    /// How they serve there: HTTPS and delegated authorization, or plain HTTP.
    pub serving: Serving,
    /// The holder identity for the Lease and the events' reporting instance.
    pub identity: String,
    /// Seed of the tie-break among equally scored nodes.
    pub seed: u64,
    /// The Lease's namespace when `leaderElection.resourceNamespace` is not set: the
    /// namespace this replica runs in.
    pub lease_namespace: String,
    /// Whether a `leaderElection.resourceName` of `kube-scheduler` is accepted
    /// (`--allow-kube-scheduler-lease`).
    pub allow_kube_scheduler_lease: bool,
    /// How many workloads `topospread_domain_skew` reports, the most skewed first (its
    /// label sets name workloads: bounded so they do not grow with the cluster); 0: none.
    pub skew_metrics_top: usize,
}

impl Options {
    /// Defaults: no listener, a fresh identity, seed 0.
    pub fn new(config: SchedulerConfig) -> Self {
        Self {
            config,
            features: Features::default(),
            request_options: Default::default(),
            listen: None,
            serving: Serving::default(),
            identity: default_identity(),
            seed: 0,
            lease_namespace: running_namespace(),
            allow_kube_scheduler_lease: false,
            skew_metrics_top: DEFAULT_SKEW_TOP,
        }
    }
}

/// The clients serve talks through. As kube-scheduler's (`createClients`, and the
/// leader-election client `resourcelock.NewFromKubeconfig` makes), events and the Lease
/// have clients of their own, so each has its own rate-limit bucket: a backlog of binds
/// never delays a Lease renewal past its deadline. A single client serves as all three.
#[derive(Clone)]
pub struct Clients {
    /// Watches, binds, status patches, preemptions.
    pub scheduler: kube::Client,
    /// Events.
    pub events: kube::Client,
    /// The Lease.
    pub leader_election: kube::Client,
}

impl From<kube::Client> for Clients {
    fn from(client: kube::Client) -> Self {
        Self {
            scheduler: client.clone(),
            events: client.clone(),
            leader_election: client,
        }
    }
}

impl std::fmt::Debug for Clients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clients").finish_non_exhaustive()
    }
}

/// A handle on a running scheduler.
#[derive(Clone, Debug)]
pub struct Handle {
    stop: Arc<signal::Sender<bool>>,
    readiness: Readiness,
    metrics: Arc<Metrics>,
    tx: mpsc::UnboundedSender<Message>,
    leadership: Leadership,
    server: Option<tokio::task::AbortHandle>,
    listening: Option<SocketAddr>,
}

impl Handle {
    /// Kills the metrics and health server's task as a crash would; the scheduler then
    /// stops with [`Error::TaskStopped`] (its supervision, tested this way).
    pub fn abort_server(&self) {
        if let Some(s) = &self.server {
            s.abort();
        }
    }

    /// The address the metrics and health endpoint listens on (the port chosen when
    /// [`Options::listen`] asked for port 0).
    pub fn listen_addr(&self) -> Option<SocketAddr> {
        self.listening
    }

    /// Asks for a graceful stop: no more pops, in-flight binds finish, the lease is
    /// released.
    pub fn shutdown(&self) {
        self.stop.send_replace(true);
    }

    /// Whether `/readyz` answers ready: every watcher finished its first list, and the
    /// replica is not stuck waiting for a Lease another holder keeps (see
    /// [`Leadership::blocked`]).
    pub fn ready(&self) -> bool {
        self.readiness.not_ready().is_none()
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The metrics, shared (the guard run beside the scheduler counts into them).
    pub fn shared_metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// This replica's leadership.
    pub fn leadership(&self) -> &Leadership {
        &self.leadership
    }

    /// A copy of the live cache's contents; `None` once the loop has stopped.
    pub async fn cache_view(&self) -> Option<CacheView> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(Message::Inspect(tx)).ok()?;
        rx.await.ok()
    }
}

/// A running scheduler.
#[derive(Debug)]
pub struct Running {
    handle: Handle,
    task: JoinHandle<Result<()>>,
}

impl Running {
    /// Its handle.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Waits for it to stop: `Ok` after a graceful shutdown, [`Error::LeaseLost`] when
    /// the lease was lost.
    pub async fn wait(self) -> Result<()> {
        match self.task.await {
            Ok(r) => r,
            Err(e) => Err(Error::TaskStopped {
                task: "the scheduler",
                reason: e.to_string(),
            }),
        }
    }

    /// Shuts down gracefully and waits.
    pub async fn shutdown(self) -> Result<()> {
        self.handle.shutdown();
        self.wait().await
    }
}

/// Starts the scheduler on a tokio runtime: watchers, the scheduling loop, the elector
/// (when `leaderElection.leaderElect`), and the metrics and health listener on
/// [`Options::listen`].
pub fn start(clients: impl Into<Clients>, options: Options) -> Result<Running> {
    let endpoints = match options.listen {
        Some(addr) => Some(Endpoints::start(
            addr,
            &options.serving,
            Arc::new(Metrics::new()),
            Readiness::default(),
        )?),
        None => None,
    };
    start_with(clients, options, endpoints)
}

/// [`start`] on metrics and health endpoints already serving (started before the API
/// server answered, so `/healthz` answers meanwhile), or none; [`Options::listen`] and
/// [`Options::serving`] are then not read.
pub fn start_with(
    clients: impl Into<Clients>,
    options: Options,
    endpoints: Option<Endpoints>,
) -> Result<Running> {
    let clients = clients.into();
    let client = clients.scheduler.clone();
    let mut snapshot = Snapshot::new();
    snapshot.set_request_options(options.request_options);
    let mut scheduler = Scheduler::new(&options.config, options.features, &mut snapshot)?;
    scheduler.set_seed(options.seed);
    let le = options.config.leader_election();
    let lease = if le.leader_elect() {
        Some(LeaseConfig::from_config(
            &le,
            options.identity.clone(),
            &options.lease_namespace,
            options.allow_kube_scheduler_lease,
        )?)
    } else {
        None
    };
    if let Some(l) = &lease {
        info!(lease = %format!("{}/{}", l.namespace, l.name), identity = %l.identity, "leader election");
    }
    let elector = lease
        .clone()
        .map(|config| Elector::new(clients.leader_election.clone(), config));
    let leadership = elector
        .as_ref()
        .map_or_else(Leadership::always, Elector::leadership);
    let (metrics, readiness, listening, listener) = match endpoints {
        Some(e) => (e.metrics, e.readiness, Some(e.addr), Some(e.task)),
        None => (Arc::new(Metrics::new()), Readiness::default(), None, None),
    };
    readiness.wait_for(CACHES_NOT_SYNCED);
    readiness.follow(leadership.clone());
    let (stop_tx, stop_rx) = signal::channel(false);
    let (tx, rx) = mpsc::unbounded_channel();
    let handle = Handle {
        stop: Arc::new(stop_tx),
        readiness: readiness.clone(),
        metrics: metrics.clone(),
        tx: tx.clone(),
        leadership: leadership.clone(),
        server: listener.as_ref().map(JoinHandle::abort_handle),
        listening,
    };
    let (watch_tx, watch_rx) = mpsc::channel(watch::WATCH_BUFFER);
    let watchers = watch::spawn_all(&client, &watch_tx);
    drop(watch_tx);
    let writer = actions::Writer::new(client, clients.events, options.identity.clone());
    let mut looped = Loop::new(
        LiveCache::new(snapshot, scheduler),
        rx,
        tx,
        watch_rx,
        writer,
        leadership,
        metrics,
        readiness,
    );
    looped.skew_top = options.skew_metrics_top;
    let task = tokio::spawn(async move {
        let (elector_stop_tx, elector_stop_rx) = signal::channel(false);
        let mut elector_task = elector.map(|e| tokio::spawn(e.run(elector_stop_rx)));
        let mut listener = listener;
        // The loop, supervised: the server's or the elector's task ending first ends it.
        let first = {
            let run = looped.run(stop_rx);
            tokio::pin!(run);
            tokio::select! {
                s = &mut run => First::Loop(s),
                r = finished(listener.as_mut()) => First::Server(r),
                r = finished(elector_task.as_mut()) => First::Elector(r),
            }
        };
        for w in &watchers {
            w.abort();
        }
        let _ = elector_stop_tx.send(true);
        let elector_failed = |e: tokio::task::JoinError| Error::TaskStopped {
            task: "leader election",
            reason: e.to_string(),
        };
        let (stopped, elected) = match first {
            First::Loop(s) => {
                let elected = match elector_task.take() {
                    Some(t) => t.await.unwrap_or_else(|e| Err(elector_failed(e))),
                    None => Ok(()),
                };
                (s, elected)
            }
            First::Server(r) => {
                let reason = r.unwrap_or_else(|e| e.to_string());
                error!(reason, "the metrics and health server stopped: stopping");
                if let Some(t) = elector_task.take() {
                    let _ = t.await;
                }
                return Err(Error::TaskStopped {
                    task: "the metrics and health server",
                    reason,
                });
            }
            First::Elector(r) => {
                elector_task = None;
                match r {
                    Ok(Err(e)) => (Stopped::LeaseLost, Err(e)),
                    Ok(Ok(())) => (
                        Stopped::Shutdown,
                        Err(Error::TaskStopped {
                            task: "leader election",
                            reason: "it returned while the scheduler ran".into(),
                        }),
                    ),
                    Err(e) => (Stopped::Shutdown, Err(elector_failed(e))),
                }
            }
        };
        debug_assert!(elector_task.is_none());
        if let Some(l) = listener {
            l.abort();
        }
        match (stopped, elected) {
            (Stopped::Shutdown, r) => {
                info!("stopped");
                r
            }
            (Stopped::LeaseLost, Err(e)) => {
                error!(error = %e, "stopping: the lease was lost");
                Err(e)
            }
            (Stopped::LeaseLost, Ok(())) => Err(Error::LeaseLost {
                namespace: lease
                    .as_ref()
                    .map_or_else(String::new, |l| l.namespace.clone()),
                name: lease.as_ref().map_or_else(String::new, |l| l.name.clone()),
                reason: "lost".into(),
            }),
        }
    });
    Ok(Running { handle, task })
}

/// Which supervised task ended first.
enum First {
    /// The scheduling loop (shutdown or lease lost).
    Loop(Stopped),
    /// The metrics and health server (its error, or its panic).
    Server(std::result::Result<String, tokio::task::JoinError>),
    /// The elector.
    Elector(std::result::Result<Result<()>, tokio::task::JoinError>),
}

/// Waits for a task to end; never, when there is none.
async fn finished<T>(
    task: Option<&mut JoinHandle<T>>,
) -> std::result::Result<T, tokio::task::JoinError> {
    match task {
        Some(t) => t.await,
        None => std::future::pending().await,
    }
}
