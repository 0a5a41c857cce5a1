//! The Kubernetes client, built the same way for `serve` and for the CLI's live reads:
//! `--kubeconfig` (with `--context`), else `KUBECONFIG` / `~/.kube/config` (with
//! `--context`), else the kubeconfig or in-cluster service account `Config::infer`
//! finds. Every request carries a `User-Agent` naming topospread, its version and the
//! command (`topospread/VERSION (serve)`), as kube-scheduler names itself: audit logs and
//! API Priority and Fairness rules key on it. Every request waits on one token bucket
//! ([`ClientLimits`], kube-scheduler's qps 50 / burst 100 by default) and a 429 is retried
//! after its `Retry-After` (see [`crate::limit`]).

use std::path::PathBuf;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::Clients;
use crate::error::{Error, Result};
use crate::limit::{ClientLimits, RateLimitLayer, TokenBucket};

/// Where the client's configuration comes from, and its timeouts.
#[derive(Clone, Debug, Default)]
pub struct ClientOptions {
    /// A kubeconfig file (`--kubeconfig`); `None`: `KUBECONFIG`, `~/.kube/config` or the
    /// in-cluster service account.
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (`--context`); `None`: its current context.
    pub context: Option<String>,
    /// How long to wait for a connection; `None`: kube's default.
    pub connect_timeout: Option<Duration>,
    /// How long to wait for a response; `None`: kube's default (long enough for
    /// watches).
    pub read_timeout: Option<Duration>,
    /// The command named in the User-Agent (`serve`, `simulate`, ...).
    pub command: &'static str,
    /// How fast requests may go.
    pub limits: ClientLimits,
}

/// The User-Agent of `command`'s requests: `topospread/VERSION (COMMAND)`.
pub fn user_agent(command: &str) -> String {
    let version = env!("CARGO_PKG_VERSION");
    if command.is_empty() {
        format!("topospread/{version}")
    } else {
        format!("topospread/{version} ({command})")
    }
}

/// A client over `config` whose every request carries [`user_agent`]`(command)` and
/// waits on one token bucket of `limits`; kube's own retry (on by default in the
/// config) retries 429, 503 and 504 after `Retry-After` with exponential backoff.
pub fn client_from_config(
    mut config: kube::Config,
    command: &str,
    limits: ClientLimits,
) -> Result<kube::Client> {
    let server = config.cluster_url.to_string();
    let agent =
        axum::http::HeaderValue::from_str(&user_agent(command)).map_err(|e| Error::Client {
            server: server.clone(),
            message: format!("User-Agent: {e}"),
        })?;
    config
        .headers
        .retain(|(name, _)| *name != axum::http::header::USER_AGENT);
    config.headers.push((axum::http::header::USER_AGENT, agent));
    let builder = kube::client::ClientBuilder::try_from(config).map_err(|e| Error::Client {
        server,
        message: one_line(&e.to_string()),
    })?;
    Ok(builder
        .with_layer(&RateLimitLayer::new(TokenBucket::new(limits)))
        .build())
}

/// The first line of an error: a parser's message can add a source excerpt below it.
fn one_line(message: &str) -> String {
    message.lines().next().unwrap_or("").trim_end().to_string()
}

/// A client and the server URL it talks to (for error messages naming the cluster).
/// A kubeconfig that cannot be read or parsed is [`Error::Kubeconfig`] naming it.
pub async fn client(options: &ClientOptions) -> Result<(kube::Client, String)> {
    let config = config(options).await?;
    let server = config.cluster_url.to_string();
    let client = client_from_config(config, options.command, options.limits)?;
    Ok((client, server))
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

/// The configuration `options` name, with their timeouts.
async fn config(options: &ClientOptions) -> Result<kube::Config> {
    let kube_options = KubeConfigOptions {
        context: options.context.clone(),
        ..KubeConfigOptions::default()
    };
    let mut config = match &options.kubeconfig {
        Some(path) => {
            let origin = || format!("kubeconfig {}", path.display());
            let kubeconfig = Kubeconfig::read_from(path).map_err(|e| Error::Kubeconfig {
                origin: origin(),
                message: one_line(&e.to_string()),
            })?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &kube_options)
                .await
                .map_err(|e| Error::Kubeconfig {
                    origin: origin(),
                    message: one_line(&e.to_string()),
                })?
        }
        None if options.context.is_some() => kube::Config::from_kubeconfig(&kube_options)
            .await
            .map_err(|e| Error::Kubeconfig {
                origin: "kubeconfig (KUBECONFIG or ~/.kube/config)".into(),
                message: one_line(&e.to_string()),
            })?,
        None => kube::Config::infer().await.map_err(|e| Error::Kubeconfig {
            origin: "no kubeconfig (KUBECONFIG, ~/.kube/config) and not in a cluster".into(),
            message: one_line(&e.to_string()),
        })?,
    };
    if options.connect_timeout.is_some() {
        config.connect_timeout = options.connect_timeout;
    }
    if options.read_timeout.is_some() {
        config.read_timeout = options.read_timeout;
    }
    Ok(config)
}
