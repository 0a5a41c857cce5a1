//! The selectors of the objects that own pods for default spreading (Service,
//! ReplicationController, ReplicaSet, StatefulSet), as the snapshot's workload lists store
//! them: one conversion for the loader, the live cache and `guard`.

use crate::api::{Labels, Selector, Symbols};
use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{ReplicationController, Service};

/// A Service's `spec.selector` (`None`: it has none, and selects nothing).
pub fn service_selector(s: &Service, symbols: &mut Symbols) -> Option<Labels> {
    let map = s.spec.as_ref().and_then(|spec| spec.selector.as_ref())?;
    Some(Labels::from_map(Some(map), symbols))
}

/// A ReplicationController's `spec.selector` (`None`: it has none).
pub fn replication_controller_selector(
    rc: &ReplicationController,
    symbols: &mut Symbols,
) -> Option<Labels> {
    let map = rc.spec.as_ref().and_then(|spec| spec.selector.as_ref())?;
    Some(Labels::from_map(Some(map), symbols))
}

/// A ReplicaSet's `spec.selector`, compiled (`None`: it does not compile, and selects
/// nothing).
pub fn replica_set_selector(rs: &ReplicaSet, symbols: &mut Symbols) -> Option<Selector> {
    Selector::from_label_selector(Some(&rs.spec.selector), symbols).ok()
}

/// A StatefulSet's `spec.selector`, compiled (`None`: it does not compile).
pub fn stateful_set_selector(ss: &StatefulSet, symbols: &mut Symbols) -> Option<Selector> {
    Selector::from_label_selector(Some(&ss.spec.selector), symbols).ok()
}
