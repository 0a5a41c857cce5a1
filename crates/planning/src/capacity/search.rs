//! The search for the cheapest vector of added nodes that the scheduler accepts.

use super::exact::Bounds;
use super::greedy;
use super::hosts::Hosts;
use super::template::within_shared_limits;
use super::trial::{Trial, Trials};
use super::{
    Addition, CapacityError, CapacityPlan, CapacityRequest, Slot, Unplaceable, WorkloadSpread,
    ZONE_KEY, ZoneChoice,
};
use std::collections::{BTreeSet, HashSet};
use topospread::api::WhenUnsatisfiable;
use topospread::snapshot::PodId;
use topospread::spread::SpreadCounter;

/// Plans the fewest nodes (then the lowest price) that let every pending pod that any
/// number of nodes could place schedule; see the module's documentation.
pub fn plan(req: &CapacityRequest<'_>) -> Result<CapacityPlan, CapacityError> {
    let slots = slots(req)?;
    let mut trials = Trials::new(
        req.snapshot,
        req.config,
        req.features,
        req.seed,
        &slots,
        &req.templates,
    );
    let zeros = vec![0u32; slots.len()];
    let base = trials.run(&slots, &zeros)?;
    let pending_before = base.pending.clone();
    let hosts = Hosts::new(req, &slots, &pending_before);
    let mut search = Search {
        req,
        slots: &slots,
        hosts: &hosts,
        trials,
        allowed: hosts.unhostable().count(),
        failed: None,
        failures: HashSet::new(),
        proved: 0,
    };
    let lower = hosts
        .resource_lower_bound(req)
        .max(hosts.per_node_lower_bound(req));
    search.proved = lower;
    let mut exact = false;
    let mut lower_bound;
    let grown = if base.pending.len() <= search.allowed {
        Some((zeros.clone(), base))
    } else {
        search.grow(lower)?
    };
    let (best_v, best) = match grown {
        Some((v, t)) => {
            let (mut best_v, mut best) = if total(&v) > 0 {
                search.shrink(v, t, lower)?
            } else {
                (v, t)
            };
            let top = total(&best_v);
            let price = search.price(&best_v);
            if let Some(found) = search.exhaustive(lower, top, Some(price))? {
                exact = true;
                if let Some((v, t)) = found {
                    (best_v, best) = (v, t);
                }
                lower_bound = total(&best_v);
            } else {
                lower_bound = search.proved.max(lower);
            }
            // Pods no template hosts may bind to the cluster's nodes once added nodes
            // draw other pods away: the fewest nodes that place those too come first.
            let sure = hosts.surely_unplaceable(req);
            if best.pending.len() > sure && search.allowed > sure {
                let (allowed, proved) = (search.allowed, search.proved);
                search.allowed = sure;
                search.failures.clear();
                let pool = total(&search.pool_vector()).max(top);
                match search.exhaustive(lower, pool, None)? {
                    Some(Some((v, t))) => {
                        (best_v, best) = (v, t);
                        exact = true;
                        lower_bound = total(&best_v);
                    }
                    // No vector up to the pool places them: the answer stands.
                    Some(None) => {}
                    None => {
                        exact = false;
                        lower_bound = lower;
                    }
                }
                search.allowed = allowed;
                search.proved = proved;
                search.failures.clear();
            }
            (best_v, best)
        }
        None => {
            // Growth found no vector that places every pod: search every vector up to
            // the pool's size, else plan for the pods the pool placed.
            let pool_v = search.pool_vector();
            match search.exhaustive(lower, total(&pool_v), None)? {
                Some(Some((v, t))) => {
                    exact = true;
                    lower_bound = total(&v);
                    (v, t)
                }
                searched => {
                    let pool = search.trials.run(&slots, &pool_v)?;
                    search.allowed = pool.pending.len();
                    search.failures.clear();
                    lower_bound = 0;
                    let base = search.trials.run(&slots, &zeros)?;
                    let (v, t) = if pool.pending.len() >= base.pending.len() {
                        (zeros.clone(), base)
                    } else {
                        search.shrink(pool_v, pool, 0)?
                    };
                    // Every vector up to the pool's size was searched and none places
                    // every pod: the fewest nodes placing as many as the pool does are
                    // proven by the same search with that many pods allowed Pending
                    // (the bounds refute only vectors leaving more than that).
                    let (top, price) = (total(&v), search.price(&v));
                    search.proved = 0;
                    match (searched, top > 0) {
                        (Some(None), true) => match search.exhaustive(0, top, Some(price))? {
                            Some(found) => {
                                exact = true;
                                let (v, t) = found.unwrap_or((v, t));
                                lower_bound = total(&v);
                                (v, t)
                            }
                            None => (v, t),
                        },
                        _ => (v, t),
                    }
                }
            }
        }
    };
    let unplaceable = explain(req, &slots, &hosts, &best);
    let greedy = greedy::estimates(req, &slots, &hosts, &mut search.trials, &pending_before)?;
    let simulations = search.trials.runs;
    finish(
        req,
        &slots,
        best_v,
        best,
        Summary {
            exact,
            lower_bound,
            simulations,
            pending_before,
            unplaceable,
            greedy,
        },
    )
}

struct Summary {
    exact: bool,
    lower_bound: u32,
    simulations: usize,
    pending_before: Vec<PodId>,
    unplaceable: Vec<Unplaceable>,
    greedy: Vec<greedy::GreedyEstimate>,
}

/// The exact search runs on clusters of at most this many nodes and pods.
const EXHAUSTIVE_MAX_OBJECTS: usize = 1_500;
/// ... and stops after simulations whose sizes sum to this.
const EXHAUSTIVE_MAX_WORK: usize = 3_000_000;
/// ... or after checking this many vectors against the bounds.
const EXHAUSTIVE_MAX_VECTORS: usize = 1_000_000;

fn total(v: &[u32]) -> u32 {
    v.iter().sum()
}

/// Every (template, zone) a node may be added to, in template order then zone order.
pub(crate) fn slots(req: &CapacityRequest<'_>) -> Result<Vec<Slot>, CapacityError> {
    if req.templates.is_empty() {
        return Err(CapacityError::NoTemplates);
    }
    let mut seen = BTreeSet::new();
    for t in &req.templates {
        if !seen.insert(t.name.as_str()) {
            return Err(CapacityError::DuplicateTemplate {
                name: t.name.clone(),
            });
        }
    }
    let zones = cluster_zones(req.snapshot);
    let mut slots = Vec::new();
    for (i, t) in req.templates.iter().enumerate() {
        match &t.zones {
            ZoneChoice::Pinned(z) => slots.push(Slot {
                template: i,
                zone: Some(z.clone()),
            }),
            ZoneChoice::Allowed(list) => {
                for z in list {
                    if !zones.contains(z) {
                        return Err(CapacityError::UnknownZone {
                            template: t.name.clone(),
                            zone: z.clone(),
                            known: zones.iter().cloned().collect::<Vec<_>>().join(","),
                        });
                    }
                    slots.push(Slot {
                        template: i,
                        zone: Some(z.clone()),
                    });
                }
            }
            ZoneChoice::Listed(list) => slots.extend(list.iter().map(|z| Slot {
                template: i,
                zone: Some(z.clone()),
            })),
            ZoneChoice::Any if zones.is_empty() => slots.push(Slot {
                template: i,
                zone: None,
            }),
            ZoneChoice::Any => slots.extend(zones.iter().map(|z| Slot {
                template: i,
                zone: Some(z.clone()),
            })),
        }
    }
    Ok(slots)
}

/// The zones the cluster's nodes are in.
pub(crate) fn cluster_zones(snapshot: &topospread::Snapshot) -> BTreeSet<String> {
    let symbols = snapshot.symbols();
    let Some(key) = symbols.get(ZONE_KEY) else {
        return BTreeSet::new();
    };
    snapshot
        .nodes()
        .iter()
        .filter_map(|n| n.node.labels.get(key))
        .map(|v| symbols.resolve(v).to_string())
        .collect()
}

struct Search<'r, 'a> {
    req: &'r CapacityRequest<'a>,
    slots: &'r [Slot],
    hosts: &'r Hosts,
    trials: Trials<'a>,
    /// How many pods may stay Pending in an accepted run.
    allowed: usize,
    /// The growth's last failing total, and the total it guessed next.
    failed: Option<(u32, u32)>,
    /// Vectors whose runs left too many pods Pending.
    failures: HashSet<Vec<u32>>,
    /// Every vector of fewer nodes is known to leave too many pods Pending.
    proved: u32,
}

impl Search<'_, '_> {
    fn ok(&self, t: &Trial) -> bool {
        t.pending.len() <= self.allowed
    }

    /// Simulates `v`, remembering it when it fails so the exact search skips it.
    fn run(&mut self, v: &[u32]) -> Result<Trial, CapacityError> {
        let t = self.trials.run(self.slots, v)?;
        if !self.ok(&t) {
            self.failures.insert(v.to_vec());
        }
        Ok(t)
    }

    fn price(&self, v: &[u32]) -> u64 {
        v.iter()
            .zip(self.slots)
            .map(|(n, s)| u64::from(*n) * self.req.templates[s.template].price_micros)
            .sum()
    }

    /// Whether `v` keeps the templates' shared limits (NodePools' `spec.limits`).
    fn fits(&self, v: &[u32]) -> bool {
        if self.req.templates.iter().all(|t| t.shared.is_none()) {
            return true;
        }
        let mut per_template = vec![0u32; self.req.templates.len()];
        for (n, slot) in v.iter().zip(self.slots) {
            per_template[slot.template] += n;
        }
        within_shared_limits(&self.req.templates, &per_template)
    }

    /// Whether one more node in slot `s` keeps the shared limits.
    fn fits_one_more(&self, v: &[u32], s: usize) -> bool {
        if self.req.templates[self.slots[s].template].shared.is_none() {
            return true;
        }
        let mut w = v.to_vec();
        w[s] += 1;
        self.fits(&w)
    }

    fn max_count(&self, template: usize) -> u32 {
        self.req.templates[template]
            .max_count
            .unwrap_or(super::MAX_COUNT)
    }

    /// `n` nodes shared out as the pending pods' cheapest templates ask, each template's
    /// share spread evenly over its zones, no slot past one node per pod it can host.
    fn grow_vector(&self, n: u32) -> Vec<u32> {
        let demand = self
            .hosts
            .demand_per_template(self.slots, &self.req.templates);
        let all: u64 = demand.iter().map(|d| *d as u64).sum();
        let mut v = vec![0u32; self.slots.len()];
        if all == 0 {
            return v;
        }
        for (t, d) in demand.iter().enumerate() {
            if *d == 0 {
                continue;
            }
            let share = (u64::from(n) * *d as u64).div_ceil(all);
            let mut left = share.min(u64::from(self.max_count(t))) as u32;
            let mine: Vec<usize> = (0..self.slots.len())
                .filter(|&s| self.slots[s].template == t && self.hosts.capacity(s) > 0)
                .collect();
            while left > 0 {
                let mut gave = false;
                for &s in &mine {
                    if left > 0 && v[s] < self.hosts.capacity(s) && self.fits_one_more(&v, s) {
                        v[s] += 1;
                        left -= 1;
                        gave = true;
                    }
                }
                if !gave {
                    break;
                }
            }
        }
        v
    }

    /// One node per pod each slot can host, within each template's maximum: enough for
    /// any pod that nodes can place at all.
    fn pool_vector(&self) -> Vec<u32> {
        let mut v = vec![0u32; self.slots.len()];
        let mut left: Vec<u32> = (0..self.req.templates.len())
            .map(|t| self.max_count(t))
            .collect();
        let caps: Vec<u32> = (0..self.slots.len())
            .map(|s| self.hosts.capacity_any(s))
            .collect();
        let mut progress = true;
        while progress {
            progress = false;
            for s in 0..self.slots.len() {
                let slot = &self.slots[s];
                if left[slot.template] > 0 && v[s] < caps[s] && self.fits_one_more(&v, s) {
                    v[s] += 1;
                    left[slot.template] -= 1;
                    progress = true;
                }
            }
        }
        v
    }

    /// Doubles the nodes from `lower` until a run places the pods; `None` when the
    /// cheapest templates' pool cannot.
    fn grow(&mut self, lower: u32) -> Result<Option<(Vec<u32>, Trial)>, CapacityError> {
        let mut n = lower.max(1);
        let mut last: Option<Vec<u32>> = None;
        loop {
            let v = self.grow_vector(n);
            if last.as_ref() == Some(&v) {
                break;
            }
            let t = self.run(&v)?;
            if self.ok(&t) {
                return Ok(Some((v, t)));
            }
            // As many more nodes as the pods left over need at the rate the added
            // nodes took pods, at most twice as many.
            let guess = self.guess_after_failure(total(&v), &t);
            self.failed = Some((total(&v), guess));
            last = Some(v);
            n = guess.clamp(n.saturating_add(1), n.saturating_mul(2));
        }
        // The cheapest templates alone cannot: every template's pool.
        let pool = self.pool_vector();
        let t = self.run(&pool)?;
        if self.ok(&t) {
            return Ok(Some((pool, t)));
        }
        Ok(None)
    }

    /// After a run of `k` added nodes that left pods over: `k` plus the nodes those pods
    /// need at the rate the added nodes took pods (twice `k` when they took none).
    fn guess_after_failure(&self, k: u32, t: &Trial) -> u32 {
        let excess = t.pending.len().saturating_sub(self.allowed) as u64;
        let placed = t.pods_on_added() as u64;
        if placed == 0 || k == 0 {
            return k.saturating_mul(2).max(1);
        }
        let more = (excess * u64::from(k)).div_ceil(placed);
        u32::try_from(u64::from(k) + more.max(1)).unwrap_or(u32::MAX)
    }

    /// Keeps only the nodes that ran pods, then bisects the total, then takes single
    /// nodes away and swaps dear nodes for cheap ones while the budget lasts.
    fn shrink(
        &mut self,
        mut best_v: Vec<u32>,
        mut best: Trial,
        floor: u32,
    ) -> Result<(Vec<u32>, Trial), CapacityError> {
        let size = self.req.snapshot.nodes().len() + self.req.snapshot.pods().count();
        let budget = self.trials.runs
            + if size > 5_000 {
                self.req.limits.large_simulations
            } else {
                self.req.limits.simulations
            };
        let used = best.used();
        if used != best_v {
            let t = self.run(&used)?;
            if self.ok(&t) {
                (best_v, best) = (used, t);
            }
        }
        let (mut lo, mut hi) = (floor, total(&best_v));
        // The growth's last failure bounds the search from below (by the heuristic, not
        // a proof) and guesses the answer.
        let mut guess = None;
        if let Some((k, g)) = self.failed
            && k < hi
        {
            lo = lo.max(k + 1);
            // Growth landed on its guess or beyond: is one node fewer enough?
            guess = Some(g.min(hi.saturating_sub(1)));
        }
        while lo < hi && self.trials.runs < budget {
            let mid = guess
                .take()
                .filter(|g| (lo..hi).contains(g))
                .unwrap_or(lo + (hi - lo) / 2);
            let v = scale(&best_v, mid);
            let t = self.run(&v)?;
            if self.ok(&t) {
                (best_v, best) = (v, t);
                hi = total(&best_v);
                // Is it tight? One node fewer next.
                guess = hi.checked_sub(1);
            } else {
                lo = mid + 1;
                guess = Some(self.guess_after_failure(mid, &t));
            }
        }
        // On a large cluster each run schedules thousands of pods: the bisection's
        // answer stands.
        let mut improved = size <= 5_000;
        while improved && self.trials.runs < budget {
            improved = false;
            let mut order: Vec<usize> = (0..self.slots.len()).filter(|&s| best_v[s] > 0).collect();
            order.sort_by_key(|&s| {
                (
                    std::cmp::Reverse(self.req.templates[self.slots[s].template].price_micros),
                    std::cmp::Reverse(best_v[s]),
                )
            });
            for s in order {
                if self.trials.runs >= budget || best_v[s] == 0 || total(&best_v) <= floor {
                    break;
                }
                let mut v = best_v.clone();
                v[s] -= 1;
                let t = self.run(&v)?;
                if self.ok(&t) {
                    (best_v, best) = (v, t);
                    improved = true;
                }
            }
        }
        // Same count, lower price: a dear node for a cheap one.
        let mut improved = size <= 5_000;
        while improved && self.trials.runs < budget {
            improved = false;
            'swap: for s in 0..self.slots.len() {
                let dear = self.req.templates[self.slots[s].template].price_micros;
                for c in 0..self.slots.len() {
                    let cheap_t = self.slots[c].template;
                    if best_v[s] == 0 || self.req.templates[cheap_t].price_micros >= dear {
                        continue;
                    }
                    let used_t: u32 = (0..self.slots.len())
                        .filter(|&x| self.slots[x].template == cheap_t)
                        .map(|x| best_v[x])
                        .sum();
                    if used_t >= self.max_count(cheap_t) || self.trials.runs >= budget {
                        continue;
                    }
                    let mut v = best_v.clone();
                    v[s] -= 1;
                    v[c] += 1;
                    if !self.fits(&v) {
                        continue;
                    }
                    let t = self.run(&v)?;
                    if self.ok(&t) {
                        (best_v, best) = (v, t);
                        improved = true;
                        break 'swap;
                    }
                }
            }
        }
        Ok((best_v, best))
    }

    /// The exact search: every vector of `floor..=top` nodes within the templates'
    /// maxima and shared limits, in increasing total then price (the found total only
    /// below the found price); a vector the bounds refute (see [`super::exact`]) is skipped, the
    /// others are simulated in that order, each once. The first that places the pods is
    /// the minimum, as the bounds only skip vectors whose runs cannot. `None` when the
    /// budget runs out first ([`Self::proved`] then says how far it got); `Some(None)`
    /// when nothing beats the found answer.
    #[allow(clippy::type_complexity)]
    fn exhaustive(
        &mut self,
        floor: u32,
        top: u32,
        below_price: Option<u64>,
    ) -> Result<Option<Option<(Vec<u32>, Trial)>>, CapacityError> {
        let size = self.req.snapshot.nodes().len() + self.req.snapshot.pods().count();
        if top == 0 || floor > top {
            return Ok(Some(None));
        }
        // Each simulation costs about the cluster's size: large clusters get the
        // heuristic's answer, with its lower bound.
        if size > EXHAUSTIVE_MAX_OBJECTS {
            return Ok(None);
        }
        let bounds = Bounds::new(self.req, self.slots, self.hosts, self.allowed);
        let simulations = self
            .req
            .limits
            .exhaustive_simulations
            .min(EXHAUSTIVE_MAX_WORK / size.max(1));
        let mut enumerated = 0usize;
        let mut spent = 0usize;
        for k in floor..=top {
            let mut all = Vec::new();
            if !self.vectors(k, &bounds, &mut enumerated, &mut all) {
                return Ok(None);
            }
            let mut all: Vec<(u64, Vec<u32>)> = all
                .into_iter()
                .map(|v| (self.price(&v), v))
                .filter(|(p, _)| k < top || below_price.is_none_or(|b| *p < b))
                .collect();
            all.sort();
            for (_, v) in all {
                if self.failures.contains(&v) {
                    continue;
                }
                if spent >= simulations {
                    return Ok(None);
                }
                spent += 1;
                let t = self.run(&v)?;
                if self.ok(&t) {
                    return Ok(Some(Some((v, t))));
                }
            }
            self.proved = self.proved.max(k.saturating_add(1).min(top));
        }
        Ok(Some(None))
    }

    /// Every vector of `k` nodes within the templates' maxima and shared limits that
    /// the bounds do not refute; false when the enumeration passes its budget.
    fn vectors(
        &self,
        k: u32,
        bounds: &Bounds,
        enumerated: &mut usize,
        out: &mut Vec<Vec<u32>>,
    ) -> bool {
        let mut v = vec![0u32; self.slots.len()];
        let mut per_template = vec![0u32; self.req.templates.len()];
        self.fill(0, k, &mut v, &mut per_template, bounds, enumerated, out)
    }

    #[allow(clippy::too_many_arguments)]
    fn fill(
        &self,
        s: usize,
        left: u32,
        v: &mut Vec<u32>,
        per_template: &mut Vec<u32>,
        bounds: &Bounds,
        enumerated: &mut usize,
        out: &mut Vec<Vec<u32>>,
    ) -> bool {
        if s == self.slots.len() {
            if left == 0 {
                *enumerated += 1;
                if *enumerated > EXHAUSTIVE_MAX_VECTORS {
                    return false;
                }
                if !bounds.refutes(v) {
                    out.push(v.clone());
                }
            }
            return true;
        }
        let t = self.slots[s].template;
        let room = self.max_count(t).saturating_sub(per_template[t]).min(left);
        // The last slot takes what is left: nothing else to enumerate.
        let from = if s + 1 == self.slots.len() { left } else { 0 };
        if from > room {
            return true;
        }
        for n in from..=room {
            v[s] = n;
            per_template[t] += n;
            if self.req.templates[t].shared.is_some()
                && !within_shared_limits(&self.req.templates, per_template)
            {
                per_template[t] -= n;
                break;
            }
            let ok = self.fill(s + 1, left - n, v, per_template, bounds, enumerated, out);
            per_template[t] -= n;
            if !ok {
                v[s] = 0;
                return false;
            }
        }
        v[s] = 0;
        true
    }
}

/// `v` scaled to `k` nodes in all, by largest remainder.
fn scale(v: &[u32], k: u32) -> Vec<u32> {
    let all = u64::from(total(v));
    if all == 0 {
        return v.to_vec();
    }
    let mut out: Vec<u32> = v
        .iter()
        .map(|n| (u64::from(*n) * u64::from(k) / all) as u32)
        .collect();
    let mut rest: Vec<(u64, usize)> = v
        .iter()
        .enumerate()
        .map(|(i, n)| ((u64::from(*n) * u64::from(k)) % all, i))
        .collect();
    rest.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut left = k.saturating_sub(total(&out));
    for (_, i) in rest {
        if left == 0 {
            break;
        }
        if out[i] < v[i] {
            out[i] += 1;
            left -= 1;
        }
    }
    out
}

/// Why each pod still pending in the accepted run stays Pending whatever is added.
fn explain(
    req: &CapacityRequest<'_>,
    slots: &[Slot],
    hosts: &Hosts,
    best: &Trial,
) -> Vec<Unplaceable> {
    let snapshot = &best.snapshot;
    let symbols = snapshot.symbols();
    let mut zones: BTreeSet<String> = cluster_zones(req.snapshot);
    zones.extend(slots.iter().filter_map(|s| s.zone.clone()));
    let addable: BTreeSet<&str> = slots.iter().filter_map(|s| s.zone.as_deref()).collect();
    let zone_key = symbols.get(ZONE_KEY);
    let mut counter = None;
    let mut out = Vec::new();
    for (i, &id) in best.pending.iter().enumerate() {
        let Some(pod) = snapshot.pod(id) else {
            continue;
        };
        let name = format!("{}/{}", symbols.resolve(pod.namespace), pod.name);
        let reason = if let Some(r) = hosts.why_unhostable(id) {
            r.to_string()
        } else if let Some(c) = pod.spread_constraints.iter().find(|c| {
            c.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule
                && Some(c.topology_key) == zone_key
                && c.min_domains
                    .is_some_and(|m| usize::try_from(m).unwrap_or(0) > zones.len())
        }) {
            format!(
                "{ZONE_KEY} minDomains={} but the cluster and the templates have {} zone(s): the global minimum counts as 0, so no zone may hold more than maxSkew={} matching pods",
                c.min_domains.unwrap_or(0),
                zones.len(),
                c.max_skew
            )
        } else {
            let counter = counter.get_or_insert_with(|| {
                let mut s = snapshot.clone();
                SpreadCounter::new(req.config, req.features, &mut s)
                    .ok()
                    .map(|c| (c, s))
            });
            let pinned = counter.as_ref().and_then(|(c, s)| {
                c.pod_spread(pod, s).constraints.into_iter().find_map(|cc| {
                    let sp = cc.spread;
                    if !sp.constraint.is_hard() || sp.constraint.topology_key != ZONE_KEY {
                        return None;
                    }
                    let min = sp.counts.values().min().copied()?;
                    let stuck: Vec<&String> = sp
                        .counts
                        .iter()
                        .filter(|(z, n)| **n == min && !addable.contains(z.as_str()))
                        .map(|(z, _)| z)
                        .collect();
                    (!stuck.is_empty() && sp.counts.values().all(|n| *n <= min + i64::from(sp.constraint.max_skew)))
                        .then(|| {
                            format!(
                                "{}: zone {} holds the global minimum ({min} matching pods) and no template can add a node there",
                                sp.constraint,
                                stuck.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(",")
                            )
                        })
                })
            });
            match pinned {
                Some(p) => p,
                None => format!(
                    "still Pending with every template's nodes added: {}",
                    best.messages.get(i).map_or("", String::as_str)
                ),
            }
        };
        out.push(Unplaceable { pod: name, reason });
    }
    out
}

/// The plan from the accepted run.
fn finish(
    req: &CapacityRequest<'_>,
    slots: &[Slot],
    v: Vec<u32>,
    best: Trial,
    summary: Summary,
) -> Result<CapacityPlan, CapacityError> {
    let mut snapshot = best.snapshot;
    let additions: Vec<Addition> = slots
        .iter()
        .enumerate()
        .filter(|(s, _)| v[*s] > 0)
        .map(|(s, slot)| Addition {
            template: req.templates[slot.template].name.clone(),
            zone: slot.zone.clone(),
            count: v[s],
            nodes: best.added[s]
                .iter()
                .map(|id| snapshot.node(*id).node.name.to_string())
                .collect(),
        })
        .collect();
    let price_micros = slots
        .iter()
        .enumerate()
        .map(|(s, slot)| u64::from(v[s]) * req.templates[slot.template].price_micros)
        .sum();
    let spread = workload_spread(req, &mut snapshot, &summary.pending_before)?;
    Ok(CapacityPlan {
        additions,
        price_micros,
        exact: summary.exact,
        lower_bound: summary.lower_bound,
        simulations: summary.simulations,
        pending_before: summary.pending_before,
        pending_after: best.pending,
        unplaceable: summary.unplaceable,
        greedy: summary.greedy,
        spread,
        snapshot,
    })
}

/// `namespace/controller` of a pod, or `namespace/pod` without one.
pub(crate) fn workload_of(snapshot: &topospread::Snapshot, pod: &topospread::api::Pod) -> String {
    let ns = snapshot.symbols().resolve(pod.namespace);
    match &pod.controller {
        Some(c) => format!("{ns}/{}", c.name),
        None => format!("{ns}/{}", pod.name),
    }
}

fn workload_spread(
    req: &CapacityRequest<'_>,
    snapshot: &mut topospread::Snapshot,
    pending: &[PodId],
) -> Result<Vec<WorkloadSpread>, CapacityError> {
    let counter = SpreadCounter::new(req.config, req.features, snapshot)
        .map_err(|e| CapacityError::Config(e.to_string()))?;
    let mut out: Vec<(WorkloadSpread, PodId)> = Vec::new();
    for &id in pending {
        let Some(pod) = snapshot.pod(id) else {
            continue;
        };
        let workload = workload_of(snapshot, pod);
        let placed = usize::from(snapshot.pod_node(id).is_some());
        match out.iter_mut().find(|(w, _)| w.workload == workload) {
            Some((w, _)) => {
                w.pending_before += 1;
                w.placed += placed;
            }
            None => out.push((
                WorkloadSpread {
                    workload,
                    pending_before: 1,
                    placed,
                    constraints: Vec::new(),
                },
                id,
            )),
        }
    }
    Ok(out
        .into_iter()
        .map(|(mut w, id)| {
            if let Some(pod) = snapshot.pod(id) {
                w.constraints = counter
                    .pod_spread(pod, snapshot)
                    .constraints
                    .into_iter()
                    .map(|c| c.spread)
                    .collect();
            }
            w
        })
        .collect())
}
