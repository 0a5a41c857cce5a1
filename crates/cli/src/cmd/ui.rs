//! `topospread ui`: loads the cluster once (files, folders, stdin, a live cluster) and
//! serves the web app of crate `topospread-ui` until interrupted.

use crate::cli::UiArgs;
use anyhow::Result;
use std::process::ExitCode;
use topospread_jobs::Context;

#[cfg(feature = "ui")]
pub(crate) fn run(ctx: &Context, args: &UiArgs) -> Result<ExitCode> {
    use anyhow::Context as _;
    use std::sync::Arc;
    use topospread_ui::{Options, Session};

    let mut options = Options::new(args.namespace.apply(args.cluster.cluster()?));
    options.scale = args.scale.clone();
    options.templates = args.templates.clone();
    options.instance_types = args.instance_types.clone();
    let session = super::term::with_spinner("loading", || Session::load(ctx, options))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let bound = topospread_ui::bind(args.address, args.port).await?;
        if !bound.address.ip().is_loopback() {
            stderr!(
                "warning: listening on {}, beyond loopback: anyone who reaches it reads the cluster",
                bound.address
            );
        }
        stderr!("topospread ui: {} (Ctrl-C stops)", bound.url());
        let stop = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        bound.serve(Arc::new(session), stop).await
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Refuses: the web app is served by the `live` build (axum, tokio).
#[cfg(not(feature = "ui"))]
pub(crate) fn run(_ctx: &Context, _args: &UiArgs) -> Result<ExitCode> {
    anyhow::bail!(
        "ui: this topospread was built without the `live` feature; install one with it: cargo install --path crates/cli (the default features)"
    )
}
