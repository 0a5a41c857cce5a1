//! `topospread show`: the cluster drawn as the Kubernetes docs draw it.

use crate::cli::{ShowArgs, ShowFormat};
use anyhow::Result;
use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;
use topospread::snapshot::Snapshot;
use topospread_jobs::Context;
use topospread_jobs::domains::{Highlight, default_topology_keys};
use topospread_jobs::report::summary::summarize as summarize_counts;
use topospread_jobs::show::{PodSpreadReport, ShowRequest, show};
use topospread_report::{ShowOptions, SummaryText as _, every_domain, render_cluster};

/// Draw options for `snapshot`: the given keys, or the default ones.
pub(crate) fn options(
    snapshot: &Snapshot,
    keys: &[String],
    highlight: Highlight,
    width: usize,
    wide: bool,
) -> ShowOptions {
    ShowOptions {
        topology_keys: if keys.is_empty() {
            default_topology_keys(snapshot)
        } else {
            keys.to_vec()
        },
        highlight,
        max_width: width,
        wide,
    }
}

pub(crate) fn run(ctx: &Context, args: &ShowArgs) -> Result<ExitCode> {
    let mut source = args.source.source()?;
    source.namespace.clone_from(&args.namespace.namespace);
    let mut request = ShowRequest::new(source);
    request.selector = args.selector.clone();
    request.topology_keys = args.topology_keys.clone();
    let shown = super::term::with_spinner("loading", || show(ctx, request))?;
    // Notes go to stderr: stdout is the drawing or the report.
    for note in &shown.report.notes {
        stderr!("note: {note}");
    }
    if args.output == ShowFormat::Json {
        let text = serde_json::to_string_pretty(&shown.report)? + "\n";
        std::io::stdout().lock().write_all(text.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = args.width.unwrap_or_else(super::term::width);
    let opts = options(
        &shown.snapshot,
        &shown.topology_keys,
        shown.highlight,
        width,
        args.wide,
    );
    let mut text = render_cluster(&shown.snapshot, &opts);
    if let Some(spread) = &shown.report.spread {
        text.push_str(&engine_counts(spread, width, args.wide));
    }
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The first constrained pod's constraints as PodTopologySpread counts them (eligible
/// domains only, inclusion policies, nodes lacking a key, minDomains): the drawing above
/// shows every node, this says what Filter and Score see.
fn engine_counts(spread: &PodSpreadReport, width: usize, wide: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nAs PodTopologySpread counts for {} (eligible domains only):",
        spread.pod
    );
    for c in &spread.constraints {
        let counts: Vec<(String, u32)> = c
            .counts
            .iter()
            .map(|(d, n)| (d.clone(), u32::try_from(*n).unwrap_or(0)))
            .collect();
        let _ = writeln!(
            out,
            "  {} maxSkew={} {} minDomains={} selector {}",
            c.topology_key, c.max_skew, c.when_unsatisfiable, c.min_domains, c.selector
        );
        let all = format!("    {}  skew {}", every_domain(&counts), c.skew);
        if wide || all.chars().count() <= width {
            let _ = writeln!(out, "{all}");
        } else {
            let summary = summarize_counts(&counts);
            let _ = writeln!(out, "    {}  skew {}", summary.headline(), c.skew);
            let _ = writeln!(out, "    (--wide lists every domain)");
        }
    }
    out
}
