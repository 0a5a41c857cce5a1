//! What is special about pods: defaulting and priority admission on create, the
//! `binding` and `eviction` subresources, and the immutability of `spec.nodeName`.

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use crate::error::{ApiError, json_response, success_status};
use crate::handlers::{Call, check_preconditions, not_found, parse_json};
use crate::resources::{PDBS, PODS, RESOURCES, Subresource};
use crate::selectors::LabelSelector;
use crate::server::Shared;
use crate::store::{meta_str, metadata_mut};
use crate::util::now_rfc3339;

/// Index of `priorityclasses` in the resource table.
fn priority_classes() -> usize {
    RESOURCES
        .iter()
        .position(|r| r.plural == "priorityclasses")
        .unwrap_or(PODS)
}

/// Defaults and admission a pod gets on create, as upstream's defaulting and
/// Priority admission plugin do: `schedulerName`, `restartPolicy`, `priority`
/// from its PriorityClass (or the global default), and `status.phase: Pending`
/// (unless `keep_status`, which the test handle uses to insert running pods).
pub(crate) fn prepare_create(
    shared: &Shared,
    obj: &mut Value,
    keep_status: bool,
) -> Result<(), ApiError> {
    let name = meta_str(obj, "name").to_owned();
    let Some(map) = obj.as_object_mut() else {
        return Err(ApiError::bad_request("the object is not a JSON object"));
    };
    let spec = map.entry("spec").or_insert_with(|| json!({}));
    let Some(spec) = spec.as_object_mut() else {
        return Err(ApiError::bad_request("spec: must be an object"));
    };
    spec.entry("schedulerName")
        .or_insert_with(|| json!("default-scheduler"));
    spec.entry("restartPolicy")
        .or_insert_with(|| json!("Always"));
    if !spec.contains_key("priority") {
        let classes = shared
            .store
            .list(priority_classes(), None, None, 0, |_| true);
        let class = match spec.get("priorityClassName").and_then(Value::as_str) {
            Some(pc) if !pc.is_empty() => Some(
                classes
                    .items
                    .iter()
                    .find(|c| meta_str(c, "name") == pc)
                    .cloned()
                    .ok_or_else(|| ApiError::Forbidden {
                        resource: RESOURCES[PODS].group_resource(),
                        name: name.clone(),
                        reason: format!("no PriorityClass with name {pc} was found"),
                    })?,
            ),
            _ => classes
                .items
                .iter()
                .find(|c| c.get("globalDefault").and_then(Value::as_bool) == Some(true))
                .cloned(),
        };
        let value = class
            .as_ref()
            .and_then(|c| c.get("value"))
            .cloned()
            .unwrap_or(json!(0));
        spec.insert("priority".into(), value);
        if let Some(c) = &class {
            spec.entry("priorityClassName")
                .or_insert_with(|| json!(meta_str(c, "name")));
            if let Some(p) = c.get("preemptionPolicy") {
                spec.entry("preemptionPolicy").or_insert_with(|| p.clone());
            }
        }
    }
    spec.entry("preemptionPolicy")
        .or_insert_with(|| json!("PreemptLowerPriority"));
    if !keep_status || !map.contains_key("status") {
        map.insert("status".into(), json!({"phase": "Pending"}));
    }
    Ok(())
}

/// Refuses an update of a pod that would move it: only a binding sets
/// `spec.nodeName`.
pub(crate) fn check_update(call: &Call, old: &Value, new: &Value) -> Result<(), ApiError> {
    let node = |v: &Value| {
        v.pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    if node(old) != node(new) {
        return Err(ApiError::Invalid {
            kind: "Pod".into(),
            group: "",
            name: call.name.clone(),
            message: "spec: Forbidden: pod updates may not change fields other than \
                      `spec.containers[*].image`,`spec.initContainers[*].image`,\
                      `spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing \
                      tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if \
                      it was previously negative)"
                .into(),
        });
    }
    Ok(())
}

/// Sets the `PodScheduled=True` condition, keeping its transition time when it
/// was already true.
fn set_scheduled(pod: &mut Value) {
    let now = now_rfc3339();
    let Some(map) = pod.as_object_mut() else {
        return;
    };
    let status = map.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    let conditions = status
        .as_object_mut()
        .map(|s| s.entry("conditions").or_insert_with(|| json!([])));
    let Some(conditions) = conditions else { return };
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    let fresh = |since: &str| json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": since});
    match list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("PodScheduled"))
    {
        Some(c) => {
            let since = if c.get("status").and_then(Value::as_str) == Some("True") {
                c.get("lastTransitionTime")
                    .and_then(Value::as_str)
                    .unwrap_or(&now)
                    .to_owned()
            } else {
                now.clone()
            };
            *c = fresh(&since);
        }
        None => list.push(fresh(&now)),
    }
}

/// `POST pods/<name>/binding`: assigns an unassigned pod to `target.name`, as
/// upstream's BindingREST: 409 if already assigned, being deleted, gated, or the
/// body's UID/resourceVersion preconditions fail; 404 if the pod is missing.
pub(crate) fn bind(shared: &Shared, call: &Call, body: &Bytes) -> Result<Response, ApiError> {
    let binding = parse_json(body)?;
    if let Some(k) = binding.get("kind").and_then(Value::as_str)
        && k != "Binding"
    {
        return Err(ApiError::bad_request(format!(
            "not a Binding object: kind {k:?}"
        )));
    }
    if meta_str(&binding, "name") != call.name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let target_kind = binding
        .pointer("/target/kind")
        .and_then(Value::as_str)
        .unwrap_or("");
    if node.is_empty() || !(target_kind.is_empty() || target_kind == "Node") {
        return Err(ApiError::Invalid {
            kind: "Binding".into(),
            group: "",
            name: call.name.clone(),
            message: if node.is_empty() {
                "target.name: Required value".into()
            } else {
                format!(
                    "target.kind: Unsupported value: {target_kind:?}: supported values: \"Node\", \"\""
                )
            },
        });
    }
    let want_uid = meta_str(&binding, "uid").to_owned();
    let want_rv = meta_str(&binding, "resourceVersion").to_owned();
    let annotations = binding
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned();
    let key = format!("/registry/pods/{}/{}", call.namespace, call.name);
    let binding_conflict = |reason: String| ApiError::Conflict {
        resource: RESOURCES[PODS].group_subresource(Subresource::Binding),
        name: call.name.clone(),
        reason,
    };
    shared.store.update(PODS, &call.namespace, &call.name, |pod| {
        for (want, field, label) in [(&want_uid, "uid", "UID"), (&want_rv, "resourceVersion", "ResourceVersion")] {
            let have = meta_str(pod, field);
            if !want.is_empty() && want != have {
                return Err(ApiError::Conflict {
                    resource: RESOURCES[PODS].group_resource(),
                    name: call.name.clone(),
                    reason: format!(
                        "StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, \
                         AdditionalErrorMsg: Precondition failed: {label} in precondition: {want}, \
                         {label} in object meta: {have}"
                    ),
                });
            }
        }
        if pod.pointer("/metadata/deletionTimestamp").is_some() {
            return Err(binding_conflict(format!(
                "pod {} is being deleted, cannot be assigned to a host",
                call.name
            )));
        }
        let assigned = pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("");
        if !assigned.is_empty() {
            return Err(binding_conflict(format!(
                "pod {} is already assigned to node {assigned:?}",
                call.name
            )));
        }
        if pod
            .pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .is_some_and(|g| !g.is_empty())
        {
            return Err(binding_conflict(format!(
                "pod {} has non-empty .spec.schedulingGates",
                call.name
            )));
        }
        let mut pod = pod.clone();
        if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("nodeName".into(), json!(node));
        } else if let Some(map) = pod.as_object_mut() {
            map.insert("spec".into(), json!({"nodeName": node}));
        }
        if let Some(extra) = &annotations {
            let meta = metadata_mut(&mut pod)?;
            let ann = meta.entry("annotations").or_insert_with(|| json!({}));
            if let Some(ann) = ann.as_object_mut() {
                ann.extend(extra.clone());
            }
        }
        set_scheduled(&mut pod);
        Ok(pod)
    })?;
    shared.record_binding(&call.namespace, &call.name);
    Ok(json_response(StatusCode::CREATED, &success_status(201)))
}

/// Whether an eviction may skip the disruption budget, as upstream's
/// `canIgnorePDB`: terminal, pending, or already deleting.
fn can_ignore_pdb(pod: &Value) -> bool {
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("");
    matches!(phase, "Succeeded" | "Failed" | "Pending")
        || pod.pointer("/metadata/deletionTimestamp").is_some()
}

/// `POST pods/<name>/eviction`: deletes the pod unless a PodDisruptionBudget
/// selecting it allows no disruption (429 TooManyRequests); an allowed eviction
/// spends one of the budget's `disruptionsAllowed`.
pub(crate) fn evict(shared: &Shared, call: &Call, body: &Bytes) -> Result<Response, ApiError> {
    let eviction = parse_json(body)?;
    if meta_str(&eviction, "name") != call.name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let options = eviction.get("deleteOptions").cloned();
    let pod = shared
        .store
        .get(PODS, &call.namespace, &call.name)
        .ok_or_else(|| not_found(call))?;
    check_preconditions(call, options.as_ref(), &pod)?;
    if !can_ignore_pdb(&pod) {
        let pdbs = shared
            .store
            .list(PDBS, Some(&call.namespace), None, 0, |pdb| {
                LabelSelector::from_struct(pdb.pointer("/spec/selector"))
                    .is_some_and(|s| s.matches(&pod))
            });
        if pdbs.items.len() > 1 {
            return Err(ApiError::Internal {
                message: "This pod has more than one PodDisruptionBudget, which the eviction \
                          subresource does not support."
                    .into(),
            });
        }
        if let Some(pdb) = pdbs.items.first() {
            let int = |p: &str| pdb.pointer(p).and_then(Value::as_i64).unwrap_or(0);
            let pdb_name = meta_str(pdb, "name").to_owned();
            let refused = || ApiError::TooManyRequests {
                message: "Cannot evict pod as it would violate the pod's disruption budget.".into(),
                cause: Some(format!(
                    "The disruption budget {pdb_name} needs {} healthy pods and has {} currently",
                    int("/status/desiredHealthy"),
                    int("/status/currentHealthy")
                )),
            };
            if int("/status/disruptionsAllowed") <= 0 {
                return Err(refused());
            }
            let pod_name = call.name.clone();
            shared
                .store
                .update(PDBS, &call.namespace, &pdb_name, |pdb| {
                    let allowed = pdb
                        .pointer("/status/disruptionsAllowed")
                        .and_then(Value::as_i64)
                        .unwrap_or(0);
                    if allowed <= 0 {
                        return Err(refused());
                    }
                    let mut pdb = pdb.clone();
                    if let Some(status) = pdb.get_mut("status").and_then(Value::as_object_mut) {
                        status.insert("disruptionsAllowed".into(), json!(allowed - 1));
                        let disrupted = status.entry("disruptedPods").or_insert_with(|| json!({}));
                        if let Some(d) = disrupted.as_object_mut() {
                            d.insert(pod_name, json!(now_rfc3339()));
                        }
                    }
                    Ok(pdb)
                })?;
        }
    }
    shared
        .store
        .delete(PODS, &call.namespace, &call.name, |p| {
            check_preconditions(call, options.as_ref(), p)
        })?;
    Ok(json_response(StatusCode::CREATED, &success_status(201)))
}
