//! The descheduler's RemovePodsViolatingTopologySpreadConstraint, written from its
//! documentation and observed behaviour, replayed through the same scheduler so its
//! plans can be put beside topospread's. Each round looks at every constraint on its
//! own (DoNotSchedule, and ScheduleAnyway when asked): when its skew exceeds maxSkew,
//! pods are taken from the fullest domains toward the emptiest, never past the ideal
//! average nor past half the excess skew, and only pods that would fit a node of
//! another domain (`topologyBalanceNodeFit`); the chosen pods that the default evictor
//! and the PodDisruptionBudgets allow are evicted all at once, then the scheduler
//! places their replacements. Rounds repeat until one evicts nothing or the limit.

use super::greedy::unresolved;
use super::trial::Context;
use super::{Move, Plan, RebalanceError, RebalanceOptions, Strategy};
use crate::api::{Pod, WhenUnsatisfiable};
use crate::plugins::podtopologyspread::NAME as PTS;
use crate::snapshot::{NO_DOMAIN, NodeId, PodId};
use std::collections::{BTreeMap, BTreeSet};

/// The pods one round chooses, with the group that chose each.
fn choose(ctx: &mut Context, soft: bool) -> Vec<(PodId, usize)> {
    let mut chosen: Vec<(PodId, usize)> = Vec::new();
    let mut taken: BTreeSet<PodId> = BTreeSet::new();
    for gi in 0..ctx.groups.list.len() {
        let g = &ctx.groups.list[gi];
        if !g.in_scope || (!g.is_hard() && !soft) {
            continue;
        }
        if g.group.when == WhenUnsatisfiable::ScheduleAnyway && !soft {
            continue;
        }
        let group = g.group.clone();
        let Some(keys) = ctx.snapshot.domains(group.topology_key) else {
            continue;
        };
        // Matching pods per eligible domain (minDomains is not supported upstream).
        let mut domains: BTreeMap<u32, Vec<PodId>> = BTreeMap::new();
        for n in ctx.snapshot.nodes() {
            if !group.filter.admits(n, ctx.snapshot.symbols()) {
                continue;
            }
            let d = keys.domain_of(n.id.index());
            if d == NO_DOMAIN {
                continue;
            }
            let pods = domains.entry(d).or_default();
            for &p in n.pods() {
                if let Some(pod) = ctx.snapshot.pod(p)
                    && !pod.terminating
                    && pod.namespace == group.namespace
                    && group.selector.matches(&pod.labels, ctx.snapshot.symbols())
                {
                    pods.push(p);
                }
            }
        }
        if domains.len() < 2 {
            continue;
        }
        let mut list: Vec<(u32, Vec<PodId>)> = domains.into_iter().collect();
        let total: usize = list.iter().map(|(_, p)| p.len()).sum();
        let ideal = total as f64 / list.len() as f64;
        let name = |d: u32| ctx.snapshot.symbols().resolve(keys.value(d)).to_string();
        list.sort_by_key(|(d, p)| (p.len(), name(*d)));
        let max_skew = i64::from(group.max_skew);
        // Virtual counts: pods marked to go leave the big domain and join the small one.
        let mut counts: Vec<i64> = list.iter().map(|(_, p)| p.len() as i64).collect();
        let (mut i, mut j) = (0usize, list.len() - 1);
        while i < j {
            let skew = counts[j] - counts[i];
            if skew <= max_skew {
                break;
            }
            let above = (counts[j] as f64 - ideal).ceil() as i64;
            let below = (ideal - counts[i] as f64).ceil() as i64;
            if above <= 0 {
                j -= 1;
                continue;
            }
            if below <= 0 {
                i += 1;
                continue;
            }
            let half = (skew - max_skew + 1) / 2;
            let k = above.min(below).min(half).max(1);
            // Lowest priority first, then by name, among pods not yet marked.
            let mut pods: Vec<(i32, String, PodId)> = list[j]
                .1
                .iter()
                .filter(|p| !taken.contains(p))
                .filter_map(|&p| {
                    let pod = ctx.snapshot.pod(p)?;
                    Some((pod.priority, pod.name.to_string(), p))
                })
                .collect();
            pods.sort();
            let from_domain = list[j].0;
            let mut moved = 0;
            for (_, _, p) in pods {
                if moved >= k {
                    break;
                }
                if fits_elsewhere(ctx, p, from_domain, group.topology_key) {
                    taken.insert(p);
                    chosen.push((p, gi));
                }
                // The descheduler moves the pod in its books whether or not the
                // evictor later lets it go.
                moved += 1;
            }
            counts[j] -= moved;
            counts[i] += moved;
            if counts[i] as f64 >= ideal {
                i += 1;
            }
            if counts[j] as f64 <= ideal {
                j = j.saturating_sub(1);
            }
            if moved == 0 {
                j = j.saturating_sub(1);
            }
        }
    }
    chosen
}

/// `topologyBalanceNodeFit`: whether the pod passes every Filter plugin but
/// PodTopologySpread on some node outside its domain.
fn fits_elsewhere(ctx: &mut Context, id: PodId, domain: u32, key: crate::api::Sym) -> bool {
    let Some(pod) = ctx.snapshot.pod(id) else {
        return false;
    };
    let mut pod: Pod = pod.clone();
    pod.node_name = None;
    let e = ctx.scheduler.explain(&ctx.snapshot, &pod);
    let keys = ctx.snapshot.domains(key);
    e.filter.iter().any(|n| {
        keys.is_some_and(|k| k.domain_of(n.node.index()) != domain)
            && n.verdicts
                .iter()
                .all(|(plugin, s)| *plugin == PTS || s.is_success() || s.is_skip())
    })
}

/// Runs the strategy.
pub(super) fn run(ctx: &mut Context, options: &RebalanceOptions) -> Result<Plan, RebalanceError> {
    let before = ctx.groups.report(&ctx.snapshot);
    let violation_before = ctx.groups.total;
    let mut moves: Vec<Move> = Vec::new();
    let mut pending: Vec<PodId> = Vec::new();
    let mut rounds = 0;
    let mut evictions = 0;
    while rounds < options.max_rounds && evictions < options.max_moves {
        // Replacements still pending are retried first, as the queue would.
        pending = place_all(ctx, pending, &mut moves, None)?;
        let chosen = choose(ctx, options.descheduler_soft);
        // The default evictor and the PodDisruptionBudgets (each allows as many
        // evictions per round as it says; replacements are Ready by the next round).
        let mut allowance: BTreeMap<String, i32> = BTreeMap::new();
        let mut evicted: Vec<(PodId, NodeId, usize)> = Vec::new();
        for (id, g) in chosen {
            if evictions + evicted.len() >= options.max_moves {
                break;
            }
            let Some(pod) = ctx.snapshot.pod(id) else {
                continue;
            };
            if !ctx.evictability.in_scope(pod, &ctx.snapshot)
                || ctx.evictability.blocker(pod, &ctx.snapshot).is_some()
            {
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
            evicted.push((id, node, g));
        }
        rounds += 1;
        if evicted.is_empty() {
            break;
        }
        evictions += evicted.len();
        // All evictions of a round happen, then the scheduler places the replacements.
        let mut replacements = Vec::new();
        for (id, from, g) in evicted {
            let Some(mut pod) = ctx.snapshot.remove_pod(id) else {
                continue;
            };
            pod.node_name = None;
            let reason = format!(
                "{} (round {rounds})",
                ctx.groups.list[g].group.describe(&ctx.snapshot)
            );
            let new = ctx.snapshot.add_pod(pod)?;
            replacements.push((new, from, reason));
        }
        let ids: Vec<PodId> = replacements.iter().map(|r| r.0).collect();
        pending.extend(place_all(ctx, ids, &mut moves, Some(&replacements))?);
        ctx.groups.refresh(&ctx.snapshot);
    }
    let hit_limit = rounds >= options.max_rounds;
    let mut unresolved = unresolved(ctx, false, options.max_moves);
    if hit_limit {
        for u in &mut unresolved {
            u.why = format!(
                "still violated after {} rounds of evictions; {}",
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

/// Schedules pending pods in order, binding each where the scheduler places it;
/// returns those left pending. `evicted` (replacement, from, reason) records moves.
fn place_all(
    ctx: &mut Context,
    ids: Vec<PodId>,
    moves: &mut Vec<Move>,
    evicted: Option<&[(PodId, NodeId, String)]>,
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
            moves.push(Move {
                namespace,
                pod: name,
                from: ctx.node_name(*from),
                to: to.map_or_else(|| "<pending>".to_string(), |n| ctx.node_name(n)),
                reason: reason.clone(),
            });
        }
    }
    Ok(left)
}
