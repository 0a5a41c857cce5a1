//! Necessary conditions on a vector of added nodes, checked without simulating it: a
//! lower bound on the pods any scheduler run over the cluster with those nodes leaves
//! Pending. The exact search skips a vector whose bound exceeds the pods allowed to
//! stay Pending, so it simulates only the vectors that could pass.
//!
//! Every bound is an upper bound on what the run can place, derived from rules the
//! scheduler never breaks while it binds pods one by one:
//!
//! - **Room** (NodeResourcesFit): a pod binds only where its requests fit, so a node
//!   holds no more pending pods than its free room divided by the smallest request (per
//!   resource, and its free pod count), and all nodes together hold no more than the
//!   smallest requests that sum within their free room. An added node holds only pods
//!   its slot can host (node affinity, taints, a request within its allocatable).
//! - **Spread** (PodTopologySpread's Filter, DoNotSchedule): a pod binds to a node only
//!   when its domain's count of matching pods, plus itself, is at most the global
//!   minimum plus maxSkew. Counts only grow during a run (no pod is removed when
//!   nothing can be preempted), so the minimum only grows: every domain that received
//!   a pod ends with at most the final minimum plus maxSkew. The final minimum is at
//!   most the final count of any domain surely counted, which is at most its count now
//!   plus the pods it can still take (the group's, and any other unbound pod its
//!   selector matches, which binds without this check). A group shares one node
//!   affinity and one set of tolerations (so "surely counted" is one set of nodes) and
//!   the profiles run the default plugins; `minDomains` beyond the domains there can be
//!   makes the minimum 0.
//!
//! None of this assumes that more nodes help: a vector is skipped only when its own
//! bound shows pods must stay Pending.

use super::hosts::Hosts;
use super::{CapacityRequest, HOSTNAME_KEY, Slot, ZONE_KEY};
use topospread::Feature;
use topospread::api::resources::Resources;
use topospread::api::{
    Labels, Selector, Sym, TaintEffect, WhenUnsatisfiable, find_untolerated_taint,
};

/// The least of each request over a set of pods: a node holds no more of them than its
/// room over these.
#[derive(Clone, Debug)]
struct Least {
    cpu: i64,
    memory: i64,
    storage: i64,
    scalars: Vec<(String, i64)>,
}

impl Least {
    fn of<'r>(mut requests: impl Iterator<Item = &'r Resources>) -> Option<Self> {
        let first = requests.next()?;
        let mut least = Self {
            cpu: first.milli_cpu,
            memory: first.memory,
            storage: first.ephemeral_storage,
            scalars: first.scalars().map(|(n, v)| (n.to_string(), v)).collect(),
        };
        for r in requests {
            least.cpu = least.cpu.min(r.milli_cpu);
            least.memory = least.memory.min(r.memory);
            least.storage = least.storage.min(r.ephemeral_storage);
            for (n, v) in &mut least.scalars {
                *v = (*v).min(r.scalar(n));
            }
        }
        least.scalars.retain(|(_, v)| *v > 0);
        Some(least)
    }

    /// How many such pods fit `room` with `slots` free pod slots.
    fn holds(&self, room: &Resources, slots: i64) -> i64 {
        let mut n = slots.max(0);
        for (have, least) in [
            (room.milli_cpu, self.cpu),
            (room.memory, self.memory),
            (room.ephemeral_storage, self.storage),
        ] {
            if least > 0 {
                n = n.min(have.max(0) / least);
            }
        }
        for (name, least) in &self.scalars {
            n = n.min(room.scalar(name).max(0) / least);
        }
        n
    }
}

/// A node's free room and free pod slots.
fn room(node: &topospread::snapshot::NodeInfo) -> (Resources, i64) {
    let mut room = node.node.allocatable.clone();
    room.sub(node.requested());
    let slots = node.node.allocatable.allowed_pod_number - node.pods().len() as i64;
    (room, slots)
}

/// Pods sharing one DoNotSchedule constraint on the hostname or the zone, and what the
/// cluster's nodes hold of its matching pods.
#[derive(Debug)]
struct Group {
    /// The constraint is on the hostname (else on the zone).
    hostname: bool,
    max_skew: i64,
    /// Indices (into [`Hosts::pods`]) of the group's unbound pods that could bind.
    members: Vec<usize>,
    /// Per cluster node surely counted (the key, the group's node affinity, its taints
    /// tolerated): its index, its domain (zone index, or the node itself), its count of
    /// matching pods, and how many of the group it can hold. Only these nodes can take
    /// a pod of the group: the others fail NodeAffinity, TaintToleration or, lacking
    /// the key, the spread Filter itself.
    nodes: Vec<(usize, usize, i64, i64)>,
    /// Per cluster node, its count when surely counted.
    counts: Vec<Option<i64>>,
    /// Zone key only, per zone: matching pods on any of its nodes (the most the count
    /// can be).
    zone_upper: Vec<i64>,
    /// Per slot: whether its nodes are surely counted, and how many of the group one of
    /// them holds.
    slots: Vec<(bool, i64)>,
    /// Per slot, its zone index (zone key only).
    slot_zone: Vec<Option<usize>>,
    /// For a zone group: a hostname group holding all its pods, which caps each node.
    per_node: Option<usize>,
    /// `minDomains` as the scheduler applies it (1 when unset or its gate is off): with
    /// fewer eligible domains the global minimum is 0.
    min_domains: i64,
    /// Cluster nodes with the key: hostname domains there are at most these (and the
    /// added nodes); per zone (zone key), whether a cluster node is in it.
    keyed_nodes: i64,
    zone_present: Vec<bool>,
    /// Other unbound pods the selector matches (they bind without the constraint's
    /// check): how many of them and the group a node can take, which bounds the final
    /// minimum instead.
    wild: Option<Reach>,
}

/// How many matching pods, of the group or not, each node can take.
#[derive(Debug)]
struct Reach {
    /// Per cluster node.
    nodes: Vec<i64>,
    /// Per zone, over its cluster nodes.
    zones: Vec<i64>,
    /// Per slot, one added node.
    slots: Vec<i64>,
}

/// The bounds, prepared once per plan.
pub(crate) struct Bounds {
    /// Every bound is void: a pod could preempt (evictions free room and lower counts).
    void: bool,
    /// Unbound pods that may stay Pending in an accepted run.
    allowed: usize,
    /// Unbound pods in all.
    unbound: usize,
    /// Pending pods the cluster's nodes hold at most, counted per node.
    cluster_holds: i64,
    /// Per slot, how many unbound pods one node holds at most.
    slot_holds: Vec<i64>,
    /// Per resource: the unbound pods' requests sorted, the cluster's free room, per
    /// slot a node's allocatable.
    resources: Vec<(Vec<i64>, i64, Vec<i64>)>,
    groups: Vec<Group>,
}

impl Bounds {
    pub(crate) fn new(
        req: &CapacityRequest<'_>,
        slots: &[Slot],
        hosts: &Hosts,
        allowed: usize,
    ) -> Self {
        let snapshot = req.snapshot;
        let n = hosts.pods.len();
        let void = hosts.preemption();
        let least_all = Least::of(hosts.requests.iter());
        let cluster_holds = least_all.as_ref().map_or(0, |l| {
            snapshot
                .nodes()
                .iter()
                .map(|node| {
                    let (room, free) = room(node);
                    l.holds(&room, free)
                })
                .fold(0i64, i64::saturating_add)
                .min(n as i64)
        });
        let slot_holds = (0..slots.len())
            .map(|s| {
                let mine: Vec<usize> = (0..n).filter(|&i| hosts.hosts(i, s)).collect();
                let a = &req.templates[slots[s].template].node.allocatable;
                Least::of(mine.iter().map(|&i| &hosts.requests[i])).map_or(0, |l| {
                    l.holds(a, a.allowed_pod_number).min(mine.len() as i64)
                })
            })
            .collect();
        let mut resources = Vec::new();
        let pick: [fn(&Resources) -> i64; 3] =
            [|r| r.milli_cpu, |r| r.memory, |r| r.ephemeral_storage];
        for f in pick {
            let mut want: Vec<i64> = hosts.requests.iter().map(f).collect();
            want.sort_unstable();
            let free = snapshot
                .nodes()
                .iter()
                .map(|node| f(&room(node).0).max(0))
                .fold(0i64, i64::saturating_add);
            let per_slot = slots
                .iter()
                .map(|s| f(&req.templates[s.template].node.allocatable))
                .collect();
            resources.push((want, free, per_slot));
        }
        let groups = if void {
            Vec::new()
        } else {
            groups(req, slots, hosts)
        };
        Self {
            void,
            allowed,
            unbound: n,
            cluster_holds,
            slot_holds,
            resources,
            groups,
        }
    }

    /// Whether the bounds show that a run of `v` leaves more pods Pending than allowed.
    pub(crate) fn refutes(&self, v: &[u32]) -> bool {
        !self.void && self.pending_at_least(v) > self.allowed
    }

    /// No run of `v` leaves fewer pods unbound than this.
    fn pending_at_least(&self, v: &[u32]) -> usize {
        let need = self.unbound as i64;
        let mut held = self.cluster_holds;
        for (s, n) in v.iter().enumerate() {
            held = held.saturating_add(i64::from(*n).saturating_mul(self.slot_holds[s]));
        }
        let mut pending = need - held.min(need);
        for (want, free, per_slot) in &self.resources {
            let mut cap = *free;
            for (s, n) in v.iter().enumerate() {
                cap = cap.saturating_add(i64::from(*n).saturating_mul(per_slot[s]));
            }
            let mut fit = 0i64;
            let mut sum = 0i64;
            for w in want {
                sum = sum.saturating_add(*w);
                if sum > cap {
                    break;
                }
                fit += 1;
            }
            pending = pending.max(need - fit);
        }
        // Hostname groups first: their bounds on the final minimum cap zone groups.
        let mut minima: Vec<Option<i64>> = vec![None; self.groups.len()];
        for pass in [true, false] {
            for (g, group) in self.groups.iter().enumerate() {
                if group.hostname != pass {
                    continue;
                }
                let placed = if pass {
                    let (m, placed) = hostname_places(group, v);
                    minima[g] = m;
                    placed
                } else {
                    self.zone_places(group, v, &minima)
                };
                pending = pending.max(group.members.len() as i64 - placed);
            }
        }
        usize::try_from(pending.max(0)).unwrap_or(usize::MAX)
    }

    /// The most pods of a zone `group` a run of `v` binds: per zone, the final minimum
    /// plus maxSkew less its count, within what its nodes hold.
    fn zone_places(&self, group: &Group, v: &[u32], minima: &[Option<i64>]) -> i64 {
        let skew = group.max_skew;
        // A node of the cluster (`Some(index)`) or an added one (`None`) holds no more
        // than the hostname group it also answers to lets it end with.
        let cap_node = |node: Option<usize>, holds: i64| -> i64 {
            let Some(h) = group.per_node else {
                return holds;
            };
            let hg = &self.groups[h];
            let Some(m) = minima[h] else {
                // No node is counted for the hostname group: none takes its pods.
                return 0;
            };
            let count = match node {
                Some(n) => match hg.counts[n] {
                    Some(c) => c,
                    None => return 0,
                },
                None => 0,
            };
            holds.min(m + hg.max_skew - count).max(0)
        };
        let zones = group.zone_upper.len();
        let mut lower = vec![0i64; zones];
        let mut cap = vec![0i64; zones];
        let mut counted = vec![false; zones];
        for &(n, z, count, holds) in &group.nodes {
            lower[z] += count;
            counted[z] = true;
            cap[z] = cap[z].saturating_add(cap_node(Some(n), holds));
        }
        for (s, n) in v.iter().enumerate() {
            let (is_counted, holds) = group.slots[s];
            let Some(z) = group.slot_zone[s] else {
                continue;
            };
            if *n == 0 || !is_counted {
                continue;
            }
            if let Some(h) = group.per_node
                && !self.groups[h].slots[s].0
            {
                continue;
            }
            counted[z] = true;
            cap[z] = cap[z].saturating_add(i64::from(*n).saturating_mul(cap_node(None, holds)));
        }
        // What each zone can end with: the group's pods alone, or with the others the
        // selector matches, anywhere in the zone.
        let reach: Vec<i64> = match &group.wild {
            None => cap.clone(),
            Some(r) => {
                let mut reach = r.zones.clone();
                for (s, n) in v.iter().enumerate() {
                    if let Some(z) = group.slot_zone[s] {
                        reach[z] =
                            reach[z].saturating_add(i64::from(*n).saturating_mul(r.slots[s]));
                    }
                }
                reach
            }
        };
        let Some(mut m) = (0..zones)
            .filter(|&z| counted[z])
            .map(|z| group.zone_upper[z].saturating_add(reach[z]))
            .min()
        else {
            return 0;
        };
        // Fewer zones than minDomains, however many are eligible: the minimum is 0.
        let mut domains = group.zone_present.clone();
        for (s, n) in v.iter().enumerate() {
            if let Some(z) = group.slot_zone[s]
                && *n > 0
            {
                domains[z] = true;
            }
        }
        if (domains.iter().filter(|d| **d).count() as i64) < group.min_domains {
            m = 0;
        }
        let placed: i64 = (0..zones)
            .map(|z| cap[z].min(m + skew - lower[z]).max(0))
            .fold(0i64, i64::saturating_add);
        placed.min(group.members.len() as i64)
    }
}

/// The most pods of a hostname `group` a run of `v` binds, and the bound on the final
/// minimum (`None` when no node is counted: no pod of the group binds).
fn hostname_places(group: &Group, v: &[u32]) -> (Option<i64>, i64) {
    let skew = group.max_skew;
    // The final minimum is at most any counted node's count now plus what it can take;
    // each node that takes a pod ends at most at that minimum plus maxSkew.
    let mut min: Option<i64> = None;
    for &(index, _, count, holds) in &group.nodes {
        let reach = group.wild.as_ref().map_or(holds, |r| r.nodes[index]);
        min = Some(min.map_or(count + reach, |m| m.min(count + reach)));
    }
    for (s, n) in v.iter().enumerate() {
        let (counted, holds) = group.slots[s];
        let reach = group.wild.as_ref().map_or(holds, |r| r.slots[s]);
        if *n > 0 && counted {
            min = Some(min.map_or(reach, |m| m.min(reach)));
        }
    }
    let Some(mut m) = min else {
        return (None, 0);
    };
    // Fewer domains than minDomains, however many are eligible: the minimum is 0.
    let added: i64 = v.iter().map(|n| i64::from(*n)).sum();
    if group.keyed_nodes.saturating_add(added) < group.min_domains {
        m = 0;
    }
    let mut placed = 0i64;
    for &(_, _, count, holds) in &group.nodes {
        placed += holds.min(m + skew - count).max(0);
    }
    for (s, n) in v.iter().enumerate() {
        let (counted, holds) = group.slots[s];
        if counted {
            placed =
                placed.saturating_add(i64::from(*n).saturating_mul(holds.min(m + skew).max(0)));
        }
    }
    (Some(m), placed.min(group.members.len() as i64))
}

/// The labels an added node of `slot` carries, as the simulation gives them (less the
/// hostname, which is its own).
fn slot_labels(
    req: &CapacityRequest<'_>,
    slot: &Slot,
    symbols: &mut topospread::api::Symbols,
) -> Labels {
    let node = &req.templates[slot.template].node;
    let mut pairs: Vec<_> = node.labels.iter().collect();
    if let Some(z) = &slot.zone {
        let k = symbols.intern(ZONE_KEY);
        let v = symbols.intern(z);
        pairs.retain(|(key, _)| *key != k);
        pairs.push((k, v));
    }
    Labels::from_pairs(pairs)
}

/// The pending pods' zone and hostname DoNotSchedule constraints the bounds can read
/// (no matchLabelKeys; a pod its own selector matches), one entry per namespace,
/// constraint, node affinity and tolerations: the namespace, the constraint, the
/// index of a representative pod and every member's index. `hostname` is `None` when
/// hostname groups are not bound.
fn keyed_groups<'s>(
    snapshot: &'s topospread::Snapshot,
    hosts: &Hosts,
    symbols: &topospread::api::Symbols,
    zone: Sym,
    hostname: Option<Sym>,
) -> Vec<KeyedGroup<'s>> {
    let mut keyed: Vec<KeyedGroup<'s>> = Vec::new();
    for (i, &id) in hosts.pods.iter().enumerate() {
        let Some(pod) = snapshot.pod(id) else {
            continue;
        };
        if !pod.scheduling_gates.is_empty() || pod.terminating {
            continue;
        }
        for c in pod.spread_constraints.iter() {
            if c.when_unsatisfiable != WhenUnsatisfiable::DoNotSchedule
                || !c.match_label_keys.is_empty()
                || !(Some(c.topology_key) == hostname || c.topology_key == zone)
                || !c.selector.matches(&pod.labels, symbols)
            {
                continue;
            }
            let same = keyed.iter_mut().find(|(ns, spec, rep, _)| {
                let rep = snapshot.pod(hosts.pods[*rep]);
                *ns == pod.namespace
                    && **spec == *c
                    && rep.is_some_and(|r| {
                        r.required_node_affinity == pod.required_node_affinity
                            && r.tolerations == pod.tolerations
                    })
            });
            match same {
                Some(g) => g.3.push(i),
                None => keyed.push((pod.namespace, c, i, vec![i])),
            }
        }
    }
    keyed
}

/// A group of pending pods one constraint binds: namespace, constraint, representative
/// pod's index, members' indices (into the hosts' pods).
type KeyedGroup<'s> = (
    Sym,
    &'s topospread::api::SpreadConstraintSpec,
    usize,
    Vec<usize>,
);

/// How many of `pods` (indices into the hosts' pods) one added node of `slots[s]` holds
/// at the least: those its template hosts, by the smallest requests among them.
fn holds_on_slot(
    req: &CapacityRequest<'_>,
    slots: &[Slot],
    hosts: &Hosts,
    s: usize,
    pods: &[usize],
) -> i64 {
    let mine: Vec<usize> = pods
        .iter()
        .copied()
        .filter(|&i| hosts.hosts(i, s))
        .collect();
    let a = &req.templates[slots[s].template].node.allocatable;
    Least::of(mine.iter().map(|&i| &hosts.requests[i])).map_or(0, |l| {
        l.holds(a, a.allowed_pod_number).min(mine.len() as i64)
    })
}

/// Where a group's selector also reaches pods that bind without its check: how many of
/// them each cluster node, each zone and an added node of each slot can take.
fn reach(
    req: &CapacityRequest<'_>,
    slots: &[Slot],
    hosts: &Hosts,
    reaching: &[usize],
    least: &Least,
    zones: usize,
    zone_of_label: &dyn Fn(&Labels) -> Option<usize>,
) -> Reach {
    let snapshot = req.snapshot;
    let count = reaching.len() as i64;
    let nodes: Vec<i64> = snapshot
        .nodes()
        .iter()
        .map(|node| {
            let (room, free) = room(node);
            least.holds(&room, free).min(count)
        })
        .collect();
    let mut per_zone = vec![0i64; zones];
    for (node, reach) in snapshot.nodes().iter().zip(&nodes) {
        if let Some(z) = zone_of_label(&node.node.labels) {
            per_zone[z] = per_zone[z].saturating_add(*reach);
        }
    }
    Reach {
        nodes,
        zones: per_zone,
        slots: (0..slots.len())
            .map(|s| holds_on_slot(req, slots, hosts, s, reaching))
            .collect(),
    }
}

/// The groups of pods the spread rule binds.
fn groups(req: &CapacityRequest<'_>, slots: &[Slot], hosts: &Hosts) -> Vec<Group> {
    let snapshot = req.snapshot;
    if req.config.profiles().iter().any(|p| p.plugins.is_some()) {
        return Vec::new();
    }
    let mut symbols = snapshot.symbols().clone();
    let hostname = symbols.intern(HOSTNAME_KEY);
    // Each node its own hostname domain, as the bound counts them: every cluster node's
    // hostname is its name (added nodes' names differ from them), else no hostname
    // group is bound.
    let own_hostnames = snapshot.nodes().iter().all(|n| {
        n.node
            .labels
            .get(hostname)
            .is_none_or(|v| symbols.resolve(v) == &*n.node.name)
    });
    let zone = symbols.intern(ZONE_KEY);
    let comparison = req
        .features
        .enabled(Feature::TaintTolerationComparisonOperators);
    let labels: Vec<Labels> = slots
        .iter()
        .map(|s| slot_labels(req, s, &mut symbols))
        .collect();
    let zones: Vec<String> = {
        let mut z: std::collections::BTreeSet<String> = super::search::cluster_zones(snapshot);
        z.extend(slots.iter().filter_map(|s| s.zone.clone()));
        z.into_iter().collect()
    };
    let zone_of_label = |l: &Labels| -> Option<usize> {
        let v = l.get(zone)?;
        let v = symbols.resolve(v);
        zones.iter().position(|z| z == v)
    };
    let keyed = keyed_groups(
        snapshot,
        hosts,
        &symbols,
        zone,
        own_hostnames.then_some(hostname),
    );
    let mut out: Vec<Group> = Vec::new();
    for (ns, spec, rep, members) in keyed {
        let Some(rep) = snapshot.pod(hosts.pods[rep]) else {
            continue;
        };
        let selector: &Selector = &spec.selector;
        if spec.max_skew < 1 {
            continue;
        }
        // The unbound pods the selector matches that may bind without this check.
        let others: Vec<usize> = (0..hosts.pods.len())
            .filter(|i| {
                !members.contains(i)
                    && snapshot.pod(hosts.pods[*i]).is_some_and(|p| {
                        p.namespace == ns
                            && !p.terminating
                            && p.scheduling_gates.is_empty()
                            && selector.matches(&p.labels, &symbols)
                    })
            })
            .collect();
        let reaching: Vec<usize> = members.iter().chain(&others).copied().collect();
        let least_reaching = Least::of(reaching.iter().map(|&i| &hosts.requests[i]));
        let least = Least::of(members.iter().map(|&i| &hosts.requests[i]));
        let Some(least) = least else {
            continue;
        };
        let on_host = spec.topology_key == hostname;
        let min_domains = if req.features.enabled(Feature::MinDomainsInPodTopologySpread) {
            i64::from(spec.min_domains.unwrap_or(1))
        } else {
            1
        };
        let matching = |node: &topospread::snapshot::NodeInfo| -> i64 {
            node.pods()
                .iter()
                .filter(|id| {
                    snapshot.pod(**id).is_some_and(|p| {
                        p.namespace == ns && !p.terminating && selector.matches(&p.labels, &symbols)
                    })
                })
                .count() as i64
        };
        let untolerated = |taints: &[topospread::api::Taint]| {
            find_untolerated_taint(taints, &rep.tolerations, comparison, |t| {
                matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute)
            })
            .is_some()
        };
        let mut nodes = Vec::new();
        let mut counts = Vec::with_capacity(snapshot.nodes().len());
        let mut zone_upper = vec![0i64; zones.len()];
        let mut zone_present = vec![false; zones.len()];
        let mut keyed_nodes = 0i64;
        for (index, node) in snapshot.nodes().iter().enumerate() {
            let count = matching(node);
            let z = zone_of_label(&node.node.labels);
            if let Some(z) = z {
                zone_upper[z] += count;
                zone_present[z] = true;
            }
            if node.node.labels.has(spec.topology_key) {
                keyed_nodes += 1;
            }
            let surely = node.node.labels.has(spec.topology_key)
                && rep
                    .required_node_affinity
                    .matches(&node.node.labels, &node.node.name, &symbols)
                && !untolerated(&node.node.taints);
            if !surely {
                counts.push(None);
                continue;
            }
            counts.push(Some(count));
            let (room, free) = room(node);
            let holds = least.holds(&room, free).min(members.len() as i64);
            let domain = if on_host { index } else { z.unwrap_or(0) };
            nodes.push((index, domain, count, holds));
        }
        let group_slots = slots
            .iter()
            .enumerate()
            .map(|(s, slot)| {
                let t = &req.templates[slot.template];
                let name = format!("{}-probe", t.name);
                let counted = (on_host || slot.zone.is_some())
                    && rep
                        .required_node_affinity
                        .matches(&labels[s], &name, &symbols)
                    && !untolerated(&t.node.taints);
                (counted, holds_on_slot(req, slots, hosts, s, &members))
            })
            .collect();
        let slot_zone: Vec<Option<usize>> = labels.iter().map(zone_of_label).collect();
        let wild = match (&least_reaching, others.is_empty()) {
            (Some(l), false) => Some(reach(
                req,
                slots,
                hosts,
                &reaching,
                l,
                zones.len(),
                &zone_of_label,
            )),
            _ => None,
        };
        out.push(Group {
            hostname: on_host,
            max_skew: i64::from(spec.max_skew),
            members,
            nodes,
            counts,
            zone_upper,
            slots: group_slots,
            slot_zone,
            per_node: None,
            min_domains,
            keyed_nodes,
            zone_present,
            wild,
        });
    }
    // A zone group whose pods all answer to one hostname group is capped per node by it.
    for g in 0..out.len() {
        if out[g].hostname {
            continue;
        }
        out[g].per_node = (0..out.len()).find(|&h| {
            out[h].hostname && out[g].members.iter().all(|i| out[h].members.contains(i))
        });
    }
    out
}
