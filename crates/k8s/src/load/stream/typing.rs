//! Typing a piece straight from its text: its `kind` and `apiVersion` read first, then
//! the k8s-openapi type through serde_json (JSON, or YAML that [`yaml_json`] converts) or
//! serde-saphyr; `None` on any error or unknown field, for the thorough reader to explain.

use super::piece::Piece;
use crate::load::{Object, api_serving, builtin, yaml_json, yaml_options};
use serde::de::DeserializeOwned;
use topospread::convert::lean::Skipping;

/// An object's `kind` and `apiVersion`, read without typing the rest.
#[derive(Default, serde::Deserialize)]
pub(super) struct Head {
    pub(super) kind: Option<String>,
    #[serde(rename = "apiVersion")]
    pub(super) api_version: Option<String>,
}

/// The piece's kind and apiVersion; `None` when it is not an object that reads.
pub(super) fn head(piece: &Piece) -> Option<Head> {
    if piece.yaml {
        let text = std::str::from_utf8(&piece.text).ok()?;
        let h = yaml_head(text);
        if h.kind.is_some() || !text.trim_start().starts_with('{') {
            return Some(h);
        }
        // A flow mapping (`- {kind: Node, ...}`): the parser finds its keys.
        serde_saphyr::from_str_with_options(text, yaml_options()).ok()
    } else {
        // Only `kind` and `apiVersion` are built; the rest is skipped.
        let h: Head = serde_json::from_slice(&piece.text).ok()?;
        Some(h)
    }
}

/// `kind:` and `apiVersion:` among a YAML mapping's top keys (the indentation of its
/// first key), as plain or quoted scalars.
fn yaml_head(text: &str) -> Head {
    let mut indent = None;
    let mut h = Head::default();
    for line in text.lines() {
        let content = line.trim_start();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let here = line.len() - content.len();
        let top = *indent.get_or_insert(here);
        if here != top {
            continue;
        }
        let value = |key: &str| -> Option<String> {
            let v = content.strip_prefix(key)?.strip_prefix(':')?;
            let v = v.split(" #").next().unwrap_or("").trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            (!v.is_empty()).then(|| v.to_string())
        };
        if let Some(k) = value("kind") {
            h.kind = Some(k);
        } else if let Some(a) = value("apiVersion") {
            h.api_version = Some(a);
        }
    }
    h
}

/// An item's head, and the object typed straight from it when that works. A JSON
/// item's head is first read off its leading keys (kubectl writes `apiVersion` and
/// `kind` first); when the object then does not type, the head is read again by
/// serde_json, which decides how the item is read thoroughly.
pub(super) fn prepare(piece: &Piece) -> (Option<Head>, Option<Object>) {
    if let Some(quick) = (!piece.yaml).then(|| leading_head(&piece.text)).flatten()
        && let Some(object) = typed_object(piece, &quick)
    {
        return (Some(quick), Some(object));
    }
    let h = head(piece);
    let object = h.as_ref().and_then(|h| typed_object(piece, h));
    (h, object)
}

/// `kind` and `apiVersion` when they are the first two keys of a JSON object (either
/// order) with plain string values; `None` otherwise, for serde_json to read.
fn leading_head(text: &[u8]) -> Option<Head> {
    let mut rest = text.trim_ascii_start().strip_prefix(b"{")?;
    let mut h = Head::default();
    for _ in 0..2 {
        let (key, after) = plain_string(rest.trim_ascii_start())?;
        let after = after.trim_ascii_start().strip_prefix(b":")?;
        let (value, after) = plain_string(after.trim_ascii_start())?;
        let value = std::str::from_utf8(value).ok()?.to_string();
        match key {
            b"kind" if h.kind.is_none() => h.kind = Some(value),
            b"apiVersion" if h.api_version.is_none() => h.api_version = Some(value),
            _ => return None,
        }
        rest = after.trim_ascii_start().strip_prefix(b",")?;
    }
    Some(h)
}

/// A JSON string without escapes at the start of `text`: its content and what follows.
fn plain_string(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let body = text.strip_prefix(b"\"")?;
    let end = memchr::memchr2(b'"', b'\\', body)?;
    (body[end] == b'"').then(|| (&body[..end], &body[end + 1..]))
}

/// The built-in object `head` names, typed straight from the piece, without what
/// nothing reads; `None` when it is not one or does not type.
pub(super) fn typed_object(piece: &Piece, head: &Head) -> Option<Object> {
    let (kind, api_version) = (head.kind.as_deref()?, head.api_version.as_deref()?);
    if !builtin(kind, api_version) || api_serving(kind, api_version).is_some() {
        return None;
    }
    let mut object = fast(piece, kind)?;
    object.drop_unread();
    Some(object)
}

/// The object typed straight from the piece, for the kinds whose reading is only typing;
/// `None` when that fails in any way (the thorough reader then says why, or reads it
/// leniently).
fn fast(piece: &impl Typer, kind: &str) -> Option<Object> {
    Some(match kind {
        "Node" => Object::Node(Box::new(piece.typed()?)),
        "Pod" => Object::Pod(Box::new(piece.typed()?)),
        "Service" => Object::Service(Box::new(piece.typed()?)),
        "ReplicaSet" => Object::ReplicaSet(Box::new(piece.typed()?)),
        "ReplicationController" => Object::ReplicationController(Box::new(piece.typed()?)),
        "StatefulSet" => Object::StatefulSet(Box::new(piece.typed()?)),
        "Deployment" => Object::Deployment(Box::new(piece.typed()?)),
        "DaemonSet" => Object::DaemonSet(Box::new(piece.typed()?)),
        "Job" => Object::Job(Box::new(piece.typed()?)),
        "CronJob" => Object::CronJob(Box::new(piece.typed()?)),
        "PriorityClass" => Object::PriorityClass(Box::new(piece.typed()?)),
        "PodDisruptionBudget" => Object::PodDisruptionBudget(Box::new(piece.typed()?)),
        "Namespace" => Object::Namespace(Box::new(piece.typed()?)),
        "PersistentVolumeClaim" => Object::PersistentVolumeClaim(Box::new(piece.typed()?)),
        "PersistentVolume" => Object::PersistentVolume(Box::new(piece.typed()?)),
        "StorageClass" => Object::StorageClass(Box::new(piece.typed()?)),
        "CSINode" => Object::CsiNode(Box::new(piece.typed()?)),
        "LimitRange" => Object::LimitRange(Box::new(piece.typed()?)),
        "RuntimeClass" => Object::RuntimeClass(Box::new(piece.typed()?)),
        "ResourceQuota" => Object::ResourceQuota(Box::new(piece.typed()?)),
        _ => return None,
    })
}

/// Text that types into any k8s-openapi type: `None` on any error or unknown field.
trait Typer {
    fn typed<T: DeserializeOwned>(&self) -> Option<T>;
}

impl Typer for Piece {
    /// JSON through serde_json. YAML through serde_json too when [`yaml_json`] converts
    /// it (several times faster, and the same object); YAML outside its subset is `None`
    /// here, and the caller reads it as a tree, as every piece that does not type.
    ///
    /// One reader type (bytes, through serde_json) means one instantiation of every
    /// kind's deserializer: typing straight from serde-saphyr as well (or from `&str`)
    /// instantiated each kind's again, which was most of this crate's compile time, for
    /// pieces the tree reads the same.
    fn typed<T: DeserializeOwned>(&self) -> Option<T> {
        if !self.yaml {
            return typed_json(&self.text);
        }
        let text = std::str::from_utf8(&self.text).ok()?;
        yaml_json::to_json(text).and_then(|json| typed_json(json.as_bytes()))
    }
}

/// Types `T` from JSON text, its `metadata.managedFields` checked and skipped; `None` on
/// any error or unknown field.
fn typed_json<T: DeserializeOwned>(json: &[u8]) -> Option<T> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let mut unknown = false;
    // One callback type for every `T`, so nested types' deserializers are instantiated
    // once, not once per kind (see `typed_with`).
    let note: &mut dyn FnMut(serde_ignored::Path<'_>) = &mut |_| unknown = true;
    let value = serde_ignored::deserialize(Skipping::object(&mut de), note).ok()?;
    de.end().ok()?;
    (!unknown).then_some(value)
}

/// YAML text read both ways, for the tests that compare them: as the thorough reader
/// reads a piece the converter leaves (serde-saphyr's value tree, then the lenient
/// typing), and through JSON when [`yaml_json`] converts the text; each object as the
/// loader keeps it (without what [`Object::drop_unread`] drops, which the JSON route
/// skips).
/// Each route reads the text once; only the typing is per kind.
///
/// The tree route reuses the loader's own instantiations of every kind's deserializer;
/// typing straight from serde-saphyr here instantiated them all again (the crate's
/// unit-test build took 112 s with it, 70 s without).
#[cfg(test)]
pub(in crate::load) struct Routes {
    tree: Option<serde_json::Value>,
    json: Option<String>,
}

#[cfg(test)]
impl Routes {
    /// Reads `text` both ways.
    pub(in crate::load) fn read(text: &str) -> Self {
        let tree = crate::load::parse_yaml_documents(text, "piece")
            .ok()
            .and_then(|docs| <[serde_json::Value; 1]>::try_from(docs).ok())
            .map(|[value]| value);
        Self {
            tree,
            json: yaml_json::to_json(text),
        }
    }

    /// The text typed as `kind` through the value tree.
    pub(in crate::load) fn tree(&self, kind: &str) -> Option<Object> {
        struct Tree<'a>(&'a serde_json::Value);
        impl Typer for Tree<'_> {
            fn typed<T: DeserializeOwned>(&self) -> Option<T> {
                crate::load::typed(self.0, "piece", "object").ok()
            }
        }
        fast(&Tree(self.tree.as_ref()?), kind).map(unread_dropped)
    }

    /// The text typed as `kind` through JSON; `None` when the converter leaves it.
    pub(in crate::load) fn json(&self, kind: &str) -> Option<Option<Object>> {
        struct Json<'a>(&'a str);
        impl Typer for Json<'_> {
            fn typed<T: DeserializeOwned>(&self) -> Option<T> {
                typed_json(self.0.as_bytes())
            }
        }
        Some(fast(&Json(self.json.as_deref()?), kind).map(unread_dropped))
    }
}

/// The object as the loader keeps it, whichever route typed it.
#[cfg(test)]
fn unread_dropped(mut object: Object) -> Object {
    object.drop_unread();
    object
}

#[cfg(test)]
mod managed_fields_tests {
    use super::{Routes, typed_json};
    use crate::load::Object;
    use k8s_openapi::api::core::v1::Pod;

    /// An object with `managedFields` types on the fast route (it is not left to the
    /// thorough reader), without them.
    #[test]
    fn objects_with_managed_fields_type_straight() {
        let json = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p",
            "managedFields": [{"manager": "kubelet", "operation": "Update", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:phase": {}}}, "time": "2026-11-20T08:14:31Z"}]},
            "spec": {"containers": [{"name": "c"}]}}"#;
        let pod: Pod = typed_json(json.as_bytes()).expect("types straight");
        assert_eq!(pod.metadata.name.as_deref(), Some("p"));
        assert_eq!(pod.metadata.managed_fields, None);
        let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  managedFields:\n  - manager: kubelet\n    fieldsV1:\n      f:status:\n        f:phase: {}\n    time: \"2026-11-20T08:14:31Z\"\nspec:\n  containers:\n  - name: c\n";
        let Some(Some(Object::Pod(pod))) = Routes::read(yaml).json("Pod") else {
            panic!("the YAML types straight");
        };
        assert_eq!(pod.metadata.managed_fields, None);
    }
}

#[cfg(test)]
mod leading_head_tests {
    use super::leading_head;

    #[test]
    fn reads_the_two_leading_keys_in_either_order() {
        let h = leading_head(br#" {"apiVersion": "v1", "kind":"Pod", "metadata": {}}"#)
            .expect("a head");
        assert_eq!(
            (h.kind.as_deref(), h.api_version.as_deref()),
            (Some("Pod"), Some("v1"))
        );
        let h = leading_head(b"{\n  \"kind\" : \"Node\",\n  \"apiVersion\": \"v1\",\n  \"x\": 1}")
            .expect("a head");
        assert_eq!(
            (h.kind.as_deref(), h.api_version.as_deref()),
            (Some("Node"), Some("v1"))
        );
    }

    #[test]
    fn leaves_anything_else_to_serde_json() {
        for text in [
            br#"{"metadata": {}, "kind": "Pod", "apiVersion": "v1"}"#.as_slice(),
            br#"{"kind": "Pod", "kind": "Pod", "apiVersion": "v1"}"#,
            br#"{"kind": "P\u006fd", "apiVersion": "v1"}"#,
            br#"{"kind": "Pod", "apiVersion": 1}"#,
            br#"{"kind": "Pod"}"#,
            b"[]",
        ] {
            assert!(
                leading_head(text).is_none(),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }
}
