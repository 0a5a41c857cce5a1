//! `test`: run scenario files (the conformance format of `tests/conformance/FORMAT.md`)
//! and report each case's outcome and every expectation that failed.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::input::{InputPath, read_path};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use topospread_scenario::{self as scenario, CaseKind, Outcome};

/// The report's `apiVersion`.
pub const API_VERSION: &str = "topospread.dev/v1alpha1";
/// The report's `kind`.
pub const KIND: &str = "TestReport";

/// What to run.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct TestRequest {
    /// Scenario files, or folders searched for `*.yaml` / `*.yml`.
    pub paths: Vec<PathBuf>,
}

impl TestRequest {
    /// A request for `paths`.
    pub fn new(paths: Vec<PathBuf>) -> Self {
        Self { paths }
    }
}

/// One expectation that did not hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct Failure {
    /// Which expectation, e.g. `filter[node-a]` or `errors`.
    pub expectation: String,
    /// What the case wanted.
    pub want: String,
    /// What topospread produced.
    pub got: String,
}

/// One case's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct CaseResult {
    /// The file the case is in.
    pub file: String,
    /// The case's name.
    pub name: String,
    /// `plugin`, `scheduler`, `validation`, `rebalance` or `controller`.
    pub kind: &'static str,
    /// Whether every expectation held.
    pub passed: bool,
    /// The expectations that did not.
    pub failures: Vec<Failure>,
}

/// The whole run, as `topospread test -o json` prints it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct TestReport {
    /// [`API_VERSION`].
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// [`KIND`].
    pub kind: String,
    /// Cases whose expectations all held.
    pub passed: usize,
    /// Cases with an expectation that did not.
    pub failed: usize,
    /// Every case, file by file in path order.
    pub cases: Vec<CaseResult>,
}

impl TestReport {
    /// Whether the run fails (exit 1): any case failed.
    pub fn failed(&self) -> bool {
        self.failed > 0
    }
}

/// The JSON Schema of [`TestReport`] as it is written, as checked in under `schema/`.
pub fn schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    serde_json::to_value(generator.into_root_schema_for::<TestReport>()).unwrap_or_default()
}

/// Reads and parses every file before running any case (a broken file is an `Err`, never a
/// partial verdict), then runs them all.
pub fn run(ctx: &Context, request: &TestRequest) -> Result<TestReport> {
    let mut files = Vec::new();
    let mut visited = HashSet::new();
    for p in &request.paths {
        collect(p, &mut visited, &mut files)?;
    }
    let base = ctx.scheduler_features();
    let mut cases = Vec::new();
    for f in &files {
        let text = read_path(&InputPath::File(f.clone()), ctx.input().max_input_bytes)?;
        let file = f.display().to_string();
        let reports = scenario::run_file_with(&text, &file, &base)
            .map_err(|e| Error::Refused(e.to_string()))?;
        cases.extend(reports.into_iter().map(|r| {
            let failures = match r.outcome {
                Outcome::Passed => Vec::new(),
                Outcome::Failed(ms) => ms
                    .into_iter()
                    .map(|m| Failure {
                        expectation: m.expectation,
                        want: m.want,
                        got: m.got,
                    })
                    .collect(),
            };
            CaseResult {
                file: file.clone(),
                name: r.name,
                kind: kind_name(r.kind),
                passed: failures.is_empty(),
                failures,
            }
        }));
    }
    let passed = cases.iter().filter(|c| c.passed).count();
    Ok(TestReport {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        passed,
        failed: cases.len() - passed,
        cases,
    })
}

/// The case kind as FORMAT.md names it.
fn kind_name(kind: CaseKind) -> &'static str {
    match kind {
        CaseKind::Plugin => "plugin",
        CaseKind::Scheduler => "scheduler",
        CaseKind::Validation => "validation",
        CaseKind::Rebalance => "rebalance",
        CaseKind::Controller => "controller",
    }
}

/// Collects `*.yaml` / `*.yml` files under `path`, sorted for a stable order. A folder
/// reached twice (a symlink to a folder already walked, or a loop) is walked once.
fn collect(path: &Path, visited: &mut HashSet<PathBuf>, out: &mut Vec<PathBuf>) -> Result<()> {
    let io = |what: &str| {
        let context = format!("{}: {what}", path.display());
        move |source| Error::Io { context, source }
    };
    let meta = std::fs::metadata(path).map_err(io("cannot read"))?;
    if !meta.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let real = std::fs::canonicalize(path).map_err(io("cannot read"))?;
    if !visited.insert(real) {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(io("cannot list"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for e in entries {
        if e.is_dir() || e.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            collect(&e, visited, out)?;
        }
    }
    Ok(())
}
