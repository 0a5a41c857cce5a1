//! The `topospread` command: Kubernetes pod topology spread over cluster snapshots.

/// `eprintln!` that never panics: a stderr that cannot be written (a closed pipe, a full
/// disk) loses the line, where `eprintln!` would panic and end the process.
macro_rules! stderr {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cli;
mod cmd;

use clap::Parser;
use std::process::ExitCode;

/// mimalloc: a dump's load allocates and frees millions of small objects on several
/// threads, where glibc's allocator (consolidating and unlinking chunks) took a third
/// of the time.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Without transparent huge pages: mimalloc frees and takes memory again throughout a
/// load, and each huge page faulted back cost the kernel 2 MiB of zeroing (a quarter of
/// a 5,000-node load's samples, and its peak 10-20 MiB higher). The `no_thp` build of
/// mimalloc stops asking for them; this stops a kernel that gives them unasked.
#[cfg(all(feature = "mimalloc", target_os = "linux"))]
fn without_huge_pages() {
    // Refused only by kernels before 3.15, which then keep their default.
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}

fn main() -> ExitCode {
    #[cfg(all(feature = "mimalloc", target_os = "linux"))]
    without_huge_pages();
    let mut cli = cli::Cli::parse();
    let ctx = match topospread_jobs::Context::from_flags(
        cli.kubernetes_version.as_deref(),
        cli.feature_gates.as_deref(),
    ) {
        Ok(ctx) => ctx.with_input(topospread_jobs::InputOptions::new(
            cli.max_input_bytes,
            cli.max_pods,
            cli.recursive,
        )),
        Err(e) => {
            stderr!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // The User-Agent of every live read names the command.
    let name = command_name(&cli.command);
    let live = live_args(&mut cli.command).map(|live| {
        live.command = name;
        &*live
    });
    // A live command behaves as the cluster's release unless --kubernetes-version is given.
    let ctx = match live.filter(|l| l.wanted()) {
        Some(live) => match cmd::live::cluster_context(&ctx, live) {
            Ok(ctx) => ctx,
            Err(e) => {
                stderr!("error: {}", chain(&e));
                return ExitCode::from(2);
            }
        },
        None => ctx,
    };
    let result = match cli.command {
        cli::Command::Show(args) => cmd::show::run(&ctx, &args),
        cli::Command::Simulate(args) => cmd::simulate::run(&ctx, &args),
        cli::Command::Explain(args) => cmd::explain::run(&ctx, &args),
        cli::Command::Test(args) => cmd::test::run(&ctx, &args),
        cli::Command::Validate(args) => cmd::validate::run(&ctx, &args),
        cli::Command::Bench(args) => cmd::bench::run(&ctx, &args),
        cli::Command::Rebalance(args) => cmd::rebalance::run(&ctx, &args),
        cli::Command::Serve(args) => cmd::serve::run(&ctx, &args),
        cli::Command::Ui(args) => cmd::ui::run(&ctx, &args),
        cli::Command::Guard(args) => cmd::guard::run(&ctx, &args),
        cli::Command::Capacity(args) => cmd::capacity::run(&ctx, &args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            stderr!("error: {}", chain(&e));
            ExitCode::from(2)
        }
    }
}

/// The command's name, as typed.
fn command_name(command: &cli::Command) -> &'static str {
    match command {
        cli::Command::Show(_) => "show",
        cli::Command::Simulate(_) => "simulate",
        cli::Command::Explain(_) => "explain",
        cli::Command::Test(_) => "test",
        cli::Command::Validate(_) => "validate",
        cli::Command::Bench(_) => "bench",
        cli::Command::Rebalance(_) => "rebalance",
        cli::Command::Serve(_) => "serve",
        cli::Command::Ui(_) => "ui",
        cli::Command::Guard(_) => "guard",
        cli::Command::Capacity(_) => "capacity",
    }
}

/// The live-cluster flags of a command that reads one (`serve` asks its cluster itself).
fn live_args(command: &mut cli::Command) -> Option<&mut cli::LiveArgs> {
    match command {
        cli::Command::Show(a) => Some(&mut a.source.live),
        cli::Command::Simulate(a) => Some(&mut a.cluster.source.live),
        cli::Command::Explain(a) => Some(&mut a.cluster.source.live),
        cli::Command::Validate(a) => Some(&mut a.source.live),
        cli::Command::Rebalance(a) => Some(&mut a.cluster.source.live),
        cli::Command::Ui(a) => Some(&mut a.cluster.source.live),
        cli::Command::Capacity(a) => Some(&mut a.cluster.source.live),
        cli::Command::Test(_)
        | cli::Command::Bench(_)
        | cli::Command::Serve(_)
        | cli::Command::Guard(_) => None,
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

#[cfg(all(test, feature = "mimalloc", target_os = "linux"))]
mod tests {
    #[test]
    fn the_process_runs_without_huge_pages() {
        super::without_huge_pages();
        let disabled = rustix::thread::transparent_huge_pages_are_disabled()
            .expect("PR_GET_THP_DISABLE (Linux 3.15 and later)");
        assert!(disabled);
    }
}
