//! The straightforward search, the tests' oracle for [`super::Index`]: at every step,
//! every pod of every over-full domain of every violated group is read afresh (its
//! shape, workload, groups and eviction blocker), listed, sorted by name and grouped
//! into classes.

use super::{Candidates, GroupCandidates, Search, shape, violated};
use crate::rebalance::measure::WorkloadRef;
use crate::rebalance::trial::Context;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use topospread::snapshot::{NO_DOMAIN, NodeId, PodId};

/// Reads everything at every step.
pub(in crate::rebalance) struct Reference;

impl Search for Reference {
    fn candidates(&mut self, ctx: &mut Context, limit: usize) -> Candidates {
        ctx.take_touched();
        let snapshot = &ctx.snapshot;
        let groups = &ctx.groups.list;
        let symbols = snapshot.symbols();
        let violated = violated(groups);
        let mut out = Candidates::default();
        let mut second: HashMap<PodId, PodId> = HashMap::new();
        let mut crowd: HashMap<PodId, i64> = HashMap::new();
        for &g in &violated {
            let group = &groups[g].group;
            let counts = group.counts(snapshot);
            let floor = group.min_match(&counts) + i64::from(group.max_skew);
            let mut list: Vec<((String, String), PodId, NodeId)> = Vec::new();
            if let Some(domains) = snapshot.domains(group.topology_key) {
                for info in snapshot.nodes() {
                    let dom = domains.domain_of(info.id.index());
                    if dom == NO_DOMAIN
                        || counts.count(dom as usize) <= floor
                        || !group.filter.admits(info, symbols)
                    {
                        continue;
                    }
                    for &id in info.pods() {
                        let Some(pod) = snapshot.pod(id) else {
                            continue;
                        };
                        if pod.terminating
                            || pod.namespace != group.namespace
                            || !group.selector.matches(&pod.labels, symbols)
                        {
                            continue;
                        }
                        if let Some(b) = ctx.evictability.candidate_blocker(pod, snapshot) {
                            *out.blocked
                                .entry(g)
                                .or_default()
                                .entry(b.to_string())
                                .or_default() += 1;
                            continue;
                        }
                        let here = counts.count(dom as usize);
                        crowd
                            .entry(id)
                            .and_modify(|c| *c = (*c).max(here))
                            .or_insert(here);
                        let name = (
                            symbols.resolve(pod.namespace).to_string(),
                            pod.name.to_string(),
                        );
                        list.push((name, id, info.id));
                    }
                }
            }
            list.sort();
            let mut classes: HashMap<(WorkloadRef, NodeId, u64), PodId> = HashMap::new();
            let mut reps = Vec::new();
            for (_, id, node) in list {
                let Some(pod) = snapshot.pod(id) else {
                    continue;
                };
                match classes.entry((WorkloadRef::of(pod, snapshot), node, shape(pod))) {
                    Entry::Vacant(v) => {
                        v.insert(id);
                        reps.push(id);
                    }
                    Entry::Occupied(o) => {
                        second.entry(*o.get()).or_insert(id);
                    }
                }
            }
            out.per_group.push(GroupCandidates {
                group: g,
                total: reps.len(),
                first: reps.into_iter().take(limit).collect(),
            });
        }
        let listed: HashSet<PodId> = out
            .per_group
            .iter()
            .flat_map(|c| c.first.iter().copied())
            .collect();
        out.second = second
            .into_iter()
            .filter(|(id, _)| listed.contains(id))
            .collect();
        out.crowd = crowd
            .into_iter()
            .filter(|(id, _)| listed.contains(id))
            .collect();
        out
    }
}
