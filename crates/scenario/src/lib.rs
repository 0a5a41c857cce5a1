//! Scenario cases (`tests/conformance/**.yaml`, FORMAT.md): a cluster, a pod or pods,
//! and expectations. Pure: the caller reads files; [`run_file`] parses and runs one.

mod controller;
pub mod dump;
pub mod perf;
mod plugin;
mod rebalance;
mod scheduler;
mod validation_case;

pub use validation_case::{
    ExpectedError, ValidationCase, ValidationCaseFile, ValidationExpectation,
};

use serde_json::Value;
use topospread::Features;
use topospread_k8s::load::LoadError;

/// One expectation of a case that did not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Which expectation, e.g. `filter[node-a]` or `errors`.
    pub expectation: String,
    /// What the case wanted, rendered for a person.
    pub want: String,
    /// What topospread produced, rendered the same way.
    pub got: String,
}

impl Mismatch {
    /// A mismatch of `expectation`, rendering both sides with `Display`.
    pub fn new(
        expectation: impl Into<String>,
        want: impl std::fmt::Display,
        got: impl std::fmt::Display,
    ) -> Self {
        Self {
            expectation: expectation.into(),
            want: want.to_string(),
            got: got.to_string(),
        }
    }
}

/// The three kinds of case, told apart by their keys.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CaseKind {
    /// `pod:` and `nodes:`: the PodTopologySpread plugin alone.
    Plugin,
    /// `schedule:`: the whole default profile.
    Scheduler,
    /// `expect.valid`: API validation.
    Validation,
    /// `rebalance:`: a plan of moves (or a scale-down) over bound pods.
    Rebalance,
    /// `cluster:`: a dump whose workloads are expanded as their controllers would.
    Controller,
}

/// How one case ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every expectation held.
    Passed,
    /// Some expectations did not hold.
    Failed(Vec<Mismatch>),
}

/// One case's result.
#[derive(Clone, Debug)]
pub struct CaseReport {
    /// The case's name.
    pub name: String,
    /// Its kind.
    pub kind: CaseKind,
    /// How it ended.
    pub outcome: Outcome,
}

/// A case file that cannot be run: the file, the case and the field are named.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ScenarioError {
    /// The file is not a case file or not YAML.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A case is malformed.
    #[error("{file}: case {case:?}: {field}: {message}")]
    Case {
        /// The file.
        file: String,
        /// The case name (or its index).
        case: String,
        /// The field.
        field: String,
        /// What is wrong.
        message: String,
    },
}

impl ScenarioError {
    pub(crate) fn case(
        file: &str,
        case: &str,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::Case {
            file: file.to_string(),
            case: case.to_string(),
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Which kind a case is, from its keys (FORMAT.md).
fn kind_of(case: &Value) -> Option<CaseKind> {
    if case.get("rebalance").is_some() {
        Some(CaseKind::Rebalance)
    } else if case.get("cluster").is_some() {
        Some(CaseKind::Controller)
    } else if case.get("schedule").is_some() {
        Some(CaseKind::Scheduler)
    } else if case.pointer("/expect/valid").is_some() {
        Some(CaseKind::Validation)
    } else if case.get("pod").is_some() && case.get("nodes").is_some() {
        Some(CaseKind::Plugin)
    } else {
        None
    }
}

/// Parses a case file and runs every case in it, under current Kubernetes' gates.
pub fn run_file(text: &str, file: &str) -> Result<Vec<CaseReport>, ScenarioError> {
    run_file_with(text, file, &Features::default())
}

/// Parses a case file and runs every case in it; `base` (a `--kubernetes-version` and
/// `--feature-gates`) stands for the gates a case's own `features:` leaves out.
pub fn run_file_with(
    text: &str,
    file: &str,
    base: &Features,
) -> Result<Vec<CaseReport>, ScenarioError> {
    let docs = topospread_k8s::load::parse_yaml_documents(text, file)?;
    let [doc] = docs.as_slice() else {
        return Err(ScenarioError::case(
            file,
            "-",
            "(file)",
            "a case file is one YAML document with a top-level `cases:` list",
        ));
    };
    if let Some(map) = doc.as_object()
        && let Some(key) = map.keys().find(|k| k.as_str() != "cases")
    {
        return Err(ScenarioError::case(
            file,
            "-",
            key.clone(),
            "unknown field: a case file has one top-level key, `cases`",
        ));
    }
    let Some(cases) = doc.get("cases").and_then(Value::as_array) else {
        return Err(ScenarioError::case(
            file,
            "-",
            "cases",
            "Required value: a case file has a top-level `cases:` list",
        ));
    };
    let mut reports = Vec::with_capacity(cases.len());
    let mut names = std::collections::HashSet::new();
    for (i, case) in cases.iter().enumerate() {
        let name = case
            .get("name")
            .and_then(Value::as_str)
            .map_or_else(|| format!("#{i}"), str::to_string);
        if !names.insert(name.clone()) {
            return Err(ScenarioError::case(
                file,
                &name,
                format!("cases[{i}].name"),
                format!("Duplicate value: {name:?}: case names are unique within a file"),
            ));
        }
        let Some(kind) = kind_of(case) else {
            return Err(ScenarioError::case(
                file,
                &name,
                "(case)",
                "cannot tell the kind of case: a plugin case has `pod` and `nodes`, a scheduler case `schedule`, a validation case `expect.valid`, a rebalance case `rebalance`, a controller case `cluster`",
            ));
        };
        let based;
        let case = if *base == Features::default()
            || kind == CaseKind::Validation
            || names_its_release(case)
        {
            case
        } else {
            based = with_base_features(case, base);
            &based
        };
        let outcome = match kind {
            CaseKind::Plugin => plugin::run(case, file, &name)?,
            CaseKind::Scheduler => scheduler::run(case, file, &name)?,
            CaseKind::Rebalance => rebalance::run(case, file, &name)?,
            CaseKind::Controller => controller::run(case, file, &name)?,
            CaseKind::Validation => {
                let case: crate::validation_case::ValidationCase =
                    topospread_k8s::load::typed(case, file, &format!("case {name:?}"))?;
                let mismatches = case.run();
                if mismatches.is_empty() {
                    Outcome::Passed
                } else {
                    Outcome::Failed(mismatches)
                }
            }
        };
        reports.push(CaseReport {
            name,
            kind,
            outcome,
        });
    }
    Ok(reports)
}

/// Whether the case pins its release (`features.kubernetesVersion`): it then runs as
/// written whatever `--kubernetes-version` a run gives, since its expectations are that
/// release's (a base release's gates under it would mix two releases).
fn names_its_release(case: &Value) -> bool {
    case.pointer("/features/kubernetesVersion").is_some()
}

/// `case` with `base` under its own `features:` (the case's keys win).
fn with_base_features(case: &Value, base: &Features) -> Value {
    let mut case = case.clone();
    let mut features = match serde_json::to_value(base) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    if let Some(Value::Object(own)) = case.get("features") {
        for (k, v) in own {
            features.insert(k.clone(), v.clone());
        }
    }
    if let Value::Object(map) = &mut case {
        map.insert("features".into(), Value::Object(features));
    }
    case
}

/// Builds a case's cluster: its `nodes`, the workload `objects` default spreading reads,
/// and its existing `pods` (bound by `spec.nodeName`). Errors name file, case and field.
pub(crate) fn build_cluster(
    nodes: &[Value],
    objects: &[Value],
    pods: &[Value],
    file: &str,
    name: &str,
) -> Result<topospread::snapshot::Snapshot, ScenarioError> {
    use k8s_openapi::api::core::v1 as core;
    use topospread::convert;
    use topospread_k8s::load::{self, Manifests, Source};
    let what = format!("case {name:?}");
    let bad = |field: String, e: &dyn std::fmt::Display| {
        ScenarioError::case(file, name, field, e.to_string())
    };
    let mut snapshot = topospread::snapshot::Snapshot::new();
    for (i, n) in nodes.iter().enumerate() {
        let n: core::Node = load::typed(n, file, &format!("{what} nodes[{i}]"))?;
        let node = convert::node(&n, snapshot.symbols_mut())
            .map_err(|e| bad(format!("nodes[{i}]"), &e))?;
        snapshot
            .add_node(node)
            .map_err(|e| bad(format!("nodes[{i}]"), &e))?;
    }
    let mut manifests = Manifests::default();
    for (i, o) in objects.iter().enumerate() {
        let source = Source {
            file: file.to_string(),
            document: 1,
            item: Some(i),
        };
        load::parse_object(o, source, &mut manifests)?;
    }
    for l in &manifests.objects {
        let mut w = std::mem::take(snapshot.workloads_mut());
        topospread_k8s::build::add_workload(&l.object, &mut w, snapshot.symbols_mut());
        *snapshot.workloads_mut() = w;
    }
    if let Some(r) = topospread_k8s::build::add_storage(&mut snapshot, &manifests.objects)
        .into_iter()
        .next()
    {
        return Err(bad("objects".into(), &r));
    }
    for (i, p) in pods.iter().enumerate() {
        let p: core::Pod = load::typed(p, file, &format!("{what} pods[{i}]"))?;
        // Existing pods pass Priority admission too; a refused one is a broken case.
        let added =
            topospread_k8s::build::admit_and_add(&mut snapshot, &p, file).map_err(|e| match e {
                topospread_k8s::build::BuildError::Convert { source, .. } => {
                    bad(format!("pods[{i}]"), &source)
                }
                topospread_k8s::build::BuildError::Snapshot { source, .. } => {
                    bad(format!("pods[{i}]"), &source)
                }
                other => bad(format!("pods[{i}]"), &other),
            })?;
        if let Some(r) = added {
            return Err(bad(format!("pods[{i}]"), &r.error));
        }
    }
    Ok(snapshot)
}
