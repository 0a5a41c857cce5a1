//! `topospread capacity`: the nodes to add per template and zone, the spread the
//! verified run gives, the binpacking estimate beside it, and `--remove-idle`.

use crate::cli::{CapacityArgs, PlanFormat};
use anyhow::Result;
use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;
use topospread_jobs::Context;
use topospread_jobs::capacity::{CapacityReport, CapacityRequest, capacity};

/// Exit 0 when every pending pod is placed by the plan, 1 when some no number of nodes
/// places, 2 on bad input.
pub(crate) fn run(ctx: &Context, args: &CapacityArgs) -> Result<ExitCode> {
    let mut request = CapacityRequest::new(args.cluster.cluster()?, args.templates.clone());
    request.remove_idle = args.remove_idle;
    request.instance_types = args.instance_types.clone();
    let report = capacity(ctx, request)?;
    // Timing goes to stderr so stdout stays reproducible.
    stderr!(
        "planned in {} ms ({} simulations)",
        report.planned_in.as_millis(),
        report.simulations
    );
    let text = match args.output {
        PlanFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
        PlanFormat::Table => table(&report),
        PlanFormat::Html => topospread_html::capacity(&report),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(if report.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Rows padded to their columns' widths.
fn columns(out: &mut String, rows: &[Vec<String>]) {
    let widths: Vec<usize> = (0..rows.first().map_or(0, Vec::len))
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "  {}", line.join("  ").trim_end());
    }
}

fn table(r: &CapacityReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} pod(s) Pending with the cluster as it is",
        r.pending_before
    );
    if r.pending_before == 0 {
        let _ = writeln!(
            out,
            "Nothing to add: every pod schedules on the cluster as it is"
        );
    } else {
        add_lines(&mut out, r);
    }
    spread_and_rest(&mut out, r);
    out
}

fn add_lines(out: &mut String, r: &CapacityReport) {
    let how = if r.exact {
        "the exact minimum (exhaustive search)".to_string()
    } else {
        format!("no fewer than {} can do", r.lower_bound)
    };
    let _ = writeln!(out, "Add {} node(s), price {}: {how}", r.nodes, r.price);
    if !r.additions.is_empty() {
        let mut rows = vec![vec![
            "TEMPLATE".to_string(),
            "ZONE".to_string(),
            "COUNT".to_string(),
            "NODES".to_string(),
        ]];
        for a in &r.additions {
            rows.push(vec![
                a.template.clone(),
                a.zone.clone().unwrap_or_else(|| "-".into()),
                a.count.to_string(),
                match a.nodes.as_slice() {
                    [first, .., last] if a.nodes.len() > 2 => format!("{first} .. {last}"),
                    names => names.join(","),
                },
            ]);
        }
        columns(out, &rows);
    }
    let _ = writeln!(
        out,
        "Checked by simulation: {} of {} placed, {} Pending",
        r.placed.len(),
        r.pending_before,
        r.pending_after
    );
}

fn spread_and_rest(out: &mut String, r: &CapacityReport) {
    if !r.workloads.is_empty() {
        let _ = writeln!(out, "\nSpread in that run:");
        for w in &r.workloads {
            let _ = writeln!(
                out,
                "  {}: {} pending, {} placed",
                w.workload, w.pending_before, w.placed
            );
            for c in &w.spread {
                let counts: Vec<String> =
                    c.counts.iter().map(|(d, n)| format!("{d}={n}")).collect();
                let counts = if counts.len() > 12 {
                    format!("{} domains", counts.len())
                } else {
                    counts.join(" ")
                };
                let _ = writeln!(out, "    {}: {counts}  skew {}", c.constraint, c.skew);
            }
        }
    }
    if !r.greedy.is_empty() {
        let _ = writeln!(
            out,
            "\nBinpacking estimate (cluster-autoscaler's manner: one template, pods packed by resources, no spread):"
        );
        let mut rows = vec![vec![
            "TEMPLATE".to_string(),
            "NODES".to_string(),
            "PENDING AFTER".to_string(),
            "AGAINST TOPOSPREAD".to_string(),
        ]];
        for g in &r.greedy {
            let verdict = if g.pending_after > r.pending_after {
                format!(
                    "leaves {} pod(s) Pending",
                    g.pending_after - r.pending_after
                )
            } else if g.nodes > r.nodes {
                format!("{} node(s) more", g.nodes - r.nodes)
            } else {
                "same outcome".to_string()
            };
            rows.push(vec![
                g.template.clone(),
                format!("{}{}", g.nodes, if g.capped { " (max-count)" } else { "" }),
                g.pending_after.to_string(),
                verdict,
            ]);
        }
        columns(out, &rows);
    }
    if !r.unplaceable.is_empty() {
        let _ = writeln!(out, "\nNo number of template nodes places:");
        for u in &r.unplaceable {
            let _ = writeln!(out, "  {}: {}", u.pod, u.reason);
        }
    }
    if let Some(removals) = &r.remove_idle {
        let _ = writeln!(
            out,
            "\nRemovable nodes (each checked by simulation, one after another): {}",
            removals.len()
        );
        for n in removals {
            let moved: Vec<String> = n
                .moved
                .iter()
                .map(|m| format!("{} -> {}", m.pod, m.to))
                .collect();
            let moved = if moved.is_empty() {
                "no pods to move".to_string()
            } else {
                moved.join(", ")
            };
            let _ = writeln!(out, "  {}: {moved}", n.node);
        }
    }
}
