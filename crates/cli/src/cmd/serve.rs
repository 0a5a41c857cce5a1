//! `topospread serve`: the live secondary scheduler. Reads the KubeSchedulerConfiguration
//! as `validate` does, connects with the kubeconfig (or in-cluster config), and runs
//! topospread-serve until SIGTERM/SIGINT (exit 0 after a graceful stop) or until the
//! lease is lost (exit 1, so the pod restarts).

use crate::cli::{LogFormat, ServeArgs};
use anyhow::{Context, Result};
use std::process::ExitCode;
use tracing::{error, info};

/// Runs the scheduler.
pub(crate) fn run(args: &ServeArgs) -> Result<ExitCode> {
    init_logs(args.log_format);
    let no_files = super::input::Input {
        objects: Vec::new(),
        notes: Vec::new(),
        inputs: 0,
        symbols: Default::default(),
        refused: Vec::new(),
    };
    let setup = super::config::load(Some(&args.config), &no_files)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(args, setup))
}

fn init_logs(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

async fn serve(args: &ServeArgs, setup: super::config::SchedulerSetup) -> Result<ExitCode> {
    let (client, _) = topospread_serve::client(&topospread_serve::ClientOptions {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
        ..Default::default()
    })
    .await?;
    let mut options = topospread_serve::Options::new(setup.config);
    options.features = setup.features;
    options.request_options = super::input::gates().request_options();
    options.listen = Some(args.listen);
    let profiles: Vec<String> = options
        .config
        .profiles
        .iter()
        .map(|p| p.scheduler_name().to_string())
        .collect();
    info!(config = %setup.origin, ?profiles, listen = %args.listen, identity = %options.identity, "starting");
    let running = topospread_serve::start(client, options)?;
    let handle = running.handle().clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        info!("signal received: stopping");
        handle.shutdown();
    });
    match running.wait().await {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            error!(error = %e, "stopped");
            eprintln!("error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

async fn wait_for_signal() {
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
