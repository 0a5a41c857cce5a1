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
//! `-o json` prints one object, schema version 1:
//! `{"version": 1, "diagnostics": [...], "summary": {...}, "skipped_lints": [...], "notes": [...]}`,
//! each diagnostic with `file`, `document` (1-based), `item` (inside a `kind: List`, or
//! null), `object` (`kind`, `namespace`, `name`), `field`, `severity` (`error` /
//! `warning`), `type` (`Invalid`, `Required`, `NotSupported`, `Duplicate`, `Forbidden`,
//! or `Lint`), `code` (`TS001`... for lints, else null), `value` (the bad value as Go
//! prints it, or null), `detail`, `why` (lints only) and `message` (the text line's
//! `field: ...` part).
//!
//! Exit 0: nothing is invalid; 1: an object is invalid, or a lint fired under `--strict`
//! (or TS007, which is an error by default); 2: a file cannot be read or parsed.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;
use topospread_k8s::build::build_snapshot_with;
use topospread_k8s::load::{Loaded, Object, escape_control};
use topospread_k8s::notes::summarize;
use topospread_k8s::validation::{
    ClusterLinter, FieldError, Lint, LintCode, Severity, Workload, lint_workload, validate_cluster,
    validate_objects_with, validate_scheduler_configuration,
};

use topospread_jobs::{Context, config, input};

/// `topospread validate`. (Defined beside the command, not in `cli.rs`, so that branches
/// adding other commands merge without touching the same lines.)
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Manifest files: Pods, Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs,
    /// CronJobs, ReplicationControllers, KubeSchedulerConfigurations; Nodes (and placed
    /// Pods) turn on the lints that need a cluster.
    #[arg(short = 'f', long = "file", visible_alias = "filename", num_args = 1..,
          required_unless_present_any = ["kubeconfig", "context", "live"])]
    pub(crate) files: Vec<PathBuf>,
    /// Validate the live cluster's objects too (see `--kubeconfig`); read only.
    #[command(flatten)]
    pub(crate) live: crate::cli::LiveArgs,
    /// Report lints as errors: exit 1 when any lint fires.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    pub(crate) output: Format,
}

/// Output formats of `validate`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// One line per finding, as kubectl prints API errors.
    Text,
    /// One JSON object for tools (schema version 1).
    Json,
}

/// Which object a diagnostic is about.
#[derive(Clone, Debug, Serialize)]
struct ObjectRef {
    kind: &'static str,
    namespace: Option<String>,
    name: Option<String>,
}

impl ObjectRef {
    /// `deployment/web`, `pod/cache (namespace prod)`, as the engine names objects
    /// (control characters escaped).
    fn display(&self) -> String {
        let kind = self.kind.to_lowercase();
        let mut s = match &self.name {
            Some(name) => format!("{kind}/{}", escape_control(name)),
            None if self.kind == "KubeSchedulerConfiguration" => kind,
            None => format!("{kind}/<unnamed>"),
        };
        if let Some(ns) = &self.namespace {
            s.push_str(&format!(" (namespace {})", escape_control(ns)));
        }
        s
    }
}

/// One finding, as printed and as serialized.
#[derive(Clone, Debug, Serialize)]
struct Diagnostic {
    file: String,
    document: usize,
    item: Option<usize>,
    object: ObjectRef,
    field: String,
    severity: Severity,
    #[serde(rename = "type")]
    kind: &'static str,
    code: Option<&'static str>,
    value: Option<String>,
    detail: String,
    why: Option<&'static str>,
    message: String,
}

#[derive(Debug, Serialize)]
struct Summary {
    files: usize,
    objects: usize,
    errors: usize,
    warnings: usize,
}

#[derive(Debug, Serialize)]
struct Report {
    version: u32,
    diagnostics: Vec<Diagnostic>,
    summary: Summary,
    skipped_lints: Vec<&'static str>,
    notes: Vec<String>,
}

/// Where a diagnostic points: file, document, item, object.
struct Place<'a> {
    loaded: &'a Loaded,
    /// Its position in the files' objects.
    index: usize,
    object: ObjectRef,
}

impl Place<'_> {
    fn error(&self, e: &FieldError) -> Diagnostic {
        Diagnostic {
            file: self.loaded.source.file.clone(),
            document: self.loaded.source.document,
            item: self.loaded.source.item,
            object: self.object.clone(),
            field: e.field.clone(),
            severity: Severity::Error,
            kind: e.kind.name(),
            code: None,
            value: e.bad_value.clone(),
            detail: e.detail.clone(),
            why: None,
            message: e.to_string(),
        }
    }

    fn lint(&self, l: &Lint, strict: bool) -> Diagnostic {
        Diagnostic {
            file: self.loaded.source.file.clone(),
            document: self.loaded.source.document,
            item: self.loaded.source.item,
            object: self.object.clone(),
            field: l.field.clone(),
            severity: if strict {
                Severity::Error
            } else {
                l.code.default_severity()
            },
            kind: "Lint",
            code: Some(l.code.code()),
            value: None,
            detail: l.message.clone(),
            why: Some(l.code.why()),
            message: l.to_string(),
        }
    }
}

pub(crate) fn run(ctx: &Context, args: &ValidateArgs) -> Result<ExitCode> {
    // Every file is read and parsed before anything is reported: a broken file stops the
    // run with exit 2 and no partial verdict.
    let input = input::load(
        ctx,
        &args.files,
        args.live.objects()?,
        0,
        input::PodForm::Whole,
    )?;
    let mut report = check(ctx, &input.objects, args, input.inputs)?;
    let finished = input::finished_notes(&input.objects);
    report
        .notes
        .extend(summarize(input.notes.iter().chain(&finished)));
    // The configuration simulate would run with: refused here as it would be there.
    let config_reported = report
        .diagnostics
        .iter()
        .any(|d| d.object.kind == "KubeSchedulerConfiguration" && d.severity == Severity::Error);
    if let Err(e) = config::load(ctx, None, &input)
        && !config_reported
    {
        report.summary.errors += 1;
        report.diagnostics.push(Diagnostic {
            file: String::new(),
            document: 0,
            item: None,
            object: ObjectRef {
                kind: "KubeSchedulerConfiguration",
                namespace: None,
                name: None,
            },
            field: String::new(),
            severity: Severity::Error,
            kind: "Invalid",
            code: None,
            value: None,
            detail: format!("{e:#}"),
            why: None,
            message: format!("{e:#}"),
        });
    }
    let with_file = input.inputs > 1;
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
    Ok(if report.summary.errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Validates and lints every object; `Err` only for args that cannot be decoded.
fn check(ctx: &Context, objects: &[Loaded], args: &ValidateArgs, files: usize) -> Result<Report> {
    let features = ctx.api_server_features();
    // Validation first, so the snapshot for the cluster lints can leave invalid pods out.
    let mut checked: Vec<(Place, bool, Vec<FieldError>)> = Vec::new();
    let mut invalid = std::collections::HashSet::new();
    for (index, loaded) in objects.iter().enumerate() {
        if let Object::SchedulerConfiguration(config) = &loaded.object {
            let errors = validate_scheduler_configuration(config)
                .with_context(|| format!("{}: kubeschedulerconfiguration", loaded.source.file))?;
            let object = ObjectRef {
                kind: "KubeSchedulerConfiguration",
                namespace: None,
                name: None,
            };
            checked.push((
                Place {
                    loaded,
                    index,
                    object,
                },
                false,
                errors,
            ));
            continue;
        }
        let Some(meta) = loaded.object.metadata() else {
            continue;
        };
        let object = ObjectRef {
            kind: loaded.object.kind(),
            namespace: meta.namespace.clone(),
            name: meta.name.clone(),
        };
        // The API server's create-time validation, the same simulate runs first.
        let errors: Vec<FieldError> =
            validate_objects_with(std::slice::from_ref(loaded), &features)
                .into_iter()
                .map(|r| r.error)
                .collect();
        if !errors.is_empty() {
            invalid.insert(index);
        }
        // The workload is read again when linted, one at a time (a dump's 100,000 pods
        // are not copied all at once).
        let lintable = Workload::is_workload_kind(&loaded.object);
        checked.push((
            Place {
                loaded,
                index,
                object,
            },
            lintable,
            errors,
        ));
    }
    // What makes the objects together not a cluster: duplicate names, pods bound to
    // nodes the files do not hold. Reported on the object named second.
    let mut cluster_errors: std::collections::HashMap<usize, Vec<FieldError>> =
        std::collections::HashMap::new();
    let found = validate_cluster(objects);
    if !found.is_empty() {
        // Where each object is, by what a cluster error names it with.
        let place_key = |s: &topospread_k8s::load::Source, kind: &str, name: Option<&str>| {
            format!("{}\0{}\0{:?}\0{kind}\0{name:?}", s.file, s.document, s.item)
        };
        let positions: std::collections::HashMap<String, usize> = objects
            .iter()
            .enumerate()
            .rev()
            .map(|(i, l)| {
                let name = l.object.metadata().and_then(|m| m.name.as_deref());
                (place_key(&l.source, l.object.kind(), name), i)
            })
            .collect();
        for r in found {
            if let Some(&index) = positions.get(&place_key(&r.source, r.kind, r.name.as_deref())) {
                invalid.insert(index);
                cluster_errors.entry(index).or_default().push(r.error);
            }
        }
    }

    let mut notes = Vec::new();
    let has_nodes = objects.iter().any(|l| matches!(l.object, Object::Node(_)));
    let mut linter = None;
    if has_nodes {
        // Pods the API server would reject stay out of the snapshot.
        let usable: Vec<&Loaded> = objects
            .iter()
            .enumerate()
            .filter(|(i, l)| {
                !(matches!(l.object, Object::Pod(_) | Object::Node(_)) && invalid.contains(i))
            })
            .map(|(_, l)| l)
            .collect();
        match build_snapshot_with(usable.iter().copied(), ctx.gates().request_options()) {
            Ok(snapshot) => {
                linter = Some(ClusterLinter::with_features(
                    snapshot,
                    ctx.scheduler_features(),
                )?);
            }
            Err(e) => notes.push(format!(
                "cluster lints skipped: the files do not make a cluster snapshot: {e}"
            )),
        }
    } else {
        notes.push(
            "cluster lints skipped: the files include no Nodes (add them to run TS002, TS003, TS005)"
                .to_string(),
        );
    }
    let skipped_lints: Vec<&'static str> = if linter.is_some() {
        Vec::new()
    } else {
        LintCode::ALL
            .iter()
            .filter(|c| c.needs_nodes())
            .map(|c| c.code())
            .collect()
    };

    let mut diagnostics = Vec::new();
    for (place, lintable, errors) in &checked {
        diagnostics.extend(errors.iter().map(|e| place.error(e)));
        if let Some(found) = cluster_errors.get(&place.index) {
            diagnostics.extend(found.iter().map(|e| place.error(e)));
        }
        if !lintable {
            continue;
        }
        let Some(workload) = Workload::from_object(&place.loaded.object) else {
            continue;
        };
        let workload = &workload;
        let mut lints = lint_workload(workload, &features);
        if let Some(linter) = linter.as_mut() {
            lints.extend(linter.lint(workload));
        }
        diagnostics.extend(lints.iter().map(|l| place.lint(l, args.strict)));
    }
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    Ok(Report {
        version: 1,
        summary: Summary {
            files,
            objects: checked.len(),
            errors,
            warnings: diagnostics.len() - errors,
        },
        diagnostics,
        skipped_lints,
        notes,
    })
}

fn print_text(out: &mut impl Write, report: &Report, with_file: bool) -> Result<()> {
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
    writeln!(
        out,
        "{} checked: {}, {}",
        plural(s.objects, "object"),
        plural(s.errors, "error"),
        plural(s.warnings, "warning")
    )?;
    Ok(())
}
