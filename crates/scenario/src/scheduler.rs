//! Scheduler cases: the whole profile, pods scheduled one after another and bound.

use super::{Mismatch, Outcome, ScenarioError};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use topospread::Features;
use topospread::api::{Selector, Sym};
use topospread::config::SchedulerConfig;
use topospread::convert;
use topospread::framework::{ConfigError, check_config, check_configuration};
use topospread::snapshot::{PodId, Snapshot};
use topospread::{EnqueueError, PodOutcome, Scheduler};
use topospread::{SimEvent, Simulation};
use topospread_k8s::admission::resolve_priority;
use topospread_k8s::load;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SchedulerCase {
    #[allow(dead_code)]
    name: String,
    #[serde(default)]
    #[allow(dead_code)]
    source: Option<String>,
    #[serde(default)]
    features: Features,
    #[serde(default)]
    config: Option<Value>,
    #[serde(default)]
    scheduler_configuration: Option<Value>,
    #[serde(default)]
    objects: Vec<Value>,
    #[serde(default)]
    nodes: Vec<Value>,
    #[serde(default)]
    pods: Vec<Value>,
    #[serde(default)]
    schedule: Vec<Value>,
    expect: Expect,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Expect {
    #[serde(default)]
    placements: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    spread: Vec<SpreadCheck>,
    #[serde(default)]
    preempted: Option<Preempted>,
    /// Pods of `schedule` that Priority admission must refuse, with the message.
    #[serde(default)]
    refused: BTreeMap<String, String>,
    /// Pods of `schedule` left Pending, with their last cycle's message word for word.
    #[serde(default)]
    messages: BTreeMap<String, String>,
    #[serde(default)]
    config_error: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Preempted {
    Exactly(Vec<String>),
    Some(PreemptedCount),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PreemptedCount {
    count: usize,
    from: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SpreadCheck {
    #[serde(default)]
    after: Option<String>,
    topology_key: String,
    #[serde(default)]
    selector: Option<LabelSelector>,
    #[serde(default)]
    max_skew: Option<i64>,
    #[serde(default)]
    counts: Option<BTreeMap<String, i64>>,
}

/// Where each pod of `schedule` ended: its node, or why it stayed Pending.
type Placement = Result<String, String>;

fn render_counts(m: &BTreeMap<String, i64>) -> String {
    let inner: Vec<String> = m.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!("{{{}}}", inner.join(", "))
}

/// Checks one spread expectation against the bound pods now.
fn check_spread(
    check: &SpreadCheck,
    index: usize,
    snapshot: &mut Snapshot,
    scheduled: &[PodId],
    mismatches: &mut Vec<Mismatch>,
) -> Result<(), String> {
    let selector = match &check.selector {
        None => None,
        Some(s) => Some(
            Selector::from_label_selector(Some(s), snapshot.symbols_mut())
                .map_err(|e| format!("spread[{index}].selector: {e}"))?,
        ),
    };
    let key: Sym = snapshot.symbols_mut().intern(&check.topology_key);
    // An expectation about a key or a domain no node has cannot be what was meant.
    let domains: std::collections::BTreeSet<String> = snapshot
        .nodes()
        .iter()
        .filter_map(|n| n.node.labels.get(key))
        .map(|v| snapshot.symbols().resolve(v).to_string())
        .collect();
    if domains.is_empty() {
        return Err(format!(
            "spread[{index}].topologyKey: Not found: no node carries {:?}",
            check.topology_key
        ));
    }
    if let Some(d) = check
        .counts
        .iter()
        .flatten()
        .map(|(d, _)| d)
        .find(|d| !domains.contains(*d))
    {
        return Err(format!(
            "spread[{index}].counts.{d}: Not found: no node has {}={d}",
            check.topology_key
        ));
    }
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    for (id, pod) in snapshot.pods() {
        let counted = match &selector {
            Some(sel) => sel.matches(&pod.labels, snapshot.symbols()),
            None => scheduled.contains(&id),
        };
        let Some(node) = snapshot.pod_node(id) else {
            continue;
        };
        if !counted {
            continue;
        }
        if let Some(v) = snapshot.node(node).node.labels.get(key) {
            *counts
                .entry(snapshot.symbols().resolve(v).to_string())
                .or_default() += 1;
        }
    }
    let label = match &check.after {
        Some(p) => format!("spread[{index}] (after {p})"),
        None => format!("spread[{index}]"),
    };
    if let Some(want) = &check.counts {
        let want: BTreeMap<String, i64> = want
            .iter()
            .filter(|(_, v)| **v != 0)
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        if want != counts {
            mismatches.push(Mismatch::new(
                format!("{label}.counts"),
                render_counts(&want),
                render_counts(&counts),
            ));
        }
    }
    if let Some(want) = check.max_skew {
        let max = counts.values().copied().max().unwrap_or(0);
        let min = counts.values().copied().min().unwrap_or(0);
        if max - min != want {
            mismatches.push(Mismatch::new(
                format!("{label}.maxSkew"),
                want,
                format!("{} {}", max - min, render_counts(&counts)),
            ));
        }
    }
    Ok(())
}

/// Runs one scheduler case.
pub(super) fn run(value: &Value, file: &str, name: &str) -> Result<Outcome, ScenarioError> {
    let what = format!("case {name:?}");
    let case: SchedulerCase = load::typed(value, file, &what)?;
    let bad = |field: &str, e: &dyn std::fmt::Display| {
        ScenarioError::case(file, name, field, e.to_string())
    };

    let mut snapshot = super::build_cluster(&case.nodes, &case.objects, &case.pods, file, name)?;

    let config = match case_config(&case, &bad)? {
        Ok(config) => config,
        Err(outcome) => return Ok(outcome),
    };
    let scheduler =
        Scheduler::new(&config, case.features, &mut snapshot).map_err(|e| bad("config", &e))?;
    let mut sim = Simulation::new(scheduler);

    let mut mismatches = Vec::new();
    let mut scheduled: Vec<(String, PodId)> = Vec::new();
    let mut refused: BTreeMap<String, String> = BTreeMap::new();
    let mut unserved: BTreeMap<PodId, String> = BTreeMap::new();
    for (i, p) in case.schedule.iter().enumerate() {
        let field = format!("schedule[{i}]");
        let mut p: core::Pod = load::typed(p, file, &format!("{what} {field}"))?;
        // Created through the API server: its defaults first.
        topospread_k8s::admission::set_pod_defaults(&mut p);
        if let Err(e) = resolve_priority(&mut p, &snapshot.workloads().priority_classes) {
            refused.insert(e.pod().to_string(), e.to_string());
            continue;
        }
        let pod = convert::pod(&p, snapshot.symbols_mut()).map_err(|e| bad(&field, &e))?;
        if pod.node_name.is_some() {
            return Err(bad(
                &format!("{field}.spec.nodeName"),
                &"Forbidden: a pod to schedule must not name a node",
            ));
        }
        let pod_name = pod.name.to_string();
        let id = snapshot.add_pod(pod).map_err(|e| bad(&field, &e))?;
        scheduled.push((pod_name.clone(), id));
        // Upstream's tests create each pod and wait for the scheduler to settle.
        match sim.enqueue(&snapshot, id) {
            Ok(()) => {}
            // A pod no profile serves is never queued: it stays Pending.
            Err(e @ EnqueueError::NoProfile { .. }) => {
                unserved.insert(id, e.to_string());
            }
            Err(e) => return Err(bad(&field, &e)),
        }
        sim.run(&mut snapshot, |_, _| {})
            .map_err(|e| bad(&field, &e))?;
        let ids: Vec<PodId> = scheduled.iter().map(|(_, id)| *id).collect();
        for (j, check) in case.expect.spread.iter().enumerate() {
            if check.after.as_deref() == Some(pod_name.as_str()) {
                check_spread(check, j, &mut snapshot, &ids, &mut mismatches)
                    .map_err(|e| bad("expect.spread", &e))?;
            }
        }
    }
    let preempted: Vec<String> = sim
        .events()
        .iter()
        .filter_map(|e| match e {
            SimEvent::Preempted { victim, .. } => Some(victim.name.to_string()),
            _ => None,
        })
        .collect();
    let mut placements: BTreeMap<String, Placement> = BTreeMap::new();
    for (name, id) in &scheduled {
        let placement = if snapshot.pod(*id).is_none() {
            Err("preempted".to_string())
        } else if let Some(message) = unserved.get(id) {
            Err(message.clone())
        } else {
            match sim.scheduler().outcome(&snapshot, *id) {
                PodOutcome::Bound(node) => Ok(snapshot.node(node).node.name.to_string()),
                PodOutcome::Pending(message) => Err(message),
                // An outcome newer than this crate: not a placement, shown as it is.
                other => Err(format!("{other:?}")),
            }
        };
        placements.insert(name.clone(), placement);
    }
    for (name, message) in &refused {
        placements.insert(name.clone(), Err(message.clone()));
    }
    let scheduled: Vec<PodId> = scheduled.iter().map(|(_, id)| *id).collect();
    for (j, check) in case.expect.spread.iter().enumerate() {
        match &check.after {
            None => check_spread(check, j, &mut snapshot, &scheduled, &mut mismatches)
                .map_err(|e| bad("expect.spread", &e))?,
            Some(p) if !placements.contains_key(p) => {
                return Err(bad(
                    &format!("expect.spread[{j}].after"),
                    &format!("Not found: no pod {p:?} in schedule"),
                ));
            }
            Some(_) => {}
        }
    }
    compare(
        &case.expect,
        &snapshot,
        &placements,
        &refused,
        &preempted,
        &bad,
        &mut mismatches,
    )?;
    Ok(if mismatches.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed(mismatches)
    })
}

/// The case's scheduler configuration, or the outcome of a case expecting it refused.
fn case_config(
    case: &SchedulerCase,
    bad: &dyn Fn(&str, &dyn std::fmt::Display) -> ScenarioError,
) -> Result<Result<SchedulerConfig, Outcome>, ScenarioError> {
    let config = match (&case.config, &case.scheduler_configuration) {
        (Some(_), Some(_)) => {
            return Err(bad(
                "schedulerConfiguration",
                &"Forbidden: give either config (one profile) or schedulerConfiguration",
            ));
        }
        (None, None) => Ok(SchedulerConfig::default()),
        (Some(v), None) => SchedulerConfig::profile_from_value(v)
            .map(SchedulerConfig::from_profile)
            .map_err(ConfigError::from)
            .and_then(|c| check_config(&c, case.features).map(|()| c)),
        (None, Some(v)) => check_configuration(v, case.features),
    };
    Ok(Ok(match (config, &case.expect.config_error) {
        (Err(e), Some(want)) => {
            let got = e.to_string();
            return Ok(Err(if got.contains(want.as_str()) {
                Outcome::Passed
            } else {
                Outcome::Failed(vec![Mismatch::new(
                    "configError",
                    format!("an error containing {want:?}"),
                    got,
                )])
            }));
        }
        (Ok(_), Some(want)) => {
            return Ok(Err(Outcome::Failed(vec![Mismatch::new(
                "configError",
                format!("an error containing {want:?}"),
                "the configuration was accepted",
            )])));
        }
        (Err(e), None) => return Err(bad("config", &e)),
        (Ok(c), None) => c,
    }))
}

/// The case's placements, messages, refusals and preemptions against the run's.
fn compare(
    expect: &Expect,
    snapshot: &Snapshot,
    placements: &BTreeMap<String, Placement>,
    refused: &BTreeMap<String, String>,
    preempted: &[String],
    bad: &dyn Fn(&str, &dyn std::fmt::Display) -> ScenarioError,
    mismatches: &mut Vec<Mismatch>,
) -> Result<(), ScenarioError> {
    for (pod, allowed) in &expect.placements {
        let Some(got) = placements.get(pod) else {
            return Err(bad(
                &format!("expect.placements.{pod}"),
                &"Not found: no such pod in schedule",
            ));
        };
        if let Some((j, node)) = allowed
            .iter()
            .enumerate()
            .find(|(_, n)| snapshot.node_id(n).is_none())
        {
            return Err(bad(
                &format!("expect.placements.{pod}[{j}]"),
                &format!("Not found: no node {node:?} in the case"),
            ));
        }
        let ok = match got {
            Ok(node) => allowed.contains(node),
            Err(_) => allowed.is_empty(),
        };
        if !ok {
            let want = if allowed.is_empty() {
                "Pending".to_string()
            } else {
                format!("one of [{}]", allowed.join(", "))
            };
            let got = match got {
                Ok(node) => node.clone(),
                Err(msg) => format!("Pending ({msg})"),
            };
            mismatches.push(Mismatch::new(format!("placements[{pod}]"), want, got));
        }
    }
    for (pod, want) in &expect.messages {
        let got = match placements.get(pod) {
            None => {
                return Err(bad(
                    &format!("expect.messages.{pod}"),
                    &"Not found: no such pod in schedule",
                ));
            }
            Some(Ok(node)) => format!("bound to {node}"),
            Some(Err(message)) => message.clone(),
        };
        if &got != want {
            mismatches.push(Mismatch::new(format!("messages[{pod}]"), want, got));
        }
    }
    for (pod, want) in &expect.refused {
        let got = refused.get(pod).map_or("admitted", String::as_str);
        if got != want {
            mismatches.push(Mismatch::new(format!("refused[{pod}]"), want, got));
        }
    }
    match &expect.preempted {
        None => {}
        Some(Preempted::Exactly(want)) => {
            let (mut w, mut g) = (want.clone(), preempted.to_vec());
            w.sort();
            g.sort();
            if w != g {
                mismatches.push(Mismatch::new(
                    "preempted",
                    format!("[{}]", w.join(", ")),
                    format!("[{}]", g.join(", ")),
                ));
            }
        }
        Some(Preempted::Some(PreemptedCount { count, from }))
            if preempted.len() != *count || preempted.iter().any(|p| !from.contains(p)) =>
        {
            mismatches.push(Mismatch::new(
                "preempted",
                format!("{count} of [{}]", from.join(", ")),
                format!("[{}]", preempted.join(", ")),
            ));
        }
        Some(Preempted::Some(_)) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{Outcome, run_file};

    const CASE: &str = r#"
cases:
- name: preemption frees one node
  nodes:
  - metadata: {name: n1}
    status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}
  - metadata: {name: n2}
    status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}
  pods:
  - metadata: {name: low-1}
    spec: {nodeName: n1, priority: 1, containers: [{name: c, resources: {requests: {cpu: '2'}}}]}
  - metadata: {name: mid-2}
    spec: {nodeName: n2, priority: 5, containers: [{name: c, resources: {requests: {cpu: '2'}}}]}
  schedule:
  - metadata: {name: high}
    spec: {priority: 10, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}
  expect:
    placements: {high: [n1]}
    preempted: [low-1]
- name: count form
  nodes:
  - metadata: {name: n1}
    status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}
  pods:
  - metadata: {name: low-1}
    spec: {nodeName: n1, priority: 1, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}
  - metadata: {name: low-2}
    spec: {nodeName: n1, priority: 1, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}
  schedule:
  - metadata: {name: high}
    spec: {priority: 10, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}
  expect:
    placements: {high: [n1]}
    preempted: {count: 1, from: [low-1, low-2]}
"#;

    #[test]
    fn preemption_cases_run() {
        let reports = run_file(CASE, "inline.yaml").expect("the test case file runs");
        for r in reports {
            assert_eq!(r.outcome, Outcome::Passed, "{}", r.name);
        }
    }
}
