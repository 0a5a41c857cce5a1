//! PreFilter and Filter: hard (`DoNotSchedule`) constraints.

use super::PodTopologySpread;
use super::common::{Constraint, node_has_all_keys};
use crate::api::{Pod, WhenUnsatisfiable};
use crate::framework::{Code, CycleState, FilterPlugin, PreFilterPlugin, Status};
use crate::snapshot::{NO_DOMAIN, NodeInfo, Snapshot};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The state key upstream reads PreFilter's state under; named in internal errors.
const PRE_FILTER_STATE_KEY: &str = "PreFilterPodTopologySpread";

/// Filter's reason when a node breaks a constraint (`ErrReasonConstraintsNotMatch`).
pub const ERR_REASON_CONSTRAINTS_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints";
/// Filter's reason when a node lacks a constraint's topology key (`ErrReasonNodeLabelNotMatch`).
pub const ERR_REASON_NODE_LABEL_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";

/// The matching-pod counts of one constraint's eligible domains, with the global minimum
/// tracked exactly under `add_pod`/`remove_pod` (a histogram of counts, so the minimum
/// is always the true one; upstream's two "critical paths" can drift after several updates).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DomainCounts {
    /// Count per domain index of the topology key; meaningful where `present`.
    counts: Vec<i64>,
    /// Whether the domain is eligible (holds a node that passed the inclusion checks).
    present: Vec<bool>,
    /// How many domains are eligible.
    eligible: usize,
    /// Count value -> how many eligible domains have it.
    histogram: BTreeMap<i64, u32>,
}

impl DomainCounts {
    fn with_domains(n: usize) -> Self {
        Self {
            counts: vec![0; n],
            present: vec![false; n],
            ..Self::default()
        }
    }

    /// Adds `n` matching pods to a domain while PreFilter sums; [`Self::finish`] follows.
    #[inline]
    fn accumulate(&mut self, domain: usize, n: i64) {
        if !self.present[domain] {
            self.present[domain] = true;
            self.eligible += 1;
        }
        self.counts[domain] += n;
    }

    /// Builds the histogram once every domain's count is summed.
    fn finish(&mut self) {
        self.histogram.clear();
        for (c, p) in self.counts.iter().zip(&self.present) {
            if *p {
                *self.histogram.entry(*c).or_default() += 1;
            }
        }
    }

    /// Adds `delta` matching pods to a domain, making it eligible if it was not.
    fn update(&mut self, domain: usize, delta: i64) {
        if domain >= self.counts.len() {
            self.counts.resize(domain + 1, 0);
            self.present.resize(domain + 1, false);
        }
        if self.present[domain] {
            let old = self.counts[domain];
            if let Some(n) = self.histogram.get_mut(&old) {
                *n -= 1;
                if *n == 0 {
                    self.histogram.remove(&old);
                }
            }
        } else {
            self.present[domain] = true;
            self.eligible += 1;
        }
        self.counts[domain] += delta;
        *self.histogram.entry(self.counts[domain]).or_default() += 1;
    }

    /// The smallest count over eligible domains; `i32::MAX` when none is eligible (as upstream).
    pub(crate) fn min(&self) -> i64 {
        self.histogram
            .keys()
            .next()
            .copied()
            .unwrap_or(i64::from(i32::MAX))
    }

    /// The count of a domain (0 when it is not eligible).
    pub(crate) fn count(&self, domain: usize) -> i64 {
        match self.present.get(domain) {
            Some(true) => self.counts[domain],
            _ => 0,
        }
    }

    /// How many domains are eligible.
    pub(crate) fn eligible(&self) -> usize {
        self.eligible
    }

    /// `(domain, count)` for every eligible domain.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, i64)> + '_ {
        self.counts
            .iter()
            .zip(&self.present)
            .enumerate()
            .filter(|(_, (_, p))| **p)
            .map(|(d, (c, _))| (d, *c))
    }
}

/// What PreFilter computes for Filter (`preFilterState` upstream).
#[derive(Clone, Debug, Default)]
pub struct PreFilterState {
    pub(crate) constraints: Vec<Constraint>,
    pub(crate) domains: Vec<DomainCounts>,
    /// Per constraint: each node's domain (shared with the snapshot, not copied).
    node_domains: Vec<Arc<Vec<u32>>>,
    /// Per constraint: whether the incoming pod matches its own selector.
    self_match: Vec<i64>,
    /// Per constraint: the global minimum with minDomains applied, kept current.
    min_match: Vec<i64>,
}

impl PreFilterState {
    /// Matching pods per eligible domain, one map per hard constraint, for reports and tests.
    pub fn domain_counts(&self, snapshot: &Snapshot) -> Vec<BTreeMap<String, i64>> {
        let symbols = snapshot.symbols();
        self.constraints
            .iter()
            .zip(&self.domains)
            .map(|(c, d)| {
                let Some(keys) = snapshot.domains(c.topology_key) else {
                    return BTreeMap::new();
                };
                d.iter()
                    .map(|(dom, n)| {
                        let value = u32::try_from(dom).map_or(String::new(), |dom| {
                            symbols.resolve(keys.value(dom)).to_string()
                        });
                        (value, n)
                    })
                    .collect()
            })
            .collect()
    }

    /// The tracked minimum count over each hard constraint's eligible domains (`None`
    /// when a constraint has no eligible domain), before minDomains is applied.
    pub fn minimums(&self) -> Vec<Option<i64>> {
        self.domains
            .iter()
            .map(|d| (d.eligible() > 0).then(|| d.min()))
            .collect()
    }

    /// The global minimum a constraint's skew is measured against, with minDomains applied.
    fn compute_min_match(&self, i: usize) -> i64 {
        let d = &self.domains[i];
        if d.eligible() < usize::try_from(self.constraints[i].min_domains).unwrap_or(0) {
            0
        } else {
            d.min()
        }
    }

    /// Refreshes the cached minimums after the counts changed.
    fn refresh_minimums(&mut self) {
        self.min_match = (0..self.constraints.len())
            .map(|i| self.compute_min_match(i))
            .collect();
    }
}

impl PodTopologySpread {
    /// `calPreFilterState`: counts matching pods per domain over every eligible node.
    pub(crate) fn pre_filter_state(&self, pod: &Pod, snapshot: &Snapshot) -> PreFilterState {
        let constraints = self.constraints_for(pod, &WhenUnsatisfiable::DoNotSchedule, snapshot);
        if constraints.is_empty() {
            return PreFilterState::default();
        }
        let symbols = snapshot.symbols();
        let per_constraint: Vec<_> = constraints
            .iter()
            .map(|c| {
                let domains = snapshot.domains(c.topology_key);
                let counts = snapshot.match_counts(pod.namespace, &c.selector);
                (domains, counts)
            })
            .collect();
        let mut domains: Vec<DomainCounts> = per_constraint
            .iter()
            .map(|(d, _)| DomainCounts::with_domains(d.map_or(0, |d| d.len())))
            .collect();
        // Policies are per constraint, but most pods share one pair: check each node once
        // per distinct (affinity, taints) pair rather than once per constraint.
        let mut verdicts: [Option<bool>; 4];
        for node in snapshot.nodes() {
            let labels = &node.node.labels;
            if !self.features.node_inclusion_policy
                && !pod
                    .required_node_affinity
                    .matches(labels, &node.node.name, symbols)
            {
                continue;
            }
            if !node_has_all_keys(labels, &constraints) {
                continue;
            }
            verdicts = [None; 4];
            let idx = node.id.index();
            for (i, c) in constraints.iter().enumerate() {
                if self.features.node_inclusion_policy {
                    let slot = &mut verdicts
                        [(c.node_affinity_policy as usize) * 2 + c.node_taints_policy as usize];
                    let included =
                        *slot.get_or_insert_with(|| self.node_included(c, pod, node, symbols));
                    if !included {
                        continue;
                    }
                }
                let (Some(keys), counts) = &per_constraint[i] else {
                    continue;
                };
                let dom = keys.domain_of(idx);
                if dom == NO_DOMAIN {
                    continue;
                }
                domains[i].accumulate(dom as usize, i64::from(counts[idx]));
            }
        }
        for d in &mut domains {
            d.finish();
        }
        let node_domains = per_constraint
            .iter()
            .map(|(d, _)| d.map_or_else(|| Arc::new(Vec::new()), |d| d.shared_node_domains()))
            .collect();
        let self_match = constraints
            .iter()
            .map(|c| i64::from(c.selector.matches(&pod.labels, symbols)))
            .collect();
        let mut state = PreFilterState {
            constraints,
            domains,
            node_domains,
            self_match,
            min_match: Vec::new(),
        };
        state.refresh_minimums();
        state
    }

    /// `updateWithPod`: the preemption path's view of a pod added (`delta` 1) or removed (-1).
    fn update_with_pod(
        &self,
        state: &mut PreFilterState,
        updated: &Pod,
        preemptor: &Pod,
        node: &NodeInfo,
        delta: i64,
        snapshot: &Snapshot,
    ) {
        let symbols = snapshot.symbols();
        let labels = &node.node.labels;
        if updated.namespace != preemptor.namespace
            || !node_has_all_keys(labels, &state.constraints)
        {
            return;
        }
        if !self.features.node_inclusion_policy
            && !preemptor
                .required_node_affinity
                .matches(labels, &node.node.name, symbols)
        {
            return;
        }
        for i in 0..state.constraints.len() {
            let c = &state.constraints[i];
            if !c.selector.matches(&updated.labels, symbols) {
                continue;
            }
            if self.features.node_inclusion_policy
                && !self.node_included(c, preemptor, node, symbols)
            {
                continue;
            }
            let Some(dom) = snapshot
                .domains(c.topology_key)
                .map(|d| d.domain_of(node.id.index()))
                .filter(|d| *d != NO_DOMAIN)
            else {
                continue;
            };
            state.domains[i].update(dom as usize, delta);
        }
        state.refresh_minimums();
    }
}

impl PreFilterPlugin for PodTopologySpread {
    fn pre_filter(&self, state: &mut CycleState, pod: &Pod, snapshot: &Snapshot) -> Status {
        let s = self.pre_filter_state(pod, snapshot);
        if s.constraints.is_empty() {
            return Status::skip();
        }
        state.write(s);
        Status::success()
    }

    fn add_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        added: &Pod,
        node: &NodeInfo,
        snapshot: &Snapshot,
    ) -> Status {
        let s = match state.require_mut::<PreFilterState>(PRE_FILTER_STATE_KEY) {
            Ok(s) => s,
            Err(status) => return status,
        };
        self.update_with_pod(s, added, pod, node, 1, snapshot);
        Status::success()
    }

    fn remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        removed: &Pod,
        node: &NodeInfo,
        snapshot: &Snapshot,
    ) -> Status {
        let s = match state.require_mut::<PreFilterState>(PRE_FILTER_STATE_KEY) {
            Ok(s) => s,
            Err(status) => return status,
        };
        self.update_with_pod(s, removed, pod, node, -1, snapshot);
        Status::success()
    }
}

impl FilterPlugin for PodTopologySpread {
    fn filter(
        &self,
        state: &CycleState,
        _pod: &Pod,
        node: &NodeInfo,
        _snapshot: &Snapshot,
    ) -> Status {
        let s = match state.require::<PreFilterState>(PRE_FILTER_STATE_KEY) {
            Ok(s) => s,
            Err(status) => return status,
        };
        filter_node(s, node)
    }
}

/// Filter's check for one node against every hard constraint:
/// `matching pods in the node's domain + self-match - global minimum <= maxSkew`.
#[inline]
pub(crate) fn filter_node(s: &PreFilterState, node: &NodeInfo) -> Status {
    let idx = node.id.index();
    for (i, c) in s.constraints.iter().enumerate() {
        let dom = s.node_domains[i].get(idx).copied().unwrap_or(NO_DOMAIN);
        if dom == NO_DOMAIN {
            return Status::new(
                Code::UnschedulableAndUnresolvable,
                ERR_REASON_NODE_LABEL_NOT_MATCH,
            );
        }
        let skew = s.domains[i].count(dom as usize) + s.self_match[i] - s.min_match[i];
        if skew > i64::from(c.max_skew) {
            return Status::new(Code::Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH);
        }
    }
    Status::success()
}
