//! Command-line definitions, kept apart from what the commands do.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Kubernetes Pod Topology Spread: where pods will land, and why.
#[derive(Debug, Parser)]
#[command(name = "topospread", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run scenario files (files or folders of *.yaml) and check their expectations.
    Test(TestArgs),
    /// Check topologySpreadConstraints and PodTopologySpreadArgs with the API server's and
    /// kube-scheduler's rules, plus lints (TS001...) for what is accepted but will misbehave.
    Validate(crate::cmd::validate::ValidateArgs),
}

/// `topospread test`.
#[derive(Debug, Args)]
pub(crate) struct TestArgs {
    /// Scenario files, or folders searched for *.yaml / *.yml.
    #[arg(required = true)]
    pub(crate) paths: Vec<PathBuf>,
    /// Also list every passing and skipped case.
    #[arg(short, long)]
    pub(crate) verbose: bool,
}
