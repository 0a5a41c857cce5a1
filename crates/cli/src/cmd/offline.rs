//! The live faces in a build without the `live` feature: the flags parse as in every
//! build, and using them says how to get a build that has them.

use crate::cli::LiveArgs;
use anyhow::{Result, bail};
use topospread_k8s::load::Loaded;

/// What to install instead.
const WITHOUT_LIVE: &str = "this topospread was built without the `live` feature; \
    install one with it: cargo install --path crates/cli (the default features)";

/// Refuses: reading a live cluster needs the `live` feature.
pub(crate) fn list_cluster(_args: &LiveArgs) -> Result<Vec<Loaded>> {
    bail!("--kubeconfig/--context/--live: {WITHOUT_LIVE}")
}

/// The context as given: without the `live` feature no cluster is asked its release
/// (reading one is refused by [`list_cluster`]).
pub(crate) fn cluster_context(
    ctx: &topospread_jobs::Context,
    _args: &LiveArgs,
) -> Result<topospread_jobs::Context> {
    Ok(ctx.clone())
}
