//! The resource endpoints: list, watch, get, create, update, patch, delete and
//! deletecollection on every served resource, plus the `/status` subresource.
//! `pods/binding` and `pods/eviction` live in [`crate::pods`].

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Query, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{ApiError, json_response};
use crate::patch::{self, PatchKind};
use crate::pods;
use crate::request::{RequestInfo, truthy};
use crate::resources::{PODS, RESOURCES, ResourceDef, Subresource};
use crate::selectors::{FieldSelector, LabelSelector};
use crate::server::Shared;
use crate::store::{Key, meta_str, metadata_mut};
use crate::util::{hex_decode, hex_encode};
use crate::watch::{self, Start, WatchRequest};

/// Largest request body accepted.
const MAX_BODY: usize = 32 << 20;

/// Default server-side watch timeout when the client sets none (upstream picks
/// between 30 and 60 minutes).
const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);

/// The query parameters the endpoints read; others are ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Params {
    resource_version: Option<String>,
    resource_version_match: Option<String>,
    limit: Option<String>,
    dry_run: Option<String>,
    #[serde(rename = "continue")]
    continue_token: Option<String>,
    label_selector: Option<String>,
    field_selector: Option<String>,
    allow_watch_bookmarks: Option<String>,
    send_initial_events: Option<String>,
    timeout_seconds: Option<String>,
}

/// What a resource request resolved to.
pub(crate) struct Call {
    pub(crate) res: usize,
    pub(crate) def: &'static ResourceDef,
    /// "" for cluster-scoped objects and all-namespace lists.
    pub(crate) namespace: String,
    pub(crate) all_namespaces: bool,
    pub(crate) name: String,
    pub(crate) sub: Option<Subresource>,
}

/// The fallback handler: every URL under `/api/v1/...` and `/apis/<g>/<v>/...`.
pub(crate) async fn resource(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    match handle(shared, req).await {
        Ok(resp) => resp,
        Err(e) => e.into_response(),
    }
}

async fn handle(shared: Arc<Shared>, req: Request) -> Result<Response, ApiError> {
    let (parts, body) = req.into_parts();
    let info = parts
        .extensions
        .get::<RequestInfo>()
        .cloned()
        .unwrap_or_else(|| RequestInfo::parse(&parts.method, &parts.uri));
    let call = resolve(&info)?;
    let params = Query::<Params>::try_from_uri(&parts.uri)
        .map(|q| q.0)
        .map_err(|e| ApiError::bad_request(format!("invalid query parameters: {e}")))?;
    if params.dry_run.as_deref().is_some_and(|d| !d.is_empty()) {
        // Refused rather than ignored: ignoring it would write what the client
        // asked only to try.
        return Err(ApiError::bad_request(
            "dryRun is not supported by the fake API server",
        ));
    }
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_owned();
    let body = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|e| ApiError::bad_request(format!("reading the request body: {e}")))?;
    match (info.verb.as_str(), call.sub) {
        ("list", None) => list(&shared, &call, &params),
        ("watch", None) => Ok(watch::serve(
            shared.clone(),
            watch_request(&shared, &call, &params)?,
        )),
        ("get", None | Some(Subresource::Status)) => get(&shared, &call),
        ("create", None) => create(&shared, &call, &body),
        ("create", Some(Subresource::Binding)) => pods::bind(&shared, &call, &body),
        ("create", Some(Subresource::Eviction)) => pods::evict(&shared, &call, &body),
        ("update", None | Some(Subresource::Status)) => update(&shared, &call, &body),
        ("patch", None | Some(Subresource::Status)) => patch(&shared, &call, &content_type, &body),
        ("delete", None) => delete(&shared, &call, &body),
        ("deletecollection", None) => delete_collection(&shared, &call, &params),
        _ => Err(ApiError::MethodNotAllowed {
            message: format!(
                "the server does not allow this method on the requested resource ({} {})",
                parts.method, parts.uri
            ),
        }),
    }
}

/// Checks scope and subresource; 404 for URLs no resource serves.
fn resolve(info: &RequestInfo) -> Result<Call, ApiError> {
    let target = info.target.as_ref().ok_or(ApiError::NoRoute)?;
    let res = target.res.ok_or(ApiError::NoRoute)?;
    let def = &RESOURCES[res];
    if target.extra {
        return Err(ApiError::NoRoute);
    }
    let sub = match &target.subresource {
        None => None,
        Some(s) => Some(Subresource::parse(def, s).ok_or(ApiError::NoRoute)?),
    };
    let collection = matches!(info.verb.as_str(), "list" | "watch");
    let all_namespaces = def.namespaced && target.namespace.is_none();
    if (all_namespaces && !collection) || (!def.namespaced && target.namespace.is_some()) {
        return Err(ApiError::NoRoute);
    }
    Ok(Call {
        res,
        def,
        namespace: target.namespace.clone().unwrap_or_default(),
        all_namespaces,
        name: target.name.clone().unwrap_or_default(),
        sub,
    })
}

/// Parses a JSON body; 400 naming the problem otherwise.
pub(crate) fn parse_json(body: &Bytes) -> Result<Value, ApiError> {
    if body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    Ok(v)
}

/// Refuses a body whose `apiVersion`/`kind` (when given) are not the resource's.
fn check_type(def: &ResourceDef, obj: &Value) -> Result<(), ApiError> {
    let want = def.api_version();
    if let Some(v) = obj.get("apiVersion").and_then(Value::as_str)
        && v != want
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({v}) does not match the expected API version ({want})"
        )));
    }
    if let Some(k) = obj.get("kind").and_then(Value::as_str)
        && k != def.kind
    {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({k}) does not match the expected kind ({})",
            def.kind
        )));
    }
    Ok(())
}

/// Refuses a body whose metadata name or namespace contradicts the URL, and
/// fills them in when absent.
fn check_identity(call: &Call, obj: &mut Value, url_name: Option<&str>) -> Result<(), ApiError> {
    let meta = metadata_mut(obj)?;
    if call.def.namespaced {
        match meta.get("namespace").and_then(Value::as_str) {
            Some(ns) if !ns.is_empty() && ns != call.namespace => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => {
                meta.insert("namespace".into(), json!(call.namespace));
            }
        }
    }
    if let Some(url_name) = url_name {
        match meta.get("name").and_then(Value::as_str) {
            Some(n) if !n.is_empty() && n != url_name => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({url_name})"
                )));
            }
            _ => {
                meta.insert("name".into(), json!(url_name));
            }
        }
    }
    Ok(())
}

fn ok(code: StatusCode, obj: &Value) -> Result<Response, ApiError> {
    Ok(json_response(code, obj))
}

fn labels_and_fields(
    call: &Call,
    params: &Params,
) -> Result<(LabelSelector, FieldSelector), ApiError> {
    let labels = LabelSelector::parse(params.label_selector.as_deref().unwrap_or(""))?;
    let fields = FieldSelector::parse(params.field_selector.as_deref().unwrap_or(""), call.def)?;
    Ok((labels, fields))
}

fn encode_continue(rv: u64, key: &Key) -> String {
    hex_encode(format!("{rv}\0{}\0{}", key.0, key.1).as_bytes())
}

fn decode_continue(token: &str) -> Option<(u64, Key)> {
    let raw = String::from_utf8(hex_decode(token)?).ok()?;
    let mut parts = raw.splitn(3, '\0');
    let rv = parts.next()?.parse().ok()?;
    Some((rv, (parts.next()?.to_owned(), parts.next()?.to_owned())))
}

fn list(shared: &Shared, call: &Call, params: &Params) -> Result<Response, ApiError> {
    let (labels, fields) = labels_and_fields(call, params)?;
    let limit = match params.limit.as_deref() {
        None | Some("") => 0,
        Some(l) => l.parse::<usize>().map_err(|_| {
            ApiError::bad_request(format!(
                "limit: Invalid value: {l:?}: must be a non-negative integer"
            ))
        })?,
    };
    let (token_rv, start_after) = match params.continue_token.as_deref() {
        None | Some("") => (None, None),
        Some(t) => {
            let (rv, key) = decode_continue(t).ok_or_else(|| {
                ApiError::bad_request(format!("continue key is not valid: {t:?}"))
            })?;
            if rv < shared.store.compacted() {
                return Err(ApiError::Expired {
                    message: "The provided continue parameter is too old to display a consistent \
                              list result. You can start a new list without the continue parameter, \
                              or use the continue value from the response to continue the list."
                        .into(),
                });
            }
            (Some(rv), Some(key))
        }
    };
    let ns = (!call.all_namespaces && call.def.namespaced).then_some(call.namespace.as_str());
    let page = shared
        .store
        .list(call.res, ns, start_after.as_ref(), limit, |o| {
            labels.matches(o) && fields.matches(o)
        });
    // Every page of one list reports the first page's version, as upstream does.
    let rv = token_rv.unwrap_or(page.rv);
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(key) = &page.next {
        meta["continue"] = json!(encode_continue(rv, key));
        meta["remainingItemCount"] = json!(page.remaining);
    }
    let items: Vec<&Value> = page.items.iter().map(|o| o.as_ref()).collect();
    let body = json!({
        "kind": format!("{}List", call.def.kind),
        "apiVersion": call.def.api_version(),
        "metadata": meta,
        "items": items,
    });
    ok(StatusCode::OK, &body)
}

fn watch_request(shared: &Shared, call: &Call, params: &Params) -> Result<WatchRequest, ApiError> {
    let (labels, mut fields) = labels_and_fields(call, params)?;
    if !call.name.is_empty() {
        // A watch on one object (`.../pods/<name>?watch=1`) is a collection watch
        // narrowed to its name, as upstream serves it.
        fields =
            FieldSelector::parse(&format!("metadata.name={}", call.name), call.def)?.and(fields);
    }
    let send_initial = params.send_initial_events.as_deref().map(truthy);
    let bookmarks = params.allow_watch_bookmarks.as_deref().is_some_and(truthy);
    if send_initial == Some(true) {
        // Upstream's ListOptions validation for streaming lists.
        let problem = if !bookmarks {
            Some(
                "allowWatchBookmarks: Required value: allowWatchBookmarks must be set to true when sendInitialEvents is true",
            )
        } else if params.resource_version_match.as_deref() != Some("NotOlderThan") {
            Some(
                "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )
        } else {
            None
        };
        if let Some(message) = problem {
            return Err(ApiError::Invalid {
                kind: "ListOptions".into(),
                group: "meta.k8s.io",
                name: String::new(),
                message: message.into(),
            });
        }
    }
    let start = match params.resource_version.as_deref() {
        None | Some("") | Some("0") => {
            if send_initial == Some(false) {
                Start::Now
            } else {
                Start::CurrentState
            }
        }
        Some(rv) => {
            let rv = rv.parse::<u64>().map_err(|_| {
                ApiError::bad_request(format!(
                    "resourceVersion: Invalid value: {rv:?}: must be an integer"
                ))
            })?;
            let current = shared.store.rv();
            if rv > current {
                return Err(ApiError::TooLargeResourceVersion {
                    requested: rv,
                    current,
                });
            }
            if send_initial == Some(true) {
                Start::CurrentState
            } else {
                Start::After(rv)
            }
        }
    };
    let timeout =
        match params.timeout_seconds.as_deref() {
            None | Some("") => DEFAULT_WATCH_TIMEOUT,
            Some(t) => Duration::from_secs(t.parse::<u64>().map_err(|_| {
                ApiError::bad_request(format!("timeoutSeconds: Invalid value: {t:?}"))
            })?),
        };
    Ok(WatchRequest {
        res: call.res,
        namespace: (!call.all_namespaces && call.def.namespaced).then(|| call.namespace.clone()),
        labels,
        fields,
        start,
        initial_events_end: send_initial == Some(true),
        bookmarks,
        timeout,
    })
}

fn get(shared: &Shared, call: &Call) -> Result<Response, ApiError> {
    let obj = shared
        .store
        .get(call.res, &call.namespace, &call.name)
        .ok_or_else(|| not_found(call))?;
    ok(StatusCode::OK, &obj)
}

pub(crate) fn not_found(call: &Call) -> ApiError {
    ApiError::NotFound {
        resource: call.def.group_resource(),
        name: call.name.clone(),
    }
}

fn create(shared: &Shared, call: &Call, body: &Bytes) -> Result<Response, ApiError> {
    let mut obj = parse_json(body)?;
    check_type(call.def, &obj)?;
    check_identity(call, &mut obj, None)?;
    if !meta_str(&obj, "resourceVersion").is_empty() {
        return Err(ApiError::bad_request(
            "resourceVersion should not be set on objects to be created",
        ));
    }
    if call.res == PODS {
        pods::prepare_create(shared, &mut obj, false)?;
    }
    let created = shared.store.create(call.res, &call.namespace, obj)?;
    ok(StatusCode::CREATED, &created)
}

/// The 409 a stale resourceVersion gets.
pub(crate) fn conflict(call: &Call, reason: &str) -> ApiError {
    ApiError::Conflict {
        resource: call.def.group_resource(),
        name: call.name.clone(),
        reason: reason.to_owned(),
    }
}

const MODIFIED: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// What a write through the main resource or `/status` leaves: the main resource
/// cannot change `status` (for resources with a status subresource), `/status`
/// changes nothing but `status`.
fn merge_sub(call: &Call, old: &Value, mut new: Value) -> Result<Value, ApiError> {
    let keep_status = |from: &Value, to: &mut Value| {
        if let Value::Object(m) = to {
            match from.get("status") {
                Some(s) => m.insert("status".into(), s.clone()),
                None => m.remove("status"),
            };
        }
    };
    match call.sub {
        Some(Subresource::Status) => {
            let mut out = old.clone();
            keep_status(&new, &mut out);
            Ok(out)
        }
        _ => {
            if call.def.has_status {
                keep_status(old, &mut new);
            }
            if call.res == PODS {
                pods::check_update(call, old, &new)?;
            }
            Ok(new)
        }
    }
}

fn update(shared: &Shared, call: &Call, body: &Bytes) -> Result<Response, ApiError> {
    let mut new = parse_json(body)?;
    check_type(call.def, &new)?;
    check_identity(call, &mut new, Some(&call.name))?;
    let want_rv = meta_str(&new, "resourceVersion").to_owned();
    if want_rv.is_empty() && call.def.plural == "leases" {
        return Err(ApiError::Invalid {
            kind: call.def.kind.to_owned(),
            group: call.def.group,
            name: call.name.clone(),
            message:
                "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
                    .into(),
        });
    }
    let updated = shared
        .store
        .update(call.res, &call.namespace, &call.name, |old| {
            if !want_rv.is_empty() && want_rv != meta_str(old, "resourceVersion") {
                return Err(conflict(call, MODIFIED));
            }
            merge_sub(call, old, new)
        })?;
    ok(StatusCode::OK, &updated)
}

fn patch(
    shared: &Shared,
    call: &Call,
    content_type: &str,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let kind = PatchKind::from_content_type(content_type)?;
    let patch_body: Value = serde_json::from_slice(body).map_err(|e| {
        let what = if kind == PatchKind::Apply {
            "the apply patch must be JSON (YAML apply bodies are not supported by the fake)"
        } else {
            "the patch is not valid JSON"
        };
        ApiError::bad_request(format!("{what}: {e}"))
    })?;
    let result = shared
        .store
        .update(call.res, &call.namespace, &call.name, |old| {
            let patched = patch::apply(kind, old, &patch_body)?;
            let want_rv = meta_str(&patched, "resourceVersion");
            if !want_rv.is_empty() && want_rv != meta_str(old, "resourceVersion") {
                return Err(conflict(call, MODIFIED));
            }
            merge_sub(call, old, patched)
        });
    match result {
        Ok(obj) => ok(StatusCode::OK, &obj),
        // Server-side apply creates what does not exist yet.
        Err(ApiError::NotFound { .. }) if kind == PatchKind::Apply && call.sub.is_none() => {
            let mut obj = patch::apply(kind, &json!({}), &patch_body)?;
            check_type(call.def, &obj)?;
            check_identity(call, &mut obj, Some(&call.name))?;
            if call.res == PODS {
                pods::prepare_create(shared, &mut obj, false)?;
            }
            let created = shared.store.create(call.res, &call.namespace, obj)?;
            ok(StatusCode::CREATED, &created)
        }
        Err(e) => Err(e),
    }
}

/// Checks DeleteOptions preconditions (uid, resourceVersion) against an object.
pub(crate) fn check_preconditions(
    call: &Call,
    options: Option<&Value>,
    obj: &Value,
) -> Result<(), ApiError> {
    let Some(pre) = options.and_then(|o| o.get("preconditions")) else {
        return Ok(());
    };
    for (field, label) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
        if let Some(want) = pre.get(field).and_then(Value::as_str) {
            let have = meta_str(obj, field);
            if want != have {
                return Err(conflict(
                    call,
                    &format!(
                        "Precondition failed: {label} in precondition: {want}, {label} in object meta: {have}"
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn delete_options(body: &Bytes) -> Result<Option<Value>, ApiError> {
    if body.is_empty() {
        return Ok(None);
    }
    parse_json(body).map(Some)
}

fn delete(shared: &Shared, call: &Call, body: &Bytes) -> Result<Response, ApiError> {
    let options = delete_options(body)?;
    let deleted = shared
        .store
        .delete(call.res, &call.namespace, &call.name, |obj| {
            check_preconditions(call, options.as_ref(), obj)
        })?;
    ok(StatusCode::OK, &deleted)
}

fn delete_collection(shared: &Shared, call: &Call, params: &Params) -> Result<Response, ApiError> {
    let (labels, fields) = labels_and_fields(call, params)?;
    let ns = call.def.namespaced.then_some(call.namespace.as_str());
    let page = shared.store.list(call.res, ns, None, 0, |o| {
        labels.matches(o) && fields.matches(o)
    });
    let mut items = Vec::new();
    for obj in page.items {
        let (ns, name) = (meta_str(&obj, "namespace"), meta_str(&obj, "name"));
        if let Ok(gone) = shared.store.delete(call.res, ns, name, |_| Ok(())) {
            items.push(gone);
        }
    }
    let items: Vec<&Value> = items.iter().map(|o| o.as_ref()).collect();
    let body = json!({
        "kind": format!("{}List", call.def.kind),
        "apiVersion": call.def.api_version(),
        "metadata": {"resourceVersion": shared.store.rv().to_string()},
        "items": items,
    });
    ok(StatusCode::OK, &body)
}
