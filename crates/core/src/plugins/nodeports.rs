//! NodePorts: a pod cannot land where one of its host ports is taken (upstream's
//! `nodeports` plugin; the ports a node uses are the snapshot's [`HostPortInfo`]).

use crate::api::resources::HostPort;
use crate::snapshot::HostPortInfo;

/// Filter's reason when a host port is taken.
pub(crate) const ERR_REASON: &str = "node(s) didn't have free ports for the requested pod ports";

/// Whether none of `wanted` (from [`host_ports`](crate::api::resources::host_ports))
/// conflicts with the node's `used` ports. A pod with no host ports is skipped at
/// PreFilter upstream, so it always fits.
pub(crate) fn fits_ports(wanted: &[HostPort], used: &HostPortInfo) -> bool {
    !wanted.iter().any(|port| used.check_conflict(port))
}

/// The plugin's registry name.
pub const NAME: &str = "NodePorts";

/// The NodePorts plugin: PreFilter skips pods without host ports; Filter rejects nodes
/// where one of them is taken.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodePorts;

impl crate::framework::Plugin for NodePorts {
    fn name(&self) -> &'static str {
        NAME
    }
    fn events_to_register(&self) -> Vec<crate::framework::ClusterEvent> {
        use crate::framework::{ActionType as A, ClusterEvent, EventResource as R};
        vec![
            ClusterEvent::new(R::AssignedPod, A::DELETE),
            ClusterEvent::new(R::Node, A::ADD | A::UPDATE),
        ]
    }
}

impl crate::framework::PreFilterPlugin for NodePorts {
    fn pre_filter(
        &self,
        _: &mut crate::framework::CycleState,
        pod: &crate::api::Pod,
        _: &crate::snapshot::Snapshot,
    ) -> crate::framework::Status {
        if pod.host_ports.is_empty() {
            crate::framework::Status::skip()
        } else {
            crate::framework::Status::success()
        }
    }
}

impl crate::framework::FilterPlugin for NodePorts {
    fn filter(
        &self,
        _: &crate::framework::CycleState,
        pod: &crate::api::Pod,
        node: &crate::snapshot::NodeInfo,
        _: &crate::snapshot::Snapshot,
    ) -> crate::framework::Status {
        if fits_ports(&pod.host_ports, node.used_ports()) {
            crate::framework::Status::success()
        } else {
            crate::framework::Status::new(crate::framework::Code::Unschedulable, ERR_REASON)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hp(ip: &str, protocol: &str, port: i32) -> HostPort {
        HostPort {
            ip: ip.into(),
            protocol: protocol.into(),
            port,
        }
    }

    fn used(ports: &[HostPort]) -> HostPortInfo {
        let mut info = HostPortInfo::default();
        for p in ports {
            info.add(p);
        }
        info
    }

    /// TestNodePorts's table: wanted ports, ports in use, fits.
    #[test]
    fn upstream_node_ports_table() {
        let cases: Vec<(&str, Vec<HostPort>, Vec<HostPort>, bool)> = vec![
            ("nothing running", vec![], vec![], true),
            (
                "other port",
                vec![hp("127.0.0.1", "UDP", 8080)],
                vec![hp("127.0.0.1", "UDP", 9090)],
                true,
            ),
            (
                "same udp port",
                vec![hp("127.0.0.1", "UDP", 8080)],
                vec![hp("127.0.0.1", "UDP", 8080)],
                false,
            ),
            (
                "same tcp port",
                vec![hp("127.0.0.1", "TCP", 8080)],
                vec![hp("127.0.0.1", "TCP", 8080)],
                false,
            ),
            (
                "different host ip",
                vec![hp("127.0.0.1", "TCP", 8080)],
                vec![hp("127.0.0.2", "TCP", 8080)],
                true,
            ),
            (
                "different protocol",
                vec![hp("127.0.0.1", "UDP", 8080)],
                vec![hp("127.0.0.1", "TCP", 8080)],
                true,
            ),
            (
                "second udp port conflict",
                vec![hp("127.0.0.1", "TCP", 8000), hp("127.0.0.1", "UDP", 8080)],
                vec![hp("127.0.0.1", "UDP", 8080)],
                false,
            ),
            (
                "first tcp port conflict",
                vec![hp("127.0.0.1", "TCP", 8001), hp("127.0.0.1", "UDP", 8080)],
                vec![hp("127.0.0.1", "TCP", 8001), hp("127.0.0.1", "UDP", 8081)],
                false,
            ),
            (
                "first tcp port conflict due to 0.0.0.0 hostIP",
                vec![hp("0.0.0.0", "TCP", 8001)],
                vec![hp("127.0.0.1", "TCP", 8001)],
                false,
            ),
            (
                "TCP hostPort conflict due to 0.0.0.0 hostIP",
                vec![hp("10.0.10.10", "TCP", 8001), hp("0.0.0.0", "TCP", 8001)],
                vec![hp("127.0.0.1", "TCP", 8001)],
                false,
            ),
            (
                "second tcp port conflict to 0.0.0.0 hostIP",
                vec![hp("10.0.10.10", "TCP", 8001)],
                vec![hp("0.0.0.0", "TCP", 8001)],
                false,
            ),
            (
                "second different protocol",
                vec![hp("10.0.10.10", "UDP", 8001)],
                vec![hp("0.0.0.0", "TCP", 8001)],
                true,
            ),
            (
                "UDP hostPort conflict due to 0.0.0.0 hostIP",
                vec![hp("10.0.10.10", "TCP", 8001), hp("10.0.10.10", "UDP", 8001)],
                vec![hp("0.0.0.0", "UDP", 8001)],
                false,
            ),
            (
                "empty IP and protocol mean 0.0.0.0 and TCP",
                vec![hp("", "", 8001)],
                vec![hp("10.0.0.1", "TCP", 8001)],
                false,
            ),
        ];
        for (name, wanted, in_use, fits) in cases {
            assert_eq!(fits_ports(&wanted, &used(&in_use)), fits, "{name}");
        }
    }

    /// TestHostPortInfo_AddRemove and TestHostPortInfo_Check, in short.
    #[test]
    fn add_remove_and_check() {
        let mut info = used(&[
            hp("127.0.0.1", "TCP", 80),
            hp("127.0.0.1", "TCP", 80),
            hp("", "", 443),
            hp("10.0.0.1", "UDP", 0),
        ]);
        assert_eq!(info.len(), 2);
        assert!(info.check_conflict(&hp("192.168.0.1", "TCP", 443)));
        assert!(!info.check_conflict(&hp("192.168.0.1", "TCP", 80)));
        assert!(!info.check_conflict(&hp("127.0.0.1", "TCP", 0)));
        info.remove(&hp("127.0.0.1", "TCP", 80));
        info.remove(&hp("0.0.0.0", "TCP", 443));
        assert!(info.is_empty());
    }
}
