//! A Deployment's rolling update (or recreate) carried out through the engine's
//! [`Simulation`] as kube-controller-manager runs it: each sync of the deployment
//! controller (`rollout_steps`, the controller's arithmetic) reads the ReplicaSets'
//! replicas and available pods, the ReplicaSet controller creates or deletes the pods at
//! once, the scheduler binds new pods against every pod still there (old and new count
//! together for a selector matching both), and a bound pod becomes available
//! `--ready-after` + `minReadySeconds` logical seconds later. Where the race between
//! these moves decides the end state, the rollout runs under each [`Interleaving`] and
//! the report gives the range of end skews. What the rollout is (its revisions,
//! strategy, template) is the workload expansion's [`Rollout`].

use std::collections::{BTreeMap, HashMap, HashSet};
use topospread::PodOutcome;
use topospread::plugins::podtopologyspread::{
    ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH,
};
use topospread::snapshot::Snapshot;
use topospread::{Simulation, SimulationError};
use topospread_k8s::build;
use topospread_k8s::workloads::{
    EndSpread, Interleaving, InterleavingReport, POD_TEMPLATE_HASH_LABEL, Revision, RevisionState,
    Rollout, RolloutReport, RolloutStall, SkewRange, StalledPod, StepReport, generated_name_suffix,
};
use topospread_planning::controller::{
    DeletionCandidate, PhaseRank, RolloutState, RolloutStep, Strategy, deletion_order_with,
    rollout_steps,
};

/// Carries `rollout` out on `snapshot` through `sim` in the first [`Interleaving`], after
/// running it on copies of `snapshot` in every other one, each through a simulation
/// `fresh` builds for the copy (an interleaving it builds none for is left out); a bound
/// pod is Ready `ready_after` seconds later.
pub fn roll_out(
    rollout: &Rollout,
    sim: &mut Simulation,
    snapshot: &mut Snapshot,
    ready_after: u32,
    fresh: &mut dyn FnMut(&mut Snapshot) -> Option<Simulation>,
) -> Result<RolloutReport, SimulationError> {
    Run(rollout).run_with(sim, snapshot, ready_after, fresh)
}

/// Carries `rollout` out on `snapshot` through `sim` in `il` alone, a bound pod Ready
/// `ready_after` seconds later.
pub fn roll_out_in(
    rollout: &Rollout,
    sim: &mut Simulation,
    snapshot: &mut Snapshot,
    ready_after: u32,
    il: Interleaving,
) -> Result<RolloutReport, SimulationError> {
    Run(rollout).run_in(sim, snapshot, ready_after, il)
}

/// One rollout being carried out: the controller's moves read the expansion's
/// [`Rollout`] through it.
struct Run<'a>(&'a Rollout);

impl std::ops::Deref for Run<'_> {
    type Target = Rollout;

    fn deref(&self) -> &Rollout {
        self.0
    }
}

/// The most syncs one rollout may take (each one moves at least one pod).
const MAX_STEPS: usize = 100_000;

/// Where one run of the rollout stands: the revisions' pods, which are available, and
/// when each was bound, on a logical clock in seconds.
struct RunState {
    new: Revision,
    old: Vec<Revision>,
    available: HashSet<String>,
    /// Bound pods: (logical second it was bound, order of binding).
    bound_at: HashMap<String, (u64, usize)>,
    binds: usize,
    now: u64,
}

impl RunState {
    /// Records the pods the scheduler bound since the last look, at the current time.
    fn stamp(&mut self, snapshot: &Snapshot, ns: &str) {
        let pods: Vec<String> = std::iter::once(&self.new)
            .chain(&self.old)
            .flat_map(|r| r.pods.iter().cloned())
            .collect();
        for name in pods {
            if self.bound_at.contains_key(&name) {
                continue;
            }
            let bound = snapshot
                .pod_id(ns, &name)
                .is_some_and(|id| snapshot.pod_node(id).is_some());
            if bound {
                self.bound_at.insert(name, (self.now, self.binds));
                self.binds += 1;
            }
        }
    }

    /// The ReplicaSets' (replicas, available) as the controller reads them.
    fn state(&self, replicas: i32) -> RolloutState {
        let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
        let of = |r: &Revision| {
            (
                count(r.pods.len()),
                count(
                    r.pods
                        .iter()
                        .filter(|p| self.available.contains(*p))
                        .count(),
                ),
            )
        };
        RolloutState {
            replicas,
            new: of(&self.new),
            old: self.old.iter().map(of).collect(),
        }
    }
}

impl Run<'_> {
    /// Carries the rollout out on `snapshot` through `sim` in the first
    /// [`Interleaving`], after running it on copies of `snapshot` in every other one,
    /// each through a simulation `fresh` builds for the copy (an interleaving it builds
    /// none for is left out); a bound pod is Ready `ready_after` seconds later.
    fn run_with(
        &self,
        sim: &mut Simulation,
        snapshot: &mut Snapshot,
        ready_after: u32,
        fresh: &mut dyn FnMut(&mut Snapshot) -> Option<Simulation>,
    ) -> Result<RolloutReport, SimulationError> {
        let mut others = Vec::new();
        for il in &Interleaving::ALL[1..] {
            let mut copy = snapshot.clone();
            let Some(mut alt) = fresh(&mut copy) else {
                continue;
            };
            let _ = alt.enqueue_pending(&copy);
            alt.run(&mut copy, |_, _| {})?;
            let (r, end) = self.drive(&mut alt, &mut copy, ready_after, *il)?;
            others.push(summary(&r, end));
        }
        let (mut report, end) = self.drive(sim, snapshot, ready_after, Interleaving::ALL[0])?;
        report.interleavings = std::iter::once(summary(&report, end))
            .chain(others)
            .collect();
        report.end_skew = skew_ranges(&report.interleavings);
        report.warning = skew_warning(&report.end_skew, report.interleavings.len());
        Ok(report)
    }

    /// Carries the rollout out on `snapshot` through `sim` in `il` alone, a bound pod
    /// Ready `ready_after` seconds later.
    fn run_in(
        &self,
        sim: &mut Simulation,
        snapshot: &mut Snapshot,
        ready_after: u32,
        il: Interleaving,
    ) -> Result<RolloutReport, SimulationError> {
        let (mut report, end) = self.drive(sim, snapshot, ready_after, il)?;
        report.interleavings = vec![summary(&report, end)];
        report.end_skew = skew_ranges(&report.interleavings);
        report.warning = skew_warning(&report.end_skew, 1);
        Ok(report)
    }

    /// One run of the rollout in `il`: syncs until the controller waits, the scheduler
    /// binds, the clock moves to the next pod due available, until nothing is due.
    fn drive(
        &self,
        sim: &mut Simulation,
        snapshot: &mut Snapshot,
        ready_after: u32,
        il: Interleaving,
    ) -> Result<(RolloutReport, Vec<EndSpread>), SimulationError> {
        let ns = self.namespace.as_str();
        let delay = u64::from(ready_after) + u64::try_from(self.min_ready_seconds).unwrap_or(0);
        let deadline = u64::try_from(self.progress_deadline_seconds).unwrap_or(0);
        let mut p = RunState {
            new: self.new.clone(),
            old: self.old.clone(),
            available: HashSet::new(),
            bound_at: HashMap::new(),
            binds: 0,
            now: 0,
        };
        // Pods running before the rollout are available (their kubelets reported them).
        p.stamp(snapshot, ns);
        p.available = p.bound_at.keys().cloned().collect();
        let mut report = RolloutReport {
            deployment: format!("{ns}/{}", self.deployment),
            new_replica_set: p.new.replica_set.clone(),
            steps: Vec::new(),
            complete: false,
            created: Vec::new(),
            deleted: Vec::new(),
            stalled: None,
            created_pods: Vec::new(),
            ready_after_seconds: ready_after,
            min_ready_seconds: self.min_ready_seconds,
            progress_deadline_seconds: self.progress_deadline_seconds,
            duration_seconds: 0,
            interleaving: il.name(),
            interleavings: Vec::new(),
            end_skew: Vec::new(),
            warning: None,
            deadline_exceeded: None,
        };
        let keys: Vec<String> = self
            .template
            .spec
            .iter()
            .flat_map(|s| s.topology_spread_constraints.iter().flatten())
            .map(|c| c.topology_key.clone())
            .collect();
        let mut made = 0usize;
        let mut last_progress = 0u64;
        'run: while report.steps.len() < MAX_STEPS {
            // The controller syncs until it waits for pods to become available.
            while report.steps.len() < MAX_STEPS {
                let state = p.state(self.replicas);
                let steps = rollout_steps(&state, self.strategy);
                if steps.is_empty() {
                    break;
                }
                for step in steps {
                    let (action, created, deleted) =
                        self.apply(sim, snapshot, &mut p, step, &mut made, &mut report);
                    if created.is_empty() && deleted.is_empty() {
                        // Admission refused the new pods: the controller cannot move.
                        let mut stall = self.stall(sim, snapshot, &state, &p.new, &report);
                        stall.reason = format!(
                            "the API server refused the new ReplicaSet's pods, so the controller cannot {action}{}",
                            self.never_finishes()
                        );
                        report.stalled = Some(stall);
                        break 'run;
                    }
                    if il.scheduler_first && !created.is_empty() {
                        sim.run(snapshot, |_, _| {})?;
                        p.stamp(snapshot, ns);
                    }
                    last_progress = p.now;
                    report.created.extend(created.iter().cloned());
                    report.deleted.extend(deleted.iter().cloned());
                    let revisions = std::iter::once(&p.new)
                        .chain(&p.old)
                        .map(|r| revision_state(snapshot, ns, r, &keys, &p.available))
                        .collect();
                    report.steps.push(StepReport {
                        action,
                        created,
                        deleted,
                        revisions,
                    });
                }
            }
            sim.run(snapshot, |_, _| {})?;
            p.stamp(snapshot, ns);
            // The kubelets: the next bound pods due available.
            let mut waiting: Vec<(u64, usize, String)> = std::iter::once(&p.new)
                .chain(&p.old)
                .flat_map(|r| r.pods.iter())
                .filter(|n| !p.available.contains(*n))
                .filter_map(|n| {
                    let (at, order) = p.bound_at.get(n)?;
                    Some((at + delay, *order, n.clone()))
                })
                .collect();
            waiting.sort();
            let Some((due, _, _)) = waiting.first().cloned() else {
                let state = p.state(self.replicas);
                report.complete = state.old.iter().all(|o| o.0 == 0)
                    && state.new.0 == self.replicas
                    && state.new.1 == self.replicas;
                if !report.complete {
                    report.stalled = Some(self.stall(sim, snapshot, &state, &p.new, &report));
                }
                break;
            };
            if due.saturating_sub(last_progress) > deadline && report.deadline_exceeded.is_none() {
                report.deadline_exceeded = Some(format!(
                    "the Progressing condition turns False (ProgressDeadlineExceeded) {}s in: pods take {delay}s from binding to available, more than progressDeadlineSeconds {}; the rollout goes on",
                    last_progress + deadline,
                    self.progress_deadline_seconds
                ));
            }
            p.now = due;
            last_progress = due;
            let take = if il.one_at_a_time { 1 } else { waiting.len() };
            for (at, _, name) in waiting.into_iter().take(take) {
                if at == due {
                    p.available.insert(name);
                }
            }
        }
        report.duration_seconds = p.now;
        let end = self.end_spread(sim, snapshot, &p.new);
        Ok((report, end))
    }

    /// Carries out one move of the controller: the ReplicaSet controller creates the new
    /// pods (queued, not yet scheduled) or deletes pods in its order. Returns what it
    /// did, the pods created and the pods deleted.
    fn apply(
        &self,
        sim: &mut Simulation,
        snapshot: &mut Snapshot,
        p: &mut RunState,
        step: RolloutStep,
        made: &mut usize,
        report: &mut RolloutReport,
    ) -> (String, Vec<String>, Vec<String>) {
        let ns = self.namespace.as_str();
        let mut created = Vec::new();
        let mut deleted = Vec::new();
        let action = match step {
            RolloutStep::ScaleUpNew(to) => {
                let to = usize::try_from(to).unwrap_or(0);
                while p.new.pods.len() < to {
                    let name = self.fresh_name(snapshot, &p.new.replica_set, made);
                    let mut pod = self.template.clone();
                    pod.metadata.name = Some(name.clone());
                    let Ok(None) = build::admit_and_add_with(
                        snapshot,
                        &pod,
                        &self.source.file,
                        &self.admission,
                    ) else {
                        break;
                    };
                    let Some(id) = snapshot.pod_id(ns, &name) else {
                        break;
                    };
                    // A pod no profile serves stays pending; the rollout waits.
                    let _ = sim.enqueue(snapshot, id);
                    p.new.pods.push(name.clone());
                    created.push(name);
                    report.created_pods.push(pod);
                }
                if created.is_empty() && p.new.pods.len() > to {
                    let related = related_pods(&p.new, &p.old);
                    let mut new = std::mem::take(&mut p.new);
                    deleted = self.scale_down(sim, snapshot, &mut new, to, &related, &p.available);
                    p.new = new;
                }
                format!(
                    "scale replicaset/{} to {}",
                    p.new.replica_set,
                    p.new.pods.len()
                )
            }
            RolloutStep::ScaleDownOld { index, to } => {
                let to = usize::try_from(to).unwrap_or(0);
                let related = related_pods(&p.new, &p.old);
                let Some(r) = p.old.get_mut(index) else {
                    return (String::new(), created, deleted);
                };
                deleted = self.scale_down(sim, snapshot, r, to, &related, &p.available);
                format!("scale replicaset/{} to {}", r.replica_set, r.pods.len())
            }
        };
        for name in &deleted {
            p.available.remove(name);
            p.bound_at.remove(name);
        }
        (action, created, deleted)
    }

    /// The template's spread constraints over the cluster at the end, counted for a pod
    /// of the new ReplicaSet as the scheduler counts them.
    fn end_spread(&self, sim: &Simulation, snapshot: &Snapshot, new: &Revision) -> Vec<EndSpread> {
        let Some(pod) = new
            .pods
            .iter()
            .find_map(|n| snapshot.pod(snapshot.pod_id(&self.namespace, n)?))
        else {
            return Vec::new();
        };
        sim.scheduler()
            .spread_counter()
            .pod_spread(pod, snapshot)
            .constraints
            .into_iter()
            .map(|c| EndSpread {
                per_revision: c
                    .spread
                    .constraint
                    .selector
                    .contains(POD_TEMPLATE_HASH_LABEL),
                constraint: c.spread.constraint,
                counts: c.spread.counts,
                skew: c.spread.skew,
            })
            .collect()
    }

    /// Where the rollout stands now that the controller cannot move: the counts of
    /// `state`, the new pods still Pending and the scheduler's reason for each.
    fn stall(
        &self,
        sim: &Simulation,
        snapshot: &Snapshot,
        state: &RolloutState,
        new: &Revision,
        report: &RolloutReport,
    ) -> RolloutStall {
        let ns = self.namespace.as_str();
        let count = |n: i32| usize::try_from(n).unwrap_or(0);
        let pending: Vec<StalledPod> = new
            .pods
            .iter()
            .filter_map(|name| {
                let id = snapshot.pod_id(ns, name)?;
                match sim.scheduler().outcome(snapshot, id) {
                    PodOutcome::Bound(_) => None,
                    PodOutcome::Pending(message) => Some(StalledPod {
                        pod: name.clone(),
                        message,
                    }),
                    // An outcome newer than this crate names no pending reason to report.
                    _ => None,
                }
            })
            .collect();
        let topology_spread = pending.iter().any(|p| {
            p.message
                .replace(ERR_REASON_NODE_LABEL_NOT_MATCH, "")
                .contains(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        });
        let (max_surge, max_unavailable) = match self.strategy {
            Strategy::RollingUpdate {
                max_surge,
                max_unavailable,
            } => (Some(max_surge), Some(max_unavailable)),
            Strategy::Recreate => (None, None),
        };
        let waits = match pending.len() {
            0 => "the new pods it needs".to_string(),
            1 => format!("new pod {} stays Pending", pending[0].pod),
            n => format!("{n} new pods stay Pending"),
        };
        let old_left: i32 = state.old.iter().map(|o| o.0).sum();
        let mut reason = match (max_surge, max_unavailable) {
            _ if old_left == 0 => format!(
                "every old pod is gone and the new ReplicaSet has its {} replicas, but {waits}",
                state.new.0
            ),
            (Some(surge), Some(0)) => format!(
                "maxUnavailable 0 keeps every old pod until a new one is available, maxSurge {surge} allows no further new pod, and {waits}"
            ),
            (Some(_), Some(unavailable)) => format!(
                "maxUnavailable {unavailable} is used up by pods not available, and {waits}"
            ),
            _ => format!("the controller waits for the new pods, and {waits}"),
        };
        if topology_spread && old_left > 0 {
            reason.push_str(
                ": a DoNotSchedule topology spread constraint rejects every node where room remains while the old pods hold their domains (kubernetes issue 116629)",
            );
        }
        reason.push_str(&self.never_finishes());
        let last = report.steps.last();
        RolloutStall {
            step: report.steps.len(),
            action: last.map(|s| s.action.clone()).unwrap_or_default(),
            old_replicas: state.old.iter().map(|o| count(o.0)).sum(),
            old_available: state.old.iter().map(|o| count(o.1)).sum(),
            new_replicas: count(state.new.0),
            new_available: count(state.new.1),
            max_surge,
            max_unavailable,
            pending,
            topology_spread,
            reason,
        }
    }

    /// Deletes pods of `r` down to `to`, in the ReplicaSet controller's order, ranked by
    /// the nodes of `related` (every pod of the Deployment); returns their names.
    fn scale_down(
        &self,
        sim: &mut Simulation,
        snapshot: &mut Snapshot,
        r: &mut Revision,
        to: usize,
        related: &[String],
        available: &HashSet<String>,
    ) -> Vec<String> {
        let ns = self.namespace.as_str();
        let node_of = |name: &str| -> Option<String> {
            let id = snapshot.pod_id(ns, name)?;
            Some(snapshot.node(snapshot.pod_node(id)?).node.name.to_string())
        };
        let known: HashMap<&str, &DeletionCandidate> = self
            .candidates
            .iter()
            .map(|c| (c.name.as_str(), c))
            .collect();
        let candidates: Vec<DeletionCandidate> = r
            .pods
            .iter()
            .map(|name| {
                let mut c = known.get(name.as_str()).map_or_else(
                    || DeletionCandidate::created_pending(name),
                    |c| (*c).clone(),
                );
                c.node = node_of(name);
                if c.node.is_some() && c.phase == PhaseRank::Pending && c.created.is_none() {
                    // A pod the simulation bound is running, and Ready once available.
                    c.phase = PhaseRank::Running;
                    c.ready = available.contains(name);
                }
                c
            })
            .collect();
        let related: Vec<Option<String>> = related.iter().map(|p| node_of(p)).collect();
        let remove = r.pods.len().saturating_sub(to);
        let order = deletion_order_with(&candidates, &related, self.times);
        let gone: Vec<String> = order
            .into_iter()
            .take(remove)
            .map(|i| r.pods[i].clone())
            .collect();
        for name in &gone {
            if let Some(id) = snapshot.pod_id(ns, name) {
                sim.delete_pod(snapshot, id);
            }
        }
        r.pods.retain(|p| !gone.contains(p));
        gone
    }

    /// What a stall means for the Deployment, naming its progress deadline.
    fn never_finishes(&self) -> String {
        format!(
            "; the rollout can never finish: after progressDeadlineSeconds ({}) the Deployment's Progressing condition turns False (ProgressDeadlineExceeded) and it stays as it is",
            self.progress_deadline_seconds
        )
    }

    /// `<replicaset>-<5 chars>`, free in the namespace.
    fn fresh_name(&self, snapshot: &Snapshot, rs: &str, made: &mut usize) -> String {
        loop {
            let name = format!("{rs}-{}", generated_name_suffix(self.seed, rs, *made, 0));
            *made += 1;
            if snapshot.pod_id(&self.namespace, &name).is_none() || *made > 1_000_000 {
                return name;
            }
        }
    }
}

/// Every pod of the Deployment (`getIndirectlyRelatedPods`): the ranks of the deletion
/// order count them all, whatever their ReplicaSet.
fn related_pods(new: &Revision, old: &[Revision]) -> Vec<String> {
    std::iter::once(new)
        .chain(old)
        .flat_map(|r| r.pods.iter().cloned())
        .collect()
}

/// How one run ended, for the report's list of interleavings.
fn summary(r: &RolloutReport, end: Vec<EndSpread>) -> InterleavingReport {
    InterleavingReport {
        name: r.interleaving.clone(),
        complete: r.complete,
        steps: r.steps.len(),
        duration_seconds: r.duration_seconds,
        end,
    }
}

/// Per constraint (in the template's order, as each run counts them): the least and
/// greatest end skew over the runs that completed.
fn skew_ranges(runs: &[InterleavingReport]) -> Vec<SkewRange> {
    let mut ranges: Vec<SkewRange> = Vec::new();
    for run in runs.iter().filter(|r| r.complete) {
        for (i, e) in run.end.iter().enumerate() {
            match ranges.get_mut(i) {
                Some(r) => {
                    r.min = r.min.min(e.skew);
                    r.max = r.max.max(e.skew);
                }
                None => ranges.push(SkewRange {
                    constraint: e.constraint.clone(),
                    min: e.skew,
                    max: e.skew,
                    per_revision: e.per_revision,
                }),
            }
        }
    }
    ranges
}

/// The warning for constraints counting old and new pods together whose end skew
/// exceeds maxSkew or depends on the interleaving.
fn skew_warning(ranges: &[SkewRange], runs: usize) -> Option<String> {
    let skewed: Vec<String> = ranges
        .iter()
        .filter(|r| !r.per_revision && (r.max > i64::from(r.constraint.max_skew) || r.min != r.max))
        .map(|r| {
            let skew = if r.min == r.max {
                format!("skew {}", r.max)
            } else {
                format!("skew {} to {}", r.min, r.max)
            };
            format!("{}: {skew} at the end", r.constraint)
        })
        .collect();
    if skewed.is_empty() {
        return None;
    }
    Some(format!(
        "this rollout can leave the spread skewed; add `matchLabelKeys: [pod-template-hash]` ({} over {runs} interleaving(s); old and new pods count together while they overlap)",
        skewed.join("; ")
    ))
}

/// `r`'s pods now: how many, how many bound and available, and per key the bound ones
/// per domain.
fn revision_state(
    snapshot: &Snapshot,
    ns: &str,
    r: &Revision,
    keys: &[String],
    available: &HashSet<String>,
) -> RevisionState {
    let symbols = snapshot.symbols();
    let nodes: Vec<_> = r
        .pods
        .iter()
        .filter_map(|p| snapshot.pod_node(snapshot.pod_id(ns, p)?))
        .collect();
    let spread = keys
        .iter()
        .map(|k| {
            let mut counts: BTreeMap<String, u32> = BTreeMap::new();
            if let Some(key) = symbols.get(k) {
                for n in &nodes {
                    if let Some(v) = snapshot.node(*n).node.labels.get(key) {
                        *counts.entry(symbols.resolve(v).to_string()).or_default() += 1;
                    }
                }
            }
            (k.clone(), counts)
        })
        .collect();
    RevisionState {
        replica_set: r.replica_set.clone(),
        pods: r.pods.len(),
        bound: nodes.len(),
        available: r.pods.iter().filter(|p| available.contains(*p)).count(),
        spread,
    }
}
