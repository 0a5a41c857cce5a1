//! One simulation of the cluster with a vector of added nodes: the base snapshot cloned,
//! the template nodes added, every pending pod scheduled by the same scheduler.

use super::{CapacityError, HOSTNAME_KEY, Slot, ZONE_KEY, ZONE_KEY_BETA};
use topospread::PodOutcome;
use topospread::api::{Labels, Node};
use topospread::snapshot::{NodeId, PodId};
use topospread::{Features, Scheduler, SchedulerConfig, Simulation, Snapshot};

/// The outcome of one run.
pub(crate) struct Trial {
    /// The cluster after the run.
    pub(crate) snapshot: Snapshot,
    /// Pods left unbound (not terminating), in the snapshot's order.
    pub(crate) pending: Vec<PodId>,
    /// Per slot, the nodes added.
    pub(crate) added: Vec<Vec<NodeId>>,
    /// The scheduler's message for each pending pod, in [`Self::pending`]'s order.
    pub(crate) messages: Vec<String>,
}

impl Trial {
    /// Pods the run placed on added nodes.
    pub(crate) fn pods_on_added(&self) -> usize {
        self.added
            .iter()
            .flatten()
            .map(|id| self.snapshot.node(*id).pods().len())
            .sum()
    }

    /// Per slot, how many of its added nodes run at least one pod.
    pub(crate) fn used(&self) -> Vec<u32> {
        self.added
            .iter()
            .map(|ids| {
                ids.iter()
                    .filter(|id| !self.snapshot.node(**id).pods().is_empty())
                    .count() as u32
            })
            .collect()
    }
}

/// Runs simulations over one base cluster, counting them.
pub(crate) struct Trials<'a> {
    base: &'a Snapshot,
    config: &'a SchedulerConfig,
    features: Features,
    seed: u64,
    /// Per slot, the node every added node copies (labels with the zone set).
    prototypes: Vec<Node>,
    /// Per slot, the prefix of its nodes' names.
    prefixes: Vec<String>,
    /// Whether the cluster's nodes carry the beta zone label too.
    beta_zone: bool,
    /// Simulations run so far.
    pub(crate) runs: usize,
}

impl<'a> Trials<'a> {
    pub(crate) fn new(
        base: &'a Snapshot,
        config: &'a SchedulerConfig,
        features: Features,
        seed: u64,
        slots: &[Slot],
        templates: &[super::NodeTemplate],
    ) -> Self {
        let symbols = base.symbols();
        let beta_zone = symbols
            .get(ZONE_KEY_BETA)
            .is_some_and(|k| base.nodes().iter().any(|n| n.node.labels.has(k)));
        let prototypes = slots
            .iter()
            .map(|s| templates[s.template].node.clone())
            .collect();
        let prefixes = slots
            .iter()
            .map(|s| match &s.zone {
                Some(z) => format!("{}-{z}", templates[s.template].name),
                None => templates[s.template].name.clone(),
            })
            .collect();
        Self {
            base,
            config,
            features,
            seed,
            prototypes,
            prefixes,
            beta_zone,
            runs: 0,
        }
    }

    /// Simulates the base cluster with `counts[s]` nodes of slot `s` added.
    pub(crate) fn run(&mut self, slots: &[Slot], counts: &[u32]) -> Result<Trial, CapacityError> {
        self.runs += 1;
        let mut snapshot = self.base.clone();
        let mut added = Vec::with_capacity(slots.len());
        for (s, slot) in slots.iter().enumerate() {
            let n = counts.get(s).copied().unwrap_or(0);
            let mut ids = Vec::with_capacity(n as usize);
            for i in 1..=n {
                let node = self.node(&mut snapshot, s, slot, i);
                let name = node.name.to_string();
                let id = snapshot
                    .add_node(node)
                    .map_err(|e| CapacityError::Simulation(format!("node {name}: {e}")))?;
                ids.push(id);
            }
            added.push(ids);
        }
        let scheduler = Scheduler::new(self.config, self.features, &mut snapshot)
            .map_err(|e| CapacityError::Config(e.to_string()))?;
        let mut simulation = Simulation::new(scheduler);
        simulation.scheduler_mut().set_seed(self.seed);
        simulation.enqueue_pending(&snapshot);
        simulation
            .run(&mut snapshot, |_, _| {})
            .map_err(|e| CapacityError::Simulation(e.to_string()))?;
        let pending = pending_pods(&snapshot);
        let messages = pending
            .iter()
            .map(|id| match simulation.scheduler().outcome(&snapshot, *id) {
                PodOutcome::Pending(m) => m,
                other => format!("{other:?}"),
            })
            .collect();
        Ok(Trial {
            snapshot,
            pending,
            added,
            messages,
        })
    }

    /// The `i`th node of slot `s`: the template with its name, hostname and zone.
    fn node(&self, snapshot: &mut Snapshot, s: usize, slot: &Slot, i: u32) -> Node {
        let mut name = format!("{}-{i}", self.prefixes[s]);
        while snapshot.node_id(&name).is_some() {
            name.push('x');
        }
        let mut node = self.prototypes[s].clone();
        let symbols = snapshot.symbols_mut();
        let hostname = symbols.intern(HOSTNAME_KEY);
        let zone_keys = [
            Some(symbols.intern(ZONE_KEY)),
            self.beta_zone.then(|| symbols.intern(ZONE_KEY_BETA)),
        ];
        let zone_value = slot.zone.as_deref().map(|z| symbols.intern(z));
        let name_sym = symbols.intern(&name);
        let mut pairs: Vec<_> = node
            .labels
            .iter()
            .filter(|(k, _)| *k != hostname && !zone_keys.contains(&Some(*k)))
            .collect();
        pairs.push((hostname, name_sym));
        if let Some(v) = zone_value {
            pairs.extend(zone_keys.iter().flatten().map(|k| (*k, v)));
        }
        node.labels = Labels::from_pairs(pairs);
        node.name = name.into();
        node
    }
}

/// Pods not bound and not terminating.
pub(crate) fn pending_pods(snapshot: &Snapshot) -> Vec<PodId> {
    snapshot
        .pods()
        .filter(|(id, p)| snapshot.pod_node(*id).is_none() && !p.terminating)
        .map(|(id, _)| id)
        .collect()
}
