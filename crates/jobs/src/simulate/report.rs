//! The simulation report: a versioned document (`apiVersion`/`kind`, as Kubernetes tools
//! write theirs), the contract of `topospread simulate -o json`, with a JSON Schema
//! generated from these types (`schema/simulation-report.json`).

use crate::report::rollout::{RemovedPod, RolloutReport};
use crate::report::summary::CountSummary;
use crate::whatif::WhatIfReport;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;

/// The report's `apiVersion`.
pub const API_VERSION: &str = "topospread.dev/v1alpha1";
/// The report's `kind`.
pub const KIND: &str = "SimulationReport";

/// One pod's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct PodResult {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub pod: String,
    /// The node it was bound to; absent while Pending.
    pub node: Option<String>,
    /// That node's zone (`topology.kubernetes.io/zone`, else the docs' `zone`).
    pub zone: Option<String>,
    /// Why it stays Pending, as kube-scheduler's condition message says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A pod preemption evicted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct PreemptedReport {
    /// The victim's namespace.
    pub namespace: String,
    /// The victim's name.
    pub pod: String,
    /// The node it ran on.
    pub node: String,
    /// `namespace/name` of the preemptor.
    pub by: String,
}

/// One constraint of a workload, before and after.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct ConstraintReport {
    /// The constraint's topologyKey.
    pub topology_key: String,
    /// Its maxSkew.
    pub max_skew: i32,
    /// minDomains as Filter applies it (1 for ScheduleAnyway).
    pub min_domains: i32,
    /// `DoNotSchedule` or `ScheduleAnyway`.
    pub when_unsatisfiable: String,
    /// The selector with matchLabelKeys merged, as `key=value,...`.
    pub selector: String,
    /// Matching pods per eligible domain before the simulation.
    pub before: BTreeMap<String, u32>,
    /// The same after it.
    pub after: BTreeMap<String, u32>,
    /// The skew before (against minDomains' global minimum).
    pub skew_before: u32,
    /// The skew after.
    pub skew_after: u32,
    /// Domains, min/max/skew, histogram and extremes of `before`.
    pub summary_before: CountSummary,
    /// The same of `after`.
    pub summary_after: CountSummary,
}

/// One workload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct WorkloadReport {
    /// `Deployment`, `StatefulSet`, ...
    pub kind: String,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its pods at the end.
    pub pods: usize,
    /// Of those, bound.
    pub scheduled: usize,
    /// Of those, Pending.
    pub pending: usize,
    /// The constraints are the cluster's default constraints (the pods have none).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub constraints_from_defaults: bool,
    /// When the workload's pods do not all count alike, how: a DaemonSet's pods each
    /// count only their own node (its constraints are not reported), or pods whose
    /// constraints select differently (per-pod Services), the first pod's view shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counted: Option<String>,
    /// Each constraint, in the pod's order.
    pub constraints: Vec<ConstraintReport>,
    /// Its controller's `FailedCreate` events: the pods admission refused (a
    /// ResourceQuota exceeded, ...), in the controller's words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_create: Vec<String>,
    /// Pods its controller has not created: an OrderedReady StatefulSet's ordinals above
    /// one that is not Running and Ready. They are not in the cluster (nor pending).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_created: Vec<String>,
    /// Why they were not created (`web-2..web-4 not created: StatefulSet web
    /// (OrderedReady) waits for web-1 to be Running and Ready`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_created_reason: Option<String>,
    /// Why pods beyond its replicas were not removed: an OrderedReady StatefulSet
    /// scales down only while every ordinal below is Running and Ready (`web-3..web-4
    /// not removed: StatefulSet web (OrderedReady) scales down once web-1 is Running
    /// and Ready`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_removed_reason: Option<String>,
    /// A StatefulSet's rolling update, carried out as its controller would (`rolling
    /// update to revision web-6b: replaced web-2, web-1; web-0 not replaced:
    /// StatefulSet web waits for web-1 to be Running and Ready`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<String>,
}

/// A pod the API server's admission would refuse: never created.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct RefusedPod {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub pod: String,
    /// The file its manifest (or workload) came from.
    pub file: String,
    /// The API server's refusal.
    pub message: String,
}

/// The whole run, as `topospread simulate -o json` prints it.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub struct SimulationReport {
    /// [`API_VERSION`].
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// [`KIND`].
    pub kind: String,
    /// The seed that fixed generated names and tie-breaking.
    pub seed: u64,
    /// Pods bound.
    pub scheduled: usize,
    /// Pods left Pending.
    pub pending: usize,
    /// Each pod scheduled in the run (pending pods in queue order, then replacements).
    pub pods: Vec<PodResult>,
    /// Pods preemption evicted.
    pub preempted: Vec<PreemptedReport>,
    /// Each workload's pods and spread.
    pub workloads: Vec<WorkloadReport>,
    /// Things to tell the user, one line per kind of note.
    pub notes: Vec<String>,
    /// Pods admission refused.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<RefusedPod>,
    /// Objects the API server refuses by themselves, one line each (file, object, field,
    /// the API server's words): not simulated, the rest is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused_objects: Vec<String>,
    /// Existing pods their controller removed (scale-downs): before scheduling, or for
    /// an OrderedReady StatefulSet one at a time as its other pods become Ready.
    pub removed: Vec<RemovedPod>,
    /// Deployments rolled out to a new template, step by step.
    pub rollouts: Vec<RolloutReport>,
    /// `--drain` / `--lose`: the nodes removed and what became of their pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drained: Option<WhatIfReport>,
}

/// The JSON Schema of [`SimulationReport`] as it is written (fields left out when empty
/// are not required), as checked in under `schema/`.
pub fn schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    serde_json::to_value(generator.into_root_schema_for::<SimulationReport>()).unwrap_or_default()
}
