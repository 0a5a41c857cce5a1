//! PreScore, Score and NormalizeScore: soft (`ScheduleAnyway`) constraints.

use super::PodTopologySpread;
use super::common::{Constraint, constraint_ref, required_keys};
use crate::api::{Pod, WhenUnsatisfiable};
use crate::framework::{
    CycleState, MAX_NODE_SCORE, NodeScore, PreScorePlugin, ScorePlugin, Status,
};
use crate::snapshot::{NO_DOMAIN, NodeId, NodeInfo, Snapshot};
use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One soft constraint's working data for Score.
#[derive(Clone, Debug)]
pub(crate) struct ScoreConstraint {
    pub(crate) constraint: Constraint,
    /// Per-node counts are read at Score time for hostname; domain sums otherwise.
    is_hostname: bool,
    /// Count per domain slot; `None` for slots no feasible node is in (upstream: no map entry).
    domain_counts: Vec<Option<i64>>,
    /// Slot of nodes without the key (upstream reads the missing label as `""`).
    empty_slot: usize,
    /// `log(size + 2)`: smaller topologies weigh more.
    weight: f64,
    /// Matching pods per node, for hostname constraints.
    per_node: Arc<Vec<u32>>,
    /// Each node's domain (shared with the snapshot).
    node_domains: Arc<Vec<u32>>,
    /// Per domain (not hostname): the constraint's term of a node's score there,
    /// `count × weight + maxSkew - 1`, worked out once per cycle instead of per node.
    terms: Vec<f64>,
}

impl ScoreConstraint {
    /// A node's domain, or [`NO_DOMAIN`].
    #[inline]
    fn domain_of(&self, node: usize) -> u32 {
        self.node_domains.get(node).copied().unwrap_or(NO_DOMAIN)
    }

    /// The slot of a node: its domain, or the empty-value slot when it lacks the key.
    fn slot(&self, dom: u32) -> usize {
        if dom == NO_DOMAIN {
            self.empty_slot
        } else {
            dom as usize
        }
    }
}

/// What PreScore computes for Score (`preScoreState` upstream).
#[derive(Clone, Debug, Default)]
pub struct PreScoreState {
    pub(crate) constraints: Vec<ScoreConstraint>,
    /// Nodes that miss a required topology key: scored 0.
    pub(crate) ignored: Vec<bool>,
}

impl PreScoreState {
    /// Per soft constraint: how it reads and the matching pods Score counted, per
    /// domain of the scored nodes (per scored node for hostname). Nodes without a
    /// required key are left out, as Score gives them 0.
    pub fn domain_counts(
        &self,
        feasible: &[NodeId],
        snapshot: &Snapshot,
    ) -> Vec<(crate::spread::ConstraintRef, BTreeMap<String, i64>)> {
        let symbols = snapshot.symbols();
        self.constraints
            .iter()
            .map(|sc| {
                let keys = snapshot.domains(sc.constraint.topology_key);
                let value = |slot: usize| {
                    u32::try_from(slot)
                        .ok()
                        .filter(|&d| keys.is_some_and(|k| (d as usize) < k.len()))
                        .and_then(|d| keys.map(|k| symbols.resolve(k.value(d)).to_string()))
                        .unwrap_or_default()
                };
                let mut counts = BTreeMap::new();
                for &id in feasible {
                    let idx = id.index();
                    if self.ignored.get(idx).copied().unwrap_or(false) {
                        continue;
                    }
                    let slot = sc.slot(sc.domain_of(idx));
                    let count = if sc.is_hostname {
                        i64::from(sc.per_node.get(idx).copied().unwrap_or(0))
                    } else {
                        sc.domain_counts.get(slot).copied().flatten().unwrap_or(0)
                    };
                    counts.insert(value(slot), count);
                }
                (
                    constraint_ref(&sc.constraint, &WhenUnsatisfiable::ScheduleAnyway, symbols),
                    counts,
                )
            })
            .collect()
    }
}

impl PodTopologySpread {
    fn pre_score_state(
        &self,
        pod: &Pod,
        feasible: &[NodeId],
        snapshot: &Snapshot,
    ) -> Option<PreScoreState> {
        let constraints = self.constraints_for(pod, &WhenUnsatisfiable::ScheduleAnyway, snapshot);
        if constraints.is_empty() {
            return None;
        }
        let symbols = snapshot.symbols();
        // Only pods' own constraints and non-system defaults require every key on a node:
        // then nodes without a zone label still get hostname spreading.
        let require_all = !pod.spread_constraints.is_empty() || !self.system_defaulted;
        let hostname = symbols.get(super::LABEL_HOSTNAME);
        let empty_value = symbols.get("");
        let mut ignored = vec![false; snapshot.nodes().len()];
        let mut score_constraints: Vec<ScoreConstraint> = constraints
            .into_iter()
            .map(|c| {
                let keys = snapshot.domains(c.topology_key);
                let n = keys.map_or(0, |k| k.len());
                let empty_slot = empty_value
                    .and_then(|e| keys.and_then(|k| k.domain_of_value(e)))
                    .map_or(n, |d| d as usize);
                ScoreConstraint {
                    node_domains: keys
                        .map_or_else(|| Arc::new(Vec::new()), |k| k.shared_node_domains()),
                    is_hostname: Some(c.topology_key) == hostname,
                    domain_counts: vec![None; n + 1],
                    empty_slot,
                    weight: 0.0,
                    per_node: Arc::new(Vec::new()),
                    terms: Vec::new(),
                    constraint: c,
                }
            })
            .collect();
        let plain: Vec<Constraint> = score_constraints
            .iter()
            .map(|s| s.constraint.clone())
            .collect();
        let keys = if require_all {
            required_keys(&plain)
        } else {
            SmallVec::new()
        };
        let mut sizes = vec![0usize; score_constraints.len()];
        let mut ignored_count = 0;
        for &id in feasible {
            // A node carries a key exactly when the key's domain table gives it a domain:
            // `nodeLabelsMatchSpreadConstraints` without a label lookup per node.
            if require_all
                && score_constraints
                    .iter()
                    .any(|sc| sc.domain_of(id.index()) == NO_DOMAIN)
            {
                ignored[id.index()] = true;
                ignored_count += 1;
                continue;
            }
            for (i, sc) in score_constraints.iter_mut().enumerate() {
                if sc.is_hostname {
                    continue;
                }
                let dom = sc.domain_of(id.index());
                let slot = sc.slot(dom);
                if sc.domain_counts[slot].is_none() {
                    sc.domain_counts[slot] = Some(0);
                    sizes[i] += 1;
                }
            }
        }
        for (i, sc) in score_constraints.iter_mut().enumerate() {
            let size = if sc.is_hostname {
                feasible.len() - ignored_count
            } else {
                sizes[i]
            };
            sc.weight = ((size + 2) as f64).ln();
            let c = &sc.constraint;
            if sc.is_hostname {
                sc.per_node = snapshot.match_counts(pod.namespace, &c.selector);
                continue;
            }
            // Upstream sums over every node (not only the feasible ones) that carries the
            // keys and passes the policies, into the domains the feasible nodes are in.
            let filter = self.node_filter(c, pod, keys.clone());
            let sums = snapshot.domain_counts(pod.namespace, &c.selector, c.topology_key, &filter);
            for (slot, count) in sc.domain_counts.iter_mut().enumerate() {
                if let Some(count) = count {
                    *count = sums.count(slot);
                }
            }
            let skew = f64::from(c.max_skew - 1);
            sc.terms = sc
                .domain_counts
                .iter()
                .map(|count| count.unwrap_or(0) as f64 * sc.weight + skew)
                .collect();
        }
        Some(PreScoreState {
            constraints: score_constraints,
            ignored,
        })
    }
}

impl PreScorePlugin for PodTopologySpread {
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        feasible: &[NodeId],
        snapshot: &Snapshot,
    ) -> Status {
        if snapshot.nodes().is_empty() {
            return Status::skip();
        }
        match self.pre_score_state(pod, feasible, snapshot) {
            Some(s) => {
                state.write(s);
                Status::success()
            }
            None => Status::skip(),
        }
    }
}

const PRE_SCORE_KEY: &str = "PreScorePodTopologySpread";

impl PreScoreState {
    /// The node's raw score: per constraint, the matching pods in its domain weighted
    /// by the constraint's weight, plus `maxSkew - 1`.
    fn node_score(&self, node: NodeId) -> i64 {
        let idx = node.index();
        if self.ignored.get(idx).copied().unwrap_or(false) {
            return 0;
        }
        let mut score = 0.0;
        for sc in &self.constraints {
            let dom = sc.domain_of(idx);
            if dom == NO_DOMAIN {
                continue;
            }
            score += if sc.is_hostname {
                let count = i64::from(sc.per_node.get(idx).copied().unwrap_or(0));
                count as f64 * sc.weight + f64::from(sc.constraint.max_skew - 1)
            } else {
                sc.terms.get(dom as usize).copied().unwrap_or(0.0)
            };
        }
        round_half_away(score)
    }
}

/// `math.Round` as [`f64::round`] gives it (half away from zero), without the libm call
/// `round` costs per node on targets without SSE4.1: a non-negative score below 2^53
/// splits exactly into its integer part and fraction.
#[inline]
fn round_half_away(x: f64) -> i64 {
    if !(0.0..9_007_199_254_740_992.0).contains(&x) {
        return x.round() as i64;
    }
    let whole = x as i64;
    if x - whole as f64 >= 0.5 {
        whole + 1
    } else {
        whole
    }
}

impl ScorePlugin for PodTopologySpread {
    fn score(
        &self,
        state: &CycleState,
        _pod: &Pod,
        node: &NodeInfo,
        _snapshot: &Snapshot,
    ) -> Result<i64, Status> {
        let s = state.require::<PreScoreState>(PRE_SCORE_KEY)?;
        Ok(s.node_score(node.id))
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        _pod: &Pod,
        nodes: &[NodeId],
        _snapshot: &Snapshot,
        out: &mut Vec<NodeScore>,
    ) -> Result<(), Status> {
        let s = state.require::<PreScoreState>(PRE_SCORE_KEY)?;
        out.extend(nodes.iter().map(|&node| NodeScore {
            node,
            score: s.node_score(node),
        }));
        Ok(())
    }

    fn normalize_score(&self, state: &CycleState, _pod: &Pod, scores: &mut [NodeScore]) -> Status {
        let Some(s) = state.read::<PreScoreState>() else {
            return Status::success();
        };
        let is_ignored = |n: NodeId| s.ignored.get(n.index()).copied().unwrap_or(false);
        let mut min = i64::MAX;
        let mut max = 0;
        for ns in scores.iter().filter(|ns| !is_ignored(ns.node)) {
            min = min.min(ns.score);
            max = max.max(ns.score);
        }
        // Scores repeat from node to node: the division is skipped for a score equal to
        // the node's before.
        let mut last = None;
        for ns in scores.iter_mut() {
            ns.score = if is_ignored(ns.node) {
                0
            } else if max == 0 {
                MAX_NODE_SCORE
            } else {
                match last {
                    Some((raw, normalized)) if raw == ns.score => normalized,
                    _ => {
                        let normalized = MAX_NODE_SCORE * (max + min - ns.score) / max;
                        last = Some((ns.score, normalized));
                        normalized
                    }
                }
            };
        }
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::round_half_away;

    #[test]
    fn rounding_matches_f64_round() {
        let edges = [
            0.0,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            2.4999999999999996,
            4.0 * 2f64.ln() + 4.0,
            1e15 + 0.5,
            4_503_599_627_370_495.5,
            9_007_199_254_740_991.0,
            1e300,
            -0.5,
            -2.5,
            f64::NAN,
        ];
        let grid = (0..20_000).map(|i| f64::from(i) * 0.0625 + f64::from(i % 7) * 1e-9);
        let logs = (0..5_000).map(|i| f64::from(i) * 7.0f64.ln());
        for x in edges.into_iter().chain(grid).chain(logs) {
            assert_eq!(round_half_away(x), x.round() as i64, "{x}");
        }
    }
}
