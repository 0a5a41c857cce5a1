//! `topospread explain POD`: one pending pod's scheduling cycle, node by node.

use crate::cli::{ExplainArgs, ExplainFormat};
use anyhow::Result;
use std::io::Write;
use std::process::ExitCode;
use topospread_jobs::Context;
use topospread_jobs::explain::{ExplainRequest, explain};
use topospread_report::{ExplainLayout, render_explanation};

pub(crate) fn run(ctx: &Context, args: &ExplainArgs) -> Result<ExitCode> {
    let cluster = args.namespace.apply(args.cluster.cluster()?);
    let mut request = ExplainRequest::new(cluster, args.pod.clone());
    request.scale = args.scale.clone();
    let report = explain(ctx, request)?;
    let text = match args.output {
        ExplainFormat::Text => render_explanation(
            &report.cycle,
            ExplainLayout {
                top: args.top,
                wide: args.wide,
            },
        ),
        ExplainFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
        ExplainFormat::Html => topospread_html::explain(&report),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(if report.scheduled() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
