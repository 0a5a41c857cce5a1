//! Pods nominated to a node by preemption (`nominatedNodeName`), and Filter run with
//! them counted: a node keeps the room its nominated pods of equal or higher priority
//! were promised (`RunFilterPluginsWithNominatedPods`).

use super::preemption::{Change, apply};
use crate::api::Pod;
use crate::framework::{CycleState, Profile, Status};
use crate::snapshot::{NodeId, NodeInfo, PodId, Snapshot};
use std::collections::HashMap;

/// Which pending pod is nominated to which node.
#[derive(Clone, Debug, Default)]
pub(crate) struct Nominator {
    by_node: HashMap<NodeId, Vec<PodId>>,
    of_pod: HashMap<PodId, NodeId>,
    /// Bumped by every change, so remembered cycles know the nominations they saw.
    generation: u64,
}

impl Nominator {
    /// Nominates `pod` to `node`, replacing an earlier nomination.
    pub(crate) fn add(&mut self, pod: PodId, node: NodeId) {
        self.delete(pod);
        self.generation += 1;
        self.by_node.entry(node).or_default().push(pod);
        self.of_pod.insert(pod, node);
    }

    /// Clears the pod's nomination, returning the node it had.
    pub(crate) fn delete(&mut self, pod: PodId) -> Option<NodeId> {
        let node = self.of_pod.remove(&pod)?;
        self.generation += 1;
        if let Some(list) = self.by_node.get_mut(&node) {
            list.retain(|p| *p != pod);
            if list.is_empty() {
                self.by_node.remove(&node);
            }
        }
        Some(node)
    }

    /// Drops every nomination to a deleted node, and renumbers the nodes after it as
    /// the cache does when it closes the gap.
    pub(crate) fn delete_node(&mut self, node: NodeId) {
        self.generation += 1;
        for pod in self.by_node.remove(&node).unwrap_or_default() {
            self.of_pod.remove(&pod);
        }
        let shift = |n: NodeId| if n > node { NodeId(n.0 - 1) } else { n };
        self.by_node = std::mem::take(&mut self.by_node)
            .into_iter()
            .map(|(n, pods)| (shift(n), pods))
            .collect();
        for n in self.of_pod.values_mut() {
            *n = shift(*n);
        }
    }

    /// A number that changes with every nomination made or cleared.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// The node the pod is nominated to.
    pub(crate) fn node_of(&self, pod: PodId) -> Option<NodeId> {
        self.of_pod.get(&pod).copied()
    }

    /// The pods nominated to `node`.
    pub(crate) fn on_node(&self, node: NodeId) -> &[PodId] {
        self.by_node.get(&node).map_or(&[], Vec::as_slice)
    }

    /// Whether no pod is nominated anywhere (the common case: Filter runs once).
    pub(crate) fn is_empty(&self) -> bool {
        self.of_pod.is_empty()
    }
}

/// The nominated pods on `node` that `pod` must leave room for: pending, other than
/// `pod`, and of equal or higher priority.
fn to_count<'a>(
    nominator: &Nominator,
    snapshot: &'a Snapshot,
    pod: &Pod,
    node: NodeId,
) -> Vec<(PodId, &'a Pod)> {
    nominator
        .on_node(node)
        .iter()
        .filter(|id| snapshot.pod_node(**id).is_none())
        .filter_map(|id| snapshot.pod(*id).map(|p| (*id, p)))
        .filter(|(_, p)| {
            p.priority >= pod.priority && !(p.namespace == pod.namespace && p.name == pod.name)
        })
        .collect()
}

/// Whether `node` has nominated pods `pod` must count.
pub(super) fn affects(nominator: &Nominator, snapshot: &Snapshot, pod: &Pod, node: NodeId) -> bool {
    !nominator.is_empty() && !to_count(nominator, snapshot, pod, node).is_empty()
}

/// A copy of the node and of the cycle state with the nominated pods `pod` must count
/// added, through every PreFilter plugin's AddPod (`addGENominatedPods`); `None` when
/// there are none.
pub(super) fn with_nominated(
    profile: &Profile,
    nominator: &Nominator,
    state: &CycleState,
    pod: &Pod,
    node: &NodeInfo,
    snapshot: &Snapshot,
) -> Result<Option<(CycleState, NodeInfo)>, Status> {
    let nominated = to_count(nominator, snapshot, pod, node.id);
    if nominated.is_empty() {
        return Ok(None);
    }
    let mut state_with = state.clone();
    let mut node_with = node.clone();
    for (id, p) in nominated {
        apply(
            Change::Add,
            profile,
            &mut state_with,
            pod,
            &mut node_with,
            id,
            p,
            snapshot,
        )?;
    }
    Ok(Some((state_with, node_with)))
}

/// The nominated pods on `node` that `pod` counts, as `namespace/name`.
pub(super) fn counted(
    nominator: &Nominator,
    snapshot: &Snapshot,
    pod: &Pod,
    node: NodeId,
) -> Vec<String> {
    to_count(nominator, snapshot, pod, node)
        .into_iter()
        .map(|(_, p)| format!("{}/{}", snapshot.symbols().resolve(p.namespace), p.name))
        .collect()
}

/// Filter with the nominated pods added to a copy of the node and of the cycle state;
/// if that passes, Filter once more without them, since they may never bind there
/// (`RunFilterPluginsWithNominatedPods`).
pub(super) fn filter(
    profile: &Profile,
    nominator: &Nominator,
    state: &CycleState,
    pod: &Pod,
    node: &NodeInfo,
    snapshot: &Snapshot,
) -> Status {
    match with_nominated(profile, nominator, state, pod, node, snapshot) {
        Err(s) => return s,
        Ok(Some((state_with, node_with))) => {
            let s = profile
                .active_filters(&state_with)
                .run(&state_with, pod, &node_with, snapshot);
            if !s.is_success() {
                return s;
            }
        }
        Ok(None) => {}
    }
    profile
        .active_filters(state)
        .run(state, pod, node, snapshot)
}
