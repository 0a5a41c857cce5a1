//! The cluster driver: the simulation's controller manager around the scheduler. It owns
//! the snapshot, the queue and the workloads, and runs the loop every command shares:
//! what-ifs on nodes, then the scheduler until the queue settles, the OrderedReady
//! StatefulSets' controller after each settling, then the Deployments' rollouts.

use crate::error::{DriverError, Result};
use crate::runtime::{Placement, Progress, Runtime, SchedulerSetup};
use crate::whatif::{self, NodeWhatIfs};
use crate::world::World;
use topospread::snapshot::{PodId, Snapshot};
use topospread::{Drained, SimEvent};
use topospread_k8s::load::Loaded;
use topospread_k8s::workloads::{RolloutReport, Synced};

/// Each pod's placement: the pending pods in queue order, then those controllers created
/// and the replacements of evicted pods.
pub type Placements = Vec<(PodId, Placement)>;

/// The world and the scheduler that drives it.
pub struct ClusterDriver {
    world: World,
    runtime: Runtime,
}

impl ClusterDriver {
    /// Builds the scheduler of `setup` over `world`; `seed` fixes tie-breaking.
    pub fn start(mut world: World, setup: &SchedulerSetup, seed: u64) -> Result<Self> {
        let runtime = Runtime::new(setup, &mut world.snapshot, seed)?;
        Ok(Self { world, runtime })
    }

    /// The cluster as it stands.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The cluster, to change before scheduling (interning a counter's keys).
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// The snapshot as it stands.
    pub fn snapshot(&self) -> &Snapshot {
        &self.world.snapshot
    }

    /// The scheduler.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The scheduler, to record a pod's cycles before scheduling.
    pub fn runtime_mut(&mut self) -> &mut Runtime {
        &mut self.runtime
    }

    /// The world and the scheduler, once driving is done.
    pub fn into_parts(self) -> (World, Runtime) {
        (self.world, self.runtime)
    }

    /// Removes the nodes `--remove-node` and `--lose` name, then drains those `--drain`
    /// names (nothing when none is given); `objects` tell static pods and pods with
    /// local storage apart, as kubelet and kubectl do.
    pub fn what_if(
        &mut self,
        what: NodeWhatIfs<'_>,
        objects: &[Loaded],
    ) -> Result<Option<Drained>> {
        whatif::drain(&mut self.runtime, &mut self.world.snapshot, what, objects)
    }

    /// Schedules the pending pods through the queue until it settles, with the
    /// OrderedReady StatefulSets' controller syncing after each settling (each creates its
    /// next ordinal once those below it are bound, or deletes its highest condemned pod),
    /// until no set does anything.
    pub fn schedule(&mut self, progress: &mut dyn Progress) -> Result<Placements> {
        let world = &mut self.world;
        let mut refused = self.runtime.enqueue(&world.snapshot, &world.queue);
        self.runtime
            .run(&mut world.snapshot, world.queue.len(), progress)?;
        let created = self.sync_ordered(&mut refused)?;
        let snapshot = &self.world.snapshot;
        let mut order = self.world.queue.clone();
        order.extend(created);
        order.extend(self.runtime.events().iter().filter_map(|e| match e {
            SimEvent::Replaced { replacement, .. } => Some(*replacement),
            // Bindings and preemptions add no pod; events newer than this crate neither.
            _ => None,
        }));
        Ok(order
            .into_iter()
            .filter(|id| snapshot.pod(*id).is_some())
            .map(|id| {
                let placement = match refused.iter().find(|(r, _)| *r == id) {
                    Some((_, message)) => Placement::Unschedulable(message.clone()),
                    None => self.runtime.placement(snapshot, id),
                };
                (id, placement)
            })
            .collect())
    }

    /// [`Self::schedule`], then every rollout ([`Self::roll_out`]).
    pub fn settle(&mut self, progress: &mut dyn Progress, ready_after: u32) -> Result<Placements> {
        let mut placements = self.schedule(progress)?;
        self.world.rollouts = self.roll_out(&mut placements, ready_after)?;
        Ok(placements)
    }

    /// The OrderedReady StatefulSets' controller, syncing each time the scheduler has
    /// settled, until no set does anything. Returns the pods created; those no profile
    /// serves join `refused`, those admission refuses [`World::refused`].
    fn sync_ordered(&mut self, refused: &mut Vec<(PodId, String)>) -> Result<Vec<PodId>> {
        let (world, runtime) = (&mut self.world, &mut self.runtime);
        let mut created = Vec::new();
        loop {
            let mut made = Vec::new();
            let mut deleted = false;
            for set in &mut world.expansion.ordered {
                let synced = set
                    .sync(&mut world.snapshot, &mut |s, id| {
                        runtime.delete_pod(s, id);
                    })
                    .map_err(DriverError::Build)?;
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

    /// Carries out every pending rollout, in input order: the new pods join
    /// `placements` with theirs, and each Deployment's workload lists its pods as they
    /// are at the end.
    pub fn roll_out(
        &mut self,
        placements: &mut Placements,
        ready_after: u32,
    ) -> Result<Vec<RolloutReport>> {
        let (world, runtime) = (&mut self.world, &mut self.runtime);
        let mut reports = Vec::new();
        // Deleted pods' ids are reused by new pods: placements are kept by name.
        let mut named: Vec<(PodId, String)> = placements
            .iter()
            .filter_map(|(id, _)| Some((*id, world.snapshot.pod(*id)?.name.to_string())))
            .collect();
        for r in &world.expansion.rollouts {
            let report = runtime.rollout(&mut world.snapshot, r, ready_after)?;
            let snapshot = &world.snapshot;
            placements.retain(|(id, _)| {
                snapshot
                    .pod(*id)
                    .is_some_and(|p| named.iter().any(|(n, name)| n == id && *name == *p.name))
            });
            for name in &report.created {
                if let Some(id) = snapshot.pod_id(&r.namespace, name) {
                    placements.push((id, runtime.placement(snapshot, id)));
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

    /// Pods preemption evicted (`namespace/name`), with the replacement their controller
    /// made (none for a pod without a controller).
    pub fn evictions(&self) -> Vec<(String, Option<PodId>)> {
        let symbols = self.world.snapshot.symbols();
        let mut out: Vec<(String, Option<PodId>)> = Vec::new();
        for e in self.runtime.events() {
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
}
