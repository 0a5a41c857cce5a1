//! The reference for the guard's planner, kept only as a test oracle: the walk as it
//! was first written, which removes each candidate from the snapshot, recounts every
//! domain of every constraint and puts the pod back (about n^2 x domains per
//! ReplicaSet). [`super::Tally`] must order and measure exactly as this does.

use super::{GuardError, Measure, Member, RemovalRank, Removals, measure};
use crate::controller::PhaseRank;
use std::collections::HashMap;
use topospread::plugins::podtopologyspread::CountingGroup;
use topospread::snapshot::{NodeId, Snapshot};

/// Recounts the snapshot for every trial removal.
pub(super) struct Recount;

impl Removals for Recount {
    fn start(_: &Snapshot, _: &[&CountingGroup], _: &[Member]) -> Self {
        Recount
    }

    fn walk(
        &mut self,
        snapshot: &mut Snapshot,
        groups: &[&CountingGroup],
        members: &mut [Member],
    ) -> Result<Vec<usize>, GuardError> {
        let mut left: Vec<usize> = (0..members.len()).filter(|&k| members[k].free).collect();
        let mut order = Vec::new();
        let mut removed = Vec::new();
        let states: Vec<(PhaseRank, bool)> = members
            .iter()
            .map(|m| (m.pod.candidate.phase, m.pod.candidate.ready))
            .collect();
        let state = |k: usize| states[k];
        while !left.is_empty() {
            let Some(first): Option<(PhaseRank, bool)> = left.iter().map(|&k| state(k)).min()
            else {
                break;
            };
            let mut per_node: HashMap<NodeId, usize> = HashMap::new();
            for m in members.iter() {
                if let Some(n) = m.id.and_then(|id| snapshot.pod_node(id)) {
                    *per_node.entry(n).or_default() += 1;
                }
            }
            let mut tried: HashMap<NodeId, ()> = HashMap::new();
            let mut best: Option<(RemovalRank, usize)> = None;
            // The latest name first, so that of equal pods the latest goes.
            for &k in left.iter().rev().filter(|&&k| state(k) == first) {
                let Some(id) = members[k].id else { continue };
                let Some(node) = snapshot.pod_node(id) else {
                    continue;
                };
                if tried.insert(node, ()).is_some() {
                    continue;
                }
                let Some(pod) = snapshot.remove_pod(id) else {
                    continue;
                };
                let after = measure(snapshot, groups);
                let evenness = sum_of_squares(snapshot, groups);
                members[k].id = Some(snapshot.add_pod(pod)?);
                let crowd = per_node.get(&node).copied().unwrap_or(0);
                let key = (after.violation, evenness, std::cmp::Reverse(crowd));
                if best.as_ref().is_none_or(|(b, _)| key < *b) {
                    best = Some((key, k));
                }
            }
            let Some((_, k)) = best else { break };
            if let Some(pod) = members[k].id.and_then(|id| snapshot.remove_pod(id)) {
                removed.push((k, pod));
            }
            left.retain(|&x| x != k);
            order.push(k);
        }
        restore(snapshot, members, removed)?;
        Ok(order)
    }

    fn scale_in(
        &mut self,
        snapshot: &mut Snapshot,
        groups: &[&CountingGroup],
        members: &mut [Member],
        order: &[usize],
    ) -> Result<Vec<Measure>, GuardError> {
        let mut removed = Vec::new();
        let mut steps = Vec::new();
        for &k in order {
            if let Some(pod) = members[k].id.and_then(|id| snapshot.remove_pod(id)) {
                removed.push((k, pod));
            }
            steps.push(measure(snapshot, groups));
        }
        restore(snapshot, members, removed)?;
        Ok(steps)
    }
}

/// Puts removed pods back and records their new ids.
fn restore(
    snapshot: &mut Snapshot,
    members: &mut [Member],
    removed: Vec<(usize, topospread::api::Pod)>,
) -> Result<(), GuardError> {
    for (k, pod) in removed.into_iter().rev() {
        members[k].id = Some(snapshot.add_pod(pod)?);
    }
    Ok(())
}

/// How uneven the groups are: the sum of squared domain counts (lower is more even).
fn sum_of_squares(snapshot: &Snapshot, groups: &[&CountingGroup]) -> i64 {
    groups
        .iter()
        .map(|g| g.counts(snapshot).iter().map(|(_, c)| c * c).sum::<i64>())
        .sum()
}
