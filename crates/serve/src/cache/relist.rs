//! A relist's end: what the cache holds of a kind that the list no longer names is removed,
//! as an informer's replace does.

use std::collections::HashSet;
use std::time::Duration;

use topospread::Snapshot;
use topospread::snapshot::WorkloadKind;
use tracing::debug;

use super::LiveCache;
use super::kinds::Kind;

impl LiveCache {
    /// After a relist: removes what the cache holds of `kind` that the list did not name.
    pub(super) fn remove_unlisted(&mut self, kind: Kind, seen: &HashSet<String>, now: Duration) {
        let s = &mut self.snapshot;
        let ns_key = |s: &Snapshot, ns, name: &str| format!("{}/{name}", s.symbols().resolve(ns));
        match kind {
            Kind::Pod => {
                let gone: Vec<_> = s
                    .pods()
                    .filter(|(_, p)| !seen.contains(&*p.uid))
                    .map(|(id, p)| (id, p.uid.to_string()))
                    .collect();
                for (id, uid) in gone {
                    debug!(uid, "pod vanished during a relist");
                    self.scheduler.delete_pod(&mut self.snapshot, id, now);
                    self.fingerprints.remove(&uid);
                }
                for parked in self.parked.values_mut() {
                    parked.retain(|uid, _| seen.contains(uid));
                }
                self.parked.retain(|_, p| !p.is_empty());
            }
            Kind::Node => {
                let gone: Vec<String> = s
                    .nodes()
                    .iter()
                    .map(|n| n.node.name.to_string())
                    .filter(|n| !seen.contains(&format!("/{n}")))
                    .collect();
                for name in gone {
                    let _ = self.scheduler.remove_node(&mut self.snapshot, &name, now);
                }
            }
            Kind::Service | Kind::ReplicationController | Kind::ReplicaSet | Kind::StatefulSet => {
                let w = s.workloads();
                let (wk, names): (WorkloadKind, Vec<_>) = match kind {
                    Kind::Service => (
                        WorkloadKind::Service,
                        w.services
                            .iter()
                            .map(|(ns, n, _)| (*ns, n.clone()))
                            .collect(),
                    ),
                    Kind::ReplicationController => (
                        WorkloadKind::ReplicationController,
                        w.replication_controllers
                            .iter()
                            .map(|(ns, n, _)| (*ns, n.clone()))
                            .collect(),
                    ),
                    Kind::ReplicaSet => (
                        WorkloadKind::ReplicaSet,
                        w.replica_sets
                            .iter()
                            .map(|(ns, n, _)| (*ns, n.clone()))
                            .collect(),
                    ),
                    _ => (
                        WorkloadKind::StatefulSet,
                        w.stateful_sets
                            .iter()
                            .map(|(ns, n, _)| (*ns, n.clone()))
                            .collect(),
                    ),
                };
                for (ns, name) in names {
                    if !seen.contains(&ns_key(s, ns, &name)) {
                        let _ = s.remove_workload(wk, ns, &name);
                    }
                }
            }
            Kind::PodDisruptionBudget => {
                let gone: Vec<_> = s
                    .workloads()
                    .disruption_budgets
                    .iter()
                    .filter(|b| !seen.contains(&ns_key(s, b.namespace, &b.name)))
                    .map(|b| (b.namespace, b.name.clone()))
                    .collect();
                for (ns, name) in gone {
                    s.workloads_mut().disruption_budgets.remove(ns, &name);
                }
            }
            Kind::PriorityClass => {
                let gone: Vec<_> = s
                    .workloads()
                    .priority_classes
                    .iter()
                    .filter(|c| !seen.contains(&format!("/{}", c.name)))
                    .map(|c| c.name.clone())
                    .collect();
                for name in gone {
                    s.workloads_mut().priority_classes.remove(&name);
                }
            }
            Kind::PersistentVolumeClaim
            | Kind::PersistentVolume
            | Kind::StorageClass
            | Kind::CsiNode => {
                let gone: Vec<String> = self
                    .storage
                    .get(&kind)
                    .into_iter()
                    .flatten()
                    .filter(|k| !seen.contains(*k))
                    .cloned()
                    .collect();
                for k in gone {
                    self.delete_storage(kind, &k, now);
                }
            }
            Kind::Namespace => {
                let gone: Vec<_> = s
                    .namespaces()
                    .map(|(ns, _)| ns)
                    .filter(|ns| !seen.contains(&format!("/{}", s.symbols().resolve(*ns))))
                    .collect();
                for ns in gone {
                    self.forget_namespace(ns);
                }
            }
        }
    }
}
