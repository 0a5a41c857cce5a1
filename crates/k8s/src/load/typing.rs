//! One object's value into its k8s-openapi type ([`parse_object`]): the kind's checks, strict
//! or lenient typing of unknown fields, errors naming the object and the field path.

use super::lenient::Lenient;
use super::{
    LoadError, Loaded, Manifests, Object, SKIPPED_KINDS, Source, UnknownField, Unserved,
    api_serving, builtin, is_kustomization, kustomize_dir, object_name, unmodelled_kind,
};
use crate::notes::Note;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::DeserializeOwned;
use serde_json::Value;

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

/// Whether an object was read back from a server: it carries `metadata.uid`,
/// `metadata.resourceVersion` or a `status`.
pub(super) fn from_server(value: &Value) -> bool {
    value.pointer("/metadata/uid").is_some()
        || value.pointer("/metadata/resourceVersion").is_some()
        || value.get("status").is_some_and(|s| !s.is_null())
}

/// [`typed`], except that an object read back from a server ([`from_server`]) keeps
/// loading past a field the bundled schema lacks (a newer release wrote it): the field
/// is ignored with a note, one line per field however many objects carry it. Manifests
/// meant for creation stay strict.
pub(super) fn typed_read<T: DeserializeOwned>(
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
pub(super) fn typed_with<T: DeserializeOwned>(
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
