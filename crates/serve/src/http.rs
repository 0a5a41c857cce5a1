//! `/metrics`, `/healthz` and `/readyz` on one listener.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::leader::Leadership;
use crate::metrics::Metrics;

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
