//! `serve` in a build without the daemon (feature `daemon`, part of `live`): the flags
//! parse as in every build, and running it says how to get a build that has it.

use crate::cli::ServeArgs;
use anyhow::{Result, bail};
use std::process::ExitCode;

/// Refuses: `serve` needs the `live` feature.
pub(crate) fn run(_ctx: &topospread_jobs::Context, _args: &ServeArgs) -> Result<ExitCode> {
    bail!(
        "serve: this topospread was built without the `live` feature; \
    install one with it: cargo install --path crates/cli (the default features)"
    )
}
