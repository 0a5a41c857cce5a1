//! `topospread validate`: the API server's rules for `topologySpreadConstraints` in every
//! Pod and pod template, kube-scheduler's rules for `PodTopologySpreadArgs` in every
//! `KubeSchedulerConfiguration`, and the lints (`TS001`...) of
//! `topospread_k8s::validation::lint` — the cluster ones when the files include Nodes.
//!
//! Text output is one line per finding, as kubectl prints API errors, prefixed with the
//! object (and with the file when several are given):
//!
//! ```text
//! deployment/web: spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero
//! deployment/api: spec.template.spec.topologySpreadConstraints[0].matchLabelKeys: warning[TS006]: ...
//!     why: ...
//! ```
//!
//! `-o json` prints a `ValidationReport` (`apiVersion: topospread.dev/v1alpha1`), the
//! contract `topospread_jobs::validate` defines, with its JSON Schema in
//! `crates/jobs/schema/validation-report.json`.
//!
//! Every file is read and checked, past those that cannot be read or parsed (each one
//! line naming the file). Exit 0: nothing is invalid; 1: an object is invalid, or a lint
//! fired under `--strict` (or TS007, which is an error by default); 2: a file cannot be
//! read or parsed (after the report of the others).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use topospread_jobs::Context;
use topospread_jobs::validate::{ValidateRequest, ValidationReport, validate};

/// `topospread validate`. (Defined beside the command, not in `cli.rs`, so that branches
/// adding other commands merge without touching the same lines.)
#[derive(Debug, Args)]
#[command(mut_arg("files", |files| {
    files
        .help(
            "Manifest files: Pods, Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, \
             CronJobs, ReplicationControllers, KubeSchedulerConfigurations; Nodes (and placed \
             Pods) turn on the lints that need a cluster",
        )
        .visible_alias("filename")
        .num_args(1..)
        .required_unless_present_any(["kubeconfig", "context", "live"])
}))]
pub(crate) struct ValidateArgs {
    /// The objects to validate: files, and the live cluster's (read only).
    #[command(flatten)]
    pub(crate) source: crate::cli::SourceArgs,
    /// Report lints as errors: exit 1 when any lint fires.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    pub(crate) output: Format,
    /// `-n`: the namespace of objects that name none.
    #[command(flatten)]
    pub(crate) namespace: crate::cli::NamespaceArgs,
}

/// Output formats of `validate`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// One line per finding, as kubectl prints API errors.
    Text,
    /// A ValidationReport for tools (see crates/jobs/schema/validation-report.json).
    Json,
}

pub(crate) fn run(ctx: &Context, args: &ValidateArgs) -> Result<ExitCode> {
    let mut source = args.source.source()?;
    source.namespace.clone_from(&args.namespace.namespace);
    let mut request = ValidateRequest::new(source);
    request.strict = args.strict;
    let report = validate(ctx, request)?;
    let with_file = report.summary.files > 1;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.output {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &report)?;
            writeln!(out)?;
        }
        Format::Text => print_text(&mut out, &report, with_file)?,
    }
    out.flush()?;
    Ok(if report.unreadable_input() {
        ExitCode::from(2)
    } else if report.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_text(out: &mut impl Write, report: &ValidationReport, with_file: bool) -> Result<()> {
    for line in &report.unreadable {
        writeln!(out, "{line}")?;
    }
    for d in &report.diagnostics {
        if with_file {
            write!(out, "{}: ", d.file)?;
        }
        write!(out, "{}: ", d.object.display())?;
        match d.code {
            None => writeln!(out, "{}", d.message)?,
            Some(code) => {
                writeln!(
                    out,
                    "{}: {}[{code}]: {}",
                    d.field,
                    d.severity.as_str(),
                    d.detail
                )?;
                if let Some(why) = d.why {
                    writeln!(out, "    why: {why}")?;
                }
            }
        }
    }
    for note in &report.notes {
        writeln!(out, "note: {note}")?;
    }
    let s = &report.summary;
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let unreadable = if s.unreadable > 0 {
        format!(", {} not read", plural(s.unreadable, "input"))
    } else {
        String::new()
    };
    writeln!(
        out,
        "{} checked: {}, {}{unreadable}",
        plural(s.objects, "object"),
        plural(s.errors, "error"),
        plural(s.warnings, "warning")
    )?;
    Ok(())
}
