//! `topospread rebalance`: a plan of moves that restores topology spread, checked with
//! the scheduler (or the descheduler's strategy replayed for comparison), and with
//! `--scale` the pod-deletion-cost annotations that keep a scale-down spread.

use crate::cli::{RebalanceArgs, ReportFormat, StrategyArg};
use anyhow::Result;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;
use topospread_jobs::Context;
use topospread_jobs::rebalance::{self, RebalanceRequest, ScaleDownRequest};
use topospread_jobs::report::rebalance::{Move, Plan, ScalePlan};
use topospread_jobs::report::spread::WorkloadSpread;
use topospread_planning::rebalance::{DELETION_COST_ANNOTATION, Strategy};

/// Past this many domains a constraint's counts are summarised, not listed.
const MAX_LISTED_DOMAINS: usize = 12;

pub(crate) fn run(ctx: &Context, args: &RebalanceArgs) -> Result<ExitCode> {
    if let Some(scale) = &args.scale {
        let mut request = ScaleDownRequest::new(args.cluster.cluster()?, scale.clone());
        request.namespace.clone_from(&args.namespace);
        let report = rebalance::scale_down(ctx, request)?;
        let text = match args.output {
            ReportFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
            ReportFormat::Html => topospread_html::scale_down(&report),
            ReportFormat::Table | ReportFormat::Yaml => scale_table(&report.plan),
        };
        std::io::stdout().lock().write_all(text.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut request = RebalanceRequest::new(args.cluster.cluster()?);
    request.namespace.clone_from(&args.namespace);
    request.selector = args.selector.clone();
    request.max_moves = args.max_moves;
    request.strategy = match args.strategy {
        StrategyArg::Topospread => Strategy::Topospread,
        StrategyArg::Descheduler => Strategy::Descheduler,
    };
    request.include_schedule_anyway = args.include_schedule_anyway;
    request.topology_balance_node_fit = !args.no_topology_balance_node_fit;
    request.node_fit = args.node_fit;
    request.exclude_namespaces = args.exclude_namespace.clone();
    request.write_back = args.output == ReportFormat::Yaml;
    let mut result = rebalance::rebalance(ctx, request)?;
    // Timing goes to stderr so stdout stays reproducible.
    stderr!(
        "planned {} moves in {} ms",
        result.report.plan.moves.len(),
        result.planning.as_millis()
    );
    let text = match args.output {
        ReportFormat::Json => serde_json::to_string_pretty(&result.report)? + "\n",
        ReportFormat::Html => topospread_html::rebalance(&result),
        ReportFormat::Table => table(&result.report.plan, &result.notes),
        ReportFormat::Yaml => {
            // Written as it is made: a large cluster's YAML is not held whole.
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            result.write_cluster_yaml(&mut w)?;
            w.flush()?;
            String::new()
        }
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    if args.output != ReportFormat::Table {
        for n in &result.notes {
            stderr!("note: {n}");
        }
    }
    Ok(if result.report.settled() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn scale_table(p: &ScalePlan) -> String {
    let mut out = String::new();
    let deleted = p.pods.iter().filter(|d| d.delete).count();
    let _ = writeln!(
        out,
        "# {}: scale {} -> {} removes {deleted} pods; lower pod-deletion-cost goes first",
        p.workload, p.from, p.to
    );
    for d in &p.pods {
        let _ = writeln!(
            out,
            "kubectl annotate pod -n {} {} {DELETION_COST_ANNOTATION}={} --overwrite  # {} on {}",
            d.namespace,
            d.pod,
            d.cost,
            if d.delete { "remove" } else { "keep" },
            d.node
        );
    }
    let _ = writeln!(out);
    spread_section(&mut out, &p.before, &p.after);
    out
}

/// The plan for people: moves, spread before and after, what is left.
fn table(p: &Plan, notes: &[String]) -> String {
    let mut out = String::new();
    let strategy = &p.strategy;
    let _ = writeln!(
        out,
        "Plan ({strategy}): {} moves, {} rounds",
        p.moves.len(),
        p.rounds
    );
    if !p.moves.is_empty() {
        let w =
            |f: fn(&Move) -> usize, min: usize| p.moves.iter().map(f).max().unwrap_or(0).max(min);
        let (wp, wf, wt) = (
            w(|m| m.namespace.len() + m.pod.len() + 1, 3),
            w(|m| m.from.len(), 4),
            w(|m| m.to.len(), 2),
        );
        let _ = writeln!(
            out,
            "  #  {:<wp$}  {:<wf$}  {:<wt$}  REASON",
            "POD", "FROM", "TO"
        );
        for (i, m) in p.moves.iter().enumerate() {
            let pod = format!("{}/{}", m.namespace, m.pod);
            let _ = writeln!(
                out,
                "{:>3}  {pod:<wp$}  {:<wf$}  {:<wt$}  {}",
                i + 1,
                m.from,
                m.to,
                m.reason
            );
        }
    }
    let _ = writeln!(out);
    spread_section(&mut out, &p.before, &p.after);
    if !p.unresolved.is_empty() {
        let _ = writeln!(out, "Unresolved");
        for u in &p.unresolved {
            let _ = writeln!(out, "  {}: {}\n    {}", u.workload, u.constraint, u.why);
        }
        let _ = writeln!(out);
    }
    for n in notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = write!(
        out,
        "excess skew: DoNotSchedule {} -> {}, ScheduleAnyway {} -> {}; {} DoNotSchedule constraints violated",
        p.violation_before.hard,
        p.violation_after.hard,
        p.violation_before.soft,
        p.violation_after.soft,
        p.final_violations
    );
    if p.pending > 0 {
        let _ = write!(out, "; {} replacements Pending", p.pending);
    }
    out.push('\n');
    out
}

/// Per workload and constraint: counts and skew before and after.
fn spread_section(out: &mut String, before: &[WorkloadSpread], after: &[WorkloadSpread]) {
    for (b, a) in before.iter().zip(after) {
        let _ = writeln!(out, "{}/{}", b.namespace, b.workload);
        for (cb, ca) in b.constraints.iter().zip(&a.constraints) {
            let _ = writeln!(
                out,
                "  {}\n    before: {}  skew {}\n    after:  {}  skew {}",
                cb.constraint,
                counts_text(&cb.counts),
                cb.skew,
                counts_text(&ca.counts),
                ca.skew
            );
        }
    }
    let _ = writeln!(out);
}

fn counts_text(m: &BTreeMap<String, i64>) -> String {
    if m.len() > MAX_LISTED_DOMAINS {
        let max = m.values().max().copied().unwrap_or(0);
        let min = m.values().min().copied().unwrap_or(0);
        return format!("{} domains, {min}..{max} pods", m.len());
    }
    m.iter()
        .map(|(d, n)| format!("{d}={n}"))
        .collect::<Vec<_>>()
        .join(" ")
}
