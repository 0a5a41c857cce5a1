//! `simulate`: schedule every pending pod in PrioritySort order, binding as it goes, and
//! report placements, spread per workload, and why pods stay Pending.

mod report;

pub use report::{
    API_VERSION, ConstraintReport, KIND, PodResult, PreemptedReport, RefusedPod, SimulationReport,
    WorkloadReport, schema,
};

use crate::cluster::Cluster;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::input::{self, Input, PodForm};
use crate::report::rollout::{RemovedPod, RolloutReport};
use crate::report::summary::summarize;
use crate::whatif;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use topospread::snapshot::{NodeId, PodId, Snapshot};
use topospread::spread::ConstraintSpread;
use topospread::spread::{PodSpread, SpreadCounter};
use topospread::{Drained, SimEvent};
use topospread_driver::{
    ClusterDriver, NodeWhatIfs, Placement, Placements, Progress, Runtime, World,
};
use topospread_k8s::workloads::Scale;

/// What to simulate.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct SimulateRequest {
    /// The cluster, seed and configuration.
    pub cluster: Cluster,
    /// `--scale`: replica counts replacing the manifests'.
    pub scale: Vec<Scale>,
    /// `--drain`: nodes cordoned and their pods evicted, as `kubectl drain` does.
    pub drain: Vec<String>,
    /// `--remove-node`: nodes deleted before scheduling.
    pub remove_node: Vec<String>,
    /// `--lose KEY=VALUE`: every node so labelled removed before scheduling.
    pub lose: Vec<String>,
    /// Keep what [`Simulation::cluster_yaml`] writes back: each bound pod as written,
    /// beside its compact form.
    pub write_back: bool,
    /// `--ready-after SECONDS`: a rollout's new pod is Ready this long after it is bound.
    pub ready_after: u32,
}

impl SimulateRequest {
    /// A request for `cluster`; the rest as the CLI's defaults.
    pub fn new(cluster: impl Into<Cluster>) -> Self {
        Self {
            cluster: cluster.into(),
            ..Self::default()
        }
    }
}

/// How long each phase of a simulation took.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct Timings {
    /// Reading and parsing the files, expanding workloads, building the snapshot.
    pub load: Duration,
    /// Scheduling every pending pod.
    pub schedule: Duration,
    /// Building the report.
    pub report: Duration,
}

/// A finished simulation: the report, and the cluster it leaves.
#[non_exhaustive]
pub struct Simulation {
    /// The versioned report.
    pub report: SimulationReport,
    /// How long each phase took.
    pub timings: Timings,
    input: Input,
    world: World,
    drained: Option<Drained>,
    evicted: Vec<(String, Option<PodId>)>,
}

impl Simulation {
    /// The cluster after the simulation.
    pub fn snapshot(&self) -> &Snapshot {
        &self.world.snapshot
    }

    /// Whether a user would call the run a failure: pods left Pending, pods refused or
    /// not created (an OrderedReady StatefulSet held back), workloads not expanded.
    pub fn failed(&self) -> bool {
        self.report.pending > 0
            || self
                .report
                .workloads
                .iter()
                .any(|w| !w.not_created.is_empty())
            || !self.world.refused.is_empty()
            || !self.input.refused.is_empty()
            || !self.world.expansion.errors.is_empty()
            || self
                .report
                .drained
                .as_ref()
                .is_some_and(|d| !d.blocked.is_empty())
            || self.report.rollouts.iter().any(|r| r.stalled.is_some())
    }

    /// The cluster after the simulation as multi-document YAML, ready to be read back:
    /// removed nodes and evicted pods (drains, preemption) left out, each replacement a
    /// controller made written as its own pod. The request must have asked for whole
    /// pods.
    pub fn cluster_yaml(&self) -> Result<String> {
        let mut out = Vec::new();
        self.write_cluster_yaml(&mut out)?;
        String::from_utf8(out).map_err(|e| Error::Render(e.to_string()))
    }

    /// [`Simulation::cluster_yaml`] written to `out` as it is made: a large cluster's
    /// YAML is as large as the pods kept to write it, so it is not held whole as well.
    pub fn write_cluster_yaml(&self, out: &mut dyn std::io::Write) -> Result<()> {
        Ok(topospread_driver::cluster_yaml(
            &self.input.objects,
            &self.world,
            self.drained.as_ref(),
            &self.evicted,
            out,
        )?)
    }
}

/// Loads the request's input, schedules every pending pod through the engine's queue
/// (telling `progress`), carries out rollouts, and reports.
pub fn simulate(
    ctx: &Context,
    request: SimulateRequest,
    progress: &mut dyn Progress,
) -> Result<Simulation> {
    let start = Instant::now();
    let form = if request.write_back {
        PodForm::CompactWritten
    } else {
        PodForm::Compact
    };
    let SimulateRequest {
        cluster,
        scale,
        drain,
        remove_node,
        lose,
        ready_after,
        ..
    } = request;
    let what = NodeWhatIfs {
        drain: &drain,
        remove: &remove_node,
        lose: &lose,
    };
    let seed = cluster.seed;
    let (input, setup) = cluster.load(ctx, form)?;
    let mut world = input::build(ctx, &input, seed, &scale)?;
    let notes = input::world_notes(ctx, &input, &world);
    let mut timings = Timings::default();
    let counter = SpreadCounter::new(&setup.config, setup.features, &mut world.snapshot)
        .map_err(|e| Error::Refused(format!("{}: {e}", setup.origin)))?;
    let bare = bare_pods(&world);
    let before = before(&counter, &mut world, !what.is_empty());
    let mut driver = ClusterDriver::start(world, &setup, seed)?;
    let drained = driver.what_if(what, &input.objects)?;
    timings.load = start.elapsed();
    let start = Instant::now();
    let results = driver.settle(progress, ready_after)?;
    let evicted = driver.evictions();
    let (world, runtime) = driver.into_parts();
    let preempted = preempted_reports(&runtime, &world.snapshot);
    timings.schedule = start.elapsed();
    let start = Instant::now();
    let snapshot = &world.snapshot;

    let pods = pod_results(&results, snapshot);
    let scheduled = pods.iter().filter(|p| p.node.is_some()).count();
    let pending = pods.len() - scheduled;

    let workloads = workload_reports(&counter, &world, &runtime, &before, bare)?;
    let report = SimulationReport {
        api_version: API_VERSION.to_string(),
        kind: KIND.to_string(),
        seed,
        scheduled,
        pending,
        pods,
        preempted,
        workloads,
        notes: notes
            .into_iter()
            .chain(input::provision_notes(&world.snapshot))
            .collect(),
        removed: world
            .expansion
            .removed
            .iter()
            .map(RemovedPod::from)
            .collect(),
        rollouts: world.rollouts.iter().map(RolloutReport::from).collect(),
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
        refused_objects: input.refused.iter().map(ToString::to_string).collect(),
        drained: drained
            .as_ref()
            .map(|d| whatif::report(d, &runtime, snapshot)),
    };
    timings.report = start.elapsed();
    Ok(Simulation {
        report,
        timings,
        input,
        world,
        drained,
        evicted,
    })
}

/// The zone a node is in, by the well-known label or the docs' `zone`.
pub fn zone_of(snapshot: &Snapshot, node: NodeId) -> Option<String> {
    let symbols = snapshot.symbols();
    let labels = &snapshot.node(node).node.labels;
    ["topology.kubernetes.io/zone", "zone"]
        .iter()
        .find_map(|k| symbols.get(k).and_then(|s| labels.get(s)))
        .map(|v| symbols.resolve(v).to_string())
}

/// What the reports' "before" is read from: the snapshot as it is when pods may leave the
/// cluster during the run (scale-downs, rollouts, what-ifs on nodes, preemption), else
/// each workload's first pod's spread.
fn before(counter: &SpreadCounter, world: &mut World, what_ifs: bool) -> Before {
    match world.before_removal.take() {
        Some(snapshot) => Before::Snapshot(Box::new(snapshot)),
        None if what_ifs
            || !world.expansion.rollouts.is_empty()
            || world
                .expansion
                .ordered
                .iter()
                .any(|o| !o.condemned.is_empty() || o.updating())
            || preemption_possible(world) =>
        {
            Before::Snapshot(Box::new(world.snapshot.clone()))
        }
        None => Before::Spreads(before_spreads(counter, world)),
    }
}

/// Each pod's line of the report: where it went, or why it stays Pending.
fn pod_results(results: &Placements, snapshot: &Snapshot) -> Vec<PodResult> {
    let symbols = snapshot.symbols();
    results
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
        .collect()
}

/// Each workload's line of the report (its pods, how many bound, its constraints'
/// spread before and after, what its controller could not do), then each bare pod with
/// constraints of its own.
fn workload_reports(
    counter: &SpreadCounter,
    world: &World,
    runtime: &Runtime,
    before: &Before,
    bare: Vec<PodId>,
) -> Result<Vec<WorkloadReport>> {
    let snapshot = &world.snapshot;
    let symbols = snapshot.symbols();
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
        let mut counted = None;
        if w.kind == "DaemonSet" {
            counted = Some(
                "a DaemonSet's pods are pinned one per node, so each counts only its own node; \
                 no spread to report"
                    .to_string(),
            );
        } else if let Some((id, pod)) = first {
            let what = format!("{}/{}", w.namespace, w.name);
            (constraints, from_defaults) =
                constraint_reports(counter, snapshot, before, index, id, pod, &what)?;
            counted = differently_counted(counter, snapshot, w, pod, &constraints);
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
        let failed_create = world
            .refused
            .iter()
            .filter(|r| r.namespace == w.namespace && w.pods.contains(&r.name))
            .map(|r| failed_create_event(w.kind, &w.name, &r.name, &r.error.to_string()))
            .collect();
        let ordered =
            world.expansion.ordered.iter().find(|o| {
                w.kind == "StatefulSet" && o.namespace == w.namespace && o.name == w.name
            });
        workloads.push(WorkloadReport {
            not_created: ordered.map(|o| o.not_created()).unwrap_or_default(),
            not_created_reason: ordered.and_then(|o| o.why_not_created(snapshot)),
            not_removed_reason: ordered.and_then(|o| o.why_not_removed(snapshot)),
            rolling_update: ordered.and_then(|o| o.update_status(snapshot)),
            failed_create,
            kind: w.kind.to_string(),
            namespace: w.namespace.clone(),
            name: w.name.clone(),
            pods: current.len(),
            scheduled: bound,
            pending: current.len() - bound,
            constraints_from_defaults: from_defaults && !constraints.is_empty(),
            counted,
            constraints,
        });
    }
    // Bare pods with constraints of their own, after the workloads (as `Before` holds
    // them).
    let workload_count = world.expansion.workloads.len();
    for (i, id) in bare.into_iter().enumerate() {
        let Some(pod) = snapshot.pod(id) else {
            continue;
        };
        let namespace = symbols.resolve(pod.namespace).to_string();
        let what = format!("{namespace}/{}", pod.name);
        let (constraints, _) = constraint_reports(
            counter,
            snapshot,
            before,
            workload_count + i,
            id,
            pod,
            &what,
        )?;
        let bound = usize::from(snapshot.pod_node(id).is_some());
        workloads.push(WorkloadReport {
            not_created: Vec::new(),
            not_created_reason: None,
            not_removed_reason: None,
            rolling_update: None,
            failed_create: Vec::new(),
            kind: "Pod".to_string(),
            namespace,
            name: pod.name.to_string(),
            pods: 1,
            scheduled: bound,
            pending: 1 - bound,
            constraints_from_defaults: false,
            counted: None,
            constraints,
        });
    }
    Ok(workloads)
}

/// The preemptions carried out, in order: victim, node and the pod that preempted it.
fn preempted_reports(runtime: &Runtime, snapshot: &Snapshot) -> Vec<PreemptedReport> {
    let symbols = snapshot.symbols();
    runtime
        .events()
        .iter()
        .filter_map(|e| match e {
            SimEvent::Preempted { victim, node, by } => Some(PreemptedReport {
                namespace: symbols.resolve(victim.namespace).to_string(),
                pod: victim.name.to_string(),
                node: snapshot.node(*node).node.name.to_string(),
                by: snapshot.pod(*by).map_or_else(String::new, |p| {
                    format!("{}/{}", symbols.resolve(p.namespace), p.name)
                }),
            }),
            // Bindings and replacements preempt nothing; events newer than this crate neither.
            _ => None,
        })
        .collect()
}

/// One pod's constraints, counted before and after the simulation, and whether they are
/// the cluster's defaults; `index` is its place in [`Before::Spreads`].
fn constraint_reports(
    counter: &SpreadCounter,
    snapshot: &Snapshot,
    before: &Before,
    index: usize,
    id: PodId,
    pod: &topospread::api::Pod,
    what: &str,
) -> Result<(Vec<ConstraintReport>, bool)> {
    let after = counter.pod_spread(pod, snapshot);
    let before = match before {
        Before::Snapshot(before) => counter.pod_spread(pod, before),
        Before::Spreads(spreads) => match spreads.get(index) {
            Some(Some((first, spread))) if *first == id => spread.clone(),
            _ => {
                return Err(Error::Simulation(format!(
                    "{what}: its first pod changed although no pod could leave the cluster (a bug)"
                )));
            }
        },
    };
    let from_defaults = after.from_defaults;
    let constraints = after
        .constraints
        .into_iter()
        .zip(before.constraints)
        .map(|(a, b)| {
            let (a_counts, b_counts) = (as_counts(&a.spread), as_counts(&b.spread));
            ConstraintReport {
                skew_before: u32::try_from(b.spread.skew).unwrap_or(0),
                skew_after: u32::try_from(a.spread.skew).unwrap_or(0),
                summary_before: summarize(&b_counts),
                summary_after: summarize(&a_counts),
                topology_key: a.spread.constraint.topology_key,
                max_skew: a.spread.constraint.max_skew,
                min_domains: a.min_domains,
                when_unsatisfiable: a.spread.constraint.when_unsatisfiable.as_str().to_string(),
                selector: a.spread.constraint.selector,
                before: b_counts.into_iter().collect(),
                after: a_counts.into_iter().collect(),
            }
        })
        .collect();
    Ok((constraints, from_defaults))
}

/// How the workload's second pod counts differently from its first (whose view the
/// report shows): other selectors, as when each pod has a Service of its own (its
/// constraints read, not counted).
fn differently_counted(
    counter: &SpreadCounter,
    snapshot: &Snapshot,
    w: &topospread_k8s::workloads::WorkloadSummary,
    first: &topospread::api::Pod,
    shown: &[ConstraintReport],
) -> Option<String> {
    let second = w.pods.iter().skip(1).find_map(|p| {
        let id = snapshot.pod_id(&w.namespace, p)?;
        snapshot.pod(id)
    })?;
    let theirs: Vec<String> = counter
        .constraint_refs(second, snapshot)
        .into_iter()
        .map(|c| c.selector)
        .collect();
    let ours: Vec<&str> = shown.iter().map(|c| c.selector.as_str()).collect();
    let differ = theirs.iter().map(String::as_str).ne(ours.iter().copied());
    let mut theirs = theirs;
    theirs.dedup();
    differ.then(|| {
        format!(
            "its pods count different selectors (a Service per pod?): {} shown; {} counts {}",
            first.name,
            second.name,
            theirs.join("; ")
        )
    })
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
fn preemption_possible(world: &World) -> bool {
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
fn before_spreads(counter: &SpreadCounter, world: &World) -> Vec<Option<(PodId, PodSpread)>> {
    let snapshot = &world.snapshot;
    let workloads = world.expansion.workloads.iter().map(|w| {
        w.pods.iter().find_map(|p| {
            let id = snapshot.pod_id(&w.namespace, p)?;
            let pod = snapshot.pod(id)?;
            Some((id, counter.pod_spread(pod, snapshot)))
        })
    });
    let bare = bare_pods(world).into_iter().map(|id| {
        let pod = snapshot.pod(id)?;
        Some((id, counter.pod_spread(pod, snapshot)))
    });
    workloads.chain(bare).collect()
}

/// The pending pods no workload owns that carry spread constraints of their own (a bare
/// Pod, as in the docs' examples): each gets its spread before and after, as a workload.
fn bare_pods(world: &World) -> Vec<PodId> {
    let snapshot = &world.snapshot;
    let symbols = snapshot.symbols();
    world
        .queue
        .iter()
        .copied()
        .filter(|id| {
            snapshot.pod(*id).is_some_and(|pod| {
                let ns = symbols.resolve(pod.namespace);
                !pod.spread_constraints.is_empty()
                    && !world
                        .expansion
                        .workloads
                        .iter()
                        .any(|w| w.namespace == ns && w.pods.iter().any(|p| **p == *pod.name))
            })
        })
        .collect()
}

/// The `FailedCreate` event a workload's controller records when the API server refuses
/// a pod: the StatefulSet controller's words (`stateful_pod_control.go`
/// `recordPodEvent`), or the other controllers' (`controller_utils.go`
/// `CreatePodsWithGenerateName`: "Error creating: ...").
fn failed_create_event(kind: &str, workload: &str, pod: &str, error: &str) -> String {
    if kind == "StatefulSet" {
        format!("create Pod {pod} in StatefulSet {workload} failed error: {error}")
    } else {
        format!("Error creating: {error}")
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
