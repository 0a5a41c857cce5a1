//! Property: NodeInfo's incremental aggregates equal a rebuild from the bound pods
//! after any sequence of binds and removals.

use super::HostPortInfo;
use super::{NodeInfo, PodId, Snapshot};
use crate::api::resources::{NonZeroRequests, Resources};
use crate::convert;
use k8s_openapi::api::core::v1 as core;
use proptest::prelude::*;
use serde_json::json;

fn pod_manifest(i: usize, cpu: u32, port: Option<u16>, anti: bool) -> serde_json::Value {
    let mut c = json!({"name": "c", "resources": {"requests": {"cpu": format!("{cpu}m")}}});
    if let Some(p) = port {
        c["ports"] = json!([{"containerPort": 80, "hostPort": i32::from(p)}]);
    }
    let affinity = if anti {
        json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "zone"}]}})
    } else {
        json!(null)
    };
    json!({"metadata": {"name": format!("p{i}")}, "spec": {"containers": [c], "affinity": affinity}})
}

fn rebuilt(s: &Snapshot, n: &NodeInfo) -> (Resources, NonZeroRequests, HostPortInfo, Vec<PodId>) {
    let mut req = Resources::default();
    let mut nz = NonZeroRequests::default();
    let mut ports = HostPortInfo::default();
    let mut anti = Vec::new();
    for &id in n.pods() {
        let Some(p) = s.pod(id) else { continue };
        req.add(&p.requests.requested);
        nz.add(p.requests.non_zero);
        for hp in &p.host_ports {
            ports.add(hp);
        }
        if p.affinity.has_required_anti_affinity() {
            anti.push(id);
        }
    }
    anti.sort();
    (req, nz, ports, anti)
}

proptest! {
    #[test]
    fn node_aggregates_match_a_rebuild(
        ops in prop::collection::vec((0usize..3, 1u32..2000, any::<bool>(), any::<bool>(), any::<bool>()), 1..40)
    ) {
        let mut s = Snapshot::new();
        for i in 0..3 {
            let n: core::Node = serde_json::from_value(json!({"metadata": {"name": format!("n{i}"), "labels": {"zone": "z"}}}))
                .expect("the test object deserializes");
            let node = convert::node(&n, s.symbols_mut()).expect("the test node converts");
            s.add_node(node).expect("the snapshot takes the node");
        }
        let mut live: Vec<PodId> = Vec::new();
        for (i, (node, cpu, with_port, anti, remove)) in ops.into_iter().enumerate() {
            // Each pod its own port: the scheduler never co-locates two users of one port.
            let port = with_port.then(|| 8000 + u16::try_from(i).unwrap_or(0));
            if remove && !live.is_empty() {
                let id = live.remove(i % live.len());
                s.remove_pod(id);
                continue;
            }
            let p: core::Pod = serde_json::from_value(pod_manifest(i, cpu, port, anti))
                .expect("the test object deserializes");
            let p = convert::pod(&p, s.symbols_mut()).expect("the test pod converts");
            let id = s.add_pod(p).expect("the snapshot takes the pod");
            s.bind(id, super::NodeId(u32::try_from(node).unwrap_or(0)));
            live.push(id);
        }
        for n in s.nodes() {
            let (req, nz, ports, anti) = rebuilt(&s, n);
            prop_assert_eq!(n.requested(), &req);
            prop_assert_eq!(n.non_zero_requested(), nz);
            // HostPortInfo is a set upstream too: compare conflicts, not multiplicity.
            for p in 8000..8040 {
                let hp = crate::api::resources::HostPort { ip: "0.0.0.0".into(), protocol: "TCP".into(), port: p };
                let want = ports.check_conflict(&hp);
                let got = n.used_ports().check_conflict(&hp);
                prop_assert_eq!(want, got, "port {} on {}", p, n.node.name);
            }
            let mut got_anti = n.pods_with_required_anti_affinity().to_vec();
            got_anti.sort();
            prop_assert_eq!(got_anti, anti);
        }
        // The snapshot's affinity node lists equal a scan of the nodes.
        let listed: Vec<_> = s.nodes_with_required_anti_affinity().map(|n| n.id).collect();
        let scanned: Vec<_> = s.nodes().iter().filter(|n| !n.pods_with_required_anti_affinity().is_empty()).map(|n| n.id).collect();
        prop_assert_eq!(listed, scanned);
        let listed: Vec<_> = s.nodes_with_pod_affinity().map(|n| n.id).collect();
        let scanned: Vec<_> = s.nodes().iter().filter(|n| !n.pods_with_affinity().is_empty()).map(|n| n.id).collect();
        prop_assert_eq!(listed, scanned);
    }
}
