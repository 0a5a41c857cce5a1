//! `simulate --drain NODE` (cordoned and evicted as `kubectl drain` does, the node
//! kept), `--remove-node NODE` and `--lose KEY=VALUE` (nodes deleted, or a zone lost in
//! an outage): what became of their pods and workloads, as a report (the what-ifs
//! themselves are the driver's, [`topospread_driver::whatif`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use topospread::Drained;
use topospread::api::WhenUnsatisfiable;
use topospread::snapshot::Snapshot;
use topospread_driver::{Placement, Runtime};

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

/// A pod `kubectl drain` will not evict without an override flag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefusedEviction {
    /// `namespace/name`.
    pub pod: String,
    /// kubectl's message (`cannot delete Pods with local storage (...)`).
    pub reason: String,
}

/// A pod whose eviction a PodDisruptionBudget keeps refusing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockedEviction {
    /// `namespace/name`.
    pub pod: String,
    /// The budget, `namespace/name`.
    pub budget: String,
}

/// What the what-if did, as `-o json` prints it under `drained`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WhatIfReport {
    /// The nodes removed (`--remove-node`, `--lose`), in order.
    pub nodes: Vec<String>,
    /// The nodes drained (`--drain`): cordoned and kept, their pods evicted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cordoned: Vec<String>,
    /// Pods a drain leaves on their cordoned node: DaemonSet pods (as with
    /// `--ignore-daemonsets`), mirror pods, terminating pods.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
    /// Pods `kubectl drain` refuses to evict without `--force` or
    /// `--delete-emptydir-data` (it then evicts nothing); shown as staying.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<RefusedEviction>,
    /// Pods a PodDisruptionBudget keeps on the node: kubectl retries until its timeout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<BlockedEviction>,
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
        cordoned: drained.cordoned.clone(),
        kept: drained.kept.clone(),
        refused: drained
            .refused
            .iter()
            .map(|(pod, reason)| RefusedEviction {
                pod: pod.clone(),
                reason: reason.clone(),
            })
            .collect(),
        blocked: drained
            .blocked
            .iter()
            .map(|(pod, budget)| BlockedEviction {
                pod: pod.clone(),
                budget: budget.clone(),
            })
            .collect(),
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
