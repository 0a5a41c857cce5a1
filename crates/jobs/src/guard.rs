//! `guard` from a dump: the pod-deletion-cost annotations that make every ReplicaSet
//! scale-in remove pods from the most crowded domains first, as a versioned document
//! (`apiVersion`/`kind`) with a JSON Schema generated from its types.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::report::guard::GuardPlan;
use crate::{config, input};
use schemars::JsonSchema;
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use topospread_k8s::load::Object;
use topospread_planning::guard::{self, GuardError, GuardOptions, GuardPod};

/// The report's `apiVersion`.
pub const API_VERSION: &str = crate::simulate::API_VERSION;
/// The report's `kind`.
pub const KIND: &str = "GuardReport";

/// What to plan costs for.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct GuardRequest {
    /// Manifest files or folders (the dump).
    pub files: Vec<PathBuf>,
    /// A KubeSchedulerConfiguration file.
    pub config: Option<PathBuf>,
    /// Whether costs a user set by hand are replaced too (`times` is the release's, with
    /// the wall clock as the controller's clock).
    pub options: GuardOptions,
}

impl GuardRequest {
    /// A request for the dump in `files`, with the default configuration and options.
    pub fn new(files: Vec<PathBuf>) -> Self {
        Self {
            files,
            ..Self::default()
        }
    }
}

/// The contract of `topospread guard -o json`: per ReplicaSet, the costs to write and
/// the skew predicted after a scale-in, and the pods the guard skipped.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct GuardReport {
    /// [`API_VERSION`].
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// [`KIND`].
    pub kind: String,
    /// The plan.
    #[serde(flatten)]
    pub plan: GuardPlan,
    /// How long planning took (loading excluded); not part of the document, so the
    /// document is the same on every run.
    #[serde(skip)]
    pub planned_in: Duration,
    /// Whether a predicted scale-in leaves a DoNotSchedule constraint above maxSkew
    /// (the exit code's reading; not part of the document).
    #[serde(skip)]
    violated_after_scale_in: bool,
}

impl GuardReport {
    /// Whether a predicted scale-in leaves a DoNotSchedule constraint above maxSkew.
    pub fn violated_after_scale_in(&self) -> bool {
        self.violated_after_scale_in
    }
}

/// Loads the dump, then plans the costs of every ReplicaSet's existing pods (pods
/// workload expansion would create are not guarded: they do not exist).
pub fn plan(ctx: &Context, request: &GuardRequest) -> Result<GuardReport> {
    let input = input::load_admitted(ctx, &request.files, None, 0, input::PodForm::Whole, None)?;
    let setup = config::load(ctx, request.config.as_deref(), &input)?;
    let world = input::build(ctx, &input, 0, &[])?;
    let pods: Vec<GuardPod> = input
        .objects
        .iter()
        .filter_map(|l| match &l.object {
            Object::Pod(p) => Some(GuardPod::of_pod(p)),
            _ => None,
        })
        .collect();
    let start = Instant::now();
    let mut options = request.options;
    options.times = topospread_k8s::workloads::WorkloadFeatures::from_gates(ctx.gates())
        .at(input::now_ns())
        .scale_down_times;
    let plan = guard::plan(
        &world.snapshot,
        &setup.config,
        setup.features,
        &pods,
        options,
    )
    .map_err(|e| match e {
        GuardError::Config(_) => Error::Refused(e.to_string()),
        other => Error::Simulation(other.to_string()),
    })?;
    let planned_in = start.elapsed();
    Ok(GuardReport {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        plan: GuardPlan::from(&plan),
        planned_in,
        violated_after_scale_in: plan
            .replica_sets
            .iter()
            .any(guard::ReplicaSetGuard::violated_after_scale_in),
    })
}

/// The JSON Schema of [`GuardReport`] as it is written, as checked in under `schema/`.
pub fn schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    serde_json::to_value(generator.into_root_schema_for::<GuardReport>()).unwrap_or_default()
}
