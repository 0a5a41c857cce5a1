//! Delegated authentication and authorization of the metrics and health endpoint, as
//! kube-scheduler's (k8s.io/apiserver `DelegatingAuthenticationOptions` and
//! `DelegatingAuthorizationOptions`): a bearer token is checked with a TokenReview
//! (authentication.k8s.io/v1); a request without one is `system:anonymous` (upstream's
//! anonymous authenticator is on by default). The user is then authorized with a
//! SubjectAccessReview (authorization.k8s.io/v1) on the non-resource URL and the
//! request's verb, except on the always-allowed paths (`/healthz`, `/readyz`, `/livez`
//! by default, kube-scheduler's `--authorization-always-allow-paths`) and for the
//! `system:masters` group. A rejected token answers 401, a denied request 403, a failed
//! review 401 (authentication) or 500 (authorization), each with an API `Status` body as
//! upstream's `responsewriters` write it. Answers are cached for 10 s (upstream's
//! `authentication-token-webhook-cache-ttl` and `authorization-webhook-cache-{authorized,
//! unauthorized}-ttl` defaults); failed reviews are not cached.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};
use tokio::time::Instant;
use tracing::warn;

/// kube-scheduler's `--authorization-always-allow-paths` default.
pub const DEFAULT_ALWAYS_ALLOW_PATHS: [&str; 3] = ["/healthz", "/readyz", "/livez"];
/// kube-scheduler's always-allowed group (`DelegatingAuthorizationOptions.AlwaysAllowGroups`).
pub const ALWAYS_ALLOW_GROUP: &str = "system:masters";
/// How long a review's answer is reused (upstream's 10 s defaults).
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(10);
/// At most this many answers are kept per cache; past it the expired ones go, then all.
const CACHE_LIMIT: usize = 4096;

/// Who made a request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UserInfo {
    /// `status.user.username`, or `system:anonymous`.
    pub username: String,
    /// Its uid, when the TokenReview gave one.
    pub uid: Option<String>,
    /// Its groups.
    pub groups: Vec<String>,
    /// Its extra attributes.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The user of a request that carries no bearer token, as upstream's anonymous
    /// authenticator names it.
    pub fn anonymous() -> Self {
        Self {
            username: "system:anonymous".into(),
            uid: None,
            groups: vec!["system:unauthenticated".into()],
            extra: BTreeMap::new(),
        }
    }
}

/// Checks requests with TokenReviews and SubjectAccessReviews through `client`.
#[derive(Clone)]
pub struct Delegation {
    client: kube::Client,
    always_allow_paths: Arc<Vec<String>>,
    ttl: Duration,
    tokens: Arc<Mutex<TtlCache<String, Option<UserInfo>>>>,
    decisions: Arc<Mutex<TtlCache<Attributes, Decision>>>,
}

/// What a SubjectAccessReview asks: the user, the path, the verb.
type Attributes = (UserInfo, String, String);

impl std::fmt::Debug for Delegation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delegation")
            .field("always_allow_paths", &self.always_allow_paths)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// An authorization answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Allowed.
    Allow,
    /// Denied, with the reviewer's reason (may be empty).
    Deny(String),
}

/// A review that could not be made (the API server's error, on one line).
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReviewError(String);

impl Delegation {
    /// Reviews through `client`, with the default always-allowed paths and cache TTL.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            always_allow_paths: Arc::new(
                DEFAULT_ALWAYS_ALLOW_PATHS
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
            ),
            ttl: DEFAULT_CACHE_TTL,
            tokens: Arc::new(Mutex::new(TtlCache::new(DEFAULT_CACHE_TTL))),
            decisions: Arc::new(Mutex::new(TtlCache::new(DEFAULT_CACHE_TTL))),
        }
    }

    /// The paths allowed without a SubjectAccessReview: exact, or a prefix when the
    /// entry ends in `*` (upstream's path authorizer).
    pub fn always_allow_paths(mut self, paths: Vec<String>) -> Self {
        self.always_allow_paths = Arc::new(paths);
        self
    }

    /// How long answers are reused.
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self.tokens = Arc::new(Mutex::new(TtlCache::new(ttl)));
        self.decisions = Arc::new(Mutex::new(TtlCache::new(ttl)));
        self
    }

    /// The user a bearer token belongs to (`None`: the TokenReview did not authenticate
    /// it), from the cache when it answered within the TTL.
    pub async fn authenticate(&self, token: &str) -> Result<Option<UserInfo>, ReviewError> {
        if let Some(known) = lock(&self.tokens).get(&token.to_string()) {
            return Ok(known);
        }
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_string(),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| ReviewError(format!("TokenReview: {}", crate::describe(&e))))?;
        let status = answer.status.unwrap_or_default();
        let user = match (status.authenticated, status.user) {
            (Some(true), Some(u)) => Some(UserInfo {
                username: u.username.unwrap_or_default(),
                uid: u.uid,
                groups: u.groups.unwrap_or_default(),
                extra: u.extra.unwrap_or_default().into_iter().collect(),
            }),
            _ => None,
        };
        lock(&self.tokens).put(token.to_string(), user.clone());
        Ok(user)
    }

    /// Whether `user` may `verb` the non-resource URL `path`.
    pub async fn authorize(
        &self,
        user: &UserInfo,
        path: &str,
        verb: &str,
    ) -> Result<Decision, ReviewError> {
        if self.always_allowed(path) || user.groups.iter().any(|g| g == ALWAYS_ALLOW_GROUP) {
            return Ok(Decision::Allow);
        }
        let key = (user.clone(), path.to_string(), verb.to_string());
        if let Some(known) = lock(&self.decisions).get(&key) {
            return Ok(known);
        }
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(user.username.clone()),
                uid: user.uid.clone(),
                groups: Some(user.groups.clone()),
                extra: (!user.extra.is_empty()).then(|| user.extra.clone().into_iter().collect()),
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_string()),
                    verb: Some(verb.to_string()),
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| ReviewError(format!("SubjectAccessReview: {}", crate::describe(&e))))?;
        let status = answer.status.unwrap_or_default();
        let decision = if status.allowed && !status.denied.unwrap_or(false) {
            Decision::Allow
        } else {
            Decision::Deny(status.reason.unwrap_or_default())
        };
        lock(&self.decisions).put(key, decision.clone());
        Ok(decision)
    }

    fn always_allowed(&self, path: &str) -> bool {
        self.always_allow_paths
            .iter()
            .any(|p| match p.strip_suffix('*') {
                Some(prefix) => path.starts_with(prefix),
                None => p == path,
            })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Answers kept for a while.
struct TtlCache<K, V> {
    ttl: Duration,
    entries: HashMap<K, (Instant, V)>,
}

impl<K: Eq + Hash, V: Clone> TtlCache<K, V> {
    fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: HashMap::new(),
        }
    }

    fn get(&mut self, key: &K) -> Option<V> {
        let now = Instant::now();
        match self.entries.get(key) {
            Some((until, v)) if *until > now => Some(v.clone()),
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    fn put(&mut self, key: K, value: V) {
        if self.ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        if self.entries.len() >= CACHE_LIMIT {
            self.entries.retain(|_, (until, _)| *until > now);
            if self.entries.len() >= CACHE_LIMIT {
                self.entries.clear();
            }
        }
        self.entries.insert(key, (now + self.ttl, value));
    }
}

/// The axum middleware: authenticate, authorize, then run the handler.
pub(crate) async fn check(State(d): State<Delegation>, req: Request, next: Next) -> Response {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    let user = match token {
        None => UserInfo::anonymous(),
        Some(t) => match d.authenticate(&t).await {
            Ok(Some(u)) => u,
            Ok(None) => return unauthorized(),
            Err(e) => {
                warn!(error = %e, "authenticating a request to the metrics endpoint");
                return unauthorized();
            }
        },
    };
    let path = req.uri().path().to_string();
    // Upstream's verb for a non-resource request: the method, lower-cased.
    let verb = req.method().as_str().to_ascii_lowercase();
    match d.authorize(&user, &path, &verb).await {
        Ok(Decision::Allow) => next.run(req).await,
        Ok(Decision::Deny(reason)) => {
            let mut message = format!(
                "forbidden: User {:?} cannot {verb} path {:?}",
                user.username, path
            );
            if !reason.is_empty() {
                message = format!("{message}: {reason}");
            }
            status(StatusCode::FORBIDDEN, "Forbidden", &message)
        }
        Err(e) => {
            warn!(error = %e, "authorizing a request to the metrics endpoint");
            status(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalError",
                &format!("Internal error occurred: {e}"),
            )
        }
    }
}

fn unauthorized() -> Response {
    status(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized")
}

/// A failure `Status` as upstream's `responsewriters` write one.
fn status(code: StatusCode, reason: &str, message: &str) -> Response {
    let body = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": {},
        "code": code.as_u16(),
    });
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn answers_expire_after_the_ttl() {
        let mut c = TtlCache::new(Duration::from_secs(10));
        c.put("a", 1);
        assert_eq!(c.get(&"a"), Some(1));
        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(c.get(&"a"), None);
        assert!(c.entries.is_empty());
    }

    #[tokio::test]
    async fn the_cache_stays_bounded() {
        let mut c = TtlCache::new(Duration::from_secs(10));
        for i in 0..CACHE_LIMIT + 5 {
            c.put(i, i);
        }
        assert!(c.entries.len() <= CACHE_LIMIT);
        assert_eq!(c.get(&(CACHE_LIMIT + 4)), Some(CACHE_LIMIT + 4));
    }
}
