//! The engine's `Scheduler` behind the small seam the commands use, and the mapping from
//! its `Explanation` to the plain data the explain renderer draws.

use super::config::SchedulerSetup;
use anyhow::{Result, anyhow};
use std::collections::BTreeMap;
use topospread::api::Pod;
use topospread::framework::Status;
use topospread::render::{
    ConstraintCounts, ExplainView, FilterVerdict, NodeExplanation, PluginScore,
};
use topospread::scheduler::{Explanation, ScheduleResult, Scheduler};
use topospread::snapshot::{NodeId, Snapshot};

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
    scheduler: Scheduler,
}

impl Runtime {
    /// Builds the scheduler from the configuration; `seed` fixes tie-breaking.
    pub(crate) fn new(setup: &SchedulerSetup, snapshot: &mut Snapshot, seed: u64) -> Result<Self> {
        let mut scheduler = Scheduler::new(&setup.config, setup.features, snapshot)
            .map_err(|e| anyhow!("{}: {e}", setup.origin))?;
        scheduler.set_seed(seed);
        Ok(Self { scheduler })
    }

    /// Schedules one pod (does not bind).
    pub(crate) fn schedule_one(&mut self, snapshot: &Snapshot, pod: &Pod) -> Placement {
        match self.scheduler.schedule_one(snapshot, pod) {
            ScheduleResult::Scheduled { node, .. } => Placement::Scheduled(node),
            ScheduleResult::Unschedulable { message, .. } => Placement::Unschedulable(message),
            ScheduleResult::Error(s) => Placement::Unschedulable(format!("error: {s}")),
        }
    }

    /// Runs one cycle and explains it.
    pub(crate) fn explain(&mut self, snapshot: &Snapshot, pod: &Pod) -> ExplainView {
        let e = self.scheduler.explain(snapshot, pod);
        view(&e, snapshot, pod)
    }
}

fn verdict(plugin: &str, s: &Status) -> FilterVerdict {
    FilterVerdict {
        plugin: plugin.to_string(),
        code: s.code().as_str().to_string(),
        reasons: s.reasons().iter().map(|r| r.to_string()).collect(),
    }
}

/// The explanation as plain data for the renderer.
fn view(e: &Explanation, snapshot: &Snapshot, pod: &Pod) -> ExplainView {
    let symbols = snapshot.symbols();
    let mut context = Vec::new();
    for (plugin, s) in &e.pre_filter {
        if !s.is_success() && !s.is_skip() {
            context.push(format!("PreFilter {plugin}: {s}"));
        }
    }
    for (plugin, s) in &e.pre_score {
        if !s.is_success() && !s.is_skip() {
            context.push(format!("PreScore {plugin}: {s}"));
        }
    }
    let counts = |list: &[(String, BTreeMap<String, i64>)]| -> Vec<ConstraintCounts> {
        list.iter()
            .map(|(constraint, m)| ConstraintCounts {
                constraint: constraint.clone(),
                counts: m.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            })
            .collect()
    };
    let filter_counts = counts(&e.filter_counts);
    let score_counts = counts(&e.score_counts);
    let nodes = e
        .filter
        .iter()
        .map(|n| {
            let mut filters: Vec<FilterVerdict> =
                n.verdicts.iter().map(|(p, s)| verdict(p, s)).collect();
            if !n.evaluated {
                filters.push(FilterVerdict {
                    plugin: "(cycle)".into(),
                    code: "NotEvaluated".into(),
                    reasons: vec!["the cycle found enough feasible nodes before this one".into()],
                });
            }
            let scored = e.scores.iter().find(|s| s.node == n.node);
            NodeExplanation {
                node: snapshot.node(n.node).node.name.to_string(),
                filters,
                scores: scored
                    .map(|s| {
                        s.scores
                            .iter()
                            .map(|p| PluginScore {
                                plugin: p.plugin.to_string(),
                                raw: p.raw,
                                normalized: p.normalized,
                                weighted: p.weighted,
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                total: scored.map(|s| s.total),
            }
        })
        .collect();
    let outcome = match &e.result {
        ScheduleResult::Scheduled { node, .. } => Ok(snapshot.node(*node).node.name.to_string()),
        ScheduleResult::Unschedulable { message, .. } => Err(message.clone()),
        ScheduleResult::Error(s) => Err(format!("error: {s}")),
    };
    ExplainView {
        pod: format!("{}/{}", symbols.resolve(pod.namespace), pod.name),
        context,
        nodes,
        filter_counts,
        score_counts,
        outcome,
    }
}
