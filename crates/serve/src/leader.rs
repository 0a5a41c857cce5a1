//! Leader election on a `coordination.k8s.io/v1` Lease, as client-go's
//! `leaderelection` runs it: a candidate takes the lease when it is free or its holder
//! has not renewed it for `leaseDuration` (measured on the candidate's own clock from
//! when it last saw the record change, so clock skew between replicas does not
//! matter); the leader renews every `retryPeriod` and gives up when a renewal has not
//! succeeded within `renewDeadline`. Every write carries the resourceVersion it read
//! (optimistic concurrency), so two candidates cannot both win one round.
//!
//! [`Leadership::is_valid`] is what the binder checks before each bind: it turns false
//! the moment the renew deadline passes, before any other replica can take over
//! (`renewDeadline < leaseDuration`).

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use tokio::sync::watch;
use tokio::time::Instant;
use topospread::config::{LeaderElection, parse_duration};
use tracing::{info, warn};

use crate::error::{Error, Result};

/// Where this replica stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LeaderState {
    /// Waiting to acquire the lease.
    Standby,
    /// Holding the lease; it may act until `valid_until`, unless renewed.
    Leading {
        /// When the last successful renewal's deadline passes.
        valid_until: Instant,
    },
    /// Leader election is off: always acts.
    Always,
    /// Held the lease and lost it: must stop.
    Lost,
}

/// A cloneable view of the elector's state.
#[derive(Clone, Debug)]
pub struct Leadership {
    rx: watch::Receiver<LeaderState>,
    blocked: watch::Receiver<Option<Blocked>>,
}

/// A replica that has waited longer than one lease duration for a Lease another holder
/// keeps renewing: it is not ready (`/readyz`) until it gets the Lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// `namespace/name` of the Lease.
    pub lease: String,
    /// Its `holderIdentity`.
    pub holder: String,
}

impl Leadership {
    /// A view that always leads (leader election off).
    pub fn always() -> Self {
        let (_tx, rx) = watch::channel(LeaderState::Always);
        let (_btx, blocked) = watch::channel(None);
        Self { rx, blocked }
    }

    /// The Lease this replica has waited for longer than its lease duration, and who
    /// holds it; `None` while it leads, or has not waited that long.
    pub fn blocked(&self) -> Option<Blocked> {
        self.blocked.borrow().clone()
    }

    /// The state now.
    pub fn state(&self) -> LeaderState {
        *self.rx.borrow()
    }

    /// Whether this replica may schedule and bind right now.
    pub fn is_valid(&self) -> bool {
        match self.state() {
            LeaderState::Always => true,
            LeaderState::Leading { valid_until } => Instant::now() < valid_until,
            LeaderState::Standby | LeaderState::Lost => false,
        }
    }

    /// Waits until the state changes (forever if nobody can change it any more).
    pub async fn changed(&mut self) {
        if self.rx.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The Lease `serve` elects on when the configuration names none: its own, never
/// kube-scheduler's (upstream's default `kube-scheduler` would take the cluster
/// scheduler's Lease, and topospread runs beside that scheduler).
pub const DEFAULT_LEASE_NAME: &str = "topospread";
/// kube-scheduler's own Lease, refused unless the user says it is meant.
pub const KUBE_SCHEDULER_LEASE: &str = "kube-scheduler";
/// Where the in-cluster service account's namespace is mounted.
pub const SERVICE_ACCOUNT_NAMESPACE_FILE: &str =
    "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// The namespace this process runs in: `POD_NAMESPACE` (the downward API), else the
/// service account's namespace file, else `kube-system`.
pub fn running_namespace() -> String {
    namespace_from(
        std::env::var("POD_NAMESPACE").ok(),
        std::fs::read_to_string(SERVICE_ACCOUNT_NAMESPACE_FILE).ok(),
    )
}

/// [`running_namespace`] from the variable's and the file's contents.
pub fn namespace_from(env: Option<String>, file: Option<String>) -> String {
    [env, file]
        .into_iter()
        .flatten()
        .map(|n| n.trim().to_string())
        .find(|n| !n.is_empty())
        .unwrap_or_else(|| "kube-system".into())
}

/// The lease and the timing of the election, from the configuration's `leaderElection`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseConfig {
    /// `resourceNamespace`.
    pub namespace: String,
    /// `resourceName`.
    pub name: String,
    /// `holderIdentity` this replica writes.
    pub identity: String,
    /// `leaseDuration`.
    pub lease_duration: Duration,
    /// `renewDeadline`.
    pub renew_deadline: Duration,
    /// `retryPeriod`.
    pub retry_period: Duration,
}

fn duration(field: &str, text: &str) -> Result<Duration> {
    parse_duration(text)
        .and_then(|n| u64::try_from(n).ok())
        .filter(|n| *n > 0)
        .map(Duration::from_nanos)
        .ok_or_else(|| Error::Config {
            message: format!("leaderElection.{field}: {text:?} is not a positive duration"),
        })
}

impl LeaseConfig {
    /// Reads `leaderElection`, checking what client-go checks: `leaseDuration >
    /// renewDeadline > retryPeriod`, lock `leases`. Without `resourceName` the Lease is
    /// [`DEFAULT_LEASE_NAME`]; without `resourceNamespace`, `namespace` (where this
    /// replica runs). A `resourceName` of `kube-scheduler` is refused unless
    /// `allow_kube_scheduler_lease`.
    pub fn from_config(
        le: &LeaderElection,
        identity: String,
        namespace: &str,
        allow_kube_scheduler_lease: bool,
    ) -> Result<Self> {
        if le.resource_lock() != "leases" {
            return Err(Error::Config {
                message: format!(
                    "leaderElection.resourceLock: {:?} is not supported, only \"leases\"",
                    le.resource_lock()
                ),
            });
        }
        let name = le.resource_name.as_deref().unwrap_or(DEFAULT_LEASE_NAME);
        if name == KUBE_SCHEDULER_LEASE && !allow_kube_scheduler_lease {
            return Err(Error::Config {
                message: format!(
                    "leaderElection.resourceName: {KUBE_SCHEDULER_LEASE:?} is the cluster kube-scheduler's own Lease: holding it stops that scheduler; name another Lease (default {DEFAULT_LEASE_NAME:?}) or pass --allow-kube-scheduler-lease"
                ),
            });
        }
        let c = Self {
            namespace: le
                .resource_namespace
                .clone()
                .unwrap_or_else(|| namespace.to_string()),
            name: name.to_string(),
            identity,
            lease_duration: duration("leaseDuration", le.lease_duration())?,
            renew_deadline: duration("renewDeadline", le.renew_deadline())?,
            retry_period: duration("retryPeriod", le.retry_period())?,
        };
        if c.lease_duration <= c.renew_deadline || c.renew_deadline <= c.retry_period {
            return Err(Error::Config {
                message: "leaderElection: leaseDuration must be greater than renewDeadline, and renewDeadline greater than retryPeriod".into(),
            });
        }
        Ok(c)
    }
}

/// A holder identity as client-go builds one: the host name, `_`, and a random part, so
/// two processes on one host (or a restarted pod) never share it.
pub fn default_identity() -> String {
    use std::hash::{BuildHasher, Hasher};
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "topospread".into());
    let mut random = String::new();
    for i in 0..2u8 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u8(i);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        random.push_str(&format!("{:016x}", h.finish()));
    }
    format!("{host}_{random}")
}

/// A candidate for the lease.
#[derive(Debug)]
pub struct Elector {
    api: Api<Lease>,
    config: LeaseConfig,
    /// The lease record last seen and when (on this replica's clock) it was first seen.
    observed: Option<(LeaseSpec, Instant)>,
    tx: watch::Sender<LeaderState>,
    blocked: watch::Sender<Option<Blocked>>,
    /// The other holder last logged, so a wait is logged once per holder, not per retry.
    logged_holder: Option<String>,
}

fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

impl Elector {
    /// A candidate for the lease `config` names.
    pub fn new(client: kube::Client, config: LeaseConfig) -> Self {
        let api = Api::namespaced(client, &config.namespace);
        let (tx, _) = watch::channel(LeaderState::Standby);
        let (blocked, _) = watch::channel(None);
        Self {
            api,
            config,
            observed: None,
            tx,
            blocked,
            logged_holder: None,
        }
    }

    /// A view of this candidate's state, for the scheduler, the binder and `/readyz`.
    pub fn leadership(&self) -> Leadership {
        Leadership {
            rx: self.tx.subscribe(),
            blocked: self.blocked.subscribe(),
        }
    }

    /// Who else holds the Lease, as last read (`None`: nobody, or this replica).
    fn other_holder(&self) -> Option<String> {
        let (spec, _) = self.observed.as_ref()?;
        spec.holder_identity
            .as_deref()
            .filter(|h| !h.is_empty() && *h != self.config.identity)
            .map(str::to_string)
    }

    /// After a round that did not acquire the Lease: logs a new holder once, and marks
    /// this replica blocked (not ready) once it has waited longer than a lease duration.
    fn note_waiting(&mut self, waiting_since: Instant) {
        let Some(holder) = self.other_holder() else {
            return;
        };
        if self.logged_holder.as_deref() != Some(holder.as_str()) {
            info!(lease = %self.lease_name(), holder = %holder, "the lease is held by another holder; waiting for it");
            self.logged_holder = Some(holder.clone());
        }
        if waiting_since.elapsed() > self.config.lease_duration {
            let blocked = Blocked {
                lease: self.lease_name(),
                holder,
            };
            if self.blocked.borrow().as_ref() != Some(&blocked) {
                warn!(lease = %blocked.lease, holder = %blocked.holder, waited = ?waiting_since.elapsed(), "waited longer than leaseDuration for a lease another holder keeps renewing: not ready");
                self.blocked.send_replace(Some(blocked));
            }
        }
    }

    /// The identity it writes.
    pub fn identity(&self) -> &str {
        &self.config.identity
    }

    fn observe(&mut self, spec: &LeaseSpec) {
        if self.observed.as_ref().is_none_or(|(s, _)| s != spec) {
            self.observed = Some((spec.clone(), Instant::now()));
        }
    }

    /// One round of client-go's `tryAcquireOrRenew`: whether this candidate holds the
    /// lease afterwards. A lost race (409) is `Ok(false)`.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        let seconds = i32::try_from(self.config.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let Some(mut lease) = self.api.get_opt(&self.config.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.config.name.clone()),
                    namespace: Some(self.config.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.config.identity.clone()),
                    lease_duration_seconds: Some(seconds),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(created) => {
                    self.observe(&created.spec.unwrap_or_default());
                    Ok(true)
                }
                Err(e) if is_conflict(&e) => Ok(false),
                Err(e) => Err(e),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        self.observe(&spec);
        let holder = spec.holder_identity.as_deref().filter(|h| !h.is_empty());
        let mine = holder == Some(self.config.identity.as_str());
        if let Some(_other) = holder.filter(|_| !mine) {
            let duration = spec
                .lease_duration_seconds
                .and_then(|s| u64::try_from(s).ok())
                .map_or(self.config.lease_duration, Duration::from_secs);
            let seen = self
                .observed
                .as_ref()
                .map_or_else(Instant::now, |(_, t)| *t);
            if seen + duration > Instant::now() {
                return Ok(false);
            }
        }
        let mut next = spec.clone();
        if !mine {
            next.acquire_time = Some(now.clone());
            next.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        next.holder_identity = Some(self.config.identity.clone());
        next.lease_duration_seconds = Some(seconds);
        next.renew_time = Some(now);
        lease.spec = Some(next);
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(updated) => {
                self.observe(&updated.spec.unwrap_or_default());
                Ok(true)
            }
            Err(e) if is_conflict(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Acquires the lease (retrying every `retryPeriod`), then renews it until `stop`
    /// turns true (then releases it and returns `Ok`) or a renewal misses the deadline
    /// (then returns [`Error::LeaseLost`] with the state already `Lost`).
    pub async fn run(mut self, mut stop: watch::Receiver<bool>) -> Result<()> {
        let retry = self.config.retry_period;
        let waiting_since = Instant::now();
        let mut last_error: Option<String> = None;
        loop {
            if *stop.borrow() {
                return Ok(());
            }
            let start = Instant::now();
            match self.try_acquire_or_renew().await {
                Ok(true) => {
                    info!(lease = %self.lease_name(), identity = %self.config.identity, "acquired the lease");
                    self.blocked.send_replace(None);
                    self.tx.send_replace(LeaderState::Leading {
                        valid_until: start + self.config.renew_deadline,
                    });
                    break;
                }
                Ok(false) => self.note_waiting(waiting_since),
                Err(e) => {
                    // Logged when the error changes, not on every retry.
                    let text = crate::describe(&e);
                    if last_error.as_deref() != Some(text.as_str()) {
                        warn!(lease = %self.lease_name(), error = %text, "acquiring the lease failed; retrying every retryPeriod");
                        last_error = Some(text);
                    }
                }
            }
            tokio::select! {
                () = tokio::time::sleep(retry) => {}
                _ = stop.changed() => {}
            }
        }
        loop {
            tokio::select! {
                () = tokio::time::sleep(retry) => {}
                _ = stop.changed() => {}
            }
            if *stop.borrow() {
                self.release().await;
                return Ok(());
            }
            let LeaderState::Leading { valid_until } = *self.tx.borrow() else {
                return Ok(());
            };
            let start = Instant::now();
            let reason = match tokio::time::timeout_at(valid_until, self.try_acquire_or_renew())
                .await
            {
                Ok(Ok(true)) => {
                    self.tx.send_replace(LeaderState::Leading {
                        valid_until: start + self.config.renew_deadline,
                    });
                    continue;
                }
                Ok(Ok(false)) => "another replica holds the lease".to_string(),
                Ok(Err(e)) if Instant::now() < valid_until => {
                    warn!(lease = %self.lease_name(), error = %crate::describe(&e), "renewing the lease failed; retrying");
                    continue;
                }
                Ok(Err(e)) => format!("renewal failed until the deadline: {}", crate::describe(&e)),
                Err(_) => "renewal did not complete within renewDeadline".to_string(),
            };
            self.tx.send_replace(LeaderState::Lost);
            return Err(Error::LeaseLost {
                namespace: self.config.namespace.clone(),
                name: self.config.name.clone(),
                reason,
            });
        }
    }

    fn lease_name(&self) -> String {
        format!("{}/{}", self.config.namespace, self.config.name)
    }

    /// Gives the lease up as client-go's `ReleaseOnCancel` does: empty holder, a
    /// one-second duration, so a standby replica takes over without waiting out the
    /// lease. Only if this replica still holds it; errors are logged.
    pub async fn release(&mut self) {
        self.tx.send_replace(LeaderState::Standby);
        let lease = match self.api.get_opt(&self.config.name).await {
            Ok(Some(l)) => l,
            Ok(None) => return,
            Err(e) => {
                warn!(lease = %self.lease_name(), error = %crate::describe(&e), "releasing the lease failed");
                return;
            }
        };
        let mut lease = lease;
        let Some(spec) = lease.spec.as_mut() else {
            return;
        };
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return;
        }
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        spec.holder_identity = Some(String::new());
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(now.clone());
        spec.acquire_time = Some(now);
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => info!(lease = %self.lease_name(), "released the lease"),
            Err(e) => {
                warn!(lease = %self.lease_name(), error = %crate::describe(&e), "releasing the lease failed")
            }
        }
    }
}
