//! The storage objects the volume plugins read (the informer caches of
//! PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes), added,
//! replaced and removed by name. Every change starts a new generation, as a scheduling
//! cycle reads them.

use super::Snapshot;
use crate::api::{CsiNode, PersistentVolume, PersistentVolumeClaim, StorageClass, Sym};
use std::collections::{BTreeMap, HashMap};

/// The storage objects of a snapshot.
#[derive(Clone, Debug, Default)]
pub(super) struct VolumeObjects {
    /// Claims by namespace and name.
    claims: HashMap<(Sym, Box<str>), PersistentVolumeClaim>,
    /// Volumes by name, in name order (so matching walks them deterministically).
    volumes: BTreeMap<Box<str>, PersistentVolume>,
    /// Classes by name.
    classes: BTreeMap<Box<str>, StorageClass>,
    /// CSINodes by node name.
    csi_nodes: HashMap<Box<str>, CsiNode>,
    /// Whether the storage objects are tracked at all (see
    /// [`Snapshot::set_volumes_tracked`]).
    tracked: bool,
    /// Whether a provisioner provisions Immediate claims (see
    /// [`Snapshot::set_provisioning`]).
    provisioner_runs: bool,
    /// The zone Immediate claims' volumes are provisioned in, when chosen.
    provision_zone: Option<Box<str>>,
    /// The volumes provisioned for Immediate claims so far, in order.
    provisions: Vec<crate::plugins::volumebinding::ImmediateProvision>,
}

impl Snapshot {
    /// Declares whether this snapshot holds the cluster's storage objects. A snapshot
    /// built from manifests does (even when there are none: then every claim is
    /// missing, as in such a cluster), and so does the live scheduler's cache, which
    /// watches them; a snapshot built without them does not, and the volume plugins
    /// then pass every pod rather than find every claim missing. Off by default.
    pub fn set_volumes_tracked(&mut self, on: bool) {
        self.touch();
        self.volume_objects.tracked = on;
    }

    /// Whether the storage objects are tracked (see [`Self::set_volumes_tracked`]).
    pub(crate) fn volumes_tracked(&self) -> bool {
        self.volume_objects.tracked
    }

    /// Declares that the cluster's provisioners provision Immediate claims as they are
    /// created, in `zone` when one is chosen (`--provision-zone`), else where the
    /// provisioner would. Off by default: a scheduler test's claims stay as given, as
    /// with a controller-manager and no external provisioner.
    pub fn set_provisioning(&mut self, zone: Option<&str>) {
        self.volume_objects.provisioner_runs = true;
        self.volume_objects.provision_zone = zone.map(Into::into);
    }

    /// Whether Immediate claims are provisioned ([`Self::set_provisioning`]).
    pub fn provisioner_runs(&self) -> bool {
        self.volume_objects.provisioner_runs
    }

    /// The zone chosen for Immediate claims' volumes ([`Self::set_provisioning`]).
    pub fn provision_zone(&self) -> Option<&str> {
        self.volume_objects.provision_zone.as_deref()
    }

    /// Records a volume provisioned for an Immediate claim.
    pub(crate) fn record_immediate_provision(
        &mut self,
        p: crate::plugins::volumebinding::ImmediateProvision,
    ) {
        self.volume_objects.provisions.push(p);
    }

    /// The volumes provisioned for Immediate claims, in the order they were.
    pub fn immediate_provisions(&self) -> &[crate::plugins::volumebinding::ImmediateProvision] {
        &self.volume_objects.provisions
    }

    /// Adds or replaces a PersistentVolumeClaim.
    pub fn set_persistent_volume_claim(&mut self, claim: PersistentVolumeClaim) {
        self.touch();
        let key = (claim.namespace, claim.name.clone());
        self.volume_objects.claims.insert(key, claim);
    }

    /// Removes the PersistentVolumeClaim `namespace/name`, returning it.
    pub fn remove_persistent_volume_claim(
        &mut self,
        namespace: Sym,
        name: &str,
    ) -> Option<PersistentVolumeClaim> {
        self.touch();
        self.volume_objects
            .claims
            .remove(&(namespace, Box::from(name)))
    }

    /// The PersistentVolumeClaim `namespace/name`.
    pub fn persistent_volume_claim(
        &self,
        namespace: Sym,
        name: &str,
    ) -> Option<&PersistentVolumeClaim> {
        self.volume_objects
            .claims
            .get(&(namespace, Box::from(name)))
    }

    /// Every PersistentVolumeClaim, in no particular order.
    pub fn persistent_volume_claims(&self) -> impl Iterator<Item = &PersistentVolumeClaim> {
        self.volume_objects.claims.values()
    }

    /// Adds or replaces a PersistentVolume.
    pub fn set_persistent_volume(&mut self, volume: PersistentVolume) {
        self.touch();
        self.volume_objects
            .volumes
            .insert(volume.name.clone(), volume);
    }

    /// Removes the PersistentVolume `name`, returning it.
    pub fn remove_persistent_volume(&mut self, name: &str) -> Option<PersistentVolume> {
        self.touch();
        self.volume_objects.volumes.remove(name)
    }

    /// The PersistentVolume `name`.
    pub fn persistent_volume(&self, name: &str) -> Option<&PersistentVolume> {
        self.volume_objects.volumes.get(name)
    }

    /// Every PersistentVolume, in name order.
    pub fn persistent_volumes(&self) -> impl Iterator<Item = &PersistentVolume> {
        self.volume_objects.volumes.values()
    }

    /// Adds or replaces a StorageClass.
    pub fn set_storage_class(&mut self, class: StorageClass) {
        self.touch();
        self.volume_objects
            .classes
            .insert(class.name.clone(), class);
    }

    /// Removes the StorageClass `name`, returning it.
    pub fn remove_storage_class(&mut self, name: &str) -> Option<StorageClass> {
        self.touch();
        self.volume_objects.classes.remove(name)
    }

    /// The StorageClass `name`.
    pub fn storage_class(&self, name: &str) -> Option<&StorageClass> {
        self.volume_objects.classes.get(name)
    }

    /// The default StorageClass the DefaultStorageClass admission plugin gives a claim
    /// without one (`GetDefaultClass`: the newest of the classes marked default, ties
    /// broken by name).
    pub fn default_storage_class(&self) -> Option<&StorageClass> {
        self.volume_objects
            .classes
            .values()
            .filter(|c| c.is_default)
            .min_by(|a, b| b.created.cmp(&a.created).then_with(|| a.name.cmp(&b.name)))
    }

    /// Adds or replaces a CSINode.
    pub fn set_csi_node(&mut self, node: CsiNode) {
        self.touch();
        self.volume_objects
            .csi_nodes
            .insert(node.name.clone(), node);
    }

    /// Removes the CSINode of node `name`, returning it.
    pub fn remove_csi_node(&mut self, name: &str) -> Option<CsiNode> {
        self.touch();
        self.volume_objects.csi_nodes.remove(name)
    }

    /// The CSINode of node `name`.
    pub fn csi_node(&self, name: &str) -> Option<&CsiNode> {
        self.volume_objects.csi_nodes.get(name)
    }

    /// Whether a pod on some node mounts the claim `namespace/name`
    /// (`StorageInfos().IsPVCUsedByPods`: assigned and assumed pods count).
    pub(crate) fn is_claim_used_by_pods(&self, namespace: Sym, name: &str) -> bool {
        self.nodes
            .iter()
            .flat_map(|n| n.pods())
            .filter_map(|p| self.pod(*p))
            .any(|p| {
                p.namespace == namespace
                    && p.volumes.iter().any(
                        |v| matches!(v, crate::api::PodVolume::Claim { claim } if **claim == *name),
                    )
            })
    }
}
