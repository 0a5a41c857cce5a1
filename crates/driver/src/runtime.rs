//! The engine's scheduler on a virtual clock behind the small seam the driver and the
//! commands use: queue pods, run until the queue settles, read where a pod stands.

use crate::error::{DriverError, Result};
use topospread::Features;
use topospread::config::SchedulerConfig;
use topospread::snapshot::{NodeId, PodId, Snapshot};
use topospread::{Attempt, PodOutcome, Scheduler};
use topospread::{SimEvent, Simulation};
use topospread_k8s::workloads::{Rollout, RolloutReport};

/// What the scheduler is built from.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SchedulerSetup {
    /// Where it came from, for messages (`file: kubeschedulerconfiguration`).
    pub origin: String,
    /// The configuration.
    pub config: SchedulerConfig,
    /// Feature gates.
    pub features: Features,
}

impl SchedulerSetup {
    /// A setup from `config` under `features`, named `origin` in messages.
    pub fn new(origin: impl Into<String>, config: SchedulerConfig, features: Features) -> Self {
        Self {
            origin: origin.into(),
            config,
            features,
        }
    }
}

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
    /// `namespace/name` of pods not created yet whose cycles to record once they are.
    explain_later: Vec<(String, String)>,
}

impl Runtime {
    /// Builds the scheduler from the configuration; `seed` fixes tie-breaking.
    pub fn new(setup: &SchedulerSetup, snapshot: &mut Snapshot, seed: u64) -> Result<Self> {
        let mut scheduler = Scheduler::new(&setup.config, setup.features, snapshot)
            .map_err(|e| DriverError::Refused(format!("{}: {e}", setup.origin)))?;
        scheduler.set_seed(seed);
        Ok(Self {
            sim: Simulation::new(scheduler),
            setup: setup.clone(),
            seed,
            explain_later: Vec::new(),
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
        result.map_err(|e| DriverError::Simulation(format!("simulation: {e}")))
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
            .map_err(|e| DriverError::Refused(format!("--drain: {e}")))
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
            .map_err(|e| DriverError::Refused(format!("--drain: {e}")))
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
        crate::rollout::roll_out(rollout, &mut self.sim, snapshot, ready_after, &mut fresh).map_err(
            |e| DriverError::Simulation(format!("deployment {}: rollout: {e}", rollout.deployment)),
        )
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
        self.explain_later
            .push((namespace.to_string(), name.to_string()));
    }

    /// A controller created pod `id`: recorded if it is one to explain.
    pub fn created(&mut self, snapshot: &Snapshot, id: PodId) {
        let Some(pod) = snapshot.pod(id) else {
            return;
        };
        if self
            .explain_later
            .iter()
            .any(|(ns, name)| *name == *pod.name && snapshot.symbols().resolve(pod.namespace) == ns)
        {
            self.explain_pod(id);
        }
    }

    /// Records `id`'s cycles, so that [`Self::scheduler`]'s explanation of it shows its
    /// last one (several pods may be recorded in one run).
    pub fn explain_pod(&mut self, id: PodId) {
        self.sim.scheduler_mut().explain_pod(id);
    }

    /// The scheduler, to read the recorded pod's explanation from.
    pub fn scheduler(&self) -> &Scheduler {
        self.sim.scheduler()
    }

    /// The scheduler's gates.
    pub fn features(&self) -> Features {
        self.setup.features
    }
}
