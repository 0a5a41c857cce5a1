//! The mapping from the engine's `Explanation` of a pod's cycle to the plain data the
//! explain renderer draws; the scheduler itself is the driver's [`Runtime`].

use crate::report::explain::{
    ConstraintCounts, ExplainView, FilterVerdict, NodeExplanation, PreemptionView, ScoreView,
    VictimView,
};
use std::collections::BTreeMap;
use topospread::Features;
use topospread::api::Pod;
use topospread::framework::Status;
use topospread::snapshot::{NodeId, PodId, Snapshot};
use topospread::spread::ConstraintRef;
use topospread::{Explanation, ScheduleResult};
pub use topospread_driver::{Placement, Progress, Runtime};
use topospread_k8s::validation::{FieldPath, hard_constraints, minimum_held_by_unusable_nodes};

/// The recorded pod's last cycle, as the renderer's plain data; when an earlier cycle of
/// the pod preempted, that failed cycle comes with it.
pub fn explanation(
    runtime: &Runtime,
    snapshot: &Snapshot,
    id: PodId,
    pod: &Pod,
) -> Option<ExplainView> {
    let scheduler = runtime.scheduler();
    let e = scheduler.explanation(id)?;
    let mut v = view(e, snapshot, pod);
    v.context
        .extend(spread_hints(e, snapshot, pod, runtime.features()));
    v.preempting_cycle = scheduler
        .preempting_explanation(id)
        .map(|failed| Box::new(view(failed, snapshot, pod)));
    Some(v)
}

fn verdict(plugin: &str, s: &Status) -> FilterVerdict {
    FilterVerdict {
        plugin: plugin.to_string(),
        code: s.code().as_str().to_string(),
        reasons: s.reasons().iter().map(|r| r.to_string()).collect(),
    }
}

/// Why a pod PodTopologySpread keeps Pending may never schedule: TS013's finding (a
/// domain the pod cannot use holds the global minimum), one line each.
fn spread_hints(
    e: &Explanation,
    snapshot: &Snapshot,
    pod: &Pod,
    features: Features,
) -> Vec<String> {
    let rejected = e.filter.iter().any(|n| {
        n.verdicts
            .iter()
            .any(|(p, s)| *p == "PodTopologySpread" && !s.is_success())
    });
    if !matches!(e.result, ScheduleResult::Unschedulable { .. })
        || !rejected
        || e.spread.from_defaults
    {
        return Vec::new();
    }
    let hard = hard_constraints(pod);
    let list = FieldPath::new("spec").child("topologySpreadConstraints");
    minimum_held_by_unusable_nodes(pod, &hard, &e.spread, snapshot, features, &list)
        .iter()
        .map(|l| format!("{} {l}", l.code))
        .collect()
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
    let counts = |constraint: &ConstraintRef, m: &BTreeMap<String, i64>, skew| {
        let counts = m.iter().map(|(k, v)| (k.clone(), *v)).collect();
        ConstraintCounts::new(constraint, counts, skew)
    };
    let spread = e
        .spread
        .constraints
        .iter()
        .map(|c| counts(&c.spread.constraint, &c.spread.counts, Some(c.spread.skew)))
        .collect();
    let score_counts = e
        .score_counts
        .iter()
        .map(|(constraint, m)| counts(constraint, m, None))
        .collect();
    let node_name = |id: NodeId| snapshot.node(id).node.name.to_string();
    // `evaluateNominatedNode`: the nominated node is tried alone first, and taken
    // without looking at the others when it passes.
    let took_nominated = e.nominated.is_some_and(|n| {
        matches!(e.result, ScheduleResult::Scheduled { node, evaluated_nodes: 1, .. } if node == n)
    });
    if let Some(n) = e.nominated {
        context.push(if took_nominated {
            format!(
                "nominated to {} (status.nominatedNodeName): Filter ran there first and it passed, so no other node was evaluated",
                node_name(n)
            )
        } else {
            format!(
                "nominated to {} (status.nominatedNodeName): Filter ran there first and rejected it, so the cycle went on as usual",
                node_name(n)
            )
        });
    }
    let not_evaluated = if took_nominated {
        "the pod's nominated node passed Filter first"
    } else {
        "the cycle found enough feasible nodes before this one"
    };
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
                    reasons: vec![not_evaluated.into()],
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
                            .map(|p| ScoreView {
                                plugin: p.plugin.to_string(),
                                raw: p.raw,
                                normalized: p.normalized,
                                weighted: p.weighted,
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                total: scored.map(|s| s.total),
                nominated: n.nominated.clone(),
            }
        })
        .collect();
    let outcome = match &e.result {
        ScheduleResult::Scheduled { node, .. } => Ok(snapshot.node(*node).node.name.to_string()),
        ScheduleResult::Unschedulable { message, .. } => Err(message.clone()),
        ScheduleResult::Error(s) => Err(format!("error: {s}")),
        other => Err(format!("{other:?}")),
    };
    ExplainView {
        pod: format!("{}/{}", symbols.resolve(pod.namespace), pod.name),
        context,
        nodes,
        spread,
        spread_from_defaults: e.spread.from_defaults && !e.spread.constraints.is_empty(),
        score_counts,
        outcome,
        preemption: e.preemption.as_ref().map(|p| PreemptionView {
            node: node_name(p.node),
            victims: e
                .victims
                .iter()
                .map(|v| VictimView {
                    namespace: v.namespace.clone(),
                    name: v.name.clone(),
                    priority: v.priority,
                })
                .collect(),
        }),
        preempting_cycle: None,
    }
}
