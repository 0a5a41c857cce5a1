//! `topospread show`: the cluster drawn as the Kubernetes docs draw it.

use super::input;
use crate::cli::ShowArgs;
use anyhow::{Result, anyhow};
use std::io::Write;
use std::process::ExitCode;
use topospread::api::Selector;
use topospread::snapshot::Snapshot;
use topospread_k8s::build;
use topospread_k8s::notes::summarize;
use topospread_report::{
    Highlight, ShowOptions, default_topology_keys, parse_selector, render_cluster,
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

pub(crate) fn run(args: &ShowArgs) -> Result<ExitCode> {
    let (input, mut snapshot) = super::term::with_spinner("loading", || -> Result<_> {
        let input = input::load_admitted(&args.files, &args.live, 0)?;
        let snapshot =
            build::build_snapshot_with(&input.objects, super::input::gates().request_options())?;
        Ok((input, snapshot))
    })?;
    // Notes go to stderr: stdout is the drawing.
    let finished = input::finished_notes(&input.objects);
    for note in summarize(input.notes.iter().chain(&finished)) {
        eprintln!("note: {note}");
    }
    drop(input);
    let h = highlight(&mut snapshot, args.selector.as_deref())?;
    let width = args.width.unwrap_or_else(super::term::width);
    let opts = options(&snapshot, &args.topology_keys, h, width, args.wide);
    let text = render_cluster(&snapshot, &opts);
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
