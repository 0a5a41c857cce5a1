//! `serve`'s clients, built by crate `topospread-kubeclient` as the CLI's live reads
//! build theirs (the kubeconfig, the User-Agent, the token bucket); this crate's
//! [`Error`] for [`client`].

use std::convert::Infallible;

use axum::http::Request;
use kube::client::retry::RetryPolicy;
use topospread_kubeclient::limit::{ClientLimits, RateLimitLayer, TokenBucket};
use topospread_kubeclient::{ClientOptions, client_from_config, config};
use tower::retry::RetryLayer;
use tower::{BoxError, ServiceBuilder, ServiceExt as _};

use crate::Clients;
use crate::error::Result;

/// A client and the server URL it talks to (for error messages naming the cluster).
/// A kubeconfig that cannot be read or parsed is [`Error::Client`](crate::Error::Client)
/// holding [`ClientError::Kubeconfig`](crate::ClientError::Kubeconfig), naming it.
pub async fn client(options: &ClientOptions) -> Result<(kube::Client, String)> {
    Ok(topospread_kubeclient::client(options).await?)
}

/// `serve`'s three clients (see [`Clients`]) over one configuration, each with its own
/// bucket of `options.limits`, and the server URL.
pub async fn clients(options: &ClientOptions) -> Result<(Clients, String)> {
    let config = config(options).await?;
    let server = config.cluster_url.to_string();
    let build = |c: &kube::Config| client_from_config(c.clone(), options.command, options.limits);
    let clients = Clients {
        scheduler: build(&config)?,
        events: build(&config)?,
        leader_election: build(&config)?,
    };
    Ok((clients, server))
}

/// A client over `service` (the fake API server's router, in tests) with the stack
/// [`client_from_config`] gives a real one: requests wait on a token bucket of
/// `limits`, then 429/503/504 answers are retried after `Retry-After` with backoff.
pub fn client_over<S>(service: S, limits: ClientLimits, default_namespace: &str) -> kube::Client
where
    S: tower::Service<
            Request<kube::client::Body>,
            Response = axum::response::Response,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let stack = ServiceBuilder::new()
        .layer(RateLimitLayer::new(TokenBucket::new(limits)))
        .layer(RetryLayer::new(RetryPolicy::server_retry()))
        .service(service.map_err(|e: Infallible| -> BoxError { match e {} }));
    kube::client::ClientBuilder::new(stack, default_namespace).build()
}
