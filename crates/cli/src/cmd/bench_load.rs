//! `topospread bench load`: how long `simulate` takes on a large cluster dump, and how
//! much memory. The dump is generated (nodes and bound pods as `kubectl get -o json`
//! or `-o yaml` prints them, plus a Deployment with spread constraints), then each
//! measurement runs `simulate` in a fresh process of this binary, so the generator's
//! memory never counts and every run starts cold.

use super::simulate;
use crate::cli::{BenchFormat, BenchLoadArgs, DumpFormatArg, SimulateArgs};
use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;
use topospread_jobs::Context;
use topospread_scenario::dump::{self, DumpFormat, DumpSpec};

/// One measurement, as the child process prints it.
#[derive(Debug, Serialize, Deserialize)]
struct Measured {
    /// Reading, parsing, expanding and building the snapshot.
    load_seconds: f64,
    /// Scheduling the pending pods.
    schedule_seconds: f64,
    /// Building and rendering the report.
    report_seconds: f64,
    /// The whole `simulate`, start to end.
    total_seconds: f64,
    /// Peak resident memory (`VmHWM`).
    peak_rss_bytes: Option<u64>,
    /// Pods scheduled.
    scheduled: usize,
    /// Pods left pending.
    pending: usize,
}

/// What `bench load` reports.
#[derive(Debug, Serialize)]
struct Report {
    nodes: usize,
    pods: usize,
    replicas: i32,
    format: &'static str,
    dump_bytes: u64,
    /// The median run (by total time).
    #[serde(flatten)]
    median: Measured,
    /// Every run's total seconds, in run order.
    runs_total_seconds: Vec<f64>,
}

pub(crate) fn run(ctx: &Context, args: &BenchLoadArgs) -> Result<ExitCode> {
    if !args.measure.is_empty() {
        return measure_here(ctx, &args.measure);
    }
    let (dir, keep) = match &args.dir {
        Some(d) => (d.clone(), true),
        None => (
            std::env::temp_dir().join(format!("topospread-bench-load-{}", std::process::id())),
            false,
        ),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let result = generate_and_measure(args, &dir);
    if !keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let report = result?;
    let mut out = std::io::stdout().lock();
    match args.output {
        BenchFormat::Json => writeln!(out, "{}", serde_json::to_string(&report)?)?,
        BenchFormat::Text => print_text(&mut out, &report, keep.then_some(dir.as_path()))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the dump and the Deployment into `dir`, then measures `args.runs` times.
fn generate_and_measure(args: &BenchLoadArgs, dir: &Path) -> Result<Report> {
    let (format, ext) = match args.format {
        DumpFormatArg::Json => (DumpFormat::Json, "json"),
        DumpFormatArg::Yaml => (DumpFormat::Yaml, "yaml"),
    };
    let dump_path = dir.join(format!("cluster.{ext}"));
    let deployment_path = dir.join("deployment.yaml");
    let spec = DumpSpec {
        nodes: args.nodes,
        pods: args.pods,
    };
    let file = std::fs::File::create(&dump_path)
        .with_context(|| format!("{}: cannot create", dump_path.display()))?;
    let mut w = BufWriter::new(file);
    dump::write_dump(&mut w, spec, format)
        .and_then(|()| w.flush())
        .with_context(|| format!("{}: cannot write", dump_path.display()))?;
    std::fs::write(
        &deployment_path,
        dump::to_yaml_document(&dump::deployment(args.replicas)),
    )
    .with_context(|| format!("{}: cannot write", deployment_path.display()))?;
    let dump_bytes = std::fs::metadata(&dump_path).map(|m| m.len()).unwrap_or(0);
    let exe = std::env::current_exe().context("cannot find this program to run it again")?;
    let mut runs = Vec::new();
    for _ in 0..args.runs {
        // The dump may be over the default input cap: the measurement reads it whole.
        let cap = dump_bytes.max(topospread_jobs::DEFAULT_MAX_INPUT_BYTES) + 1024 * 1024;
        let out = Command::new(&exe)
            .args([
                "bench",
                "load",
                "--max-input-bytes",
                &cap.to_string(),
                "--measure",
            ])
            .arg(&dump_path)
            .arg(&deployment_path)
            .output()
            .context("running the measurement")?;
        if !out.status.success() {
            bail!(
                "the measurement failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let m: Measured =
            serde_json::from_slice(&out.stdout).context("reading the measurement's figures")?;
        runs.push(m);
    }
    let totals: Vec<f64> = runs.iter().map(|m| m.total_seconds).collect();
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| totals[a].total_cmp(&totals[b]));
    let median = runs.swap_remove(order[order.len() / 2]);
    Ok(Report {
        nodes: args.nodes,
        pods: args.pods,
        replicas: args.replicas,
        format: ext,
        dump_bytes,
        median,
        runs_total_seconds: totals,
    })
}

/// The child's side: `simulate -f FILES -o json` in this process, timed, and one JSON
/// line of figures on stdout.
fn measure_here(ctx: &Context, files: &[PathBuf]) -> Result<ExitCode> {
    let args = simulate_args(files)?;
    let start = Instant::now();
    let out = simulate::execute(ctx, &args)?;
    let timings = out.timings;
    // The report is built, as simulate prints it; it is not printed here.
    std::hint::black_box(&out.text);
    let total = start.elapsed();
    let m = Measured {
        load_seconds: timings.load.as_secs_f64(),
        schedule_seconds: timings.schedule.as_secs_f64(),
        report_seconds: timings.report.as_secs_f64(),
        total_seconds: total.as_secs_f64(),
        peak_rss_bytes: super::bench::peak_rss_bytes(),
        scheduled: out.scheduled,
        pending: out.pending,
    };
    println!("{}", serde_json::to_string(&m)?);
    Ok(ExitCode::SUCCESS)
}

/// `simulate -f FILES -o json`, every other flag at its default, as clap parses them.
fn simulate_args(files: &[PathBuf]) -> Result<SimulateArgs> {
    use clap::{Args, FromArgMatches};
    let mut argv: Vec<std::ffi::OsString> = vec!["simulate".into(), "-o".into(), "json".into()];
    for f in files {
        argv.push("-f".into());
        argv.push(f.into());
    }
    let matches =
        SimulateArgs::augment_args(clap::Command::new("simulate")).try_get_matches_from(argv)?;
    Ok(SimulateArgs::from_arg_matches(&matches)?)
}

fn print_text(out: &mut impl Write, r: &Report, kept: Option<&Path>) -> Result<()> {
    let mib = |b: u64| b as f64 / 1_048_576.0;
    writeln!(
        out,
        "bench load: {} nodes, {} bound pods ({} dump, {:.1} MiB) + a Deployment of {} replicas",
        r.nodes,
        r.pods,
        r.format,
        mib(r.dump_bytes),
        r.replicas
    )?;
    let m = &r.median;
    writeln!(out, "load                  {:.3} s", m.load_seconds)?;
    writeln!(out, "schedule              {:.3} s", m.schedule_seconds)?;
    writeln!(out, "report                {:.3} s", m.report_seconds)?;
    writeln!(out, "simulate (total)      {:.3} s", m.total_seconds)?;
    super::bench::write_peak_rss(out, m.peak_rss_bytes)?;
    writeln!(
        out,
        "scheduled             {} ({} pending)",
        m.scheduled, m.pending
    )?;
    super::bench::write_runs(out, &r.runs_total_seconds)?;
    if let Some(dir) = kept {
        writeln!(out, "files                 {}", dir.display())?;
    }
    Ok(())
}
