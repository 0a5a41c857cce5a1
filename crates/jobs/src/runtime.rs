//! The engine's `Scheduler` behind the small seam the commands use, and the mapping from
//! its `Explanation` to the plain data the explain renderer draws.

use crate::config::SchedulerSetup;
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use topospread::Features;
use topospread::api::Pod;
use topospread::framework::Status;
use topospread::snapshot::{NodeId, PodId, Snapshot};
use topospread::{Attempt, Explanation, PodOutcome, ScheduleResult, Scheduler};
use topospread::{SimEvent, Simulation};
use topospread_k8s::validation::{FieldPath, hard_constraints, minimum_held_by_unusable_nodes};
use topospread_k8s::workloads::{Rollout, RolloutReport};
use topospread_report::{
    ConstraintCounts, ExplainView, FilterVerdict, NodeExplanation, PreemptionView, ScoreView,
    VictimView,
};

/// Told how scheduling advances, so a face can draw a bar; `()` ignores it.
pub trait Progress {
    /// `total` pods are about to be scheduled.
    fn start(&mut self, _total: u64) {}
    /// `n` more pods were bound.
    fn advance(&mut self, _n: u64) {}
    /// Scheduling settled.
    fn finish(&mut self) {}
}

impl Progress for () {}

/// Where one pod went.
#[derive(Clone, Debug)]
pub enum Placement {
    /// Bound to this node.
    Scheduled(NodeId),
    /// Pending, with the scheduler's message.
    Unschedulable(String),
}

/// The engine's simulation: the scheduling queue on a virtual clock.
pub struct Runtime {
    sim: Simulation,
    /// What the scheduler was built from, to build another for a rollout's other
    /// interleavings.
    setup: SchedulerSetup,
    /// Its tie-breaking seed.
    seed: u64,
    /// The scheduler's gates (for the hints an explanation carries).
    features: Features,
    /// `namespace/name` of a pod not created yet whose cycles to record once it is.
    explain_later: Option<(String, String)>,
}

impl Runtime {
    /// Builds the scheduler from the configuration; `seed` fixes tie-breaking.
    pub fn new(setup: &SchedulerSetup, snapshot: &mut Snapshot, seed: u64) -> Result<Self> {
        let mut scheduler = Scheduler::new(&setup.config, setup.features, snapshot)
            .map_err(|e| Error::Refused(format!("{}: {e}", setup.origin)))?;
        scheduler.set_seed(seed);
        Ok(Self {
            sim: Simulation::new(scheduler),
            setup: setup.clone(),
            seed,
            features: setup.features,
            explain_later: None,
        })
    }

    /// Queues `pods`; those no profile serves come back with the reason.
    pub fn enqueue(&mut self, snapshot: &Snapshot, pods: &[PodId]) -> Vec<(PodId, String)> {
        pods.iter()
            .filter_map(|id| {
                self.sim
                    .enqueue(snapshot, *id)
                    .err()
                    .map(|e| (*id, e.to_string()))
            })
            .collect()
    }

    /// Schedules until the queue settles, telling `progress` of `total` pods.
    pub fn run(
        &mut self,
        snapshot: &mut Snapshot,
        total: usize,
        progress: &mut dyn Progress,
    ) -> Result<()> {
        progress.start(total as u64);
        let result = self.sim.run(snapshot, |_, a| {
            progress.advance(u64::from(matches!(a, Attempt::Assumed { .. })));
        });
        progress.finish();
        result.map_err(|e| Error::Simulation(format!("simulation: {e}")))
    }

    /// Where a pod stands now.
    pub fn placement(&self, snapshot: &Snapshot, id: PodId) -> Placement {
        match self.sim.scheduler().outcome(snapshot, id) {
            PodOutcome::Bound(node) => Placement::Scheduled(node),
            PodOutcome::Pending(m) => Placement::Unschedulable(m),
            // An outcome newer than this crate: not a placement, shown as it is.
            other => Placement::Unschedulable(format!("{other:?}")),
        }
    }

    /// Removes `nodes`; their controllers' pods come back pending, queued; the static
    /// pods among them (`namespace/name` in `static_pods`) go with their node.
    pub fn drain(
        &mut self,
        snapshot: &mut Snapshot,
        nodes: &[String],
        static_pods: &std::collections::HashSet<String>,
    ) -> Result<topospread::Drained> {
        self.sim
            .drain_with_static_pods(snapshot, nodes, &|p| static_pods.contains(p))
            .map_err(|e| Error::Refused(format!("--drain: {e}")))
    }

    /// Drains `nodes` as `kubectl drain` does (cordoned and kept, pods sorted by
    /// `action`, evictions through their PodDisruptionBudgets).
    pub fn cordon_and_drain(
        &mut self,
        snapshot: &mut Snapshot,
        nodes: &[String],
        action: &dyn Fn(&topospread::api::Pod, &str) -> topospread::DrainAction,
    ) -> Result<topospread::Drained> {
        self.sim
            .cordon_and_drain(snapshot, nodes, action)
            .map_err(|e| Error::Refused(format!("--drain: {e}")))
    }

    /// Carries out a Deployment's rollout, its new pods scheduled through the queue and
    /// Ready `ready_after` seconds after binding; its other interleavings run on copies
    /// of the cluster, each with a scheduler of its own built as this one.
    pub fn rollout(
        &mut self,
        snapshot: &mut Snapshot,
        rollout: &Rollout,
        ready_after: u32,
    ) -> Result<RolloutReport> {
        let (setup, seed) = (&self.setup, self.seed);
        let mut fresh = |copy: &mut Snapshot| {
            let mut scheduler = Scheduler::new(&setup.config, setup.features, copy).ok()?;
            scheduler.set_seed(seed);
            Some(Simulation::new(scheduler))
        };
        rollout
            .run_with(&mut self.sim, snapshot, ready_after, &mut fresh)
            .map_err(|e| {
                Error::Simulation(format!("deployment {}: rollout: {e}", rollout.deployment))
            })
    }

    /// What happened, in order.
    pub fn events(&self) -> &[SimEvent] {
        self.sim.events()
    }

    /// A controller deletes pod `id` (a scale-down): it leaves the snapshot and the
    /// queue, and pods waiting for room are retried.
    pub fn delete_pod(&mut self, snapshot: &mut Snapshot, id: PodId) {
        self.sim.delete_pod(snapshot, id);
    }

    /// Records the cycles of pod `namespace/name`, which a controller creates later in
    /// the run (an OrderedReady StatefulSet's ordinal), once it is created.
    pub fn explain_on_creation(&mut self, namespace: &str, name: &str) {
        self.explain_later = Some((namespace.to_string(), name.to_string()));
    }

    /// A controller created pod `id`: recorded if it is the one to explain.
    pub fn created(&mut self, snapshot: &Snapshot, id: PodId) {
        let Some(pod) = snapshot.pod(id) else {
            return;
        };
        if self.explain_later.as_ref().is_some_and(|(ns, name)| {
            *name == *pod.name && snapshot.symbols().resolve(pod.namespace) == ns
        }) {
            self.explain_pod(id);
        }
    }

    /// Records `id`'s cycles, so [`Self::explanation`] can show its last one.
    pub fn explain_pod(&mut self, id: PodId) {
        self.sim.scheduler_mut().explain_pod(id);
    }

    /// The recorded pod's last cycle, as the renderer's plain data; when an earlier
    /// cycle of the pod preempted, that failed cycle comes with it.
    pub fn explanation(&self, snapshot: &Snapshot, pod: &Pod) -> Option<ExplainView> {
        let scheduler = self.sim.scheduler();
        let e = scheduler.explanation()?;
        let mut v = view(e, snapshot, pod);
        v.context
            .extend(spread_hints(e, snapshot, pod, self.features));
        v.preempting_cycle = scheduler
            .preempting_explanation()
            .map(|failed| Box::new(view(failed, snapshot, pod)));
        Some(v)
    }
}

fn verdict(plugin: &str, s: &Status) -> FilterVerdict {
    FilterVerdict {
        plugin: plugin.to_string(),
        code: s.code().as_str().to_string(),
        reasons: s.reasons().iter().map(|r| r.to_string()).collect(),
    }
}

/// Why a pod PodTopologySpread keeps Pending may never schedule: TS013's finding (a
/// domain the pod cannot use holds the global minimum), one line each.
fn spread_hints(
    e: &Explanation,
    snapshot: &Snapshot,
    pod: &Pod,
    features: Features,
) -> Vec<String> {
    let rejected = e.filter.iter().any(|n| {
        n.verdicts
            .iter()
            .any(|(p, s)| *p == "PodTopologySpread" && !s.is_success())
    });
    if !matches!(e.result, ScheduleResult::Unschedulable { .. })
        || !rejected
        || e.spread.from_defaults
    {
        return Vec::new();
    }
    let hard = hard_constraints(pod);
    let list = FieldPath::new("spec").child("topologySpreadConstraints");
    minimum_held_by_unusable_nodes(pod, &hard, &e.spread, snapshot, features, &list)
        .iter()
        .map(|l| format!("{} {l}", l.code))
        .collect()
}

/// The explanation as plain data for the renderer.
fn view(e: &Explanation, snapshot: &Snapshot, pod: &Pod) -> ExplainView {
    let symbols = snapshot.symbols();
    let mut context = Vec::new();
    for (plugin, s) in &e.pre_filter {
        if !s.is_success() && !s.is_skip() {
            context.push(format!("PreFilter {plugin}: {s}"));
        }
    }
    for (plugin, s) in &e.pre_score {
        if !s.is_success() && !s.is_skip() {
            context.push(format!("PreScore {plugin}: {s}"));
        }
    }
    let counts = |constraint: &str, m: &BTreeMap<String, i64>, skew| ConstraintCounts {
        constraint: constraint.to_string(),
        counts: m.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        skew,
    };
    let spread = e
        .spread
        .constraints
        .iter()
        .map(|c| counts(&c.spread.constraint, &c.spread.counts, Some(c.spread.skew)))
        .collect();
    let score_counts = e
        .score_counts
        .iter()
        .map(|(constraint, m)| counts(constraint, m, None))
        .collect();
    let node_name = |id: NodeId| snapshot.node(id).node.name.to_string();
    // `evaluateNominatedNode`: the nominated node is tried alone first, and taken
    // without looking at the others when it passes.
    let took_nominated = e.nominated.is_some_and(|n| {
        matches!(e.result, ScheduleResult::Scheduled { node, evaluated_nodes: 1, .. } if node == n)
    });
    if let Some(n) = e.nominated {
        context.push(if took_nominated {
            format!(
                "nominated to {} (status.nominatedNodeName): Filter ran there first and it passed, so no other node was evaluated",
                node_name(n)
            )
        } else {
            format!(
                "nominated to {} (status.nominatedNodeName): Filter ran there first and rejected it, so the cycle went on as usual",
                node_name(n)
            )
        });
    }
    let not_evaluated = if took_nominated {
        "the pod's nominated node passed Filter first"
    } else {
        "the cycle found enough feasible nodes before this one"
    };
    let nodes = e
        .filter
        .iter()
        .map(|n| {
            let mut filters: Vec<FilterVerdict> =
                n.verdicts.iter().map(|(p, s)| verdict(p, s)).collect();
            if !n.evaluated {
                filters.push(FilterVerdict {
                    plugin: "(cycle)".into(),
                    code: "NotEvaluated".into(),
                    reasons: vec![not_evaluated.into()],
                });
            }
            let scored = e.scores.iter().find(|s| s.node == n.node);
            NodeExplanation {
                node: snapshot.node(n.node).node.name.to_string(),
                filters,
                scores: scored
                    .map(|s| {
                        s.scores
                            .iter()
                            .map(|p| ScoreView {
                                plugin: p.plugin.to_string(),
                                raw: p.raw,
                                normalized: p.normalized,
                                weighted: p.weighted,
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                total: scored.map(|s| s.total),
                nominated: n.nominated.clone(),
            }
        })
        .collect();
    let outcome = match &e.result {
        ScheduleResult::Scheduled { node, .. } => Ok(snapshot.node(*node).node.name.to_string()),
        ScheduleResult::Unschedulable { message, .. } => Err(message.clone()),
        ScheduleResult::Error(s) => Err(format!("error: {s}")),
        other => Err(format!("{other:?}")),
    };
    ExplainView {
        pod: format!("{}/{}", symbols.resolve(pod.namespace), pod.name),
        context,
        nodes,
        spread,
        spread_from_defaults: e.spread.from_defaults && !e.spread.constraints.is_empty(),
        score_counts,
        outcome,
        preemption: e.preemption.as_ref().map(|p| PreemptionView {
            node: node_name(p.node),
            victims: e
                .victims
                .iter()
                .map(|v| VictimView {
                    namespace: v.namespace.clone(),
                    name: v.name.clone(),
                    priority: v.priority,
                })
                .collect(),
        }),
        preempting_cycle: None,
    }
}
