//! The guard's planner, counting incrementally: per ReplicaSet and constraint, the
//! domain counts (by domain index) with every pod in place, moved by one as a pod is
//! removed; the candidates sit in buckets by what their removal would change, so
//! each removal is picked by pricing the buckets, not every pod. It orders and
//! measures exactly as the first planner did, which recounted every domain for every
//! trial removal (`reference::Recount`, the tests' oracle).

use super::{Measure, Member, RemovalRank, Removals};
use crate::controller::PhaseRank;
use crate::rebalance::Violation;
use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use topospread::api::WhenUnsatisfiable;
use topospread::plugins::podtopologyspread::CountingGroup;
use topospread::snapshot::{DomainCounts, Snapshot};

/// Constraints with at most this many eligible domains (zones) bucket candidates by
/// domain; those with more (a hostname spread) by the domain's count, so a removal
/// moves only the candidates of the one domain it changes and the buckets stay few.
const COARSE_DOMAINS: usize = 16;

/// One ReplicaSet's removals, counted incrementally. `COARSE` is the limit of
/// [`COARSE_DOMAINS`] (the tests run every constraint each way).
pub(super) struct Tally<const COARSE: usize = COARSE_DOMAINS> {
    /// Per constraint: its counts with every pod in place.
    base: Vec<DomainCounts>,
    /// Per member and constraint (`k * constraints + g`): the slot the member counts in.
    slots: Vec<Option<usize>>,
    /// Per member: the index of the node it is bound to.
    nodes: Vec<Option<usize>>,
    constraints: usize,
}

impl<const COARSE: usize> Tally<COARSE> {
    fn slot(&self, k: usize, g: usize) -> Option<usize> {
        self.slots[k * self.constraints + g]
    }

    /// Takes member `k` out of `counts`.
    fn remove(&self, counts: &mut [DomainCounts], k: usize) {
        for (g, c) in counts.iter_mut().enumerate() {
            if let Some(s) = self.slot(k, g) {
                c.update(s, -1);
            }
        }
    }
}

impl<const COARSE: usize> Removals for Tally<COARSE> {
    fn start(snapshot: &Snapshot, groups: &[&CountingGroup], members: &[Member]) -> Self {
        let base = groups
            .iter()
            .map(|g| DomainCounts::clone(&g.counts(snapshot)))
            .collect();
        let mut slots = Vec::with_capacity(members.len() * groups.len());
        let mut nodes = Vec::with_capacity(members.len());
        for m in members {
            let bound =
                m.id.and_then(|id| Some((snapshot.pod(id)?, snapshot.pod_node(id)?)));
            nodes.push(bound.map(|(_, node)| node.index()));
            slots.extend(
                groups
                    .iter()
                    .map(|g| bound.and_then(|(pod, node)| g.slot_of(pod, node, snapshot))),
            );
        }
        Self {
            base,
            slots,
            nodes,
            constraints: groups.len(),
        }
    }

    fn walk(
        &mut self,
        _: &mut Snapshot,
        groups: &[&CountingGroup],
        members: &mut [Member],
    ) -> Result<Vec<usize>, super::GuardError> {
        Ok(Walk::new(self, groups).run(members))
    }

    fn scale_in(
        &mut self,
        _: &mut Snapshot,
        groups: &[&CountingGroup],
        _: &mut [Member],
        order: &[usize],
    ) -> Result<Vec<Measure>, super::GuardError> {
        let mut counts = self.base.clone();
        Ok(order
            .iter()
            .map(|&k| {
                self.remove(&mut counts, k);
                measure(groups, &counts)
            })
            .collect())
    }
}

/// Each constraint's skew and the constraints' excess, hard and soft, from counts.
fn measure(groups: &[&CountingGroup], counts: &[DomainCounts]) -> Measure {
    let mut violation = Violation::default();
    let skews = groups
        .iter()
        .zip(counts)
        .map(|(g, c)| {
            let min_match = g.min_match(c);
            let excess = c.sum_above(min_match + i64::from(g.max_skew));
            if g.when == WhenUnsatisfiable::DoNotSchedule {
                violation.hard += excess;
            } else {
                violation.soft += excess;
            }
            c.max().map_or(0, |max| max - min_match)
        })
        .collect();
    Measure { violation, skews }
}

/// What one constraint's excess becomes when a pod leaves a domain, priced in O(1)
/// from its counts between two removals.
#[derive(Clone, Copy, Debug)]
struct Price {
    hard: bool,
    /// The smallest eligible count.
    min: i64,
    /// The excess now, over `floor` (the global minimum as Filter reads it + maxSkew).
    excess: i64,
    floor: i64,
    /// The same once a domain at the minimum loses a pod (the minimum drops by one).
    excess_at_min: i64,
    floor_at_min: i64,
}

impl Price {
    fn of(g: &CountingGroup, counts: &DomainCounts) -> Self {
        let min = counts.min();
        let skew = i64::from(g.max_skew);
        let floor = g.min_match(counts) + skew;
        let floor_at_min = g.min_match_with(counts.eligible(), min.saturating_sub(1)) + skew;
        Self {
            hard: g.when == WhenUnsatisfiable::DoNotSchedule,
            min,
            excess: counts.sum_above(floor),
            floor,
            excess_at_min: counts.sum_above(floor_at_min),
            floor_at_min,
        }
    }

    /// The excess once a pod leaves a domain that counts `count`.
    fn excess_without(&self, count: i64) -> i64 {
        let (floor, excess) = if count == self.min {
            (self.floor_at_min, self.excess_at_min)
        } else {
            (self.floor, self.excess)
        };
        excess - (count - floor).max(0) + (count - 1 - floor).max(0)
    }
}

/// A bucket of candidates: per constraint, `None` where the candidate is not counted,
/// else its domain (coarse constraints) or its domain's count (fine ones). Candidates
/// of one bucket leave the same measure; they differ only in crowding and name.
type Cell = Box<[Option<i64>]>;

/// A candidate in its bucket: how many of the ReplicaSet's pods share its node, and
/// its member index (the later name wins a tie).
type Entry = (usize, usize);

/// The greedy walk over the counts.
struct Walk<'a, const COARSE: usize> {
    tally: &'a Tally<COARSE>,
    groups: &'a [&'a CountingGroup],
    counts: Vec<DomainCounts>,
    /// Per constraint: the sum of squared domain counts.
    squares: Vec<i64>,
    prices: Vec<Price>,
    coarse: Vec<bool>,
    /// The excess and the evenness now, over every constraint.
    violation: Violation,
    evenness: i64,
    /// Per node: the ReplicaSet's pods still on it.
    crowd: HashMap<usize, usize>,
}

impl<'a, const COARSE: usize> Walk<'a, COARSE> {
    fn new(tally: &'a Tally<COARSE>, groups: &'a [&'a CountingGroup]) -> Self {
        let counts = tally.base.clone();
        let squares = counts
            .iter()
            .map(|c| c.iter().map(|(_, v)| v * v).sum())
            .collect();
        let prices = groups
            .iter()
            .zip(&counts)
            .map(|(g, c)| Price::of(g, c))
            .collect();
        let coarse = counts.iter().map(|c| c.eligible() <= COARSE).collect();
        let mut crowd: HashMap<usize, usize> = HashMap::new();
        for &n in tally.nodes.iter().flatten() {
            *crowd.entry(n).or_default() += 1;
        }
        let mut walk = Self {
            tally,
            groups,
            counts,
            squares,
            prices,
            coarse,
            violation: Violation::default(),
            evenness: 0,
            crowd,
        };
        walk.total();
        walk
    }

    fn total(&mut self) {
        let mut v = Violation::default();
        for p in &self.prices {
            if p.hard {
                v.hard += p.excess;
            } else {
                v.soft += p.excess;
            }
        }
        self.violation = v;
        self.evenness = self.squares.iter().sum();
    }

    /// The free members in removal order: state by state as the controller takes
    /// them (phase, then readiness), within a state the best removal each time.
    fn run(mut self, members: &[Member]) -> Vec<usize> {
        let state = |k: usize| -> (PhaseRank, bool) {
            let c = &members[k].pod.candidate;
            (c.phase, c.ready)
        };
        let mut left: Vec<usize> = (0..members.len()).filter(|&k| members[k].free).collect();
        let mut order = Vec::with_capacity(left.len());
        while let Some(first) = left.iter().map(|&k| state(k)).min() {
            let (now, later): (Vec<usize>, Vec<usize>) = std::mem::take(&mut left)
                .into_iter()
                .partition(|&k| state(k) == first);
            let before = order.len();
            self.state(&now, &mut order);
            // A free pod is bound, so none is left over; if one were, the walk would
            // stop there, as the planner always has.
            if order.len() - before < now.len() {
                break;
            }
            left = later;
        }
        order
    }

    /// The bucket of member `k` now.
    fn cell(&self, k: usize) -> Cell {
        (0..self.counts.len())
            .map(|g| {
                self.tally.slot(k, g).map(|s| {
                    if self.coarse[g] {
                        i64::try_from(s).unwrap_or(i64::MAX)
                    } else {
                        self.counts[g].count(s)
                    }
                })
            })
            .collect()
    }

    /// The excess and the evenness left after removing a pod of `cell`.
    fn price(&self, cell: &[Option<i64>]) -> (Violation, i64) {
        let mut violation = self.violation;
        let mut evenness = self.evenness;
        for (g, x) in cell.iter().enumerate() {
            let Some(x) = *x else { continue };
            let count = if self.coarse[g] {
                usize::try_from(x).map_or(0, |s| self.counts[g].count(s))
            } else {
                x
            };
            let p = &self.prices[g];
            let change = p.excess_without(count) - p.excess;
            if p.hard {
                violation.hard += change;
            } else {
                violation.soft += change;
            }
            evenness -= 2 * count - 1;
        }
        (violation, evenness)
    }

    /// Takes member `k` out of the counts.
    fn remove(&mut self, k: usize) {
        for g in 0..self.counts.len() {
            let Some(s) = self.tally.slot(k, g) else {
                continue;
            };
            let count = self.counts[g].count(s);
            self.squares[g] -= 2 * count - 1;
            self.counts[g].update(s, -1);
            self.prices[g] = Price::of(self.groups[g], &self.counts[g]);
        }
        if let Some(c) = self.tally.nodes[k].and_then(|n| self.crowd.get_mut(&n)) {
            *c = c.saturating_sub(1);
        }
        self.total();
    }

    /// Walks the candidates of one state (`pods`, by name) into `order`. Each node
    /// offers its latest-named candidate.
    fn state(&mut self, pods: &[usize], order: &mut Vec<usize>) {
        let mut queues: HashMap<usize, Vec<usize>> = HashMap::new();
        for &k in pods {
            if let Some(n) = self.tally.nodes[k] {
                queues.entry(n).or_default().push(k);
            }
        }
        // Per fine constraint and domain: the nodes whose bucket follows its count.
        let mut in_domain: Vec<HashMap<usize, Vec<usize>>> =
            vec![HashMap::new(); self.coarse.len()];
        for (&node, ks) in &queues {
            for (g, index) in in_domain.iter_mut().enumerate() {
                if self.coarse[g] {
                    continue;
                }
                if let Some(s) = ks.iter().find_map(|&k| self.tally.slot(k, g)) {
                    index.entry(s).or_default().push(node);
                }
            }
        }
        let mut buckets = Buckets::default();
        for (&node, ks) in &queues {
            if let Some(&k) = ks.last() {
                buckets.insert(node, self.cell(k), (self.crowd_on(node), k));
            }
        }
        while let Some(k) = self.best(&buckets) {
            let Some(node) = self.tally.nodes[k] else {
                break;
            };
            buckets.take(node);
            if let Some(q) = queues.get_mut(&node) {
                q.pop();
            }
            self.remove(k);
            order.push(k);
            if let Some(&next) = queues.get(&node).and_then(|q| q.last()) {
                buckets.insert(node, self.cell(next), (self.crowd_on(node), next));
            }
            for (g, index) in in_domain.iter().enumerate() {
                let Some(others) = self.tally.slot(k, g).and_then(|s| index.get(&s)) else {
                    continue;
                };
                for &other in others {
                    if other == node {
                        continue;
                    }
                    if let Some(&rep) = queues.get(&other).and_then(|q| q.last()) {
                        buckets.refile(other, self.cell(rep));
                    }
                }
            }
        }
    }

    fn crowd_on(&self, node: usize) -> usize {
        self.crowd.get(&node).copied().unwrap_or(0)
    }

    /// The member whose removal leaves the best [`RemovalRank`], the latest name of
    /// equals.
    fn best(&self, buckets: &Buckets) -> Option<usize> {
        let mut best: Option<((RemovalRank, Reverse<usize>), usize)> = None;
        for (cell, entries) in &buckets.cells {
            let Some(&(crowd, k)) = entries.last() else {
                continue;
            };
            let (violation, evenness) = self.price(cell);
            let key = ((violation, evenness, Reverse(crowd)), Reverse(k));
            if best.as_ref().is_none_or(|(b, _)| key < *b) {
                best = Some((key, k));
            }
        }
        best.map(|(_, k)| k)
    }
}

/// The candidates by bucket, each bucket ordered so its last entry is its best.
#[derive(Default)]
struct Buckets {
    cells: HashMap<Cell, BTreeSet<Entry>>,
    /// Per node: the bucket and entry of its candidate.
    placed: HashMap<usize, (Cell, Entry)>,
}

impl Buckets {
    fn insert(&mut self, node: usize, cell: Cell, entry: Entry) {
        self.cells.entry(cell.clone()).or_default().insert(entry);
        self.placed.insert(node, (cell, entry));
    }

    /// Takes the node's candidate out.
    fn take(&mut self, node: usize) -> Option<(Cell, Entry)> {
        let (cell, entry) = self.placed.remove(&node)?;
        if let Some(entries) = self.cells.get_mut(&cell) {
            entries.remove(&entry);
            if entries.is_empty() {
                self.cells.remove(&cell);
            }
        }
        Some((cell, entry))
    }

    /// Moves the node's candidate to `cell` if its bucket changed.
    fn refile(&mut self, node: usize, cell: Cell) {
        if self.placed.get(&node).is_some_and(|(c, _)| *c == cell) {
            return;
        }
        if let Some((_, entry)) = self.take(node) {
            self.insert(node, cell, entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use topospread::api::{Selector, Symbols};
    use topospread::snapshot::NodeFilter;

    fn group(max_skew: i32, min_domains: i32, hard: bool) -> CountingGroup {
        let mut symbols = Symbols::default();
        CountingGroup {
            namespace: symbols.intern("default"),
            when: if hard {
                WhenUnsatisfiable::DoNotSchedule
            } else {
                WhenUnsatisfiable::ScheduleAnyway
            },
            max_skew,
            topology_key: symbols.intern("zone"),
            selector: Selector::Nothing,
            min_domains,
            filter: NodeFilter::default(),
        }
    }

    proptest! {
        /// Pricing a removal from any domain gives the excess a recount gives after
        /// applying it: domains at the minimum (the floor drops), between, and above
        /// the floor; minDomains above and below the eligible domains.
        #[test]
        fn a_priced_removal_is_the_recounted_one(
            counts in proptest::collection::vec(0i64..6, 1..7),
            max_skew in 1i32..4,
            min_domains in 1i32..9,
            hard in any::<bool>(),
        ) {
            let g = group(max_skew, min_domains, hard);
            let mut c = DomainCounts::default();
            for (d, &n) in counts.iter().enumerate() {
                c.update(d, n);
            }
            let price = Price::of(&g, &c);
            prop_assert_eq!(price.excess, topospread::spread::excess(&g, &c));
            for (d, &n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
                let mut after = c.clone();
                after.update(d, -1);
                prop_assert_eq!(
                    price.excess_without(n),
                    topospread::spread::excess(&g, &after),
                    "domain {} of {:?}", d, counts
                );
            }
        }
    }
}
