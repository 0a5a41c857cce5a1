//! `topospread bench load`: how long `simulate` takes on a large cluster dump, and how
//! much memory. The dump is generated (nodes and bound pods as `kubectl get -o json`
//! or `-o yaml` prints them) or given (`--dump`), a Deployment with spread constraints
//! goes beside it, then each measurement runs `simulate` in a fresh process of this
//! binary, so the generator's memory never counts and every run starts cold. After each
//! run, Python's `json.load` of the same dump in JSON is timed as the machine's
//! yardstick (issue 27's targets are ratios to it), when `python3` is on `PATH`.

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
    /// Nodes and bound pods of a generated dump (`None` for `--dump`).
    nodes: Option<usize>,
    pods: Option<usize>,
    /// The dump measured, when given with `--dump`.
    dump: Option<PathBuf>,
    replicas: i32,
    format: &'static str,
    dump_bytes: u64,
    /// The median run (by total time).
    #[serde(flatten)]
    median: Measured,
    /// Every run's total seconds, in run order.
    runs_total_seconds: Vec<f64>,
    /// The median of Python's `json.load` of the dump in JSON, timed after each run.
    json_load_seconds: Option<f64>,
    /// Every `json.load`, in run order.
    runs_json_load_seconds: Vec<f64>,
    /// The median total over the median `json.load`.
    ratio_to_json_load: Option<f64>,
    /// Why `json.load` was not timed, when it was not.
    json_load_not_measured: Option<String>,
}

/// The yardstick: Python's `json.load` of a file, the process timed whole.
const JSON_LOAD: &str = "import json,sys; json.load(open(sys.argv[1]))";

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
    let result = prepare(args, &dir).and_then(|files| measure(args, &files));
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

/// The files a measurement reads.
struct Files {
    dump: PathBuf,
    format: &'static str,
    /// The same dump in JSON, for `json.load`, or why there is none.
    json: Result<PathBuf, String>,
    deployment: PathBuf,
    /// What the report says of the dump's size.
    nodes: Option<usize>,
    pods: Option<usize>,
}

/// Writes the Deployment into `dir`, and the dump unless one is given: in the format
/// asked for, and in JSON besides for `json.load` when that is YAML.
fn prepare(args: &BenchLoadArgs, dir: &Path) -> Result<Files> {
    let deployment = dir.join("deployment.yaml");
    std::fs::write(
        &deployment,
        dump::to_yaml_document(&dump::deployment(args.replicas)),
    )
    .with_context(|| format!("{}: cannot write", deployment.display()))?;
    if let Some(given) = &args.dump {
        let (format, json) = given_dump(given)?;
        return Ok(Files {
            dump: given.clone(),
            format,
            json,
            deployment,
            nodes: None,
            pods: None,
        });
    }
    let spec = DumpSpec {
        nodes: args.nodes,
        pods: args.pods,
    };
    let json = dir.join("cluster.json");
    write_generated(&json, spec, DumpFormat::Json)?;
    let (dump, format) = match args.format {
        DumpFormatArg::Json => (json.clone(), "json"),
        DumpFormatArg::Yaml => {
            let yaml = dir.join("cluster.yaml");
            write_generated(&yaml, spec, DumpFormat::Yaml)?;
            (yaml, "yaml")
        }
    };
    Ok(Files {
        dump,
        format,
        json: Ok(json),
        deployment,
        nodes: Some(args.nodes),
        pods: Some(args.pods),
    })
}

fn write_generated(path: &Path, spec: DumpSpec, format: DumpFormat) -> Result<()> {
    let file = std::fs::File::create(path)
        .with_context(|| format!("{}: cannot create", path.display()))?;
    let mut w = BufWriter::new(file);
    dump::write_dump(&mut w, spec, format)
        .and_then(|()| w.flush())
        .with_context(|| format!("{}: cannot write", path.display()))
}

/// A given dump's format (JSON when its first character opens a JSON value), and the
/// JSON file `json.load` reads: the dump itself, or for YAML a `.json` file of the same
/// name beside it (as `gen_dump.py` writes them).
fn given_dump(path: &Path) -> Result<(&'static str, Result<PathBuf, String>)> {
    use std::io::Read;
    let mut head = [0u8; 4096];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let first = head[..n]
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace() && *b != 0xEF && *b != 0xBB && *b != 0xBF);
    if matches!(first, Some(b'{' | b'[')) {
        return Ok(("json", Ok(path.to_path_buf())));
    }
    let beside = path.with_extension("json");
    let json = if beside.is_file() {
        Ok(beside)
    } else {
        Err(format!(
            "no JSON form of the dump: {} not found",
            beside.display()
        ))
    };
    Ok(("yaml", json))
}

/// Measures `args.runs` times, each `simulate` run followed by a `json.load`.
fn measure(args: &BenchLoadArgs, files: &Files) -> Result<Report> {
    let dump_bytes = std::fs::metadata(&files.dump)
        .with_context(|| format!("{}: cannot read", files.dump.display()))?
        .len();
    let exe = std::env::current_exe().context("cannot find this program to run it again")?;
    let mut runs = Vec::new();
    let mut json_loads = Vec::new();
    let mut not_measured = files.json.as_ref().err().cloned();
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
            .arg(&files.dump)
            .arg(&files.deployment)
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
        if let (Ok(json), None) = (&files.json, &not_measured) {
            match time_json_load(json) {
                Ok(seconds) => json_loads.push(seconds),
                Err(why) => not_measured = Some(why),
            }
        }
    }
    let totals: Vec<f64> = runs.iter().map(|m| m.total_seconds).collect();
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| totals[a].total_cmp(&totals[b]));
    let median = runs.swap_remove(order[order.len() / 2]);
    if not_measured.is_some() {
        json_loads.clear();
    }
    let json_load_seconds = median_of(&json_loads);
    Ok(Report {
        nodes: files.nodes,
        pods: files.pods,
        dump: args.dump.clone(),
        replicas: args.replicas,
        format: files.format,
        dump_bytes,
        ratio_to_json_load: json_load_seconds.map(|j| median.total_seconds / j),
        median,
        runs_total_seconds: totals,
        json_load_seconds,
        runs_json_load_seconds: json_loads,
        json_load_not_measured: not_measured,
    })
}

/// The median of some figures (the upper one of an even count, as for the runs).
fn median_of(figures: &[f64]) -> Option<f64> {
    let mut sorted = figures.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied()
}

/// Seconds `python3` takes to `json.load` the file (the process, start to end), or why
/// it was not timed.
fn time_json_load(json: &Path) -> std::result::Result<f64, String> {
    let start = Instant::now();
    let out = Command::new("python3")
        .args(["-c", JSON_LOAD])
        .arg(json)
        .output();
    let elapsed = start.elapsed().as_secs_f64();
    match out {
        Ok(out) if out.status.success() => Ok(elapsed),
        Ok(out) => Err(format!(
            "python3 failed: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("no message")
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err("python3 not found".to_string()),
        Err(e) => Err(format!("python3 could not run: {e}")),
    }
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
    let what = match (r.nodes, r.pods, &r.dump) {
        (Some(nodes), Some(pods), _) => format!("{nodes} nodes, {pods} bound pods"),
        (_, _, Some(dump)) => dump.display().to_string(),
        _ => "a dump".to_string(),
    };
    writeln!(
        out,
        "bench load: {what} ({} dump, {:.1} MiB) + a Deployment of {} replicas",
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
    match (
        r.json_load_seconds,
        r.ratio_to_json_load,
        &r.json_load_not_measured,
    ) {
        (Some(seconds), Some(ratio), _) => {
            writeln!(
                out,
                "json.load             {seconds:.3} s (python3, the dump in JSON, after each run)"
            )?;
            writeln!(out, "simulate / json.load  {ratio:.2}")?;
        }
        (_, _, why) => writeln!(
            out,
            "json.load: not measured ({})",
            why.as_deref().unwrap_or("no run")
        )?,
    }
    if let Some(dir) = kept {
        writeln!(out, "files                 {}", dir.display())?;
    }
    Ok(())
}
