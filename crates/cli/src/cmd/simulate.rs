//! `topospread simulate`: schedule every pending pod in PrioritySort order, binding as
//! it goes, and report placements, spread per workload, and why pods stay Pending.

use super::runtime::{Placement, Runtime};
use super::{config, input, show};
use crate::cli::{OutputFormat, SimulateArgs};
use anyhow::Result;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use topospread::rebalance::ConstraintSpread;
use topospread::simulation::SimEvent;
use topospread::snapshot::{NodeId, PodId, Snapshot};
use topospread::spread::{PodSpread, SpreadCounter};
use topospread_k8s::load::Object;
use topospread_k8s::workloads::{RemovedPod, RolloutReport};
use topospread_report::{CountSummary, every_domain, render_cluster, summarize};

/// One pod's result.
#[derive(Serialize)]
struct PodResult {
    namespace: String,
    pod: String,
    node: Option<String>,
    zone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// A pod preemption evicted.
#[derive(Serialize)]
pub(crate) struct PreemptedReport {
    namespace: String,
    pod: String,
    node: String,
    /// `namespace/name` of the preemptor.
    by: String,
}

/// One constraint of a workload, before and after.
#[derive(Serialize)]
struct ConstraintReport {
    topology_key: String,
    max_skew: i32,
    /// minDomains as Filter applies it (1 for ScheduleAnyway).
    min_domains: i32,
    when_unsatisfiable: String,
    selector: String,
    before: BTreeMap<String, u32>,
    after: BTreeMap<String, u32>,
    skew_before: u32,
    skew_after: u32,
    /// Domains, min/max/skew, histogram and extremes of `before`.
    summary_before: CountSummary,
    /// The same of `after`.
    summary_after: CountSummary,
}

/// One workload.
#[derive(Serialize)]
struct WorkloadReport {
    kind: String,
    namespace: String,
    name: String,
    pods: usize,
    scheduled: usize,
    pending: usize,
    /// The constraints are the cluster's default constraints (the pods have none).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    constraints_from_defaults: bool,
    constraints: Vec<ConstraintReport>,
}

/// A pod the API server's Priority admission would refuse: never created.
#[derive(Serialize)]
struct RefusedPod {
    namespace: String,
    pod: String,
    file: String,
    message: String,
}

/// The whole run, as `-o json` prints it.
#[derive(Serialize)]
struct Report {
    seed: u64,
    scheduled: usize,
    pending: usize,
    pods: Vec<PodResult>,
    preempted: Vec<PreemptedReport>,
    workloads: Vec<WorkloadReport>,
    notes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    refused: Vec<RefusedPod>,
    /// Objects the API server refuses by themselves, one line each (file, object, field,
    /// the API server's words): not simulated, the rest is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    refused_objects: Vec<String>,
    /// Existing pods their controller removed before scheduling (scale-downs).
    removed: Vec<RemovedPod>,
    /// Deployments rolled out to a new template, step by step.
    rollouts: Vec<RolloutReport>,
    /// `--drain` / `--lose`: the nodes removed and what became of their pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    drained: Option<super::whatif::WhatIfReport>,
}

/// The zone a node is in, by the well-known label or the docs' `zone`.
pub(crate) fn zone_of(snapshot: &Snapshot, node: NodeId) -> Option<String> {
    let symbols = snapshot.symbols();
    let labels = &snapshot.node(node).node.labels;
    ["topology.kubernetes.io/zone", "zone"]
        .iter()
        .find_map(|k| symbols.get(k).and_then(|s| labels.get(s)))
        .map(|v| symbols.resolve(v).to_string())
}

/// Each pod's placement, and the preemptions carried out.
pub(crate) type Scheduled = (Vec<(PodId, Placement)>, Vec<PreemptedReport>);

/// Schedules the world's pending pods through the engine's queue until it settles;
/// returns each pod's placement (the pending pods in queue order, then the replacements
/// of preempted pods) and the preemptions carried out.
pub(crate) fn schedule_all(runtime: &mut Runtime, world: &mut input::World) -> Result<Scheduled> {
    let refused = runtime.enqueue(&world.snapshot, &world.queue);
    runtime.run(&mut world.snapshot, world.queue.len())?;
    let snapshot = &world.snapshot;
    let symbols = snapshot.symbols();
    let mut order = world.queue.clone();
    let mut preempted = Vec::new();
    for e in runtime.events() {
        match e {
            SimEvent::Replaced { replacement, .. } => order.push(*replacement),
            SimEvent::Preempted { victim, node, by } => preempted.push(PreemptedReport {
                namespace: symbols.resolve(victim.namespace).to_string(),
                pod: victim.name.to_string(),
                node: snapshot.node(*node).node.name.to_string(),
                by: snapshot.pod(*by).map_or_else(String::new, |p| {
                    format!("{}/{}", symbols.resolve(p.namespace), p.name)
                }),
            }),
            SimEvent::Bound { .. } => {}
        }
    }
    let results = order
        .into_iter()
        .filter(|id| snapshot.pod(*id).is_some())
        .map(|id| {
            let placement = match refused.iter().find(|(r, _)| *r == id) {
                Some((_, message)) => Placement::Unschedulable(message.clone()),
                None => runtime.placement(snapshot, id),
            };
            (id, placement)
        })
        .collect();
    Ok((results, preempted))
}

/// Carries out every pending rollout after the first scheduling run, in input order:
/// the new pods join `results` with their placement, and each Deployment's summary
/// lists its pods as they are at the end.
fn roll_out(
    runtime: &mut Runtime,
    world: &mut input::World,
    results: &mut Vec<(PodId, Placement)>,
) -> Result<Vec<RolloutReport>> {
    let mut reports = Vec::new();
    // Deleted pods' ids are reused by new pods: results are kept by name.
    let mut named: Vec<(PodId, String)> = results
        .iter()
        .filter_map(|(id, _)| Some((*id, world.snapshot.pod(*id)?.name.to_string())))
        .collect();
    for r in &world.expansion.rollouts {
        let report = runtime.rollout(&mut world.snapshot, r)?;
        let snapshot = &world.snapshot;
        results.retain(|(id, _)| {
            snapshot
                .pod(*id)
                .is_some_and(|p| named.iter().any(|(n, name)| n == id && *name == *p.name))
        });
        for name in &report.created {
            if let Some(id) = snapshot.pod_id(&r.namespace, name) {
                results.push((id, runtime.placement(snapshot, id)));
                named.push((id, name.clone()));
            }
        }
        if let Some(w) = world.expansion.workloads.iter_mut().find(|w| {
            w.kind == "Deployment" && w.namespace == r.namespace && w.name == r.deployment
        }) {
            w.pods.retain(|p| !report.deleted.contains(p));
            w.pods.extend(report.created.iter().cloned());
        }
        reports.push(report);
    }
    Ok(reports)
}

/// How long each phase of a simulation took (for `bench load`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Timings {
    /// Reading and parsing the files, expanding workloads, building the snapshot.
    pub(crate) load: Duration,
    /// Scheduling every pending pod.
    pub(crate) schedule: Duration,
    /// Building the report and rendering it.
    pub(crate) report: Duration,
}

/// What a simulation produced.
pub(crate) struct Simulated {
    /// The rendered output.
    pub(crate) text: String,
    /// Notes for stderr (with the non-table formats).
    pub(crate) notes: Vec<String>,
    /// The exit code.
    pub(crate) code: ExitCode,
    /// Pods scheduled and pending.
    pub(crate) scheduled: usize,
    /// Pods left pending.
    pub(crate) pending: usize,
}

pub(crate) fn run(args: &SimulateArgs) -> Result<ExitCode> {
    let out = execute(args, &mut Timings::default())?;
    std::io::stdout().lock().write_all(out.text.as_bytes())?;
    if args.output != OutputFormat::Table {
        for n in &out.notes {
            eprintln!("note: {n}");
        }
    }
    Ok(out.code)
}

/// The whole simulation, its output rendered, with each phase timed.
pub(crate) fn execute(args: &SimulateArgs, timings: &mut Timings) -> Result<Simulated> {
    let start = Instant::now();
    let (input, setup, mut world) = super::term::with_spinner("loading", || -> Result<_> {
        // `-o yaml` writes every pod back whole; the rest needs only the compact form.
        let form = if args.output == OutputFormat::Yaml {
            input::PodForm::Whole
        } else {
            input::PodForm::Compact
        };
        let input = input::load_admitted_as(&args.files, &args.live, args.seed, form)?;
        let setup = config::load(args.config.as_deref(), &input)?;
        let world = input::build(&input, args.seed, &args.scale)?;
        Ok((input, setup, world))
    })?;
    let mut runtime = Runtime::new(&setup, &mut world.snapshot, args.seed)?;
    let counter = SpreadCounter::new(&setup.config, setup.features, &mut world.snapshot)
        .map_err(|e| anyhow::anyhow!("{}: {e}", setup.origin))?;
    let before = match world.before_removal.take() {
        Some(snapshot) => Before::Snapshot(Box::new(snapshot)),
        None if !args.drain.is_empty()
            || !args.lose.is_empty()
            || !world.expansion.rollouts.is_empty()
            || preemption_possible(&world) =>
        {
            Before::Snapshot(Box::new(world.snapshot.clone()))
        }
        None => Before::Spreads(before_spreads(&counter, &world)),
    };
    let drained = super::whatif::drain(&mut runtime, &mut world.snapshot, &args.drain, &args.lose)?;
    timings.load = start.elapsed();
    let start = Instant::now();
    let (mut results, preempted) = schedule_all(&mut runtime, &mut world)?;
    world.rollouts = roll_out(&mut runtime, &mut world, &mut results)?;
    timings.schedule = start.elapsed();
    let start = Instant::now();
    let snapshot = &world.snapshot;
    let symbols = snapshot.symbols();

    let pods: Vec<PodResult> = results
        .iter()
        .filter_map(|(id, placement)| {
            let pod = snapshot.pod(*id)?;
            let (node, zone, message) = match placement {
                Placement::Scheduled(n) => (
                    Some(snapshot.node(*n).node.name.to_string()),
                    zone_of(snapshot, *n),
                    None,
                ),
                Placement::Unschedulable(m) => (None, None, Some(m.clone())),
            };
            Some(PodResult {
                namespace: symbols.resolve(pod.namespace).to_string(),
                pod: pod.name.to_string(),
                node,
                zone,
                message,
            })
        })
        .collect();
    let scheduled = pods.iter().filter(|p| p.node.is_some()).count();
    let pending = pods.len() - scheduled;

    let replaced: BTreeMap<&str, PodId> = runtime
        .events()
        .iter()
        .filter_map(|e| match e {
            SimEvent::Replaced {
                victim,
                replacement,
            } => Some((victim.as_str(), *replacement)),
            _ => None,
        })
        .collect();
    let mut workloads = Vec::new();
    for (index, w) in world.expansion.workloads.iter().enumerate() {
        let mut constraints = Vec::new();
        let mut from_defaults = false;
        let first = w.pods.iter().find_map(|p| {
            let id = snapshot.pod_id(&w.namespace, p)?;
            Some((id, snapshot.pod(id)?))
        });
        if let Some((id, pod)) = first {
            let after = counter.pod_spread(pod, snapshot);
            let before = match &before {
                Before::Snapshot(before) => counter.pod_spread(pod, before),
                Before::Spreads(spreads) => match spreads.get(index) {
                    Some(Some((first, spread))) if *first == id => spread.clone(),
                    _ => anyhow::bail!(
                        "{}/{}: its first pod changed although no pod could leave the cluster (a bug)",
                        w.namespace,
                        w.name
                    ),
                },
            };
            from_defaults = after.from_defaults;
            for (a, b) in after.constraints.into_iter().zip(before.constraints) {
                let (a_counts, b_counts) = (as_counts(&a.spread), as_counts(&b.spread));
                constraints.push(ConstraintReport {
                    skew_before: u32::try_from(b.spread.skew).unwrap_or(0),
                    skew_after: u32::try_from(a.spread.skew).unwrap_or(0),
                    summary_before: summarize(&b_counts),
                    summary_after: summarize(&a_counts),
                    topology_key: a.spread.topology_key,
                    max_skew: a.spread.max_skew,
                    min_domains: a.min_domains,
                    when_unsatisfiable: a.spread.when_unsatisfiable,
                    selector: a.selector,
                    before: b_counts.into_iter().collect(),
                    after: a_counts.into_iter().collect(),
                });
            }
        }
        // A pod evicted (preempted, or on a drained node) counts as its replacement.
        let current: Vec<PodId> = w
            .pods
            .iter()
            .filter_map(|p| {
                snapshot.pod_id(&w.namespace, p).or_else(|| {
                    replaced
                        .get(format!("{}/{p}", w.namespace).as_str())
                        .copied()
                        .filter(|id| snapshot.pod(*id).is_some())
                })
            })
            .collect();
        let bound = current
            .iter()
            .filter(|id| snapshot.pod_node(**id).is_some())
            .count();
        workloads.push(WorkloadReport {
            kind: w.kind.to_string(),
            namespace: w.namespace.clone(),
            name: w.name.clone(),
            pods: current.len(),
            scheduled: bound,
            pending: current.len() - bound,
            constraints_from_defaults: from_defaults && !constraints.is_empty(),
            constraints,
        });
    }
    let report = Report {
        seed: args.seed,
        scheduled,
        pending,
        pods,
        preempted,
        workloads,
        notes: world.notes.clone(),
        removed: world.expansion.removed.clone(),
        rollouts: world.rollouts.clone(),
        refused: world
            .refused
            .iter()
            .map(|r| RefusedPod {
                namespace: r.namespace.clone(),
                pod: r.name.clone(),
                file: r.file.clone(),
                message: r.error.to_string(),
            })
            .collect(),
        refused_objects: world.refused_objects.clone(),
        drained: drained
            .as_ref()
            .map(|d| super::whatif::report(d, &runtime, snapshot)),
    };
    let width = super::term::width();
    let text = match args.output {
        OutputFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
        OutputFormat::Yaml => snapshot_yaml(&input.objects, &world, drained.as_ref())?,
        OutputFormat::Table => {
            let mut t = table(&report, width, args.wide);
            if args.show {
                let mut snap = world.snapshot.clone();
                let h = show::highlight(&mut snap, None)?;
                let opts = show::options(&snap, &[], h, width, args.wide);
                t.push('\n');
                t.push_str(&render_cluster(&snap, &opts));
            }
            t
        }
    };
    timings.report = start.elapsed();
    let failed = pending > 0
        || !world.refused.is_empty()
        || !world.refused_objects.is_empty()
        || !world.expansion.errors.is_empty();
    Ok(Simulated {
        text,
        notes: world.notes.clone(),
        code: if failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
        scheduled,
        pending,
    })
}

/// One constraint's counts before and after: every domain on a line when that fits
/// `width` (or `wide`), else a summary per side.
fn constraint_counts(out: &mut String, c: &ConstraintReport, width: usize, wide: bool) {
    let before = every_domain(
        &c.before
            .iter()
            .map(|(d, n)| (d.clone(), *n))
            .collect::<Vec<_>>(),
    );
    let after = every_domain(
        &c.after
            .iter()
            .map(|(d, n)| (d.clone(), *n))
            .collect::<Vec<_>>(),
    );
    let line =
        |label: &str, domains: &str, skew: u32| format!("    {label} {domains}  skew {skew}");
    let (b, a) = (
        line("before:", &before, c.skew_before),
        line("after: ", &after, c.skew_after),
    );
    if wide || (b.chars().count() <= width && a.chars().count() <= width) {
        let _ = writeln!(out, "{b}\n{a}");
        return;
    }
    for (label, s) in [
        ("before:", &c.summary_before),
        ("after: ", &c.summary_after),
    ] {
        let _ = writeln!(out, "    {label} {}", s.headline());
        if s.domains > 0 {
            let _ = writeln!(
                out,
                "            domains per pod count: {}",
                s.histogram_line()
            );
            let _ = writeln!(
                out,
                "            most loaded: {}",
                every_domain(&s.most_loaded)
            );
            let _ = writeln!(
                out,
                "            least loaded: {}",
                every_domain(&s.least_loaded)
            );
        }
    }
    let _ = writeln!(out, "    (--wide or -o json lists every domain)");
}

/// The placement table, per-workload spread, pending pods and notes, for `width`
/// columns.
fn table(r: &Report, width: usize, wide: bool) -> String {
    let mut out = String::new();
    let w_ns = r
        .pods
        .iter()
        .map(|p| p.namespace.len())
        .max()
        .unwrap_or(0)
        .max(9);
    let w_pod = r.pods.iter().map(|p| p.pod.len()).max().unwrap_or(0).max(3);
    let w_node = r
        .pods
        .iter()
        .map(|p| p.node.as_deref().map_or(9, str::len))
        .max()
        .unwrap_or(0)
        .max(4);
    let _ = writeln!(
        out,
        "{:<w_ns$}  {:<w_pod$}  {:<w_node$}  ZONE",
        "NAMESPACE", "POD", "NODE"
    );
    for p in &r.pods {
        let _ = writeln!(
            out,
            "{:<w_ns$}  {:<w_pod$}  {:<w_node$}  {}",
            p.namespace,
            p.pod,
            p.node.as_deref().unwrap_or("<pending>"),
            p.zone.as_deref().unwrap_or("-")
        );
    }
    for w in &r.workloads {
        let _ = writeln!(
            out,
            "\n{}/{} (namespace {}): {} pods, {} scheduled, {} pending",
            w.kind.to_lowercase(),
            w.name,
            w.namespace,
            w.pods,
            w.scheduled,
            w.pending
        );
        if w.constraints_from_defaults {
            let _ = writeln!(
                out,
                "  (no constraints of its own: the cluster's default constraints)"
            );
        }
        for c in &w.constraints {
            let _ = writeln!(
                out,
                "  {} maxSkew={} {} ({})",
                c.topology_key, c.max_skew, c.when_unsatisfiable, c.selector
            );
            constraint_counts(&mut out, c, width, wide);
        }
    }
    if let Some(d) = &r.drained {
        super::whatif::table(&mut out, d);
    }
    if !r.preempted.is_empty() {
        let _ = writeln!(out, "\nPreempted");
        for p in &r.preempted {
            let _ = writeln!(
                out,
                "  {}/{} on {}: evicted for {}",
                p.namespace, p.pod, p.node, p.by
            );
        }
    }
    let pending: Vec<&PodResult> = r.pods.iter().filter(|p| p.node.is_none()).collect();
    if !pending.is_empty() {
        let _ = writeln!(
            out,
            "\nPending (topospread explain NAMESPACE/POD shows each node's verdicts)"
        );
        for p in pending {
            let _ = writeln!(
                out,
                "  {}/{}: {}",
                p.namespace,
                p.pod,
                p.message.as_deref().unwrap_or("")
            );
        }
    }
    if !r.removed.is_empty() {
        let _ = writeln!(
            out,
            "\nRemoved by their controller (scale-down, in its order)"
        );
        for p in &r.removed {
            let _ = writeln!(out, "  {}/{} ({})", p.namespace, p.pod, p.controller);
        }
    }
    for ro in &r.rollouts {
        rollout_table(&mut out, ro);
    }
    if !r.refused.is_empty() {
        let _ = writeln!(out, "\nRefused by admission (never created)");
        for p in &r.refused {
            let _ = writeln!(out, "  {}/{}: {}", p.namespace, p.pod, p.message);
        }
    }
    if !r.refused_objects.is_empty() {
        let _ = writeln!(out, "\nRefused by the API server (not created)");
        for line in &r.refused_objects {
            let _ = writeln!(out, "  {line}");
        }
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = write!(out, "\n{} scheduled, {} pending", r.scheduled, r.pending);
    if !r.refused.is_empty() {
        let _ = write!(out, ", {} refused", r.refused.len());
    }
    out.push('\n');
    out
}

/// A rollout's steps, each revision's pods and spread after each step.
fn rollout_table(out: &mut String, r: &RolloutReport) {
    let _ = writeln!(
        out,
        "\nRollout of deployment {} to replicaset {}: {} steps, {} pods created, {} deleted{}",
        r.deployment,
        r.new_replica_set,
        r.steps.len(),
        r.created.len(),
        r.deleted.len(),
        if r.complete {
            ""
        } else {
            " (not complete: new pods not available)"
        }
    );
    // The first steps and the last; -o json lists every one.
    const SHOWN: usize = 12;
    for (i, s) in r.steps.iter().enumerate() {
        if r.steps.len() > SHOWN + 1 && i >= SHOWN && i + 1 < r.steps.len() {
            if i == SHOWN {
                let _ = writeln!(
                    out,
                    "  ... {} more steps (-o json lists every step)",
                    r.steps.len() - SHOWN - 1
                );
            }
            continue;
        }
        let _ = writeln!(out, "  {}. {}", i + 1, s.action);
        for v in &s.revisions {
            let spread: Vec<String> = v
                .spread
                .iter()
                .map(|(k, m)| {
                    let counts: Vec<String> = m.iter().map(|(d, n)| format!("{d}={n}")).collect();
                    format!("{k}: {}", counts.join(" "))
                })
                .collect();
            let _ = writeln!(
                out,
                "     {}: {} pods, {} bound  {}",
                v.replica_set,
                v.pods,
                v.bound,
                spread.join("; ")
            );
        }
    }
}

/// The cluster before the simulation, for the reports' "before".
enum Before {
    /// The snapshot itself, kept when pods may leave the cluster during the simulation
    /// (scale-downs, rollouts, drains, preemption): a workload's first pod may then be
    /// another one afterwards.
    Snapshot(Box<Snapshot>),
    /// Otherwise each workload's first pod and its spread, counted before scheduling:
    /// the same figures without a second copy of a large cluster.
    Spreads(Vec<Option<(PodId, PodSpread)>>),
}

/// Whether a pending pod could preempt a bound one: one may preempt (not `Never`) and
/// has a higher priority than the lowest bound pod.
fn preemption_possible(world: &input::World) -> bool {
    let snapshot = &world.snapshot;
    let lowest = snapshot
        .pods()
        .filter(|(id, _)| snapshot.pod_node(*id).is_some())
        .map(|(_, p)| p.priority)
        .min();
    let Some(lowest) = lowest else {
        return false;
    };
    world
        .queue
        .iter()
        .filter_map(|id| snapshot.pod(*id))
        .any(|p| !p.preemption_never && p.priority > lowest)
}

/// Each workload's first pod and its spread as the cluster is now (see [`Before`]).
fn before_spreads(
    counter: &SpreadCounter,
    world: &input::World,
) -> Vec<Option<(PodId, PodSpread)>> {
    let snapshot = &world.snapshot;
    world
        .expansion
        .workloads
        .iter()
        .map(|w| {
            w.pods.iter().find_map(|p| {
                let id = snapshot.pod_id(&w.namespace, p)?;
                let pod = snapshot.pod(id)?;
                Some((id, counter.pod_spread(pod, snapshot)))
            })
        })
        .collect()
}

/// The resulting snapshot as multi-document YAML: nodes, workloads, then pods with
/// `spec.nodeName` set, ready to be read back. After `--drain`/`--lose`, the removed
/// nodes and the pods they ran are left out, and each replacement a controller made is
/// written as its own pod (the evicted pod's spec under the new name).
pub(crate) fn snapshot_yaml(
    objects: &[topospread_k8s::load::Loaded],
    world: &input::World,
    drained: Option<&topospread::simulation::Drained>,
) -> Result<String> {
    let snapshot = &world.snapshot;
    let removed_nodes: HashSet<&str> = drained
        .map(|d| d.nodes.iter().map(String::as_str).collect())
        .unwrap_or_default();
    // Evicted pods as `namespace/name`, with the replacement each got (if any).
    let mut evicted: HashMap<&str, Option<PodId>> = HashMap::new();
    if let Some(d) = drained {
        for (victim, id) in &d.replaced {
            evicted.insert(victim, Some(*id));
        }
        for gone in d.lost.iter().chain(&d.daemon_pods) {
            evicted.insert(gone, None);
        }
    }
    let node_of = |pod: &k8s_openapi::api::core::v1::Pod| -> Option<String> {
        let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
        let name = pod.metadata.name.as_deref()?;
        let id = snapshot.pod_id(ns, name)?;
        Some(snapshot.node(snapshot.pod_node(id)?).node.name.to_string())
    };
    let mut docs: Vec<String> = Vec::new();
    let mut push = |v: &dyn erased::Yaml| -> Result<()> {
        docs.push(v.yaml()?);
        Ok(())
    };
    let mut pods = Vec::new();
    for l in objects {
        match &l.object {
            Object::Node(n) => {
                if !removed_nodes.contains(n.metadata.name.as_deref().unwrap_or_default()) {
                    push(n)?;
                }
            }
            Object::Pod(p) => {
                let name = p.metadata.name.as_deref().unwrap_or_default();
                let ns = p.metadata.namespace.as_deref().unwrap_or("default");
                let removed = world
                    .expansion
                    .removed
                    .iter()
                    .any(|r| r.pod == name && r.namespace == ns)
                    || world.rollouts.iter().any(|r| {
                        r.deleted.iter().any(|d| d == name)
                            && r.deployment.split_once('/').is_some_and(|(n, _)| n == ns)
                    });
                if removed {
                    continue;
                }
                let mut p = (**p).clone();
                if let Some(n) = node_of(&p) {
                    p.spec.get_or_insert_with(Default::default).node_name = Some(n);
                }
                pods.push(p);
            }
            Object::Service(o) => push(o)?,
            Object::ReplicaSet(o) => push(o)?,
            Object::ReplicationController(o) => push(o)?,
            Object::StatefulSet(o) => push(o)?,
            Object::Deployment(o) => push(o)?,
            Object::DaemonSet(o) => push(o)?,
            Object::Job(o) => push(o)?,
            Object::CronJob(o) => push(o)?,
            Object::PriorityClass(o) => push(o)?,
            Object::PodDisruptionBudget(o) => push(o)?,
            Object::Namespace(o) => push(o)?,
            Object::LimitRange(o) => push(o)?,
            Object::RuntimeClass(o) => push(o)?,
            Object::ResourceQuota(o) => push(o)?,
            Object::SchedulerConfiguration(_) | Object::Unserved(_) => {}
            Object::CompactPod(p) => anyhow::bail!(
                "pod {}/{} was read in compact form and cannot be written back (a bug: -o yaml reads pods whole)",
                p.namespace,
                p.name
            ),
        }
    }
    for l in &world.expansion.replica_sets {
        if let Object::ReplicaSet(rs) = &l.object {
            push(rs)?;
        }
    }
    let created = world.rollouts.iter().flat_map(|r| &r.created_pods);
    for p in world.expansion.pods.iter().map(|p| &p.pod).chain(created) {
        let mut p = p.clone();
        if let Some(n) = node_of(&p) {
            p.spec.get_or_insert_with(Default::default).node_name = Some(n);
        }
        pods.push(p);
    }
    // Pods the removed nodes ran leave; their controllers' replacements come in.
    let mut written = Vec::with_capacity(pods.len());
    for p in pods {
        let ns = p.metadata.namespace.as_deref().unwrap_or("default");
        let full = format!("{ns}/{}", p.metadata.name.as_deref().unwrap_or_default());
        let Some(replacement) = evicted.get(full.as_str()) else {
            written.push(p);
            continue;
        };
        if let Some(pod) = replacement.and_then(|id| snapshot.pod(id).map(|pod| (id, pod))) {
            let (id, pod) = pod;
            let mut r = p.clone();
            r.metadata.name = Some(pod.name.to_string());
            r.metadata.uid = None;
            r.metadata.resource_version = None;
            r.metadata.creation_timestamp = None;
            r.status = None;
            let spec = r.spec.get_or_insert_with(Default::default);
            spec.node_name = snapshot
                .pod_node(id)
                .map(|n| snapshot.node(n).node.name.to_string());
            written.push(r);
        }
    }
    for p in &written {
        push(p)?;
    }
    Ok(docs.join("---\n"))
}

/// Serializing the different object types through one call.
mod erased {
    /// An object that serializes to one YAML document.
    pub(super) trait Yaml {
        fn yaml(&self) -> anyhow::Result<String>;
    }
    impl<T: serde::Serialize> Yaml for T {
        fn yaml(&self) -> anyhow::Result<String> {
            Ok(serde_saphyr::to_string(self)?)
        }
    }
}

/// A constraint's counts per eligible domain, as the report prints them.
fn as_counts(spread: &ConstraintSpread) -> Vec<(String, u32)> {
    spread
        .counts
        .iter()
        .map(|(d, c)| (d.clone(), u32::try_from(*c).unwrap_or(0)))
        .collect()
}
