//! `topospread bench guard`: how long the guard takes to plan deletion costs on a
//! generated cluster, the shape of `tests/rebalance/generate_large.py` (nodes in three
//! zones; ReplicaSets of pods spread over zones, DoNotSchedule, and over nodes,
//! ScheduleAnyway; the first five crowded out of one zone). The cluster is built in
//! memory, so only the planning is timed, as `guard -f` times it.

use super::bench::peak_rss_bytes;
use crate::cli::{BenchFormat, BenchGuardArgs};
use anyhow::{Context as _, Result};
use k8s_openapi::api::core::v1::{Node, Pod};
use serde::Serialize;
use serde_json::json;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;
use topospread::snapshot::Snapshot;
use topospread::{Features, SchedulerConfig, convert};
use topospread_planning::guard::{self, GuardOptions, GuardPod};

const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";
const ZONES: [&str; 3] = ["za", "zb", "zc"];
/// ReplicaSets whose zone-`zc` pods were rescheduled into the other zones.
const SKEWED: usize = 5;

/// What `bench guard` reports.
#[derive(Debug, Serialize)]
struct Report {
    nodes: usize,
    pods: usize,
    replica_sets: usize,
    /// Patches the plan writes.
    patches: usize,
    /// ReplicaSets whose predicted scale-in still breaks a DoNotSchedule constraint.
    violated_after_scale_in: usize,
    /// The median run's planning time.
    planning_seconds: f64,
    /// Every run's planning time, in run order.
    runs_planning_seconds: Vec<f64>,
    peak_rss_bytes: Option<u64>,
}

pub(crate) fn run(args: &BenchGuardArgs) -> Result<ExitCode> {
    let (snapshot, pods) = cluster(args)?;
    let config = SchedulerConfig::default();
    let mut runs = Vec::new();
    let mut plan = None;
    for _ in 0..args.runs {
        let start = Instant::now();
        let p = guard::plan(
            &snapshot,
            &config,
            Features::default(),
            &pods,
            GuardOptions::default(),
        )?;
        runs.push(start.elapsed().as_secs_f64());
        plan = Some(p);
    }
    let plan = plan.context("no run")?;
    let mut sorted = runs.clone();
    sorted.sort_by(f64::total_cmp);
    let report = Report {
        nodes: snapshot.nodes().len(),
        pods: pods.len(),
        replica_sets: plan.replica_sets.len(),
        patches: plan.patches().count(),
        violated_after_scale_in: plan
            .replica_sets
            .iter()
            .filter(|r| r.violated_after_scale_in())
            .count(),
        planning_seconds: sorted[sorted.len() / 2],
        runs_planning_seconds: runs,
        peak_rss_bytes: peak_rss_bytes(),
    };
    let mut out = std::io::stdout().lock();
    match args.output {
        BenchFormat::Json => writeln!(out, "{}", serde_json::to_string(&report)?)?,
        BenchFormat::Text => {
            writeln!(
                out,
                "guard: {} nodes, {} ReplicaSets of {} pods ({} pods)",
                report.nodes, report.replica_sets, args.replicas, report.pods
            )?;
            writeln!(
                out,
                "planning              {:.3} s",
                report.planning_seconds
            )?;
            writeln!(out, "patches               {}", report.patches)?;
            writeln!(
                out,
                "violated after scale-in {} ReplicaSets",
                report.violated_after_scale_in
            )?;
            super::bench::write_peak_rss(&mut out, report.peak_rss_bytes)?;
            super::bench::write_runs(&mut out, &report.runs_planning_seconds)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The nodes and bound pods of `args`' shape, and what the guard reads of the pods.
fn cluster(args: &BenchGuardArgs) -> Result<(Snapshot, Vec<GuardPod>)> {
    let mut snapshot = Snapshot::new();
    let per_zone: Vec<Vec<String>> = ZONES
        .iter()
        .enumerate()
        .map(|(k, z)| {
            let n = args.nodes / 3 + usize::from(k < args.nodes % 3);
            (0..n).map(|i| format!("node-{z}-{i:04}")).collect()
        })
        .collect();
    for (z, names) in ZONES.iter().zip(&per_zone) {
        for name in names {
            let node: Node = serde_json::from_value(json!({
                "metadata": {"name": name, "labels": {ZONE: z, HOST: name}},
                "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}
            }))?;
            let node = convert::node(&node, snapshot.symbols_mut())?;
            snapshot.add_node(node)?;
        }
    }
    let mut pods = Vec::new();
    for w in 0..args.replica_sets {
        let app = format!("app-{w:03}");
        let constraint = |key: &str, when: &str| {
            json!({"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": when,
                   "labelSelector": {"matchLabels": {"app": app}}})
        };
        let constraints = [
            constraint(ZONE, "DoNotSchedule"),
            constraint(HOST, "ScheduleAnyway"),
        ];
        for r in 0..args.replicas {
            let mut z = r % 3;
            if w < SKEWED && z == 2 {
                z = r % 2;
            }
            let names = &per_zone[z];
            let Some(node) = names.get((w * 37 + r * 11) % names.len().max(1)) else {
                continue;
            };
            let pod: Pod = serde_json::from_value(json!({
                "metadata": {
                    "name": format!("{app}-{r:03}"), "namespace": "default",
                    "labels": {"app": app},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                         "name": app, "uid": format!("uid-{app}"),
                                         "controller": true}]
                },
                "spec": {
                    "nodeName": node, "topologySpreadConstraints": constraints,
                    "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                    "resources": {"requests": {"cpu": "100m"}}}]
                },
                "status": {"phase": "Running",
                           "conditions": [{"type": "Ready", "status": "True"}]}
            }))?;
            pods.push(GuardPod::of_pod(&pod));
            let pod = convert::pod(&pod, snapshot.symbols_mut())?;
            snapshot.add_pod(pod)?;
        }
    }
    Ok((snapshot, pods))
}
