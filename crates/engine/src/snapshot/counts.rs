use super::NodeInfo;
use super::domain_counts::{DomainCounts, DomainSums, NodeFilter};
use super::topology::KeyDomains;
use crate::api::{Pod, Selector, Sym, Symbols};
use std::collections::HashMap;
use std::sync::Arc;

/// How many per-domain sums one group keeps (distinct topology keys and node filters);
/// beyond it the oldest is dropped, so pods with ever-new affinities cannot grow memory
/// without bound.
const MAX_SUMS_PER_GROUP: usize = 16;

/// Per-node counts of the pods one (namespace, selector) pair matches: a "topology
/// group". Kept current on every bind and removal, so the spreading plugins read counts
/// instead of rescanning every pod on every node for every pod scheduled.
#[derive(Clone, Debug)]
struct Group {
    namespace: Sym,
    selector: Selector,
    per_node: Arc<Vec<u32>>,
    /// Per-domain sums of `per_node`, by topology key and node filter.
    sums: Vec<DomainSums>,
}

/// All topology groups seen so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct MatchCounts {
    index: HashMap<(Sym, Selector), usize>,
    groups: Vec<Group>,
}

/// Whether `pod` counts for a group: not terminating, same namespace, selected.
#[inline]
pub(crate) fn counts_for(
    pod: &Pod,
    namespace: Sym,
    selector: &Selector,
    symbols: &Symbols,
) -> bool {
    !pod.terminating && pod.namespace == namespace && selector.matches(&pod.labels, symbols)
}

impl MatchCounts {
    /// The group's per-node counts, building them from `bound` on first use.
    pub(crate) fn get_or_build<'a>(
        &mut self,
        namespace: Sym,
        selector: &Selector,
        nodes: usize,
        bound: impl Iterator<Item = (usize, &'a Pod)>,
        symbols: &Symbols,
    ) -> Arc<Vec<u32>> {
        let idx = self.group(namespace, selector, nodes, bound, symbols);
        Arc::clone(&self.groups[idx].per_node)
    }

    /// The group's counts summed per domain of `key` over the nodes `filter` admits,
    /// building the group and the sums on first use.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn domain_counts<'a>(
        &mut self,
        namespace: Sym,
        selector: &Selector,
        key: Sym,
        filter: &NodeFilter,
        nodes: &[NodeInfo],
        domains: Option<&KeyDomains>,
        bound: impl Iterator<Item = (usize, &'a Pod)>,
        symbols: &Symbols,
    ) -> Arc<DomainCounts> {
        let idx = self.group(namespace, selector, nodes.len(), bound, symbols);
        let g = &mut self.groups[idx];
        if let Some(s) = g.sums.iter().find(|s| s.key == key && &s.filter == filter) {
            return Arc::clone(&s.counts);
        }
        if g.sums.len() >= MAX_SUMS_PER_GROUP {
            g.sums.remove(0);
        }
        let sums = DomainSums::build(key, filter.clone(), nodes, domains, &g.per_node, symbols);
        let counts = Arc::clone(&sums.counts);
        g.sums.push(sums);
        counts
    }

    /// The index of a group, built from `bound` on first use.
    fn group<'a>(
        &mut self,
        namespace: Sym,
        selector: &Selector,
        nodes: usize,
        bound: impl Iterator<Item = (usize, &'a Pod)>,
        symbols: &Symbols,
    ) -> usize {
        let key = (namespace, selector.clone());
        match self.index.get(&key) {
            Some(&i) => i,
            None => {
                let mut per_node = vec![0u32; nodes];
                for (node, pod) in bound {
                    if counts_for(pod, namespace, selector, symbols) {
                        per_node[node] += 1;
                    }
                }
                self.groups.push(Group {
                    namespace,
                    selector: selector.clone(),
                    per_node: Arc::new(per_node),
                    sums: Vec::new(),
                });
                self.index.insert(key, self.groups.len() - 1);
                self.groups.len() - 1
            }
        }
    }

    /// Applies a pod bound to (`delta` = 1) or removed from (`delta` = -1) `node`.
    pub(crate) fn apply(&mut self, pod: &Pod, node: usize, delta: i32, symbols: &Symbols) {
        for g in &mut self.groups {
            if counts_for(pod, g.namespace, &g.selector, symbols) {
                let per_node = Arc::make_mut(&mut g.per_node);
                if per_node.len() <= node {
                    per_node.resize(node + 1, 0);
                }
                let c = &mut per_node[node];
                *c = c.saturating_add_signed(delta);
                for sums in &mut g.sums {
                    sums.apply(node, i64::from(delta));
                }
            }
        }
    }

    /// Grows every group for a newly added node; the per-domain sums are dropped, as the
    /// node may add domains and pass filters.
    pub(crate) fn add_node(&mut self, nodes: usize) {
        for g in &mut self.groups {
            Arc::make_mut(&mut g.per_node).resize(nodes, 0);
            g.sums.clear();
        }
    }

    /// How many groups are tracked.
    pub(crate) fn len(&self) -> usize {
        self.groups.len()
    }
}
