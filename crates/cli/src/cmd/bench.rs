//! `topospread bench`: kube-scheduler's topology-spreading scheduler_perf workloads,
//! scheduled through the same path as `simulate`, with throughput, latency and memory.

use crate::cli::{BenchArgs, BenchCommand, BenchFormat};
use anyhow::{Context, Result, anyhow};
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;
use topospread::Simulation;
use topospread::api::Pod;
use topospread::snapshot::Snapshot;
use topospread::{Attempt, Scheduler};
use topospread::{Features, SchedulerConfig};
use topospread_scenario::perf::{self, Prepared};

/// What `bench` reports.
#[derive(Debug, Serialize)]
struct Report {
    workload: String,
    pods_per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    peak_rss_bytes: Option<u64>,
    nodes_scored_per_pod: f64,
    nodes: usize,
    init_pods: usize,
    measured_pods: usize,
    scheduled: usize,
    unschedulable: usize,
    percentage_of_nodes_to_score: i32,
    incremental: bool,
    /// Whether a failed cycle's verdict was reused for identical pods.
    failure_cache: bool,
    /// Cycles the failure cache answered.
    failure_cache_hits: u64,
    /// Seconds from the first measured cycle to the last.
    elapsed_seconds: f64,
    first_10pct_mean_ms: f64,
    last_10pct_mean_ms: f64,
    /// Every run's pods/s, in run order; the report is the median run's.
    runs_pods_per_second: Vec<f64>,
    /// Every run's last-10% / first-10% mean latency, in run order.
    runs_last_to_first: Vec<f64>,
}

/// Adds `pods` to the cluster; the pending ones (no `spec.nodeName`) join the
/// scheduling queue.
fn enqueue(sim: &mut Simulation, snapshot: &mut Snapshot, pods: Vec<Pod>) -> Result<()> {
    for pod in pods {
        let id = snapshot.add_pod(pod)?;
        if snapshot.pod_node(id).is_none() {
            sim.enqueue(snapshot, id)?;
        }
    }
    Ok(())
}

/// Peak resident memory of this process (`VmHWM`), where the kernel reports it.
pub(crate) fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// One run of the workload on a fresh cluster.
fn measure(args: &BenchArgs, workload: &perf::PerfWorkload) -> Result<Report> {
    let Prepared {
        mut snapshot,
        init,
        measured,
    } = perf::prepare(workload).context("preparing the workload")?;
    snapshot.set_incremental(!args.no_incremental);
    let config = SchedulerConfig {
        percentage_of_nodes_to_score: Some(args.percentage),
        ..SchedulerConfig::default()
    };
    let mut scheduler = Scheduler::new(&config, Features::default(), &mut snapshot)?;
    scheduler.set_seed(args.seed);
    scheduler.set_failure_cache(!args.no_failure_cache);
    let mut sim = Simulation::new(scheduler);
    let (init_pods, measured_pods) = (init.len(), measured.len());
    enqueue(&mut sim, &mut snapshot, init)?;
    sim.run(&mut snapshot, |_, _| {})?;
    enqueue(&mut sim, &mut snapshot, measured)?;

    // scheduler_perf's latency: from one cycle's end to the next pod's binding.
    let mut latencies = Vec::with_capacity(measured_pods);
    let (mut scored, mut scheduled) = (0usize, 0usize);
    let start = Instant::now();
    let mut last = Instant::now();
    sim.run(&mut snapshot, |_, a| {
        let now = Instant::now();
        latencies.push((now - last).as_secs_f64() * 1e3);
        last = now;
        if let Attempt::Assumed { feasible_nodes, .. } = a {
            scored += feasible_nodes;
            scheduled += 1;
        }
    })?;
    let elapsed = start.elapsed().as_secs_f64();
    let hits = sim.scheduler().failure_cache_hits();
    let tenth = (latencies.len() / 10).max(1).min(latencies.len());
    let first = mean(&latencies[..tenth]);
    let last = mean(&latencies[latencies.len() - tenth..]);
    let mut sorted = latencies.clone();
    sorted.sort_by(f64::total_cmp);
    let report = Report {
        workload: workload.name.clone(),
        pods_per_second: if elapsed > 0.0 {
            measured_pods as f64 / elapsed
        } else {
            0.0
        },
        p50_ms: percentile(&sorted, 50.0),
        p99_ms: percentile(&sorted, 99.0),
        peak_rss_bytes: peak_rss_bytes(),
        nodes_scored_per_pod: if scheduled > 0 {
            scored as f64 / scheduled as f64
        } else {
            0.0
        },
        nodes: snapshot.nodes().len(),
        init_pods,
        measured_pods,
        scheduled,
        unschedulable: measured_pods - scheduled,
        percentage_of_nodes_to_score: args.percentage,
        incremental: !args.no_incremental,
        failure_cache: !args.no_failure_cache,
        failure_cache_hits: hits,
        elapsed_seconds: elapsed,
        first_10pct_mean_ms: first,
        last_10pct_mean_ms: last,
        runs_pods_per_second: Vec::new(),
        runs_last_to_first: Vec::new(),
    };
    Ok(report)
}

pub(crate) fn run(ctx: &topospread_jobs::Context, args: &BenchArgs) -> Result<ExitCode> {
    match &args.command {
        Some(BenchCommand::Load(load)) => return super::bench_load::run(ctx, load),
        Some(BenchCommand::Guard(guard)) => return super::bench_guard::run(guard),
        None => {}
    }
    let name = args.workload.as_deref().unwrap_or_default();
    let workload = perf::workload(name).ok_or_else(|| {
        anyhow!(
            "workload {name:?}: Unsupported value; supported: {}, or `load` or `guard`",
            perf::WORKLOADS.join(", ")
        )
    })?;
    let mut reports = (0..args.runs)
        .map(|_| measure(args, &workload))
        .collect::<Result<Vec<_>>>()?;
    let throughputs: Vec<f64> = reports.iter().map(|r| r.pods_per_second).collect();
    let mut order: Vec<usize> = (0..reports.len()).collect();
    order.sort_by(|&a, &b| throughputs[a].total_cmp(&throughputs[b]));
    let median = order[order.len() / 2];
    let ratios = reports
        .iter()
        .map(|r| {
            if r.first_10pct_mean_ms > 0.0 {
                r.last_10pct_mean_ms / r.first_10pct_mean_ms
            } else {
                0.0
            }
        })
        .collect();
    let mut report = reports.swap_remove(median);
    report.runs_pods_per_second = throughputs;
    report.runs_last_to_first = ratios;
    let (first, last) = (report.first_10pct_mean_ms, report.last_10pct_mean_ms);
    let mut out = std::io::stdout().lock();
    match args.format {
        BenchFormat::Json => writeln!(out, "{}", serde_json::to_string(&report)?)?,
        BenchFormat::Text => {
            let pct = if args.percentage == 0 {
                "adaptive".to_string()
            } else {
                format!("{}%", args.percentage)
            };
            writeln!(
                out,
                "workload {}: {} nodes, {} init pods, {} measured pods (percentageOfNodesToScore {pct}, counting {})",
                report.workload,
                report.nodes,
                report.init_pods,
                report.measured_pods,
                if report.incremental {
                    "incremental"
                } else {
                    "from scratch"
                }
            )?;
            writeln!(out, "pods/s                {:.0}", report.pods_per_second)?;
            writeln!(out, "elapsed               {:.3} s", report.elapsed_seconds)?;
            writeln!(out, "latency p50           {:.3} ms", report.p50_ms)?;
            writeln!(out, "latency p99           {:.3} ms", report.p99_ms)?;
            writeln!(
                out,
                "latency first/last 10% {:.3} / {:.3} ms (x{:.2})",
                first,
                last,
                if first > 0.0 { last / first } else { 0.0 }
            )?;
            write_peak_rss(&mut out, report.peak_rss_bytes)?;
            writeln!(
                out,
                "nodes scored per pod  {:.1}",
                report.nodes_scored_per_pod
            )?;
            writeln!(
                out,
                "scheduled             {} ({} unschedulable)",
                report.scheduled, report.unschedulable
            )?;
            writeln!(
                out,
                "failure cache         {} ({} cycles answered)",
                if report.failure_cache { "on" } else { "off" },
                report.failure_cache_hits
            )?;
            if report.runs_pods_per_second.len() > 1 {
                let runs: Vec<String> = report
                    .runs_pods_per_second
                    .iter()
                    .zip(&report.runs_last_to_first)
                    .map(|(p, r)| format!("{p:.0} (x{r:.2})"))
                    .collect();
                writeln!(
                    out,
                    "runs pods/s (last/first) {} (the median run is reported)",
                    runs.join(", ")
                )?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The `peak RSS` line every bench prints.
pub(super) fn write_peak_rss(out: &mut impl Write, bytes: Option<u64>) -> std::io::Result<()> {
    match bytes {
        Some(b) => writeln!(out, "peak RSS              {:.1} MiB", b as f64 / 1048576.0),
        None => writeln!(out, "peak RSS              unavailable on this platform"),
    }
}

/// The `runs (s)` line of a bench measured more than once (nothing for one run).
pub(super) fn write_runs(out: &mut impl Write, seconds: &[f64]) -> std::io::Result<()> {
    if seconds.len() < 2 {
        return Ok(());
    }
    let runs: Vec<String> = seconds.iter().map(|s| format!("{s:.3}")).collect();
    writeln!(
        out,
        "runs (s)              {} (the median run is reported)",
        runs.join(", ")
    )
}
