//! Matching-pod counts summed per topology domain over the nodes a spreading constraint
//! counts (its node inclusion policies), kept current on every bind and removal so
//! PreFilter and PreScore read them instead of walking every node for every pod.

use super::NodeInfo;
use super::topology::{KeyDomains, NO_DOMAIN};
use crate::api::{RequiredNodeAffinity, Sym, Symbols, Toleration, find_untolerated_taint};
use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The matching-pod counts of one topology key's domains over the nodes a constraint
/// counts, with the global minimum tracked exactly under updates (a histogram of counts,
/// so the minimum is always the true one; upstream's two "critical paths" can drift
/// after several updates).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainCounts {
    /// Count per domain index of the topology key (plus one slot, see
    /// [`DomainSums::missing_slot`]); meaningful where `present`.
    counts: Vec<i64>,
    /// Whether the domain is eligible (holds a node the constraint counts).
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

    /// Adds `n` matching pods to a domain while building; [`Self::finish`] follows.
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
    pub fn update(&mut self, domain: usize, delta: i64) {
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
    pub fn min(&self) -> i64 {
        self.histogram
            .keys()
            .next()
            .copied()
            .unwrap_or(i64::from(i32::MAX))
    }

    /// The count of a domain (0 when it is not eligible).
    #[inline]
    pub fn count(&self, domain: usize) -> i64 {
        match self.present.get(domain) {
            Some(true) => self.counts[domain],
            _ => 0,
        }
    }

    /// How many domains are eligible.
    pub fn eligible(&self) -> usize {
        self.eligible
    }

    /// The largest count over eligible domains, `None` when none is eligible.
    pub fn max(&self) -> Option<i64> {
        self.histogram.keys().next_back().copied()
    }

    /// How far eligible domains' counts are above `floor`, summed (a constraint's
    /// excess over `minimum + maxSkew`), read from the histogram: a walk over the
    /// distinct counts instead of every domain.
    pub fn sum_above(&self, floor: i64) -> i64 {
        self.histogram
            .range(floor.saturating_add(1)..)
            .map(|(&c, &n)| (c - floor) * i64::from(n))
            .sum()
    }

    /// `(domain, count)` for every eligible domain.
    pub fn iter(&self) -> impl Iterator<Item = (usize, i64)> + '_ {
        self.counts
            .iter()
            .zip(&self.present)
            .enumerate()
            .filter(|(_, (_, p))| **p)
            .map(|(d, (c, _))| (d, *c))
    }
}

/// Which nodes a constraint counts: those carrying every required topology key and,
/// where the policies say Honor, matching the pod's required node affinity and
/// tolerating the node's NoSchedule/NoExecute taints. Equal filters admit equal nodes,
/// which is what lets one cached sum serve every pod with the same filter. The default
/// admits every node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeFilter {
    /// Topology keys a node must carry (`nodeLabelsMatchSpreadConstraints`).
    pub(crate) required_keys: SmallVec<[Sym; 2]>,
    /// The pod's required node affinity, when honored and not empty.
    pub(crate) affinity: Option<std::sync::Arc<RequiredNodeAffinity>>,
    /// The pod's tolerations and whether comparison operators are on, when taints are
    /// honored.
    pub(crate) tolerations: Option<(std::sync::Arc<[Toleration]>, bool)>,
}

impl NodeFilter {
    /// Whether the filter counts `node`.
    pub fn admits(&self, node: &NodeInfo, symbols: &Symbols) -> bool {
        let labels = &node.node.labels;
        if !self.required_keys.iter().all(|k| labels.has(*k)) {
            return false;
        }
        if let Some(a) = &self.affinity
            && !a.matches(labels, &node.node.name, symbols)
        {
            return false;
        }
        if let Some((tolerations, comparison_ops)) = &self.tolerations
            && find_untolerated_taint(&node.node.taints, tolerations, *comparison_ops, |t| {
                t.effect.blocks_scheduling()
            })
            .is_some()
        {
            return false;
        }
        true
    }
}

/// One group's counts summed per domain of a topology key over a filter's nodes.
#[derive(Clone, Debug)]
pub(crate) struct DomainSums {
    /// The topology key.
    pub(crate) key: Sym,
    /// Which nodes count.
    pub(crate) filter: NodeFilter,
    /// Per node: the slot its pods count in, or [`NO_DOMAIN`] when the filter does not
    /// admit it.
    slots: Vec<u32>,
    /// The sums.
    pub(crate) counts: Arc<DomainCounts>,
}

impl DomainSums {
    /// The slot of admitted nodes without the key: the domain of the value `""` if a
    /// node carries it (upstream reads a missing label as `""`), else one past the last
    /// domain.
    pub(crate) fn missing_slot(domains: Option<&KeyDomains>, empty_value: Option<Sym>) -> usize {
        let n = domains.map_or(0, KeyDomains::len);
        empty_value
            .and_then(|e| domains.and_then(|d| d.domain_of_value(e)))
            .map_or(n, |d| d as usize)
    }

    /// The slot `node`'s pods count in: its domain of the key, `missing` when `filter`
    /// admits it without the key, `None` when `filter` leaves it out.
    pub(crate) fn slot(
        filter: &NodeFilter,
        node: &NodeInfo,
        domains: Option<&KeyDomains>,
        missing: usize,
        symbols: &Symbols,
    ) -> Option<usize> {
        if !filter.admits(node, symbols) {
            return None;
        }
        let dom = domains.map_or(NO_DOMAIN, |d| d.domain_of(node.id.index()));
        Some(if dom == NO_DOMAIN {
            missing
        } else {
            dom as usize
        })
    }

    /// Sums `per_node` over the nodes `filter` admits.
    pub(crate) fn build(
        key: Sym,
        filter: NodeFilter,
        nodes: &[NodeInfo],
        domains: Option<&KeyDomains>,
        per_node: &[u32],
        symbols: &Symbols,
    ) -> Self {
        let missing = Self::missing_slot(domains, symbols.get(""));
        let n = domains.map_or(0, KeyDomains::len);
        let mut counts = DomainCounts::with_domains(n + 1);
        let slots: Vec<u32> = nodes
            .iter()
            .map(|node| {
                let Some(slot) = Self::slot(&filter, node, domains, missing, symbols) else {
                    return NO_DOMAIN;
                };
                let idx = node.id.index();
                counts.accumulate(slot, i64::from(per_node.get(idx).copied().unwrap_or(0)));
                u32::try_from(slot).unwrap_or(NO_DOMAIN)
            })
            .collect();
        counts.finish();
        Self {
            key,
            filter,
            slots,
            counts: Arc::new(counts),
        }
    }

    /// Applies `delta` matching pods on node `node`.
    pub(crate) fn apply(&mut self, node: usize, delta: i64) {
        if let Some(&slot) = self.slots.get(node)
            && slot != NO_DOMAIN
        {
            Arc::make_mut(&mut self.counts).update(slot as usize, delta);
        }
    }
}
