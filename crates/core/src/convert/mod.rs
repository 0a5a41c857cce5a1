//! From k8s-openapi objects to the engine's compact types: interning, selector
//! compilation and defaulting happen here, once. Errors name the object and field.

use crate::admission::{AdmissionError, resolve_priority};
use crate::api::resources::{host_ports, node_allocatable, pod_requests_with};
use crate::api::{
    ControllerKind, ControllerRef, Labels, Node, NodeImage, NodeInclusionPolicy,
    NodeSelectorMatcher, Pod, PodAffinity, PreferredNodeAffinity, RequiredNodeAffinity, Selector,
    SpreadConstraintSpec, Symbols, Taint, TaintEffect, Toleration, TolerationOp, WhenUnsatisfiable,
    Workloads, required_node_names,
};
use crate::load::{Loaded, Object};
use crate::plugins::imagelocality::normalized_image_name;
use crate::snapshot::{Snapshot, SnapshotError};
use k8s_openapi::api::core::v1 as core;

/// An object the engine cannot use as written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{object}: {field}: {message}")]
pub struct ConvertError {
    /// The object, as `kind/name`.
    pub object: String,
    /// The field path.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

fn err(object: &str, field: impl Into<String>, message: impl Into<String>) -> ConvertError {
    ConvertError {
        object: object.to_string(),
        field: field.into(),
        message: message.into(),
    }
}

/// A resource quantity error, with its field path moved into the error's field.
fn resource_err(object: &str, e: &crate::api::resources::ResourceError) -> ConvertError {
    use crate::api::resources::ResourceError;
    let (ResourceError::Quantity { path, .. } | ResourceError::Negative { path, .. }) = e;
    let text = e.to_string();
    let message = text
        .strip_prefix(path.as_str())
        .and_then(|m| m.strip_prefix(": "))
        .unwrap_or(&text);
    err(object, path.clone(), message)
}

/// The namespace a namespaced object lands in when its manifest leaves it out.
pub const DEFAULT_NAMESPACE: &str = "default";

/// Converts a v1 Pod.
pub fn pod(p: &core::Pod, symbols: &mut Symbols) -> Result<Pod, ConvertError> {
    let meta = &p.metadata;
    let name = meta.name.clone().unwrap_or_default();
    let namespace = meta.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
    let object = format!("pod/{name}");
    if name.is_empty() {
        return Err(err(
            &object,
            "metadata.name",
            "Required value: name is required",
        ));
    }
    let default_spec = core::PodSpec::default();
    let spec = p.spec.as_ref().unwrap_or(&default_spec);
    let controller = meta
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .map(|o| ControllerRef {
            kind: match (o.api_version.as_str(), o.kind.as_str()) {
                ("v1", "ReplicationController") => ControllerKind::ReplicationController,
                ("apps/v1", "ReplicaSet") => ControllerKind::ReplicaSet,
                ("apps/v1", "StatefulSet") => ControllerKind::StatefulSet,
                _ => ControllerKind::Other,
            },
            name: o.name.as_str().into(),
        });
    let namespace = symbols.intern(namespace);
    let labels = Labels::from_map(meta.labels.as_ref(), symbols);
    let node_affinity = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref());
    let requests = pod_requests_with(spec, p.status.as_ref(), Default::default())
        .map_err(|e| resource_err(&object, &e))?;
    let uid: Box<str> = match meta.uid.as_deref() {
        Some(u) if !u.is_empty() => u.into(),
        _ => format!("{}/{name}", symbols.resolve(namespace)).into(),
    };
    Ok(Pod {
        uid,
        name: name.as_str().into(),
        namespace,
        required_node_names: node_affinity
            .and_then(|na| {
                na.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .and_then(required_node_names),
        preferred_node_affinity: node_affinity
            .and_then(|na| {
                na.preferred_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .map(|terms| PreferredNodeAffinity::parse(terms, symbols)),
        affinity: PodAffinity::parse(spec.affinity.as_ref(), namespace, &labels, symbols),
        requests,
        host_ports: host_ports(spec),
        images: spec
            .init_containers
            .iter()
            .flatten()
            .chain(&spec.containers)
            .map(|c| normalized_image_name(c.image.as_deref().unwrap_or("")).into())
            .collect(),
        scheduling_gates: spec
            .scheduling_gates
            .iter()
            .flatten()
            .map(|g| g.name.as_str().into())
            .collect(),
        labels,
        node_name: spec
            .node_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .map(Into::into),
        terminating: meta.deletion_timestamp.is_some(),
        priority: spec.priority.unwrap_or(0),
        start_time: p
            .status
            .as_ref()
            .and_then(|st| st.start_time.as_ref())
            .map(|t| t.0.as_nanosecond()),
        nominated_node_name: p
            .status
            .as_ref()
            .and_then(|st| st.nominated_node_name.as_deref())
            .filter(|n| !n.is_empty())
            .map(Into::into),
        terminating_by_preemption: terminating_by_preemption(p),
        preemption_never: spec.preemption_policy.as_deref() == Some("Never"),
        scheduler_name: spec
            .scheduler_name
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or("default-scheduler")
            .into(),
        controller,
        required_node_affinity: required_node_affinity(spec, symbols),
        tolerations: tolerations(spec, &object)?,
        spread_constraints: spec
            .topology_spread_constraints
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| {
                spread_constraint(c, symbols).map_err(
                    |crate::config::FieldProblem { field, message }| {
                        err(
                            &object,
                            format!("spec.topologySpreadConstraints[{i}].{field}"),
                            message,
                        )
                    },
                )
            })
            .collect::<Result<_, _>>()?,
    })
}

/// `podTerminatingByPreemption`: deleted, with a `DisruptionTarget` condition that is
/// `True` for reason `PreemptionByScheduler` (the first such condition decides).
fn terminating_by_preemption(p: &core::Pod) -> bool {
    p.metadata.deletion_timestamp.is_some()
        && p.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .find(|c| c.type_ == "DisruptionTarget")
            .is_some_and(|c| {
                c.status == "True" && c.reason.as_deref() == Some("PreemptionByScheduler")
            })
}

/// `nodeaffinity.GetRequiredNodeAffinity`: nodeSelector and required terms.
fn required_node_affinity(spec: &core::PodSpec, symbols: &mut Symbols) -> RequiredNodeAffinity {
    let node_selector = spec
        .node_selector
        .as_ref()
        .filter(|m| !m.is_empty())
        .map(|m| Selector::from_set(&Labels::from_map(Some(m), symbols)));
    let terms = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|ns| NodeSelectorMatcher::parse(ns, symbols));
    RequiredNodeAffinity {
        node_selector,
        terms,
    }
}

fn tolerations(spec: &core::PodSpec, object: &str) -> Result<Vec<Toleration>, ConvertError> {
    spec.tolerations
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, t)| {
            let effect = match t.effect.as_deref() {
                None | Some("") => None,
                Some(e) => Some(TaintEffect::parse(e).ok_or_else(|| {
                    err(
                        object,
                        format!("spec.tolerations[{i}].effect"),
                        format!("Unsupported value: {e:?}: supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""),
                    )
                })?),
            };
            Ok(Toleration {
                key: t.key.as_deref().unwrap_or("").into(),
                op: match t.operator.as_deref() {
                    None | Some("") | Some("Equal") => TolerationOp::Equal,
                    Some("Exists") => TolerationOp::Exists,
                    Some("Lt") => TolerationOp::Lt,
                    Some("Gt") => TolerationOp::Gt,
                    Some(_) => TolerationOp::Unknown,
                },
                value: t.value.as_deref().unwrap_or("").into(),
                effect,
            })
        })
        .collect()
}

/// Converts one constraint; on error, the field (relative to the constraint) and message.
pub fn spread_constraint(
    c: &core::TopologySpreadConstraint,
    symbols: &mut Symbols,
) -> Result<SpreadConstraintSpec, crate::config::FieldProblem> {
    let selector =
        Selector::from_label_selector(c.label_selector.as_ref(), symbols).map_err(|e| {
            crate::config::FieldProblem::new("labelSelector", format!("Invalid value: {e}"))
        })?;
    Ok(SpreadConstraintSpec {
        max_skew: c.max_skew,
        topology_key: symbols.intern(&c.topology_key),
        when_unsatisfiable: WhenUnsatisfiable::parse(&c.when_unsatisfiable),
        selector,
        min_domains: c.min_domains,
        node_affinity_policy: c
            .node_affinity_policy
            .as_deref()
            .map(NodeInclusionPolicy::parse),
        node_taints_policy: c
            .node_taints_policy
            .as_deref()
            .map(NodeInclusionPolicy::parse),
        match_label_keys: c
            .match_label_keys
            .iter()
            .flatten()
            .map(|k| symbols.intern(k))
            .collect(),
    })
}

/// Converts a v1 Node.
pub fn node(n: &core::Node, symbols: &mut Symbols) -> Result<Node, ConvertError> {
    let name = n.metadata.name.clone().unwrap_or_default();
    let object = format!("node/{name}");
    if name.is_empty() {
        return Err(err(
            &object,
            "metadata.name",
            "Required value: name is required",
        ));
    }
    let spec = n.spec.as_ref();
    let taints = spec
        .and_then(|s| s.taints.as_ref())
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, t)| {
            let effect = TaintEffect::parse(&t.effect).ok_or_else(|| {
                err(
                    &object,
                    format!("spec.taints[{i}].effect"),
                    format!("Unsupported value: {:?}: supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"", t.effect),
                )
            })?;
            Ok(Taint {
                key: t.key.as_str().into(),
                value: t.value.as_deref().unwrap_or("").into(),
                effect,
            })
        })
        .collect::<Result<_, ConvertError>>()?;
    let status = n.status.as_ref();
    let allocatable = match status {
        Some(st) => node_allocatable(st).map_err(|e| resource_err(&object, &e))?,
        None => Default::default(),
    };
    let images = status
        .and_then(|st| st.images.as_ref())
        .into_iter()
        .flatten()
        .map(|i| NodeImage {
            names: i
                .names
                .iter()
                .flatten()
                .map(|n| n.as_str().into())
                .collect(),
            size: i.size_bytes.unwrap_or(0),
        })
        .collect();
    Ok(Node {
        name: name.as_str().into(),
        labels: Labels::from_map(n.metadata.labels.as_ref(), symbols),
        taints,
        unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
        allocatable,
        images,
    })
}

/// Why a snapshot could not be built from manifests.
#[derive(Debug, thiserror::Error)]
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
        Object::PriorityClass(pc) => workloads
            .priority_classes
            .add(crate::api::PriorityClass::from_k8s(pc)),
        Object::PodDisruptionBudget(pdb) => {
            let ns = ns_of(&pdb.metadata, symbols);
            workloads
                .disruption_budgets
                .add(crate::api::DisruptionBudget::from_k8s(pdb, ns, symbols));
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
pub struct Built {
    /// Nodes, workload objects and admitted pods.
    pub snapshot: Snapshot,
    /// Pods refused by Priority admission, in file order.
    pub refused: Vec<Refused>,
}

/// Runs Priority admission on a pod, converts it and adds it to the snapshot. `Ok(None)`
/// when admission refused it (the refusal is returned, the snapshot is unchanged).
pub fn admit_and_add(
    snapshot: &mut Snapshot,
    pod: &core::Pod,
    file: &str,
) -> Result<Option<Refused>, BuildError> {
    let mut pod = pod.clone();
    if let Err(error) = resolve_priority(&mut pod, &snapshot.workloads().priority_classes) {
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
    let converted =
        self::pod(&pod, snapshot.symbols_mut()).map_err(|source| BuildError::Convert {
            file: file.to_string(),
            source,
        })?;
    snapshot
        .add_pod(converted)
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

/// Builds a snapshot from loaded manifests: nodes first, then the workload objects
/// (PriorityClasses and PodDisruptionBudgets among them), then pods through Priority
/// admission (a pod with `spec.nodeName` is bound; one without stays pending in the
/// snapshot; a refused one is listed in [`Built::refused`]).
pub fn build<'a>(
    objects: impl IntoIterator<Item = &'a Loaded> + Clone,
) -> Result<Built, BuildError> {
    let mut snapshot = Snapshot::new();
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
        let mut workloads = std::mem::take(snapshot.workloads_mut());
        add_workload(&l.object, &mut workloads, snapshot.symbols_mut());
        *snapshot.workloads_mut() = workloads;
    }
    let mut refused = Vec::new();
    for l in objects {
        if let Object::Pod(p) = &l.object
            && let Some(r) = admit_and_add(&mut snapshot, p, &l.source.file)?
        {
            refused.push(r);
        }
    }
    Ok(Built { snapshot, refused })
}
