//! Client-side limits as kube-scheduler's client has them: one token bucket (`qps`,
//! `burst`) that every request of the client waits on before it is sent, as client-go's
//! `flowcontrol.NewTokenBucketRateLimiter` (reserve a token, sleep off the deficit, so
//! waiters go in turn), and `429 Too Many Requests` retried after the server's
//! `Retry-After` with exponential backoff (kube's `RetryPolicy::server_retry`, as
//! client-go's `checkWait`).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::Request;
use tokio::time::Instant;
use topospread::config::ClientConnection;
use tower::{BoxError, Layer, Service};

/// kube-scheduler's `clientConnection.qps` default (`SetDefaults_KubeSchedulerConfiguration`).
pub const DEFAULT_QPS: f32 = 50.0;
/// kube-scheduler's `clientConnection.burst` default.
pub const DEFAULT_BURST: u32 = 100;

/// How fast the client may send requests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClientLimits {
    /// Requests per second on average; zero or less: no limit (client-go builds no rate
    /// limiter for a negative qps).
    pub qps: f32,
    /// Requests that may go at once after a quiet spell.
    pub burst: u32,
}

impl Default for ClientLimits {
    /// kube-scheduler's: qps 50, burst 100.
    fn default() -> Self {
        Self {
            qps: DEFAULT_QPS,
            burst: DEFAULT_BURST,
        }
    }
}

impl ClientLimits {
    /// No limit.
    pub const UNLIMITED: Self = Self { qps: 0.0, burst: 0 };

    /// `clientConnection.qps`/`burst` after kube-scheduler's v1 defaulting (0 or unset:
    /// 50 and 100; a negative qps: no limit), then the flags given
    /// (`--kube-api-qps`/`--kube-api-burst`), which win as kube-scheduler's
    /// `ApplyDeprecated` lets them.
    pub fn from_config(
        connection: &ClientConnection,
        qps_flag: Option<f32>,
        burst_flag: Option<u32>,
    ) -> Self {
        let qps = match qps_flag.or(connection.qps.map(|q| q as f32)) {
            Some(q) if q != 0.0 => q,
            _ => DEFAULT_QPS,
        };
        let burst = match burst_flag.or(connection.burst.and_then(|b| u32::try_from(b).ok())) {
            Some(b) if b != 0 => b,
            _ => DEFAULT_BURST,
        };
        if qps < 0.0 {
            Self::UNLIMITED
        } else {
            Self { qps, burst }
        }
    }

    /// Whether requests are limited at all.
    pub fn limited(&self) -> bool {
        self.qps > 0.0
    }
}

/// A token bucket shared by every request of one client (clones share it).
#[derive(Clone, Debug)]
pub struct TokenBucket {
    inner: Option<Arc<Mutex<Bucket>>>,
}

#[derive(Debug)]
struct Bucket {
    qps: f64,
    burst: f64,
    /// Tokens left; below zero when waiters have reserved tokens not yet refilled.
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket for `limits`; with no limit, one that never waits.
    pub fn new(limits: ClientLimits) -> Self {
        let inner = limits.limited().then(|| {
            let burst = f64::from(limits.burst.max(1));
            Arc::new(Mutex::new(Bucket {
                qps: f64::from(limits.qps),
                burst,
                tokens: burst,
                last: Instant::now(),
            }))
        });
        Self { inner }
    }

    /// Takes a token, waiting until the bucket has refilled enough for it.
    pub async fn acquire(self) {
        let Some(inner) = &self.inner else {
            return;
        };
        let wait = {
            let mut b = inner.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let refill = now.duration_since(b.last).as_secs_f64() * b.qps;
            b.tokens = (b.tokens + refill).min(b.burst);
            b.last = now;
            b.tokens -= 1.0;
            (b.tokens < 0.0).then(|| Duration::from_secs_f64(-b.tokens / b.qps))
        };
        if let Some(wait) = wait {
            tokio::time::sleep(wait).await;
        }
    }
}

/// The layer that makes every request wait on a [`TokenBucket`].
#[derive(Clone, Debug)]
pub struct RateLimitLayer {
    bucket: TokenBucket,
}

impl RateLimitLayer {
    /// Over this bucket.
    pub fn new(bucket: TokenBucket) -> Self {
        Self { bucket }
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimited<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RateLimited {
            inner,
            bucket: self.bucket.clone(),
            waiting: None,
            has_token: false,
        }
    }
}

type Wait = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A service whose readiness waits for a token: kube's client buffers requests in front
/// of it, so they leave in order, each with its token.
pub struct RateLimited<S> {
    inner: S,
    bucket: TokenBucket,
    waiting: Option<Wait>,
    has_token: bool,
}

impl<S> std::fmt::Debug for RateLimited<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimited")
            .field("bucket", &self.bucket)
            .field("has_token", &self.has_token)
            .finish_non_exhaustive()
    }
}

impl<S: Clone> Clone for RateLimited<S> {
    /// A clone shares the bucket; it starts without a token.
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            bucket: self.bucket.clone(),
            waiting: None,
            has_token: false,
        }
    }
}

impl<S, B> Service<Request<B>> for RateLimited<S>
where
    S: Service<Request<B>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        if !self.has_token {
            let bucket = &self.bucket;
            let wait = self
                .waiting
                .get_or_insert_with(|| Box::pin(bucket.clone().acquire()));
            if wait.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.waiting = None;
            self.has_token = true;
        }
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        self.has_token = false;
        let response = self.inner.call(req);
        Box::pin(async move { response.await.map_err(Into::into) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_and_flags_as_kube_scheduler_defaults_them() {
        let none = ClientConnection::default();
        assert_eq!(
            ClientLimits::from_config(&none, None, None),
            ClientLimits::default()
        );
        let set = ClientConnection {
            qps: Some(20.0),
            burst: Some(30),
            ..ClientConnection::default()
        };
        let l = ClientLimits::from_config(&set, None, None);
        assert_eq!((l.qps, l.burst), (20.0, 30));
        let l = ClientLimits::from_config(&set, Some(200.0), Some(400));
        assert_eq!((l.qps, l.burst), (200.0, 400));
        let zero = ClientConnection {
            qps: Some(0.0),
            burst: Some(0),
            ..ClientConnection::default()
        };
        assert_eq!(
            ClientLimits::from_config(&zero, None, None),
            ClientLimits::default()
        );
        assert!(!ClientLimits::from_config(&none, Some(-1.0), None).limited());
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_goes_at_once_then_qps_paces() {
        let bucket = TokenBucket::new(ClientLimits {
            qps: 10.0,
            burst: 5,
        });
        let start = Instant::now();
        for _ in 0..5 {
            bucket.clone().acquire().await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO);
        for _ in 0..10 {
            bucket.clone().acquire().await;
        }
        // Ten more tokens at 10 per second.
        let elapsed = start.elapsed();
        assert!(
            elapsed >= Duration::from_millis(990) && elapsed <= Duration::from_millis(1010),
            "{elapsed:?}"
        );
        let unlimited = TokenBucket::new(ClientLimits::UNLIMITED);
        let start = Instant::now();
        for _ in 0..1000 {
            unlimited.clone().acquire().await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO);
    }
}
