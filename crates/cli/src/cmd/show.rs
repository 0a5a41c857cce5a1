//! `topospread show`: the cluster drawn as the Kubernetes docs draw it.

use crate::cli::ShowArgs;
use anyhow::{Result, anyhow};
use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;
use topospread::api::Selector;
use topospread::snapshot::Snapshot;
use topospread::spread::SpreadCounter;
use topospread_jobs::{Context, input};
use topospread_k8s::build;
use topospread_k8s::notes::summarize;
use topospread_report::{
    Highlight, ShowOptions, default_topology_keys, every_domain, parse_selector, render_cluster,
    summarize as summarize_counts,
};

/// The pods to mark: `--selector`, else the first spread constraint's selector, else all.
pub(crate) fn highlight(snapshot: &mut Snapshot, selector: Option<&str>) -> Result<Highlight> {
    if let Some(text) = selector {
        let ls = parse_selector(text)?;
        let selector = Selector::from_label_selector(Some(&ls), snapshot.symbols_mut())
            .map_err(|e| anyhow!("--selector {text:?}: {e}"))?;
        let description = selector.display(snapshot.symbols());
        return Ok(Highlight {
            selector,
            namespace: None,
            description,
        });
    }
    let symbols = snapshot.symbols();
    let first = snapshot
        .pods()
        .find_map(|(_, p)| p.spread_constraints.first().map(|c| (p, c)));
    Ok(match first {
        Some((p, c)) => Highlight {
            selector: c.selector.clone(),
            namespace: Some(p.namespace),
            description: format!(
                "{} in namespace {} (the selector of {}'s constraint on {})",
                c.selector.display(symbols),
                symbols.resolve(p.namespace),
                p.name,
                symbols.resolve(c.topology_key)
            ),
        },
        None => Highlight {
            selector: Selector::everything(),
            namespace: None,
            description: "anything (no --selector and no constraint in the files)".into(),
        },
    })
}

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
    let (input, mut snapshot) = super::term::with_spinner("loading", || -> Result<_> {
        let input = input::load_admitted(
            ctx,
            &args.files,
            args.live.objects()?,
            0,
            input::PodForm::Compact,
        )?;
        let snapshot = build::build_with_symbols(
            &input.objects,
            ctx.gates().request_options(),
            input.symbols.clone(),
        )?
        .snapshot;
        Ok((input, snapshot))
    })?;
    // Notes go to stderr: stdout is the drawing.
    let finished = input::finished_notes(&input.objects);
    for note in summarize(input.notes.iter().chain(&finished)) {
        eprintln!("note: {note}");
    }
    let setup = topospread_jobs::config::load(ctx, None, &input)?;
    drop(input);
    let h = highlight(&mut snapshot, args.selector.as_deref())?;
    let width = args.width.unwrap_or_else(super::term::width);
    let opts = options(&snapshot, &args.topology_keys, h, width, args.wide);
    let mut text = render_cluster(&snapshot, &opts);
    if args.selector.is_none() {
        let counter = SpreadCounter::new(&setup.config, setup.features, &mut snapshot)
            .map_err(|e| anyhow!("{}: {e}", setup.origin))?;
        text.push_str(&engine_counts(&counter, &snapshot, width, args.wide));
    }
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The highlighted pod's constraints as PodTopologySpread counts them (eligible domains
/// only, inclusion policies, nodes lacking a key, minDomains): the drawing above shows
/// every node, this says what Filter and Score see.
fn engine_counts(counter: &SpreadCounter, snapshot: &Snapshot, width: usize, wide: bool) -> String {
    let mut out = String::new();
    let Some((_, pod)) = snapshot
        .pods()
        .find(|(_, p)| !p.spread_constraints.is_empty())
    else {
        return out;
    };
    let spread = counter.pod_spread(pod, snapshot);
    if spread.constraints.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "\nAs PodTopologySpread counts for {}/{} (eligible domains only):",
        snapshot.symbols().resolve(pod.namespace),
        pod.name
    );
    for c in &spread.constraints {
        let s = &c.spread;
        let counts: Vec<(String, u32)> = s
            .counts
            .iter()
            .map(|(d, n)| (d.clone(), u32::try_from(*n).unwrap_or(0)))
            .collect();
        let _ = writeln!(
            out,
            "  {} maxSkew={} {} minDomains={} selector {}",
            s.topology_key, s.max_skew, s.when_unsatisfiable, c.min_domains, c.selector
        );
        let all = format!("    {}  skew {}", every_domain(&counts), s.skew);
        if wide || all.chars().count() <= width {
            let _ = writeln!(out, "{all}");
        } else {
            let summary = summarize_counts(&counts);
            let _ = writeln!(out, "    {}  skew {}", summary.headline(), s.skew);
            let _ = writeln!(out, "    (--wide lists every domain)");
        }
    }
    out
}
