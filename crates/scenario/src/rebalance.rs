//! Rebalance cases: a cluster of bound pods, a plan (or a scale-down) asked for, and
//! expectations on the number of moves, the skew of each constraint after, what stays
//! unresolved and the exit code. Every plan is also replayed move by move on the case's
//! own cluster: each move must start where the pod is, and no node may end overcommitted.

use super::{Mismatch, Outcome, ScenarioError};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use topospread::Features;
use topospread::config::SchedulerConfig;
use topospread::snapshot::Snapshot;
use topospread_k8s::load;
use topospread_planning::rebalance::{
    self, ConstraintSpread, NotEvictable, Plan, RebalanceOptions, Strategy, WorkloadSpread,
};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RebalanceCase {
    #[allow(dead_code)]
    name: String,
    #[serde(default)]
    #[allow(dead_code)]
    source: Option<String>,
    #[serde(default)]
    features: Features,
    #[serde(default)]
    objects: Vec<Value>,
    #[serde(default)]
    nodes: Vec<Value>,
    #[serde(default)]
    pods: Vec<Value>,
    rebalance: Spec,
    expect: Expect,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Spec {
    /// `topospread` (default) or `descheduler`.
    #[serde(default)]
    strategy: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    selector: Option<LabelSelector>,
    #[serde(default)]
    max_moves: Option<usize>,
    #[serde(default)]
    scale: Option<Scale>,
    /// Descheduler strategy: evict-and-reschedule rounds (1: one `Balance` call).
    #[serde(default)]
    max_rounds: Option<usize>,
    /// Descheduler strategy: its `constraints` arg (default `[DoNotSchedule]`).
    #[serde(default)]
    constraints: Option<Vec<String>>,
    /// Descheduler strategy: its `topologyBalanceNodeFit` arg (default true).
    #[serde(default)]
    topology_balance_node_fit: Option<bool>,
    /// Descheduler strategy: the default evictor's `nodeFit` arg (default false).
    #[serde(default)]
    node_fit: Option<bool>,
    /// Descheduler strategy: its `namespaces.exclude` arg.
    #[serde(default)]
    exclude_namespaces: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Scale {
    /// The ReplicaSet (or ReplicationController) name.
    controller: String,
    replicas: usize,
    #[serde(default)]
    namespace: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Expect {
    /// Exactly this many moves (evictions for the descheduler strategy).
    #[serde(default)]
    moves: Option<usize>,
    /// Exactly this many rounds.
    #[serde(default)]
    rounds: Option<usize>,
    /// 0: every DoNotSchedule constraint holds and no replacement is Pending; 1: not.
    #[serde(default)]
    exit: Option<i32>,
    /// Per constraint (as topospread prints it): skew and counts after.
    #[serde(default)]
    after: Vec<AfterCheck>,
    /// Each text must appear in some unresolved entry's reason.
    #[serde(default)]
    unresolved: Vec<String>,
    /// Pods (by name) that must be among the moved (evicted) ones.
    #[serde(default)]
    evicted: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AfterCheck {
    constraint: String,
    #[serde(default)]
    skew: Option<i64>,
    #[serde(default)]
    counts: Option<BTreeMap<String, i64>>,
}

/// Runs one rebalance case.
pub(super) fn run(value: &Value, file: &str, name: &str) -> Result<Outcome, ScenarioError> {
    let what = format!("case {name:?}");
    let case: RebalanceCase = load::typed(value, file, &what)?;
    let bad = |field: &str, e: &dyn std::fmt::Display| {
        ScenarioError::case(file, name, field, e.to_string())
    };
    let snapshot = super::build_cluster(&case.nodes, &case.objects, &case.pods, file, name)?;
    let descheduler = case.rebalance.strategy.as_deref() == Some("descheduler");
    let mut blockers: BTreeMap<(String, String), NotEvictable> = BTreeMap::new();
    for (i, p) in case.pods.iter().enumerate() {
        let p: core::Pod = load::typed(p, file, &format!("{what} pods[{i}]"))?;
        let blocker = if descheduler {
            rebalance::descheduler_eviction_blocker(&p)
        } else {
            rebalance::eviction_blocker(&p)
        };
        if let Some(b) = blocker {
            let ns = p
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into());
            blockers.insert((ns, p.metadata.name.clone().unwrap_or_default()), b);
        }
    }
    let config = SchedulerConfig::default();
    let mut mismatches = Vec::new();
    let (after, exit) = if let Some(scale) = &case.rebalance.scale {
        let ns = scale.namespace.as_deref().unwrap_or("default");
        let plan = rebalance::plan_scale_down(
            &snapshot,
            &config,
            case.features,
            ns,
            &scale.controller,
            &format!("replicaset/{}", scale.controller),
            scale.replicas,
        )
        .map_err(|e| bad("rebalance.scale", &e))?;
        let removed = plan.pods.iter().filter(|d| d.delete).count();
        check_count("moves", case.expect.moves, removed, &mut mismatches);
        (plan.after, 0)
    } else {
        let mut options = RebalanceOptions::default();
        options.namespace = case.rebalance.namespace.clone();
        options.selector = case.rebalance.selector.clone();
        if let Some(m) = case.rebalance.max_moves {
            options.max_moves = m;
        }
        options.strategy = match case.rebalance.strategy.as_deref() {
            None | Some("topospread") => Strategy::Topospread,
            Some("descheduler") => Strategy::Descheduler,
            Some(other) => {
                return Err(bad(
                    "rebalance.strategy",
                    &format!(
                        "Unsupported value: {other:?}: supported values: \"topospread\", \"descheduler\""
                    ),
                ));
            }
        };
        options.blockers = blockers;
        if let Some(r) = case.rebalance.max_rounds {
            options.max_rounds = r;
        }
        if let Some(list) = &case.rebalance.constraints {
            for c in list {
                match c.as_str() {
                    "DoNotSchedule" => {}
                    "ScheduleAnyway" => options.descheduler_soft = true,
                    other => {
                        return Err(bad(
                            "rebalance.constraints",
                            &format!(
                                "Unsupported value: {other:?}: supported values: \"DoNotSchedule\", \"ScheduleAnyway\""
                            ),
                        ));
                    }
                }
            }
        }
        if let Some(f) = case.rebalance.topology_balance_node_fit {
            options.topology_balance_node_fit = f;
        }
        if let Some(f) = case.rebalance.node_fit {
            options.descheduler_node_fit = f;
        }
        options.exclude_namespaces = case.rebalance.exclude_namespaces.clone();
        let plan = rebalance::plan(&snapshot, &config, case.features, &options)
            .map_err(|e| bad("rebalance", &e))?;
        check_count(
            "moves",
            case.expect.moves,
            plan.moves.len(),
            &mut mismatches,
        );
        check_count("rounds", case.expect.rounds, plan.rounds, &mut mismatches);
        for want in &case.expect.unresolved {
            if !plan
                .unresolved
                .iter()
                .any(|u| u.why.contains(want.as_str()))
            {
                let got: Vec<&str> = plan.unresolved.iter().map(|u| u.why.as_str()).collect();
                mismatches.push(Mismatch::new(
                    "unresolved",
                    format!("a reason containing {want:?}"),
                    format!("{got:?}"),
                ));
            }
        }
        for want in &case.expect.evicted {
            if !plan.moves.iter().any(|m| m.pod == *want) {
                let got: Vec<&str> = plan.moves.iter().map(|m| m.pod.as_str()).collect();
                mismatches.push(Mismatch::new(
                    "evicted",
                    format!("{want} among the evicted pods"),
                    format!("{got:?}"),
                ));
            }
        }
        if plan.strategy == Strategy::Topospread {
            replay(&snapshot, &plan, &mut mismatches);
        }
        let exit = i32::from(plan.final_violations > 0 || plan.pending > 0);
        (plan.after, exit)
    };
    if let Some(want) = case.expect.exit
        && want != exit
    {
        mismatches.push(Mismatch::new("exit", want, exit));
    }
    for (i, check) in case.expect.after.iter().enumerate() {
        let Some(got) = find(&after, &check.constraint) else {
            mismatches.push(Mismatch::new(
                format!("after[{i}]"),
                &check.constraint,
                "no such constraint in the report",
            ));
            continue;
        };
        if let Some(want) = check.skew
            && want != got.skew
        {
            mismatches.push(Mismatch::new(format!("after[{i}].skew"), want, got.skew));
        }
        if let Some(want) = &check.counts
            && *want != got.counts
        {
            mismatches.push(Mismatch::new(
                format!("after[{i}].counts"),
                format!("{want:?}"),
                format!("{:?}", got.counts),
            ));
        }
    }
    Ok(if mismatches.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed(mismatches)
    })
}

fn check_count(what: &str, want: Option<usize>, got: usize, out: &mut Vec<Mismatch>) {
    if let Some(w) = want
        && w != got
    {
        out.push(Mismatch::new(what, w, got));
    }
}

fn find<'a>(report: &'a [WorkloadSpread], constraint: &str) -> Option<&'a ConstraintSpread> {
    report
        .iter()
        .flat_map(|w| &w.constraints)
        .find(|c| c.constraint.to_string() == constraint)
}

/// Applies the plan's moves to the case's own cluster, one by one: each must start on
/// the node the pod is on, and at the end every pod must be where the plan's snapshot
/// has it, with no node's cpu or memory requests above its allocatable.
fn replay(start: &Snapshot, plan: &Plan, out: &mut Vec<Mismatch>) {
    let mut s = start.clone();
    for (i, m) in plan.moves.iter().enumerate() {
        let Some(id) = s.pod_id(&m.namespace, &m.pod) else {
            out.push(Mismatch::new(
                format!("moves[{i}]"),
                "a pod of the cluster",
                &m.pod,
            ));
            return;
        };
        let on = s.pod_node(id).map(|n| s.node(n).node.name.to_string());
        if on.as_deref() != Some(m.from.as_str()) {
            out.push(Mismatch::new(
                format!("moves[{i}].from"),
                &m.from,
                on.unwrap_or_default(),
            ));
            return;
        }
        let Some(mut pod) = s.remove_pod(id) else {
            return;
        };
        pod.node_name = Some(m.to.as_str().into());
        if s.add_pod(pod).is_err() {
            out.push(Mismatch::new(
                format!("moves[{i}].to"),
                "a node of the cluster",
                &m.to,
            ));
            return;
        }
    }
    for info in s.nodes() {
        let (used, cap) = (info.requested(), &info.node.allocatable);
        if used.milli_cpu > cap.milli_cpu || used.memory > cap.memory {
            out.push(Mismatch::new(
                format!("node {}", info.node.name),
                "requests within allocatable",
                format!("{}m cpu of {}m", used.milli_cpu, cap.milli_cpu),
            ));
        }
    }
    for (id, p) in s.pods() {
        let here = s.pod_node(id).map(|n| s.node(n).node.name.to_string());
        let ns = s.symbols().resolve(p.namespace);
        let there = plan
            .snapshot
            .pod_id(ns, &p.name)
            .and_then(|q| plan.snapshot.pod_node(q))
            .map(|n| plan.snapshot.node(n).node.name.to_string());
        if here != there {
            out.push(Mismatch::new(
                format!("replay {ns}/{}", p.name),
                there.unwrap_or_default(),
                here.unwrap_or_default(),
            ));
        }
    }
}
