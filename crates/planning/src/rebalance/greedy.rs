//! topospread's strategy: at each step, try evicting each candidate pod (an evictable
//! pod counted in a domain above `minimum + maxSkew` of a violated group, whether or
//! not it carries the constraint; one per workload, node and pod shape, since pods that
//! differ only in name get the same answer from the scheduler) and let the scheduler
//! place its replacement; keep the move that
//! lowers the global measure most (ties: the more crowded source domain, then namespace
//! and pod name). When no direct move
//! helps, try a two-move "make room" step: move a pod off a node of an under-full
//! domain first. Every step strictly lowers the measure, so the plan ends.

use super::candidates::{Candidates, Index, Search};
use super::measure::Violation;
use super::trial::Context;
use super::{
    ConstraintRef, Move, MoveReason, Plan, RebalanceError, RebalanceOptions, Strategy, Unresolved,
};
use std::collections::{BTreeSet, HashMap, HashSet};
use topospread::snapshot::{NO_DOMAIN, NodeId, PodId};

/// Candidate pods tried per step, taken round-robin over the violated groups (the most
/// violated first), so a step costs a bounded number of scheduling cycles.
const MAX_CANDIDATES_PER_STEP: usize = 64;
/// Past [`MAX_CANDIDATES_PER_STEP`] candidates, a step stops at the first improving move
/// after this many trials.
const MIN_TRIALS: usize = 8;
/// Make room: pods of a violated group tried, nodes of under-full domains per pod, and
/// helper pods per node.
const MAKE_ROOM_MOVERS: usize = 4;
const MAKE_ROOM_NODES: usize = 8;
const MAKE_ROOM_HELPERS: usize = 3;
/// Evictions in pairs: pairs are formed among this many candidates.
const MAX_PAIR_CANDIDATES: usize = 8;

/// The best move found in a step.
struct Best {
    violation: Violation,
    /// `(mover, to)`, in the order to carry them out (a helper first when making room).
    steps: Vec<(PodId, NodeId, Option<usize>)>,
    /// The steps are evictions made together (both pods out before either is placed).
    together: bool,
}

/// Takes up to `limit` candidates round-robin over the groups (the most violated
/// first); when that is all of them, orders them by name. Also says whether it is all.
fn pick(ctx: &Context, c: &Candidates, limit: usize) -> (Vec<PodId>, bool) {
    let total: usize = c.per_group.iter().map(|g| g.total).sum();
    let mut out: Vec<PodId> = Vec::new();
    let mut seen = HashSet::new();
    let longest = c.per_group.iter().map(|g| g.first.len()).max().unwrap_or(0);
    'outer: for k in 0..longest {
        for g in &c.per_group {
            if let Some(&id) = g.first.get(k)
                && seen.insert(id)
            {
                out.push(id);
                if out.len() >= limit {
                    break 'outer;
                }
            }
        }
    }
    let exhaustive = total <= limit;
    if exhaustive {
        out.sort_by_key(|id| ctx.pod_name(*id));
    }
    (out, exhaustive)
}

/// The best direct move among the candidates, if any lowers the measure (ties: the
/// more crowded source domain, then the order of `ids`). With `exhaustive` false (more
/// candidates than a step tries), the search stops at the first improving move once
/// [`MIN_TRIALS`] candidates were tried.
fn best_direct(
    ctx: &mut Context,
    ids: &[PodId],
    crowd: &HashMap<PodId, i64>,
    exhaustive: bool,
) -> Result<Option<Best>, RebalanceError> {
    let crowd_of = |id: PodId| crowd.get(&id).copied().unwrap_or(0);
    let mut best: Option<(Best, i64)> = None;
    for (tried, &id) in ids.iter().enumerate() {
        if !exhaustive && best.is_some() && tried >= MIN_TRIALS {
            break;
        }
        let Some(pod) = ctx.snapshot.pod(id) else {
            continue;
        };
        let changed = ctx.groups.counting(id, &pod.clone(), &ctx.snapshot);
        let Some(a) = ctx.try_move(id)? else { continue };
        let (v, reason) = ctx.groups.measure_with(&changed, &ctx.snapshot);
        let to = a.to;
        ctx.undo(a)?;
        let better = best
            .as_ref()
            .is_none_or(|(b, c)| v < b.violation || (v == b.violation && crowd_of(id) > *c));
        if v < ctx.groups.total && better {
            best = Some((
                Best {
                    violation: v,
                    steps: vec![(id, to, reason)],
                    together: false,
                },
                crowd_of(id),
            ));
        }
    }
    Ok(best.map(|(b, _)| b))
}

/// Two pods evicted together, then their replacements placed one after the other: what
/// a zone and a hostname constraint together can need, when every single replacement
/// has nowhere to go that both allow.
fn best_pair(
    ctx: &mut Context,
    c: &Candidates,
    ids: &[PodId],
) -> Result<Option<Best>, RebalanceError> {
    let firsts = &ids[..ids.len().min(MAX_PAIR_CANDIDATES)];
    let mut pairs: Vec<(PodId, PodId)> = Vec::new();
    for (i, &a) in firsts.iter().enumerate() {
        if let Some(&b) = c.second.get(&a) {
            pairs.push((a, b));
        }
        for &b in &firsts[i + 1..] {
            pairs.push((a, b));
        }
    }
    let mut best: Option<Best> = None;
    for (a, b) in pairs {
        if let Some(found) = try_together(ctx, a, b)?
            && best.as_ref().is_none_or(|x| found.violation < x.violation)
        {
            best = Some(found);
        }
    }
    Ok(best)
}

/// Evicts `a` and `b`, places `a`'s replacement, then `b`'s; the pair if both land on
/// other nodes and the measure ends lower. Undoes everything.
fn try_together(ctx: &mut Context, a: PodId, b: PodId) -> Result<Option<Best>, RebalanceError> {
    let (Some(pa), Some(pb)) = (ctx.snapshot.pod(a).cloned(), ctx.snapshot.pod(b).cloned()) else {
        return Ok(None);
    };
    let (Some(from_a), Some(from_b)) = (ctx.snapshot.pod_node(a), ctx.snapshot.pod_node(b)) else {
        return Ok(None);
    };
    let mut changed = ctx.groups.counting(a, &pa, &ctx.snapshot);
    let groups_b = ctx.groups.counting(b, &pb, &ctx.snapshot);
    changed.extend(groups_b.iter().copied());
    changed.sort_unstable();
    changed.dedup();
    // Both out first; the replacements come back pending, then are placed in order.
    let Some(out_a) = ctx.remove_pod(a) else {
        return Ok(None);
    };
    let Some(out_b) = ctx.remove_pod(b) else {
        ctx.add_pod(out_a)?;
        return Ok(None);
    };
    let mut result = None;
    let mut ra = out_a.clone();
    ra.node_name = None;
    let mut rb = out_b.clone();
    rb.node_name = None;
    if let Some(to_a) = ctx.place(&ra).filter(|n| *n != from_a) {
        ra.node_name = Some(ctx.snapshot.node(to_a).node.name.clone());
        let id_a = ctx.add_pod(ra)?;
        if let Some(to_b) = ctx.place(&rb).filter(|n| *n != from_b) {
            rb.node_name = Some(ctx.snapshot.node(to_b).node.name.clone());
            let id_b = ctx.add_pod(rb)?;
            let (v, reason) = ctx.groups.measure_with(&changed, &ctx.snapshot);
            if v < ctx.groups.total {
                result = Some(Best {
                    violation: v,
                    steps: vec![(a, to_a, reason), (b, to_b, reason)],
                    together: true,
                });
            }
            ctx.remove_pod(id_b);
        }
        ctx.remove_pod(id_a);
    }
    // Back in the order they left, so each gets its slot back.
    ctx.add_pod(out_b)?;
    ctx.add_pod(out_a)?;
    Ok(result)
}

/// Two moves: a helper pod off a node of an under-full domain of a violated hard group,
/// then one of the group's pods; the best pair that lowers the measure.
fn best_make_room(ctx: &mut Context, c: &Candidates) -> Result<Option<Best>, RebalanceError> {
    let mut best: Option<Best> = None;
    for candidates in &c.per_group {
        if !ctx.groups.list[candidates.group].is_hard() {
            continue;
        }
        let group = ctx.groups.list[candidates.group].group.clone();
        let counts = group.counts(&ctx.snapshot);
        let min = group.min_match(&counts);
        let Some(domains) = ctx.snapshot.domains(group.topology_key) else {
            continue;
        };
        // Nodes of the emptiest domains, by name.
        let mut targets: Vec<(String, NodeId)> = ctx
            .snapshot
            .nodes()
            .iter()
            .filter(|n| group.filter.admits(n, ctx.snapshot.symbols()))
            .filter(|n| {
                let d = domains.domain_of(n.id.index());
                d != NO_DOMAIN && counts.count(d as usize) <= min
            })
            .map(|n| (n.node.name.to_string(), n.id))
            .collect();
        targets.sort();
        targets.truncate(MAKE_ROOM_NODES);
        for &mover in candidates.first.iter().take(MAKE_ROOM_MOVERS) {
            for (_, node) in &targets {
                let mut helpers: Vec<(std::cmp::Reverse<i64>, (String, String), PodId)> = ctx
                    .snapshot
                    .node(*node)
                    .pods()
                    .iter()
                    .filter(|&&h| h != mover)
                    .filter_map(|&h| {
                        let p = ctx.snapshot.pod(h)?;
                        let ok = ctx.evictability.in_namespace(p)
                            && ctx.evictability.blocker(p, &ctx.snapshot).is_none();
                        ok.then(|| {
                            let cpu = p.requests.requested.milli_cpu;
                            (std::cmp::Reverse(cpu), ctx.pod_name(h), h)
                        })
                    })
                    .collect();
                helpers.sort();
                for (_, _, helper) in helpers.into_iter().take(MAKE_ROOM_HELPERS) {
                    if let Some(b) = try_pair(ctx, helper, mover)?
                        && best.as_ref().is_none_or(|x| b.violation < x.violation)
                    {
                        best = Some(b);
                    }
                }
            }
        }
        if best.is_some() {
            break;
        }
    }
    Ok(best)
}

/// Moves `helper`, then `mover`; the pair if the measure ends lower. Undoes both.
fn try_pair(
    ctx: &mut Context,
    helper: PodId,
    mover: PodId,
) -> Result<Option<Best>, RebalanceError> {
    let (Some(hp), Some(mp)) = (ctx.snapshot.pod(helper), ctx.snapshot.pod(mover)) else {
        return Ok(None);
    };
    let (hp, mp) = (hp.clone(), mp.clone());
    let mut changed = ctx.groups.counting(helper, &hp, &ctx.snapshot);
    let mover_groups = ctx.groups.counting(mover, &mp, &ctx.snapshot);
    changed.extend(mover_groups.iter().copied());
    changed.sort_unstable();
    changed.dedup();
    let Some(a1) = ctx.try_move(helper)? else {
        return Ok(None);
    };
    let result = match ctx.try_move(mover)? {
        None => None,
        Some(a2) => {
            let (v, _) = ctx.groups.measure_with(&changed, &ctx.snapshot);
            let (_, reason) = ctx.groups.measure_with(&mover_groups, &ctx.snapshot);
            let to = a2.to;
            ctx.undo(a2)?;
            (v < ctx.groups.total).then(|| Best {
                violation: v,
                steps: vec![(helper, a1.to, None), (mover, to, reason)],
                together: false,
            })
        }
    };
    ctx.undo(a1)?;
    Ok(result)
}

/// Runs the strategy.
pub(super) fn run(ctx: &mut Context, options: &RebalanceOptions) -> Result<Plan, RebalanceError> {
    run_with(ctx, options, &mut Index::default())
}

/// Runs the strategy with the candidates `search` finds.
pub(super) fn run_with(
    ctx: &mut Context,
    options: &RebalanceOptions,
    search: &mut impl Search,
) -> Result<Plan, RebalanceError> {
    let before = ctx.groups.report(&ctx.snapshot);
    let violation_before = ctx.groups.total;
    let mut moves: Vec<Move> = Vec::new();
    let mut stopped_at_limit = false;
    loop {
        if ctx.groups.total == Violation::default() {
            break;
        }
        let c = search.candidates(ctx, MAX_CANDIDATES_PER_STEP);
        let (ids, exhaustive) = pick(ctx, &c, MAX_CANDIDATES_PER_STEP);
        let best = match best_direct(ctx, &ids, &c.crowd, exhaustive)? {
            Some(b) => Some(b),
            None => match best_pair(ctx, &c, &ids)? {
                Some(b) => Some(b),
                None => best_make_room(ctx, &c)?,
            },
        };
        let Some(best) = best else { break };
        if moves.len() + best.steps.len() > options.max_moves {
            stopped_at_limit = true;
            break;
        }
        let mover = best.steps.last().map(|s| s.0);
        let names: Vec<(String, String)> = best.steps.iter().map(|s| ctx.pod_name(s.0)).collect();
        for (k, (id, to, reason)) in best.steps.into_iter().enumerate() {
            let Some(pod) = ctx.snapshot.pod(id).cloned() else {
                continue;
            };
            let changed = ctx.groups.counting(id, &pod, &ctx.snapshot);
            let (namespace, name) = ctx.pod_name(id);
            let Some(a) = ctx.move_to(id, to)? else {
                continue;
            };
            ctx.groups.commit(&changed, &ctx.snapshot);
            // A replacement back on its own node changed nothing: not a move.
            if a.from == a.to {
                continue;
            }
            let reason = match (reason, Some(id) == mover) {
                (Some(g), _) => {
                    MoveReason::Repairs(ConstraintRef::of(&ctx.groups.list[g].group, &ctx.snapshot))
                }
                (None, false) => MoveReason::MakeRoom {
                    for_pod: mover.map(|m| {
                        let (ns, n) = ctx.pod_name(m);
                        format!("{ns}/{n}")
                    }),
                },
                (None, true) => MoveReason::LowersExcess,
            };
            let reason = if best.together {
                let (ns, other) = &names[1 - k.min(1)];
                MoveReason::Together {
                    reason: Box::new(reason),
                    with: format!("{ns}/{other}"),
                }
            } else {
                reason
            };
            moves.push(Move {
                namespace,
                pod: name,
                from: ctx.node_name(a.from),
                to: ctx.node_name(a.to),
                reason,
            });
        }
    }
    // Why groups stay violated is read afresh, as the descheduler's report is: a kept
    // index can hold a stale eviction reason for nodes no move touched.
    let unresolved = unresolved(
        ctx,
        &mut Index::default(),
        stopped_at_limit,
        options.max_moves,
    );
    Ok(Plan {
        strategy: Strategy::Topospread,
        rounds: moves.len(),
        moves,
        unresolved,
        before,
        after: ctx.groups.report(&ctx.snapshot),
        violation_before,
        violation_after: ctx.groups.total,
        final_violations: ctx.groups.hard_violations(),
        pending: 0,
        snapshot: ctx.snapshot.clone(),
    })
}

/// Every in-scope group still violated, with the reason no move repairs it.
pub(super) fn unresolved(
    ctx: &mut Context,
    search: &mut impl Search,
    at_limit: bool,
    limit: usize,
) -> Vec<Unresolved> {
    let c = search.candidates(ctx, MAX_CANDIDATES_PER_STEP);
    let mut out = Vec::new();
    for candidates in &c.per_group {
        let g = &candidates.group;
        let group = &ctx.groups.list[*g];
        if !group.in_scope {
            continue;
        }
        let counts = group.group.counts(&ctx.snapshot);
        let min_domains = usize::try_from(group.group.min_domains).unwrap_or(0);
        let blocked = c.blocked.get(g);
        let why = if counts.eligible() < min_domains {
            format!(
                "only {} domains are eligible, fewer than minDomains {}: no move can satisfy it",
                counts.eligible(),
                min_domains
            )
        } else if at_limit {
            format!("stopped at --max-moves {limit}")
        } else if candidates.total == 0 {
            match blocked {
                Some(b) => {
                    let reasons: Vec<String> =
                        b.iter().map(|(r, n)| format!("{n} pod(s): {r}")).collect();
                    format!(
                        "no pod in the over-full domains may be evicted ({})",
                        reasons.join("; ")
                    )
                }
                None => "no pod in the over-full domains may be evicted".to_string(),
            }
        } else {
            let mut why = "no move the scheduler accepts lowers the violation: the replacements \
                 of the pods in the over-full domains land nowhere better (resources, affinity, \
                 taints or another constraint)"
                .to_string();
            if let Some(b) = blocked {
                let reasons: BTreeSet<&String> = b.keys().collect();
                why.push_str(&format!(
                    "; others may not be evicted: {}",
                    reasons.into_iter().cloned().collect::<Vec<_>>().join("; ")
                ));
            }
            why
        };
        let workload = group
            .owners
            .iter()
            .map(|w| format!("{}/{}", w.namespace, w.name))
            .collect::<Vec<_>>()
            .join(", ");
        out.push(Unresolved {
            workload,
            constraint: ConstraintRef::of(&group.group, &ctx.snapshot),
            why,
        });
    }
    out
}
