//! The patch types the API server accepts: JSON merge patch (RFC 7386), strategic
//! merge patch (lists merged by the key upstream's types declare), JSON patch
//! (RFC 6902), and server-side apply approximated as a strategic merge.

use serde_json::{Map, Value};

use crate::error::ApiError;

/// A patch type, from the request's `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchKind {
    Merge,
    Strategic,
    Json,
    Apply,
}

impl PatchKind {
    /// The patch type of a `Content-Type` value; 415 for anything else.
    pub(crate) fn from_content_type(ct: &str) -> Result<Self, ApiError> {
        let mime = ct.split(';').next().unwrap_or("").trim();
        match mime {
            "application/merge-patch+json" => Ok(PatchKind::Merge),
            "application/strategic-merge-patch+json" => Ok(PatchKind::Strategic),
            "application/json-patch+json" => Ok(PatchKind::Json),
            "application/apply-patch+yaml" | "application/apply-patch+json" => Ok(PatchKind::Apply),
            _ => Err(ApiError::UnsupportedMediaType {
                accepted: "application/json-patch+json, application/merge-patch+json, \
                           application/strategic-merge-patch+json, application/apply-patch+yaml"
                    .into(),
            }),
        }
    }
}

/// Applies a patch to a copy of `target`.
pub(crate) fn apply(kind: PatchKind, target: &Value, patch: &Value) -> Result<Value, ApiError> {
    let mut out = target.clone();
    match kind {
        PatchKind::Merge => merge_patch(&mut out, patch),
        PatchKind::Strategic | PatchKind::Apply => {
            if !patch.is_object() {
                return Err(ApiError::bad_request("the patch must be a JSON object"));
            }
            strategic_merge(&mut out, patch);
        }
        PatchKind::Json => json_patch(&mut out, patch)?,
    }
    Ok(out)
}

/// RFC 7386: objects merge recursively, `null` deletes, anything else replaces.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(t) = target {
        for (k, v) in patch {
            if v.is_null() {
                t.remove(k);
            } else {
                merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

/// The merge key of a list field, as upstream's `patchMergeKey` tags give it. The
/// name alone decides: the fake serves few kinds and their names do not clash,
/// except `ports`, whose key depends on whether items carry `containerPort`.
fn merge_key(field: &str, items: &[Value]) -> Option<&'static str> {
    Some(match field {
        "conditions" | "addresses" => "type",
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims" => "name",
        "volumeMounts" => "mountPath",
        "ownerReferences" => "uid",
        "topologySpreadConstraints" => "topologyKey",
        "hostAliases" | "podIPs" | "hostIPs" => "ip",
        "ports" => {
            if items.iter().any(|i| i.get("containerPort").is_some()) {
                "containerPort"
            } else {
                "port"
            }
        }
        _ => return None,
    })
}

/// Lists of strings that merge as sets rather than replace.
fn is_primitive_merge_list(field: &str) -> bool {
    field == "finalizers"
}

/// Strategic merge: like a merge patch, but lists with a merge key merge item by
/// item (`$patch: delete` removes one), `$patch: replace` replaces a map, and
/// `$deleteFromPrimitiveList/<field>` removes strings from a set-like list.
fn strategic_merge(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if patch.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut replaced = patch.clone();
        replaced.remove("$patch");
        *target = Value::Object(replaced);
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(t) = target else { return };
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(list)), Value::Array(gone)) = (t.get_mut(field), v) {
                list.retain(|x| !gone.contains(x));
            }
            continue;
        }
        if k.starts_with('$') {
            continue;
        }
        match v {
            Value::Null => {
                t.remove(k);
            }
            Value::Array(items) => match (t.get_mut(k), merge_key(k, items)) {
                (Some(Value::Array(existing)), Some(key)) => merge_list(existing, items, key),
                (Some(Value::Array(existing)), None) if is_primitive_merge_list(k) => {
                    for item in items {
                        if !existing.contains(item) {
                            existing.push(item.clone());
                        }
                    }
                }
                _ => {
                    let kept: Vec<Value> = items
                        .iter()
                        .filter(|i| i.get("$patch").and_then(Value::as_str) != Some("delete"))
                        .cloned()
                        .collect();
                    t.insert(k.clone(), Value::Array(kept));
                }
            },
            Value::Object(_) => strategic_merge(t.entry(k.clone()).or_insert(Value::Null), v),
            _ => {
                t.insert(k.clone(), v.clone());
            }
        }
    }
}

fn merge_list(existing: &mut Vec<Value>, items: &[Value], key: &str) {
    for item in items {
        let id = item.get(key);
        let pos = id.and_then(|id| existing.iter().position(|e| e.get(key) == Some(id)));
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (pos, delete) {
            (Some(i), true) => {
                existing.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => strategic_merge(&mut existing[i], item),
            (None, false) => {
                let mut fresh = Value::Null;
                strategic_merge(&mut fresh, item);
                existing.push(fresh);
            }
        }
    }
}

/// RFC 6902: add, remove, replace, move, copy, test, in order; any failure fails
/// the whole patch.
fn json_patch(target: &mut Value, patch: &Value) -> Result<(), ApiError> {
    let ops = patch
        .as_array()
        .ok_or_else(|| ApiError::bad_request("a JSON patch must be an array of operations"))?;
    for op in ops {
        let name = op.get("op").and_then(Value::as_str).unwrap_or("");
        let path = op.get("path").and_then(Value::as_str).ok_or_else(|| {
            ApiError::bad_request(format!("JSON patch operation {op}: missing path"))
        })?;
        let value = || {
            op.get("value").cloned().ok_or_else(|| {
                ApiError::bad_request(format!("JSON patch {name} {path}: missing value"))
            })
        };
        let from = || {
            op.get("from").and_then(Value::as_str).ok_or_else(|| {
                ApiError::bad_request(format!("JSON patch {name} {path}: missing from"))
            })
        };
        match name {
            "add" => add(target, path, value()?)?,
            "remove" => {
                remove(target, path)?;
            }
            "replace" => {
                remove(target, path)?;
                add(target, path, value()?)?;
            }
            "move" => {
                let v = remove(target, from()?)?;
                add(target, path, v)?;
            }
            "copy" => {
                let v = target
                    .pointer(from()?)
                    .cloned()
                    .ok_or_else(|| missing(from().unwrap_or_default()))?;
                add(target, path, v)?;
            }
            "test" => {
                if target.pointer(path) != Some(&value()?) {
                    return Err(ApiError::Invalid {
                        kind: "JSONPatch".into(),
                        group: "",
                        name: String::new(),
                        message: format!("testing value {path} failed"),
                    });
                }
            }
            other => {
                return Err(ApiError::bad_request(format!(
                    "JSON patch: unknown operation {other:?}"
                )));
            }
        }
    }
    Ok(())
}

fn missing(path: &str) -> ApiError {
    ApiError::Invalid {
        kind: "JSONPatch".into(),
        group: "",
        name: String::new(),
        message: format!("doc is missing path: {path:?}"),
    }
}

/// Splits a JSON pointer into its parent pointer and unescaped last token.
fn split_pointer(path: &str) -> Result<(&str, String), ApiError> {
    let idx = path
        .rfind('/')
        .ok_or_else(|| ApiError::bad_request(format!("JSON patch: bad path {path:?}")))?;
    Ok((
        &path[..idx],
        path[idx + 1..].replace("~1", "/").replace("~0", "~"),
    ))
}

fn add(target: &mut Value, path: &str, value: Value) -> Result<(), ApiError> {
    if path.is_empty() {
        *target = value;
        return Ok(());
    }
    let (parent, last) = split_pointer(path)?;
    match target.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.insert(last, value);
            Ok(())
        }
        Some(Value::Array(a)) => {
            let i = if last == "-" {
                a.len()
            } else {
                last.parse().map_err(|_| missing(path))?
            };
            if i > a.len() {
                return Err(missing(path));
            }
            a.insert(i, value);
            Ok(())
        }
        _ => Err(missing(path)),
    }
}

fn remove(target: &mut Value, path: &str) -> Result<Value, ApiError> {
    let (parent, last) = split_pointer(path)?;
    match target.pointer_mut(parent) {
        Some(Value::Object(m)) => m.remove(&last).ok_or_else(|| missing(path)),
        Some(Value::Array(a)) => {
            let i: usize = last.parse().map_err(|_| missing(path))?;
            if i < a.len() {
                Ok(a.remove(i))
            } else {
                Err(missing(path))
            }
        }
        _ => Err(missing(path)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_merges_conditions_by_type() {
        let pod = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False"},
            {"type": "PodScheduled", "status": "True"}]}});
        let patch = json!({"status": {"conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
            "nominatedNodeName": "n1"}});
        let out = apply(PatchKind::Strategic, &pod, &patch).unwrap();
        assert_eq!(out["status"]["conditions"].as_array().unwrap().len(), 2);
        assert_eq!(out["status"]["conditions"][1]["reason"], "Unschedulable");
        assert_eq!(out["status"]["nominatedNodeName"], "n1");
        // A merge patch replaces the list instead.
        let out = apply(PatchKind::Merge, &pod, &patch).unwrap();
        assert_eq!(out["status"]["conditions"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn strategic_directives() {
        let obj = json!({"metadata": {"finalizers": ["a"]}, "spec": {"containers": [{"name": "c", "image": "x"}]}});
        let patch = json!({
            "metadata": {"finalizers": ["b"]},
            "spec": {"containers": [{"name": "c", "$patch": "delete"}]}});
        let out = apply(PatchKind::Strategic, &obj, &patch).unwrap();
        assert_eq!(out["metadata"]["finalizers"], json!(["a", "b"]));
        assert_eq!(out["spec"]["containers"], json!([]));
        let patch = json!({"$deleteFromPrimitiveList/finalizers": ["a"], "metadata": null});
        let out = apply(
            PatchKind::Strategic,
            &json!({"finalizers": ["a", "b"]}),
            &patch,
        )
        .unwrap();
        assert_eq!(out["finalizers"], json!(["b"]));
    }

    #[test]
    fn json_patch_ops() {
        let obj = json!({"a": {"b": [1, 2]}, "c": 1});
        let patch = json!([
            {"op": "add", "path": "/a/b/-", "value": 3},
            {"op": "replace", "path": "/c", "value": 2},
            {"op": "test", "path": "/c", "value": 2},
            {"op": "move", "from": "/c", "path": "/d"},
            {"op": "remove", "path": "/a/b/0"}]);
        let out = apply(PatchKind::Json, &obj, &patch).unwrap();
        assert_eq!(out, json!({"a": {"b": [2, 3]}, "d": 2}));
        let bad = json!([{"op": "test", "path": "/c", "value": 9}]);
        assert_eq!(apply(PatchKind::Json, &obj, &bad).unwrap_err().code(), 422);
        let bad = json!([{"op": "remove", "path": "/nope"}]);
        assert!(apply(PatchKind::Json, &obj, &bad).is_err());
    }
}
