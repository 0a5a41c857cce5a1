//! The validation report: a versioned document, the contract of
//! `topospread validate -o json`, with its JSON Schema (`schema/validation-report.json`).

use schemars::JsonSchema;
use serde::Serialize;
use topospread_k8s::load::escape_control;
use topospread_k8s::validation::Severity;

/// The report's `apiVersion`.
pub const API_VERSION: &str = "topospread.dev/v1alpha1";
/// The report's `kind`.
pub const KIND: &str = "ValidationReport";

/// Which object a diagnostic is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct ObjectRef {
    /// Its kind (`Deployment`, `KubeSchedulerConfiguration`, ...).
    pub kind: &'static str,
    /// Its namespace, when it names one.
    pub namespace: Option<String>,
    /// Its name, when it has one.
    pub name: Option<String>,
}

impl ObjectRef {
    /// `deployment/web`, `pod/cache (namespace prod)`, as the engine names objects
    /// (control characters escaped).
    pub fn display(&self) -> String {
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

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct Diagnostic {
    /// The file the object came from (empty for the configuration the run would use).
    pub file: String,
    /// The YAML document in that file, 1-based (0 when not from a file).
    pub document: usize,
    /// The item inside a `kind: List`, 0-based.
    pub item: Option<usize>,
    /// The object.
    pub object: ObjectRef,
    /// The field path, as the API server names it.
    pub field: String,
    /// `error` or `warning`.
    #[schemars(with = "SeverityName")]
    pub severity: Severity,
    /// `Invalid`, `Required`, `NotSupported`, `Duplicate`, `Forbidden`, ..., `UnknownField`
    /// (a field the object's type lacks) or `Lint`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `TS001`... for lints.
    pub code: Option<&'static str>,
    /// The bad value as Go prints it.
    pub value: Option<String>,
    /// What is wrong, in the API server's (or the lint's) words.
    pub detail: String,
    /// Why a lint matters (lints only).
    pub why: Option<&'static str>,
    /// The text line's `field: ...` part.
    pub message: String,
}

/// How serious a finding is, as written.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[expect(
    dead_code,
    reason = "only describes Severity's serialized form to the schema"
)]
enum SeverityName {
    Warning,
    Error,
}

/// The counts at the end of the text output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct Summary {
    /// Inputs read (files, stdin, the live cluster).
    pub files: usize,
    /// Objects checked.
    pub objects: usize,
    /// Findings that fail the run.
    pub errors: usize,
    /// Findings that do not.
    pub warnings: usize,
    /// Inputs that could not be read or parsed (`unreadable`).
    pub unreadable: usize,
}

/// The whole run, as `topospread validate -o json` prints it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct ValidationReport {
    /// [`API_VERSION`].
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// [`KIND`].
    pub kind: String,
    /// Every finding, in input order.
    pub diagnostics: Vec<Diagnostic>,
    /// The counts.
    pub summary: Summary,
    /// Lints that need Nodes, when the input has none.
    pub skipped_lints: Vec<&'static str>,
    /// Things to tell the user, one line per kind of note.
    pub notes: Vec<String>,
    /// Inputs that could not be read or parsed, one line each naming the file (the
    /// others were still checked).
    pub unreadable: Vec<String>,
}

impl ValidationReport {
    /// Whether the run fails (exit 1): any finding of severity error.
    pub fn failed(&self) -> bool {
        self.summary.errors > 0
    }

    /// Whether an input could not be read (exit 2, after the report).
    pub fn unreadable_input(&self) -> bool {
        !self.unreadable.is_empty()
    }
}

/// The JSON Schema of [`ValidationReport`] as it is written, as checked in under `schema/`.
pub fn schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    serde_json::to_value(generator.into_root_schema_for::<ValidationReport>()).unwrap_or_default()
}
