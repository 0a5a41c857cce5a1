use crate::api::Sym;
use std::collections::HashMap;
use std::sync::Arc;

/// Marks a node that does not carry the topology key.
pub const NO_DOMAIN: u32 = u32::MAX;

/// The domains of one topology key: every distinct value is a dense domain index, and
/// every node maps to its domain (or [`NO_DOMAIN`]).
#[derive(Clone, Debug, Default)]
pub struct KeyDomains {
    node_domain: Arc<Vec<u32>>,
    values: Vec<Sym>,
    by_value: HashMap<Sym, u32>,
}

impl KeyDomains {
    /// The domain of node `node` (by index), or [`NO_DOMAIN`].
    #[inline]
    pub fn domain_of(&self, node: usize) -> u32 {
        self.node_domain.get(node).copied().unwrap_or(NO_DOMAIN)
    }

    /// The per-node domain table, indexed by node index.
    #[inline]
    pub fn node_domains(&self) -> &[u32] {
        &self.node_domain
    }

    /// The per-node domain table, shared: per-cycle state keeps it without copying.
    pub(crate) fn shared_node_domains(&self) -> Arc<Vec<u32>> {
        Arc::clone(&self.node_domain)
    }

    /// How many distinct values the key takes over all nodes.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no node carries the key.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The label value behind a domain index.
    pub fn value(&self, domain: u32) -> Sym {
        self.values[domain as usize]
    }

    /// The domain index of a label value, if some node carries it.
    pub(crate) fn domain_of_value(&self, value: Sym) -> Option<u32> {
        self.by_value.get(&value).copied()
    }

    fn set(&mut self, node: usize, value: Option<Sym>) {
        let table = Arc::make_mut(&mut self.node_domain);
        if table.len() <= node {
            table.resize(node + 1, NO_DOMAIN);
        }
        table[node] = match value {
            None => NO_DOMAIN,
            Some(v) => *self.by_value.entry(v).or_insert_with(|| {
                self.values.push(v);
                u32::try_from(self.values.len() - 1).unwrap_or(NO_DOMAIN)
            }),
        };
    }
}

/// Domain tables for every label key any node carries, kept current as nodes are added.
#[derive(Clone, Debug, Default)]
pub struct TopologyIndex {
    keys: HashMap<Sym, KeyDomains>,
    nodes: usize,
}

impl TopologyIndex {
    /// Records node `node` (by index) with its labels.
    pub(crate) fn add_node(&mut self, node: usize, labels: &crate::api::Labels) {
        self.nodes = self.nodes.max(node + 1);
        for (key, value) in labels.iter() {
            self.keys.entry(key).or_default().set(node, Some(value));
        }
        for (key, domains) in &mut self.keys {
            if !labels.has(*key) {
                domains.set(node, None);
            }
        }
    }

    /// An index rebuilt from every node's labels, in node order: what a node removal
    /// or relabelling leaves (domains no node carries any more disappear, and indices
    /// come out as a snapshot built from scratch numbers them). O(nodes × labels).
    pub(crate) fn rebuild<'a>(labels: impl Iterator<Item = &'a crate::api::Labels>) -> Self {
        let mut index = Self::default();
        for (i, l) in labels.enumerate() {
            index.add_node(i, l);
        }
        index
    }

    /// The domains of `key`, if any node carries it.
    #[inline]
    pub fn key(&self, key: Sym) -> Option<&KeyDomains> {
        self.keys.get(&key)
    }
}
