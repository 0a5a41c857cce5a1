//! The descheduler's RemovePodsViolatingTopologySpreadConstraint, replayed through the
//! same scheduler so its plans can be put beside topospread's. Followed from
//! kubernetes-sigs/descheduler `pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/
//! topologyspreadconstraint.go` (`Balance`, `balanceDomains`, `sortDomains`) and
//! `pkg/descheduler/node/node.go` (`NodeFit`, `PodFitsAnyOtherNode`).
//!
//! One round is one `Balance` call. The pods it sees are the bound pods the default
//! evictor's `Filter` accepts (the caller's blockers), inside the namespaces and label
//! selector given. Per namespace, every distinct constraint those pods carry (its
//! `whenUnsatisfiable` among the allowed ones) counts the namespace's matching pods per
//! value of its topology key: every node carrying the key and passing the constraint's
//! node inclusion policies opens a domain, and a pod counts on any node carrying the
//! key. An unbalanced constraint moves pods from the largest domains toward the smallest
//! (never below the average, never more than half the excess), taking from the end of
//! each domain's list, ordered: pods with a nodeSelector or node affinity first, then by
//! ascending priority, then pods that fit no node of a below-average domain first. A
//! taken pod that fits none of those nodes (`topologyBalanceNodeFit`) is counted as
//! moved but not evicted. The evictions then go through the evictor's `nodeFit` and the
//! PodDisruptionBudgets, and the scheduler places the replacements. Rounds repeat until
//! one evicts nothing or the limit.

use super::candidates::Index;
use super::greedy::unresolved;
use super::trial::Context;
use super::{ConstraintRef, Move, MoveReason, Plan, RebalanceError, RebalanceOptions, Strategy};
use std::collections::{BTreeMap, HashMap, HashSet};
use topospread::api::{
    NodeInclusionPolicy, Pod, RequiredNodeAffinity, Selector, Sym, Toleration, WhenUnsatisfiable,
    find_untolerated_taint,
};
use topospread::plugins::noderesources::fit::{IgnoredResources, fits};
use topospread::snapshot::{NodeId, NodeInfo, PodId, Snapshot};

/// One constraint as the descheduler compares them (`topologySpreadConstraint`):
/// constraints equal in every field are balanced once per namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Tsc {
    max_skew: i32,
    key: Sym,
    /// The label selector with the pod's `matchLabelKeys` values merged in.
    selector: Selector,
    /// `nodeAffinityPolicy` (Honor when unset) and the declaring pod's required node
    /// affinity, kept only when honored.
    honor_affinity: bool,
    affinity: std::sync::Arc<RequiredNodeAffinity>,
    /// `nodeTaintsPolicy` (Ignore when unset) and the pod's tolerations when honored.
    honor_taints: bool,
    tolerations: std::sync::Arc<[Toleration]>,
}

impl Tsc {
    fn of(c: &topospread::api::SpreadConstraintSpec, pod: &Pod) -> Self {
        let honor_affinity = c.node_affinity_policy.unwrap_or(NodeInclusionPolicy::Honor)
            == NodeInclusionPolicy::Honor;
        let honor_taints = c.node_taints_policy.unwrap_or(NodeInclusionPolicy::Ignore)
            == NodeInclusionPolicy::Honor;
        Self {
            max_skew: c.max_skew,
            key: c.topology_key,
            selector: c.selector_for(&pod.labels),
            honor_affinity,
            affinity: if honor_affinity {
                pod.required_node_affinity.clone()
            } else {
                std::sync::Arc::default()
            },
            honor_taints,
            tolerations: if honor_taints {
                pod.tolerations.clone()
            } else {
                std::sync::Arc::from([])
            },
        }
    }

    /// `matchNodeInclusionPolicies`.
    fn includes(&self, node: &NodeInfo, snapshot: &Snapshot) -> bool {
        if self.honor_affinity
            && !self
                .affinity
                .matches(&node.node.labels, &node.node.name, snapshot.symbols())
        {
            return false;
        }
        !(self.honor_taints
            && find_untolerated_taint(&node.node.taints, &self.tolerations, false, |t| {
                t.effect.blocks_scheduling()
            })
            .is_some())
    }

    fn describe(&self, when: &WhenUnsatisfiable, snapshot: &Snapshot) -> ConstraintRef {
        let symbols = snapshot.symbols();
        ConstraintRef::new(
            symbols.resolve(self.key),
            self.max_skew,
            when.clone(),
            self.selector.display(symbols),
        )
    }
}

/// The descheduler's arguments and the default evictor's, as the plan takes them.
struct Args<'a> {
    /// `constraints`: ScheduleAnyway as well as DoNotSchedule.
    soft: bool,
    /// `topologyBalanceNodeFit`.
    balance_node_fit: bool,
    /// The default evictor's `nodeFit`.
    evictor_node_fit: bool,
    /// `namespaces.exclude`.
    exclude: &'a [String],
}

/// `NodeFit`: the node is schedulable, matches the pod's nodeSelector and required node
/// affinity, has no NoSchedule/NoExecute taint the pod does not tolerate, runs no pod
/// the pod's required anti-affinity rejects, and (unless the pod is on it) has room for
/// the pod's requests and one more pod.
fn node_fit(snapshot: &Snapshot, id: PodId, pod: &Pod, node: &NodeInfo) -> bool {
    let symbols = snapshot.symbols();
    if node.node.unschedulable
        || !pod
            .required_node_affinity
            .matches(&node.node.labels, &node.node.name, symbols)
        || find_untolerated_taint(&node.node.taints, &pod.tolerations, false, |t| {
            t.effect.blocks_scheduling()
        })
        .is_some()
    {
        return false;
    }
    let empty = topospread::api::Labels::default();
    for term in &pod.affinity.required_anti_affinity {
        if !node.node.labels.has(term.topology_key) {
            continue;
        }
        let rejects = node.pods().iter().any(|&other| {
            other != id
                && snapshot.pod(other).is_some_and(|o| {
                    o.name != pod.name
                        && term.matches(
                            o.namespace,
                            &o.labels,
                            snapshot.namespace_labels(o.namespace).unwrap_or(&empty),
                            symbols,
                        )
                })
        });
        if rejects {
            return false;
        }
    }
    if snapshot.pod_node(id) == Some(node.id) {
        return true;
    }
    fits(
        &pod.requests.requested,
        &node.node.allocatable,
        node.requested(),
        node.pods().len(),
        &IgnoredResources::default(),
    )
}

/// `PodFitsAnyOtherNode`: [`node_fit`] on some node of `nodes` the pod is not on.
fn fits_any_other(snapshot: &Snapshot, id: PodId, nodes: &[NodeId]) -> bool {
    let Some(pod) = snapshot.pod(id) else {
        return false;
    };
    let on = snapshot.pod_node(id);
    nodes
        .iter()
        .filter(|n| Some(**n) != on)
        .any(|&n| node_fit(snapshot, id, pod, snapshot.node(n)))
}

/// `hasSelectorOrAffinity`: a nodeSelector or any node affinity.
fn has_selector_or_affinity(pod: &Pod) -> bool {
    !pod.required_node_affinity.is_empty() || pod.preferred_node_affinity.is_some()
}

/// Whether the pod passes the plugin's pod filter: the evictor's `Filter` (the
/// caller's blockers, terminating pods, system-critical priority), the namespaces and
/// the label selector.
fn listed(ctx: &Context, options: &RebalanceOptions, args: &Args, pod: &Pod) -> bool {
    let symbols = ctx.snapshot.symbols();
    let ns = symbols.resolve(pod.namespace);
    !pod.terminating
        && pod.priority < super::evictable::SYSTEM_CRITICAL_PRIORITY
        && !options
            .blockers
            .contains_key(&(ns.to_string(), pod.name.to_string()))
        && !args.exclude.iter().any(|e| e == ns)
        && ctx.evictability.in_scope(pod, &ctx.snapshot)
}

/// One `Balance` call: the pods chosen for eviction, in the order chosen, each with the
/// constraint that chose it.
fn balance(ctx: &Context, options: &RebalanceOptions, args: &Args) -> Vec<(PodId, ConstraintRef)> {
    let snapshot = &ctx.snapshot;
    // `ListPodsOnNodes`: node by node, each node's pods by name.
    let mut by_namespace: BTreeMap<String, Vec<PodId>> = BTreeMap::new();
    for info in snapshot.nodes() {
        let mut here: Vec<(&str, PodId)> = info
            .pods()
            .iter()
            .filter_map(|&id| snapshot.pod(id).map(|p| (p, id)))
            .filter(|(p, _)| listed(ctx, options, args, p))
            .map(|(p, id)| (&*p.name, id))
            .collect();
        here.sort();
        for (_, id) in here {
            if let Some(p) = snapshot.pod(id) {
                by_namespace
                    .entry(snapshot.symbols().resolve(p.namespace).to_string())
                    .or_default()
                    .push(id);
            }
        }
    }
    let mut chosen: Vec<(PodId, ConstraintRef)> = Vec::new();
    let mut seen: HashSet<PodId> = HashSet::new();
    for pods in by_namespace.values() {
        let mut constraints: Vec<(Tsc, WhenUnsatisfiable)> = Vec::new();
        for &id in pods {
            let Some(pod) = snapshot.pod(id) else {
                continue;
            };
            for c in pod.spread_constraints.iter() {
                if c.when_unsatisfiable == WhenUnsatisfiable::ScheduleAnyway && !args.soft {
                    continue;
                }
                let tsc = Tsc::of(c, pod);
                if !constraints.iter().any(|(t, _)| *t == tsc) {
                    constraints.push((tsc, c.when_unsatisfiable.clone()));
                }
            }
        }
        for (tsc, when) in &constraints {
            let reason = tsc.describe(when, snapshot);
            for id in balance_constraint(snapshot, tsc, pods, args) {
                if seen.insert(id) {
                    chosen.push((id, reason.clone()));
                }
            }
        }
    }
    chosen
}

/// One constraint's domains, and `balanceDomains` over them: the pods it chooses.
fn balance_constraint(snapshot: &Snapshot, tsc: &Tsc, pods: &[PodId], args: &Args) -> Vec<PodId> {
    let symbols = snapshot.symbols();
    let mut domains: BTreeMap<Sym, Vec<PodId>> = BTreeMap::new();
    let mut eligible: Vec<NodeId> = Vec::new();
    for info in snapshot.nodes() {
        if tsc.includes(info, snapshot) {
            eligible.push(info.id);
            if let Some(v) = info.node.labels.get(tsc.key) {
                domains.entry(v).or_default();
            }
        }
    }
    let mut sum = 0usize;
    for &id in pods {
        let Some(pod) = snapshot.pod(id) else {
            continue;
        };
        if pod.terminating || !tsc.selector.matches(&pod.labels, symbols) {
            continue;
        }
        let Some(node) = snapshot.pod_node(id) else {
            continue;
        };
        // A pod counts on any node carrying the key, included by the policies or not.
        if let Some(v) = snapshot.node(node).node.labels.get(tsc.key) {
            domains.entry(v).or_default().push(id);
            sum += 1;
        }
    }
    let sizes = || domains.values().map(Vec::len);
    let (min, max) = (sizes().min().unwrap_or(0), sizes().max().unwrap_or(0));
    if domains.is_empty() || i64::try_from(max - min).unwrap_or(i64::MAX) <= i64::from(tsc.max_skew)
    {
        return Vec::new();
    }
    let ideal = sum as f64 / domains.len() as f64;
    // `sortDomains`: ascending size (ties by value, where upstream's order is a map's);
    // in each, nodeSelector/affinity pods first, then ascending priority, stable.
    let mut sorted: Vec<(Sym, Vec<PodId>)> = domains.into_iter().collect();
    sorted
        .sort_by(|a, b| (a.1.len(), symbols.resolve(a.0)).cmp(&(b.1.len(), symbols.resolve(b.0))));
    for (_, list) in &mut sorted {
        list.sort_by_key(|&id| {
            snapshot
                .pod(id)
                .map_or((true, 0), |p| (!has_selector_or_affinity(p), p.priority))
        });
    }
    // `filterNodesBelowIdealAvg`: eligible nodes of domains below the average.
    let below: HashSet<Sym> = sorted
        .iter()
        .filter(|(_, p)| (p.len() as f64) < ideal)
        .map(|(v, _)| *v)
        .collect();
    let targets: Vec<NodeId> = eligible
        .into_iter()
        .filter(|&n| {
            snapshot
                .node(n)
                .node
                .labels
                .get(tsc.key)
                .is_some_and(|v| below.contains(&v))
        })
        .collect();
    let mut fit_cache: HashMap<PodId, bool> = HashMap::new();
    let mut fits = |id: PodId| -> bool {
        *fit_cache
            .entry(id)
            .or_insert_with(|| fits_any_other(snapshot, id, &targets))
    };
    let mut out = Vec::new();
    let len = |s: &[(Sym, Vec<PodId>)], k: usize| s[k].1.len();
    let max_skew = i64::from(tsc.max_skew);
    let (mut i, mut j) = (0usize, sorted.len() - 1);
    while i < j {
        if len(&sorted, j) as f64 <= ideal {
            j -= 1;
        }
        let skew = len(&sorted, j) as i64 - len(&sorted, i) as i64;
        if skew <= max_skew {
            i += 1;
            continue;
        }
        let above = (len(&sorted, j) as f64 - ideal).ceil();
        let below_avg = (ideal - len(&sorted, i) as f64).ceil();
        let half = ((skew - max_skew) as f64 / 2.0).ceil();
        let take = above.min(below_avg).min(half);
        if take <= 0.0 {
            i += 1;
            continue;
        }
        let take = (take as usize).min(len(&sorted, j));
        // Pods that fit a node of a below-average domain go to the end, taken first.
        let mut list = std::mem::take(&mut sorted[j].1);
        let keyed: Vec<(bool, PodId)> = list.iter().map(|&id| (fits(id), id)).collect();
        list = keyed
            .iter()
            .filter(|(f, _)| !f)
            .chain(keyed.iter().filter(|(f, _)| *f))
            .map(|(_, id)| *id)
            .collect();
        let moved = list.split_off(list.len() - take);
        sorted[j].1 = list;
        for &id in &moved {
            // A pod that fits nowhere better still counts as moved, so the loop ends.
            if args.balance_node_fit && !fits(id) {
                continue;
            }
            out.push(id);
        }
        sorted[i].1.extend(moved);
    }
    out
}

/// Runs the strategy.
pub(super) fn run(ctx: &mut Context, options: &RebalanceOptions) -> Result<Plan, RebalanceError> {
    let args = Args {
        soft: options.descheduler_soft,
        balance_node_fit: options.topology_balance_node_fit,
        evictor_node_fit: options.descheduler_node_fit,
        exclude: &options.exclude_namespaces,
    };
    let before = ctx.groups.report(&ctx.snapshot);
    let violation_before = ctx.groups.total;
    let mut moves: Vec<Move> = Vec::new();
    let mut pending: Vec<PodId> = Vec::new();
    let mut rounds = 0;
    let mut evictions = 0;
    let all_nodes: Vec<NodeId> = ctx.snapshot.nodes().iter().map(|n| n.id).collect();
    while rounds < options.max_rounds && evictions < options.max_moves {
        // Replacements still pending are retried first, as the queue would.
        pending = place_all(ctx, pending, &mut moves, None)?;
        let chosen = balance(ctx, options, &args);
        // The evictor's PreEvictionFilter (`nodeFit`) and the PodDisruptionBudgets (each
        // allows as many evictions per round as it says; replacements are Ready by the
        // next round).
        let mut allowance: BTreeMap<String, i32> = BTreeMap::new();
        let mut evicted: Vec<(PodId, NodeId, ConstraintRef)> = Vec::new();
        for (id, reason) in chosen {
            if evictions + evicted.len() >= options.max_moves {
                break;
            }
            let Some(pod) = ctx.snapshot.pod(id) else {
                continue;
            };
            if args.evictor_node_fit && !fits_any_other(&ctx.snapshot, id, &all_nodes) {
                continue;
            }
            let symbols = ctx.snapshot.symbols();
            let budgets: Vec<(String, i32)> = ctx
                .snapshot
                .workloads()
                .disruption_budgets
                .iter()
                .filter(|b| b.covers(pod.namespace, &pod.labels, symbols))
                .map(|b| {
                    (
                        format!("{}/{}", symbols.resolve(b.namespace), b.name),
                        b.disruptions_allowed,
                    )
                })
                .collect();
            if budgets
                .iter()
                .any(|(n, a)| allowance.get(n).copied().unwrap_or(*a) <= 0)
            {
                continue;
            }
            for (n, a) in budgets {
                *allowance.entry(n).or_insert(a) -= 1;
            }
            let Some(node) = ctx.snapshot.pod_node(id) else {
                continue;
            };
            evicted.push((id, node, reason));
        }
        rounds += 1;
        if evicted.is_empty() {
            break;
        }
        evictions += evicted.len();
        // All evictions of a round happen, then the scheduler places the replacements.
        let mut replacements = Vec::new();
        for (id, from, reason) in evicted {
            let Some(mut pod) = ctx.snapshot.remove_pod(id) else {
                continue;
            };
            pod.node_name = None;
            let new = ctx.snapshot.add_pod(pod)?;
            replacements.push((new, from, (reason, rounds)));
        }
        let ids: Vec<PodId> = replacements.iter().map(|r| r.0).collect();
        pending.extend(place_all(ctx, ids, &mut moves, Some(&replacements))?);
        ctx.groups.refresh(&ctx.snapshot);
    }
    let hit_limit = rounds >= options.max_rounds;
    let mut unresolved = unresolved(ctx, &mut Index::default(), false, options.max_moves);
    if hit_limit {
        for u in &mut unresolved {
            u.why = format!(
                "still violated after {} rounds of evictions (the descheduler does not converge here); {}",
                options.max_rounds, u.why
            );
        }
    }
    let after = ctx.groups.report(&ctx.snapshot);
    Ok(Plan {
        strategy: Strategy::Descheduler,
        moves,
        unresolved,
        before,
        after,
        violation_before,
        violation_after: ctx.groups.total,
        final_violations: ctx.groups.hard_violations(),
        rounds,
        pending: pending.len(),
        snapshot: ctx.snapshot.clone(),
    })
}

/// A replacement pod, the node its original was evicted from, and the constraint and
/// round that evicted it.
type Replacement = (PodId, NodeId, (ConstraintRef, usize));

/// Schedules pending pods in order, binding each where the scheduler places it;
/// returns those left pending. `evicted` (replacement, from, reason) records moves: an
/// eviction whose replacement lands back on its node is still an eviction, and says so.
fn place_all(
    ctx: &mut Context,
    ids: Vec<PodId>,
    moves: &mut Vec<Move>,
    evicted: Option<&[Replacement]>,
) -> Result<Vec<PodId>, RebalanceError> {
    let mut left = Vec::new();
    for id in ids {
        let Some(pod) = ctx.snapshot.pod(id).cloned() else {
            continue;
        };
        let to = ctx.place(&pod);
        if let Some(to) = to {
            ctx.snapshot.bind(id, to);
        } else {
            left.push(id);
        }
        if let Some((_, from, reason)) = evicted.and_then(|e| e.iter().find(|r| r.0 == id)) {
            let (namespace, name) = ctx.pod_name(id);
            let (constraint, round) = reason.clone();
            let reason = MoveReason::Balances {
                constraint,
                round,
                back_on_same_node: to == Some(*from),
            };
            moves.push(Move {
                namespace,
                pod: name,
                from: ctx.node_name(*from),
                to: to.map_or_else(|| "<pending>".to_string(), |n| ctx.node_name(n)),
                reason,
            });
        }
    }
    Ok(left)
}
