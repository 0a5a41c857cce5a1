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
    let agent = http::HeaderValue::from_str(&user_agent(command)).map_err(|e| Error::Client {
        server: server.clone(),
        message: format!("User-Agent: {e}"),
    })?;
    config
        .headers
        .retain(|(name, _)| *name != http::header::USER_AGENT);
    config.headers.push((http::header::USER_AGENT, agent));
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

/// The configuration `options` name, with their timeouts.
pub async fn config(options: &ClientOptions) -> Result<kube::Config> {
    let kube_options = KubeConfigOptions {
        context: options.context.clone(),
        ..KubeConfigOptions::default()
    };
    let mut config = match &options.kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path).map_err(|e| Error::Kubeconfig {
                origin: origin(options),
                message: one_line(&e.to_string()),
            })?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &kube_options)
                .await
                .map_err(|e| Error::Kubeconfig {
                    origin: origin(options),
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
    if config.cluster_url.scheme_str() == Some("https") && !has_credentials(&config.auth_info) {
        return Err(Error::Kubeconfig {
            origin: origin(options),
            message: format!(
                "its user has no credentials (token, tokenFile, client certificate and key, \
                 exec, auth-provider, or username and password) for {}: every request would \
                 be anonymous",
                config.cluster_url
            ),
        });
    }
    if options.connect_timeout.is_some() {
        config.connect_timeout = options.connect_timeout;
    }
    if options.read_timeout.is_some() {
        config.read_timeout = options.read_timeout;
    }
    Ok(config)
}

/// Which configuration `options` name, for errors: `kubeconfig PATH`, or where it was
/// looked for.
fn origin(options: &ClientOptions) -> String {
    match &options.kubeconfig {
        Some(path) => format!("kubeconfig {}", path.display()),
        None if options.context.is_some() => "kubeconfig (KUBECONFIG or ~/.kube/config)".into(),
        None => "kubeconfig (KUBECONFIG, ~/.kube/config) or in-cluster service account".into(),
    }
}

/// Whether `user` carries any way to authenticate. A secure server answers a request
/// without credentials as `system:anonymous` (403 on everything the scheduler needs), so a
/// kubeconfig without them is refused before any watch starts; a plain-HTTP server
/// (`kubectl proxy`, a local test server) authenticates nothing and needs none.
fn has_credentials(user: &kube::config::AuthInfo) -> bool {
    user.token.is_some()
        || user.token_file.is_some()
        || user.client_certificate.is_some()
        || user.client_certificate_data.is_some()
        || user.exec.is_some()
        || user.auth_provider.is_some()
        || (user.username.is_some() && user.password.is_some())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    /// A kubeconfig file for `server` and `user` (a YAML mapping), removed when dropped.
    struct Kubeconfig(PathBuf);

    impl Kubeconfig {
        fn new(server: &str, user: &str) -> Self {
            static N: AtomicU32 = AtomicU32::new(0);
            let path = std::env::temp_dir().join(format!(
                "topospread-kubeconfig-{}-{}.yaml",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let text = format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n\
                 users:\n- name: u\n  user: {user}\ncontexts:\n- name: c\n  context:\n    \
                 cluster: c\n    user: u\ncurrent-context: c\n"
            );
            std::fs::write(&path, text).unwrap();
            Self(path)
        }
    }

    impl Drop for Kubeconfig {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn options(path: &Path) -> ClientOptions {
        ClientOptions {
            kubeconfig: Some(path.to_path_buf()),
            command: "serve",
            ..ClientOptions::default()
        }
    }

    #[tokio::test]
    async fn a_secure_server_without_credentials_is_refused_naming_the_kubeconfig() {
        let file = Kubeconfig::new("https://10.0.0.1:6443", "{}");
        let e = config(&options(&file.0)).await.unwrap_err().to_string();
        let expected = format!(
            "kubeconfig {}: its user has no credentials",
            file.0.display()
        );
        assert!(e.starts_with(&expected), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[tokio::test]
    async fn a_token_an_exec_plugin_or_a_plain_http_server_is_accepted() {
        for (server, user) in [
            ("https://10.0.0.1:6443", "{token: abc}"),
            (
                "https://10.0.0.1:6443",
                "{exec: {apiVersion: client.authentication.k8s.io/v1, command: get-token}}",
            ),
            ("http://127.0.0.1:8001", "{}"),
        ] {
            let file = Kubeconfig::new(server, user);
            assert!(config(&options(&file.0)).await.is_ok(), "{server} {user}");
        }
    }
}
