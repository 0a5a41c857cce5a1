//! The objects other than pods in the live cache: nodes (with the pods parked for them),
//! workloads, budgets, priority classes, namespaces and the storage objects.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, ReplicationController, Service,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use topospread::api::{DisruptionBudget, Labels};
use topospread::convert::{self, DEFAULT_NAMESPACE};
use topospread::framework::{ActionType, ClusterEvent};
use topospread::snapshot::WorkloadKind;
use tracing::warn;

use super::LiveCache;
use super::kinds::{Kind, key};

impl LiveCache {
    pub(super) fn apply_node(&mut self, n: &Node, now: Duration) {
        let node = match convert::node(n, self.snapshot.symbols_mut()) {
            Ok(node) => node,
            Err(e) => {
                warn!(node = n.metadata.name.as_deref().unwrap_or(""), error = %e, "skipping a node that does not convert");
                return;
            }
        };
        let name = node.name.to_string();
        let result = if self.snapshot.node_id(&name).is_some() {
            self.scheduler
                .update_node(&mut self.snapshot, node, now)
                .map(|_| ())
                .map_err(|e| e.to_string())
        } else {
            self.scheduler
                .add_node(&mut self.snapshot, node, now)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        if let Err(e) = result {
            warn!(node = name, error = %e, "node event not applied");
            return;
        }
        if let Some(pods) = self.parked.remove(&name) {
            for p in pods.values() {
                self.apply_pod(p, now);
            }
        }
    }

    pub(super) fn delete_node(&mut self, n: &Node, now: Duration) {
        if let Some(name) = n.metadata.name.as_deref()
            && self.snapshot.node_id(name).is_some()
        {
            let _ = self.scheduler.remove_node(&mut self.snapshot, name, now);
        }
    }

    pub(super) fn namespace(
        &mut self,
        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    ) -> topospread::api::Sym {
        self.snapshot
            .symbols_mut()
            .intern(meta.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE))
    }

    pub(super) fn apply_service(&mut self, o: &Service, _: Duration) {
        let ns = self.namespace(&o.metadata);
        let sel = convert::service_selector(o, self.snapshot.symbols_mut());
        let name = o.metadata.name.as_deref().unwrap_or("");
        self.snapshot.set_service(ns, name, sel);
    }

    pub(super) fn apply_rc(&mut self, o: &ReplicationController, _: Duration) {
        let ns = self.namespace(&o.metadata);
        let sel = convert::replication_controller_selector(o, self.snapshot.symbols_mut());
        let name = o.metadata.name.as_deref().unwrap_or("");
        self.snapshot.set_replication_controller(ns, name, sel);
    }

    pub(super) fn apply_rs(&mut self, o: &ReplicaSet, _: Duration) {
        let ns = self.namespace(&o.metadata);
        let sel = convert::replica_set_selector(o, self.snapshot.symbols_mut());
        let name = o.metadata.name.as_deref().unwrap_or("");
        self.snapshot.set_replica_set(ns, name, sel);
    }

    pub(super) fn apply_sts(&mut self, o: &StatefulSet, _: Duration) {
        let ns = self.namespace(&o.metadata);
        let sel = convert::stateful_set_selector(o, self.snapshot.symbols_mut());
        let name = o.metadata.name.as_deref().unwrap_or("");
        self.snapshot.set_stateful_set(ns, name, sel);
    }

    pub(super) fn delete_workload(
        &mut self,
        kind: WorkloadKind,
        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    ) {
        let ns = self.namespace(meta);
        let _ = self
            .snapshot
            .remove_workload(kind, ns, meta.name.as_deref().unwrap_or(""));
    }

    pub(super) fn apply_pdb(&mut self, o: &PodDisruptionBudget, _: Duration) {
        let ns = self.namespace(&o.metadata);
        let budget = DisruptionBudget::from_k8s(o, ns, self.snapshot.symbols_mut());
        self.snapshot.workloads_mut().disruption_budgets.add(budget);
    }

    pub(super) fn delete_pdb(&mut self, o: &PodDisruptionBudget, _: Duration) {
        let ns = self.namespace(&o.metadata);
        self.snapshot
            .workloads_mut()
            .disruption_budgets
            .remove(ns, o.metadata.name.as_deref().unwrap_or(""));
    }

    pub(super) fn apply_priority_class(&mut self, o: &PriorityClass, _: Duration) {
        self.snapshot
            .workloads_mut()
            .priority_classes
            .add(topospread::api::PriorityClass::from_k8s(o));
    }

    /// A namespace was added or its labels changed: pod affinity's `namespaceSelector`
    /// reads them.
    pub(super) fn apply_namespace(&mut self, o: &Namespace, _: Duration) {
        let Some(name) = o.metadata.name.as_deref().filter(|n| !n.is_empty()) else {
            warn!("skipping a namespace without metadata.name");
            return;
        };
        let ns = self.snapshot.symbols_mut().intern(name);
        let labels = Labels::from_map(o.metadata.labels.as_ref(), self.snapshot.symbols_mut());
        self.snapshot.set_namespace(ns, &labels);
    }

    pub(super) fn delete_namespace(&mut self, o: &Namespace, _: Duration) {
        if let Some(name) = o.metadata.name.as_deref() {
            let ns = self.snapshot.symbols_mut().intern(name);
            self.forget_namespace(ns);
        }
    }

    /// Drops a namespace's labels. One that still holds cached pods keeps only its
    /// `kubernetes.io/metadata.name` label (the API server deletes a namespace's pods
    /// before the namespace itself).
    pub(super) fn forget_namespace(&mut self, ns: topospread::api::Sym) {
        let _ = self.snapshot.remove_namespace(ns);
        if self.snapshot.pods().any(|(_, p)| p.namespace == ns) {
            self.snapshot.set_namespace(ns, &Labels::default());
        }
    }
    /// A claim was added or changed (the API server already gave it its default class).
    pub(super) fn apply_claim(&mut self, o: &PersistentVolumeClaim, now: Duration) {
        match convert::persistent_volume_claim(o, self.snapshot.symbols_mut()) {
            Ok(c) => {
                self.snapshot.set_persistent_volume_claim(c);
                self.stored(Kind::PersistentVolumeClaim, key(&o.metadata), now);
            }
            Err(e) => {
                warn!(claim = key(&o.metadata), error = %e, "skipping a claim that does not convert")
            }
        }
    }

    /// A PersistentVolume was added or changed.
    pub(super) fn apply_volume(&mut self, o: &PersistentVolume, now: Duration) {
        match convert::persistent_volume(o, self.snapshot.symbols_mut()) {
            Ok(v) => {
                self.snapshot.set_persistent_volume(v);
                self.stored(Kind::PersistentVolume, key(&o.metadata), now);
            }
            Err(e) => {
                warn!(volume = key(&o.metadata), error = %e, "skipping a volume that does not convert")
            }
        }
    }

    /// A StorageClass was added or changed.
    pub(super) fn apply_storage_class(&mut self, o: &StorageClass, now: Duration) {
        match convert::storage_class(o, self.snapshot.symbols_mut()) {
            Ok(c) => {
                self.snapshot.set_storage_class(c);
                self.stored(Kind::StorageClass, key(&o.metadata), now);
            }
            Err(e) => {
                warn!(class = key(&o.metadata), error = %e, "skipping a StorageClass that does not convert")
            }
        }
    }

    /// A CSINode was added or changed.
    pub(super) fn apply_csi_node(&mut self, o: &CSINode, now: Duration) {
        match convert::csi_node(o, self.snapshot.symbols_mut()) {
            Ok(n) => {
                self.snapshot.set_csi_node(n);
                self.stored(Kind::CsiNode, key(&o.metadata), now);
            }
            Err(e) => {
                warn!(csinode = key(&o.metadata), error = %e, "skipping a CSINode that does not convert")
            }
        }
    }

    /// Records a storage object as cached and tells the queue, so pods that waited for
    /// a claim, a volume or a class are retried (upstream's VolumeBinding hints).
    pub(super) fn stored(&mut self, kind: Kind, k: String, now: Duration) {
        let added = self.storage.entry(kind).or_default().insert(k);
        let action = if added {
            ActionType::ADD
        } else {
            ActionType::UPDATE
        };
        self.storage_event(kind, action, now);
    }

    /// Removes the storage object `namespace/name` of `kind` from the cache.
    pub(super) fn delete_storage(&mut self, kind: Kind, k: &str, now: Duration) {
        if let Some(keys) = self.storage.get_mut(&kind) {
            keys.remove(k);
        }
        let (namespace, name) = k.split_once('/').unwrap_or(("", k));
        match kind {
            Kind::PersistentVolumeClaim => {
                let ns = self.snapshot.symbols_mut().intern(namespace);
                self.snapshot.remove_persistent_volume_claim(ns, name);
            }
            Kind::PersistentVolume => {
                self.snapshot.remove_persistent_volume(name);
            }
            Kind::StorageClass => {
                self.snapshot.remove_storage_class(name);
            }
            Kind::CsiNode => {
                self.snapshot.remove_csi_node(name);
            }
            _ => return,
        }
        self.storage_event(kind, ActionType::DELETE, now);
    }

    pub(super) fn storage_event(&mut self, kind: Kind, action: ActionType, now: Duration) {
        if let Some(resource) = kind.event_resource() {
            self.scheduler
                .on_event(&ClusterEvent::new(resource, action), now);
        }
    }
}
