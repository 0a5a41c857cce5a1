//! The plugin-facing state a node holds, defined next to the NodeInfo that keeps it up
//! to date (as upstream's `framework/types.go`): the plugins read it, the snapshot owns it.

use crate::api::resources::HostPort;
use std::collections::{BTreeMap, BTreeSet};

/// What the cluster knows about one image name (`ImageStateSummary`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ImageStateSummary {
    /// Size in bytes, as the first node reporting the name said.
    pub size: i64,
    /// How many nodes report the name.
    pub num_nodes: usize,
}

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
