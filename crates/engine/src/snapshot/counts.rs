use crate::api::{Pod, Selector, Sym, Symbols};
use std::collections::HashMap;
use std::sync::Arc;

/// Per-node counts of the pods one (namespace, selector) pair matches: a "topology
/// group". Kept current on every bind and removal, so the spreading plugins read counts
/// instead of rescanning every pod on every node for every pod scheduled.
#[derive(Clone, Debug)]
struct Group {
    namespace: Sym,
    selector: Selector,
    per_node: Arc<Vec<u32>>,
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
        let key = (namespace, selector.clone());
        let idx = match self.index.get(&key) {
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
                });
                self.index.insert(key, self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        Arc::clone(&self.groups[idx].per_node)
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
            }
        }
    }

    /// Grows every group for a newly added node.
    pub(crate) fn add_node(&mut self, nodes: usize) {
        for g in &mut self.groups {
            Arc::make_mut(&mut g.per_node).resize(nodes, 0);
        }
    }

    /// How many groups are tracked.
    pub(crate) fn len(&self) -> usize {
        self.groups.len()
    }
}
