//! `simulate`: schedule every pending pod in PrioritySort order, binding as it goes, and
//! report placements, spread per workload, and why pods stay Pending.

mod report;
mod write;

pub use report::{
    API_VERSION, ConstraintReport, KIND, PodResult, PreemptedReport, RefusedPod, SimulationReport,
    WorkloadReport, schema,
};

use crate::cluster::Cluster;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::input::{self, Input, PodForm, World};
use crate::runtime::{Placement, Progress, Runtime};
use crate::whatif;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use topospread::snapshot::{NodeId, PodId, Snapshot};
use topospread::spread::{PodSpread, SpreadCounter};
use topospread::{Drained, SimEvent};
use topospread_k8s::workloads::{RolloutReport, Scale, Synced};
use topospread_planning::rebalance::ConstraintSpread;
use topospread_report::summarize;
pub use write::cluster_yaml;

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
            || !self.world.refused_objects.is_empty()
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
        cluster_yaml(
            &self.input.objects,
            &self.world,
            self.drained.as_ref(),
            &self.evicted,
            out,
        )
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
    let what = whatif::NodeWhatIfs {
        drain: &drain,
        remove: &remove_node,
        lose: &lose,
    };
    let seed = cluster.seed;
    let (input, setup) = cluster.load(ctx, form)?;
    let mut world = input::build(ctx, &input, seed, &scale)?;
    let mut timings = Timings::default();
    let mut runtime = Runtime::new(&setup, &mut world.snapshot, seed)?;
    let counter = SpreadCounter::new(&setup.config, setup.features, &mut world.snapshot)
        .map_err(|e| Error::Refused(format!("{}: {e}", setup.origin)))?;
    let bare = bare_pods(&world);
    let before = match world.before_removal.take() {
        Some(snapshot) => Before::Snapshot(Box::new(snapshot)),
        None if !what.is_empty()
            || !world.expansion.rollouts.is_empty()
            || world
                .expansion
                .ordered
                .iter()
                .any(|o| !o.condemned.is_empty() || o.updating())
            || preemption_possible(&world) =>
        {
            Before::Snapshot(Box::new(world.snapshot.clone()))
        }
        None => Before::Spreads(before_spreads(&counter, &world)),
    };
    let drained = whatif::drain(&mut runtime, &mut world.snapshot, what, &input.objects)?;
    timings.load = start.elapsed();
    let start = Instant::now();
    let (mut results, preempted) = schedule_all(&mut runtime, &mut world, progress)?;
    world.rollouts = roll_out(&mut runtime, &mut world, &mut results, ready_after)?;
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
                constraint_reports(&counter, snapshot, &before, index, id, pod, &what)?;
            counted = differently_counted(&counter, snapshot, w, pod, &constraints);
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
            &counter,
            snapshot,
            &before,
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
    let report = SimulationReport {
        api_version: API_VERSION.to_string(),
        kind: KIND.to_string(),
        seed,
        scheduled,
        pending,
        pods,
        preempted,
        workloads,
        notes: world
            .notes
            .iter()
            .cloned()
            .chain(input::provision_notes(&world.snapshot))
            .collect(),
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
            .map(|d| whatif::report(d, &runtime, snapshot)),
    };
    timings.report = start.elapsed();
    let evicted = evictions(&runtime, &world.snapshot);
    Ok(Simulation {
        report,
        timings,
        input,
        world,
        drained,
        evicted,
    })
}

/// Pods preemption evicted (`namespace/name`), with the replacement their controller
/// made (none for a pod without a controller).
fn evictions(runtime: &Runtime, snapshot: &Snapshot) -> Vec<(String, Option<PodId>)> {
    let symbols = snapshot.symbols();
    let mut out: Vec<(String, Option<PodId>)> = Vec::new();
    for e in runtime.events() {
        match e {
            SimEvent::Preempted { victim, .. } => {
                let key = format!("{}/{}", symbols.resolve(victim.namespace), victim.name);
                if !out.iter().any(|(k, _)| *k == key) {
                    out.push((key, None));
                }
            }
            SimEvent::Replaced {
                victim,
                replacement,
            } => match out.iter_mut().find(|(k, _)| k == victim) {
                Some(entry) => entry.1 = Some(*replacement),
                None => out.push((victim.clone(), Some(*replacement))),
            },
            // Bindings, and events newer than this crate, evict nothing.
            _ => {}
        }
    }
    out
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

/// Each pod's placement, and the preemptions carried out.
pub type Scheduled = (Vec<(PodId, Placement)>, Vec<PreemptedReport>);

/// Schedules the world's pending pods through the engine's queue until it settles;
/// returns each pod's placement (the pending pods in queue order, then the replacements
/// of preempted pods) and the preemptions carried out.
pub fn schedule_all(
    runtime: &mut Runtime,
    world: &mut input::World,
    progress: &mut dyn Progress,
) -> Result<Scheduled> {
    let mut refused = runtime.enqueue(&world.snapshot, &world.queue);
    runtime.run(&mut world.snapshot, world.queue.len(), progress)?;
    let created = create_ordinals(runtime, world, &mut refused)?;
    let snapshot = &world.snapshot;
    let symbols = snapshot.symbols();
    let mut order = world.queue.clone();
    order.extend(created);
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
            // Bindings, and events newer than this crate, add no pod to report.
            _ => {}
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

/// The OrderedReady StatefulSets' controller, syncing each time the scheduler has
/// settled: each set creates its next ordinal once those below it are bound (Running and
/// Ready), or deletes its highest condemned pod once all are, and the scheduler runs
/// again, until no set does anything. Returns the pods
/// created; those no profile serves join `refused`, those admission refuses
/// [`World::refused`].
fn create_ordinals(
    runtime: &mut Runtime,
    world: &mut World,
    refused: &mut Vec<(PodId, String)>,
) -> Result<Vec<PodId>> {
    let mut created = Vec::new();
    loop {
        let mut made = Vec::new();
        let mut deleted = false;
        for set in &mut world.expansion.ordered {
            let synced = set.sync(&mut world.snapshot, &mut |s, id| {
                runtime.delete_pod(s, id);
            })?;
            match synced {
                Synced::Created(id) => {
                    runtime.created(&world.snapshot, id);
                    made.push(id);
                }
                Synced::Refused(r) => world.refused.push(*r),
                Synced::Deleted(r) => {
                    world.expansion.removed.push(r);
                    deleted = true;
                }
                Synced::Updated(_) => deleted = true,
                Synced::Nothing => {}
            }
        }
        if made.is_empty() && !deleted {
            return Ok(created);
        }
        refused.extend(runtime.enqueue(&world.snapshot, &made));
        runtime.run(&mut world.snapshot, made.len(), &mut ())?;
        created.extend(made);
    }
}

/// Carries out every pending rollout after the first scheduling run, in input order:
/// the new pods join `results` with their placement, and each Deployment's summary
/// lists its pods as they are at the end.
fn roll_out(
    runtime: &mut Runtime,
    world: &mut input::World,
    results: &mut Vec<(PodId, Placement)>,
    ready_after: u32,
) -> Result<Vec<RolloutReport>> {
    let mut reports = Vec::new();
    // Deleted pods' ids are reused by new pods: results are kept by name.
    let mut named: Vec<(PodId, String)> = results
        .iter()
        .filter_map(|(id, _)| Some((*id, world.snapshot.pod(*id)?.name.to_string())))
        .collect();
    for r in &world.expansion.rollouts {
        let report = runtime.rollout(&mut world.snapshot, r, ready_after)?;
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
                topology_key: a.spread.topology_key,
                max_skew: a.spread.max_skew,
                min_domains: a.min_domains,
                when_unsatisfiable: a.spread.when_unsatisfiable,
                selector: a.selector,
                before: b_counts.into_iter().collect(),
                after: a_counts.into_iter().collect(),
            }
        })
        .collect();
    Ok((constraints, from_defaults))
}

/// How the workload's second pod counts differently from its first (whose view the
/// report shows): other selectors, as when each pod has a Service of its own.
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
        .pod_spread(second, snapshot)
        .constraints
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
fn bare_pods(world: &input::World) -> Vec<PodId> {
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
