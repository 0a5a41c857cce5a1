//! `/metrics`, `/healthz`, `/livez` and `/readyz` on one listener: HTTPS with delegated
//! authentication and authorization as kube-scheduler's secure serving, or plain HTTP
//! for local use.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tracing::{debug, warn};

use crate::auth::{self, Delegation};
use crate::leader::Leadership;
use crate::metrics::Metrics;
use crate::tls::TlsConfig;

/// How long a client may take over its TLS handshake before its connection is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How the metrics and health endpoint serves. The default, plain HTTP open to anyone,
/// is for tests and local use; `topospread serve` serves HTTPS with delegation unless
/// told otherwise.
#[derive(Clone, Debug, Default)]
pub struct Serving {
    /// The certificate to serve HTTPS with; `None`: plain HTTP.
    pub tls: Option<TlsConfig>,
    /// Who may read what; `None`: anyone, anything.
    pub delegation: Option<Delegation>,
}

/// [`router`] behind `delegation`'s checks, when there is one.
pub fn guarded(router: Router, delegation: Option<Delegation>) -> Router {
    match delegation {
        Some(d) => router.layer(axum::middleware::from_fn_with_state(d, auth::check)),
        None => router,
    }
}

/// Serves `app` on `listener` until an error ends it (its message is returned): plain
/// HTTP, or HTTPS with `tls` (HTTP/1.1; each handshake in a task of its own, so a slow
/// client holds no one else up).
pub(crate) async fn serve(listener: TcpListener, app: Router, tls: Option<TlsConfig>) -> String {
    let Some(tls) = tls else {
        return match axum::serve(listener, app).await {
            Ok(()) => "it returned".to_string(),
            Err(e) => e.to_string(),
        };
    };
    let acceptor = tokio_rustls::TlsAcceptor::from(tls.server_config());
    loop {
        let tcp = match listener.accept().await {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                // As axum's own loop: a failed accept (a reset connection, or no file
                // descriptor left) is skipped after a pause, never fatal.
                warn!(error = %e, "accepting a connection to the metrics endpoint");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let app = app.clone();
        tokio::spawn(async move {
            let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => {
                    debug!(error = %e, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    debug!("TLS handshake timed out");
                    return;
                }
            };
            // With a timer, hyper's 30 s limit on reading a request's headers applies.
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .serve_connection(TokioIo::new(stream), TowerToHyperService::new(app));
            if let Err(e) = connection.await {
                debug!(error = %e, "metrics endpoint connection");
            }
        });
    }
}

#[derive(Clone)]
struct Shared {
    metrics: Arc<Metrics>,
    readiness: Readiness,
}

/// What `/readyz` waits for, shared between the endpoint and what starts up: the API
/// server's release, the caches, and a Lease another holder keeps. The server starts
/// first (as kube-scheduler's), so `/healthz` answers while the rest is retried.
#[derive(Clone, Debug, Default)]
pub struct Readiness {
    inner: Arc<ReadinessState>,
}

#[derive(Debug, Default)]
struct ReadinessState {
    /// What is waited for, in words; `None`: nothing.
    waiting: Mutex<Option<String>>,
    /// The replica's leadership, once it has one.
    leadership: Mutex<Option<Leadership>>,
}

impl Readiness {
    /// Not ready, waiting for `what`.
    pub fn waiting(what: impl Into<String>) -> Self {
        let r = Self::default();
        r.wait_for(what);
        r
    }

    /// Not ready until [`Readiness::set_ready`]: waiting for `what` now.
    pub fn wait_for(&self, what: impl Into<String>) {
        *lock(&self.inner.waiting) = Some(what.into());
    }

    /// Nothing more to wait for (ready unless the leadership is blocked).
    pub fn set_ready(&self) {
        *lock(&self.inner.waiting) = None;
    }

    /// Also not ready while `leadership` waits longer than a lease duration for a Lease
    /// another holder keeps.
    pub fn follow(&self, leadership: Leadership) {
        *lock(&self.inner.leadership) = Some(leadership);
    }

    /// Why it is not ready; `None` when it is.
    pub fn not_ready(&self) -> Option<String> {
        if let Some(what) = lock(&self.inner.waiting).clone() {
            return Some(what);
        }
        let blocked = lock(&self.inner.leadership)
            .as_ref()
            .and_then(Leadership::blocked)?;
        Some(format!(
            "waited longer than leaseDuration for the lease {}, held by {}",
            blocked.lease, blocked.holder
        ))
    }
}

/// A lock whose holder never panics while holding it; poisoning is ignored.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The router: `/metrics` (Prometheus text), `/healthz` and `/livez` (the process
/// answers), `/readyz` (200 once `readiness` waits for nothing, else 503 naming what).
pub fn router(metrics: Arc<Metrics>, readiness: Readiness) -> Router {
    Router::new()
        .route("/metrics", get(metrics_text))
        .route("/healthz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .with_state(Shared { metrics, readiness })
}

async fn metrics_text(State(s): State<Shared>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        s.metrics.encode(),
    )
}

async fn readyz(State(s): State<Shared>) -> impl IntoResponse {
    match s.readiness.not_ready() {
        Some(why) => (StatusCode::SERVICE_UNAVAILABLE, why),
        None => (StatusCode::OK, "ok".to_string()),
    }
}

/// The metrics and health server, listening: started before anything asks the API
/// server, then handed to [`crate::start_with`] which keeps serving on it.
#[derive(Debug)]
pub struct Endpoints {
    pub(crate) task: tokio::task::JoinHandle<String>,
    pub(crate) addr: SocketAddr,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) readiness: Readiness,
}

impl Endpoints {
    /// Binds `addr` and serves `metrics` and `readiness` there as `serving` says. Needs a
    /// tokio runtime.
    pub fn start(
        addr: SocketAddr,
        serving: &Serving,
        metrics: Arc<Metrics>,
        readiness: Readiness,
    ) -> crate::Result<Self> {
        let listen = |source| crate::Error::Listen { addr, source };
        let std = std::net::TcpListener::bind(addr).map_err(listen)?;
        std.set_nonblocking(true).map_err(listen)?;
        let l = TcpListener::from_std(std).map_err(listen)?;
        let bound = l.local_addr().unwrap_or(addr);
        let app = guarded(
            router(metrics.clone(), readiness.clone()),
            serving.delegation.clone(),
        );
        let task = tokio::spawn(serve(l, app, serving.tls.clone()));
        Ok(Self {
            task,
            addr: bound,
            metrics,
            readiness,
        })
    }

    /// The address it listens on (the port chosen when port 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What `/readyz` reports.
    pub fn readiness(&self) -> &Readiness {
        &self.readiness
    }

    /// The metrics it serves.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }
}
