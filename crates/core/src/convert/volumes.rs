//! Storage objects into the engine's form, with the API server's validation of the
//! fields the volume plugins read (`ValidatePersistentVolumeClaim`,
//! `ValidatePersistentVolume`, `ValidateStorageClass`, `ValidateCSINode`): an object it
//! would refuse is an error naming the object and the field, in the API server's words.

use super::{ConvertError, DEFAULT_NAMESPACE, err};
use crate::api::Labels;
use crate::api::quantity::Quantity;
use crate::api::{
    AccessModes, ClaimRef, CsiNode, CsiNodeDriver, NodeSelectorMatcher, PersistentVolume,
    PersistentVolumeClaim, PodVolume, Selector, StorageClass, Symbols, VolumeMode,
};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::storage::v1 as storage;
use std::collections::BTreeMap;

/// The beta annotation that names a claim's or volume's class ahead of the field.
pub const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";
/// Set by the PV controller once a claim is bound (`AnnBindCompleted`).
pub const BIND_COMPLETED_ANNOTATION: &str = "pv.kubernetes.io/bind-completed";
/// Set by the scheduler on a claim to provision for a node (`AnnSelectedNode`).
pub const SELECTED_NODE_ANNOTATION: &str = "volume.kubernetes.io/selected-node";
/// Marks the cluster's default StorageClass.
pub const DEFAULT_CLASS_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";

const ACCESS_MODES: &str =
    "\"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"";

/// `spec.accessModes` as `ValidatePersistentVolumeClaimSpec` and
/// `ValidatePersistentVolumeSpec` check them: at least one, each supported, and
/// `ReadWriteOncePod` alone.
fn access_modes(
    modes: Option<&Vec<String>>,
    object: &str,
    field: &str,
) -> Result<AccessModes, ConvertError> {
    let modes = modes.map(Vec::as_slice).unwrap_or_default();
    if modes.is_empty() {
        return Err(err(
            object,
            field,
            "Required value: at least 1 access mode is required",
        ));
    }
    let mut out = AccessModes::default();
    for m in modes {
        let mode = AccessModes::parse(m).ok_or_else(|| {
            err(
                object,
                field,
                format!("Unsupported value: {m:?}: supported values: {ACCESS_MODES}"),
            )
        })?;
        out.insert(mode);
    }
    if out.contains(AccessModes::READ_WRITE_ONCE_POD) && modes.len() > 1 {
        return Err(err(
            object,
            field,
            "Forbidden: may not use ReadWriteOncePod with other access modes",
        ));
    }
    Ok(out)
}

fn volume_mode(mode: Option<&str>, object: &str) -> Result<VolumeMode, ConvertError> {
    match mode {
        None | Some("Filesystem") => Ok(VolumeMode::Filesystem),
        Some("Block") => Ok(VolumeMode::Block),
        Some(m) => Err(err(
            object,
            "spec.volumeMode",
            format!("Unsupported value: {m:?}: supported values: \"Block\", \"Filesystem\""),
        )),
    }
}

/// A storage quantity that must be present and positive (`spec.resources[storage]`,
/// `spec.capacity`).
fn storage_quantity(
    map: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
    object: &str,
    field: &str,
) -> Result<Quantity, ConvertError> {
    let Some(q) = map.and_then(|m| m.get("storage")) else {
        return Err(err(object, field, "Required value"));
    };
    let parsed = Quantity::from_api(q)
        .map_err(|e| err(object, field, format!("Invalid value: {:?}: {e}", q.0)))?;
    if parsed.signum() <= 0 {
        return Err(err(
            object,
            field,
            format!("Invalid value: {:?}: must be greater than zero", q.0),
        ));
    }
    Ok(parsed)
}

fn annotation<'a>(
    meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    key: &str,
) -> Option<&'a str> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

/// Converts a v1 PersistentVolumeClaim.
pub fn persistent_volume_claim(
    c: &core::PersistentVolumeClaim,
    symbols: &mut Symbols,
) -> Result<PersistentVolumeClaim, ConvertError> {
    let meta = &c.metadata;
    let name = meta.name.clone().unwrap_or_default();
    let object = format!("persistentvolumeclaim/{name}");
    if name.is_empty() {
        return Err(err(
            &object,
            "metadata.name",
            "Required value: name or generateName is required",
        ));
    }
    let default_spec = core::PersistentVolumeClaimSpec::default();
    let spec = c.spec.as_ref().unwrap_or(&default_spec);
    let access_modes = access_modes(spec.access_modes.as_ref(), &object, "spec.accessModes")?;
    let request = storage_quantity(
        spec.resources.as_ref().and_then(|r| r.requests.as_ref()),
        &object,
        "spec.resources[storage]",
    )?;
    let volume_mode = volume_mode(spec.volume_mode.as_deref(), &object)?;
    let selector = match &spec.selector {
        None => None,
        Some(s) => Some(
            Selector::from_label_selector(Some(s), symbols)
                .map_err(|e| err(&object, "spec.selector", format!("Invalid value: {}", e.0)))?,
        ),
    };
    let namespace = meta.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
    let namespace = symbols.intern(namespace);
    let storage_class = annotation(meta, BETA_STORAGE_CLASS_ANNOTATION)
        .or(spec.storage_class_name.as_deref())
        .unwrap_or("");
    Ok(PersistentVolumeClaim {
        uid: match meta.uid.as_deref() {
            Some(u) if !u.is_empty() => u.into(),
            _ => format!("{}/{name}", symbols.resolve(namespace)).into(),
        },
        namespace,
        name: name.as_str().into(),
        storage_class: storage_class.into(),
        volume_name: spec
            .volume_name
            .as_deref()
            .filter(|v| !v.is_empty())
            .map(Into::into),
        bind_completed: annotation(meta, BIND_COMPLETED_ANNOTATION).is_some(),
        selected_node: annotation(meta, SELECTED_NODE_ANNOTATION).map(Into::into),
        lost: c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Lost"),
        terminating: meta.deletion_timestamp.is_some(),
        access_modes,
        volume_mode,
        request,
        selector,
        owner_pod_uid: meta
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true) && o.kind == "Pod" && o.api_version == "v1")
            .map(|o| o.uid.as_str().into()),
    })
}

/// The CSI driver and handle of a volume source, for NodeVolumeLimits.
fn csi_source(spec: &core::PersistentVolumeSpec) -> Option<(Box<str>, Box<str>)> {
    spec.csi
        .as_ref()
        .map(|c| (c.driver.as_str().into(), c.volume_handle.as_str().into()))
}

/// Whether a PV spec names a volume source (`ValidatePersistentVolumeSpec` requires
/// exactly one).
fn has_volume_source(s: &core::PersistentVolumeSpec) -> bool {
    s.aws_elastic_block_store.is_some()
        || s.azure_disk.is_some()
        || s.azure_file.is_some()
        || s.cephfs.is_some()
        || s.cinder.is_some()
        || s.csi.is_some()
        || s.fc.is_some()
        || s.flex_volume.is_some()
        || s.flocker.is_some()
        || s.gce_persistent_disk.is_some()
        || s.glusterfs.is_some()
        || s.host_path.is_some()
        || s.iscsi.is_some()
        || s.local.is_some()
        || s.nfs.is_some()
        || s.photon_persistent_disk.is_some()
        || s.portworx_volume.is_some()
        || s.quobyte.is_some()
        || s.rbd.is_some()
        || s.scale_io.is_some()
        || s.storageos.is_some()
        || s.vsphere_volume.is_some()
}

/// Converts a v1 PersistentVolume.
pub fn persistent_volume(
    v: &core::PersistentVolume,
    symbols: &mut Symbols,
) -> Result<PersistentVolume, ConvertError> {
    let meta = &v.metadata;
    let name = meta.name.clone().unwrap_or_default();
    let object = format!("persistentvolume/{name}");
    if name.is_empty() {
        return Err(err(
            &object,
            "metadata.name",
            "Required value: name or generateName is required",
        ));
    }
    let default_spec = core::PersistentVolumeSpec::default();
    let spec = v.spec.as_ref().unwrap_or(&default_spec);
    let access_modes = access_modes(spec.access_modes.as_ref(), &object, "spec.accessModes")?;
    let capacity = storage_quantity(spec.capacity.as_ref(), &object, "spec.capacity")?;
    if !has_volume_source(spec) {
        return Err(err(
            &object,
            "spec",
            "Required value: must specify a volume type",
        ));
    }
    let volume_mode = volume_mode(spec.volume_mode.as_deref(), &object)?;
    let node_affinity = match spec
        .node_affinity
        .as_ref()
        .and_then(|a| a.required.as_ref())
    {
        None => None,
        Some(ns) if ns.node_selector_terms.is_empty() => {
            return Err(err(
                &object,
                "spec.nodeAffinity.required.nodeSelectorTerms",
                "Required value: must have at least one node selector term",
            ));
        }
        Some(ns) => Some(NodeSelectorMatcher::parse(ns, symbols)),
    };
    let storage_class = annotation(meta, BETA_STORAGE_CLASS_ANNOTATION)
        .or(spec.storage_class_name.as_deref())
        .unwrap_or("");
    Ok(PersistentVolume {
        name: name.as_str().into(),
        labels: Labels::from_map(meta.labels.as_ref(), symbols),
        capacity,
        access_modes,
        volume_mode,
        storage_class: storage_class.into(),
        node_affinity,
        claim_ref: spec.claim_ref.as_ref().map(|r| ClaimRef {
            namespace: r.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE).into(),
            name: r.name.as_deref().unwrap_or("").into(),
            uid: r.uid.as_deref().filter(|u| !u.is_empty()).map(Into::into),
        }),
        available: v
            .status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .is_none_or(|p| p == "Available"),
        terminating: meta.deletion_timestamp.is_some(),
        csi: csi_source(spec),
    })
}

/// Converts a storage.k8s.io/v1 StorageClass.
pub fn storage_class(
    c: &storage::StorageClass,
    symbols: &mut Symbols,
) -> Result<StorageClass, ConvertError> {
    let name = c.metadata.name.clone().unwrap_or_default();
    let object = format!("storageclass/{name}");
    if name.is_empty() {
        return Err(err(
            &object,
            "metadata.name",
            "Required value: name or generateName is required",
        ));
    }
    if c.provisioner.is_empty() {
        return Err(err(&object, "provisioner", "Required value"));
    }
    let wait_for_first_consumer = match c.volume_binding_mode.as_deref() {
        None | Some("Immediate") => false,
        Some("WaitForFirstConsumer") => true,
        Some(m) => {
            return Err(err(
                &object,
                "volumeBindingMode",
                format!(
                    "Unsupported value: {m:?}: supported values: \"Immediate\", \"WaitForFirstConsumer\""
                ),
            ));
        }
    };
    let mut allowed_topologies = Vec::new();
    for (i, term) in c.allowed_topologies.iter().flatten().enumerate() {
        let exprs = term.match_label_expressions.as_deref().unwrap_or_default();
        if exprs.is_empty() {
            return Err(err(
                &object,
                format!("allowedTopologies[{i}].matchLabelExpressions"),
                "Required value: must have at least one label requirement",
            ));
        }
        let mut reqs = Vec::new();
        for (j, e) in exprs.iter().enumerate() {
            if e.values.is_empty() {
                return Err(err(
                    &object,
                    format!("allowedTopologies[{i}].matchLabelExpressions[{j}].values"),
                    "Required value: must specify as least one value",
                ));
            }
            let values = e.values.iter().map(|v| symbols.intern(v)).collect();
            reqs.push((symbols.intern(&e.key), values));
        }
        allowed_topologies.push(reqs);
    }
    Ok(StorageClass {
        name: name.as_str().into(),
        provisioner: c.provisioner.as_str().into(),
        wait_for_first_consumer,
        allowed_topologies,
        is_default: annotation(&c.metadata, DEFAULT_CLASS_ANNOTATION) == Some("true"),
        created: c
            .metadata
            .creation_timestamp
            .as_ref()
            .map_or(0, |t| t.0.as_second()),
    })
}

/// Converts a storage.k8s.io/v1 CSINode.
pub fn csi_node(n: &storage::CSINode, symbols: &mut Symbols) -> Result<CsiNode, ConvertError> {
    let name = n.metadata.name.clone().unwrap_or_default();
    let object = format!("csinode/{name}");
    if name.is_empty() {
        return Err(err(
            &object,
            "metadata.name",
            "Required value: name or generateName is required",
        ));
    }
    let mut drivers: Vec<CsiNodeDriver> = Vec::new();
    for (i, d) in n.spec.drivers.iter().enumerate() {
        if d.name.is_empty() {
            return Err(err(
                &object,
                format!("spec.drivers[{i}].name"),
                "Required value",
            ));
        }
        if drivers.iter().any(|o| *o.name == *d.name) {
            return Err(err(
                &object,
                format!("spec.drivers[{i}].name"),
                format!("Duplicate value: {:?}", d.name),
            ));
        }
        let allocatable = d.allocatable.as_ref().and_then(|a| a.count);
        if let Some(c) = allocatable.filter(|c| *c < 0) {
            return Err(err(
                &object,
                format!("spec.drivers[{i}].allocatable.count"),
                format!("Invalid value: {c}: must be greater than or equal to 0"),
            ));
        }
        drivers.push(CsiNodeDriver {
            name: d.name.as_str().into(),
            topology_keys: d
                .topology_keys
                .iter()
                .flatten()
                .map(|k| symbols.intern(k))
                .collect(),
            allocatable,
        });
    }
    Ok(CsiNode {
        name: name.as_str().into(),
        drivers,
    })
}

/// The volumes of a pod spec the volume plugins read.
pub(super) fn pod_volumes(pod_name: &str, spec: &core::PodSpec) -> Vec<PodVolume> {
    spec.volumes
        .iter()
        .flatten()
        .filter_map(|v| {
            Some(if let Some(c) = &v.persistent_volume_claim {
                PodVolume::Claim {
                    claim: c.claim_name.as_str().into(),
                }
            } else if v.ephemeral.is_some() {
                // `ephemeral.VolumeClaimName`.
                PodVolume::Ephemeral {
                    claim: format!("{pod_name}-{}", v.name).into(),
                }
            } else if let Some(d) = &v.gce_persistent_disk {
                PodVolume::GcePersistentDisk {
                    pd_name: d.pd_name.as_str().into(),
                    read_only: d.read_only.unwrap_or(false),
                }
            } else if let Some(d) = &v.aws_elastic_block_store {
                PodVolume::AwsElasticBlockStore {
                    volume_id: d.volume_id.as_str().into(),
                }
            } else if let Some(d) = &v.iscsi {
                PodVolume::Iscsi {
                    iqn: d.iqn.as_str().into(),
                    read_only: d.read_only.unwrap_or(false),
                }
            } else if let Some(d) = &v.rbd {
                PodVolume::Rbd {
                    monitors: d.monitors.iter().map(|m| m.as_str().into()).collect(),
                    pool: d.pool.as_deref().unwrap_or("rbd").into(),
                    image: d.image.as_str().into(),
                    read_only: d.read_only.unwrap_or(false),
                }
            } else {
                return None;
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claim(v: serde_json::Value) -> Result<PersistentVolumeClaim, ConvertError> {
        let c: core::PersistentVolumeClaim =
            serde_json::from_value(v).expect("the test object deserializes");
        persistent_volume_claim(&c, &mut Symbols::default())
    }

    // ValidatePersistentVolumeClaimSpec: access modes and a storage request are required.
    #[test]
    fn claim_validation_names_the_field() {
        let e = claim(json!({"metadata": {"name": "c"}, "spec": {
            "resources": {"requests": {"storage": "1Gi"}}}}))
        .expect_err("the invalid object is refused");
        assert_eq!(
            e.to_string(),
            "persistentvolumeclaim/c: spec.accessModes: Required value: at least 1 access mode is required"
        );
        let e =
            claim(json!({"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"]}}))
                .expect_err("the invalid object is refused");
        assert_eq!(e.field, "spec.resources[storage]");
        let e = claim(json!({"metadata": {"name": "c"}, "spec": {
            "accessModes": ["ReadWriteOncePod", "ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}}))
        .expect_err("the invalid object is refused");
        assert_eq!(
            e.message,
            "Forbidden: may not use ReadWriteOncePod with other access modes"
        );
        let e = claim(
            json!({"metadata": {"name": "c"}, "spec": {"accessModes": ["Sometimes"],
            "resources": {"requests": {"storage": "1Gi"}}}}),
        )
        .expect_err("the invalid object is refused");
        assert!(
            e.message.starts_with("Unsupported value: \"Sometimes\""),
            "{e}"
        );
    }

    #[test]
    fn claim_reads_class_binding_and_owner() {
        let c = claim(json!({"metadata": {"name": "c", "namespace": "ns",
            "annotations": {"pv.kubernetes.io/bind-completed": "yes",
                            "volume.beta.kubernetes.io/storage-class": "beta"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u1", "controller": true}]},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "ga", "volumeName": "pv1",
                     "resources": {"requests": {"storage": "1Gi"}}}}))
        .expect("the test claim converts");
        assert_eq!(&*c.storage_class, "beta");
        assert_eq!(c.volume_name.as_deref(), Some("pv1"));
        assert!(c.bind_completed);
        assert_eq!(c.owner_pod_uid.as_deref(), Some("u1"));
        assert_eq!(c.request, Quantity::parse("1Gi").unwrap_or_default());
    }

    #[test]
    fn volume_and_class_validation() {
        let pv: core::PersistentVolume = serde_json::from_value(json!({"metadata": {"name": "v"},
            "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}}))
        .expect("the test object deserializes");
        let e = persistent_volume(&pv, &mut Symbols::default())
            .expect_err("the invalid object is refused");
        assert_eq!(
            e.to_string(),
            "persistentvolume/v: spec: Required value: must specify a volume type"
        );
        let sc: storage::StorageClass = serde_json::from_value(json!({"metadata": {"name": "s"},
            "provisioner": "p", "volumeBindingMode": "Later"}))
        .expect("the test object deserializes");
        let e =
            storage_class(&sc, &mut Symbols::default()).expect_err("the invalid object is refused");
        assert_eq!(e.field, "volumeBindingMode");
        let cn: storage::CSINode = serde_json::from_value(json!({"metadata": {"name": "n"},
            "spec": {"drivers": [{"name": "d", "nodeID": "n", "allocatable": {"count": -1}}]}}))
        .expect("the test object deserializes");
        let e = csi_node(&cn, &mut Symbols::default()).expect_err("the invalid object is refused");
        assert_eq!(e.field, "spec.drivers[0].allocatable.count");
    }

    #[test]
    fn allowed_topologies_match_node_labels() {
        let mut symbols = Symbols::default();
        let sc: storage::StorageClass = serde_json::from_value(json!({"metadata": {"name": "s"},
            "provisioner": "p", "volumeBindingMode": "WaitForFirstConsumer",
            "allowedTopologies": [{"matchLabelExpressions": [
                {"key": "topology.kubernetes.io/zone", "values": ["a"]}]}]}))
        .expect("the test object deserializes");
        let sc = storage_class(&sc, &mut symbols).expect("the test storage class converts");
        assert!(sc.wait_for_first_consumer);
        let mut labels = BTreeMap::new();
        labels.insert("topology.kubernetes.io/zone".to_string(), "a".to_string());
        assert!(sc.allows(&Labels::from_map(Some(&labels), &mut symbols)));
        labels.insert("topology.kubernetes.io/zone".to_string(), "b".to_string());
        assert!(!sc.allows(&Labels::from_map(Some(&labels), &mut symbols)));
    }
}
