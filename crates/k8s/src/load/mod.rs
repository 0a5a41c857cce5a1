//! Kubernetes manifests from YAML or JSON text, typed with k8s-openapi: multi-document
//! files, `kind: List` and typed lists (`NodeList`, `PodList`: what `kubectl get -o yaml`
//! and the API return), concatenated JSON lists (`kubectl cluster-info dump`). Objects of
//! kinds the scheduler does not read (custom resources included) are skipped with a
//! [`Note`]. Pure: the caller reads the file; errors name the file, the object and the
//! field.

mod compact;
mod json;
mod lenient;
mod position;
mod stream;
mod yaml_json;

pub use compact::{CompactPod, Compactor, EvictionBlockers};
pub use stream::{
    parse_manifests_reader, parse_manifests_reader_compact, parse_manifests_reader_with,
};

use crate::notes::Note;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{
    LimitRange, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod,
    ReplicationController, ResourceQuota, Service,
};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use lenient::Lenient;
use position::{Origin, PlacedLocalizer};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;

/// Why manifests could not be loaded. Every variant names where.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadError {
    /// The text is not YAML.
    #[error("{file}: invalid YAML: {message}")]
    Yaml {
        /// The file.
        file: String,
        /// What the parser said (with line and column).
        message: String,
    },
    /// A document has no `kind`.
    #[error(
        "{file}: document {document}: kind: Required value: every object needs apiVersion and kind"
    )]
    MissingKind {
        /// The file.
        file: String,
        /// The document's position (1-based).
        document: usize,
    },
    /// The text is not JSON (it starts as JSON does).
    #[error("{file}: invalid JSON: {message}")]
    Json {
        /// The file.
        file: String,
        /// What the parser said, with line and column in the file.
        message: String,
    },
    /// A list's `items` is not a list.
    #[error(
        "{file}: document {document}: {kind}: items: Invalid value: {found}: must be a list of objects"
    )]
    NotAList {
        /// The file.
        file: String,
        /// The document's position (1-based).
        document: usize,
        /// The list's kind (`List`, `PodList`, ...).
        kind: String,
        /// What `items` holds instead (`object`, `string`, ...).
        found: &'static str,
    },
    /// Lists nested deeper than any kubectl output.
    #[error("{file}: document {document}: lists nested more than {MAX_LIST_DEPTH} deep")]
    TooDeep {
        /// The file.
        file: String,
        /// The document's position (1-based).
        document: usize,
    },
    /// A field has the wrong type or value.
    #[error("{file}: {object}: {field}: {message}")]
    Field {
        /// The file.
        file: String,
        /// The object, as `kind/name`.
        object: String,
        /// The field path.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The input could not be read (an I/O error, the byte cap, text that is not UTF-8).
    #[error("{file}: {message}")]
    Read {
        /// The file.
        file: String,
        /// What went wrong.
        message: String,
    },
    /// The source of manifests rather than manifests: a kustomization, a Helm template.
    #[error("{file}: {what}; render it: `{render} | topospread ... -f -`")]
    Unrendered {
        /// The file (or folder).
        file: String,
        /// What it is, naming the object when there is one.
        what: String,
        /// The command that renders it (`kubectl kustomize DIR`).
        render: String,
    },
    /// A field the object's type does not have (a typo, or a newer API).
    #[error("{file}: {object}: {field}: unknown field")]
    UnknownField {
        /// The file.
        file: String,
        /// The object, as `kind/name`.
        object: String,
        /// The field path.
        field: String,
    },
}

/// Where an object came from: file and document (and item, inside a `List`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// The file name as given.
    pub file: String,
    /// The YAML document (1-based).
    pub document: usize,
    /// The item inside a `kind: List` document (0-based), if any.
    pub item: Option<usize>,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.item {
            Some(i) => write!(f, "{} (document {}, items[{i}])", self.file, self.document),
            None => write!(f, "{} (document {})", self.file, self.document),
        }
    }
}

/// A typed Kubernetes object, boxed: a dump holds tens of thousands, and the types differ
/// in size by kilobytes.
#[derive(Clone, Debug)]
pub enum Object {
    /// A v1 Node.
    Node(Box<Node>),
    /// A v1 Pod.
    Pod(Box<Pod>),
    /// A v1 Service.
    Service(Box<Service>),
    /// An apps/v1 ReplicaSet.
    ReplicaSet(Box<ReplicaSet>),
    /// A v1 ReplicationController.
    ReplicationController(Box<ReplicationController>),
    /// An apps/v1 StatefulSet.
    StatefulSet(Box<StatefulSet>),
    /// An apps/v1 Deployment.
    Deployment(Box<Deployment>),
    /// An apps/v1 DaemonSet.
    DaemonSet(Box<DaemonSet>),
    /// A batch/v1 Job.
    Job(Box<Job>),
    /// A batch/v1 CronJob.
    CronJob(Box<CronJob>),
    /// A scheduling.k8s.io/v1 PriorityClass.
    PriorityClass(Box<PriorityClass>),
    /// A policy/v1 PodDisruptionBudget.
    PodDisruptionBudget(Box<PodDisruptionBudget>),
    /// A v1 Namespace (its labels, read by pod affinity's `namespaceSelector`).
    Namespace(Box<Namespace>),
    /// A v1 PersistentVolumeClaim (the volume plugins read it).
    PersistentVolumeClaim(Box<PersistentVolumeClaim>),
    /// A v1 PersistentVolume.
    PersistentVolume(Box<PersistentVolume>),
    /// A storage.k8s.io/v1 StorageClass.
    StorageClass(Box<StorageClass>),
    /// A storage.k8s.io/v1 CSINode (per-driver volume limits and topology keys).
    CsiNode(Box<CSINode>),
    /// A v1 LimitRange (the LimitRanger admission plugin's defaults and bounds).
    LimitRange(Box<LimitRange>),
    /// A node.k8s.io/v1 RuntimeClass (the RuntimeClass admission plugin's overhead and
    /// scheduling).
    RuntimeClass(Box<RuntimeClass>),
    /// A v1 ResourceQuota (the ResourceQuota admission plugin's limits on pods).
    ResourceQuota(Box<ResourceQuota>),
    /// A built-in kind in an apiVersion some supported release does not serve (a
    /// `policy/v1beta1` PodDisruptionBudget, a `resource.k8s.io/v1` ResourceClaim before
    /// 1.34): not read, refused by itself in such a release (see [`api_serving`]).
    Unserved(Box<Unserved>),
    /// A `kubescheduler.config.k8s.io/v1` KubeSchedulerConfiguration, untyped here.
    SchedulerConfiguration(Value),
    /// A v1 Pod bound to a node, read in compact form (see [`Compactor`]): it has no
    /// k8s-openapi object, so no [`Object::metadata`].
    CompactPod(Box<CompactPod>),
}

impl Object {
    /// Drops what nothing here reads and a dump is full of (`managedFields`, the API
    /// server's record of field ownership, which only the value-tree reader builds: the
    /// fast route skips it while typing), and gives back the room lists were read into:
    /// a one-container pod's lists otherwise hold room for four, kilobytes per pod.
    /// Used on every object the loader reads, and on a live cluster's listed objects.
    pub fn drop_unread(&mut self) {
        if let Some(meta) = self.metadata_mut() {
            meta.managed_fields = None;
            shrink(&mut meta.owner_references);
        }
        match self {
            Object::Pod(p) => {
                if let Some(spec) = p.spec.as_mut() {
                    shrink_pod_spec(spec);
                }
                if let Some(status) = p.status.as_mut() {
                    shrink(&mut status.conditions);
                    shrink(&mut status.container_statuses);
                    shrink(&mut status.init_container_statuses);
                    shrink(&mut status.host_ips);
                    shrink(&mut status.pod_ips);
                }
            }
            Object::Node(n) => {
                if let Some(status) = n.status.as_mut() {
                    shrink(&mut status.conditions);
                    shrink(&mut status.addresses);
                    shrink(&mut status.images);
                }
                if let Some(spec) = n.spec.as_mut() {
                    shrink(&mut spec.taints);
                }
            }
            _ => {}
        }
    }

    /// The object's metadata (`None` for a scheduler configuration, which has none).
    pub fn metadata(&self) -> Option<&ObjectMeta> {
        Some(match self {
            Object::Node(o) => &o.metadata,
            Object::Pod(o) => &o.metadata,
            Object::Service(o) => &o.metadata,
            Object::ReplicaSet(o) => &o.metadata,
            Object::ReplicationController(o) => &o.metadata,
            Object::StatefulSet(o) => &o.metadata,
            Object::Deployment(o) => &o.metadata,
            Object::DaemonSet(o) => &o.metadata,
            Object::Job(o) => &o.metadata,
            Object::CronJob(o) => &o.metadata,
            Object::PriorityClass(o) => &o.metadata,
            Object::PodDisruptionBudget(o) => &o.metadata,
            Object::Namespace(o) => &o.metadata,
            Object::PersistentVolumeClaim(o) => &o.metadata,
            Object::PersistentVolume(o) => &o.metadata,
            Object::StorageClass(o) => &o.metadata,
            Object::CsiNode(o) => &o.metadata,
            Object::LimitRange(o) => &o.metadata,
            Object::RuntimeClass(o) => &o.metadata,
            Object::ResourceQuota(o) => &o.metadata,
            Object::Unserved(o) => &o.metadata,
            Object::SchedulerConfiguration(_) | Object::CompactPod(_) => return None,
        })
    }

    /// The object's metadata, to change it (see [`Object::metadata`]).
    pub fn metadata_mut(&mut self) -> Option<&mut ObjectMeta> {
        Some(match self {
            Object::Node(o) => &mut o.metadata,
            Object::Pod(o) => &mut o.metadata,
            Object::Service(o) => &mut o.metadata,
            Object::ReplicaSet(o) => &mut o.metadata,
            Object::ReplicationController(o) => &mut o.metadata,
            Object::StatefulSet(o) => &mut o.metadata,
            Object::Deployment(o) => &mut o.metadata,
            Object::DaemonSet(o) => &mut o.metadata,
            Object::Job(o) => &mut o.metadata,
            Object::CronJob(o) => &mut o.metadata,
            Object::PriorityClass(o) => &mut o.metadata,
            Object::PodDisruptionBudget(o) => &mut o.metadata,
            Object::Namespace(o) => &mut o.metadata,
            Object::PersistentVolumeClaim(o) => &mut o.metadata,
            Object::PersistentVolume(o) => &mut o.metadata,
            Object::StorageClass(o) => &mut o.metadata,
            Object::CsiNode(o) => &mut o.metadata,
            Object::LimitRange(o) => &mut o.metadata,
            Object::RuntimeClass(o) => &mut o.metadata,
            Object::ResourceQuota(o) => &mut o.metadata,
            Object::Unserved(o) => &mut o.metadata,
            Object::SchedulerConfiguration(_) | Object::CompactPod(_) => return None,
        })
    }

    /// The object's kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Object::Node(_) => "Node",
            Object::Pod(_) | Object::CompactPod(_) => "Pod",
            Object::Service(_) => "Service",
            Object::ReplicaSet(_) => "ReplicaSet",
            Object::ReplicationController(_) => "ReplicationController",
            Object::StatefulSet(_) => "StatefulSet",
            Object::Deployment(_) => "Deployment",
            Object::DaemonSet(_) => "DaemonSet",
            Object::Job(_) => "Job",
            Object::CronJob(_) => "CronJob",
            Object::PriorityClass(_) => "PriorityClass",
            Object::PodDisruptionBudget(_) => "PodDisruptionBudget",
            Object::Namespace(_) => "Namespace",
            Object::PersistentVolumeClaim(_) => "PersistentVolumeClaim",
            Object::PersistentVolume(_) => "PersistentVolume",
            Object::StorageClass(_) => "StorageClass",
            Object::CsiNode(_) => "CSINode",
            Object::LimitRange(_) => "LimitRange",
            Object::RuntimeClass(_) => "RuntimeClass",
            Object::ResourceQuota(_) => "ResourceQuota",
            Object::Unserved(o) => o.kind,
            Object::SchedulerConfiguration(_) => "KubeSchedulerConfiguration",
        }
    }
}

/// A built-in kind written in an apiVersion some simulated release does not serve.
#[derive(Clone, Debug)]
pub struct Unserved {
    /// The kind, as the loader names it.
    pub kind: &'static str,
    /// `apiVersion` as written.
    pub api_version: String,
    /// The releases that serve it, and the apiVersion to use outside them.
    pub served: ServedApi,
    /// Its metadata (what of it reads).
    pub metadata: ObjectMeta,
}

/// Which releases serve an apiVersion of a kind by default, and what to use outside them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServedApi {
    /// The first minor release (1.x) that serves it; 0 when every simulated one does.
    pub introduced_in: u32,
    /// The minor release that stopped serving it, if one did.
    pub removed_in: Option<u32>,
    /// The apiVersion to use instead (empty when no other is served by default).
    pub replacement: &'static str,
}

impl ServedApi {
    /// Whether release 1.`minor` serves it.
    pub fn served_in(&self, minor: u32) -> bool {
        minor >= self.introduced_in && self.removed_in.is_none_or(|r| minor < r)
    }

    /// Whether some release topospread simulates serves it.
    pub fn ever_served(&self) -> bool {
        (topospread::version::OLDEST_MINOR..=topospread::version::NEWEST_MINOR)
            .any(|m| self.served_in(m))
    }
}

/// Built-in kinds' apiVersions that some release topospread simulates (1.25 to 1.38) does
/// not serve by default: (apiVersion, kind, first release serving it (0: before 1.25),
/// release that stopped serving it, what to use outside those). Removals follow the
/// deprecated API migration guide (kubernetes.io/docs/reference/using-api/deprecation-guide);
/// introductions its "available since", or the release whose OpenAPI specification first
/// holds the GA version (k8s-openapi's `v1_34` holds `resource.k8s.io/v1` and
/// `storage.k8s.io/v1` VolumeAttributesClass, its `v1_33` neither).
const VERSIONED_APIS: &[(&str, &str, u32, Option<u32>, &str)] = &[
    ("extensions/v1beta1", "Deployment", 0, Some(16), "apps/v1"),
    ("extensions/v1beta1", "DaemonSet", 0, Some(16), "apps/v1"),
    ("extensions/v1beta1", "ReplicaSet", 0, Some(16), "apps/v1"),
    (
        "extensions/v1beta1",
        "NetworkPolicy",
        0,
        Some(16),
        "networking.k8s.io/v1",
    ),
    (
        "extensions/v1beta1",
        "PodSecurityPolicy",
        0,
        Some(16),
        "policy/v1beta1",
    ),
    ("apps/v1beta1", "Deployment", 0, Some(16), "apps/v1"),
    ("apps/v1beta1", "StatefulSet", 0, Some(16), "apps/v1"),
    ("apps/v1beta2", "Deployment", 0, Some(16), "apps/v1"),
    ("apps/v1beta2", "DaemonSet", 0, Some(16), "apps/v1"),
    ("apps/v1beta2", "ReplicaSet", 0, Some(16), "apps/v1"),
    ("apps/v1beta2", "StatefulSet", 0, Some(16), "apps/v1"),
    (
        "extensions/v1beta1",
        "Ingress",
        0,
        Some(22),
        "networking.k8s.io/v1",
    ),
    (
        "networking.k8s.io/v1beta1",
        "Ingress",
        0,
        Some(22),
        "networking.k8s.io/v1",
    ),
    (
        "networking.k8s.io/v1beta1",
        "IngressClass",
        0,
        Some(22),
        "networking.k8s.io/v1",
    ),
    (
        "scheduling.k8s.io/v1beta1",
        "PriorityClass",
        0,
        Some(22),
        "scheduling.k8s.io/v1",
    ),
    (
        "scheduling.k8s.io/v1alpha1",
        "PriorityClass",
        0,
        Some(22),
        "scheduling.k8s.io/v1",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "ClusterRole",
        0,
        Some(22),
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "ClusterRoleBinding",
        0,
        Some(22),
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "Role",
        0,
        Some(22),
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "RoleBinding",
        0,
        Some(22),
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "apiextensions.k8s.io/v1beta1",
        "CustomResourceDefinition",
        0,
        Some(22),
        "apiextensions.k8s.io/v1",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration",
        0,
        Some(22),
        "admissionregistration.k8s.io/v1",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "ValidatingWebhookConfiguration",
        0,
        Some(22),
        "admissionregistration.k8s.io/v1",
    ),
    (
        "apiregistration.k8s.io/v1beta1",
        "APIService",
        0,
        Some(22),
        "apiregistration.k8s.io/v1",
    ),
    (
        "coordination.k8s.io/v1beta1",
        "Lease",
        0,
        Some(22),
        "coordination.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "CSIDriver",
        0,
        Some(22),
        "storage.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "CSINode",
        0,
        Some(22),
        "storage.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "StorageClass",
        0,
        Some(22),
        "storage.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "VolumeAttachment",
        0,
        Some(22),
        "storage.k8s.io/v1",
    ),
    ("batch/v1beta1", "CronJob", 0, Some(25), "batch/v1"),
    (
        "discovery.k8s.io/v1beta1",
        "EndpointSlice",
        0,
        Some(25),
        "discovery.k8s.io/v1",
    ),
    (
        "events.k8s.io/v1beta1",
        "Event",
        0,
        Some(25),
        "events.k8s.io/v1",
    ),
    (
        "autoscaling/v2beta1",
        "HorizontalPodAutoscaler",
        0,
        Some(25),
        "autoscaling/v2",
    ),
    (
        "policy/v1beta1",
        "PodDisruptionBudget",
        0,
        Some(25),
        "policy/v1",
    ),
    (
        "policy/v1beta1",
        "PodSecurityPolicy",
        0,
        Some(25),
        "(none: removed)",
    ),
    (
        "node.k8s.io/v1beta1",
        "RuntimeClass",
        0,
        Some(25),
        "node.k8s.io/v1",
    ),
    // Removed after 1.25: served by the releases before (deprecation guide, "v1.26",
    // "v1.27", "v1.29", "v1.32").
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "FlowSchema",
        0,
        Some(26),
        "flowcontrol.apiserver.k8s.io/v1beta3",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "PriorityLevelConfiguration",
        0,
        Some(26),
        "flowcontrol.apiserver.k8s.io/v1beta3",
    ),
    (
        "autoscaling/v2beta2",
        "HorizontalPodAutoscaler",
        0,
        Some(26),
        "autoscaling/v2",
    ),
    (
        "storage.k8s.io/v1beta1",
        "CSIStorageCapacity",
        0,
        Some(27),
        "storage.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "FlowSchema",
        0,
        Some(29),
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "PriorityLevelConfiguration",
        0,
        Some(29),
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    // Introduced after 1.25 (the guide's "available since"; for the others, the first
    // release whose OpenAPI specification holds the GA version), then removed or not.
    (
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "FlowSchema",
        26,
        Some(32),
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "PriorityLevelConfiguration",
        26,
        Some(32),
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1",
        "FlowSchema",
        29,
        None,
        "flowcontrol.apiserver.k8s.io/v1beta2",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1",
        "PriorityLevelConfiguration",
        29,
        None,
        "flowcontrol.apiserver.k8s.io/v1beta2",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicy",
        30,
        None,
        "",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicyBinding",
        30,
        None,
        "",
    ),
    ("networking.k8s.io/v1", "ServiceCIDR", 33, None, ""),
    ("networking.k8s.io/v1", "IPAddress", 33, None, ""),
    ("resource.k8s.io/v1", "DeviceClass", 34, None, ""),
    ("resource.k8s.io/v1", "ResourceClaim", 34, None, ""),
    ("resource.k8s.io/v1", "ResourceClaimTemplate", 34, None, ""),
    ("resource.k8s.io/v1", "ResourceSlice", 34, None, ""),
    ("storage.k8s.io/v1", "VolumeAttributesClass", 34, None, ""),
];

/// Which releases serve `kind` in `api_version`, when not every simulated release does.
pub fn api_serving(kind: &str, api_version: &str) -> Option<(&'static str, ServedApi)> {
    VERSIONED_APIS
        .iter()
        .find(|(v, k, _, _, _)| *v == api_version && *k == kind)
        .map(|&(_, k, introduced_in, removed_in, replacement)| {
            (
                k,
                ServedApi {
                    introduced_in,
                    removed_in,
                    replacement,
                },
            )
        })
}

/// An object with where it came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// Where it came from.
    pub source: Source,
    /// The object.
    pub object: Object,
}

/// What one file held.
#[derive(Clone, Debug, Default)]
pub struct Manifests {
    /// The objects, in file order.
    pub objects: Vec<Loaded>,
    /// Objects skipped on purpose (kinds the scheduler does not read), one note each.
    pub skipped: Vec<Note>,
    /// Converts bound pods to compact form as they are read, when asked for.
    compactor: Option<Compactor>,
    /// How many objects have been offered to the compactor.
    compacted: usize,
    /// How many threads read a list's items (0: one per core, up to 8).
    workers: usize,
    /// Fields the objects' types lack, when collected ([`Manifests::collecting_unknown_fields`]).
    pub unknown_fields: Vec<UnknownField>,
    /// Whether an unknown field is collected instead of failing the file.
    collect_unknown: bool,
    /// The unknown fields of the object being typed.
    pending_unknown: Vec<String>,
}

/// A field an object's type does not have (a typo such as `allowPrivilegedEscalation`),
/// collected while the rest of the object loads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownField {
    /// Where the object is.
    pub source: Source,
    /// The object, as `kind/name`.
    pub object: String,
    /// The field path.
    pub field: String,
}

impl Manifests {
    /// Bound pods read from now on are compacted by `compactor` (none: kept whole).
    pub fn set_compactor(&mut self, compactor: Option<Compactor>) {
        self.compactor = compactor;
        self.compacted = self.objects.len();
    }

    /// The compactor, given back (with its symbols) for the next input or the build.
    pub fn take_compactor(&mut self) -> Option<Compactor> {
        self.compactor.take()
    }

    /// Manifests whose objects load past unknown fields, each kept in
    /// [`Manifests::unknown_fields`] (for `validate`, which reports them all).
    pub fn collecting_unknown_fields() -> Self {
        Self {
            collect_unknown: true,
            ..Self::default()
        }
    }
}

impl Manifests {
    /// Offers the objects read since the last call to the compactor, if there is one.
    fn compact_new(&mut self) {
        let Some(compactor) = self.compactor.as_mut() else {
            return;
        };
        let from = self.compacted.min(self.objects.len());
        compactor.compact(&mut self.objects[from..]);
        self.compacted = self.objects.len();
    }
}

/// How deep `kind: List` documents may nest (kubectl flattens nested lists).
pub const MAX_LIST_DEPTH: usize = 4;

/// Built-in kinds that carry nothing the scheduler reads: skipped with a note saying so.
/// Any other kind the loader does not read (a custom resource) is skipped as well.
const SKIPPED_KINDS: &[&str] = &[
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "Endpoints",
    "EndpointSlice",
    "Event",
    "HorizontalPodAutoscaler",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
    "Ingress",
    "IngressClass",
    "NetworkPolicy",
    "ControllerRevision",
    "Lease",
    "CustomResourceDefinition",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "APIService",
];

/// Kinds the default profile's plugins read that topospread does not model: each is
/// skipped with a note saying so (never "does not affect scheduling"), by API group.
const UNMODELLED_KINDS: &[(&str, &str, &str)] = &[
    (
        "CSIDriver",
        "storage.k8s.io",
        "read by the scheduler's volume plugins (VolumeBinding reads spec.storageCapacity) but not modelled",
    ),
    (
        "CSIStorageCapacity",
        "storage.k8s.io",
        "read by the scheduler (VolumeBinding's storage capacity check for WaitForFirstConsumer claims) but not modelled: claims are provisioned as if every node had room, so \"node(s) did not have enough free storage\" never appears",
    ),
    (
        "VolumeAttachment",
        "storage.k8s.io",
        "not modelled: a node's attached CSI volumes are counted from the pods bound to it",
    ),
    (
        "ResourceClaim",
        "resource.k8s.io",
        "read by the scheduler (DynamicResources) but not modelled: no device is allocated",
    ),
    (
        "ResourceClaimTemplate",
        "resource.k8s.io",
        "read by the scheduler (DynamicResources) but not modelled: no device is allocated",
    ),
    (
        "ResourceSlice",
        "resource.k8s.io",
        "read by the scheduler (DynamicResources) but not modelled: no device is allocated",
    ),
    (
        "DeviceClass",
        "resource.k8s.io",
        "read by the scheduler (DynamicResources, and NodeResourcesFit for the extended resource a class names in spec.extendedResourceName) but not modelled: no device is allocated",
    ),
    (
        "DeviceTaintRule",
        "resource.k8s.io",
        "read by the scheduler (DynamicResources) but not modelled: no device is allocated",
    ),
    (
        "Workload",
        "scheduling.k8s.io",
        "read by the scheduler (gang scheduling of the pods that name it) but not modelled: each pod is scheduled on its own",
    ),
    (
        "PodGroup",
        "scheduling.k8s.io",
        "read by the scheduler (gang scheduling of the pods that name it) but not modelled: each pod is scheduled on its own",
    ),
];

/// The note for a kind the scheduler reads and topospread does not model, if `kind`
/// (of `api_version`'s group) is one.
fn unmodelled_kind(kind: &str, api_version: &str) -> Option<&'static str> {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    UNMODELLED_KINDS
        .iter()
        .find(|(k, g, _)| *k == kind && *g == group)
        .map(|(_, _, message)| *message)
}

/// Parses YAML text into its non-empty documents, under generous but finite limits
/// (so a hostile file fails with a message, not an exhausted machine).
pub fn parse_yaml_documents(text: &str, file: &str) -> Result<Vec<Value>, LoadError> {
    parse_yaml_documents_at(text, file, &Origin::file())
}

/// [`parse_yaml_documents`] of a piece of the file whose lines are where `origin` says:
/// the parser's locations are written as the file's.
fn parse_yaml_documents_at(
    text: &str,
    file: &str,
    origin: &Origin,
) -> Result<Vec<Value>, LoadError> {
    let docs: Vec<Value> =
        serde_saphyr::from_multiple_with_options(text, yaml_options()).map_err(|e| {
            let localizer = PlacedLocalizer { origin };
            let formatter = serde_saphyr::DefaultMessageFormatter.with_localizer(&localizer);
            let rendered = e.render_with_options(serde_saphyr::RenderOptions::new(&formatter));
            // The renderer adds a source excerpt on later lines; the first says it all.
            let first = rendered.lines().next().unwrap_or("");
            LoadError::Yaml {
                file: file.to_string(),
                message: first.strip_prefix("error: ").unwrap_or(first).to_string(),
            }
        })?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// The YAML parser's options: YAML 1.2 booleans (`true`/`false` only, so
/// `nodeTaintsPolicy: y` stays the string "y"), and generous but finite budgets.
fn yaml_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    if let Some(budget) = options.budget.as_mut() {
        budget.max_events = 50_000_000;
        budget.max_nodes = 20_000_000;
        budget.max_documents = 200_000;
        budget.max_total_scalar_bytes = 512 * 1024 * 1024;
    }
    options
}

/// The JSON type name of a value, for messages.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The documents of a file: JSON (one object, an array, or a `kubectl cluster-info dump`
/// stream) through serde_json, anything else through the YAML parser.
pub fn parse_documents(text: &str, file: &str) -> Result<Vec<Value>, LoadError> {
    if json::looks_like_json(text) {
        json::documents(text, file)
    } else {
        parse_yaml_documents(text, file)
    }
}

/// Parses every manifest in a YAML or JSON file (see [`parse_manifests_reader`]).
pub fn parse_manifests(text: &str, file: &str) -> Result<Manifests, LoadError> {
    parse_manifests_reader(text.as_bytes(), file)
}

/// Parses every manifest through one value tree per document: the reference the
/// streaming reader is checked against.
#[cfg(test)]
pub(crate) fn parse_manifests_tree(text: &str, file: &str) -> Result<Manifests, LoadError> {
    let mut out = Manifests::default();
    for (i, doc) in parse_documents(text, file)?.iter().enumerate() {
        let source = Source {
            file: file.to_string(),
            document: i + 1,
            item: None,
        };
        parse_document(doc, &source, None, 0, &mut out)?;
    }
    Ok(out)
}

/// Whether `value` is a list: `kind: List`, or a typed list (`PodList`, any `*List`)
/// holding `items`.
fn is_list(kind: &str, value: &Value) -> bool {
    kind == "List" || (kind.ends_with("List") && value.get("items").is_some())
}

/// One document, or one item of a list: lists are flattened (their items take the list's
/// kind and apiVersion when they leave theirs out, as the API's typed lists do).
fn parse_document(
    value: &Value,
    source: &Source,
    list: Option<(&str, &str)>,
    depth: usize,
    out: &mut Manifests,
) -> Result<(), LoadError> {
    let kind = value.get("kind").and_then(Value::as_str);
    let Some(kind) = kind.or(list.map(|(k, _)| k)) else {
        return Err(LoadError::MissingKind {
            file: source.file.clone(),
            document: source.document,
        });
    };
    if !is_list(kind, value) {
        if value.get("kind").is_some() || list.is_none() {
            return parse_object(value, source.clone(), out);
        }
        // A typed list's item: kind and apiVersion from the list.
        let mut typed = value.clone();
        if let (Some(map), Some((kind, api_version))) = (typed.as_object_mut(), list) {
            map.insert("kind".into(), Value::String(kind.into()));
            map.entry("apiVersion")
                .or_insert_with(|| Value::String(api_version.into()));
        }
        return parse_object(&typed, source.clone(), out);
    }
    if depth >= MAX_LIST_DEPTH {
        return Err(LoadError::TooDeep {
            file: source.file.clone(),
            document: source.document,
        });
    }
    let items = match value.get("items") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(LoadError::NotAList {
                file: source.file.clone(),
                document: source.document,
                kind: kind.to_string(),
                found: type_name(other),
            });
        }
    };
    let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
    let api_version = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    for (j, item) in items.iter().enumerate() {
        let source = Source {
            item: Some(source.item.unwrap_or(j)),
            ..source.clone()
        };
        parse_document(
            item,
            &source,
            item_kind.map(|k| (k, api_version)),
            depth + 1,
            out,
        )?;
    }
    Ok(())
}

/// `kind/name` for messages, as kubectl names objects; control characters escaped, so a
/// hostile name cannot drive the terminal.
pub fn object_name(kind: &str, value: &Value) -> String {
    let name = value.pointer("/metadata/name").and_then(Value::as_str);
    let generate = value
        .pointer("/metadata/generateName")
        .and_then(Value::as_str);
    let name = match (name, generate) {
        (Some(n), _) if !n.is_empty() => escape_control(n),
        (_, Some(g)) if !g.is_empty() => format!("{}<generated>", escape_control(g)),
        _ => "<unnamed>".to_string(),
    };
    let kind = escape_control(&kind.to_lowercase());
    match value.pointer("/metadata/namespace").and_then(Value::as_str) {
        Some(ns) => format!("{kind}/{name} (namespace {})", escape_control(ns)),
        None => format!("{kind}/{name}"),
    }
}

/// `s` with control characters (and only those) written as Rust escapes (`\n`,
/// `\u{1b}`), for printing names that came from input.
pub fn escape_control(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Parses one object (a document or a `List` item) into `out`, with errors naming its
/// file and position.
pub fn parse_object(value: &Value, source: Source, out: &mut Manifests) -> Result<(), LoadError> {
    let file = source.file.clone();
    let document = source.document;
    let Some(kind) = value.get("kind").and_then(Value::as_str) else {
        return Err(LoadError::MissingKind { file, document });
    };
    let api_version = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let what = object_name(kind, value);
    if is_kustomization(kind, &api_version) {
        return Err(LoadError::Unrendered {
            what: format!(
                "{what}: a kustomize {kind}, which kubectl kustomize renders into manifests"
            ),
            render: format!("kubectl kustomize {}", kustomize_dir(&file)),
            file,
        });
    }
    if let Some((kind, served)) = api_serving(kind, &api_version) {
        // Only its metadata is read (leniently: the rest is another release's schema).
        let metadata = value
            .get("metadata")
            .and_then(|m| serde_json::from_value::<ObjectMeta>(m.clone()).ok())
            .unwrap_or_default();
        if served.ever_served() {
            // Where it is served, it is a kind like any other the scheduler does not read.
            let message = match unmodelled_kind(kind, &api_version) {
                Some(why) => format!("skipped: kind {kind} ({api_version}) {why}"),
                None => {
                    format!("skipped: kind {kind} ({api_version}) is not read by the scheduler")
                }
            };
            out.skipped
                .push(Note::new(format!("{}: {what}", source.file), message));
        }
        out.objects.push(Loaded {
            source,
            object: Object::Unserved(Box::new(Unserved {
                kind,
                api_version,
                served,
                metadata,
            })),
        });
        return Ok(());
    }
    if !builtin(kind, &api_version) {
        // A custom resource that shares a built-in kind's name.
        let message = format!("skipped: kind {kind} ({api_version}) is not read by the scheduler");
        out.skipped
            .push(Note::new(format!("{}: {what}", source.file), message));
        return Ok(());
    }
    let object = match kind {
        "Node" => Object::Node(Box::new(typed_read(value, &file, &what, out)?)),
        "Pod" => Object::Pod(Box::new(typed_read(value, &file, &what, out)?)),
        "Service" => Object::Service(Box::new(typed_read(value, &file, &what, out)?)),
        "ReplicaSet" => Object::ReplicaSet(Box::new(typed_read(value, &file, &what, out)?)),
        "ReplicationController" => {
            Object::ReplicationController(Box::new(typed_read(value, &file, &what, out)?))
        }
        "StatefulSet" => Object::StatefulSet(Box::new(typed_read(value, &file, &what, out)?)),
        "Deployment" => Object::Deployment(Box::new(typed_read(value, &file, &what, out)?)),
        "DaemonSet" => Object::DaemonSet(Box::new(typed_read(value, &file, &what, out)?)),
        "Job" => Object::Job(Box::new(typed_read(value, &file, &what, out)?)),
        "CronJob" => Object::CronJob(Box::new(typed_read(value, &file, &what, out)?)),
        "PriorityClass" => Object::PriorityClass(Box::new(typed_read(value, &file, &what, out)?)),
        "PodDisruptionBudget" => {
            Object::PodDisruptionBudget(Box::new(typed_read(value, &file, &what, out)?))
        }
        "Namespace" => Object::Namespace(Box::new(typed_read(value, &file, &what, out)?)),
        "LimitRange" => Object::LimitRange(Box::new(typed_read(value, &file, &what, out)?)),
        "RuntimeClass" => Object::RuntimeClass(Box::new(typed_read(value, &file, &what, out)?)),
        "ResourceQuota" => Object::ResourceQuota(Box::new(typed_read(value, &file, &what, out)?)),
        "PersistentVolumeClaim" => {
            Object::PersistentVolumeClaim(Box::new(typed_read(value, &file, &what, out)?))
        }
        "PersistentVolume" => {
            Object::PersistentVolume(Box::new(typed_read(value, &file, &what, out)?))
        }
        "StorageClass" => Object::StorageClass(Box::new(typed_read(value, &file, &what, out)?)),
        "CSINode" => Object::CsiNode(Box::new(typed_read(value, &file, &what, out)?)),
        "KubeSchedulerConfiguration" => Object::SchedulerConfiguration(value.clone()),
        _ => {
            let message = if let Some(why) = unmodelled_kind(kind, &api_version) {
                format!("skipped: kind {kind} ({api_version}) {why}")
            } else if SKIPPED_KINDS.contains(&kind) {
                format!("skipped: kind {kind} ({api_version}) does not affect scheduling")
            } else {
                format!("skipped: kind {kind} ({api_version}) is not read by the scheduler")
            };
            out.skipped
                .push(Note::new(format!("{}: {what}", source.file), message));
            return Ok(());
        }
    };
    let mut object = object;
    object.drop_unread();
    for field in std::mem::take(&mut out.pending_unknown) {
        out.unknown_fields.push(UnknownField {
            source: source.clone(),
            object: what.clone(),
            field,
        });
    }
    out.objects.push(Loaded { source, object });
    Ok(())
}

fn shrink<T>(v: &mut Option<Vec<T>>) {
    if let Some(v) = v {
        v.shrink_to_fit();
    }
}

fn shrink_pod_spec(spec: &mut k8s_openapi::api::core::v1::PodSpec) {
    spec.containers.shrink_to_fit();
    for c in &mut spec.containers {
        shrink(&mut c.ports);
        shrink(&mut c.env);
        shrink(&mut c.volume_mounts);
    }
    shrink(&mut spec.init_containers);
    shrink(&mut spec.tolerations);
    shrink(&mut spec.volumes);
    shrink(&mut spec.topology_spread_constraints);
}

/// Whether an object is kustomize's own (`Kustomization`, `Component`), which only
/// `kubectl kustomize` reads.
fn is_kustomization(kind: &str, api_version: &str) -> bool {
    let kustomize = api_version.starts_with("kustomize.config.k8s.io/");
    (kind == "Kustomization" && (kustomize || api_version.is_empty()))
        || (kind == "Component" && kustomize)
}

/// The folder `kubectl kustomize` renders for a kustomization read from `file` (`DIR`
/// for stdin).
pub fn kustomize_dir(file: &str) -> String {
    if file == "<stdin>" {
        return "DIR".to_string();
    }
    match std::path::Path::new(file).parent() {
        Some(p) if !p.as_os_str().is_empty() => p.display().to_string(),
        _ => ".".to_string(),
    }
}

/// Whether `kind` in `api_version` is the built-in kind the loader reads (a `Job` of
/// another group, say Volcano's `batch.volcano.sh`, is a custom resource and is not). An
/// object with no apiVersion is taken as the built-in kind.
fn builtin(kind: &str, api_version: &str) -> bool {
    let group = match api_version.rsplit_once('/') {
        Some((group, _)) => group,
        None if api_version.is_empty() => return true,
        None => "",
    };
    match kind {
        "Node"
        | "Pod"
        | "Service"
        | "ReplicationController"
        | "Namespace"
        | "PersistentVolumeClaim"
        | "PersistentVolume"
        | "LimitRange"
        | "ResourceQuota" => group.is_empty(),
        "StorageClass" | "CSINode" => group == "storage.k8s.io",
        "RuntimeClass" => group == "node.k8s.io",
        "ReplicaSet" | "StatefulSet" | "Deployment" | "DaemonSet" => {
            matches!(group, "apps" | "extensions")
        }
        "Job" | "CronJob" => group == "batch",
        "PriorityClass" => group == "scheduling.k8s.io",
        "PodDisruptionBudget" => group == "policy",
        "KubeSchedulerConfiguration" => group == "kubescheduler.config.k8s.io",
        // Skipped either way; the note says which.
        _ => true,
    }
}

/// Whether an object was read back from a server: it carries `metadata.uid`,
/// `metadata.resourceVersion` or a `status`.
fn from_server(value: &Value) -> bool {
    value.pointer("/metadata/uid").is_some()
        || value.pointer("/metadata/resourceVersion").is_some()
        || value.get("status").is_some_and(|s| !s.is_null())
}

/// [`typed`], except that an object read back from a server ([`from_server`]) keeps
/// loading past a field the bundled schema lacks (a newer release wrote it): the field
/// is ignored with a note, one line per field however many objects carry it. Manifests
/// meant for creation stay strict.
fn typed_read<T: DeserializeOwned>(
    value: &Value,
    file: &str,
    object: &str,
    out: &mut Manifests,
) -> Result<T, LoadError> {
    match typed_with(value, file, object, true) {
        Err(LoadError::UnknownField { field, .. }) if from_server(value) => {
            let typed = typed_with(value, file, object, false)?;
            out.skipped.push(Note::new(
                format!("{file}: {object}"),
                format!(
                    "ignored: field {field} is not in the bundled schema (an object read from a newer server)"
                ),
            ));
            Ok(typed)
        }
        Err(LoadError::UnknownField { field, .. }) if out.collect_unknown => {
            let typed = typed_with(value, file, object, false)?;
            out.pending_unknown.push(field);
            Ok(typed)
        }
        other => other,
    }
}

/// Deserializes a typed object strictly: a type error or an unknown field is an error
/// naming the object and the field path.
pub fn typed<T: DeserializeOwned>(value: &Value, file: &str, object: &str) -> Result<T, LoadError> {
    typed_with(value, file, object, true)
}

/// [`typed`]; unknown fields are errors only when `strict`.
fn typed_with<T: DeserializeOwned>(
    value: &Value,
    file: &str,
    object: &str,
    strict: bool,
) -> Result<T, LoadError> {
    let mut unknown: Option<String> = None;
    let mut note = |path: serde_ignored::Path<'_>| {
        if unknown.is_none() {
            unknown = Some(field_path(&path));
        }
    };
    // One callback type for every `T`: with the closure's own type, each kind holding a
    // pod template instantiated the whole PodSpec deserializer again (8 copies, most of
    // this crate's machine code).
    let mut note: &mut dyn FnMut(serde_ignored::Path<'_>) = &mut note;
    let result: Result<T, _> = serde_path_to_error::deserialize(serde_ignored::Deserializer::new(
        Lenient(value),
        &mut note,
    ));
    let typed = result.map_err(|e| {
        let field = e.path().to_string();
        LoadError::Field {
            file: file.to_string(),
            object: object.to_string(),
            field: if field == "." {
                "(object)".into()
            } else {
                field
            },
            message: e.into_inner().to_string(),
        }
    })?;
    if let Some(field) = unknown.filter(|_| strict) {
        return Err(LoadError::UnknownField {
            file: file.to_string(),
            object: object.to_string(),
            field,
        });
    }
    Ok(typed)
}

/// Renders a path as Kubernetes field paths read: `spec.containers[0].name`.
fn field_path(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", field_path(parent)),
        Path::Map { parent, key } => {
            let p = field_path(parent);
            if p.is_empty() {
                key.clone()
            } else {
                format!("{p}.{key}")
            }
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => field_path(parent),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `validate` reads past unknown fields, in documents and in lists' items alike,
    /// and learns each one's object and field; other commands refuse the file.
    #[test]
    fn unknown_fields_are_collected_when_asked() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [], nodeNme: x}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: [{name: c, securityContext: {allowPrivilegedEscalation: false}}]}\n";
        let mut m = Manifests::collecting_unknown_fields();
        parse_manifests_reader_with(text.as_bytes(), "u.yaml", &mut m).expect("reads");
        assert_eq!(m.objects.len(), 2);
        let found: Vec<(&str, &str, usize)> = m
            .unknown_fields
            .iter()
            .map(|u| (u.object.as_str(), u.field.as_str(), u.source.document))
            .collect();
        assert_eq!(
            found,
            [
                ("pod/a", "spec.nodeNme", 1),
                (
                    "pod/b",
                    "spec.containers[0].securityContext.allowPrivilegedEscalation",
                    2
                )
            ]
        );
        let e = parse_manifests(text, "u.yaml").expect_err("strict");
        assert_eq!(e.to_string(), "u.yaml: pod/a: spec.nodeNme: unknown field");
    }

    #[test]
    fn a_kustomization_is_refused_with_the_command_that_renders_it() {
        let text = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n";
        let e = parse_manifests(text, "overlay/kustomization.yaml").expect_err("refused");
        assert_eq!(
            e.to_string(),
            "overlay/kustomization.yaml: kustomization/<unnamed>: a kustomize Kustomization, which kubectl kustomize renders into manifests; render it: `kubectl kustomize overlay | topospread ... -f -`"
        );
        // Another group's Kustomization (Flux's) is a custom resource, skipped.
        let flux = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps}\n";
        assert!(parse_manifests(flux, "flux.yaml").is_ok());
    }

    /// Objects read elsewhere (a live cluster's) are left as the loader leaves its own.
    #[test]
    fn objects_read_elsewhere_drop_what_nothing_reads() {
        let json = r#"{"metadata": {"name": "p", "managedFields": [{"manager": "kubelet"}]},
            "spec": {"containers": [{"name": "c"}]}}"#;
        let pod: Pod = serde_json::from_str(json).expect("types");
        let mut object = Object::Pod(Box::new(pod));
        object.drop_unread();
        let meta = object.metadata().expect("metadata");
        assert_eq!(meta.name.as_deref(), Some("p"));
        assert_eq!(meta.managed_fields, None);
    }

    #[test]
    fn multi_document_and_list() {
        let text = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: 4, pods: 110}}\n---\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p1}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n";
        let m = parse_manifests(text, "f.yaml").expect("parses");
        assert_eq!(m.objects.len(), 2);
        assert_eq!(m.skipped.len(), 1);
        let Object::Node(n) = &m.objects[0].object else {
            panic!("not a node")
        };
        let alloc = n.status.as_ref().and_then(|s| s.allocatable.as_ref());
        assert_eq!(
            alloc.and_then(|a| a.get("cpu")).map(|q| q.0.as_str()),
            Some("4")
        );
        assert_eq!(m.objects[1].source.item, Some(0));
    }

    #[test]
    fn typed_lists_lend_their_items_kind_and_api_version() {
        let text = "{\"apiVersion\": \"v1\", \"kind\": \"NodeList\", \"items\": [{\"metadata\": {\"name\": \"n1\"}}]}\n{\"apiVersion\": \"v1\", \"kind\": \"PodList\", \"items\": [{\"metadata\": {\"name\": \"p\"}}, {\"metadata\": {\"name\": \"q\"}}]}\n{\"apiVersion\": \"v1\", \"kind\": \"EventList\", \"items\": [{\"metadata\": {\"name\": \"e\"}}]}";
        let m = parse_manifests(text, "dump.json").expect("parses");
        let kinds: Vec<&str> = m.objects.iter().map(|l| l.object.kind()).collect();
        assert_eq!(kinds, ["Node", "Pod", "Pod"]);
        assert_eq!(m.objects[2].source.document, 2);
        assert_eq!(m.objects[2].source.item, Some(1));
        assert_eq!(m.skipped.len(), 1);
        assert_eq!(m.skipped[0].subject, "dump.json: event/e");
    }

    #[test]
    fn kinds_the_scheduler_reads_but_topospread_does_not_model_say_so() {
        let text = "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: cap, namespace: kube-system}\nstorageClassName: zonal\n---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: ebs.csi.aws.com}\nspec: {storageCapacity: true}\n---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n---\napiVersion: scheduling.k8s.io/v1alpha3\nkind: Workload\nmetadata: {name: w}\n---\napiVersion: example.com/v1\nkind: DeviceClass\nmetadata: {name: other}\n";
        let m = parse_manifests(text, "s.yaml").expect("parses");
        let notes: Vec<String> = m.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(notes.len(), 5, "{notes:?}");
        assert!(
            notes[0].starts_with("s.yaml: csistoragecapacity/cap (namespace kube-system): skipped: kind CSIStorageCapacity (storage.k8s.io/v1) read by the scheduler (VolumeBinding's storage capacity check"),
            "{}",
            notes[0]
        );
        assert!(
            notes[1].contains(
                "kind CSIDriver (storage.k8s.io/v1) read by the scheduler's volume plugins"
            ),
            "{}",
            notes[1]
        );
        assert!(
            notes[2].contains(
                "kind DeviceClass (resource.k8s.io/v1) read by the scheduler (DynamicResources"
            ),
            "{}",
            notes[2]
        );
        assert!(
            notes[3].contains(
                "kind Workload (scheduling.k8s.io/v1alpha3) read by the scheduler (gang scheduling"
            ),
            "{}",
            notes[3]
        );
        // A custom resource of the same name is another kind.
        assert!(
            notes[4].ends_with("kind DeviceClass (example.com/v1) is not read by the scheduler"),
            "{}",
            notes[4]
        );
        assert!(
            notes
                .iter()
                .all(|n| !n.contains("does not affect scheduling"))
        );
    }

    #[test]
    fn unknown_kinds_and_custom_resources_are_skipped_with_a_note() {
        let text = "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: sm, namespace: mon}\nspec: {anything: [1, 2]}\n---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: vj}\nspec: {minAvailable: 3}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";
        let m = parse_manifests(text, "chart.yaml").expect("skipped, not refused");
        assert!(m.objects.is_empty());
        let lines: Vec<String> = m.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "chart.yaml: servicemonitor/sm (namespace mon): skipped: kind ServiceMonitor (monitoring.coreos.com/v1) is not read by the scheduler",
                "chart.yaml: job/vj: skipped: kind Job (batch.volcano.sh/v1alpha1) is not read by the scheduler",
                "chart.yaml: configmap/c: skipped: kind ConfigMap (v1) does not affect scheduling",
            ]
        );
    }

    #[test]
    fn a_list_whose_items_is_not_a_list_is_refused() {
        let e = parse_manifests("apiVersion: v1\nkind: List\nitems: {a: b}\n", "l.yaml")
            .expect_err("refused");
        assert_eq!(
            e.to_string(),
            "l.yaml: document 1: List: items: Invalid value: object: must be a list of objects"
        );
        let m = parse_manifests(
            "apiVersion: v1\nkind: List\nitems: []\nmetadata: {}\n",
            "l.yaml",
        )
        .expect("an empty list");
        assert!(m.objects.is_empty());
        let e = parse_manifests(
            "apiVersion: v1\nkind: List\nitems: [{metadata: {name: x}}]\n",
            "l.yaml",
        )
        .expect_err("an item of kind: List needs a kind");
        assert!(matches!(e, LoadError::MissingKind { .. }));
    }

    #[test]
    fn fields_a_server_wrote_that_the_schema_lacks_are_noted_not_fatal() {
        let dump = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, uid: u1}\nspec: {futureField: g, containers: [{name: c}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: q, uid: u2}\nspec: {futureField: g, containers: [{name: c}]}\n";
        let m = parse_manifests(dump, "dump.yaml").expect("a dump loads");
        assert_eq!(m.objects.len(), 2);
        let lines = crate::notes::summarize(&m.skipped);
        assert_eq!(
            lines,
            [
                "ignored: field spec.futureField is not in the bundled schema (an object read from a newer server) (2 objects: dump.yaml: pod/p; dump.yaml: pod/q)"
            ]
        );
        // A manifest meant for creation stays strict.
        let e = parse_manifests(&dump.replace(", uid: u1", ""), "m.yaml").expect_err("strict");
        assert_eq!(
            e.to_string(),
            "m.yaml: pod/p: spec.futureField: unknown field"
        );
    }

    #[test]
    fn names_are_printed_without_control_characters() {
        let v = serde_json::json!({"metadata": {"name": "a\u{1b}[31mb\n"}});
        assert_eq!(object_name("Pod", &v), "pod/a\\u{1b}[31mb\\n");
    }

    #[test]
    fn priority_classes_and_disruption_budgets_are_typed() {
        let text = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\npreemptionPolicy: Never\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db}\nspec: {minAvailable: 1, selector: {matchLabels: {app: db}}}\n";
        let m = parse_manifests(text, "f.yaml").expect("parses");
        assert!(m.skipped.is_empty());
        let kinds: Vec<&str> = m.objects.iter().map(|l| l.object.kind()).collect();
        assert_eq!(kinds, ["PriorityClass", "PodDisruptionBudget"]);
        let Object::PriorityClass(pc) = &m.objects[0].object else {
            panic!("not a PriorityClass")
        };
        assert_eq!(pc.value, Some(1000));
    }

    #[test]
    fn unknown_field_and_kind_and_type_errors_name_the_place() {
        let e = parse_manifests(
            "kind: Pod\nmetadata: {name: p}\nspec: {nodeNme: x}\n",
            "a.yaml",
        )
        .expect_err("unknown field");
        assert_eq!(e.to_string(), "a.yaml: pod/p: spec.nodeNme: unknown field");
        let e = parse_manifests(
            "kind: Pod\nmetadata: {name: p}\nspec: {topologySpreadConstraints: [{maxSkew: x}]}\n",
            "a.yaml",
        )
        .expect_err("type error");
        assert!(
            e.to_string()
                .starts_with("a.yaml: pod/p: spec.topologySpreadConstraints[0].maxSkew: ")
        );
        let e = parse_manifests("a: [", "a.yaml").expect_err("bad yaml");
        assert!(matches!(e, LoadError::Yaml { .. }));
    }
}
