//! PreFilter and Filter: hard (`DoNotSchedule`) constraints.

use super::PodTopologySpread;
use super::common::{Constraint, required_keys};
use crate::api::{Pod, WhenUnsatisfiable};
use crate::framework::{Code, CycleState, FilterPlugin, PreFilterPlugin, Screening, Status};
use crate::snapshot::{DomainCounts, NO_DOMAIN, NodeFilter, NodeInfo, Snapshot};
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

/// What PreFilter computes for Filter (`preFilterState` upstream).
#[derive(Clone, Debug, Default)]
pub struct PreFilterState {
    pub(crate) constraints: Vec<Constraint>,
    /// Per constraint: the nodes it counts (its node inclusion policies).
    filters: Vec<NodeFilter>,
    /// Per constraint: matching pods per domain, shared with the snapshot until the
    /// preemption path changes them.
    pub(crate) domains: Vec<Arc<DomainCounts>>,
    /// Per constraint: each node's domain (shared with the snapshot, not copied).
    node_domains: Vec<Arc<Vec<u32>>>,
    /// Per constraint: whether the incoming pod matches its own selector.
    self_match: Vec<i64>,
    /// Per constraint: the global minimum with minDomains applied, kept current.
    min_match: Vec<i64>,
}

impl PreFilterState {
    /// Matching pods per eligible domain, one map per hard constraint (plugin-level cases
    /// and the property tests read them; reports use [`crate::spread::count`]).
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
    /// `calPreFilterState`: matching pods per domain over the nodes each constraint
    /// counts, read from the snapshot's incrementally kept sums.
    pub(crate) fn pre_filter_state(&self, pod: &Pod, snapshot: &Snapshot) -> PreFilterState {
        let constraints = self.constraints_for(pod, &WhenUnsatisfiable::DoNotSchedule, snapshot);
        if constraints.is_empty() {
            return PreFilterState::default();
        }
        let symbols = snapshot.symbols();
        let required_keys = required_keys(&constraints);
        let filters: Vec<NodeFilter> = constraints
            .iter()
            .map(|c| self.node_filter(c, pod, required_keys.clone()))
            .collect();
        let domains = constraints
            .iter()
            .zip(&filters)
            .map(|(c, f)| snapshot.domain_counts(pod.namespace, &c.selector, c.topology_key, f))
            .collect();
        let node_domains = constraints
            .iter()
            .map(|c| {
                snapshot
                    .domains(c.topology_key)
                    .map_or_else(|| Arc::new(Vec::new()), |d| d.shared_node_domains())
            })
            .collect();
        let self_match = constraints
            .iter()
            .map(|c| i64::from(c.selector.matches(&pod.labels, symbols)))
            .collect();
        let mut state = PreFilterState {
            constraints,
            filters,
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
        if updated.namespace != preemptor.namespace {
            return;
        }
        for i in 0..state.constraints.len() {
            let c = &state.constraints[i];
            if !c.selector.matches(&updated.labels, symbols)
                || !state.filters[i].admits(node, symbols)
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
            Arc::make_mut(&mut state.domains[i]).update(dom as usize, delta);
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

    /// A count lookup per constraint: cheap, and the Filter that rejects most nodes
    /// when spreading is tight. Without PreFilter's state Filter fails with an
    /// internal error, so there is no screen then.
    fn screen<'a>(
        &'a self,
        state: &'a CycleState,
        _: &'a Pod,
        _: &'a Snapshot,
    ) -> Option<Screening<'a>> {
        let s = state.read::<PreFilterState>()?;
        if let ([c], [domains], [counts]) = (
            s.constraints.as_slice(),
            s.node_domains.as_slice(),
            s.domains.as_slice(),
        ) {
            // One constraint (the usual case): a node is rejected when it lacks the key or
            // its domain already holds more than `maxSkew + min - selfMatch` pods.
            let limit = i64::from(c.max_skew) + s.min_match[0] - s.self_match[0];
            let (domains, counts) = (domains.as_slice(), &**counts);
            return Some(Screening::Rejects(Box::new(
                move |node: &NodeInfo| match domains.get(node.id.index()) {
                    Some(&dom) if dom != NO_DOMAIN => counts.count(dom as usize) > limit,
                    _ => true,
                },
            )));
        }
        Some(Screening::Rejects(Box::new(move |node: &NodeInfo| {
            check_node(s, node).is_some()
        })))
    }
}

/// Filter's check for one node against every hard constraint:
/// `matching pods in the node's domain + self-match - global minimum <= maxSkew`.
#[inline]
pub(crate) fn filter_node(s: &PreFilterState, node: &NodeInfo) -> Status {
    match check_node(s, node) {
        None => Status::success(),
        Some(Violation::MissingKey) => Status::new(
            Code::UnschedulableAndUnresolvable,
            ERR_REASON_NODE_LABEL_NOT_MATCH,
        ),
        Some(Violation::Skew) => Status::new(Code::Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH),
    }
}

/// How a node breaks the hard constraints.
enum Violation {
    /// It lacks a constraint's topology key.
    MissingKey,
    /// Placing the pod there would exceed a constraint's maxSkew.
    Skew,
}

/// The first constraint the node breaks, if any.
#[inline]
fn check_node(s: &PreFilterState, node: &NodeInfo) -> Option<Violation> {
    let idx = node.id.index();
    for (i, c) in s.constraints.iter().enumerate() {
        let dom = s.node_domains[i].get(idx).copied().unwrap_or(NO_DOMAIN);
        if dom == NO_DOMAIN {
            return Some(Violation::MissingKey);
        }
        let skew = s.domains[i].count(dom as usize) + s.self_match[i] - s.min_match[i];
        if skew > i64::from(c.max_skew) {
            return Some(Violation::Skew);
        }
    }
    None
}
