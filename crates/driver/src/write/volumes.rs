//! Claims and volumes as the run leaves them: bound as the PV controller binds them
//! (`spec.volumeName`, the bind-completed annotation, phase `Bound`), and the volumes
//! provisioned during the run written as the provisioner creates them, so that reading
//! the output back keeps every stateful pod next to its volume.

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::{BTreeMap, HashSet};
use topospread::api::{NodeSelectorTermMatcher, Op, PersistentVolume, VolumeMode};
use topospread::snapshot::Snapshot;
use topospread_k8s::load::{Loaded, Object};

/// The annotation the PV controller sets on a claim once bound.
const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
/// The annotation the PV controller sets on what it bound itself.
const BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
/// The annotation a provisioner sets on the volumes it creates.
const PROVISIONED_BY: &str = "pv.kubernetes.io/provisioned-by";

/// `claim` with the binding the snapshot gives it, if any.
pub(super) fn bound_claim(
    claim: &core::PersistentVolumeClaim,
    snapshot: &Snapshot,
) -> core::PersistentVolumeClaim {
    let mut claim = claim.clone();
    let ns = claim.metadata.namespace.as_deref().unwrap_or("default");
    let name = claim.metadata.name.as_deref().unwrap_or_default();
    let Some(bound) = snapshot
        .symbols()
        .get(ns)
        .and_then(|ns| snapshot.persistent_volume_claim(ns, name))
    else {
        return claim;
    };
    let Some(volume) = bound.volume_name.as_deref() else {
        return claim;
    };
    let was_unbound = claim
        .spec
        .as_ref()
        .is_none_or(|s| s.volume_name.as_deref().is_none_or(str::is_empty));
    claim.spec.get_or_insert_with(Default::default).volume_name = Some(volume.to_string());
    if bound.bind_completed {
        let annotations = claim.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(BIND_COMPLETED.into(), "yes".into());
        if was_unbound {
            annotations.insert(BOUND_BY_CONTROLLER.into(), "yes".into());
        }
        let capacity = snapshot
            .persistent_volume(volume)
            .map(|v| BTreeMap::from([("storage".to_string(), storage(v.capacity))]));
        let status = claim.status.get_or_insert_with(Default::default);
        status.phase = Some("Bound".into());
        status.capacity = capacity;
    }
    claim
}

/// A volume of the input with the claim the run bound it to, if any.
pub(super) fn bound_volume(
    volume: &core::PersistentVolume,
    snapshot: &Snapshot,
) -> core::PersistentVolume {
    let mut volume = volume.clone();
    let name = volume.metadata.name.as_deref().unwrap_or_default();
    let Some(claim_ref) = snapshot
        .persistent_volume(name)
        .and_then(|v| v.claim_ref.as_ref())
    else {
        return volume;
    };
    let spec = volume.spec.get_or_insert_with(Default::default);
    if spec.claim_ref.is_none() {
        spec.claim_ref = Some(object_reference(claim_ref));
        volume
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(BOUND_BY_CONTROLLER.into(), "yes".into());
    }
    volume.status.get_or_insert_with(Default::default).phase = Some("Bound".into());
    volume
}

/// The volumes the run provisioned (those the snapshot has and the input does not), as
/// the provisioner creates them.
pub(super) fn provisioned(objects: &[Loaded], snapshot: &Snapshot) -> Vec<core::PersistentVolume> {
    let given: HashSet<&str> = objects
        .iter()
        .filter_map(|l| match &l.object {
            Object::PersistentVolume(v) => v.metadata.name.as_deref(),
            _ => None,
        })
        .collect();
    snapshot
        .persistent_volumes()
        .filter(|v| !given.contains(&*v.name))
        .map(|v| volume_object(v, snapshot))
        .collect()
}

/// A size as people write it: the largest binary suffix that divides it exactly
/// (`1Gi`, not `1073741824`).
fn storage(q: topospread::api::quantity::Quantity) -> Quantity {
    let text = q.to_string();
    let Ok(bytes) = text.parse::<i64>() else {
        return Quantity(text);
    };
    let suffix = ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"]
        .iter()
        .zip((1..=6).rev())
        .find(|(_, power)| bytes != 0 && bytes % (1_i64 << (10 * power)) == 0);
    Quantity(match suffix {
        Some((s, power)) => format!("{}{s}", bytes >> (10 * power)),
        None => text,
    })
}

/// A claim reference as a volume's `spec.claimRef` (the uid only when the claim had one:
/// a manifest's claim is known by namespace and name).
fn object_reference(r: &topospread::api::ClaimRef) -> core::ObjectReference {
    core::ObjectReference {
        kind: Some("PersistentVolumeClaim".into()),
        api_version: Some("v1".into()),
        namespace: Some(r.namespace.to_string()),
        name: Some(r.name.to_string()),
        uid: r
            .uid
            .as_deref()
            .filter(|u| !u.contains('/'))
            .map(str::to_string),
        ..Default::default()
    }
}

/// A provisioned volume as its provisioner writes it.
fn volume_object(v: &PersistentVolume, snapshot: &Snapshot) -> core::PersistentVolume {
    let provisioner = snapshot
        .storage_class(&v.storage_class)
        .map(|c| c.provisioner.to_string())
        .unwrap_or_default();
    let driver = v
        .csi
        .as_ref()
        .map_or(provisioner.clone(), |(d, _)| d.to_string());
    let annotations = (!provisioner.is_empty())
        .then(|| BTreeMap::from([(PROVISIONED_BY.to_string(), provisioner.clone())]));
    core::PersistentVolume {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some(v.name.to_string()),
            annotations,
            ..Default::default()
        },
        spec: Some(core::PersistentVolumeSpec {
            capacity: Some(BTreeMap::from([(
                "storage".to_string(),
                storage(v.capacity),
            )])),
            access_modes: Some(v.access_modes.names().into_iter().map(Into::into).collect()),
            volume_mode: Some(
                match v.volume_mode {
                    VolumeMode::Block => "Block",
                    VolumeMode::Filesystem => "Filesystem",
                }
                .into(),
            ),
            storage_class_name: (!v.storage_class.is_empty()).then(|| v.storage_class.to_string()),
            persistent_volume_reclaim_policy: Some("Delete".into()),
            claim_ref: v.claim_ref.as_ref().map(object_reference),
            csi: Some(core::CSIPersistentVolumeSource {
                driver: if driver.is_empty() {
                    "provisioner.invalid".into()
                } else {
                    driver
                },
                volume_handle: v.name.to_string(),
                ..Default::default()
            }),
            node_affinity: node_affinity(v, snapshot),
            ..Default::default()
        }),
        status: Some(core::PersistentVolumeStatus {
            phase: Some(
                if v.claim_ref.is_some() {
                    "Bound"
                } else {
                    "Available"
                }
                .into(),
            ),
            ..Default::default()
        }),
    }
}

/// A provisioned volume's node affinity: its requirements, each `key In [values]` (the
/// only form a provisioner writes).
fn node_affinity(v: &PersistentVolume, snapshot: &Snapshot) -> Option<core::VolumeNodeAffinity> {
    let symbols = snapshot.symbols();
    let terms: Vec<core::NodeSelectorTerm> = v
        .node_affinity
        .as_ref()?
        .terms
        .iter()
        .filter_map(|t| match t {
            NodeSelectorTermMatcher::Valid { labels, .. } => labels.requirements(),
            NodeSelectorTermMatcher::Invalid(_) => None,
        })
        .map(|requirements| core::NodeSelectorTerm {
            match_expressions: Some(
                requirements
                    .iter()
                    .filter_map(|r| match &r.op {
                        Op::In(values) => Some(core::NodeSelectorRequirement {
                            key: symbols.resolve(r.key).to_string(),
                            operator: "In".into(),
                            values: Some(
                                values
                                    .iter()
                                    .map(|v| symbols.resolve(*v).to_string())
                                    .collect(),
                            ),
                        }),
                        _ => None,
                    })
                    .collect(),
            ),
            match_fields: None,
        })
        .collect();
    (!terms.is_empty()).then_some(core::VolumeNodeAffinity {
        required: Some(core::NodeSelector {
            node_selector_terms: terms,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::storage;

    #[test]
    fn sizes_keep_their_binary_suffix() {
        let q = |s: &str| storage(s.parse().expect("quantity")).0;
        assert_eq!(q("1Gi"), "1Gi");
        assert_eq!(q("1536Mi"), "1536Mi");
        assert_eq!(q("1000"), "1000");
        assert_eq!(q("0"), "0");
    }
}
