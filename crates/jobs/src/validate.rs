//! `validate`: the API server's create-time rules for every object (topology spread
//! constraints, pods, workloads, admission objects), kube-scheduler's rules for each
//! `KubeSchedulerConfiguration`, what makes the objects together not a cluster, and the
//! lints (`TS001`...) of `topospread_k8s::validation::lint`, the cluster ones when the
//! input holds Nodes.

mod report;
#[cfg(test)]
mod tests;

pub use report::{API_VERSION, Diagnostic, KIND, ObjectRef, Summary, ValidationReport, schema};

use crate::ClusterSource;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::input::{self, PodForm};
use crate::{config, input::Input};
use std::collections::{HashMap, HashSet};
use topospread::api::Symbols;
use topospread_k8s::build::build_with_symbols;
use topospread_k8s::load::{Loaded, Object, Source, UnknownField};
use topospread_k8s::notes::summarize;
use topospread_k8s::validation::{
    ApiServerFeatures, ClusterLinter, FieldError, InputPods, Lint, LintCode, Severity, Workload,
    lint_node, lint_pod_affinity, lint_workload, validate_cluster, validate_objects_with,
    validate_scheduler_configuration,
};

/// What to validate.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ValidateRequest {
    /// The objects to validate: `-f` files, folders, `-` for stdin, and a live
    /// cluster's.
    pub source: ClusterSource,
    /// `--strict`: every lint is an error.
    pub strict: bool,
}

impl ValidateRequest {
    /// A request for `source`, lints as warnings.
    pub fn new(source: impl Into<ClusterSource>) -> Self {
        Self {
            source: source.into(),
            ..Self::default()
        }
    }
}

/// Where a diagnostic points: file, document, item, object.
struct Place<'a> {
    loaded: &'a Loaded,
    /// Its position in the input's objects.
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

    /// A field the object's type lacks: the API server's strict field validation
    /// refuses the object; the rest of it is checked without the field.
    fn unknown_field(&self, field: &str) -> Diagnostic {
        Diagnostic {
            file: self.loaded.source.file.clone(),
            document: self.loaded.source.document,
            item: self.loaded.source.item,
            object: self.object.clone(),
            field: field.to_string(),
            severity: Severity::Error,
            kind: "UnknownField",
            code: None,
            value: None,
            detail: "unknown field".to_string(),
            why: None,
            message: format!(
                "{field}: unknown field (a typo, or a field of another release: the API server refuses it under strict field validation; the rest of the object was checked)"
            ),
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

/// Reads every input before judging any (a file that cannot be read or parsed is an
/// `Err`, never a partial report), then validates and lints every object. Bound pods
/// are read compact, with what the lints read of them.
pub fn validate(ctx: &Context, request: ValidateRequest) -> Result<ValidationReport> {
    let mut input = read(ctx, request.source)?;
    // Objects named again are applied over the earlier ones, as simulate applies them.
    let applied = topospread_k8s::apply::apply_over(&mut input.objects);
    input.notes.extend(applied.notes);
    let symbols = input.symbols.clone();
    let mut report = check(
        ctx,
        &input.objects,
        &input.unknown_fields,
        symbols,
        request.strict,
        input.inputs,
    )?;
    let refusals = applied.refused.iter().map(|r| {
        (
            r.source.file.clone(),
            r.kind,
            r.namespace.clone(),
            r.name.clone(),
            r.error.clone(),
        )
    });
    for (file, kind, namespace, name, error) in refusals {
        push_error(
            &mut report,
            Diagnostic {
                file,
                document: 0,
                item: None,
                object: ObjectRef {
                    kind,
                    namespace,
                    name,
                },
                field: error.field.clone(),
                severity: Severity::Error,
                kind: error.kind.name(),
                code: None,
                value: None,
                detail: error.body(),
                why: None,
                message: error.to_string(),
            },
        );
    }
    admission_errors(ctx, &input, &mut report);
    report.unreadable = input.unreadable.iter().map(ToString::to_string).collect();
    report.summary.unreadable = report.unreadable.len();
    let finished = topospread_driver::notes::finished(&input.objects);
    report
        .notes
        .extend(summarize(input.notes.iter().chain(&finished)));
    refuse_config(ctx, &input, &mut report);
    Ok(report)
}

/// The objects of `source`, bound pods compact with what the lints read of them; every
/// file is read, past those that cannot be ([`Input::unreadable`]).
fn read(ctx: &Context, source: ClusterSource) -> Result<Input> {
    if source.files.is_empty() {
        return source.load(ctx, 0, PodForm::Linted);
    }
    let ns = source.namespace.as_deref();
    let mut input = input::load_files_each(ctx, &source.files, PodForm::Linted, ns)?;
    if let Some(mut live) = source.live {
        live.append(&mut input.objects);
        input.objects = live;
        input.inputs += 1;
    }
    Ok(input)
}

/// Adds an error diagnostic, counted in the summary.
fn push_error(report: &mut ValidationReport, d: Diagnostic) {
    report.summary.errors += 1;
    report.diagnostics.push(d);
}

/// The pods the API server's admission would refuse when simulate creates them (bare
/// pods, and every pod a workload would make: LimitRanger, RuntimeClass,
/// ResourceQuota, Priority), each message once, in simulate's words. Objects already
/// reported invalid stay out, as the API server would not have created them, and so do
/// bound pods read compact (admitted when they were created; the lints' snapshot holds
/// them, so quota already used by them is not charged here). Skipped, with a note, when
/// the rest still does not make a cluster.
fn admission_errors(ctx: &Context, input: &Input, report: &mut ValidationReport) {
    let invalid: HashSet<(&str, Option<&str>, Option<&str>)> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| {
            (
                d.object.kind,
                d.object.namespace.as_deref(),
                d.object.name.as_deref(),
            )
        })
        .collect();
    let compact = input
        .objects
        .iter()
        .any(|l| matches!(l.object, Object::CompactPod(_)));
    let filtered;
    let input = if invalid.is_empty() && !compact {
        input
    } else {
        let keep = |l: &&Loaded| {
            !matches!(l.object, Object::CompactPod(_))
                && object_ref(&l.object).is_none_or(|o| {
                    !invalid.contains(&(o.kind, o.namespace.as_deref(), o.name.as_deref()))
                })
        };
        filtered = Input {
            objects: input.objects.iter().filter(keep).cloned().collect(),
            symbols: input.symbols.clone(),
            provision_zone: input.provision_zone.clone(),
            ..Input::default()
        };
        &filtered
    };
    let world = match input::build(ctx, input, 0, &[]) {
        Ok(world) => world,
        Err(e) => {
            report.notes.push(format!(
                "admission checks skipped: the objects do not make a cluster: {e}"
            ));
            return;
        }
    };
    let mut seen = HashSet::new();
    for r in &world.refused {
        let message = r.error.to_string();
        if !seen.insert((r.file.clone(), message.clone())) {
            continue;
        }
        let kind = match r.error {
            topospread_k8s::admission::AdmissionError::Invalid { .. } => "Invalid",
            _ => "Forbidden",
        };
        push_error(
            report,
            Diagnostic {
                file: r.file.clone(),
                document: 0,
                item: None,
                object: ObjectRef {
                    kind: "Pod",
                    namespace: Some(r.namespace.clone()),
                    name: Some(r.error.pod().to_string()),
                },
                field: String::new(),
                severity: Severity::Error,
                kind,
                code: None,
                value: None,
                detail: message.clone(),
                why: None,
                message,
            },
        );
    }
}

/// The configuration simulate would run with, refused here as it would be there (once:
/// not again when a KubeSchedulerConfiguration's own errors already say so).
fn refuse_config(ctx: &Context, input: &Input, report: &mut ValidationReport) {
    let reported = report
        .diagnostics
        .iter()
        .any(|d| d.object.kind == "KubeSchedulerConfiguration" && d.severity == Severity::Error);
    let Err(e) = config::load(ctx, None, input) else {
        return;
    };
    if reported {
        return;
    }
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
        detail: e.to_string(),
        why: None,
        message: e.to_string(),
    });
}

/// What a diagnostic names an object by; `None` for objects without metadata.
fn object_ref(object: &Object) -> Option<ObjectRef> {
    if let Object::CompactPod(p) = object {
        return Some(ObjectRef {
            kind: "Pod",
            namespace: p.namespace_written.clone(),
            name: Some(p.name.clone()),
        });
    }
    let meta = object.metadata()?;
    Some(ObjectRef {
        kind: object.kind(),
        namespace: meta.namespace.clone(),
        name: meta.name.clone(),
    })
}

/// Validates and lints every object (compact pods built into the snapshot with
/// `symbols`, their compactor's); `Err` only for a configuration that cannot be decoded.
fn check(
    ctx: &Context,
    objects: &[Loaded],
    unknown: &[UnknownField],
    symbols: Symbols,
    strict: bool,
    files: usize,
) -> Result<ValidationReport> {
    let features = ctx.api_server_features();
    // Validation first, so the snapshot for the cluster lints can leave invalid pods out.
    let (checked, mut invalid) = validate_each(ctx, objects, &features)?;
    let cluster_errors = cluster_errors(objects, &mut invalid);

    let mut notes = Vec::new();
    let mut linter = cluster_linter(ctx, objects, &invalid, symbols, &mut notes)?;
    let skipped_lints: Vec<&'static str> = if linter.is_some() {
        Vec::new()
    } else {
        LintCode::ALL
            .iter()
            .filter(|c| c.needs_nodes())
            .map(|c| c.code())
            .collect()
    };

    let input_pods = InputPods::new(objects);
    let mut diagnostics = Vec::new();
    for (place, lintable, errors) in &checked {
        let own_unknown = unknown.iter().filter(|u| u.source == place.loaded.source);
        diagnostics.extend(own_unknown.map(|u| place.unknown_field(&u.field)));
        diagnostics.extend(errors.iter().map(|e| place.error(e)));
        if let Some(found) = cluster_errors.get(&place.index) {
            diagnostics.extend(found.iter().map(|e| place.error(e)));
        }
        if let Object::Node(node) = &place.loaded.object {
            let lint = lint_node(node);
            diagnostics.extend(lint.iter().map(|l| place.lint(l, strict)));
        }
        if !lintable {
            continue;
        }
        if let Object::CompactPod(p) = &place.loaded.object {
            // Linted as it was read; the cluster lints read the pod kept for it.
            let mut lints = p.lints.clone();
            if let (Some(linter), Some(pod)) = (linter.as_mut(), p.lint_pod.as_deref()) {
                lints.extend(linter.lint_pod(pod));
            }
            diagnostics.extend(lints.iter().map(|l| place.lint(l, strict)));
            continue;
        }
        let Some(workload) = Workload::from_object(&place.loaded.object) else {
            continue;
        };
        let mut lints = lint_workload(&workload, &features);
        lints.extend(lint_pod_affinity(&workload, &input_pods));
        if let Some(linter) = linter.as_mut() {
            lints.extend(linter.lint(&workload));
        }
        diagnostics.extend(lints.iter().map(|l| place.lint(l, strict)));
    }
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    Ok(ValidationReport {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        summary: Summary {
            files,
            objects: checked.len(),
            errors,
            warnings: diagnostics.len() - errors,
            unreadable: 0,
        },
        diagnostics,
        skipped_lints,
        notes,
        unreadable: Vec::new(),
    })
}

/// Each object through the API server's create-time validation (a scheduler
/// configuration through its own): the object's place, whether it is linted as a
/// workload or pod, its errors; and the indices of the objects refused.
#[allow(clippy::type_complexity)]
fn validate_each<'a>(
    ctx: &Context,
    objects: &'a [Loaded],
    features: &ApiServerFeatures,
) -> Result<(Vec<(Place<'a>, bool, Vec<FieldError>)>, HashSet<usize>)> {
    let mut checked: Vec<(Place, bool, Vec<FieldError>)> = Vec::new();
    let mut invalid = HashSet::new();
    for (index, loaded) in objects.iter().enumerate() {
        if let Object::SchedulerConfiguration(config) = &loaded.object {
            let errors = validate_scheduler_configuration(config, ctx.scheduler_features())
                .map_err(|e| {
                    Error::Refused(format!(
                        "{}: kubeschedulerconfiguration: {e}",
                        loaded.source.file
                    ))
                })?;
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
        let Some(object) = object_ref(&loaded.object) else {
            continue;
        };
        // The API server's create-time validation, the same simulate runs first.
        let errors: Vec<FieldError> = validate_objects_with(std::slice::from_ref(loaded), features)
            .into_iter()
            .map(|r| r.error)
            .collect();
        if !errors.is_empty() {
            invalid.insert(index);
        }
        // The workload is read again when linted, one at a time (a dump's 100,000 pods
        // are not copied all at once).
        let lintable = Workload::is_workload_kind(&loaded.object)
            || matches!(loaded.object, Object::CompactPod(_));
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
    Ok((checked, invalid))
}

/// The cluster lints' linter over the objects the API server would accept (none, with
/// a note, when the files hold no Nodes or do not make a snapshot).
fn cluster_linter(
    ctx: &Context,
    objects: &[Loaded],
    invalid: &HashSet<usize>,
    symbols: Symbols,
    notes: &mut Vec<String>,
) -> Result<Option<ClusterLinter>> {
    let has_nodes = objects.iter().any(|l| matches!(l.object, Object::Node(_)));
    let mut linter = None;
    if has_nodes {
        // Pods the API server would reject stay out of the snapshot.
        let usable: Vec<&Loaded> = objects
            .iter()
            .enumerate()
            .filter(|(i, l)| {
                !(matches!(
                    l.object,
                    Object::Pod(_) | Object::CompactPod(_) | Object::Node(_)
                ) && invalid.contains(i))
            })
            .map(|(_, l)| l)
            .collect();
        let built = build_with_symbols(
            usable.iter().copied(),
            ctx.gates().request_options(),
            symbols,
        );
        match built.map(|b| b.snapshot) {
            Ok(snapshot) => {
                linter = Some(
                    ClusterLinter::with_features(snapshot, ctx.scheduler_features())
                        .map_err(|e| Error::Simulation(e.to_string()))?,
                );
            }
            Err(e) => notes.push(format!(
                "cluster lints skipped: the files do not make a cluster snapshot: {e}"
            )),
        }
    } else {
        let codes: Vec<&str> = LintCode::ALL
            .iter()
            .filter(|c| c.needs_nodes())
            .map(|c| c.code())
            .collect();
        notes.push(format!(
            "cluster lints skipped: the files include no Nodes (add them to run {})",
            codes.join(", ")
        ));
    }
    Ok(linter)
}

/// What makes the objects together not a cluster (duplicate names, pods bound to nodes
/// the input lacks), by the index of the object named second; those objects join
/// `invalid`.
fn cluster_errors(
    objects: &[Loaded],
    invalid: &mut HashSet<usize>,
) -> HashMap<usize, Vec<FieldError>> {
    let mut out: HashMap<usize, Vec<FieldError>> = HashMap::new();
    let found = validate_cluster(objects);
    if found.is_empty() {
        return out;
    }
    // Where each object is, by what a cluster error names it with.
    let place_key = |s: &Source, kind: &str, name: Option<&str>| {
        format!("{}\0{}\0{:?}\0{kind}\0{name:?}", s.file, s.document, s.item)
    };
    let positions: HashMap<String, usize> = objects
        .iter()
        .enumerate()
        .rev()
        .map(|(i, l)| {
            let name = object_ref(&l.object).and_then(|o| o.name);
            (place_key(&l.source, l.object.kind(), name.as_deref()), i)
        })
        .collect();
    for r in found {
        if let Some(&index) = positions.get(&place_key(&r.source, r.kind, r.name.as_deref())) {
            invalid.insert(index);
            out.entry(index).or_default().push(r.error);
        }
    }
    out
}
