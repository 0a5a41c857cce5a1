//! PreFilter and Filter: required affinity and anti-affinity.

use super::{InterPodAffinity, TopologyCounts, merge_namespaces, namespace_labels, update};
use crate::api::{AffinityTerm, Labels, Pod, Sym, Symbols};
use crate::framework::{Code, CycleState, FilterPlugin, PreFilterPlugin, Status};
use crate::snapshot::{NodeInfo, Snapshot};

/// Filter's reason when an existing pod's anti-affinity forbids the node.
pub const ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: &str =
    "node(s) didn't satisfy existing pods anti-affinity rules";
/// Filter's reason when the pod's affinity is not met on the node.
pub const ERR_REASON_AFFINITY_RULES_NOT_MATCH: &str = "node(s) didn't match pod affinity rules";
/// Filter's reason when the pod's anti-affinity is not met on the node.
pub const ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: &str =
    "node(s) didn't match pod anti-affinity rules";

/// PreFilter state: the incoming pod's merged terms and the three topology counts.
#[derive(Clone, Debug, Default)]
pub struct AffinityPreFilterState {
    namespace: Option<Sym>,
    labels: Labels,
    namespace_labels: Labels,
    required_affinity: Vec<AffinityTerm>,
    required_anti_affinity: Vec<AffinityTerm>,
    matches_own_affinity: bool,
    existing_anti_affinity_counts: TopologyCounts,
    affinity_counts: TopologyCounts,
    anti_affinity_counts: TopologyCounts,
}

/// Whether `pod` matches every term (`podMatchesAllAffinityTerms`); false for no terms.
fn matches_all(terms: &[AffinityTerm], namespace: Sym, labels: &Labels, symbols: &Symbols) -> bool {
    let empty = Labels::default();
    !terms.is_empty()
        && terms
            .iter()
            .all(|t| t.matches(namespace, labels, &empty, symbols))
}

impl AffinityPreFilterState {
    /// Applies `other` (bound to `node`) with `sign` +1 or -1 (`updateWithPod`).
    fn update_with_pod(&mut self, other: &Pod, node: &NodeInfo, sign: i64, symbols: &Symbols) {
        let Some(namespace) = self.namespace else {
            return;
        };
        let empty = Labels::default();
        for t in &other.affinity.required_anti_affinity {
            if t.matches(namespace, &self.labels, &self.namespace_labels, symbols) {
                update(
                    &mut self.existing_anti_affinity_counts,
                    &node.node,
                    t.topology_key,
                    sign,
                );
            }
        }
        if matches_all(
            &self.required_affinity,
            other.namespace,
            &other.labels,
            symbols,
        ) {
            for t in &self.required_affinity {
                update(&mut self.affinity_counts, &node.node, t.topology_key, sign);
            }
        }
        for t in &self.required_anti_affinity {
            if t.matches(other.namespace, &other.labels, &empty, symbols) {
                update(
                    &mut self.anti_affinity_counts,
                    &node.node,
                    t.topology_key,
                    sign,
                );
            }
        }
    }
}

impl InterPodAffinity {
    fn pre_filter_state(&self, pod: &Pod, snapshot: &Snapshot) -> AffinityPreFilterState {
        let symbols = snapshot.symbols();
        let mut s = AffinityPreFilterState {
            namespace: Some(pod.namespace),
            labels: pod.labels.clone(),
            namespace_labels: namespace_labels(snapshot, pod.namespace),
            required_affinity: pod
                .affinity
                .required_affinity
                .iter()
                .map(|t| merge_namespaces(t, snapshot))
                .collect(),
            required_anti_affinity: pod
                .affinity
                .required_anti_affinity
                .iter()
                .map(|t| merge_namespaces(t, snapshot))
                .collect(),
            ..AffinityPreFilterState::default()
        };
        s.matches_own_affinity =
            matches_all(&s.required_affinity, pod.namespace, &pod.labels, symbols);
        for node in snapshot.nodes_with_required_anti_affinity() {
            for &id in node.pods_with_required_anti_affinity() {
                let Some(existing) = snapshot.pod(id) else {
                    continue;
                };
                for t in &existing.affinity.required_anti_affinity {
                    if t.matches(pod.namespace, &pod.labels, &s.namespace_labels, symbols) {
                        update(
                            &mut s.existing_anti_affinity_counts,
                            &node.node,
                            t.topology_key,
                            1,
                        );
                    }
                }
            }
        }
        if s.required_affinity.is_empty() && s.required_anti_affinity.is_empty() {
            return s;
        }
        let empty = Labels::default();
        for node in snapshot.nodes() {
            for existing in node.pods().iter().filter_map(|&id| snapshot.pod(id)) {
                if matches_all(
                    &s.required_affinity,
                    existing.namespace,
                    &existing.labels,
                    symbols,
                ) {
                    for t in &s.required_affinity {
                        update(&mut s.affinity_counts, &node.node, t.topology_key, 1);
                    }
                }
                for t in &s.required_anti_affinity {
                    if t.matches(existing.namespace, &existing.labels, &empty, symbols) {
                        update(&mut s.anti_affinity_counts, &node.node, t.topology_key, 1);
                    }
                }
            }
        }
        s
    }
}

impl PreFilterPlugin for InterPodAffinity {
    fn pre_filter(&self, state: &mut CycleState, pod: &Pod, snapshot: &Snapshot) -> Status {
        if let Some(e) = &pod.affinity.error {
            return Status::new(
                Code::UnschedulableAndUnresolvable,
                format!("parsing pod: {e}"),
            );
        }
        let s = self.pre_filter_state(pod, snapshot);
        if s.existing_anti_affinity_counts.is_empty()
            && s.required_affinity.is_empty()
            && s.required_anti_affinity.is_empty()
        {
            return Status::skip();
        }
        state.write(s);
        Status::success()
    }

    fn add_pod(
        &self,
        state: &mut CycleState,
        _: &Pod,
        added: &Pod,
        node: &NodeInfo,
        snapshot: &Snapshot,
    ) -> Status {
        match state.require_mut::<AffinityPreFilterState>("PreFilterInterPodAffinity") {
            Ok(s) => {
                s.update_with_pod(added, node, 1, snapshot.symbols());
                Status::success()
            }
            Err(status) => status,
        }
    }

    fn remove_pod(
        &self,
        state: &mut CycleState,
        _: &Pod,
        removed: &Pod,
        node: &NodeInfo,
        snapshot: &Snapshot,
    ) -> Status {
        match state.require_mut::<AffinityPreFilterState>("PreFilterInterPodAffinity") {
            Ok(s) => {
                s.update_with_pod(removed, node, -1, snapshot.symbols());
                Status::success()
            }
            Err(status) => status,
        }
    }
}

fn satisfies_pod_affinity(s: &AffinityPreFilterState, node: &NodeInfo) -> bool {
    let mut pods_exist = true;
    for t in &s.required_affinity {
        let Some(v) = node.node.labels.get(t.topology_key) else {
            // Every topology label must exist on the node.
            return false;
        };
        if s.affinity_counts
            .get(&(t.topology_key, v))
            .copied()
            .unwrap_or(0)
            <= 0
        {
            pods_exist = false;
        }
    }
    // The first pod of a group with affinity to itself may go anywhere its terms fit.
    pods_exist || (s.affinity_counts.is_empty() && s.matches_own_affinity)
}

fn satisfies_pod_anti_affinity(s: &AffinityPreFilterState, node: &NodeInfo) -> bool {
    s.anti_affinity_counts.is_empty()
        || !s.required_anti_affinity.iter().any(|t| {
            node.node.labels.get(t.topology_key).is_some_and(|v| {
                s.anti_affinity_counts
                    .get(&(t.topology_key, v))
                    .is_some_and(|&c| c > 0)
            })
        })
}

fn satisfies_existing_anti_affinity(s: &AffinityPreFilterState, node: &NodeInfo) -> bool {
    s.existing_anti_affinity_counts.is_empty()
        || !node.node.labels.iter().any(|pair| {
            s.existing_anti_affinity_counts
                .get(&pair)
                .is_some_and(|&c| c > 0)
        })
}

impl FilterPlugin for InterPodAffinity {
    fn filter(&self, state: &CycleState, _: &Pod, node: &NodeInfo, _: &Snapshot) -> Status {
        let s = match state.require::<AffinityPreFilterState>("PreFilterInterPodAffinity") {
            Ok(s) => s,
            Err(status) => return status,
        };
        if !satisfies_pod_affinity(s, node) {
            return Status::new(
                Code::UnschedulableAndUnresolvable,
                ERR_REASON_AFFINITY_RULES_NOT_MATCH,
            );
        }
        if !satisfies_pod_anti_affinity(s, node) {
            return Status::new(
                Code::Unschedulable,
                ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
            );
        }
        if !satisfies_existing_anti_affinity(s, node) {
            return Status::new(
                Code::Unschedulable,
                ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
            );
        }
        Status::success()
    }
}
