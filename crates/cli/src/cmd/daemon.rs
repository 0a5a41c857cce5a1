//! What `serve` and `guard --live` share to start and stop as daemons: the async
//! runtime, their ports and serving certificate, how `/metrics` and the health endpoints
//! authenticate (a delegation client of their own), the guard's Lease (which `serve
//! --guard` takes too), and SIGTERM/SIGINT.

use crate::cli::SecureServingArgs;
use anyhow::{Context as _, Result};
use tracing::{info, warn};

/// The multi-threaded async runtime both daemons run on.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// kube-scheduler's secure port, `serve`'s default.
pub(crate) const SERVE_PORT: u16 = 10259;

/// Where /metrics and the health endpoints listen; `None` for `--secure-port 0`.
pub(crate) fn listen_address(
    args: &SecureServingArgs,
    default_port: u16,
) -> Option<std::net::SocketAddr> {
    let port = args.secure_port.unwrap_or(default_port);
    (port != 0).then(|| std::net::SocketAddr::new(args.bind_address, port))
}

/// The serving certificate: the files given, or a fresh self-signed one; none for plain
/// HTTP or when nothing is served.
pub(crate) fn serving_tls(
    args: &SecureServingArgs,
    default_port: u16,
) -> Result<Option<topospread_serve::TlsConfig>> {
    if args.insecure_serving || listen_address(args, default_port).is_none() {
        return Ok(None);
    }
    let tls = match (&args.tls_cert_file, &args.tls_private_key_file) {
        (Some(cert), Some(key)) => topospread_serve::TlsConfig::from_files(cert, key)?,
        _ => topospread_serve::TlsConfig::self_signed(&[topospread_serve::host_name()])?,
    };
    info!(certificate = tls.origin(), "serving certificate");
    Ok(Some(tls))
}

/// How `/metrics` and the health endpoints serve. The reviews go through a client of
/// their own with kube-scheduler's delegation limits (qps 200, burst 400, set in
/// `DelegatingAuthenticationOptions.getClient`), so scraping never waits on binds.
pub(crate) async fn serving(
    args: &SecureServingArgs,
    tls: Option<topospread_serve::TlsConfig>,
    kubeconfig: Option<std::path::PathBuf>,
    context: Option<String>,
    command: &'static str,
) -> Result<topospread_serve::Serving> {
    if args.insecure_serving {
        warn!(
            "--insecure-serving: /metrics and the health endpoints are plain HTTP, open to anyone"
        );
    } else if args.skip_delegated_auth {
        warn!("--skip-delegated-auth: /metrics answers anyone");
    }
    let delegation = if args.insecure_serving || args.skip_delegated_auth || tls.is_none() {
        None
    } else {
        let (client, _) = topospread_serve::client(&topospread_serve::ClientOptions {
            kubeconfig,
            context,
            command,
            limits: topospread_serve::ClientLimits {
                qps: 200.0,
                burst: 400,
            },
            ..Default::default()
        })
        .await?;
        Some(
            topospread_serve::Delegation::new(client)
                .always_allow_paths(args.authorization_always_allow_paths.clone()),
        )
    };
    Ok(topospread_serve::Serving { tls, delegation })
}

/// The guard's default secure port (kube-scheduler's 10259 is `serve`'s).
pub(crate) const GUARD_PORT: u16 = 10260;

/// The guard's Lease: `topospread-guard` in `namespace`, with kube-scheduler's default
/// timings (15 s, 10 s, 2 s).
pub(crate) fn guard_lease(identity: String, namespace: &str) -> topospread_serve::LeaseConfig {
    topospread_serve::LeaseConfig {
        namespace: namespace.to_string(),
        name: topospread_serve::guard::GUARD_LEASE_NAME.to_string(),
        identity,
        lease_duration: std::time::Duration::from_secs(15),
        renew_deadline: std::time::Duration::from_secs(10),
        retry_period: std::time::Duration::from_secs(2),
    }
}

/// Waits for SIGTERM or SIGINT (Ctrl-C; only the latter off Unix).
pub(crate) async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
