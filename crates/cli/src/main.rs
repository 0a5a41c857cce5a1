//! The `topospread` command: Kubernetes pod topology spread over cluster snapshots.

mod cli;
mod cmd;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    cmd::input::set_options(cmd::input::InputOptions {
        max_input_bytes: cli.max_input_bytes,
        max_pods: cli.max_pods,
        recursive: cli.recursive,
    });
    match cmd::input::gates_from_flags(
        cli.kubernetes_version.as_deref(),
        cli.feature_gates.as_deref(),
    ) {
        Ok(gates) => cmd::input::set_gates(gates, cli.kubernetes_version.is_some()),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    cmd::live::set_command(match &cli.command {
        cli::Command::Show(_) => "show",
        cli::Command::Simulate(_) => "simulate",
        cli::Command::Explain(_) => "explain",
        cli::Command::Test(_) => "test",
        cli::Command::Validate(_) => "validate",
        cli::Command::Bench(_) => "bench",
        cli::Command::Rebalance(_) => "rebalance",
        cli::Command::Serve(_) => "serve",
    });
    let result = match cli.command {
        cli::Command::Show(args) => cmd::show::run(&args),
        cli::Command::Simulate(args) => cmd::simulate::run(&args),
        cli::Command::Explain(args) => cmd::explain::run(&args),
        cli::Command::Test(args) => cmd::test::run(&args),
        cli::Command::Validate(args) => cmd::validate::run(&args),
        cli::Command::Bench(args) => cmd::bench::run(&args),
        cli::Command::Rebalance(args) => cmd::rebalance::run(&args),
        cli::Command::Serve(args) => cmd::serve::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {}", chain(&e));
            ExitCode::from(2)
        }
    }
}

/// A closed stdout (`topospread ... | head`) is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes on one line, skipping a cause the message already quotes
/// (the engine's errors often print their source themselves).
fn chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
