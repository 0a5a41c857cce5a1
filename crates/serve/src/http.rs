//! `/metrics`, `/healthz`, `/livez` and `/readyz` on one listener: HTTPS with delegated
//! authentication and authorization as kube-scheduler's secure serving, or plain HTTP
//! for local use.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
    ready: Arc<AtomicBool>,
    leadership: Leadership,
}

/// The router: `/metrics` (Prometheus text), `/healthz` (the process answers),
/// `/readyz` (every watcher finished its first list, and the replica has not waited
/// longer than a lease duration for a Lease someone else holds).
pub fn router(metrics: Arc<Metrics>, ready: Arc<AtomicBool>, leadership: Leadership) -> Router {
    Router::new()
        .route("/metrics", get(metrics_text))
        .route("/healthz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .with_state(Shared {
            metrics,
            ready,
            leadership,
        })
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
    if !s.ready.load(Ordering::SeqCst) {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "caches not synced: waiting for the initial lists".to_string(),
        );
    }
    match s.leadership.blocked() {
        Some(b) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "waited longer than leaseDuration for the lease {}, held by {}",
                b.lease, b.holder
            ),
        ),
        None => (StatusCode::OK, "ok".to_string()),
    }
}
