//! Plugin cases: PodTopologySpread alone, as upstream's unit tests run it.

use super::{Mismatch, Outcome, ScenarioError};
use k8s_openapi::api::core::v1 as core;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use topospread::Features;
use topospread::api::Pod;
use topospread::config::PodTopologySpreadArgs;
use topospread::convert;
use topospread::framework::{
    Code, CycleState, FilterPlugin, NodeScore, PreFilterPlugin, PreScorePlugin, ScorePlugin,
};
use topospread::plugins::podtopologyspread::{PodTopologySpread, PreFilterState};
use topospread::snapshot::{NodeId, Snapshot};
use topospread_k8s::load;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PluginCase {
    #[allow(dead_code)]
    name: String,
    #[serde(default)]
    #[allow(dead_code)]
    source: Option<String>,
    #[serde(default)]
    features: Features,
    #[serde(default)]
    objects: Vec<Value>,
    nodes: Vec<Value>,
    #[serde(default)]
    pods: Vec<Value>,
    #[serde(default)]
    args: Option<PodTopologySpreadArgs>,
    pod: Value,
    #[serde(default)]
    feasible_nodes: Option<Vec<String>>,
    #[serde(default)]
    after_pre_filter: Vec<AfterPreFilter>,
    expect: Expect,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
enum AfterPreFilter {
    AddPod(Value),
    RemovePod(Value),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Expect {
    #[serde(default)]
    pre_filter: Option<String>,
    #[serde(default)]
    filter: Option<BTreeMap<String, String>>,
    #[serde(default)]
    domain_counts: Option<Vec<BTreeMap<String, i64>>>,
    #[serde(default)]
    pre_score: Option<String>,
    #[serde(default)]
    scores: Option<BTreeMap<String, i64>>,
}

/// Parses a code as the case writes it, or reports the field.
fn code(s: &str, file: &str, case: &str, field: &str) -> Result<Code, ScenarioError> {
    Code::parse(s).ok_or_else(|| {
        ScenarioError::case(
            file,
            case,
            field,
            format!("Unsupported value: {s:?}: not a status code"),
        )
    })
}

fn render_counts(m: &BTreeMap<String, i64>) -> String {
    let inner: Vec<String> = m.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!("{{{}}}", inner.join(", "))
}

/// Runs one plugin case.
pub(super) fn run(value: &Value, file: &str, name: &str) -> Result<Outcome, ScenarioError> {
    let what = format!("case {name:?}");
    let case: PluginCase = load::typed(value, file, &what)?;
    let bad = |field: &str, e: &dyn std::fmt::Display| {
        ScenarioError::case(file, name, field, e.to_string())
    };

    let mut snapshot = super::build_cluster(&case.nodes, &case.objects, &case.pods, file, name)?;
    let args = case.args.unwrap_or_else(|| PodTopologySpreadArgs {
        defaulting_type: Some("List".into()),
        ..PodTopologySpreadArgs::default()
    });
    let plugin = PodTopologySpread::new(&args, case.features, snapshot.symbols_mut())
        .map_err(|e| bad("args", &e))?;
    let pod: core::Pod = load::typed(&case.pod, file, &format!("{what} pod"))?;
    let pod = convert::pod(&pod, snapshot.symbols_mut()).map_err(|e| bad("pod", &e))?;
    let ops = after_pre_filter(&case.after_pre_filter, &mut snapshot, file, &what, &bad)?;
    let feasible = match &case.feasible_nodes {
        None => snapshot.nodes().iter().map(|n| n.id).collect(),
        Some(names) => names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                snapshot.node_id(n).ok_or_else(|| {
                    bad(
                        &format!("feasibleNodes[{i}]"),
                        &format!("Not found: no node {n:?}"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    let expect = &case.expect;
    let mut mismatches = Vec::new();

    let mut state = CycleState::new();
    let pre_filter = plugin.pre_filter(&mut state, &pod, &snapshot);
    if let Some(want) = &expect.pre_filter {
        let want_code = code(want, file, name, "expect.preFilter")?;
        if want_code != pre_filter.code() {
            mismatches.push(Mismatch::new("preFilter", want, &pre_filter));
        }
    }
    for (add, p, node) in &ops {
        let info = snapshot.node(*node);
        let status = if *add {
            plugin.add_pod(&mut state, &pod, p, info, &snapshot)
        } else {
            plugin.remove_pod(&mut state, &pod, p, info, &snapshot)
        };
        if !status.is_success() {
            mismatches.push(Mismatch::new("afterPreFilter", "Success", &status));
        }
    }
    if let Some(want) = &expect.domain_counts {
        let got = state
            .read::<PreFilterState>()
            .map(|s| s.domain_counts(&snapshot))
            .unwrap_or_default();
        if &got != want {
            let render = |v: &[BTreeMap<String, i64>]| {
                format!(
                    "[{}]",
                    v.iter().map(render_counts).collect::<Vec<_>>().join(", ")
                )
            };
            mismatches.push(Mismatch::new("domainCounts", render(want), render(&got)));
        }
    }
    if let Some(want) = &expect.filter {
        for (node_name, want) in want {
            let want_code = code(want, file, name, &format!("expect.filter.{node_name}"))?;
            let Some(id) = snapshot.node_id(node_name) else {
                return Err(bad(
                    &format!("expect.filter.{node_name}"),
                    &"Not found: no such node in the case",
                ));
            };
            let got = if pre_filter.is_skip() {
                topospread::framework::Status::success()
            } else {
                plugin.filter(&state, &pod, snapshot.node(id), &snapshot)
            };
            if got.code() != want_code {
                mismatches.push(Mismatch::new(format!("filter[{node_name}]"), want, &got));
            }
        }
    }
    if expect.pre_score.is_some() || expect.scores.is_some() {
        let scored = Scored {
            plugin: &plugin,
            pod: &pod,
            snapshot: &snapshot,
            feasible: &feasible,
        };
        scored.check(&mut state, expect, file, name, &bad, &mut mismatches)?;
    }
    Ok(if mismatches.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed(mismatches)
    })
}

/// The pods `afterPreFilter` adds or removes, each with its node.
fn after_pre_filter(
    list: &[AfterPreFilter],
    snapshot: &mut Snapshot,
    file: &str,
    what: &str,
    bad: &dyn Fn(&str, &dyn std::fmt::Display) -> ScenarioError,
) -> Result<Vec<(bool, Pod, NodeId)>, ScenarioError> {
    let mut ops = Vec::new();
    for (i, op) in list.iter().enumerate() {
        let (add, v) = match op {
            AfterPreFilter::AddPod(v) => (true, v),
            AfterPreFilter::RemovePod(v) => (false, v),
        };
        let field = format!("afterPreFilter[{i}]");
        let p: core::Pod = load::typed(v, file, &format!("{what} {field}"))?;
        let p = convert::pod(&p, snapshot.symbols_mut()).map_err(|e| bad(&field, &e))?;
        let node = p
            .node_name
            .as_deref()
            .and_then(|n| snapshot.node_id(n))
            .ok_or_else(|| {
                bad(
                    &format!("{field}.spec.nodeName"),
                    &"Not found: the pod must name a node of the case",
                )
            })?;
        ops.push((add, p, node));
    }
    Ok(ops)
}

/// What PreScore, Score and NormalizeScore are run on.
struct Scored<'a> {
    plugin: &'a PodTopologySpread,
    pod: &'a Pod,
    snapshot: &'a Snapshot,
    feasible: &'a [NodeId],
}

impl Scored<'_> {
    /// `expect.preScore` and `expect.scores` against the plugin's PreScore status and
    /// its normalised scores of the feasible nodes.
    fn check(
        &self,
        state: &mut CycleState,
        expect: &Expect,
        file: &str,
        name: &str,
        bad: &dyn Fn(&str, &dyn std::fmt::Display) -> ScenarioError,
        mismatches: &mut Vec<Mismatch>,
    ) -> Result<(), ScenarioError> {
        let pre_score = self
            .plugin
            .pre_score(state, self.pod, self.feasible, self.snapshot);
        if let Some(want) = &expect.pre_score {
            let want_code = code(want, file, name, "expect.preScore")?;
            if want_code != pre_score.code() {
                mismatches.push(Mismatch::new("preScore", want, &pre_score));
            }
        }
        if let Some(want) = &expect.scores {
            let mut scores = Vec::with_capacity(self.feasible.len());
            for &id in self.feasible {
                let score = if pre_score.is_success() {
                    match self
                        .plugin
                        .score(state, self.pod, self.snapshot.node(id), self.snapshot)
                    {
                        Ok(s) => s,
                        Err(status) => {
                            mismatches.push(Mismatch::new("score", "Success", &status));
                            0
                        }
                    }
                } else {
                    0
                };
                scores.push(NodeScore { node: id, score });
            }
            if pre_score.is_success() {
                self.plugin.normalize_score(state, self.pod, &mut scores);
            }
            for (node_name, want) in want {
                if self.snapshot.node_id(node_name).is_none() {
                    return Err(bad(
                        &format!("expect.scores.{node_name}"),
                        &"Not found: no such node in the case",
                    ));
                }
                let got = self
                    .snapshot
                    .node_id(node_name)
                    .and_then(|id| scores.iter().find(|s| s.node == id))
                    .map(|s| s.score);
                match got {
                    Some(g) if g == *want => {}
                    Some(g) => {
                        mismatches.push(Mismatch::new(format!("scores[{node_name}]"), want, g))
                    }
                    None => mismatches.push(Mismatch::new(
                        format!("scores[{node_name}]"),
                        want,
                        "not a feasible node",
                    )),
                }
            }
        }
        Ok(())
    }
}
