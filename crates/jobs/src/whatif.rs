//! `simulate --drain NODE` and `--lose KEY=VALUE`: nodes removed before scheduling (a
//! drain, or a zone lost in an outage), and what became of their pods and workloads.

use crate::error::{Result, refuse};
use crate::runtime::{Placement, Runtime};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use topospread::api::WhenUnsatisfiable;
use topospread::convert::DEFAULT_NAMESPACE;
use topospread::simulation::Drained;
use topospread::snapshot::Snapshot;
use topospread_k8s::load::{Loaded, Object};

/// One workload that lost pods with the nodes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WorkloadImpact {
    /// The workload's namespace.
    pub namespace: String,
    /// `replicaset/web-7d9c`, `statefulset/db`, ...
    pub controller: String,
    /// Pods it ran on the removed nodes, each recreated pending.
    pub replaced: usize,
    /// Replacements the scheduler placed.
    pub rescheduled: usize,
    /// Replacements left Pending.
    pub pending: usize,
    /// Why the first pending replacement stays Pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// DoNotSchedule constraints with more minDomains than domains left: the global
    /// minimum counts as 0, so no domain may hold more than maxSkew matching pods.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub too_few_domains: Vec<String>,
}

/// What the removal did, as `-o json` prints it under `drained`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WhatIfReport {
    /// The nodes removed, in order.
    pub nodes: Vec<String>,
    /// Replacement pods the scheduler placed.
    pub rescheduled: usize,
    /// Replacement pods left Pending.
    pub pending: usize,
    /// Pods without a controller: nothing recreates them.
    pub lost: Vec<String>,
    /// DaemonSet pods, gone with their nodes.
    pub daemon_pods: Vec<String>,
    /// Mirror (static) pods, gone with their nodes: their kubelet runs them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mirror_pods: Vec<String>,
    /// Each workload that lost pods.
    pub workloads: Vec<WorkloadImpact>,
}

/// The nodes `--drain` and `--lose` name, in order, each once; an unknown node, a
/// malformed `KEY=VALUE` or one no node carries is an error naming it.
pub fn nodes_to_remove(
    snapshot: &Snapshot,
    drain: &[String],
    lose: &[String],
) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |n: String| {
        if !out.contains(&n) {
            out.push(n);
        }
    };
    for name in drain {
        if snapshot.node_id(name).is_none() {
            refuse!("--drain {name}: node {name:?} not found");
        }
        push(name.clone());
    }
    let symbols = snapshot.symbols();
    for arg in lose {
        let Some((key, value)) = arg.split_once('=') else {
            refuse!("--lose {arg}: want KEY=VALUE, e.g. topology.kubernetes.io/zone=us-east-1a");
        };
        let wanted = symbols.get(key).zip(symbols.get(value));
        let matching: Vec<String> = snapshot
            .nodes()
            .iter()
            .filter(|n| wanted.is_some_and(|(k, v)| n.node.labels.get(k) == Some(v)))
            .map(|n| n.node.name.to_string())
            .collect();
        if matching.is_empty() {
            refuse!("--lose {arg}: no node is labelled {key}={value}");
        }
        matching.into_iter().for_each(&mut push);
    }
    Ok(out)
}

/// Removes the nodes the flags name (nothing when none is given). The static pods
/// among `objects` go with their node, never recreated elsewhere.
pub fn drain(
    runtime: &mut Runtime,
    snapshot: &mut Snapshot,
    drain: &[String],
    lose: &[String],
    objects: &[Loaded],
) -> Result<Option<Drained>> {
    if drain.is_empty() && lose.is_empty() {
        return Ok(None);
    }
    let nodes = nodes_to_remove(snapshot, drain, lose)?;
    Ok(Some(runtime.drain(
        snapshot,
        &nodes,
        &static_pods(objects),
    )?))
}

/// `kubernetes.io/config.mirror`: the annotation the kubelet puts on a static pod's mirror.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// The mirror pods of static pods among `objects`, as `namespace/name`: annotated
/// `kubernetes.io/config.mirror`, or controlled by their Node (what the kubelet sets).
fn static_pods(objects: &[Loaded]) -> HashSet<String> {
    objects
        .iter()
        .filter_map(|l| match &l.object {
            Object::Pod(p) => {
                let m = &p.metadata;
                let annotated = m
                    .annotations
                    .as_ref()
                    .is_some_and(|a| a.contains_key(MIRROR_ANNOTATION));
                let node_owned = m
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.controller == Some(true) && o.kind == "Node");
                (annotated || node_owned).then(|| {
                    let ns = m.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
                    format!("{ns}/{}", m.name.as_deref().unwrap_or_default())
                })
            }
            Object::CompactPod(p) => (p.mirror
                || p.controller
                    .as_ref()
                    .is_some_and(|(kind, _)| kind == "Node"))
            .then(|| format!("{}/{}", p.namespace, p.name)),
            _ => None,
        })
        .collect()
}

/// What became of the removed nodes' pods once the queue settled.
pub fn report(drained: &Drained, runtime: &Runtime, snapshot: &Snapshot) -> WhatIfReport {
    let symbols = snapshot.symbols();
    let mut workloads: BTreeMap<(String, String), WorkloadImpact> = BTreeMap::new();
    let (mut rescheduled, mut pending) = (0, 0);
    for (_, id) in &drained.replaced {
        let Some(pod) = snapshot.pod(*id) else {
            continue;
        };
        let Some(c) = &pod.controller else {
            continue;
        };
        let namespace = symbols.resolve(pod.namespace).to_string();
        let controller = format!("{}/{}", controller_kind(&c.kind), c.name);
        let w = workloads
            .entry((namespace.clone(), controller.clone()))
            .or_insert_with(|| WorkloadImpact {
                too_few_domains: too_few_domains(pod, snapshot),
                namespace,
                controller,
                replaced: 0,
                rescheduled: 0,
                pending: 0,
                message: None,
            });
        w.replaced += 1;
        match runtime.placement(snapshot, *id) {
            Placement::Scheduled(_) => {
                w.rescheduled += 1;
                rescheduled += 1;
            }
            Placement::Unschedulable(m) => {
                w.pending += 1;
                pending += 1;
                w.message.get_or_insert(m);
            }
        }
    }
    WhatIfReport {
        nodes: drained.nodes.clone(),
        rescheduled,
        pending,
        lost: drained.lost.clone(),
        daemon_pods: drained.daemon_pods.clone(),
        mirror_pods: drained.mirror_pods.clone(),
        workloads: workloads.into_values().collect(),
    }
}

fn controller_kind(kind: &topospread::api::ControllerKind) -> &'static str {
    use topospread::api::ControllerKind as K;
    match kind {
        K::ReplicaSet => "replicaset",
        K::StatefulSet => "statefulset",
        K::ReplicationController => "replicationcontroller",
        K::DaemonSet => "daemonset",
        // `Other`, and kinds newer than this crate.
        _ => "controller",
    }
}

/// The pod's DoNotSchedule constraints whose minDomains exceeds the domains of its
/// key left on the remaining nodes.
fn too_few_domains(pod: &topospread::api::Pod, snapshot: &Snapshot) -> Vec<String> {
    let symbols = snapshot.symbols();
    pod.spread_constraints
        .iter()
        .filter(|c| c.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule)
        .filter_map(|c| {
            let min = c.min_domains?;
            let left = snapshot.domains(c.topology_key).map_or(0, |d| d.len());
            (usize::try_from(min).unwrap_or(0) > left).then(|| {
                format!(
                    "{} minDomains={min}: {left} domain(s) left, so the global minimum counts as 0 and no domain may hold more than maxSkew={} matching pods",
                    symbols.resolve(c.topology_key),
                    c.max_skew
                )
            })
        })
        .collect()
}
