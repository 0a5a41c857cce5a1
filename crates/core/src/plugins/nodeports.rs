//! NodePorts: a pod cannot land where one of its host ports is taken (upstream's
//! `nodeports` plugin and `HostPortInfo`).

use std::collections::{BTreeMap, BTreeSet};

use crate::api::resources::HostPort;

/// Filter's reason when a host port is taken.
pub(crate) const ERR_REASON: &str = "node(s) didn't have free ports for the requested pod ports";

/// The wildcard host IP: binding it takes the port on every address.
pub(crate) const DEFAULT_BIND_ALL_HOST_IP: &str = "0.0.0.0";

/// The host ports in use on a node, by IP, then protocol and port (`HostPortInfo`).
/// A set, as upstream's: adding a port twice and removing it once frees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostPortInfo {
    by_ip: BTreeMap<Box<str>, BTreeSet<(Box<str>, i32)>>,
}

/// Upstream's `sanitize`: an empty IP is `0.0.0.0`, an empty protocol `TCP`.
fn sanitized(port: &HostPort) -> (&str, &str) {
    let ip = if port.ip.is_empty() {
        DEFAULT_BIND_ALL_HOST_IP
    } else {
        &port.ip
    };
    let protocol = if port.protocol.is_empty() {
        "TCP"
    } else {
        &port.protocol
    };
    (ip, protocol)
}

impl HostPortInfo {
    /// Marks `port` as used. Ports ≤ 0 are ignored.
    pub fn add(&mut self, port: &HostPort) {
        if port.port <= 0 {
            return;
        }
        let (ip, protocol) = sanitized(port);
        self.by_ip
            .entry(ip.into())
            .or_default()
            .insert((protocol.into(), port.port));
    }

    /// Frees `port`. Ports ≤ 0 are ignored.
    pub fn remove(&mut self, port: &HostPort) {
        if port.port <= 0 {
            return;
        }
        let (ip, protocol) = sanitized(port);
        if let Some(set) = self.by_ip.get_mut(ip) {
            set.remove(&(Box::from(protocol), port.port));
            if set.is_empty() {
                self.by_ip.remove(ip);
            }
        }
    }

    /// How many (ip, protocol, port) entries are in use.
    pub fn len(&self) -> usize {
        self.by_ip.values().map(BTreeSet::len).sum()
    }

    /// Whether no port is in use.
    pub fn is_empty(&self) -> bool {
        self.by_ip.is_empty()
    }

    /// Whether `port` conflicts with one in use: the same protocol and port on the
    /// same IP, or on `0.0.0.0`; and wanting `0.0.0.0` conflicts with that protocol
    /// and port on any IP. Ports ≤ 0 never conflict.
    pub(crate) fn check_conflict(&self, port: &HostPort) -> bool {
        if port.port <= 0 {
            return false;
        }
        let (ip, protocol) = sanitized(port);
        let key = (Box::from(protocol), port.port);
        if ip == DEFAULT_BIND_ALL_HOST_IP {
            return self.by_ip.values().any(|set| set.contains(&key));
        }
        [DEFAULT_BIND_ALL_HOST_IP, ip]
            .iter()
            .any(|ip| self.by_ip.get(*ip).is_some_and(|set| set.contains(&key)))
    }
}

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
