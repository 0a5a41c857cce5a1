//! A pod's constraints as counting groups, for tools that judge a whole cluster's spread
//! (the rebalance planner) with exactly the constraints, selectors and node inclusion
//! the plugin's PreFilter and PreScore use, instead of a second reading of the spec.

use super::PodTopologySpread;
use super::common::required_keys;
use crate::api::{Pod, Selector, SpreadConstraintSpec, Sym, WhenUnsatisfiable};
use crate::snapshot::{DomainCounts, NodeFilter, NodeId, Snapshot};
use std::sync::Arc;

/// One constraint of one pod as the plugin counts it: pods `selector` matches in
/// `namespace`, summed per domain of `topology_key` over the nodes `filter` admits.
/// Pods whose constraints read the same share one group.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CountingGroup {
    /// The namespace the selector counts pods in (the pod's own).
    pub namespace: Sym,
    /// Whether the constraint is hard (Filter) or soft (Score).
    pub when: WhenUnsatisfiable,
    /// maxSkew.
    pub max_skew: i32,
    /// The node label whose values are the domains.
    pub topology_key: Sym,
    /// The selector as counted (matchLabelKeys merged).
    pub selector: Selector,
    /// minDomains as Filter applies it (1 for soft constraints, which ignore it).
    pub min_domains: i32,
    /// The nodes whose pods count (node inclusion policies, required keys).
    pub filter: NodeFilter,
}

impl CountingGroup {
    /// The matching pods per domain now, from the snapshot's incrementally kept sums.
    pub fn counts(&self, snapshot: &Snapshot) -> Arc<DomainCounts> {
        snapshot.domain_counts(
            self.namespace,
            &self.selector,
            self.topology_key,
            &self.filter,
        )
    }

    /// The global minimum skew is measured against: 0 while fewer domains than
    /// minDomains are eligible (Filter's `minMatchNum`), else the smallest count.
    pub fn min_match(&self, counts: &DomainCounts) -> i64 {
        self.min_match_with(counts.eligible(), counts.min())
    }

    /// [`Self::min_match`] of `eligible` domains whose smallest count is `min`: what a
    /// planner needs to price a removal without applying it.
    pub fn min_match_with(&self, eligible: usize, min: i64) -> i64 {
        if eligible == 0 || eligible < usize::try_from(self.min_domains).unwrap_or(0) {
            0
        } else {
            min
        }
    }

    /// The slot of [`Self::counts`] that `pod`, bound to `node`, counts in; `None` when
    /// it is not counted (terminating, not selected, another namespace, or on a node
    /// the filter leaves out).
    pub fn slot_of(&self, pod: &Pod, node: NodeId, snapshot: &Snapshot) -> Option<usize> {
        if !snapshot.counts_for(pod, self.namespace, &self.selector) {
            return None;
        }
        snapshot.domain_slot(self.topology_key, &self.filter, node)
    }
}

impl PodTopologySpread {
    /// The profile's default constraints (`defaultConstraints`, or the system defaults),
    /// as a pod without constraints of its own is counted by.
    pub fn default_constraints(&self) -> &[SpreadConstraintSpec] {
        &self.default_constraints
    }

    /// The pod's hard constraints (as PreFilter reads them) and soft ones (as PreScore
    /// reads them, defaults included), each as a counting group.
    pub fn counting_groups(&self, pod: &Pod, snapshot: &Snapshot) -> Vec<CountingGroup> {
        let mut groups = Vec::new();
        let hard = self.constraints_for(pod, &WhenUnsatisfiable::DoNotSchedule, snapshot);
        let keys = required_keys(&hard);
        for c in &hard {
            groups.push(CountingGroup {
                namespace: pod.namespace,
                when: WhenUnsatisfiable::DoNotSchedule,
                max_skew: c.max_skew,
                topology_key: c.topology_key,
                selector: c.selector.clone(),
                min_domains: c.min_domains,
                filter: self.node_filter(c, pod, keys.clone()),
            });
        }
        let soft = self.constraints_for(pod, &WhenUnsatisfiable::ScheduleAnyway, snapshot);
        // As PreScore: only a pod's own constraints and non-system defaults need every
        // key on a node; system defaults count each key on its own.
        let require_all = !pod.spread_constraints.is_empty() || !self.system_defaulted;
        let all_keys = required_keys(&soft);
        for c in &soft {
            let keys = if require_all {
                all_keys.clone()
            } else {
                required_keys(std::slice::from_ref(c))
            };
            groups.push(CountingGroup {
                namespace: pod.namespace,
                when: WhenUnsatisfiable::ScheduleAnyway,
                max_skew: c.max_skew,
                topology_key: c.topology_key,
                selector: c.selector.clone(),
                min_domains: 1,
                filter: self.node_filter(c, pod, keys),
            });
        }
        groups
    }
}
