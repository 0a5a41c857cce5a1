//! Workload objects and namespaces, added, updated and removed by namespace and name
//! (the informer events for Services, ReplicationControllers, ReplicaSets,
//! StatefulSets and Namespaces). Default spreading reads them per cycle, so no count
//! depends on them and nothing else needs to follow.

use super::Snapshot;
use super::cache::CacheError;
use crate::api::{Labels, Selector, Sym};

/// The kinds of workload objects default spreading reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WorkloadKind {
    /// `v1` Service.
    Service,
    /// `v1` ReplicationController.
    ReplicationController,
    /// `apps/v1` ReplicaSet.
    ReplicaSet,
    /// `apps/v1` StatefulSet.
    StatefulSet,
}

impl std::fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Service => "service",
            Self::ReplicationController => "replicationcontroller",
            Self::ReplicaSet => "replicaset",
            Self::StatefulSet => "statefulset",
        })
    }
}

/// Sets (adds or replaces) the object `namespace/name` in a workload list.
fn upsert<T>(list: &mut Vec<(Sym, Box<str>, T)>, namespace: Sym, name: &str, value: T) {
    match list
        .iter_mut()
        .find(|(ns, n, _)| *ns == namespace && &**n == name)
    {
        Some(entry) => entry.2 = value,
        None => list.push((namespace, name.into(), value)),
    }
}

/// Removes every object `namespace/name` from a workload list; whether one was there.
fn remove<T>(list: &mut Vec<(Sym, Box<str>, T)>, namespace: Sym, name: &str) -> bool {
    let before = list.len();
    list.retain(|(ns, n, _)| !(*ns == namespace && &**n == name));
    list.len() != before
}

impl Snapshot {
    /// Adds or replaces the Service `namespace/name` (`spec.selector`; `None` selects
    /// nothing).
    pub fn set_service(&mut self, namespace: Sym, name: &str, selector: Option<Labels>) {
        self.touch();
        upsert(&mut self.workloads.services, namespace, name, selector);
    }

    /// Adds or replaces the ReplicationController `namespace/name`.
    pub fn set_replication_controller(
        &mut self,
        namespace: Sym,
        name: &str,
        selector: Option<Labels>,
    ) {
        self.touch();
        upsert(
            &mut self.workloads.replication_controllers,
            namespace,
            name,
            selector,
        );
    }

    /// Adds or replaces the ReplicaSet `namespace/name` (`None`: the selector does not
    /// parse).
    pub fn set_replica_set(&mut self, namespace: Sym, name: &str, selector: Option<Selector>) {
        self.touch();
        upsert(&mut self.workloads.replica_sets, namespace, name, selector);
    }

    /// Adds or replaces the StatefulSet `namespace/name`.
    pub fn set_stateful_set(&mut self, namespace: Sym, name: &str, selector: Option<Selector>) {
        self.touch();
        upsert(&mut self.workloads.stateful_sets, namespace, name, selector);
    }

    /// Removes the workload object `namespace/name` of `kind`.
    pub fn remove_workload(
        &mut self,
        kind: WorkloadKind,
        namespace: Sym,
        name: &str,
    ) -> Result<(), CacheError> {
        self.touch();
        let w = &mut self.workloads;
        let found = match kind {
            WorkloadKind::Service => remove(&mut w.services, namespace, name),
            WorkloadKind::ReplicationController => {
                remove(&mut w.replication_controllers, namespace, name)
            }
            WorkloadKind::ReplicaSet => remove(&mut w.replica_sets, namespace, name),
            WorkloadKind::StatefulSet => remove(&mut w.stateful_sets, namespace, name),
        };
        if found {
            Ok(())
        } else {
            Err(CacheError::WorkloadNotFound {
                kind,
                namespace: self.symbols.resolve(namespace).into(),
                name: name.into(),
            })
        }
    }

    /// Removes a namespace, returning its labels. (A pod added to it later recreates
    /// it with only the `kubernetes.io/metadata.name` label.)
    pub fn remove_namespace(&mut self, namespace: Sym) -> Result<Labels, CacheError> {
        self.touch();
        self.namespaces
            .remove(&namespace)
            .ok_or_else(|| CacheError::NamespaceNotFound {
                namespace: self.symbols.resolve(namespace).into(),
            })
    }
}
