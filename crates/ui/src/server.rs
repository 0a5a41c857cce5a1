//! The HTTP face: the embedded page and the JSON endpoints, behind a same-origin guard.

use crate::views::WhatIfRequest;
use crate::{Error, Session};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use tokio::net::TcpListener;

const INDEX: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const STYLE: &str = include_str!("page/style.css");

/// The page may load its own script and style and call its own origin, nothing else.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:";

/// A bound listener, ready to serve.
pub struct Bound {
    listener: TcpListener,
    /// The address bound (the port chosen when 0 was asked for).
    pub address: SocketAddr,
}

/// Binds `address:port` (port 0: any free port).
pub async fn bind(address: IpAddr, port: u16) -> Result<Bound, Error> {
    let asked = SocketAddr::new(address, port);
    let listener = TcpListener::bind(asked)
        .await
        .map_err(|source| Error::Bind {
            address: asked.to_string(),
            source,
        })?;
    let address = listener.local_addr().map_err(|source| Error::Bind {
        address: asked.to_string(),
        source,
    })?;
    Ok(Bound { listener, address })
}

impl Bound {
    /// The page's URL.
    pub fn url(&self) -> String {
        format!("http://{}/", self.address)
    }

    /// Serves `session` until `shutdown` completes.
    pub async fn serve(
        self,
        session: Arc<Session>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        let app = router(session, self.address.ip().is_loopback());
        axum::serve(self.listener, app)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(Error::Serve)
    }
}

/// The app's routes over `session`. With `loopback`, requests must name a loopback host
/// (a DNS-rebinding page cannot reach the server under another name).
pub fn router(session: Arc<Session>, loopback: bool) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/app.js", get(script))
        .route("/style.css", get(style))
        .route("/api/cluster", get(cluster))
        .route("/api/simulation", get(simulation))
        .route("/api/explain", get(explain))
        .route("/api/whatif", post(what_if))
        .route("/api/rebalance", get(rebalance))
        .route("/api/rebalance/moves", get(rebalance_moves))
        .route("/api/capacity", get(capacity))
        .fallback(not_found)
        .with_state(session)
        .layer(middleware::from_fn_with_state(loopback, same_origin))
}

/// A one-line JSON error.
fn error(status: StatusCode, message: impl Into<String>) -> Response {
    let body = serde_json::json!({ "error": message.into() }).to_string();
    (status, json_headers(), body).into_response()
}

fn json_headers() -> [(header::HeaderName, HeaderValue); 2] {
    [
        (
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        ),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ]
}

/// `body` as a JSON response.
fn json(body: String) -> Response {
    (StatusCode::OK, json_headers(), body).into_response()
}

/// `value` serialized as a JSON response.
fn to_json<T: serde::Serialize>(value: &T) -> Response {
    match serde_json::to_string(value) {
        Ok(body) => json(body),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// The status an error answers with: what the request named is missing (404), the
/// request is malformed (400), or the engine or API server refuses it (422).
fn status_of(e: &Error) -> StatusCode {
    match e {
        Error::Request(_) => StatusCode::BAD_REQUEST,
        Error::Job(topospread_jobs::Error::Refused(m)) if m.contains("not found") => {
            StatusCode::NOT_FOUND
        }
        Error::Job(topospread_jobs::Error::Simulation(_)) => StatusCode::INTERNAL_SERVER_ERROR,
        Error::Job(_) => StatusCode::UNPROCESSABLE_ENTITY,
        Error::Bind { .. } | Error::Serve(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Runs a job off the async threads and answers with its JSON or its error.
async fn blocking<F>(session: Arc<Session>, job: F) -> Response
where
    F: FnOnce(&Session) -> Result<Response, Error> + Send + 'static,
{
    match tokio::task::spawn_blocking(move || job(&session)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => error(status_of(&e), e.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

async fn index() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CSP),
        ],
        INDEX,
    )
        .into_response()
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such page or endpoint")
}

/// `GET /api/cluster[?selector=app=web]`: the domains, grouped.
async fn cluster(
    State(session): State<Arc<Session>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let selector = q.get("selector").filter(|s| !s.is_empty()).cloned();
    blocking(session, move |s| {
        s.cluster(selector.as_deref()).map(|v| to_json(&v))
    })
    .await
}

/// `GET /api/simulation`: the simulation report of the cluster as loaded.
async fn simulation(State(session): State<Arc<Session>>) -> Response {
    to_json(session.simulation())
}

/// `GET /api/explain?pod=NAMESPACE/NAME`: the pod's explain report.
async fn explain(
    State(session): State<Arc<Session>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let Some(pod) = q.get("pod").filter(|p| !p.is_empty()).cloned() else {
        return error(
            StatusCode::BAD_REQUEST,
            "explain: give ?pod=NAMESPACE/NAME (or KIND/NAME)",
        );
    };
    blocking(session, move |s| {
        s.explain(&pod).map(|j| json(j.as_str().to_owned()))
    })
    .await
}

/// `GET /api/rebalance[?strategy=topospread|descheduler]`: the RebalanceReport.
async fn rebalance(
    State(session): State<Arc<Session>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let strategy = q.get("strategy").cloned().unwrap_or_default();
    blocking(session, move |s| {
        s.rebalance(&strategy).map(|j| json(j.as_str().to_owned()))
    })
    .await
}

/// `GET /api/rebalance/moves[?strategy=...]`: the same plan's moves between domains,
/// with their arrows.
async fn rebalance_moves(
    State(session): State<Arc<Session>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let strategy = q.get("strategy").cloned().unwrap_or_default();
    blocking(session, move |s| {
        s.rebalance_moves(&strategy)
            .map(|j| json(j.as_str().to_owned()))
    })
    .await
}

/// `GET /api/capacity`: the capacity plan for `--node-template`, with its pictures.
async fn capacity(State(session): State<Arc<Session>>) -> Response {
    blocking(session, |s| {
        s.capacity().map(|j| json(j.as_str().to_owned()))
    })
    .await
}

/// `POST /api/whatif` with a JSON [`WhatIfRequest`]: before and after.
async fn what_if(State(session): State<Arc<Session>>, headers: HeaderMap, body: Bytes) -> Response {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "what-if: send Content-Type: application/json",
        );
    }
    let request: WhatIfRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("what-if: {e}")),
    };
    blocking(session, move |s| s.what_if(&request).map(|v| to_json(&v))).await
}

/// The host of a `Host` header value or an origin's authority, without the port.
fn host_name(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    authority.split(':').next().unwrap_or(authority)
}

/// Refuses cross-origin requests (an `Origin` other than the server's own, or a
/// browser's `Sec-Fetch-Site: cross-site`) and, on loopback, any `Host` but a loopback
/// name.
async fn same_origin(State(loopback): State<bool>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let get = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    let host = get(header::HOST).unwrap_or("");
    if loopback {
        let name = host_name(host);
        let local = name == "localhost" || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if !local {
            return error(
                StatusCode::FORBIDDEN,
                format!("Host {host:?} refused: this server answers loopback names only"),
            );
        }
    }
    if let Some(origin) = get(header::ORIGIN)
        && origin != format!("http://{host}")
    {
        return error(
            StatusCode::FORBIDDEN,
            format!("cross-origin request from {origin:?} refused"),
        );
    }
    if headers
        .get("sec-fetch-site")
        .is_some_and(|v| v.as_bytes() == b"cross-site")
    {
        return error(StatusCode::FORBIDDEN, "cross-site request refused");
    }
    next.run(request).await
}
