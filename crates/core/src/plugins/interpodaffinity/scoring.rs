//! PreScore, Score and NormalizeScore: preferred terms both ways, and existing pods'
//! required affinity weighted by `hardPodAffinityWeight`.

use super::{InterPodAffinity, merge_namespaces, namespace_labels};
use crate::api::{AffinityTerm, Labels, Node, Pod, Sym, Symbols, WeightedAffinityTerm};
use crate::framework::{
    CycleState, MAX_NODE_SCORE, NodeScore, PreScorePlugin, ScorePlugin, Status,
};
use crate::snapshot::{NodeId, NodeInfo, Snapshot};
use std::collections::HashMap;

/// PreScore state: the score of every topology pair.
#[derive(Clone, Debug, Default)]
pub struct AffinityPreScoreState {
    topology_score: HashMap<Sym, HashMap<Sym, i64>>,
}

struct Scorer<'a> {
    topology_score: HashMap<Sym, HashMap<Sym, i64>>,
    symbols: &'a Symbols,
    empty: Labels,
}

impl Scorer<'_> {
    #[allow(clippy::too_many_arguments)]
    fn term(
        &mut self,
        term: &AffinityTerm,
        weight: i64,
        namespace: Sym,
        labels: &Labels,
        ns_labels: Option<&Labels>,
        node: &Node,
    ) {
        let ns_labels = ns_labels.unwrap_or(&self.empty);
        if term.matches(namespace, labels, ns_labels, self.symbols)
            && let Some(v) = node.labels.get(term.topology_key)
        {
            *self
                .topology_score
                .entry(term.topology_key)
                .or_default()
                .entry(v)
                .or_insert(0) += weight;
        }
    }

    fn terms(
        &mut self,
        terms: &[WeightedAffinityTerm],
        sign: i64,
        pod: &Pod,
        ns_labels: Option<&Labels>,
        node: &Node,
    ) {
        for t in terms {
            self.term(
                &t.term,
                t.weight * sign,
                pod.namespace,
                &pod.labels,
                ns_labels,
                node,
            );
        }
    }
}

impl PreScorePlugin for InterPodAffinity {
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        feasible: &[NodeId],
        snapshot: &Snapshot,
    ) -> Status {
        if feasible.is_empty() {
            return Status::skip();
        }
        if let Some(e) = &pod.affinity.error {
            return Status::error(format!("failed to parse pod: {e}"));
        }
        let has_constraints = pod.affinity.has_preferred();
        if self.ignore_preferred_terms_of_existing_pods && !has_constraints {
            return Status::skip();
        }
        let merge = |terms: &[WeightedAffinityTerm]| -> Vec<WeightedAffinityTerm> {
            terms
                .iter()
                .map(|t| WeightedAffinityTerm {
                    term: merge_namespaces(&t.term, snapshot),
                    weight: t.weight,
                })
                .collect()
        };
        let preferred_affinity = merge(&pod.affinity.preferred_affinity);
        let preferred_anti_affinity = merge(&pod.affinity.preferred_anti_affinity);
        let ns_labels = namespace_labels(snapshot, pod.namespace);
        let mut scorer = Scorer {
            topology_score: HashMap::new(),
            symbols: snapshot.symbols(),
            empty: Labels::default(),
        };
        let nodes: Box<dyn Iterator<Item = &NodeInfo>> = if has_constraints {
            Box::new(snapshot.nodes().iter())
        } else {
            Box::new(snapshot.nodes_with_pod_affinity())
        };
        for node in nodes {
            if node.node.labels.is_empty() {
                continue;
            }
            let pods = if has_constraints {
                node.pods()
            } else {
                node.pods_with_affinity()
            };
            for existing in pods.iter().filter_map(|&id| snapshot.pod(id)) {
                let n = &node.node;
                scorer.terms(&preferred_affinity, 1, existing, None, n);
                scorer.terms(&preferred_anti_affinity, -1, existing, None, n);
                if self.hard_pod_affinity_weight > 0 {
                    for t in &existing.affinity.required_affinity {
                        scorer.term(
                            t,
                            self.hard_pod_affinity_weight,
                            pod.namespace,
                            &pod.labels,
                            Some(&ns_labels),
                            n,
                        );
                    }
                }
                scorer.terms(
                    &existing.affinity.preferred_affinity,
                    1,
                    pod,
                    Some(&ns_labels),
                    n,
                );
                scorer.terms(
                    &existing.affinity.preferred_anti_affinity,
                    -1,
                    pod,
                    Some(&ns_labels),
                    n,
                );
            }
        }
        if scorer.topology_score.is_empty() {
            return Status::skip();
        }
        state.write(AffinityPreScoreState {
            topology_score: scorer.topology_score,
        });
        Status::success()
    }
}

impl ScorePlugin for InterPodAffinity {
    fn score(
        &self,
        state: &CycleState,
        _: &Pod,
        node: &NodeInfo,
        _: &Snapshot,
    ) -> Result<i64, Status> {
        let s = state.require::<AffinityPreScoreState>("PreScoreInterPodAffinity")?;
        Ok(s.topology_score
            .iter()
            .filter_map(|(key, values)| {
                node.node
                    .labels
                    .get(*key)
                    .and_then(|v| values.get(&v).copied())
            })
            .sum())
    }

    fn normalize_score(&self, state: &CycleState, _: &Pod, scores: &mut [NodeScore]) -> Status {
        let s = match state.require::<AffinityPreScoreState>("PreScoreInterPodAffinity") {
            Ok(s) => s,
            Err(status) => return status,
        };
        if s.topology_score.is_empty() {
            return Status::success();
        }
        let min = scores.iter().map(|s| s.score).min().unwrap_or(0);
        let max = scores.iter().map(|s| s.score).max().unwrap_or(0);
        let diff = max - min;
        for s in scores {
            s.score = if diff > 0 {
                (MAX_NODE_SCORE as f64 * ((s.score - min) as f64 / diff as f64)) as i64
            } else {
                0
            };
        }
        Status::success()
    }
}
