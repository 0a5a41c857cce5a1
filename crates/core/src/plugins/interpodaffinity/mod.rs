//! InterPodAffinity: required pod affinity and anti-affinity (the incoming pod's and the
//! existing pods'), as Filter; preferred terms (both ways) and existing pods' required
//! affinity, as Score.

use crate::framework::{ActionType as A, ClusterEvent, EventResource as R};
mod filtering;
mod scoring;
#[cfg(test)]
mod tests;

pub use filtering::{
    AffinityPreFilterState, ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
};
pub use scoring::AffinityPreScoreState;

use crate::api::{AffinityTerm, Labels, Node, Selector, Sym};
use crate::config::InterPodAffinityArgs;
use crate::framework::Plugin;
use crate::snapshot::Snapshot;
use std::collections::HashMap;

/// The plugin's registry name.
pub const NAME: &str = "InterPodAffinity";

/// Why the plugin could not be built from its args.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("hardPodAffinityWeight: Invalid value: {0}: not in valid range [0, 100]")]
pub struct HardPodAffinityWeightError(pub i32);

/// The InterPodAffinity plugin.
#[derive(Clone, Debug)]
pub struct InterPodAffinity {
    hard_pod_affinity_weight: i64,
    ignore_preferred_terms_of_existing_pods: bool,
}

impl Default for InterPodAffinity {
    fn default() -> Self {
        Self {
            hard_pod_affinity_weight: 1,
            ignore_preferred_terms_of_existing_pods: false,
        }
    }
}

impl InterPodAffinity {
    /// Builds the plugin from its args (`hardPodAffinityWeight` defaults to 1).
    pub fn new(args: &InterPodAffinityArgs) -> Result<Self, HardPodAffinityWeightError> {
        let weight = args.hard_pod_affinity_weight.unwrap_or(1);
        if !(0..=100).contains(&weight) {
            return Err(HardPodAffinityWeightError(weight));
        }
        Ok(Self {
            hard_pod_affinity_weight: i64::from(weight),
            ignore_preferred_terms_of_existing_pods: args.ignore_preferred_terms_of_existing_pods,
        })
    }
}

impl Plugin for InterPodAffinity {
    fn name(&self) -> &'static str {
        NAME
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(R::AssignedPod, A::ALL),
            ClusterEvent::new(R::Node, A::ADD | A::UPDATE_NODE_LABEL),
        ]
    }
}

/// Counts of matched terms per topology pair (key, value).
pub(crate) type TopologyCounts = HashMap<(Sym, Sym), i64>;

/// Adds `value` to the node's pair for `key`, if the node carries it; a pair that drops
/// to zero is removed, as upstream's map entries are.
pub(crate) fn update(counts: &mut TopologyCounts, node: &Node, key: Sym, value: i64) {
    if let Some(v) = node.labels.get(key) {
        let c = counts.entry((key, v)).or_insert(0);
        *c += value;
        if *c == 0 {
            counts.remove(&(key, v));
        }
    }
}

/// The incoming pod's term with its namespace selector unrolled into namespaces
/// (`mergeAffinityTermNamespacesIfNotEmpty`): an empty selector (everything) stays.
pub(crate) fn merge_namespaces(term: &AffinityTerm, snapshot: &Snapshot) -> AffinityTerm {
    if term.namespace_selector.is_empty() {
        return term.clone();
    }
    let mut namespaces = term.namespaces.to_vec();
    namespaces.extend(
        snapshot
            .namespaces()
            .filter(|(_, labels)| term.namespace_selector.matches(labels, snapshot.symbols()))
            .map(|(n, _)| n),
    );
    namespaces.sort_unstable();
    namespaces.dedup();
    AffinityTerm {
        namespaces: namespaces.into_boxed_slice(),
        namespace_selector: Selector::Nothing,
        ..term.clone()
    }
}

/// The labels of a namespace (empty when unknown).
pub(crate) fn namespace_labels(snapshot: &Snapshot, namespace: Sym) -> Labels {
    snapshot
        .namespace_labels(namespace)
        .cloned()
        .unwrap_or_default()
}
