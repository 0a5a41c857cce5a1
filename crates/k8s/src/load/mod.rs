//! Kubernetes manifests from YAML text: multi-document files and `kind: List` documents
//! (what `kubectl get ... -o yaml` prints), typed with k8s-openapi. Pure: the caller
//! reads the file; errors name the file, the object and the field.

mod lenient;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{Node, Pod, ReplicationController, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use lenient::Lenient;
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
    /// A document's kind is not one topospread reads or knows to skip.
    #[error(
        "{file}: document {document}: kind: Unsupported value: {kind:?} (apiVersion {api_version:?}); topospread reads Node, Pod, Service, ReplicaSet, ReplicationController, StatefulSet, Deployment, DaemonSet, Job, CronJob, PriorityClass, PodDisruptionBudget, List and KubeSchedulerConfiguration"
    )]
    UnknownKind {
        /// The file.
        file: String,
        /// The document's position (1-based).
        document: usize,
        /// The kind as written.
        kind: String,
        /// The apiVersion as written.
        api_version: String,
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

/// A typed Kubernetes object.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Object {
    /// A v1 Node.
    Node(Node),
    /// A v1 Pod.
    Pod(Pod),
    /// A v1 Service.
    Service(Service),
    /// An apps/v1 ReplicaSet.
    ReplicaSet(ReplicaSet),
    /// A v1 ReplicationController.
    ReplicationController(ReplicationController),
    /// An apps/v1 StatefulSet.
    StatefulSet(StatefulSet),
    /// An apps/v1 Deployment.
    Deployment(Deployment),
    /// An apps/v1 DaemonSet.
    DaemonSet(DaemonSet),
    /// A batch/v1 Job.
    Job(Job),
    /// A batch/v1 CronJob.
    CronJob(CronJob),
    /// A scheduling.k8s.io/v1 PriorityClass.
    PriorityClass(PriorityClass),
    /// A policy/v1 PodDisruptionBudget.
    PodDisruptionBudget(PodDisruptionBudget),
    /// A `kubescheduler.config.k8s.io/v1` KubeSchedulerConfiguration, untyped here.
    SchedulerConfiguration(Value),
}

impl Object {
    /// The object's kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Object::Node(_) => "Node",
            Object::Pod(_) => "Pod",
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
            Object::SchedulerConfiguration(_) => "KubeSchedulerConfiguration",
        }
    }
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
    /// Objects skipped on purpose (kinds that do not affect scheduling), one line each.
    pub skipped: Vec<String>,
}

/// Kinds that carry nothing the scheduler reads: skipped with a note, not an error.
const SKIPPED_KINDS: &[&str] = &[
    "Namespace",
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
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "Ingress",
    "IngressClass",
    "NetworkPolicy",
    "LimitRange",
    "ResourceQuota",
    "ControllerRevision",
    "Lease",
    "RuntimeClass",
    "CustomResourceDefinition",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "APIService",
    "CSIDriver",
    "CSINode",
    "VolumeAttachment",
];

/// Parses YAML text into its non-empty documents, under generous but finite limits
/// (so a hostile file fails with a message, not an exhausted machine).
pub fn parse_yaml_documents(text: &str, file: &str) -> Result<Vec<Value>, LoadError> {
    let mut options = serde_saphyr::Options::default();
    // YAML 1.2 booleans (`true`/`false` only): `nodeTaintsPolicy: y` stays the string "y".
    options.strict_booleans = true;
    if let Some(budget) = options.budget.as_mut() {
        budget.max_events = 50_000_000;
        budget.max_nodes = 20_000_000;
        budget.max_documents = 200_000;
        budget.max_total_scalar_bytes = 512 * 1024 * 1024;
    }
    let docs: Vec<Value> =
        serde_saphyr::from_multiple_with_options(text, options).map_err(|e| LoadError::Yaml {
            file: file.to_string(),
            // The parser adds a source excerpt on later lines; the first says it all.
            message: {
                let text = e.to_string();
                let first = text.lines().next().unwrap_or("");
                first.strip_prefix("error: ").unwrap_or(first).to_string()
            },
        })?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// Parses every manifest in a YAML file.
pub fn parse_manifests(text: &str, file: &str) -> Result<Manifests, LoadError> {
    let mut out = Manifests::default();
    for (i, doc) in parse_yaml_documents(text, file)?.iter().enumerate() {
        let source = Source {
            file: file.to_string(),
            document: i + 1,
            item: None,
        };
        if doc.get("kind").and_then(Value::as_str) == Some("List") {
            let items = doc.get("items").and_then(Value::as_array);
            for (j, item) in items.into_iter().flatten().enumerate() {
                let source = Source {
                    item: Some(j),
                    ..source.clone()
                };
                parse_object(item, source, &mut out)?;
            }
        } else {
            parse_object(doc, source, &mut out)?;
        }
    }
    Ok(out)
}

/// `kind/name` for messages, as kubectl names objects.
pub fn object_name(kind: &str, value: &Value) -> String {
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("<unnamed>");
    match value.pointer("/metadata/namespace").and_then(Value::as_str) {
        Some(ns) => format!("{}/{name} (namespace {ns})", kind.to_lowercase()),
        None => format!("{}/{name}", kind.to_lowercase()),
    }
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
    let object = match kind {
        "Node" => Object::Node(typed(value, &file, &what)?),
        "Pod" => Object::Pod(typed(value, &file, &what)?),
        "Service" => Object::Service(typed(value, &file, &what)?),
        "ReplicaSet" => Object::ReplicaSet(typed(value, &file, &what)?),
        "ReplicationController" => Object::ReplicationController(typed(value, &file, &what)?),
        "StatefulSet" => Object::StatefulSet(typed(value, &file, &what)?),
        "Deployment" => Object::Deployment(typed(value, &file, &what)?),
        "DaemonSet" => Object::DaemonSet(typed(value, &file, &what)?),
        "Job" => Object::Job(typed(value, &file, &what)?),
        "CronJob" => Object::CronJob(typed(value, &file, &what)?),
        "PriorityClass" => Object::PriorityClass(typed(value, &file, &what)?),
        "PodDisruptionBudget" => Object::PodDisruptionBudget(typed(value, &file, &what)?),
        "KubeSchedulerConfiguration" if api_version.starts_with("kubescheduler.config.k8s.io/") => {
            Object::SchedulerConfiguration(value.clone())
        }
        k if SKIPPED_KINDS.contains(&k) => {
            out.skipped.push(format!(
                "{source}: {what}: skipped (does not affect scheduling)"
            ));
            return Ok(());
        }
        _ => {
            return Err(LoadError::UnknownKind {
                file,
                document,
                kind: kind.to_string(),
                api_version,
            });
        }
    };
    out.objects.push(Loaded { source, object });
    Ok(())
}

/// Deserializes a typed object strictly: a type error or an unknown field is an error
/// naming the object and the field path.
pub fn typed<T: DeserializeOwned>(value: &Value, file: &str, object: &str) -> Result<T, LoadError> {
    let mut unknown: Option<String> = None;
    let mut note = |path: serde_ignored::Path<'_>| {
        if unknown.is_none() {
            unknown = Some(field_path(&path));
        }
    };
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
    if let Some(field) = unknown {
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
    fn priority_classes_and_disruption_budgets_are_typed() {
        let text = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\npreemptionPolicy: Never\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db}\nspec: {minAvailable: 1, selector: {matchLabels: {app: db}}}\n";
        let m = parse_manifests(text, "f.yaml").expect("parses");
        assert!(m.skipped.is_empty());
        let kinds: Vec<&str> = m.objects.iter().map(|l| l.object.kind()).collect();
        assert_eq!(kinds, ["PriorityClass", "PodDisruptionBudget"]);
        let Object::PriorityClass(pc) = &m.objects[0].object else {
            panic!("not a PriorityClass")
        };
        assert_eq!(pc.value, 1000);
    }

    #[test]
    fn unknown_field_and_kind_and_type_errors_name_the_place() {
        let e = parse_manifests(
            "kind: Pod\nmetadata: {name: p}\nspec: {nodeNme: x}\n",
            "a.yaml",
        )
        .expect_err("unknown field");
        assert_eq!(e.to_string(), "a.yaml: pod/p: spec.nodeNme: unknown field");
        let e = parse_manifests("kind: Widget\n", "a.yaml").expect_err("unknown kind");
        assert!(e.to_string().contains("\"Widget\""));
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
