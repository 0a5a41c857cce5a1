//! The scheduling runtime the commands drive, behind one small seam.
//!
//! STOPGAP: the engine's `Scheduler` (branch `scheduler`) is not merged yet. Until it
//! is, this runs a reduced default profile from engine pieces: the Filter plugins
//! NodeUnschedulable, TaintToleration, NodeAffinity and PodTopologySpread, and the Score
//! plugin PodTopologySpread (weight 2), with seeded random tie-breaking as `selectHost`
//! does. When the Scheduler lands, `Runtime` delegates to it and this file shrinks to the
//! mapping from its `Explanation` to [`ExplainView`].

use super::config::SchedulerSetup;
use anyhow::Result;
use std::collections::BTreeMap;
use topospread::api::{Pod, TaintEffect, find_untolerated_taint};
use topospread::framework::{
    Code, CycleState, FilterPlugin, NodeScore, PreFilterPlugin, PreScorePlugin, ScorePlugin, Status,
};
use topospread::plugins::podtopologyspread::{self, PodTopologySpread, PreFilterState};
use topospread::render::{
    ConstraintCounts, ExplainView, FilterVerdict, NodeExplanation, PluginScore,
};
use topospread::snapshot::{NodeId, NodeInfo, Snapshot};

/// Where one pod went.
#[derive(Clone, Debug)]
pub(crate) enum Placement {
    /// Bound to this node.
    Scheduled(NodeId),
    /// Pending, with the scheduler's message.
    Unschedulable(String),
}

/// The runtime.
pub(crate) struct Runtime {
    pts: PodTopologySpread,
    features: topospread::features::Features,
    rng: u64,
}

const PTS_WEIGHT: i64 = 2;
const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

impl Runtime {
    /// Builds the runtime from the configuration.
    pub(crate) fn new(setup: &SchedulerSetup, snapshot: &mut Snapshot, seed: u64) -> Result<Self> {
        let pts = PodTopologySpread::new(&setup.pts_args, setup.features, snapshot.symbols_mut())
            .map_err(|e| anyhow::anyhow!("{}: {e}", setup.origin))?;
        Ok(Self {
            pts,
            features: setup.features,
            rng: seed ^ 0x9e37_79b9_7f4a_7c15,
        })
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64*: small, seeded, reproducible.
        let mut x = self.rng.max(1);
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Schedules one pod (does not bind).
    pub(crate) fn schedule_one(&mut self, snapshot: &Snapshot, pod: &Pod) -> Placement {
        let v = self.cycle(snapshot, pod);
        match v.1 {
            Ok(node) => Placement::Scheduled(node),
            Err(message) => Placement::Unschedulable(message),
        }
    }

    /// Runs one cycle and explains it.
    pub(crate) fn explain(&mut self, snapshot: &Snapshot, pod: &Pod) -> ExplainView {
        let (view, outcome) = self.cycle(snapshot, pod);
        ExplainView {
            outcome: outcome.map(|n| snapshot.node(n).node.name.to_string()),
            ..view
        }
    }

    fn node_filters(
        &self,
        state: &CycleState,
        pod: &Pod,
        info: &NodeInfo,
        snapshot: &Snapshot,
    ) -> Vec<(&'static str, Status)> {
        let node = &info.node;
        let symbols = snapshot.symbols();
        let mut out = Vec::new();
        let tolerates_unschedulable = pod.tolerations.iter().any(|t| {
            t.tolerates(
                &topospread::api::Taint {
                    key: UNSCHEDULABLE_TAINT.into(),
                    value: "".into(),
                    effect: TaintEffect::NoSchedule,
                },
                self.features.taint_toleration_comparison_operators,
            )
        });
        out.push((
            "NodeUnschedulable",
            if node.unschedulable && !tolerates_unschedulable {
                Status::new(
                    Code::UnschedulableAndUnresolvable,
                    "node(s) were unschedulable",
                )
            } else {
                Status::success()
            },
        ));
        let taint = find_untolerated_taint(
            &node.taints,
            &pod.tolerations,
            self.features.taint_toleration_comparison_operators,
            |t| matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute),
        );
        out.push((
            "TaintToleration",
            match taint {
                Some(t) => Status::new(
                    Code::UnschedulableAndUnresolvable,
                    format!("node(s) had untolerated taint {{{}: {}}}", t.key, t.value),
                ),
                None => Status::success(),
            },
        ));
        out.push((
            "NodeAffinity",
            if pod
                .required_node_affinity
                .matches(&node.labels, &node.name, symbols)
            {
                Status::success()
            } else {
                Status::new(
                    Code::UnschedulableAndUnresolvable,
                    "node(s) didn't match Pod's node affinity/selector",
                )
            },
        ));
        let pts = if state.is_filter_skipped(podtopologyspread::NAME) {
            Status::skip()
        } else {
            self.pts.filter(state, pod, info, snapshot)
        };
        out.push((podtopologyspread::NAME, pts));
        out
    }

    fn cycle(&mut self, snapshot: &Snapshot, pod: &Pod) -> (ExplainView, Result<NodeId, String>) {
        let symbols = snapshot.symbols();
        let mut state = CycleState::new();
        let pre = self.pts.pre_filter(&mut state, pod, snapshot);
        if pre.is_skip() {
            state.skip_filter_plugin(podtopologyspread::NAME);
        }
        let filter_counts = state
            .read::<PreFilterState>()
            .map(|s| {
                let hard = pod.spread_constraints.iter().filter(|c| {
                    c.when_unsatisfiable == topospread::api::WhenUnsatisfiable::DoNotSchedule
                });
                s.domain_counts(snapshot)
                    .into_iter()
                    .zip(hard)
                    .map(|(m, c)| ConstraintCounts {
                        constraint: format!(
                            "{} maxSkew={} {} {}",
                            symbols.resolve(c.topology_key),
                            c.max_skew,
                            c.when_unsatisfiable.as_str(),
                            c.selector.display(symbols)
                        ),
                        counts: m.into_iter().collect(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut nodes = Vec::new();
        let mut feasible = Vec::new();
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        for info in snapshot.nodes() {
            let verdicts = self.node_filters(&state, pod, info, snapshot);
            if let Some((_, s)) = verdicts
                .iter()
                .find(|(_, s)| s.is_rejected() || s.code() == Code::Error)
            {
                for r in s.reasons() {
                    *reasons.entry(r.to_string()).or_default() += 1;
                }
            } else {
                feasible.push(info.id);
            }
            nodes.push(NodeExplanation {
                node: info.node.name.to_string(),
                filters: verdicts
                    .into_iter()
                    .map(|(p, s)| FilterVerdict {
                        plugin: p.to_string(),
                        code: s.code().as_str().to_string(),
                        reasons: s.reasons().iter().map(|r| r.to_string()).collect(),
                    })
                    .collect(),
                scores: Vec::new(),
                total: None,
            });
        }
        let mut view = ExplainView {
            pod: format!("{}/{}", symbols.resolve(pod.namespace), pod.name),
            context: Vec::new(),
            nodes,
            filter_counts,
            score_counts: Vec::new(),
            outcome: Err(String::new()),
        };
        if feasible.is_empty() {
            let mut rs: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
            rs.sort();
            let message = format!(
                "0/{} nodes are available: {}.",
                snapshot.nodes().len(),
                rs.join(", ")
            );
            view.outcome = Err(message.clone());
            return (view, Err(message));
        }
        let mut totals: Vec<(NodeId, i64)> = feasible.iter().map(|n| (*n, 0)).collect();
        if feasible.len() > 1 {
            let pre = self.pts.pre_score(&mut state, pod, &feasible, snapshot);
            if !pre.is_skip() && pre.is_success() {
                let mut scores: Vec<NodeScore> = feasible
                    .iter()
                    .map(|n| NodeScore {
                        node: *n,
                        score: self
                            .pts
                            .score(&state, pod, snapshot.node(*n), snapshot)
                            .unwrap_or(0),
                    })
                    .collect();
                self.pts.normalize_score(&state, pod, &mut scores);
                for (t, s) in totals.iter_mut().zip(&scores) {
                    t.1 = s.score * PTS_WEIGHT;
                    let n = &mut view.nodes[s.node.index()];
                    n.scores.push(PluginScore {
                        plugin: podtopologyspread::NAME.to_string(),
                        score: s.score,
                        weight: PTS_WEIGHT,
                    });
                }
            }
        }
        for (n, t) in &totals {
            view.nodes[n.index()].total = Some(*t);
        }
        // selectHost: the highest total, ties broken uniformly at random (reservoir).
        let mut best = totals[0];
        let mut ties = 1u64;
        for &(n, t) in &totals[1..] {
            if t > best.1 {
                best = (n, t);
                ties = 1;
            } else if t == best.1 {
                ties += 1;
                if self.next_random().is_multiple_of(ties) {
                    best = (n, t);
                }
            }
        }
        (view, Ok(best.0))
    }
}
