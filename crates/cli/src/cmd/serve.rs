//! `topospread serve`: the live secondary scheduler. Reads the KubeSchedulerConfiguration
//! as `validate` does, connects with the kubeconfig (or in-cluster config), starts the
//! metrics and health server, asks the API server its release (`/version`, with back-off
//! until it answers, `/readyz` saying so meanwhile) and behaves as it unless
//! `--kubernetes-version` is given (an unmodelled release is refused, exit 2, unless
//! forced), and runs
//! topospread-serve until SIGTERM/SIGINT (exit 0 after a graceful stop) or until the
//! lease is lost (exit 1, so the pod restarts). `/metrics` and the health endpoints are
//! served as kube-scheduler's: HTTPS on `--bind-address`:`--secure-port` (a self-signed
//! certificate unless `--tls-cert-file`/`--tls-private-key-file` are given), `/metrics`
//! behind a TokenReview and a SubjectAccessReview; `--insecure-serving` and
//! `--skip-delegated-auth` are for local use.

use crate::cli::ServeArgs;
use crate::cmd::daemon::{self, SERVE_PORT, listen_address, serving, serving_tls, wait_for_signal};
use anyhow::Result;
use std::process::ExitCode;
use topospread_jobs::Context;
use topospread_jobs::config::SchedulerSetup;
use topospread_jobs::input::Input;
use tracing::{error, info, warn};

/// Runs the scheduler.
pub(crate) fn run(ctx: &Context, args: &ServeArgs) -> Result<ExitCode> {
    crate::cmd::logs::init(args.log_format);
    let setup = topospread_jobs::config::load(ctx, Some(&args.config), &Input::default())?;
    daemon::runtime()?.block_on(serve(ctx, args, setup))
}

async fn serve(ctx: &Context, args: &ServeArgs, setup: SchedulerSetup) -> Result<ExitCode> {
    // leaderElection is checked before any request (the release read included): a
    // refused Lease must not touch the cluster at all.
    let le = setup.config.leader_election();
    if le.leader_elect() {
        topospread_serve::LeaseConfig::from_config(
            &le,
            String::new(),
            "kube-system",
            args.allow_kube_scheduler_lease,
        )?;
    }
    // The serving certificate is read before any request too: a bad file is exit 2.
    let tls = serving_tls(&args.serving, SERVE_PORT)?;
    let connection = setup.config.client_connection();
    let limits = topospread_serve::ClientLimits::from_config(
        &connection,
        args.kube_api_qps,
        args.kube_api_burst,
    );
    // kube-rs speaks JSON only: a protobuf content type is noted, not refused.
    for (field, value) in [
        ("contentType", &connection.content_type),
        ("acceptContentTypes", &connection.accept_content_types),
    ] {
        if let Some(v) = value.as_deref().filter(|v| !v.contains("json")) {
            warn!(
                field,
                value = v,
                "clientConnection: topospread's client sends and accepts application/json only"
            );
        }
    }
    // --kubeconfig wins over clientConnection.kubeconfig, as kube-scheduler's flag does.
    let kubeconfig = args.kubeconfig.clone().or_else(|| {
        connection
            .kubeconfig
            .as_deref()
            .filter(|k| !k.is_empty())
            .map(std::path::PathBuf::from)
    });
    let (clients, server) = topospread_serve::clients(&topospread_serve::ClientOptions {
        kubeconfig: kubeconfig.clone(),
        context: args.context.clone(),
        command: "serve",
        limits,
        ..Default::default()
    })
    .await?;
    if limits.limited() {
        info!(qps = limits.qps, burst = limits.burst, "client rate limit");
    } else {
        info!("client rate limit: none (qps < 0)");
    }
    // SIGTERM/SIGINT from here on stop it with exit 0, whatever it is waiting for.
    let (signalled_tx, mut signalled) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        wait_for_signal().await;
        signalled_tx.send_replace(true);
    });
    let listen = listen_address(&args.serving, SERVE_PORT);
    let serving = serving(
        &args.serving,
        tls,
        kubeconfig,
        args.context.clone(),
        "serve",
    )
    .await?;
    let identity = topospread_serve::default_identity();
    let profiles: Vec<String> = setup
        .config
        .profiles
        .iter()
        .map(|p| p.scheduler_name().to_string())
        .collect();
    let scheme = if serving.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let shown = listen.map_or_else(|| "nowhere".to_string(), |a| format!("{scheme}://{a}"));
    info!(config = %setup.origin, ?profiles, listen = %shown, %identity, "starting");
    // The health server first, as kube-scheduler's: /healthz answers and /readyz says
    // what is waited for while the API server does not answer.
    let endpoints = match listen {
        Some(addr) => Some(topospread_serve::Endpoints::start(
            addr,
            &serving,
            std::sync::Arc::new(topospread_serve::Metrics::new()),
            topospread_serve::Readiness::waiting("waiting for the API server's release (/version)"),
        )?),
        None => None,
    };
    let readiness = endpoints
        .as_ref()
        .map_or_else(Default::default, |e| e.readiness().clone());
    let (ctx, setup) = tokio::select! {
        released = cluster_release(ctx, args, setup, &clients.scheduler, &server, &readiness) => released?,
        _ = signalled.wait_for(|s| *s) => {
            info!("signal received before the API server answered: stopping");
            return Ok(ExitCode::SUCCESS);
        }
    };
    let mut options = topospread_serve::Options::new(setup.config);
    options.features = setup.features;
    options.request_options = ctx.gates().request_options();
    options.listen = listen;
    options.serving = serving;
    options.identity = identity;
    options.allow_kube_scheduler_lease = args.allow_kube_scheduler_lease;
    options.skew_metrics_top = args.skew_metrics_top;
    let guard = if args.guard {
        let mut guard_options = topospread_serve::GuardOptions::new(options.config.clone());
        guard_options.features = options.features;
        guard_options.identity = options.identity.clone();
        let lease = le
            .leader_elect()
            .then(|| daemon::guard_lease(options.identity.clone(), &options.lease_namespace));
        Some((guard_options, lease))
    } else {
        None
    };
    let running = topospread_serve::start_with(clients.clone(), options, endpoints)?;
    let guard = guard.map(|(guard_options, lease)| {
        info!("starting the guard");
        topospread_serve::start_guard(
            clients.scheduler.clone(),
            guard_options,
            lease,
            running.handle().shared_metrics(),
        )
    });
    let handle = running.handle().clone();
    tokio::spawn(async move {
        if signalled.wait_for(|s| *s).await.is_ok() {
            info!("signal received: stopping");
            handle.shutdown();
        }
    });
    let stopped = running.wait().await;
    if let Some(g) = guard {
        g.shutdown().await;
    }
    match stopped {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            error!(error = %e, "stopped");
            stderr!("error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The release to behave as: the API server's unless `--kubernetes-version` is given,
/// logged; the configuration is read again under that release's gates. Before any watch.
/// The API server is asked until it answers (with back-off; `readiness` says so on
/// `/readyz`), unless the flag chose the release already.
async fn cluster_release(
    ctx: &Context,
    args: &ServeArgs,
    setup: SchedulerSetup,
    client: &kube::Client,
    server: &str,
    readiness: &topospread_serve::Readiness,
) -> Result<(Context, SchedulerSetup)> {
    let given = ctx.version_given().then(|| ctx.gates().version());
    let cluster = if given.is_some() {
        match topospread_serve::server_release(client, server).await {
            Ok(r) => Some(r),
            // The release is chosen already: the server's is only worth a mention.
            Err(e) => {
                warn!(error = %e, "the API server's release is unknown");
                None
            }
        }
    } else {
        Some(
            topospread_serve::wait_for_release(client, server, readiness, Default::default())
                .await?,
        )
    };
    let choice = topospread_serve::choose_release(
        cluster,
        given,
        args.allow_unsupported_kubernetes_version,
        server,
    )?;
    info!(release = %choice.version, "{choice}");
    if given.is_some() {
        return Ok((ctx.clone(), setup));
    }
    let gates = ctx.gates().for_release(choice.version)?;
    let ctx = ctx.clone().with_gates(gates, false);
    let setup = topospread_jobs::config::load(&ctx, Some(&args.config), &Input::default())?;
    Ok((ctx, setup))
}
