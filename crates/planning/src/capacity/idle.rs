//! `--remove-idle`: nodes that can go, each checked by simulation: every pod they run
//! is recreated by its controller and scheduled elsewhere, no pod that was placed goes
//! Pending, and no DoNotSchedule constraint's excess skew grows.

use super::CapacityError;
use super::search::workload_of;
use super::trial::pending_pods;
use topospread::api::Pod;
use topospread::spread::SpreadCounter;
use topospread::{Features, Scheduler, SchedulerConfig, Simulation, Snapshot};

/// What to look for.
#[derive(Clone, Debug)]
pub struct IdleRequest<'a> {
    /// The cluster.
    pub snapshot: &'a Snapshot,
    /// The scheduler's configuration.
    pub config: &'a SchedulerConfig,
    /// Its feature gates.
    pub features: Features,
    /// Tie-breaking seed.
    pub seed: u64,
    /// At most this many nodes are tried, the emptiest first.
    pub max_candidates: usize,
}

/// A node that can be removed, with where its pods went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Removal {
    /// The node.
    pub node: String,
    /// Its pods (`namespace/name`) and the node each one's replacement was placed on.
    pub moved: Vec<(String, String)>,
    /// Its DaemonSet pods, which leave with it.
    pub daemon_pods: Vec<String>,
}

/// The nodes that can be removed one after another (each on the cluster without the
/// ones before it), the emptiest tried first.
pub fn remove_idle(req: &IdleRequest<'_>) -> Result<Vec<Removal>, CapacityError> {
    let mut current = req.snapshot.clone();
    let counter = SpreadCounter::new(req.config, req.features, &mut current)
        .map_err(|e| CapacityError::Config(e.to_string()))?;
    // Settle what is pending first, so a removal is judged against the settled cluster.
    settle(req, &mut current)?;
    let representatives: Vec<Pod> = {
        let mut seen = std::collections::BTreeSet::new();
        current
            .pods()
            .filter(|(id, _)| current.pod_node(*id).is_some())
            .filter(|(_, p)| seen.insert(workload_of(&current, p)))
            .map(|(_, p)| p.clone())
            .collect()
    };
    let excess = |s: &Snapshot| -> Vec<Vec<i64>> {
        representatives
            .iter()
            .map(|p| {
                counter
                    .pod_spread(p, s)
                    .constraints
                    .iter()
                    .filter(|c| c.spread.constraint.is_hard())
                    .map(|c| c.spread.excess)
                    .collect()
            })
            .collect()
    };
    let mut candidates: Vec<(usize, i64, String)> = current
        .nodes()
        .iter()
        .map(|n| {
            (
                n.pods().len(),
                n.requested().milli_cpu,
                n.node.name.to_string(),
            )
        })
        .collect();
    candidates.sort();
    candidates.truncate(req.max_candidates);
    let mut out = Vec::new();
    for (_, _, name) in candidates {
        let before_pending = pending_pods(&current).len();
        let before_excess = excess(&current);
        let mut trial = current.clone();
        let scheduler = Scheduler::new(req.config, req.features, &mut trial)
            .map_err(|e| CapacityError::Config(e.to_string()))?;
        let mut sim = Simulation::new(scheduler);
        sim.scheduler_mut().set_seed(req.seed);
        let drained = sim
            .drain(&mut trial, std::slice::from_ref(&name))
            .map_err(|e| CapacityError::Simulation(e.to_string()))?;
        if !drained.lost.is_empty() || !drained.mirror_pods.is_empty() {
            continue;
        }
        sim.run(&mut trial, |_, _| {})
            .map_err(|e| CapacityError::Simulation(e.to_string()))?;
        if pending_pods(&trial).len() > before_pending {
            continue;
        }
        let after = excess(&trial);
        let worse = after.iter().zip(&before_excess).any(|(a, b)| {
            if a.len() == b.len() {
                a.iter().zip(b).any(|(x, y)| x > y)
            } else {
                a.iter().sum::<i64>() > b.iter().sum::<i64>()
            }
        });
        if worse {
            continue;
        }
        let moved = drained
            .replaced
            .iter()
            .filter_map(|(victim, id)| {
                let node = trial.pod_node(*id)?;
                Some((victim.clone(), trial.node(node).node.name.to_string()))
            })
            .collect();
        // Each replacement takes its evicted pod's name, so the next trial's
        // replacements (named afresh) cannot collide with it.
        for (victim, id) in &drained.replaced {
            let node = trial.pod_node(*id).map(|n| trial.node(n).node.name.clone());
            let Some(mut pod) = trial.remove_pod(*id) else {
                continue;
            };
            if let Some((_, name)) = victim.split_once('/') {
                pod.name = name.into();
            }
            pod.node_name = node;
            trial
                .add_pod(pod)
                .map_err(|e| CapacityError::Simulation(e.to_string()))?;
        }
        out.push(Removal {
            node: name,
            moved,
            daemon_pods: drained.daemon_pods.clone(),
        });
        current = trial;
    }
    Ok(out)
}

fn settle(req: &IdleRequest<'_>, snapshot: &mut Snapshot) -> Result<(), CapacityError> {
    let scheduler = Scheduler::new(req.config, req.features, snapshot)
        .map_err(|e| CapacityError::Config(e.to_string()))?;
    let mut sim = Simulation::new(scheduler);
    sim.scheduler_mut().set_seed(req.seed);
    sim.enqueue_pending(snapshot);
    sim.run(snapshot, |_, _| {})
        .map_err(|e| CapacityError::Simulation(e.to_string()))
}
