//! From k8s-openapi objects to the engine's compact types: interning, selector
//! compilation and defaulting happen here, once. Errors name the object and field.

use crate::api::resources::{RequestOptions, host_ports, node_allocatable, pod_requests_with};
use crate::api::{
    ControllerKind, ControllerRef, Labels, Node, NodeImage, NodeInclusionPolicy,
    NodeSelectorMatcher, Pod, PodAffinity, PreferredNodeAffinity, RequiredNodeAffinity, Selector,
    SpreadConstraintSpec, Symbols, Taint, TaintEffect, Toleration, TolerationOp, WhenUnsatisfiable,
    required_node_names,
};
use crate::plugins::imagelocality::normalized_image_name;
use k8s_openapi::api::core::v1 as core;

pub mod lean;
mod owners;
mod volumes;
pub use owners::{
    replica_set_selector, replication_controller_selector, service_selector, stateful_set_selector,
};
pub use volumes::{
    BETA_STORAGE_CLASS_ANNOTATION, BIND_COMPLETED_ANNOTATION, DEFAULT_CLASS_ANNOTATION,
    SELECTED_NODE_ANNOTATION, csi_node, persistent_volume, persistent_volume_claim, storage_class,
};

/// An object the engine cannot use as written.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
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

/// Converts a v1 Pod under current Kubernetes' gates.
pub fn pod(p: &core::Pod, symbols: &mut Symbols) -> Result<Pod, ConvertError> {
    pod_with(p, symbols, RequestOptions::default())
}

/// Converts a v1 Pod, its requests computed under `options`.
pub fn pod_with(
    p: &core::Pod,
    symbols: &mut Symbols,
    options: RequestOptions,
) -> Result<Pod, ConvertError> {
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
                ("apps/v1", "DaemonSet") => ControllerKind::DaemonSet,
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
    let requests = pod_requests_with(spec, p.status.as_ref(), options)
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
            .map(|terms| {
                let preferred = PreferredNodeAffinity::parse(terms, symbols);
                symbols.share_preferred_node_affinity(preferred)
            }),
        affinity: {
            let affinity = PodAffinity::parse(spec.affinity.as_ref(), namespace, &labels, symbols);
            symbols.share_pod_affinity(affinity)
        },
        requests,
        host_ports: host_ports(spec),
        images: {
            let images: Vec<Box<str>> = spec
                .init_containers
                .iter()
                .flatten()
                .chain(&spec.containers)
                .map(|c| normalized_image_name(c.image.as_deref().unwrap_or("")).into())
                .collect();
            symbols.share_images(&images)
        },
        init_images: spec.init_containers.as_ref().map_or(0, Vec::len),
        scheduling_gates: spec
            .scheduling_gates
            .iter()
            .flatten()
            .map(|g| g.name.as_str().into())
            .collect(),
        volumes: volumes::pod_volumes(&name, spec),
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
        required_node_affinity: {
            let required = required_node_affinity(spec, symbols);
            symbols.share_required_node_affinity(required)
        },
        tolerations: {
            let list = tolerations(spec, &object)?;
            symbols.share_tolerations(&list)
        },
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
            .collect::<Result<Vec<_>, _>>()
            .map(|list| symbols.share_constraints(&list))?,
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
pub(crate) fn spread_constraint(
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
