//! Storage objects in the engine's form: PersistentVolumeClaims, PersistentVolumes,
//! StorageClasses and CSINodes, and the volumes a pod mounts, holding what the volume
//! plugins (VolumeRestrictions, VolumeBinding, VolumeZone, NodeVolumeLimits) read.

use super::quantity::Quantity;
use super::{Labels, NodeSelectorMatcher, Selector, Sym, Symbols};

/// A set of `accessModes` (`ReadWriteOnce`, `ReadOnlyMany`, `ReadWriteMany`,
/// `ReadWriteOncePod`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AccessModes(u8);

impl AccessModes {
    /// `ReadWriteOnce`.
    pub(crate) const READ_WRITE_ONCE: Self = Self(1);
    /// `ReadOnlyMany`.
    pub(crate) const READ_ONLY_MANY: Self = Self(1 << 1);
    /// `ReadWriteMany`.
    pub(crate) const READ_WRITE_MANY: Self = Self(1 << 2);
    /// `ReadWriteOncePod`.
    pub(crate) const READ_WRITE_ONCE_POD: Self = Self(1 << 3);

    /// The mode named `name`, if it is one of the four the API accepts.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "ReadWriteOnce" => Self::READ_WRITE_ONCE,
            "ReadOnlyMany" => Self::READ_ONLY_MANY,
            "ReadWriteMany" => Self::READ_WRITE_MANY,
            "ReadWriteOncePod" => Self::READ_WRITE_ONCE_POD,
            _ => return None,
        })
    }

    /// The modes' API names, in the API's order.
    pub fn names(self) -> Vec<&'static str> {
        [
            (Self::READ_WRITE_ONCE, "ReadWriteOnce"),
            (Self::READ_ONLY_MANY, "ReadOnlyMany"),
            (Self::READ_WRITE_MANY, "ReadWriteMany"),
            (Self::READ_WRITE_ONCE_POD, "ReadWriteOncePod"),
        ]
        .into_iter()
        .filter(|(m, _)| self.contains(*m))
        .map(|(_, n)| n)
        .collect()
    }

    /// Adds the modes of `other`.
    pub fn insert(&mut self, other: Self) {
        self.0 |= other.0;
    }

    /// Whether every mode of `other` is in this set (`CheckAccessModes`).
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// `volumeMode`: `Filesystem` (the default) or `Block`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum VolumeMode {
    /// `Filesystem`.
    #[default]
    Filesystem,
    /// `Block`.
    Block,
}

/// A PersistentVolumeClaim.
#[derive(Clone, Debug, PartialEq)]
pub struct PersistentVolumeClaim {
    /// `metadata.namespace`.
    pub namespace: Sym,
    /// `metadata.name`.
    pub name: Box<str>,
    /// `metadata.uid` (`namespace/name` when the manifest leaves it out).
    pub uid: Box<str>,
    /// The class (`GetPersistentVolumeClaimClass`: the beta annotation, else
    /// `spec.storageClassName`); empty for none.
    pub storage_class: Box<str>,
    /// `spec.volumeName`.
    pub volume_name: Option<Box<str>>,
    /// The `pv.kubernetes.io/bind-completed` annotation is set.
    pub bind_completed: bool,
    /// The `volume.kubernetes.io/selected-node` annotation.
    pub selected_node: Option<Box<str>>,
    /// `status.phase` is `Lost`.
    pub lost: bool,
    /// `metadata.deletionTimestamp` is set.
    pub terminating: bool,
    /// `spec.accessModes`.
    pub access_modes: AccessModes,
    /// `spec.volumeMode`.
    pub volume_mode: VolumeMode,
    /// `spec.resources.requests.storage` (zero when left out).
    pub request: Quantity,
    /// `spec.selector`, compiled.
    pub selector: Option<Selector>,
    /// The UID of the pod that controls the claim (an ephemeral volume's claim).
    pub owner_pod_uid: Option<Box<str>>,
}

/// The claim a PersistentVolume is reserved for (`spec.claimRef`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimRef {
    /// `namespace`.
    pub namespace: Box<str>,
    /// `name`.
    pub name: Box<str>,
    /// `uid`, when set.
    pub uid: Option<Box<str>>,
}

/// A PersistentVolume.
#[derive(Clone, Debug, PartialEq)]
pub struct PersistentVolume {
    /// `metadata.name`.
    pub name: Box<str>,
    /// `metadata.labels` (VolumeZone reads the zone and region labels).
    pub labels: Labels,
    /// `spec.capacity.storage`.
    pub capacity: Quantity,
    /// `spec.accessModes`.
    pub access_modes: AccessModes,
    /// `spec.volumeMode`.
    pub volume_mode: VolumeMode,
    /// The class (`GetPersistentVolumeClass`); empty for none.
    pub storage_class: Box<str>,
    /// `spec.nodeAffinity.required`, compiled.
    pub node_affinity: Option<NodeSelectorMatcher>,
    /// `spec.claimRef`.
    pub claim_ref: Option<ClaimRef>,
    /// `status.phase` is `Available` (a PV without a status counts as available once
    /// the PV controller has seen it, which is what a manifest meant for creation gets).
    pub available: bool,
    /// `metadata.deletionTimestamp` is set.
    pub terminating: bool,
    /// `spec.csi`: the driver and volume handle.
    pub csi: Option<(Box<str>, Box<str>)>,
}

impl PersistentVolume {
    /// Whether the volume is reserved for `claim` (`IsVolumeBoundToClaim`).
    pub(crate) fn is_bound_to(&self, claim: &PersistentVolumeClaim, symbols: &Symbols) -> bool {
        self.claim_ref.as_ref().is_some_and(|r| {
            *r.name == *claim.name
                && *r.namespace == *symbols.resolve(claim.namespace)
                && r.uid.as_ref().is_none_or(|u| *u == claim.uid)
        })
    }

    /// Whether a node with these labels may reach the volume (`CheckNodeAffinity`:
    /// the node is matched on its labels alone).
    pub(crate) fn node_affinity_matches(&self, labels: &Labels, symbols: &Symbols) -> bool {
        self.node_affinity
            .as_ref()
            .is_none_or(|a| a.matches(labels, "", symbols))
    }
}

/// One `allowedTopologies` term: every `(key, values)` requirement must hold.
pub type TopologyTerm = Vec<(Sym, Vec<Sym>)>;

/// A StorageClass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageClass {
    /// `metadata.name`.
    pub name: Box<str>,
    /// `provisioner`.
    pub provisioner: Box<str>,
    /// `volumeBindingMode` is `WaitForFirstConsumer` (otherwise `Immediate`).
    pub wait_for_first_consumer: bool,
    /// `allowedTopologies`; empty allows every node.
    pub allowed_topologies: Vec<TopologyTerm>,
    /// The `storageclass.kubernetes.io/is-default-class` annotation is `"true"`.
    pub is_default: bool,
    /// `metadata.creationTimestamp` in seconds, for choosing among default classes.
    pub created: i64,
}

impl StorageClass {
    /// Whether a node with these labels satisfies `allowedTopologies`
    /// (`MatchTopologySelectorTerms`: no terms admit every node, terms are ORed).
    pub fn allows(&self, labels: &Labels) -> bool {
        self.allowed_topologies.is_empty()
            || self.allowed_topologies.iter().any(|term| {
                term.iter()
                    .all(|(key, values)| labels.get(*key).is_some_and(|v| values.contains(&v)))
            })
    }
}

/// One driver of a CSINode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsiNodeDriver {
    /// `name`.
    pub name: Box<str>,
    /// `topologyKeys`.
    pub topology_keys: Vec<Sym>,
    /// `allocatable.count`: how many of the driver's volumes the node can attach.
    pub allocatable: Option<i32>,
}

/// A CSINode: the CSI drivers a node runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsiNode {
    /// `metadata.name` (the node's name).
    pub name: Box<str>,
    /// `spec.drivers`.
    pub drivers: Vec<CsiNodeDriver>,
}

/// A volume of a pod that some volume plugin reads; other volume types are left out.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PodVolume {
    /// `persistentVolumeClaim`.
    Claim {
        /// `claimName`.
        claim: Box<str>,
    },
    /// `ephemeral`: a claim named `<pod>-<volume>` the pod owns.
    Ephemeral {
        /// The claim's name.
        claim: Box<str>,
    },
    /// `gcePersistentDisk`.
    GcePersistentDisk {
        /// `pdName`.
        pd_name: Box<str>,
        /// `readOnly`.
        read_only: bool,
    },
    /// `awsElasticBlockStore`.
    AwsElasticBlockStore {
        /// `volumeID`.
        volume_id: Box<str>,
    },
    /// `iscsi`.
    Iscsi {
        /// `iqn`.
        iqn: Box<str>,
        /// `readOnly`.
        read_only: bool,
    },
    /// `rbd`.
    Rbd {
        /// `monitors`.
        monitors: Vec<Box<str>>,
        /// `pool` (`rbd` when left out).
        pool: Box<str>,
        /// `image`.
        image: Box<str>,
        /// `readOnly`.
        read_only: bool,
    },
}

impl PodVolume {
    /// The claim a `persistentVolumeClaim` or `ephemeral` volume uses, and whether it is
    /// the ephemeral kind (its claim made by the ephemeral volume controller).
    pub fn claim(&self) -> Option<(&str, bool)> {
        match self {
            PodVolume::Claim { claim } => Some((claim, false)),
            PodVolume::Ephemeral { claim } => Some((claim, true)),
            _ => None,
        }
    }

    /// The claim this volume uses, for a claim or an ephemeral volume.
    pub fn claim_name(&self) -> Option<&str> {
        match self {
            Self::Claim { claim } | Self::Ephemeral { claim } => Some(claim),
            _ => None,
        }
    }

    /// Whether two pods mounting these volumes on one node conflict
    /// (`isVolumeConflict`): the same GCE PD, iSCSI IQN or RBD image unless both are
    /// read-only, or the same EBS volume.
    pub(crate) fn conflicts_with(&self, other: &PodVolume) -> bool {
        use PodVolume::*;
        match (self, other) {
            (
                GcePersistentDisk {
                    pd_name: a,
                    read_only: ra,
                },
                GcePersistentDisk {
                    pd_name: b,
                    read_only: rb,
                },
            ) => a == b && !(*ra && *rb),
            (AwsElasticBlockStore { volume_id: a }, AwsElasticBlockStore { volume_id: b }) => {
                a == b
            }
            (
                Iscsi {
                    iqn: a,
                    read_only: ra,
                },
                Iscsi {
                    iqn: b,
                    read_only: rb,
                },
            ) => a == b && !(*ra && *rb),
            (
                Rbd {
                    monitors: ma,
                    pool: pa,
                    image: ia,
                    read_only: ra,
                },
                Rbd {
                    monitors: mb,
                    pool: pb,
                    image: ib,
                    read_only: rb,
                },
            ) => ma.iter().any(|m| mb.contains(m)) && pa == pb && ia == ib && !(*ra && *rb),
            _ => false,
        }
    }

    /// Whether VolumeRestrictions checks this volume for disk conflicts
    /// (`needsRestrictionsCheck`).
    pub(crate) fn needs_restrictions_check(&self) -> bool {
        !matches!(self, Self::Claim { .. } | Self::Ephemeral { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Upstream's isVolumeConflict cases (volume_restrictions_test.go TestGCEDiskConflicts
    // and friends): same disk conflicts unless both read-only; EBS always.
    #[test]
    fn disk_conflicts() {
        let gce = |name: &str, ro| PodVolume::GcePersistentDisk {
            pd_name: name.into(),
            read_only: ro,
        };
        assert!(gce("foo", false).conflicts_with(&gce("foo", true)));
        assert!(!gce("foo", true).conflicts_with(&gce("foo", true)));
        assert!(!gce("foo", false).conflicts_with(&gce("bar", false)));
        let ebs = |id: &str| PodVolume::AwsElasticBlockStore {
            volume_id: id.into(),
        };
        assert!(ebs("a").conflicts_with(&ebs("a")));
        assert!(!ebs("a").conflicts_with(&ebs("b")));
        let rbd = |mons: &[&str], ro| PodVolume::Rbd {
            monitors: mons.iter().map(|m| (*m).into()).collect(),
            pool: "rbd".into(),
            image: "img".into(),
            read_only: ro,
        };
        assert!(rbd(&["a", "b"], false).conflicts_with(&rbd(&["b", "c"], false)));
        assert!(!rbd(&["a"], false).conflicts_with(&rbd(&["c"], false)));
        assert!(!rbd(&["a"], true).conflicts_with(&rbd(&["a"], true)));
        assert!(!gce("foo", false).conflicts_with(&ebs("foo")));
    }

    #[test]
    fn access_modes_contain() {
        let mut rwo_rwx = AccessModes::READ_WRITE_ONCE;
        rwo_rwx.insert(AccessModes::READ_WRITE_MANY);
        assert!(rwo_rwx.contains(AccessModes::READ_WRITE_ONCE));
        assert!(!rwo_rwx.contains(AccessModes::READ_WRITE_ONCE_POD));
        assert!(rwo_rwx.contains(AccessModes::default()));
    }
}
