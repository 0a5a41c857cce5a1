//! The handle tests hold ([`FakeApi`]), the axum router it builds, the request
//! log and fault-injection layer every request passes, and serving on loopback.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::discovery;
use crate::error::Error;
use crate::faults::{FaultState, Faults};
use crate::handlers;
use crate::pods;
use crate::request::RequestInfo;
use crate::resources::{self, PODS, RESOURCES};
use crate::reviews::{self, Identities};
use crate::store::{Store, meta_str};

/// One request as the server saw it, in Kubernetes terms, so a test can check
/// that every request a client made is allowed by an RBAC role.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestRecord {
    /// HTTP method (`GET`, `POST`, ...).
    pub method: String,
    /// URL path.
    pub path: String,
    /// URL query, without the `?` ("" if none).
    pub query: String,
    /// Kubernetes verb: get, list, watch, create, update, patch, delete,
    /// deletecollection; for non-resource URLs the lower-cased method.
    pub verb: String,
    /// API group ("" for core); `None` for non-resource URLs (`/version`, `/api`).
    pub group: Option<String>,
    /// Resource plural (`pods`), as RBAC rules name it.
    pub resource: Option<String>,
    /// Subresource (`binding`, `status`, `eviction`).
    pub subresource: Option<String>,
    /// Namespace of a namespaced request.
    pub namespace: Option<String>,
    /// Object name, for requests on one object.
    pub name: Option<String>,
    /// HTTP status answered (200 for a watch that started).
    pub status: u16,
    /// The `User-Agent` header, if the request carried one.
    pub user_agent: Option<String>,
}

impl RequestRecord {
    /// `resource` or `resource/subresource`, the form RBAC rules use.
    pub fn rbac_resource(&self) -> Option<String> {
        let resource = self.resource.as_ref()?;
        Some(match &self.subresource {
            Some(sub) => format!("{resource}/{sub}"),
            None => resource.clone(),
        })
    }
}

/// State shared by the handle, the router and the watch tasks.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) store: Store,
    faults: Mutex<FaultState>,
    log: Mutex<Vec<RequestRecord>>,
    bindings: Mutex<BTreeMap<(String, String), u32>>,
    pub(crate) open_watches: AtomicUsize,
    pub(crate) bookmark_interval: Duration,
    log_requests: bool,
    /// The minor release `/version` reports (`1.<minor>`).
    pub(crate) minor: u32,
    /// The tokens TokenReviews accept and the paths SubjectAccessReviews allow.
    identities: Mutex<Identities>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// The faults in force.
    pub(crate) fn faults(&self) -> Faults {
        lock(&self.faults).faults().clone()
    }

    /// The tokens and path grants the reviews answer from.
    pub(crate) fn identities(&self) -> MutexGuard<'_, Identities> {
        lock(&self.identities)
    }

    /// Counts one successful binding of a pod.
    pub(crate) fn record_binding(&self, namespace: &str, name: &str) {
        *lock(&self.bindings)
            .entry((namespace.to_owned(), name.to_owned()))
            .or_default() += 1;
    }
}

/// Settings of a [`FakeApi`], from [`FakeApi::builder`].
#[derive(Debug, Clone)]
pub struct Builder {
    seed: u64,
    log_requests: bool,
    history: usize,
    bookmark_interval: Duration,
    minor: u32,
}

impl Builder {
    /// The release `/version` reports, `1.<minor>` (default
    /// [`DEFAULT_MINOR`](crate::DEFAULT_MINOR)), for clients that behave as the
    /// cluster's release.
    pub fn kubernetes_minor(mut self, minor: u32) -> Self {
        self.minor = minor;
        self
    }

    /// Seeds UIDs and `generateName` suffixes (faults have their own seed).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// How many changes the watch history keeps (default 100,000); a watch
    /// resuming from further back gets 410 Expired.
    pub fn history(mut self, changes: usize) -> Self {
        self.history = changes;
        self
    }

    /// How often a watch that asked for bookmarks gets one (default 1 s; upstream
    /// sends them about once a minute).
    pub fn bookmark_interval(mut self, every: Duration) -> Self {
        self.bookmark_interval = every;
        self
    }

    /// Whether to keep the request log (default on); a long benchmark may turn
    /// it off to keep memory flat.
    pub fn log_requests(mut self, on: bool) -> Self {
        self.log_requests = on;
        self
    }

    /// The server.
    pub fn build(self) -> FakeApi {
        FakeApi {
            shared: Arc::new(Shared {
                store: Store::new(self.history, self.seed),
                faults: Mutex::new(FaultState::new()),
                log: Mutex::new(Vec::new()),
                bindings: Mutex::new(BTreeMap::new()),
                open_watches: AtomicUsize::new(0),
                bookmark_interval: self.bookmark_interval,
                log_requests: self.log_requests,
                minor: self.minor,
                identities: Mutex::new(Identities::default()),
            }),
        }
    }
}

/// An in-process fake Kubernetes API server and the handle tests use to seed
/// it, inspect it and inject faults. Clones share one server.
#[derive(Debug, Clone)]
pub struct FakeApi {
    shared: Arc<Shared>,
}

impl Default for FakeApi {
    fn default() -> Self {
        FakeApi::new()
    }
}

fn resolve(resource: &str) -> Result<usize, Error> {
    resources::by_name(resource).ok_or_else(|| Error::UnknownResource {
        resource: resource.to_owned(),
    })
}

impl FakeApi {
    /// A server with default settings and the namespaces a new cluster has.
    pub fn new() -> Self {
        FakeApi::builder().build()
    }

    /// Settings for a server.
    pub fn builder() -> Builder {
        Builder {
            seed: 0,
            log_requests: true,
            history: 100_000,
            bookmark_interval: Duration::from_secs(1),
            minor: discovery::DEFAULT_MINOR,
        }
    }

    /// The HTTP service: give it to `kube::Client::new(api.router(), "default")`
    /// for an in-process client, or serve it with [`FakeApi::serve`].
    pub fn router(&self) -> Router {
        let shared = self.shared.clone();
        Router::new()
            .route("/version", get(discovery::version))
            .route("/api", get(discovery::core_versions))
            .route("/api/{version}", get(discovery::core_resources))
            .route("/apis", get(discovery::groups))
            .route("/apis/{group}", get(discovery::group))
            .route("/apis/{group}/{version}", get(discovery::group_resources))
            .route("/openapi/v3", get(discovery::openapi_index))
            .route("/openapi/v3/{*path}", get(discovery::openapi_group_version))
            .route(
                "/apis/authentication.k8s.io/v1/tokenreviews",
                post(reviews::token_review),
            )
            .route(
                "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                post(reviews::subject_access_review),
            )
            .route("/healthz", get(discovery::healthz))
            .route("/livez", get(discovery::healthz))
            .route("/readyz", get(discovery::healthz))
            .fallback(handlers::resource)
            .layer(middleware::from_fn_with_state(shared.clone(), observe))
            .with_state(shared)
    }

    /// Serves the router on `addr` (use port 0 for any free port) until the
    /// returned [`Served`] is shut down or dropped.
    pub async fn serve(&self, addr: SocketAddr) -> Result<Served, Error> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| Error::Bind { addr, source })?;
        let local = listener
            .local_addr()
            .map_err(|source| Error::Bind { addr, source })?;
        let (tx, rx) = oneshot::channel::<()>();
        let router = self.router();
        let task = tokio::spawn(async move {
            let shutdown = async {
                let _ = rx.await;
            };
            if let Err(e) = axum::serve(listener, router)
                .with_graceful_shutdown(shutdown)
                .await
            {
                tracing::warn!(error = %e, "fake API server stopped");
            }
        });
        Ok(Served {
            addr: local,
            api: self.clone(),
            stop: Some(tx),
            task,
        })
    }

    /// Makes TokenReviews of `token` answer `authenticated: true` for `username` in
    /// `groups` (and `system:authenticated`, as a real server adds); any other token is
    /// refused.
    pub fn add_token(&self, token: &str, username: &str, groups: &[&str]) {
        self.shared.identities().add_token(token, username, groups);
    }

    /// Makes SubjectAccessReviews of the non-resource URL `path` with `verb` allowed
    /// for `subject`, a user name or a group; `*` as the verb, or a trailing `*` on the
    /// path, matches any. Anything not allowed is denied without a reason, as RBAC's
    /// "no opinion" answers.
    pub fn allow_path(&self, subject: &str, verb: &str, path: &str) {
        self.shared.identities().allow_path(subject, verb, path);
    }

    /// Creates an object as a client's create would (name from `generateName`,
    /// uid, resourceVersion, pod defaults and priority), but keeps a pod's
    /// `status` so tests can insert running pods. The resource comes from the
    /// object's `apiVersion` and `kind`; a namespaced object without a namespace
    /// goes to `default`.
    pub fn insert(&self, mut obj: Value) -> Result<Value, Error> {
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        let res = resources::by_kind(api_version, kind).ok_or_else(|| Error::BadObject {
            reason: format!("no served resource has apiVersion {api_version:?} and kind {kind:?}"),
        })?;
        let namespace = if RESOURCES[res].namespaced {
            match meta_str(&obj, "namespace") {
                "" => "default".to_owned(),
                ns => ns.to_owned(),
            }
        } else {
            String::new()
        };
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("resourceVersion");
        }
        if res == PODS {
            pods::prepare_create(&self.shared, &mut obj, true)?;
        }
        Ok((*self.shared.store.create(res, &namespace, obj)?).clone())
    }

    /// Changes a stored object in place (status included, no preconditions),
    /// producing a MODIFIED event. `resource` is `pods`, `deployments.apps`, ...
    pub fn modify(
        &self,
        resource: &str,
        namespace: &str,
        name: &str,
        f: impl FnOnce(&mut Value),
    ) -> Result<Value, Error> {
        let res = resolve(resource)?;
        let obj = self.shared.store.update(res, namespace, name, |old| {
            let mut new = old.clone();
            f(&mut new);
            Ok(new)
        })?;
        Ok((*obj).clone())
    }

    /// Deletes a stored object (finalizers are honoured).
    pub fn delete(&self, resource: &str, namespace: &str, name: &str) -> Result<Value, Error> {
        let res = resolve(resource)?;
        Ok((*self.shared.store.delete(res, namespace, name, |_| Ok(()))?).clone())
    }

    /// One stored object (`namespace` "" for cluster-scoped ones).
    pub fn get(&self, resource: &str, namespace: &str, name: &str) -> Result<Option<Value>, Error> {
        let res = resolve(resource)?;
        Ok(self
            .shared
            .store
            .get(res, namespace, name)
            .map(|o| (*o).clone()))
    }

    /// Stored objects of a resource, in one namespace or (`None`) all.
    pub fn list(&self, resource: &str, namespace: Option<&str>) -> Result<Vec<Value>, Error> {
        let res = resolve(resource)?;
        let page = self.shared.store.list(res, namespace, None, 0, |_| true);
        Ok(page.items.iter().map(|o| (**o).clone()).collect())
    }

    /// The newest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.store.rv()
    }

    /// How many times a pod was bound successfully through `pods/binding`.
    pub fn bindings(&self, namespace: &str, name: &str) -> u32 {
        lock(&self.shared.bindings)
            .get(&(namespace.to_owned(), name.to_owned()))
            .copied()
            .unwrap_or(0)
    }

    /// How many pods were bound at least once (cheap: nothing is copied).
    pub fn bound_pods(&self) -> usize {
        lock(&self.shared.bindings).len()
    }

    /// How many objects of a resource are stored (in `namespace`, or in all of them).
    pub fn count(&self, resource: &str, namespace: Option<&str>) -> Result<usize, Error> {
        let res = resolve(resource)?;
        Ok(self.shared.store.count(res, namespace))
    }

    /// Successful bindings per (namespace, pod name).
    pub fn binding_counts(&self) -> BTreeMap<(String, String), u32> {
        lock(&self.shared.bindings).clone()
    }

    /// Every request served so far, in arrival order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        lock(&self.shared.log).clone()
    }

    /// Empties the request log.
    pub fn clear_requests(&self) {
        lock(&self.shared.log).clear();
    }

    /// Replaces the faults in force (and reseeds their generator).
    pub fn set_faults(&self, faults: Faults) {
        lock(&self.shared.faults).set(faults);
    }

    /// Turns fault injection off.
    pub fn clear_faults(&self) {
        self.set_faults(Faults::default());
    }

    /// Ends every open watch stream now; clients resume from their last version.
    pub fn drop_watches(&self) {
        self.shared.store.drop_watches();
    }

    /// Forgets the change history and sends every open watch a 410 Expired
    /// error, so clients must relist.
    pub fn expire_watches(&self) {
        self.shared.store.expire_watches();
    }

    /// Forgets the change history: watches resuming from an older version (and
    /// list continue tokens from before now) get 410 Expired.
    pub fn compact(&self) {
        self.shared.store.compact();
    }

    /// Watch streams open now.
    pub fn open_watches(&self) -> usize {
        self.shared.open_watches.load(Ordering::SeqCst)
    }
}

/// Records every request and applies the faults in force before routing it.
async fn observe(State(shared): State<Arc<Shared>>, mut req: Request, next: Next) -> Response {
    let info = RequestInfo::parse(req.method(), req.uri());
    let verdict = lock(&shared.faults).decide(&info);
    if !verdict.latency.is_zero() {
        tokio::time::sleep(verdict.latency).await;
    }
    let method = req.method().to_string();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or("").to_owned();
    let user_agent = req
        .headers()
        .get(axum::http::header::USER_AGENT)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    req.extensions_mut().insert(info.clone());
    let response = match verdict.error {
        Some(e) => e.into_response(),
        None => next.run(req).await,
    };
    let target = info.target;
    let record = RequestRecord {
        method,
        path,
        query,
        verb: info.verb,
        group: target.as_ref().map(|t| t.group.clone()),
        resource: target.as_ref().map(|t| t.resource.clone()),
        subresource: target.as_ref().and_then(|t| t.subresource.clone()),
        namespace: target.as_ref().and_then(|t| t.namespace.clone()),
        name: target.as_ref().and_then(|t| t.name.clone()),
        status: response.status().as_u16(),
        user_agent,
    };
    tracing::debug!(verb = %record.verb, path = %record.path, status = record.status, "fake API request");
    if shared.log_requests {
        lock(&shared.log).push(record);
    }
    response
}

/// A server listening on loopback. Dropping it stops the server abruptly;
/// [`Served::shutdown`] ends watches first and waits for it.
#[derive(Debug)]
pub struct Served {
    addr: SocketAddr,
    api: FakeApi,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl Served {
    /// The address bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<addr>`, for `kubectl --server` or a kubeconfig.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A kubeconfig (YAML) whose current context points at this server with no
    /// credentials, for binaries that read `--kubeconfig`.
    pub fn kubeconfig(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {}\n\
             users:\n- name: fake\n  user: {{}}\ncontexts:\n- name: fake\n  context:\n    \
             cluster: fake\n    user: fake\n    namespace: default\ncurrent-context: fake\n",
            self.url()
        )
    }

    /// Ends open watches, stops accepting, and waits (up to 5 s) for in-flight
    /// requests.
    pub async fn shutdown(mut self) {
        self.api.drop_watches();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let task = &mut self.task;
        if tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .is_err()
        {
            self.task.abort();
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}
