//! `topospread simulate`: the `simulate` job's report rendered as a table, JSON (the
//! versioned document), an HTML page, or the resulting cluster as YAML.

use super::show;
use super::term::JobProgress;
use crate::cli::{ReportFormat, SimulateArgs};
use anyhow::Result;
use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;
use topospread_jobs::Context;
use topospread_jobs::report::rollout::{RolloutReport, RolloutStall};
use topospread_jobs::simulate::{
    ConstraintReport, SimulateRequest, Simulation, SimulationReport, Timings, WorkloadReport,
    simulate,
};
use topospread_report::{SummaryText as _, every_domain, render_cluster};

/// What a simulation produced, rendered.
pub(crate) struct Simulated {
    /// The rendered output (empty for `-o yaml`: see `cluster`).
    pub(crate) text: String,
    /// The simulation (with `-o yaml`, its cluster is written out as it is made).
    pub(crate) simulation: Simulation,
    /// Notes for stderr (with the non-table formats).
    pub(crate) notes: Vec<String>,
    /// The exit code.
    pub(crate) code: ExitCode,
    /// Pods scheduled.
    pub(crate) scheduled: usize,
    /// Pods left pending.
    pub(crate) pending: usize,
    /// How long each phase took.
    pub(crate) timings: Timings,
}

pub(crate) fn run(ctx: &Context, args: &SimulateArgs) -> Result<ExitCode> {
    let out = execute(ctx, args)?;
    let mut stdout = std::io::stdout().lock();
    if args.output == ReportFormat::Yaml {
        let mut w = std::io::BufWriter::new(stdout);
        out.simulation.write_cluster_yaml(&mut w)?;
        w.flush()?;
    } else {
        stdout.write_all(out.text.as_bytes())?;
    }
    if args.output != ReportFormat::Table {
        for n in &out.notes {
            stderr!("note: {n}");
        }
    }
    let code = out.code;
    // The process ends next: freeing a dump's cluster allocation by allocation took 4%
    // of `simulate`'s CPU time, on the main thread, for nothing.
    std::mem::forget(out.simulation);
    Ok(code)
}

/// The flags as the job's request.
fn request(args: &SimulateArgs) -> Result<SimulateRequest> {
    let mut request = SimulateRequest::new(args.namespace.apply(args.cluster.cluster()?));
    request.scale = args.scale.clone();
    request.drain = args.drain.clone();
    request.remove_node = args.remove_node.clone();
    request.lose = args.lose.clone();
    request.ready_after = args.ready_after;
    // `-o yaml` writes every pod back; the rest needs only the compact form.
    request.write_back = args.output == ReportFormat::Yaml;
    Ok(request)
}

/// The whole simulation, its output rendered.
pub(crate) fn execute(ctx: &Context, args: &SimulateArgs) -> Result<Simulated> {
    let mut progress = JobProgress::loading("loading");
    let sim = simulate(ctx, request(args)?, &mut progress)?;
    drop(progress);
    let width = super::term::width();
    let text = render(&sim, args, width)?;
    let report = &sim.report;
    Ok(Simulated {
        text,
        notes: report.notes.clone(),
        code: if sim.failed() {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
        scheduled: report.scheduled,
        pending: report.pending,
        timings: sim.timings,
        simulation: sim,
    })
}

/// The report in the format asked for.
fn render(sim: &Simulation, args: &SimulateArgs, width: usize) -> Result<String> {
    Ok(match args.output {
        ReportFormat::Json => serde_json::to_string_pretty(&sim.report)? + "\n",
        // Written by `run` as it is made.
        ReportFormat::Yaml => String::new(),
        ReportFormat::Html => topospread_html::simulate(&sim.report, Some(sim.snapshot())),
        ReportFormat::Table => {
            let mut t = table(&sim.report, width, args.wide);
            if args.show {
                let mut snap = sim.snapshot().clone();
                let h = topospread_jobs::show::highlight(&mut snap, None)?;
                let keys = constraint_keys(&snap, &sim.report);
                let opts = show::options(&snap, &keys, h, width, args.wide);
                t.push('\n');
                t.push_str(&render_cluster(&snap, &opts));
            }
            t
        }
    })
}

/// The topology keys the workloads' constraints spread over, as `show` draws them
/// (fewest domains outermost, per-node keys within zones): a constraint on `region` is
/// drawn by region. None: `show`'s default keys.
fn constraint_keys(
    snapshot: &topospread::snapshot::Snapshot,
    report: &topospread_jobs::simulate::SimulationReport,
) -> Vec<String> {
    let keys: Vec<String> = report
        .workloads
        .iter()
        .flat_map(|w| &w.constraints)
        .map(|c| c.topology_key.clone())
        .collect();
    if keys.is_empty() {
        return keys;
    }
    topospread_jobs::show::drawing_keys(snapshot, keys)
}

/// The pending pods: one line each with `--wide`; else grouped by message, each group
/// with its count and a few names, so thousands of replicas pending for one reason read
/// as one entry.
fn pending_section(
    out: &mut String,
    pending: &[&topospread_jobs::simulate::PodResult],
    wide: bool,
) {
    const NAMES_SHOWN: usize = 3;
    let name = |p: &topospread_jobs::simulate::PodResult| format!("{}/{}", p.namespace, p.pod);
    if wide {
        for p in pending {
            let _ = writeln!(out, "  {}: {}", name(p), p.message.as_deref().unwrap_or(""));
        }
        return;
    }
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for p in pending {
        let message = p.message.as_deref().unwrap_or("");
        match groups.iter_mut().find(|(m, _)| *m == message) {
            Some((_, names)) => names.push(name(p)),
            None => groups.push((message, vec![name(p)])),
        }
    }
    for (message, names) in groups {
        if let [one] = names.as_slice() {
            let _ = writeln!(out, "  {one}: {message}");
            continue;
        }
        let _ = writeln!(out, "  {} pods: {message}", names.len());
        let shown = names[..NAMES_SHOWN.min(names.len())].join(", ");
        let more = names.len().saturating_sub(NAMES_SHOWN);
        if more > 0 {
            let _ = writeln!(
                out,
                "    {shown}, ... and {more} more (--wide lists every pod)"
            );
        } else {
            let _ = writeln!(out, "    {shown}");
        }
    }
}

/// One constraint's counts before and after: every domain on a line when that fits
/// `width` (or `wide`), else a summary per side.
fn constraint_counts(out: &mut String, c: &ConstraintReport, width: usize, wide: bool) {
    let before = every_domain(
        &c.before
            .iter()
            .map(|(d, n)| (d.clone(), *n))
            .collect::<Vec<_>>(),
    );
    let after = every_domain(
        &c.after
            .iter()
            .map(|(d, n)| (d.clone(), *n))
            .collect::<Vec<_>>(),
    );
    let line =
        |label: &str, domains: &str, skew: u32| format!("    {label} {domains}  skew {skew}");
    let (b, a) = (
        line("before:", &before, c.skew_before),
        line("after: ", &after, c.skew_after),
    );
    if wide || (b.chars().count() <= width && a.chars().count() <= width) {
        let _ = writeln!(out, "{b}\n{a}");
        return;
    }
    for (label, s) in [
        ("before:", &c.summary_before),
        ("after: ", &c.summary_after),
    ] {
        let _ = writeln!(out, "    {label} {}", s.headline());
        if s.domains > 0 {
            let _ = writeln!(
                out,
                "            domains per pod count: {}",
                s.histogram_line()
            );
            let _ = writeln!(
                out,
                "            most loaded: {}",
                every_domain(&s.most_loaded)
            );
            let _ = writeln!(
                out,
                "            least loaded: {}",
                every_domain(&s.least_loaded)
            );
        }
    }
    let _ = writeln!(out, "    (--wide or -o json lists every domain)");
}

/// Whether a workload's default constraints decided nothing worth their domains: all
/// ScheduleAnyway, none left beyond its maxSkew.
fn defaults_decide_nothing(constraints: &[ConstraintReport]) -> bool {
    constraints.iter().all(|c| {
        c.when_unsatisfiable == "ScheduleAnyway" && i64::from(c.skew_after) <= i64::from(c.max_skew)
    })
}

/// The placement table, per-workload spread, pending pods and notes, for `width`
/// columns.
fn table(r: &SimulationReport, width: usize, wide: bool) -> String {
    let mut out = String::new();
    placements(&mut out, r);
    for w in &r.workloads {
        workload_section(&mut out, w, width, wide);
    }
    if let Some(d) = &r.drained {
        super::whatif::table(&mut out, d);
    }
    if !r.preempted.is_empty() {
        let _ = writeln!(out, "\nPreempted");
        for p in &r.preempted {
            let _ = writeln!(
                out,
                "  {}/{} on {}: evicted for {}",
                p.namespace, p.pod, p.node, p.by
            );
        }
    }
    let pending: Vec<&topospread_jobs::simulate::PodResult> =
        r.pods.iter().filter(|p| p.node.is_none()).collect();
    if !pending.is_empty() {
        let _ = writeln!(
            out,
            "\nPending (topospread explain NAMESPACE/POD shows each node's verdicts)"
        );
        pending_section(&mut out, &pending, wide);
    }
    controller_sections(&mut out, r);
    for ro in &r.rollouts {
        rollout_table(&mut out, ro);
    }
    refusals(&mut out, r);
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = write!(out, "\n{} scheduled, {} pending", r.scheduled, r.pending);
    if !r.refused.is_empty() {
        let _ = write!(out, ", {} refused", r.refused.len());
    }
    let not_created: usize = r.workloads.iter().map(|w| w.not_created.len()).sum();
    if not_created > 0 {
        let _ = write!(out, ", {not_created} not created");
    }
    out.push('\n');
    out
}

/// One line per pod: namespace, name, node (or `<pending>`), zone.
fn placements(out: &mut String, r: &SimulationReport) {
    let w_ns = r
        .pods
        .iter()
        .map(|p| p.namespace.len())
        .max()
        .unwrap_or(0)
        .max(9);
    let w_pod = r.pods.iter().map(|p| p.pod.len()).max().unwrap_or(0).max(3);
    let w_node = r
        .pods
        .iter()
        .map(|p| p.node.as_deref().map_or(9, str::len))
        .max()
        .unwrap_or(0)
        .max(4);
    let _ = writeln!(
        out,
        "{:<w_ns$}  {:<w_pod$}  {:<w_node$}  ZONE",
        "NAMESPACE", "POD", "NODE"
    );
    for p in &r.pods {
        let _ = writeln!(
            out,
            "{:<w_ns$}  {:<w_pod$}  {:<w_node$}  {}",
            p.namespace,
            p.pod,
            p.node.as_deref().unwrap_or("<pending>"),
            p.zone.as_deref().unwrap_or("-")
        );
    }
}

/// A workload's line and its constraints' spread before and after.
fn workload_section(out: &mut String, w: &WorkloadReport, width: usize, wide: bool) {
    let _ = writeln!(
        out,
        "\n{}/{} (namespace {}): {} pods, {} scheduled, {} pending",
        w.kind.to_lowercase(),
        w.name,
        w.namespace,
        w.pods,
        w.scheduled,
        w.pending
    );
    if let Some(counted) = &w.counted {
        let _ = writeln!(out, "  ({counted})");
    }
    if w.constraints_from_defaults && !wide && defaults_decide_nothing(&w.constraints) {
        // Soft defaults within their maxSkew only nudged scores: one line, the
        // domains under --wide and in -o json.
        let skews: Vec<String> = w
            .constraints
            .iter()
            .map(|c| {
                format!(
                    "{} skew {} -> {}",
                    c.topology_key, c.skew_before, c.skew_after
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "  (no constraints of its own; the cluster's default constraints, ScheduleAnyway, within maxSkew: {})",
            skews.join(", ")
        );
        return;
    }
    if w.constraints_from_defaults {
        let _ = writeln!(
            out,
            "  (no constraints of its own: the cluster's default constraints)"
        );
    }
    for c in &w.constraints {
        let _ = writeln!(
            out,
            "  {} maxSkew={} {} ({})",
            c.topology_key, c.max_skew, c.when_unsatisfiable, c.selector
        );
        constraint_counts(out, c, width, wide);
    }
}

/// What the controllers did not do or did on their own: ordinals not created,
/// scale-downs held back, StatefulSet rolling updates, pods removed.
fn controller_sections(out: &mut String, r: &SimulationReport) {
    let held: Vec<_> = r
        .workloads
        .iter()
        .filter(|w| !w.not_created.is_empty())
        .collect();
    if !held.is_empty() {
        let _ = writeln!(
            out,
            "\nNot created by their controller (not in the cluster)"
        );
        for w in &held {
            let why = w.not_created_reason.as_deref().unwrap_or_default();
            let _ = writeln!(out, "  {}/{}: {why}", w.namespace, w.name);
        }
    }
    let kept: Vec<_> = r
        .workloads
        .iter()
        .filter_map(|w| Some((w, w.not_removed_reason.as_deref()?)))
        .collect();
    if !kept.is_empty() {
        let _ = writeln!(
            out,
            "\nNot removed by their controller (scale-down held back)"
        );
        for (w, why) in kept {
            let _ = writeln!(out, "  {}/{}: {why}", w.namespace, w.name);
        }
    }
    let updates: Vec<_> = r
        .workloads
        .iter()
        .filter_map(|w| Some((w, w.rolling_update.as_deref()?)))
        .collect();
    if !updates.is_empty() {
        let _ = writeln!(out, "\nRolling updates (StatefulSet controller)");
        for (w, status) in updates {
            let _ = writeln!(out, "  {}/{}: {status}", w.namespace, w.name);
        }
    }
    if !r.removed.is_empty() {
        let _ = writeln!(
            out,
            "\nRemoved by their controller (scale-down, in its order)"
        );
        for p in &r.removed {
            let _ = writeln!(out, "  {}/{} ({})", p.namespace, p.pod, p.controller);
        }
    }
}

/// Pods admission refused (and each workload's FailedCreate events), and objects the
/// API server refused.
fn refusals(out: &mut String, r: &SimulationReport) {
    if !r.refused.is_empty() {
        let _ = writeln!(out, "\nRefused by admission (never created)");
        for p in &r.refused {
            let _ = writeln!(out, "  {}/{}: {}", p.namespace, p.pod, p.message);
        }
        for w in &r.workloads {
            for event in &w.failed_create {
                let kind = w.kind.to_lowercase();
                let _ = writeln!(out, "  {kind}/{}: FailedCreate: {event}", w.name);
            }
        }
    }
    if !r.refused_objects.is_empty() {
        let _ = writeln!(out, "\nRefused by the API server (not created)");
        for line in &r.refused_objects {
            let _ = writeln!(out, "  {line}");
        }
    }
}

/// Where a rollout stalled: the step, the revisions' counts, the strategy, why, and
/// each new pod it waits for with the scheduler's message.
fn stall_lines(out: &mut String, s: &RolloutStall) {
    let at = if s.step == 0 {
        "before its first step".to_string()
    } else {
        format!("after step {} ({})", s.step, s.action)
    };
    let strategy = match (s.max_surge, s.max_unavailable) {
        (Some(surge), Some(unavailable)) => {
            format!(", maxSurge {surge}, maxUnavailable {unavailable}")
        }
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "  stalled {at}: old replicasets {} pods ({} available), new replicaset {} pods ({} available){strategy}",
        s.old_replicas, s.old_available, s.new_replicas, s.new_available
    );
    let _ = writeln!(out, "  why: {}", s.reason);
    for p in &s.pending {
        let _ = writeln!(out, "  pending {}: {}", p.pod, p.message);
    }
}

/// A rollout's steps, each revision's pods and spread after each step.
fn rollout_table(out: &mut String, r: &RolloutReport) {
    let _ = writeln!(
        out,
        "\nRollout of deployment {} to replicaset {}: {} steps, {} pods created, {} deleted{}",
        r.deployment,
        r.new_replica_set,
        r.steps.len(),
        r.created.len(),
        r.deleted.len(),
        match (&r.stalled, r.complete) {
            (_, true) => "",
            (Some(_), false) => " (stalled)",
            (None, false) => " (not complete: new pods not available)",
        }
    );
    // The first steps and the last; -o json lists every one.
    const SHOWN: usize = 12;
    for (i, s) in r.steps.iter().enumerate() {
        if r.steps.len() > SHOWN + 1 && i >= SHOWN && i + 1 < r.steps.len() {
            if i == SHOWN {
                let _ = writeln!(
                    out,
                    "  ... {} more steps (-o json lists every step)",
                    r.steps.len() - SHOWN - 1
                );
            }
            continue;
        }
        let _ = writeln!(out, "  {}. {}", i + 1, s.action);
        for v in &s.revisions {
            let spread: Vec<String> = v
                .spread
                .iter()
                .map(|(k, m)| {
                    let counts: Vec<String> = m.iter().map(|(d, n)| format!("{d}={n}")).collect();
                    if counts.is_empty() {
                        format!("{k}: -")
                    } else {
                        format!("{k}: {}", counts.join(" "))
                    }
                })
                .collect();
            let _ = writeln!(
                out,
                "     {}: {} pods, {} bound, {} available  {}",
                v.replica_set,
                v.pods,
                v.bound,
                v.available,
                spread.join("; ")
            );
        }
    }
    if let Some(s) = &r.stalled {
        stall_lines(out, s);
    }
    end_skew_lines(out, r);
}

/// The readiness model, each interleaving's end skews, the range per constraint, and
/// the warnings.
fn end_skew_lines(out: &mut String, r: &RolloutReport) {
    let _ = writeln!(
        out,
        "  readiness: a bound pod is Ready after {}s (--ready-after) and available {}s later (minReadySeconds); the steps above: {}",
        r.ready_after_seconds, r.min_ready_seconds, r.interleaving
    );
    for il in &r.interleavings {
        let ends: Vec<String> = il
            .end
            .iter()
            .map(|e| {
                let counts: Vec<String> =
                    e.counts.iter().map(|(d, n)| format!("{d}={n}")).collect();
                format!("{}: {} skew {}", e.topology_key, counts.join(" "), e.skew)
            })
            .collect();
        let state = if il.complete { "complete" } else { "stalled" };
        let _ = writeln!(
            out,
            "  {}: {state} in {} steps, {}s; {}",
            il.name,
            il.steps,
            il.duration_seconds,
            ends.join("; ")
        );
    }
    for e in &r.end_skew {
        let range = if e.min == e.max {
            e.max.to_string()
        } else {
            format!("{} to {}", e.min, e.max)
        };
        let _ = writeln!(out, "  end skew {}: {range}", e.constraint);
    }
    if let Some(w) = &r.deadline_exceeded {
        let _ = writeln!(out, "  progress deadline: {w}");
    }
    if let Some(w) = &r.warning {
        let _ = writeln!(out, "  warning: {w}");
    }
}
