//! Per-workload spread, for `topospread_domain_skew`: for each controller's pods and each
//! of their constraints' topology keys, matching pods in the fullest domain minus the
//! emptiest, over every domain of the key (a dashboard view: it does not apply the
//! constraint's node inclusion policies or minDomains, which Filter does).

use std::collections::HashSet;

use topospread::Snapshot;
use topospread::api::ControllerKind;
use topospread::snapshot::NO_DOMAIN;

/// One workload's skew over one topology key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WorkloadSkew {
    pub(crate) namespace: String,
    /// `Kind/name` of the controller.
    pub(crate) workload: String,
    pub(crate) topology_key: String,
    pub(crate) skew: u64,
}

/// Every controller-owned workload's skew per constraint key. O(pods + workloads x keys x
/// nodes), reading the snapshot's incrementally kept match counts.
pub(crate) fn workload_skews(snapshot: &Snapshot) -> Vec<WorkloadSkew> {
    let symbols = snapshot.symbols();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (_, pod) in snapshot.pods() {
        let Some(controller) = &pod.controller else {
            continue;
        };
        let kind = match controller.kind {
            ControllerKind::ReplicaSet => "ReplicaSet",
            ControllerKind::StatefulSet => "StatefulSet",
            ControllerKind::ReplicationController => "ReplicationController",
            ControllerKind::DaemonSet => "DaemonSet",
            // `Other`, and kinds newer than this crate.
            _ => "Controller",
        };
        for c in pod.spread_constraints.iter() {
            if !seen.insert((pod.namespace, kind, controller.name.clone(), c.topology_key)) {
                continue;
            }
            let Some(domains) = snapshot.domains(c.topology_key) else {
                continue;
            };
            let selector = c.selector_for(&pod.labels);
            let counts = snapshot.match_counts(pod.namespace, &selector);
            let mut per_domain = vec![0u64; domains.len()];
            for (node, n) in counts.iter().enumerate() {
                let d = domains.domain_of(node);
                if d != NO_DOMAIN
                    && let Some(slot) = usize::try_from(d).ok().and_then(|d| per_domain.get_mut(d))
                {
                    *slot += u64::from(*n);
                }
            }
            let max = per_domain.iter().max().copied().unwrap_or(0);
            let min = per_domain.iter().min().copied().unwrap_or(0);
            out.push(WorkloadSkew {
                namespace: symbols.resolve(pod.namespace).to_string(),
                workload: format!("{kind}/{}", controller.name),
                topology_key: symbols.resolve(c.topology_key).to_string(),
                skew: max - min,
            });
        }
    }
    out
}

/// The `n` most skewed (ties by namespace, workload and key, so the set is stable
/// between scrapes): `topospread_domain_skew`'s label sets stay bounded however many
/// workloads the cluster runs.
pub(crate) fn most_skewed(mut skews: Vec<WorkloadSkew>, n: usize) -> Vec<WorkloadSkew> {
    skews.sort_by(|a, b| {
        b.skew
            .cmp(&a.skew)
            .then_with(|| a.namespace.cmp(&b.namespace))
            .then_with(|| a.workload.cmp(&b.workload))
            .then_with(|| a.topology_key.cmp(&b.topology_key))
    });
    skews.truncate(n);
    skews
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;
    use topospread::convert;

    #[test]
    fn skew_per_workload_and_key() {
        let mut s = Snapshot::new();
        for (name, zone) in [("n1", "a"), ("n2", "a"), ("n3", "b")] {
            let n: k8s_openapi::api::core::v1::Node = serde_json::from_value(json!({
                "metadata": {"name": name, "labels": {"zone": zone, "host": name}},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}))
            .unwrap();
            let n = convert::node(&n, s.symbols_mut()).unwrap();
            s.add_node(n).unwrap();
        }
        for (name, node) in [("w1", "n1"), ("w2", "n2"), ("w3", "n3")] {
            let p: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": "default", "uid": name,
                    "labels": {"app": "web"},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                        "name": "web-1", "uid": "rs", "controller": true}]},
                "spec": {"nodeName": node, "containers": [{"name": "c"}],
                    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"app": "web"}}}]}}))
            .unwrap();
            let p = convert::pod(&p, s.symbols_mut()).unwrap();
            s.add_pod(p).unwrap();
        }
        let skews = workload_skews(&s);
        assert!(most_skewed(skews.clone(), 0).is_empty());
        assert_eq!(
            skews,
            vec![WorkloadSkew {
                namespace: "default".into(),
                workload: "ReplicaSet/web-1".into(),
                topology_key: "zone".into(),
                skew: 1,
            }]
        );
    }
}

#[cfg(test)]
mod top_tests {
    use super::*;

    #[test]
    fn only_the_most_skewed_are_kept() {
        let skew = |workload: &str, skew| WorkloadSkew {
            namespace: "default".into(),
            workload: workload.into(),
            topology_key: "zone".into(),
            skew,
        };
        let all = vec![skew("a", 1), skew("b", 5), skew("c", 3), skew("d", 5)];
        let top: Vec<_> = most_skewed(all, 3)
            .into_iter()
            .map(|s| (s.workload, s.skew))
            .collect();
        assert_eq!(top, vec![("b".into(), 5), ("d".into(), 5), ("c".into(), 3)]);
    }
}
