//! Prevent instead of repair: which pods a scale-down should remove so the spread stays
//! best, and the `controller.kubernetes.io/pod-deletion-cost` values that make the
//! ReplicaSet controller remove exactly those (it deletes lower costs first).

use super::measure::{Groups, Violation};
use super::{RebalanceError, WorkloadSpread};
use std::collections::BTreeSet;
use topospread::Features;
use topospread::config::SchedulerConfig;
use topospread::snapshot::{NodeId, PodId, Snapshot};
use topospread::spread::SpreadPlugins;

pub use crate::controller::DELETION_COST_ANNOTATION;

/// One pod's deletion cost.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeletionCost {
    /// The namespace.
    pub namespace: String,
    /// The pod.
    pub pod: String,
    /// Its node.
    pub node: String,
    /// The annotation's value: negative for pods to remove (first removed lowest), 0
    /// for pods to keep.
    pub cost: i64,
    /// Whether the scale-down removes it.
    pub delete: bool,
}

/// Which pods go, and the spread before and after.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ScalePlan {
    /// `namespace/name` of the controller.
    pub workload: String,
    /// Bound pods now.
    pub from: usize,
    /// Replicas asked for.
    pub to: usize,
    /// Every pod of the controller, removed ones first in removal order.
    pub pods: Vec<DeletionCost>,
    /// The measure over every constraint after removal.
    pub violation_after: Violation,
    /// The controller's constraints now.
    pub before: Vec<WorkloadSpread>,
    /// After the removal.
    pub after: Vec<WorkloadSpread>,
}

/// Chooses which of the bound pods that `controller` (in `namespace`) controls to
/// remove to leave `replicas`, one at a time: each time the pod whose removal leaves
/// the lowest measure, then the most even counts (the smallest sum of squared domain
/// counts), then the latest name. `workload` names the controller in messages.
pub fn plan_scale_down(
    snapshot: &Snapshot,
    config: &SchedulerConfig,
    features: Features,
    namespace: &str,
    controller: &str,
    workload: &str,
    replicas: usize,
) -> Result<ScalePlan, RebalanceError> {
    let mut snapshot = snapshot.clone();
    let plugins = SpreadPlugins::new(config, features, &mut snapshot)?;
    let ns = snapshot.symbols().get(namespace);
    let owned = |snapshot: &Snapshot| -> Vec<(String, PodId, NodeId)> {
        let mut v: Vec<(String, PodId, NodeId)> = snapshot
            .pods()
            .filter(|(_, p)| {
                Some(p.namespace) == ns
                    && !p.terminating
                    && p.controller
                        .as_ref()
                        .is_some_and(|c| &*c.name == controller)
            })
            .filter_map(|(id, p)| Some((p.name.to_string(), id, snapshot.pod_node(id)?)))
            .collect();
        v.sort();
        v
    };
    let pods = owned(&snapshot);
    if pods.is_empty() {
        let (kind, name) = workload.split_once('/').unwrap_or(("", workload));
        return Err(RebalanceError::UnknownWorkload {
            kind: kind.to_string(),
            name: name.to_string(),
            namespace: namespace.to_string(),
        });
    }
    if replicas > pods.len() {
        return Err(RebalanceError::NotAScaleDown {
            workload: format!("{namespace}/{workload}"),
            to: replicas,
            has: pods.len(),
        });
    }
    let is_ours = |p: &topospread::api::Pod| {
        Some(p.namespace) == ns
            && p.controller
                .as_ref()
                .is_some_and(|c| &*c.name == controller)
    };
    let mut groups = Groups::build(&snapshot, &plugins, is_ours);
    let before = groups.report(&snapshot);
    let mut removed: Vec<(String, String)> = Vec::new();
    for _ in replicas..pods.len() {
        let mut best: Option<(RemovalRank, PodId)> = None;
        let mut tried_nodes: BTreeSet<NodeId> = BTreeSet::new();
        // The latest name first, so ties go to it; one pod per node is enough.
        for (name, id, node) in owned(&snapshot).into_iter().rev() {
            if !tried_nodes.insert(node) {
                continue;
            }
            let Some(pod) = snapshot.pod(id).cloned() else {
                continue;
            };
            let changed = groups.counting(id, &pod, &snapshot);
            snapshot.remove_pod(id);
            let (v, _) = groups.measure_with(&changed, &snapshot);
            let balance = sum_of_squares(&groups, &changed, &snapshot);
            let restored = snapshot.add_pod(pod)?;
            let key = (v, balance, std::cmp::Reverse(name));
            if best.as_ref().is_none_or(|(k, _)| key < *k) {
                best = Some((key, restored));
            }
        }
        let Some((_, id)) = best else { break };
        let Some(pod) = snapshot.pod(id).cloned() else {
            break;
        };
        let changed = groups.counting(id, &pod, &snapshot);
        let node = snapshot
            .pod_node(id)
            .map(|n| snapshot.node(n).node.name.to_string());
        snapshot.remove_pod(id);
        groups.commit(&changed, &snapshot);
        removed.push((pod.name.to_string(), node.unwrap_or_default()));
    }
    let count = removed.len() as i64;
    let mut out: Vec<DeletionCost> = removed
        .iter()
        .enumerate()
        .map(|(i, (pod, node))| DeletionCost {
            namespace: namespace.to_string(),
            pod: pod.clone(),
            node: node.clone(),
            cost: i as i64 - count,
            delete: true,
        })
        .collect();
    for (name, _, node) in &pods {
        if !removed.iter().any(|(p, _)| p == name) {
            out.push(DeletionCost {
                namespace: namespace.to_string(),
                pod: name.clone(),
                node: snapshot.node(*node).node.name.to_string(),
                cost: 0,
                delete: false,
            });
        }
    }
    Ok(ScalePlan {
        workload: format!("{namespace}/{workload}"),
        from: pods.len(),
        to: replicas,
        pods: out,
        violation_after: groups.total,
        before,
        after: groups.report(&snapshot),
    })
}

/// How uneven the groups are: the sum of squared domain counts (lower is more even).
fn sum_of_squares(groups: &Groups, changed: &[usize], snapshot: &Snapshot) -> i64 {
    changed
        .iter()
        .map(|&i| {
            groups.list[i]
                .group
                .counts(snapshot)
                .iter()
                .map(|(_, c)| c * c)
                .sum::<i64>()
        })
        .sum()
}

/// How good removing a pod is: the violation left, then evenness, then the latest name.
type RemovalRank = (Violation, i64, std::cmp::Reverse<String>);
