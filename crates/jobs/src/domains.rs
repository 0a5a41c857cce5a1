//! Matching pods per topology domain, as `show` draws them and reports them: which pods
//! a selector marks ([`Highlight`]), the keys drawn by default, and the counts and skew
//! per domain over the nodes that carry a key.

use std::collections::HashMap;
use topospread::api::{Selector, Sym};
use topospread::plugins::podtopologyspread::{LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE};
use topospread::snapshot::{NodeId, Snapshot};

/// Which pods are marked as matching.
#[derive(Clone, Debug)]
pub struct Highlight {
    /// The selector.
    pub selector: Selector,
    /// Only pods in this namespace match (`None`: any namespace).
    pub namespace: Option<Sym>,
    /// How the legend names it (e.g. `app=web`).
    pub description: String,
}

/// The keys the docs draw by: a zone key then a hostname key, preferring the well-known
/// labels and falling back to `zone`/`node` when those are what the nodes carry.
pub fn default_topology_keys(snapshot: &Snapshot) -> Vec<String> {
    let carried = |k: &str| {
        snapshot
            .symbols()
            .get(k)
            .and_then(|s| snapshot.domains(s))
            .is_some_and(|d| !d.is_empty())
    };
    let mut keys = Vec::new();
    for pair in [[LABEL_TOPOLOGY_ZONE, "zone"], [LABEL_HOSTNAME, "node"]] {
        if let Some(k) = pair.iter().find(|k| carried(k)) {
            keys.push((*k).to_string());
        }
    }
    keys
}

/// Matching pods per domain of `key`, over the nodes that carry it, sorted by domain.
pub fn domain_counts(snapshot: &Snapshot, key: &str, highlight: &Highlight) -> Vec<(String, u32)> {
    let matching: Vec<usize> = snapshot
        .nodes()
        .iter()
        .map(|n| matching_on(snapshot, n.id, highlight))
        .collect();
    counts_by_domain(snapshot, key, &matching)
}

/// [`domain_counts`] from each node's matching pods, counted once.
pub fn counts_by_domain(snapshot: &Snapshot, key: &str, matching: &[usize]) -> Vec<(String, u32)> {
    let symbols = snapshot.symbols();
    let Some(sym) = symbols.get(key) else {
        return Vec::new();
    };
    let mut by_value: HashMap<Sym, u32> = HashMap::new();
    for (info, n) in snapshot.nodes().iter().zip(matching) {
        let Some(value) = info.node.labels.get(sym) else {
            continue;
        };
        let slot = by_value.entry(value).or_default();
        *slot = slot.saturating_add(u32::try_from(*n).unwrap_or(u32::MAX));
    }
    let mut out: Vec<(String, u32)> = by_value
        .into_iter()
        .map(|(v, n)| (symbols.resolve(v).to_string(), n))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// `max - min` over the counts (0 for no domain).
pub fn skew(counts: &[(String, u32)]) -> u32 {
    let max = counts.iter().map(|c| c.1).max().unwrap_or(0);
    let min = counts.iter().map(|c| c.1).min().unwrap_or(0);
    max - min
}

/// Whether the highlight marks `pod` (terminating pods never).
fn is_match(snapshot: &Snapshot, pod: &topospread::api::Pod, h: &Highlight) -> bool {
    !pod.terminating
        && h.namespace.is_none_or(|ns| ns == pod.namespace)
        && h.selector.matches(&pod.labels, snapshot.symbols())
}

/// How many of the pods on `node` the highlight marks.
pub fn matching_on(snapshot: &Snapshot, node: NodeId, h: &Highlight) -> usize {
    snapshot
        .node(node)
        .pods()
        .iter()
        .filter_map(|p| snapshot.pod(*p))
        .filter(|p| is_match(snapshot, p, h))
        .count()
}

#[cfg(test)]
mod tests {
    use super::skew;

    #[test]
    fn skew_is_max_minus_min() {
        let c = |v: &[u32]| -> Vec<(String, u32)> {
            v.iter()
                .enumerate()
                .map(|(i, n)| (i.to_string(), *n))
                .collect()
        };
        assert_eq!(skew(&c(&[])), 0);
        assert_eq!(skew(&c(&[3, 1, 2])), 2);
    }
}
