//! Building a snapshot from loaded manifests: conversion, Priority admission, workloads.

use k8s_openapi::api::core::v1 as core;
use topospread::api::resources::RequestOptions;
use topospread::api::{
    DisruptionBudget, Labels, PreemptionPolicy, PriorityClass, Symbols, Workloads,
};
use topospread::convert::{self, ConvertError, DEFAULT_NAMESPACE, node};
use topospread::plugins::volumebinding;
use topospread::snapshot::{Snapshot, SnapshotError};

use crate::admission::{
    Admission, AdmissionError, WrittenPriority, admit_priority, resolve_priority, set_pod_defaults,
};
use crate::load::{CompactPod, Loaded, Object};

/// Why a snapshot could not be built from manifests.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// An object could not be converted.
    #[error("{file}: {source}")]
    Convert {
        /// The file it came from.
        file: String,
        /// What was wrong.
        #[source]
        source: ConvertError,
    },
    /// The snapshot rejected an object (duplicate, dangling node name).
    #[error("{file}: {source}")]
    Snapshot {
        /// The file it came from.
        file: String,
        /// What was wrong.
        #[source]
        source: SnapshotError,
    },
}

/// Records the objects the scheduler reads besides nodes and pods: the selector-bearing
/// objects default spreading reads, PriorityClasses (for admission) and
/// PodDisruptionBudgets (for preemption). A later object with the same name replaces an
/// earlier PriorityClass or PodDisruptionBudget.
pub fn add_workload(object: &Object, workloads: &mut Workloads, symbols: &mut Symbols) {
    let ns_of = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
                 symbols: &mut Symbols| {
        symbols.intern(m.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE))
    };
    let name_of = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| -> Box<str> {
        m.name.as_deref().unwrap_or("").into()
    };
    match object {
        Object::Service(s) => {
            let sel = convert::service_selector(s, symbols);
            let ns = ns_of(&s.metadata, symbols);
            workloads.services.push((ns, name_of(&s.metadata), sel));
        }
        Object::ReplicationController(rc) => {
            let sel = convert::replication_controller_selector(rc, symbols);
            let ns = ns_of(&rc.metadata, symbols);
            workloads
                .replication_controllers
                .push((ns, name_of(&rc.metadata), sel));
        }
        Object::ReplicaSet(rs) => {
            let sel = convert::replica_set_selector(rs, symbols);
            let ns = ns_of(&rs.metadata, symbols);
            workloads
                .replica_sets
                .push((ns, name_of(&rs.metadata), sel));
        }
        Object::StatefulSet(ss) => {
            let sel = convert::stateful_set_selector(ss, symbols);
            let ns = ns_of(&ss.metadata, symbols);
            workloads
                .stateful_sets
                .push((ns, name_of(&ss.metadata), sel));
        }
        Object::PriorityClass(pc) => workloads.priority_classes.add(PriorityClass::from_k8s(pc)),
        Object::PodDisruptionBudget(pdb) => {
            let ns = ns_of(&pdb.metadata, symbols);
            workloads
                .disruption_budgets
                .add(DisruptionBudget::from_k8s(pdb, ns, symbols));
        }
        _ => {}
    }
}

/// A storage object the API server would refuse (or a claim the DefaultStorageClass
/// admission plugin cannot complete): left out of the snapshot by itself, reported in
/// one line naming the file, the object and the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {error}")]
pub struct RefusedObject {
    /// The file it came from.
    pub file: String,
    /// Why (the API server's words).
    pub error: ConvertError,
}

/// Adds the storage objects among `objects` to the snapshot, as the API server and the
/// controllers would have them before the scheduler sees them: StorageClasses, CSINodes
/// and PersistentVolumes as written; PersistentVolumeClaims without a class get the
/// default StorageClass (`DefaultStorageClass` admission); then the PV controller binds
/// the claims it binds without the scheduler ([`volumebinding::bind_immediate_claims`]),
/// and the provisioner provisions the Immediate claims left unbound
/// ([`volumebinding::provision_immediate_claims`]). An object the API server would
/// refuse is left out and returned; the rest goes on.
pub fn add_storage<'a>(
    snapshot: &mut Snapshot,
    objects: impl IntoIterator<Item = &'a Loaded> + Clone,
) -> Vec<RefusedObject> {
    snapshot.set_volumes_tracked(true);
    let mut refused = Vec::new();
    let mut refuse = |file: &str, error: ConvertError| {
        refused.push(RefusedObject {
            file: file.to_string(),
            error,
        });
    };
    for l in objects.clone() {
        let file = &l.source.file;
        let symbols = snapshot.symbols_mut();
        match &l.object {
            Object::StorageClass(c) => match convert::storage_class(c, symbols) {
                Ok(c) => snapshot.set_storage_class(c),
                Err(e) => refuse(file, e),
            },
            Object::CsiNode(n) => match convert::csi_node(n, symbols) {
                Ok(n) => snapshot.set_csi_node(n),
                Err(e) => refuse(file, e),
            },
            Object::PersistentVolume(v) => match convert::persistent_volume(v, symbols) {
                Ok(v) => snapshot.set_persistent_volume(v),
                Err(e) => refuse(file, e),
            },
            _ => {}
        }
    }
    for l in objects {
        let Object::PersistentVolumeClaim(c) = &l.object else {
            continue;
        };
        if let Err(e) = add_claim(snapshot, c, None) {
            refuse(&l.source.file, e);
        }
    }
    volumebinding::bind_immediate_claims(snapshot);
    volumebinding::provision_immediate_claims(snapshot);
    refused
}

/// Adds the claims a controller creates for a pod it is about to create (the
/// StatefulSet controller's `createPersistentVolumeClaims`), as [`add_storage`] adds
/// claims, then lets the PV controller bind those it binds without the scheduler and the
/// provisioner provision Immediate ones. A claim the API server would refuse is left out
/// and returned.
pub fn add_created_claims(
    snapshot: &mut Snapshot,
    claims: &[core::PersistentVolumeClaim],
) -> Vec<ConvertError> {
    let refused: Vec<ConvertError> = claims
        .iter()
        .filter_map(|c| add_claim(snapshot, c, None).err())
        .collect();
    volumebinding::bind_immediate_claims(snapshot);
    volumebinding::provision_immediate_claims(snapshot);
    refused
}

/// Converts and adds a claim, with the default StorageClass when it names none
/// (`DefaultStorageClass` admission), owned by the pod of `owner_uid` if given.
fn add_claim(
    snapshot: &mut Snapshot,
    c: &core::PersistentVolumeClaim,
    owner_uid: Option<&str>,
) -> Result<(), ConvertError> {
    let mut claim = convert::persistent_volume_claim(c, snapshot.symbols_mut())?;
    let unset = c
        .spec
        .as_ref()
        .is_none_or(|s| s.storage_class_name.is_none())
        && claim.storage_class.is_empty();
    if unset && let Some(default) = snapshot.default_storage_class() {
        claim.storage_class = default.name.clone();
    }
    if let Some(uid) = owner_uid {
        claim.owner_pod_uid = Some(uid.into());
    }
    snapshot.set_persistent_volume_claim(claim);
    Ok(())
}

/// The ephemeral volume controller: for each generic ephemeral volume of `pod`, the
/// claim `<pod>-<volume>` from its template, owned by the pod, unless it exists
/// (`ephemeral.VolumeClaimName`, `handleVolume` in the ephemeral controller). A
/// template the API server would refuse makes no claim; the pod then waits for it.
fn create_ephemeral_claims(snapshot: &mut Snapshot, pod: &core::Pod, uid: &str) {
    let Some(spec) = pod.spec.as_ref() else {
        return;
    };
    let pod_name = pod.metadata.name.as_deref().unwrap_or("");
    let namespace = pod
        .metadata
        .namespace
        .as_deref()
        .unwrap_or(DEFAULT_NAMESPACE);
    for v in spec.volumes.iter().flatten() {
        let Some(template) = v
            .ephemeral
            .as_ref()
            .and_then(|e| e.volume_claim_template.as_ref())
        else {
            continue;
        };
        let name = format!("{pod_name}-{}", v.name);
        let ns = snapshot.symbols_mut().intern(namespace);
        if snapshot.persistent_volume_claim(ns, &name).is_some() {
            continue;
        }
        let mut meta = template.metadata.clone().unwrap_or_default();
        meta.name = Some(name);
        meta.namespace = Some(namespace.to_string());
        let claim = core::PersistentVolumeClaim {
            metadata: meta,
            spec: Some(template.spec.clone()),
            status: None,
        };
        if add_claim(snapshot, &claim, Some(uid)).is_err() {
            // Refused as the API server would refuse it: the pod waits for its claim.
            continue;
        }
    }
}

/// A pod the Priority admission plugin refused: not in the snapshot, reported instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The file it came from.
    pub file: String,
    /// `metadata.namespace` (defaulted).
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// Why (the API server's message).
    pub error: AdmissionError,
}

/// A snapshot built from manifests, and the pods admission refused.
#[derive(Debug)]
pub struct BuiltSnapshot {
    /// Nodes, workload objects and admitted pods.
    pub snapshot: Snapshot,
    /// Pods refused by Priority admission, in file order.
    pub refused: Vec<Refused>,
    /// Pods left out because they have finished (see [`is_finished`]), as
    /// `namespace/name`, in file order.
    pub finished: Vec<String>,
    /// Storage objects the API server would refuse, left out (see [`add_storage`]).
    pub refused_storage: Vec<RefusedObject>,
    /// Claims that stay unbound because the StorageClass they need is not in the input
    /// (see [`unbound_claim_notes`]).
    pub storage_notes: Vec<crate::notes::Note>,
    /// The admission plugins' view of the objects (LimitRanges, RuntimeClasses), for
    /// the pods controllers create next ([`admit_and_add_with`]).
    pub admission: Admission,
}

/// A note for each claim of `objects` left unbound with no StorageClass to decide its
/// binding: one naming a class the input does not have, or naming none when the input
/// has no default class. Upstream treats such a claim as Immediate and its pods stay
/// Pending ("pod has unbound immediate PersistentVolumeClaims"), as they would in a
/// cluster without that class; the note says the cluster's classes belong in the input.
pub fn unbound_claim_notes<'a>(
    snapshot: &Snapshot,
    objects: impl IntoIterator<Item = &'a Loaded>,
) -> Vec<crate::notes::Note> {
    let mut notes = Vec::new();
    for l in objects {
        let Object::PersistentVolumeClaim(c) = &l.object else {
            continue;
        };
        let name = c.metadata.name.as_deref().unwrap_or("");
        let ns = c.metadata.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
        let Some(claim) = snapshot
            .symbols()
            .get(ns)
            .and_then(|ns| snapshot.persistent_volume_claim(ns, name))
        else {
            continue;
        };
        if volumebinding::is_fully_bound(claim) || claim.volume_name.is_some() {
            continue;
        }
        let message = if claim.storage_class.is_empty() {
            "unbound: no storageClassName and no default StorageClass in the input, so its \
             pods stay Pending (add the cluster's StorageClasses to the input)"
                .to_string()
        } else if snapshot.storage_class(&claim.storage_class).is_none() {
            format!(
                "unbound: StorageClass {:?} is not in the input, so its pods stay Pending \
                 (add the cluster's StorageClasses to the input)",
                claim.storage_class
            )
        } else {
            continue;
        };
        notes.push(crate::notes::Note::new(
            format!("{}: persistentvolumeclaim/{name}", l.source.file),
            message,
        ));
    }
    notes
}

/// Whether a pod was read back from a cluster: it carries what only the API server
/// writes (a uid, a resourceVersion, a creation time, a status phase). Such a pod was
/// admitted when it was created; LimitRanges and RuntimeClasses are not applied again.
pub fn from_server(pod: &core::Pod) -> bool {
    crate::validation::is_stored(&pod.metadata)
        || pod.status.as_ref().is_some_and(|s| s.phase.is_some())
}

/// Whether a pod has finished: `status.phase` Succeeded or Failed (completed Jobs,
/// evicted pods). kube-scheduler's informer drops such pods
/// (`assignedPod && !terminal`), so they count for no spread, resource, port or affinity.
pub fn is_finished(pod: &core::Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

/// Runs Priority admission on a pod, converts it and adds it to the snapshot. `Ok(None)`
/// when admission refused it (the refusal is returned, the snapshot is unchanged). A
/// finished pod ([`is_finished`]) is left out, as the scheduler never sees it.
pub fn admit_and_add(
    snapshot: &mut Snapshot,
    pod: &core::Pod,
    file: &str,
) -> Result<Option<Refused>, BuildError> {
    admit_and_add_with(snapshot, pod, file, &Admission::default())
}

/// [`admit_and_add`] through every admission plugin: the API server's defaults, then
/// for a pod being created ([`from_server`] is false) LimitRanger, Priority and
/// RuntimeClass as [`Admission::admit`] runs them; a pod read back from a cluster gets
/// Priority alone.
pub fn admit_and_add_with(
    snapshot: &mut Snapshot,
    pod: &core::Pod,
    file: &str,
    admission: &Admission,
) -> Result<Option<Refused>, BuildError> {
    if is_finished(pod) {
        return Ok(None);
    }
    let mut pod = pod.clone();
    set_pod_defaults(&mut pod);
    let classes = &snapshot.workloads().priority_classes;
    let admitted = if from_server(&pod) {
        resolve_priority(&mut pod, classes)
    } else {
        admission.admit(&mut pod, classes)
    };
    if let Err(error) = admitted {
        return Ok(Some(Refused {
            file: file.to_string(),
            namespace: pod
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string()),
            name: pod.metadata.name.clone().unwrap_or_default(),
            error,
        }));
    }
    let options = snapshot.request_options();
    let converted = convert::pod_with(&pod, snapshot.symbols_mut(), options).map_err(|source| {
        BuildError::Convert {
            file: file.to_string(),
            source,
        }
    })?;
    create_ephemeral_claims(snapshot, &pod, &converted.uid);
    snapshot
        .add_pod(converted)
        .map_err(|source| BuildError::Snapshot {
            file: file.to_string(),
            source,
        })?;
    Ok(None)
}

/// [`admit_and_add`] for a pod read in compact form: Priority admission on what it
/// wrote, then its conversion (made as it was read) added.
fn admit_and_add_compact(
    snapshot: &mut Snapshot,
    p: &CompactPod,
    file: &str,
) -> Result<Option<Refused>, BuildError> {
    let written = WrittenPriority {
        class_name: p.priority_class_name.as_deref(),
        priority: p.priority,
        preemption_policy: p.preemption_policy.as_deref(),
    };
    let admitted = match admit_priority(&p.name, written, &snapshot.workloads().priority_classes) {
        Ok(a) => a,
        Err(error) => {
            return Ok(Some(Refused {
                file: file.to_string(),
                namespace: p.namespace.clone(),
                name: p.name.clone(),
                error,
            }));
        }
    };
    let converted = p.take_converted().unwrap_or_else(|| {
        Err(ConvertError {
            object: format!("pod/{}", p.name),
            field: "metadata".into(),
            message: "read in compact form and already built into a snapshot".into(),
        })
    });
    let mut pod = converted.map_err(|source| BuildError::Convert {
        file: file.to_string(),
        source,
    })?;
    if let Some(a) = admitted {
        pod.priority = a.priority;
        pod.preemption_never = a.preemption_policy == PreemptionPolicy::Never;
    }
    snapshot
        .add_pod(pod)
        .map_err(|source| BuildError::Snapshot {
            file: file.to_string(),
            source,
        })?;
    Ok(None)
}

/// [`build`], keeping only the snapshot: pods refused by Priority admission are left out.
pub fn build_snapshot<'a>(
    objects: impl IntoIterator<Item = &'a Loaded> + Clone,
) -> Result<Snapshot, BuildError> {
    build(objects).map(|b| b.snapshot)
}

/// [`build_snapshot`], pods' requests computed under `options`.
pub fn build_snapshot_with<'a>(
    objects: impl IntoIterator<Item = &'a Loaded> + Clone,
    options: RequestOptions,
) -> Result<Snapshot, BuildError> {
    build_with(objects, options).map(|b| b.snapshot)
}

/// Builds a snapshot from loaded manifests: nodes first, then the workload objects
/// (PriorityClasses and PodDisruptionBudgets among them), then pods through Priority
/// admission (a pod with `spec.nodeName` is bound; one without stays pending in the
/// snapshot; a refused one is listed in [`BuiltSnapshot::refused`]; a finished one is left out and
/// listed in [`BuiltSnapshot::finished`]).
pub fn build<'a>(
    objects: impl IntoIterator<Item = &'a Loaded> + Clone,
) -> Result<BuiltSnapshot, BuildError> {
    build_with(objects, RequestOptions::default())
}

/// [`build`], pods' requests computed under `options` (the release's `PodLevelResources`).
pub fn build_with<'a>(
    objects: impl IntoIterator<Item = &'a Loaded> + Clone,
    options: RequestOptions,
) -> Result<BuiltSnapshot, BuildError> {
    build_with_symbols(objects, options, Symbols::default())
}

/// [`build_with`] on the symbols compact pods were interned in (see
/// [`Compactor::into_symbols`](crate::load::Compactor::into_symbols)): objects holding
/// [`Object::CompactPod`] must be built with their compactor's symbols.
pub fn build_with_symbols<'a>(
    objects: impl IntoIterator<Item = &'a Loaded> + Clone,
    options: RequestOptions,
    symbols: Symbols,
) -> Result<BuiltSnapshot, BuildError> {
    build_storage(objects, options, symbols, None)
}

/// [`build_with_symbols`] with the cluster's provisioners running: the volumes of
/// Immediate claims are provisioned as the claims are created, in `provision_zone` when
/// one is chosen (`--provision-zone`), else where the provisioner would put them
/// ([`volumebinding::provision_immediate_claims`]).
pub fn build_provisioning_in<'a>(
    objects: impl IntoIterator<Item = &'a Loaded> + Clone,
    options: RequestOptions,
    symbols: Symbols,
    provision_zone: Option<&str>,
) -> Result<BuiltSnapshot, BuildError> {
    build_storage(objects, options, symbols, Some(provision_zone))
}

/// The snapshot of `objects`; `provisioning` says whether provisioners run, and in
/// which chosen zone.
fn build_storage<'a>(
    objects: impl IntoIterator<Item = &'a Loaded> + Clone,
    options: RequestOptions,
    symbols: Symbols,
    provisioning: Option<Option<&str>>,
) -> Result<BuiltSnapshot, BuildError> {
    let mut snapshot = Snapshot::new();
    *snapshot.symbols_mut() = symbols;
    snapshot.set_request_options(options);
    if let Some(zone) = provisioning {
        snapshot.set_provisioning(zone);
    }
    for l in objects.clone() {
        if let Object::Node(n) = &l.object {
            let node = node(n, snapshot.symbols_mut()).map_err(|source| BuildError::Convert {
                file: l.source.file.clone(),
                source,
            })?;
            snapshot
                .add_node(node)
                .map_err(|source| BuildError::Snapshot {
                    file: l.source.file.clone(),
                    source,
                })?;
        }
    }
    for l in objects.clone() {
        if let Object::Namespace(ns) = &l.object {
            let name = ns.metadata.name.as_deref().unwrap_or("");
            let sym = snapshot.symbols_mut().intern(name);
            let labels = Labels::from_map(ns.metadata.labels.as_ref(), snapshot.symbols_mut());
            snapshot.set_namespace(sym, &labels);
            continue;
        }
        let mut workloads = std::mem::take(snapshot.workloads_mut());
        add_workload(&l.object, &mut workloads, snapshot.symbols_mut());
        *snapshot.workloads_mut() = workloads;
    }
    let pods = objects
        .clone()
        .into_iter()
        .filter(|l| matches!(l.object, Object::Pod(_) | Object::CompactPod(_)))
        .count();
    snapshot.reserve_pods(pods);
    let refused_storage = add_storage(&mut snapshot, objects.clone());
    let objects_for_notes = objects.clone();
    let admission = Admission::from_objects(objects.clone())
        .with_pod_level_resources(options.pod_level_resources);
    let mut refused = Vec::new();
    let mut finished = Vec::new();
    for l in objects {
        if let Object::CompactPod(p) = &l.object {
            if p.is_finished() {
                finished.push(format!("{}/{}", p.namespace, p.name));
            } else if let Some(r) = admit_and_add_compact(&mut snapshot, p, &l.source.file)? {
                refused.push(r);
            }
            continue;
        }
        let Object::Pod(p) = &l.object else { continue };
        if is_finished(p) {
            finished.push(format!(
                "{}/{}",
                p.metadata.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE),
                p.metadata.name.as_deref().unwrap_or("")
            ));
        } else if let Some(r) = admit_and_add_with(&mut snapshot, p, &l.source.file, &admission)? {
            refused.push(r);
        }
    }
    let storage_notes = unbound_claim_notes(&snapshot, objects_for_notes);
    Ok(BuiltSnapshot {
        snapshot,
        refused,
        finished,
        refused_storage,
        storage_notes,
        admission,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_manifests;

    const STORAGE: &str = r#"
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: standard, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: no-modes}
spec: {resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: elsewhere}
spec: {storageClassName: gp3, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: scratch, uid: u-1}
spec:
  containers: [{name: c}]
  volumes:
  - name: tmp
    ephemeral:
      volumeClaimTemplate:
        spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"#;

    // A claim the API server refuses is left out by itself with one line naming file,
    // object and field; the others load, a claim without a class gets the default
    // (DefaultStorageClass admission), and a pod's ephemeral volume gets its claim.
    #[test]
    fn storage_objects_load_one_by_one() {
        let m = parse_manifests(STORAGE, "storage.yaml").expect("the test manifests parse");
        let built = build(&m.objects).expect("the test objects build");
        let refused: Vec<String> = built
            .refused_storage
            .iter()
            .map(|r| r.to_string())
            .collect();
        assert_eq!(
            refused,
            [
                "storage.yaml: persistentvolumeclaim/no-modes: spec.accessModes: Required value: at least 1 access mode is required"
            ]
        );
        let s = &built.snapshot;
        let ns = s
            .symbols()
            .get("default")
            .expect("the default namespace exists");
        let data = s.persistent_volume_claim(ns, "data");
        assert_eq!(data.map(|c| &*c.storage_class), Some("standard"));
        let tmp = s.persistent_volume_claim(ns, "scratch-tmp");
        assert_eq!(tmp.and_then(|c| c.owner_pod_uid.as_deref()), Some("u-1"));
        assert_eq!(tmp.map(|c| &*c.storage_class), Some("standard"));
        let notes: Vec<String> = built.storage_notes.iter().map(|n| n.to_string()).collect();
        assert_eq!(
            notes,
            [
                "storage.yaml: persistentvolumeclaim/elsewhere: unbound: StorageClass \"gp3\" is not in the input, so its pods stay Pending (add the cluster's StorageClasses to the input)"
            ]
        );
    }
}
