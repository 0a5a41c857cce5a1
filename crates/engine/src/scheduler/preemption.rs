//! DefaultPreemption's PostFilter (upstream's `preemption.Evaluator` with the default
//! plugin's victim selection): when no node fits, find nodes where evicting
//! lower-priority pods makes room, pick the best by upstream's ordered criteria, and
//! nominate it. PodDisruptionBudgets are not modelled (no pod violates one).

use super::fit_error::{Diagnosis, fit_error_message};
use super::rng::Rng;
use crate::api::Pod;
use crate::framework::{Code, CycleState, Profile, Status};
use crate::snapshot::{NodeId, NodeInfo, PodId, Snapshot};

/// `minCandidateNodesPercentage` default.
pub const MIN_CANDIDATE_NODES_PERCENTAGE: usize = 10;
/// `minCandidateNodesAbsolute` default.
pub const MIN_CANDIDATE_NODES_ABSOLUTE: usize = 100;
/// Status of a node where nothing can be evicted.
pub const NO_VICTIMS: &str = "No preemption victims found for incoming pod";
/// Status of nodes preemption cannot help (UnschedulableAndUnresolvable ones).
pub const NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";

/// A preemption DefaultPreemption decided on: evict `victims` and nominate `node`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preemption {
    /// The nominated node.
    pub node: NodeId,
    /// The pods to evict, most important first.
    pub victims: Vec<PodId>,
}

/// What `preempt` needs from the failed cycle.
pub(super) struct Failed<'a> {
    pub(super) state: &'a CycleState,
    /// Filter's rejections.
    pub(super) statuses: &'a [(NodeId, Status)],
    /// The status every other node got (a PreFilter rejection), if any.
    pub(super) absent: Option<&'a Status>,
}

/// `MoreImportantPod`: higher priority, then earlier start (arrival order here).
fn more_important(snapshot: &Snapshot, a: PodId, b: PodId) -> std::cmp::Ordering {
    let prio = |id| snapshot.pod(id).map_or(0, |p| p.priority);
    prio(b).cmp(&prio(a)).then(a.cmp(&b))
}

/// Whether a victim leaves the simulated node or comes back to it.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) enum Change {
    Remove,
    Add,
}

/// Applies a victim's removal or return to the node copy and to every active PreFilter
/// plugin's state (`RemovePod` / `AddPod`).
#[allow(clippy::too_many_arguments)]
pub(super) fn apply(
    change: Change,
    profile: &Profile,
    state: &mut CycleState,
    pod: &Pod,
    node: &mut NodeInfo,
    id: PodId,
    victim: &Pod,
    snapshot: &Snapshot,
) -> Result<(), Status> {
    match change {
        Change::Remove => node.remove_pod(id, victim),
        Change::Add => node.add_pod(id, victim),
    }
    for pl in &profile.pre_filter {
        if state.is_filter_skipped(pl.name()) {
            continue;
        }
        let s = match change {
            Change::Remove => pl.remove_pod(state, pod, victim, node, snapshot),
            Change::Add => pl.add_pod(state, pod, victim, node, snapshot),
        };
        if !s.is_success() {
            return Err(s);
        }
    }
    Ok(())
}

/// `SelectVictimsOnNode`: remove every lower-priority pod; if the pod then fits,
/// reprieve as many as possible, most important first.
fn select_victims(
    profile: &Profile,
    state: &CycleState,
    pod: &Pod,
    node: NodeId,
    snapshot: &Snapshot,
) -> Result<Vec<PodId>, Status> {
    let mut state = state.clone();
    let mut info = snapshot.node(node).clone();
    let mut potential: Vec<PodId> = info
        .pods()
        .iter()
        .copied()
        .filter(|&id| snapshot.pod(id).is_some_and(|p| p.priority < pod.priority))
        .collect();
    for &id in &potential {
        if let Some(v) = snapshot.pod(id) {
            apply(
                Change::Remove,
                profile,
                &mut state,
                pod,
                &mut info,
                id,
                v,
                snapshot,
            )?;
        }
    }
    if potential.is_empty() {
        return Err(Status::new(Code::UnschedulableAndUnresolvable, NO_VICTIMS));
    }
    let filters = profile.active_filters(&state);
    let s = filters.run(&state, pod, &info, snapshot);
    if !s.is_success() {
        return Err(s);
    }
    potential.sort_by(|a, b| more_important(snapshot, *a, *b));
    let mut victims = Vec::new();
    for id in potential {
        let Some(v) = snapshot.pod(id) else { continue };
        apply(
            Change::Add,
            profile,
            &mut state,
            pod,
            &mut info,
            id,
            v,
            snapshot,
        )?;
        if !filters.run(&state, pod, &info, snapshot).is_success() {
            apply(
                Change::Remove,
                profile,
                &mut state,
                pod,
                &mut info,
                id,
                v,
                snapshot,
            )?;
            victims.push(id);
        }
    }
    Ok(victims)
}

/// `pickOneNodeForPreemption` without PDBs: lowest top victim priority, then lowest
/// priority sum, then fewest victims, then the latest start of the top-priority
/// victims, then the first candidate.
fn pick(candidates: &[(NodeId, Vec<PodId>)], snapshot: &Snapshot) -> Option<usize> {
    let prio = |id: &PodId| i64::from(snapshot.pod(*id).map_or(0, |p| p.priority));
    type Key = fn(&[PodId], &dyn Fn(&PodId) -> i64) -> i64;
    let keys: [Key; 4] = [
        |v, prio| -v.first().map_or(i64::MIN, prio),
        |v, prio| {
            -v.iter()
                .map(|id| prio(id) + i64::from(i32::MAX) + 1)
                .sum::<i64>()
        },
        |v, _| -i64::try_from(v.len()).unwrap_or(i64::MAX),
        |v, prio| {
            // Start order stands in for start time: the earliest top-priority victim.
            let top = v.first().map_or(0, prio);
            v.iter()
                .filter(|id| prio(id) == top)
                .map(|id| i64::from(id.0))
                .min()
                .unwrap_or(0)
        },
    ];
    let mut left: Vec<usize> = (0..candidates.len()).collect();
    for key in keys {
        if left.len() <= 1 {
            break;
        }
        let scored: Vec<(usize, i64)> = left
            .iter()
            .map(|&i| (i, key(&candidates[i].1, &prio)))
            .collect();
        let best = scored.iter().map(|s| s.1).max().unwrap_or(0);
        left = scored
            .into_iter()
            .filter(|s| s.1 == best)
            .map(|s| s.0)
            .collect();
    }
    left.first().copied()
}

/// DefaultPreemption's PostFilter. `Ok` nominates a node; `Err` is the PostFilter
/// message (already prefixed `preemption: `).
pub(super) fn preempt(
    profile: &Profile,
    snapshot: &Snapshot,
    pod: &Pod,
    failed: &Failed<'_>,
    rng: &mut Rng,
) -> Result<Preemption, String> {
    if pod.preemption_never {
        return Err("preemption: not eligible due to preemptionPolicy=Never.".into());
    }
    let all = snapshot.nodes().len();
    let absent_code = failed.absent.map(Status::code);
    let mut codes: Vec<Option<Code>> = vec![absent_code; all];
    for (id, s) in failed.statuses {
        if let Some(slot) = codes.get_mut(id.index()) {
            *slot = Some(s.code());
        }
    }
    let potential: Vec<NodeId> = snapshot
        .nodes()
        .iter()
        .zip(codes)
        .filter(|(_, code)| *code == Some(Code::Unschedulable))
        .map(|(n, _)| n.id)
        .collect();
    let not_helpful = Some(Status::new(Code::UnschedulableAndUnresolvable, NOT_HELPFUL));
    if potential.is_empty() {
        let d = Diagnosis {
            absent: not_helpful,
            ..Diagnosis::default()
        };
        return Err(format!("preemption: {}", fit_error_message(all, &d)));
    }
    let offset = rng.below(potential.len());
    let wanted = (potential.len() * MIN_CANDIDATE_NODES_PERCENTAGE / 100)
        .max(MIN_CANDIDATE_NODES_ABSOLUTE)
        .min(potential.len());
    let mut candidates = Vec::new();
    let mut statuses = Vec::new();
    for i in 0..potential.len() {
        let node = potential[(offset + i) % potential.len()];
        match select_victims(profile, failed.state, pod, node, snapshot) {
            Ok(v) if !v.is_empty() => {
                candidates.push((node, v));
                if candidates.len() >= wanted {
                    break;
                }
            }
            Ok(_) => statuses.push(Status::error(format!(
                "expected at least one victim pod on node {:?}",
                snapshot.node(node).node.name
            ))),
            Err(s) => statuses.push(s),
        }
    }
    match pick(&candidates, snapshot) {
        Some(i) => {
            let (node, victims) = candidates.swap_remove(i);
            Ok(Preemption { node, victims })
        }
        None => {
            let d = Diagnosis {
                explicit: statuses,
                absent: not_helpful,
                pre_filter_msg: None,
            };
            Err(format!("preemption: {}", fit_error_message(all, &d)))
        }
    }
}
