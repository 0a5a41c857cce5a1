//! The greedy strategy's candidates: at each step, the evictable pods counted in an
//! over-full domain (above `minimum + maxSkew`) of a violated group, whether or not
//! they carry the constraint; one per workload, node and pod shape, since pods that
//! differ only in name get the same answer from the scheduler; ordered by name.
//!
//! [`Index`] keeps them between steps: per group and domain, each class's first pod by
//! name, and the blocked pods by reason. A move or trial changes only the nodes a pod
//! leaves and lands on, so a step re-reads those nodes instead of every pod of every
//! over-full domain, which dominated planning on dumps of large ReplicaSets. The
//! straightforward search stays in the tests as the oracle (`reference`).

use super::evictable::Evictability;
use super::measure::{Group, WorkloadRef};
use super::trial::Context;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::sync::Arc;
use topospread::api::{Pod, Sym};
use topospread::snapshot::{DomainCounts, NO_DOMAIN, NodeId, PodId, Snapshot};

#[cfg(test)]
pub(super) mod reference;
#[cfg(test)]
mod tests;

/// One violated group's candidates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct GroupCandidates {
    /// The group's index.
    pub(super) group: usize,
    /// Its first candidates by namespace and name, as many as the search was asked for.
    pub(super) first: Vec<PodId>,
    /// How many candidates it has in all.
    pub(super) total: usize,
}

/// What one step searches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Candidates {
    /// Per violated group, hard groups first, then the most excess first.
    pub(super) per_group: Vec<GroupCandidates>,
    /// Per group: why pods in its over-full domains cannot move, with how many.
    pub(super) blocked: BTreeMap<usize, BTreeMap<String, usize>>,
    /// Per listed candidate with a second pod of its workload and shape on its node:
    /// that pod (the next by name), for evictions in pairs.
    pub(super) second: HashMap<PodId, PodId>,
    /// Per listed candidate: the most pods its domain holds in a violated group that
    /// lists it. Moves that lower the measure alike prefer the more crowded source: from
    /// [4, 1, 6], taking from the 6 first repairs in two moves, taking from the 4 needs
    /// three.
    pub(super) crowd: HashMap<PodId, i64>,
}

/// Where a step's candidates come from: [`Index`], or in the tests the straightforward
/// search that reads every pod of every over-full domain.
pub(super) trait Search {
    /// The candidates now, at most `limit` listed per group.
    fn candidates(&mut self, ctx: &mut Context, limit: usize) -> Candidates;
}

/// The violated groups: hard ones first, then the most excess, then by index.
pub(super) fn violated(groups: &[Group]) -> Vec<usize> {
    let mut violated: Vec<usize> = (0..groups.len())
        .filter(|&i| groups[i].excess > 0)
        .collect();
    violated.sort_by_key(|&i| {
        let g = &groups[i];
        (!g.is_hard(), Reverse(g.excess), i)
    });
    violated
}

/// What the scheduler reads of a pod besides its name: pods of one workload on one node
/// with the same shape are interchangeable candidates; one pinned by a nodeSelector, or
/// with other requests, tolerations or labels, is tried on its own.
pub(super) fn shape(pod: &Pod) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    pod.labels.hash(&mut h);
    pod.priority.hash(&mut h);
    pod.required_node_affinity.hash(&mut h);
    pod.preferred_node_affinity.hash(&mut h);
    pod.tolerations.hash(&mut h);
    pod.affinity.hash(&mut h);
    pod.spread_constraints.hash(&mut h);
    pod.requests.requested.hash(&mut h);
    pod.host_ports.hash(&mut h);
    pod.volumes.hash(&mut h);
    h.finish()
}

/// A candidate's sort key: namespace, then name (unique to one pod).
type NameKey = (Arc<str>, Arc<str>);

/// What the search reads of a pod that no move changes (a replacement keeps its
/// original's uid, name, labels and shape), kept across steps.
#[derive(Debug)]
struct Facts {
    /// Whose facts these are: a slot reused by another pod is read afresh.
    uid: Box<str>,
    key: NameKey,
    /// Index into [`FactsCache::workloads`].
    workload: usize,
    shape: u64,
    /// The groups counting the pod (its namespace, a selector matching its labels).
    groups: Vec<usize>,
    /// Why the pod may not be evicted (index into [`FactsCache::reasons`]): scope,
    /// rules and budgets, none of which a move changes.
    blocker: Option<usize>,
}

/// What every read of the index looks at, fixed for one step.
#[derive(Clone, Copy)]
struct View<'a> {
    snapshot: &'a Snapshot,
    groups: &'a [Group],
    evictability: &'a Evictability,
}

/// [`Facts`] per pod slot, with the workloads, namespaces and reasons interned.
#[derive(Debug, Default)]
struct FactsCache {
    by_slot: Vec<Option<Facts>>,
    workloads: HashMap<WorkloadRef, usize>,
    namespaces: HashMap<Sym, Arc<str>>,
    reasons: Vec<String>,
    reason_ids: HashMap<String, usize>,
}

impl FactsCache {
    /// Reads the facts of pod `id` if the slot holds another pod or nothing yet.
    fn read(&mut self, id: PodId, pod: &Pod, view: View<'_>) {
        let View {
            snapshot,
            groups,
            evictability,
        } = view;
        let i = id.index();
        if self.by_slot.len() <= i {
            self.by_slot.resize_with(i + 1, || None);
        }
        if self.by_slot[i].as_ref().is_some_and(|f| f.uid == pod.uid) {
            return;
        }
        let symbols = snapshot.symbols();
        let next = self.workloads.len();
        let workload = *self
            .workloads
            .entry(WorkloadRef::of(pod, snapshot))
            .or_insert(next);
        let namespace = self
            .namespaces
            .entry(pod.namespace)
            .or_insert_with(|| Arc::from(symbols.resolve(pod.namespace)))
            .clone();
        let blocker = evictability
            .candidate_blocker(pod, snapshot)
            .map(|b| self.reason(b.to_string()));
        self.by_slot[i] = Some(Facts {
            uid: pod.uid.clone(),
            key: (namespace, Arc::from(&*pod.name)),
            workload,
            shape: shape(pod),
            groups: groups
                .iter()
                .enumerate()
                .filter(|(_, g)| {
                    g.group.namespace == pod.namespace
                        && g.group.selector.matches(&pod.labels, symbols)
                })
                .map(|(k, _)| k)
                .collect(),
            blocker,
        });
    }

    fn reason(&mut self, why: String) -> usize {
        if let Some(&k) = self.reason_ids.get(&why) {
            return k;
        }
        self.reasons.push(why.clone());
        self.reason_ids.insert(why, self.reasons.len() - 1);
        self.reasons.len() - 1
    }

    /// The facts [`Self::read`] read for a slot.
    fn get(&self, id: PodId) -> Option<&Facts> {
        self.by_slot.get(id.index())?.as_ref()
    }
}

/// A class's first pod by name, and its second if it has one.
type Rep = (PodId, Option<PodId>);

/// One domain of a group: the candidates on its nodes and the blocked pods.
#[derive(Debug, Default)]
struct DomainEntry {
    /// Per workload, node and shape: the first pod by name, keyed by that name.
    reps: BTreeMap<NameKey, Rep>,
    /// Reason index -> pods it blocks (no zero entries).
    blocked: BTreeMap<usize, usize>,
}

/// What one node adds to its domain's entry in one group.
#[derive(Debug)]
struct NodePart {
    domain: u32,
    reps: Vec<(NameKey, Rep)>,
    blocked: Vec<(usize, usize)>,
}

impl NodePart {
    /// The node's listed pods in group `g`: counted by it, not terminating, on a node
    /// the group's filter admits, in a domain of its key. `None` when there are none.
    fn read(node: NodeId, g: usize, view: View<'_>, facts: &mut FactsCache) -> Option<Self> {
        let snapshot = view.snapshot;
        let group = &view.groups[g].group;
        let domain = snapshot
            .domains(group.topology_key)?
            .domain_of(node.index());
        let info = snapshot.nodes().get(node.index())?;
        if domain == NO_DOMAIN || !group.filter.admits(info, snapshot.symbols()) {
            return None;
        }
        let mut listed: Vec<PodId> = Vec::new();
        for &id in info.pods() {
            if let Some(pod) = snapshot.pod(id)
                && !pod.terminating
            {
                facts.read(id, pod, view);
                listed.push(id);
            }
        }
        let mut members: Vec<(&Facts, PodId)> = Vec::new();
        let mut blocked: Vec<(usize, usize)> = Vec::new();
        for id in listed {
            let Some(f) = facts.get(id) else { continue };
            if f.groups.binary_search(&g).is_err() {
                continue;
            }
            match f.blocker {
                Some(b) => match blocked.iter_mut().find(|(r, _)| *r == b) {
                    Some((_, n)) => *n += 1,
                    None => blocked.push((b, 1)),
                },
                None => members.push((f, id)),
            }
        }
        if members.is_empty() && blocked.is_empty() {
            return None;
        }
        members.sort_by(|a, b| a.0.key.cmp(&b.0.key));
        let mut classes: HashMap<(usize, u64), usize> = HashMap::new();
        let mut reps: Vec<(NameKey, Rep)> = Vec::new();
        for (f, id) in members {
            match classes.get(&(f.workload, f.shape)) {
                None => {
                    classes.insert((f.workload, f.shape), reps.len());
                    reps.push((f.key.clone(), (id, None)));
                }
                Some(&k) => {
                    let second = &mut reps[k].1.1;
                    if second.is_none() {
                        *second = Some(id);
                    }
                }
            }
        }
        Some(Self {
            domain,
            reps,
            blocked,
        })
    }
}

/// One group's candidates by domain, kept from the first step it was violated on.
#[derive(Debug, Default)]
struct GroupIndex {
    domains: HashMap<u32, DomainEntry>,
    nodes: HashMap<NodeId, NodePart>,
}

impl GroupIndex {
    /// Reads every node holding a pod group `g` counts.
    fn build(g: usize, view: View<'_>, facts: &mut FactsCache) -> Self {
        let mut index = Self::default();
        let group = &view.groups[g].group;
        let per_node = view.snapshot.match_counts(group.namespace, &group.selector);
        for info in view.snapshot.nodes() {
            if per_node.get(info.id.index()).is_some_and(|&c| c > 0) {
                index.refresh(info.id, g, view, facts);
            }
        }
        index
    }

    /// Re-reads one node: its old part leaves its domain's entry, the new one joins.
    fn refresh(&mut self, node: NodeId, g: usize, view: View<'_>, facts: &mut FactsCache) {
        if let Some(old) = self.nodes.remove(&node)
            && let Some(entry) = self.domains.get_mut(&old.domain)
        {
            for (key, _) in &old.reps {
                entry.reps.remove(key);
            }
            for (reason, n) in old.blocked {
                if let Some(count) = entry.blocked.get_mut(&reason) {
                    *count -= n;
                    if *count == 0 {
                        entry.blocked.remove(&reason);
                    }
                }
            }
            if entry.reps.is_empty() && entry.blocked.is_empty() {
                self.domains.remove(&old.domain);
            }
        }
        let Some(part) = NodePart::read(node, g, view, facts) else {
            return;
        };
        let entry = self.domains.entry(part.domain).or_default();
        for (key, rep) in &part.reps {
            entry.reps.insert(key.clone(), *rep);
        }
        for &(reason, n) in &part.blocked {
            *entry.blocked.entry(reason).or_default() += n;
        }
        self.nodes.insert(node, part);
    }
}

/// The first `limit` candidates by name over several domains' entries (a merge: each
/// entry is ordered, and a pod is in one domain only).
fn first_by_name(entries: &[&DomainEntry], limit: usize) -> Vec<Rep> {
    let mut iters: Vec<_> = entries.iter().map(|e| e.reps.iter()).collect();
    let mut heap = BinaryHeap::new();
    for (k, it) in iters.iter_mut().enumerate() {
        if let Some((key, rep)) = it.next() {
            heap.push(Reverse((key, k, *rep)));
        }
    }
    let mut out = Vec::new();
    while out.len() < limit {
        let Some(Reverse((_, k, rep))) = heap.pop() else {
            break;
        };
        out.push(rep);
        if let Some((key, rep)) = iters[k].next() {
            heap.push(Reverse((key, k, *rep)));
        }
    }
    out
}

/// The candidates kept incrementally (see the module's documentation).
#[derive(Debug, Default)]
pub(super) struct Index {
    facts: FactsCache,
    /// Per group, from the first step it was violated on.
    groups: Vec<Option<GroupIndex>>,
}

impl Search for Index {
    fn candidates(&mut self, ctx: &mut Context, limit: usize) -> Candidates {
        let touched = ctx.take_touched();
        let Context {
            snapshot,
            groups,
            evictability,
            ..
        } = ctx;
        let (snapshot, evictability): (&Snapshot, &Evictability) = (snapshot, evictability);
        let list = &groups.list;
        let view = View {
            snapshot,
            groups: list,
            evictability,
        };
        let Self {
            facts,
            groups: kept,
        } = self;
        kept.resize_with(list.len(), || None);
        for (g, index) in kept.iter_mut().enumerate() {
            if let Some(index) = index {
                for &node in &touched {
                    index.refresh(node, g, view, facts);
                }
            }
        }
        let violated = violated(list);
        // Per violated group: its counts and the count above which a domain is over-full.
        let mut over: Vec<Option<(Arc<DomainCounts>, i64)>> = vec![None; list.len()];
        let mut out = Candidates::default();
        for &g in &violated {
            let group = &list[g].group;
            let index = kept[g].get_or_insert_with(|| GroupIndex::build(g, view, facts));
            let counts = group.counts(snapshot);
            let floor = group.min_match(&counts) + i64::from(group.max_skew);
            let full: Vec<&DomainEntry> = index
                .domains
                .iter()
                .filter(|(d, _)| counts.count(**d as usize) > floor)
                .map(|(_, e)| e)
                .collect();
            let mut blocked: BTreeMap<String, usize> = BTreeMap::new();
            for e in &full {
                for (&reason, &n) in &e.blocked {
                    *blocked.entry(facts.reasons[reason].clone()).or_default() += n;
                }
            }
            if !blocked.is_empty() {
                out.blocked.insert(g, blocked);
            }
            let first = first_by_name(&full, limit);
            for &(rep, second) in &first {
                if let Some(s) = second {
                    out.second.insert(rep, s);
                }
            }
            out.per_group.push(GroupCandidates {
                group: g,
                first: first.into_iter().map(|r| r.0).collect(),
                total: full.iter().map(|e| e.reps.len()).sum(),
            });
            over[g] = Some((counts, floor));
        }
        for c in &out.per_group {
            for &id in &c.first {
                if out.crowd.contains_key(&id) {
                    continue;
                }
                let (Some(node), Some(f)) = (snapshot.pod_node(id), facts.get(id)) else {
                    continue;
                };
                let crowd = f
                    .groups
                    .iter()
                    .filter_map(|&g| {
                        // Listed in `g`: counted by it (these are its groups),
                        // evictable, on a node of its with a part, in an over-full domain.
                        let (counts, floor) = over[g].as_ref()?;
                        let part = kept[g].as_ref()?.nodes.get(&node)?;
                        let here = counts.count(part.domain as usize);
                        (here > *floor && f.blocker.is_none()).then_some(here)
                    })
                    .max();
                if let Some(crowd) = crowd {
                    out.crowd.insert(id, crowd);
                }
            }
        }
        out
    }
}
