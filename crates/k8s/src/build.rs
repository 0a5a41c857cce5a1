//! Building a snapshot from loaded manifests: conversion, Priority admission, workloads.

use k8s_openapi::api::core::v1 as core;
use topospread::api::resources::RequestOptions;
use topospread::api::{
    DisruptionBudget, Labels, PreemptionPolicy, PriorityClass, Selector, Symbols, Workloads,
};
use topospread::convert::{self, ConvertError, DEFAULT_NAMESPACE, node};
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
            let sel = s
                .spec
                .as_ref()
                .and_then(|sp| sp.selector.as_ref())
                .map(|m| Labels::from_map(Some(m), symbols));
            let ns = ns_of(&s.metadata, symbols);
            workloads.services.push((ns, name_of(&s.metadata), sel));
        }
        Object::ReplicationController(rc) => {
            let sel = rc
                .spec
                .as_ref()
                .and_then(|sp| sp.selector.as_ref())
                .map(|m| Labels::from_map(Some(m), symbols));
            let ns = ns_of(&rc.metadata, symbols);
            workloads
                .replication_controllers
                .push((ns, name_of(&rc.metadata), sel));
        }
        Object::ReplicaSet(rs) => {
            let sel = rs
                .spec
                .as_ref()
                .and_then(|sp| Selector::from_label_selector(Some(&sp.selector), symbols).ok());
            let ns = ns_of(&rs.metadata, symbols);
            workloads
                .replica_sets
                .push((ns, name_of(&rs.metadata), sel));
        }
        Object::StatefulSet(ss) => {
            let sel = ss
                .spec
                .as_ref()
                .and_then(|sp| Selector::from_label_selector(Some(&sp.selector), symbols).ok());
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
    /// The admission plugins' view of the objects (LimitRanges, RuntimeClasses), for
    /// the pods controllers create next ([`admit_and_add_with`]).
    pub admission: Admission,
}

/// Whether a pod was read back from a cluster: it carries what only the API server
/// writes (a uid, a resourceVersion, a creation time, a status phase). Such a pod was
/// admitted when it was created; LimitRanges and RuntimeClasses are not applied again.
pub fn from_server(pod: &core::Pod) -> bool {
    let m = &pod.metadata;
    m.uid.is_some()
        || m.resource_version.is_some()
        || m.creation_timestamp.is_some()
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
    let mut snapshot = Snapshot::new();
    *snapshot.symbols_mut() = symbols;
    snapshot.set_request_options(options);
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
    Ok(BuiltSnapshot {
        snapshot,
        refused,
        finished,
        admission,
    })
}
