use super::NodeInfo;
use super::domain_counts::{DomainCounts, DomainSums, NodeFilter};
use super::topology::KeyDomains;
use crate::api::{Op, Pod, Selector, Sym, Symbols};
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
    /// Per-domain sums of `per_node`, by topology key and node filter, each with the
    /// generation it was last read in.
    sums: Vec<(DomainSums, u64)>,
    /// The generation the group was last read in (see [`MatchCounts::prune`]).
    last_used: u64,
}

/// All topology groups seen so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct MatchCounts {
    index: HashMap<(Sym, Selector), usize>,
    groups: Vec<Group>,
    /// The current generation: reads stamp what they touch with it.
    generation: u64,
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
        let generation = self.generation;
        let g = &mut self.groups[idx];
        if let Some((s, used)) = g
            .sums
            .iter_mut()
            .find(|(s, _)| s.key == key && &s.filter == filter)
        {
            *used = generation;
            return Arc::clone(&s.counts);
        }
        if g.sums.len() >= MAX_SUMS_PER_GROUP {
            g.sums.remove(0);
        }
        let sums = DomainSums::build(key, filter.clone(), nodes, domains, &g.per_node, symbols);
        let counts = Arc::clone(&sums.counts);
        g.sums.push((sums, generation));
        counts
    }

    /// Builds every group of `wanted` not tracked yet in one pass over `bound`. A pod is
    /// checked only against the groups one of its labels can satisfy (a requirement
    /// `key In (values)`) and those with no such requirement, so building the groups of
    /// a thousand workloads costs a pass over the pods, not a thousand.
    pub(crate) fn prepare<'a>(
        &mut self,
        wanted: impl IntoIterator<Item = (Sym, Selector)>,
        nodes: usize,
        bound: impl Iterator<Item = (usize, &'a Pod)>,
        symbols: &Symbols,
    ) {
        let first = self.groups.len();
        let mut by_label: HashMap<(Sym, Sym), Vec<usize>> = HashMap::new();
        let mut unindexed: Vec<usize> = Vec::new();
        for (namespace, selector) in wanted {
            if let Some(&i) = self.index.get(&(namespace, selector.clone())) {
                self.groups[i].last_used = self.generation;
                continue;
            }
            let i = self.groups.len();
            let reqs = selector.requirements().map(<[_]>::to_vec);
            self.groups.push(Group {
                namespace,
                selector: selector.clone(),
                per_node: Arc::new(vec![0u32; nodes]),
                sums: Vec::new(),
                last_used: self.generation,
            });
            self.index.insert((namespace, selector), i);
            let Some(reqs) = reqs else {
                continue;
            };
            match reqs.iter().find_map(|r| match &r.op {
                Op::In(values) => Some((r.key, values)),
                _ => None,
            }) {
                Some((key, values)) => {
                    for &v in values.iter() {
                        by_label.entry((key, v)).or_default().push(i);
                    }
                }
                None => unindexed.push(i),
            }
        }
        if self.groups.len() == first {
            return;
        }
        // The last pod (by position in `bound`) each new group was checked against, so
        // a pod reached through two of its labels is counted once.
        let mut seen = vec![usize::MAX; self.groups.len() - first];
        for (k, (node, pod)) in bound.enumerate() {
            let labelled = pod
                .labels
                .iter()
                .filter_map(|kv| by_label.get(&kv))
                .flatten();
            for &i in labelled.chain(&unindexed) {
                if std::mem::replace(&mut seen[i - first], k) == k {
                    continue;
                }
                let g = &mut self.groups[i];
                if counts_for(pod, g.namespace, &g.selector, symbols) {
                    let per_node = Arc::make_mut(&mut g.per_node);
                    if let Some(c) = per_node.get_mut(node) {
                        *c += 1;
                    }
                }
            }
        }
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
            Some(&i) => {
                self.groups[i].last_used = self.generation;
                i
            }
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
                    last_used: self.generation,
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
                for (sums, _) in &mut g.sums {
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

    /// Drops every per-domain sum: node labels or taints changed, so domains and the
    /// nodes filters admit may have too. They are rebuilt on the next read.
    pub(crate) fn clear_sums(&mut self) {
        for g in &mut self.groups {
            g.sums.clear();
        }
    }

    /// Forgets node `node` (by index): later nodes move down one slot, as the
    /// snapshot's node list does. O(groups × nodes); the sums are dropped.
    pub(crate) fn remove_node(&mut self, node: usize) {
        for g in &mut self.groups {
            let per_node = Arc::make_mut(&mut g.per_node);
            if node < per_node.len() {
                per_node.remove(node);
            }
            g.sums.clear();
        }
    }

    /// Drops the groups and sums nobody read since the previous call, then starts a new
    /// generation; returns how many groups were dropped. A scheduler calling this once
    /// per pass over its pending pods keeps exactly the groups those pods still use,
    /// so memory stays bounded however many selectors come and go.
    pub(crate) fn prune(&mut self) -> usize {
        let generation = self.generation;
        let before = self.groups.len();
        self.groups.retain(|g| g.last_used >= generation);
        for g in &mut self.groups {
            g.sums.retain(|(_, used)| *used >= generation);
        }
        self.index = self
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| ((g.namespace, g.selector.clone()), i))
            .collect();
        self.generation += 1;
        before - self.groups.len()
    }

    /// How many per-domain sums are tracked over all groups.
    pub(crate) fn sums_len(&self) -> usize {
        self.groups.iter().map(|g| g.sums.len()).sum()
    }

    /// How many groups are tracked.
    pub(crate) fn len(&self) -> usize {
        self.groups.len()
    }
}
