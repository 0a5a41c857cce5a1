//! Constraint parsing shared by Filter and Score: the pod's own constraints (or the
//! defaults, with a selector derived from the pod's Services and controller), with
//! gates applied once so the per-node loops never branch on them.

use super::PodTopologySpread;
use crate::api::{
    ControllerKind, Labels, NodeInclusionPolicy, Pod, Requirement, Selector, SpreadConstraintSpec,
    Sym, WhenUnsatisfiable,
};
use crate::features::Feature;
use crate::snapshot::{NodeFilter, Snapshot};
use smallvec::SmallVec;

/// A constraint as the plugin works with it (`topologySpreadConstraint` upstream).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Constraint {
    pub(crate) max_skew: i32,
    pub(crate) topology_key: Sym,
    pub(crate) selector: Selector,
    pub(crate) min_domains: i32,
    pub(crate) node_affinity_policy: NodeInclusionPolicy,
    pub(crate) node_taints_policy: NodeInclusionPolicy,
}

impl PodTopologySpread {
    /// The pod's constraints with the given action (`getConstraints` for DoNotSchedule,
    /// `initPreScoreState` for ScheduleAnyway): its own, else the defaults.
    pub(crate) fn constraints_for(
        &self,
        pod: &Pod,
        action: &WhenUnsatisfiable,
        snapshot: &Snapshot,
    ) -> Vec<Constraint> {
        if !pod.spread_constraints.is_empty() {
            return self.filter_constraints(&pod.spread_constraints, &pod.labels, action);
        }
        let mut constraints =
            self.filter_constraints(&self.default_constraints, &pod.labels, action);
        if constraints.is_empty() {
            return constraints;
        }
        let selector = default_selector(pod, snapshot);
        if selector.is_empty() {
            return Vec::new();
        }
        for c in &mut constraints {
            c.selector = selector.clone();
        }
        constraints
    }

    /// `filterTopologySpreadConstraints`: keeps the constraints with `action`, merging
    /// matchLabelKeys and applying policies as the gates say.
    fn filter_constraints(
        &self,
        specs: &[SpreadConstraintSpec],
        pod_labels: &Labels,
        action: &WhenUnsatisfiable,
    ) -> Vec<Constraint> {
        specs
            .iter()
            .filter(|c| &c.when_unsatisfiable == action)
            .map(|c| {
                let selector = if self
                    .features
                    .enabled(Feature::MatchLabelKeysInPodTopologySpread)
                {
                    c.selector_for(pod_labels)
                } else {
                    c.selector.clone()
                };
                // 1.27 to 1.37 counted no pod for a selector without requirements
                // (`countPodsMatchSelector`'s `Empty()` check). Counting with Nothing is the
                // same verdict: every count is 0, so Filter's skew is at most 1 <= maxSkew
                // and every node scores alike.
                let selector = if !self.features.empty_selector_matches_all() && selector.is_empty()
                {
                    Selector::Nothing
                } else {
                    selector
                };
                let mut constraint = Constraint {
                    max_skew: c.max_skew,
                    topology_key: c.topology_key,
                    selector,
                    min_domains: 1,
                    node_affinity_policy: NodeInclusionPolicy::Honor,
                    node_taints_policy: NodeInclusionPolicy::Ignore,
                };
                if self
                    .features
                    .enabled(Feature::MinDomainsInPodTopologySpread)
                    && let Some(m) = c.min_domains
                {
                    constraint.min_domains = m;
                }
                if self
                    .features
                    .enabled(Feature::NodeInclusionPolicyInPodTopologySpread)
                {
                    if let Some(p) = c.node_affinity_policy {
                        constraint.node_affinity_policy = p;
                    }
                    if let Some(p) = c.node_taints_policy {
                        constraint.node_taints_policy = p;
                    }
                }
                constraint
            })
            .collect()
    }

    /// The nodes `c` counts (`matchNodeInclusionPolicies` plus
    /// `nodeLabelsMatchSpreadConstraints` over `required_keys`). Without the
    /// NodeInclusionPolicy feature, required node affinity always applies and taints never.
    pub(crate) fn node_filter(
        &self,
        c: &Constraint,
        pod: &Pod,
        required_keys: SmallVec<[Sym; 2]>,
    ) -> NodeFilter {
        let nip = self
            .features
            .enabled(Feature::NodeInclusionPolicyInPodTopologySpread);
        let honor_affinity = !nip || c.node_affinity_policy == NodeInclusionPolicy::Honor;
        let honor_taints = nip && c.node_taints_policy == NodeInclusionPolicy::Honor;
        NodeFilter {
            required_keys,
            affinity: (honor_affinity && !pod.required_node_affinity.is_empty())
                .then(|| pod.required_node_affinity.clone()),
            tolerations: honor_taints.then(|| {
                (
                    pod.tolerations.clone(),
                    self.features
                        .enabled(Feature::TaintTolerationComparisonOperators),
                )
            }),
        }
    }
}

/// The constraint as reports name it (rendered `zone maxSkew=1 DoNotSchedule app=web`).
pub(crate) fn constraint_ref(
    c: &Constraint,
    when: &WhenUnsatisfiable,
    symbols: &crate::api::Symbols,
) -> crate::spread::ConstraintRef {
    crate::spread::ConstraintRef::new(
        symbols.resolve(c.topology_key),
        c.max_skew,
        when.clone(),
        c.selector.display(symbols),
    )
}

/// Every constraint's topology key, sorted and deduplicated: a node must carry them all
/// to count (`nodeLabelsMatchSpreadConstraints`).
pub(crate) fn required_keys(constraints: &[Constraint]) -> SmallVec<[Sym; 2]> {
    let mut keys: SmallVec<[Sym; 2]> = constraints.iter().map(|c| c.topology_key).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// `helper.DefaultSelector`: the labels of the Services selecting the pod, plus its
/// ReplicationController's selector, or its ReplicaSet's / StatefulSet's requirements.
pub(crate) fn default_selector(pod: &Pod, snapshot: &Snapshot) -> Selector {
    let symbols = snapshot.symbols();
    let workloads = snapshot.workloads();
    let mut set: Vec<(Sym, Sym)> = Vec::new();
    for (ns, _, selector) in &workloads.services {
        let Some(selector) = selector else { continue };
        if *ns == pod.namespace && Selector::from_set(selector).matches(&pod.labels, symbols) {
            set.extend(selector.iter());
        }
    }
    let mut result = Selector::from_set(&Labels::from_pairs(set.iter().copied()));
    let Some(owner) = &pod.controller else {
        return result;
    };
    let same = |ns: &Sym, name: &str| *ns == pod.namespace && name == &*owner.name;
    match owner.kind {
        ControllerKind::ReplicationController => {
            if let Some((_, _, sel)) = workloads
                .replication_controllers
                .iter()
                .find(|(ns, name, _)| same(ns, name))
            {
                set.extend(sel.iter().flat_map(|s| s.iter()));
                result = Selector::from_set(&Labels::from_pairs(set.iter().copied()));
            }
        }
        ControllerKind::ReplicaSet | ControllerKind::StatefulSet => {
            let list = if owner.kind == ControllerKind::ReplicaSet {
                &workloads.replica_sets
            } else {
                &workloads.stateful_sets
            };
            if let Some((_, _, Some(sel))) = list.iter().find(|(ns, name, _)| same(ns, name))
                && let Some(reqs) = sel.requirements()
            {
                let reqs: Vec<Requirement> = reqs.to_vec();
                result = result.with(&reqs);
            }
        }
        ControllerKind::DaemonSet | ControllerKind::Other => {}
    }
    result
}
