//! DaemonSet pods: one per node the DaemonSet controller would place one on
//! (`NodeShouldRunDaemonPod`), with the controller's default tolerations and pinned by
//! required node affinity on `metadata.name` (`ReplaceDaemonSetPodNodeNameNodeAffinity`).

use super::{ExpandedPod, Expander, Owner, WorkloadSummary, ns_of};
use crate::load::Source;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Affinity, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
    Toleration,
};
use std::collections::BTreeMap;
use topospread::api::{Symbols, TaintEffect, find_untolerated_taint};
use topospread::convert;

/// The tolerations the DaemonSet controller adds to every pod
/// (`AddOrUpdateDaemonPodTolerations`), plus network-unavailable for host-network pods.
fn default_tolerations(host_network: bool) -> Vec<Toleration> {
    let t = |key: &str, effect: &str| Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        effect: Some(effect.into()),
        ..Default::default()
    };
    let mut v = vec![
        t("node.kubernetes.io/not-ready", "NoExecute"),
        t("node.kubernetes.io/unreachable", "NoExecute"),
        t("node.kubernetes.io/disk-pressure", "NoSchedule"),
        t("node.kubernetes.io/memory-pressure", "NoSchedule"),
        t("node.kubernetes.io/pid-pressure", "NoSchedule"),
        t("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if host_network {
        v.push(t("node.kubernetes.io/network-unavailable", "NoSchedule"));
    }
    v
}

/// The node an existing DaemonSet pod runs on or is pinned to.
pub(crate) fn pod_node(p: &Pod) -> Option<String> {
    let spec = p.spec.as_ref()?;
    if let Some(n) = spec.node_name.as_ref().filter(|n| !n.is_empty()) {
        return Some(n.clone());
    }
    let terms = &spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    terms
        .iter()
        .flat_map(|t| t.match_fields.iter().flatten())
        .find(|r| r.key == "metadata.name" && r.operator == "In")
        .and_then(|r| r.values.as_ref()?.first().cloned())
}

/// Pins `pod` to `node` as the controller does: the required terms are replaced by one
/// term matching the node's name.
fn pin(pod: &mut Pod, node: &str) {
    let spec = pod.spec.get_or_insert_with(Default::default);
    let affinity = spec.affinity.get_or_insert_with(Affinity::default);
    let na = affinity
        .node_affinity
        .get_or_insert_with(NodeAffinity::default);
    na.required_during_scheduling_ignored_during_execution = Some(NodeSelector {
        node_selector_terms: vec![NodeSelectorTerm {
            match_expressions: None,
            match_fields: Some(vec![NodeSelectorRequirement {
                key: "metadata.name".into(),
                operator: "In".into(),
                values: Some(vec![node.to_string()]),
            }]),
        }],
    });
}

/// Adds the DaemonSet's pods to `x`.
pub(super) fn expand(x: &mut Expander<'_>, s: &Source, ds: &DaemonSet, nodes: &[&Node]) {
    let owner = Owner {
        api_version: "apps/v1",
        kind: "DaemonSet",
        meta: &ds.metadata,
    };
    let ns = ns_of(&ds.metadata);
    let name = owner.name();
    let mut summary = WorkloadSummary {
        kind: "DaemonSet",
        namespace: ns.clone(),
        name: name.clone(),
        pods: x.existing.owned(&ns, "DaemonSet", &name).to_vec(),
    };
    let spec = &ds.spec;
    let Some(mut base) = x.template_pod(s, &owner, &spec.template, &ns) else {
        x.out.workloads.push(summary);
        return;
    };
    let pod_spec = base.spec.get_or_insert_with(Default::default);
    let host_network = pod_spec.host_network == Some(true);
    let tolerations = pod_spec.tolerations.get_or_insert_with(Vec::new);
    for t in default_tolerations(host_network) {
        if !tolerations
            .iter()
            .any(|have| have.key == t.key && have.effect == t.effect)
        {
            tolerations.push(t);
        }
    }
    let labels = base.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert("pod-template-generation".into(), "1".into());
    let mut symbols = Symbols::default();
    let mut named = base.clone();
    named.metadata.name = Some(name.clone());
    let Ok(probe) = convert::pod(&named, &mut symbols) else {
        x.out.workloads.push(summary);
        return;
    };
    let have = x
        .existing
        .daemon_nodes
        .get(&(ns.clone(), name.clone()))
        .cloned()
        .unwrap_or_default();
    for (i, n) in nodes.iter().enumerate() {
        let Ok(node) = convert::node(n, &mut symbols) else {
            continue;
        };
        if have.contains(&*node.name) || !should_run(&probe, &node, &symbols) {
            continue;
        }
        let mut pod = base.clone();
        pin(&mut pod, &node.name);
        let pod_name = x.fresh_name(&ns, &name, i);
        pod.metadata.name = Some(pod_name.clone());
        x.existing.names.insert((ns.clone(), pod_name.clone()));
        summary.pods.push(pod_name);
        x.out.pods.push(ExpandedPod {
            source: s.clone(),
            pod,
        });
    }
    x.out.workloads.push(summary);
}

/// `NodeShouldRunDaemonPod`: the pod's required node affinity matches and every
/// NoSchedule/NoExecute taint is tolerated.
fn should_run(pod: &topospread::api::Pod, node: &topospread::api::Node, symbols: &Symbols) -> bool {
    pod.required_node_affinity
        .matches(&node.labels, &node.name, symbols)
        && find_untolerated_taint(&node.taints, &pod.tolerations, false, |t| {
            matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute)
        })
        .is_none()
}
