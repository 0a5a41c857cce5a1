//! Discovery, so kubectl can map kinds to resources: `/version`, `/api`,
//! `/api/v1`, `/apis`, `/apis/<group>` and `/apis/<group>/<version>`. Only the
//! legacy (unaggregated) documents; kubectl falls back to them. Plus a skeletal
//! OpenAPI v3 (`/openapi/v3`) that carries no schemas, only each resource's PATCH
//! operation with the `fieldValidation` parameter: that is how kubectl decides
//! to leave validation to the server instead of downloading schemas.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::{ApiError, json_response};
use crate::resources::{self, ALL_VERBS, RESOURCES, Subresource};
use crate::reviews::REVIEWS;
use crate::server::Shared;

/// The minor release `/version` reports unless
/// [`Builder::kubernetes_minor`](crate::Builder::kubernetes_minor) says otherwise.
pub const DEFAULT_MINOR: u32 = 35;

/// `GET /version`: the release set on the builder, as a real server reports its own.
pub(crate) async fn version(State(shared): State<Arc<Shared>>) -> Response {
    let minor = shared.minor;
    json_response(
        StatusCode::OK,
        &json!({
            "major": "1",
            "minor": minor.to_string(),
            "gitVersion": format!("v1.{minor}.0-topospread-fakeapi"),
            "gitCommit": "0000000000000000000000000000000000000000",
            "gitTreeState": "clean",
            "buildDate": "2026-01-01T00:00:00Z",
            "goVersion": "go1.25.0",
            "compiler": "gc",
            "platform": "linux/amd64",
        }),
    )
}

/// `GET /api`.
pub(crate) async fn core_versions() -> Response {
    json_response(
        StatusCode::OK,
        &json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}],
        }),
    )
}

fn group_doc(group: &str, version: &str) -> Value {
    let gv = json!({"groupVersion": format!("{group}/{version}"), "version": version});
    json!({"name": group, "versions": [gv.clone()], "preferredVersion": gv})
}

/// `GET /apis`.
pub(crate) async fn groups() -> Response {
    let groups: Vec<Value> = resources::groups()
        .into_iter()
        .map(|(g, v)| group_doc(g, v))
        .collect();
    json_response(
        StatusCode::OK,
        &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
    )
}

/// `GET /apis/<group>`.
pub(crate) async fn group(Path(group): Path<String>) -> Response {
    match resources::groups().into_iter().find(|(g, _)| *g == group) {
        Some((g, v)) => {
            let mut doc = group_doc(g, v);
            doc["kind"] = json!("APIGroup");
            doc["apiVersion"] = json!("v1");
            json_response(StatusCode::OK, &doc)
        }
        None => ApiError::NoRoute.into_response(),
    }
}

/// `GET /api/<version>`.
pub(crate) async fn core_resources(Path(version): Path<String>) -> Response {
    resource_list("", &version)
}

/// `GET /apis/<group>/<version>`.
pub(crate) async fn group_resources(Path((group, version)): Path<(String, String)>) -> Response {
    resource_list(&group, &version)
}

fn resource_list(group: &str, version: &str) -> Response {
    let mut out = Vec::new();
    for def in RESOURCES
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        let mut entry = json!({
            "name": def.plural,
            "singularName": def.singular,
            "namespaced": def.namespaced,
            "kind": def.kind,
            "verbs": ALL_VERBS,
        });
        if !def.short_names.is_empty() {
            entry["shortNames"] = json!(def.short_names);
        }
        if !def.categories.is_empty() {
            entry["categories"] = json!(def.categories);
        }
        out.push(entry);
        for sub in def.subresources {
            let (kind, group, version, verbs): (&str, Option<&str>, Option<&str>, &[&str]) =
                match sub {
                    Subresource::Status => (def.kind, None, None, &["get", "patch", "update"]),
                    Subresource::Binding => ("Binding", None, None, &["create"]),
                    Subresource::Eviction => ("Eviction", Some("policy"), Some("v1"), &["create"]),
                };
            let mut entry = json!({
                "name": format!("{}/{}", def.plural, sub.name()),
                "singularName": "",
                "namespaced": def.namespaced,
                "kind": kind,
                "verbs": verbs,
            });
            if let (Some(g), Some(v)) = (group, version) {
                entry["group"] = json!(g);
                entry["version"] = json!(v);
            }
            out.push(entry);
        }
    }
    // The reviews: create-only, cluster-scoped, never stored.
    for (_, _, plural, kind) in REVIEWS
        .iter()
        .filter(|(g, v, _, _)| *g == group && *v == version)
    {
        out.push(json!({
            "name": plural,
            "singularName": "",
            "namespaced": false,
            "kind": kind,
            "verbs": ["create"],
        }));
    }
    if out.is_empty() {
        return ApiError::NoRoute.into_response();
    }
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    json_response(
        StatusCode::OK,
        &json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": out}),
    )
}

/// `GET /openapi/v3`: one document per group version.
pub(crate) async fn openapi_index() -> Response {
    let mut paths = serde_json::Map::new();
    let mut gvs: Vec<(&str, &str)> = vec![("", "v1")];
    gvs.extend(resources::groups());
    for (group, version) in gvs {
        let key = if group.is_empty() {
            format!("api/{version}")
        } else {
            format!("apis/{group}/{version}")
        };
        let url = format!("/openapi/v3/{key}?hash=0");
        paths.insert(key, json!({"serverRelativeURL": url}));
    }
    json_response(StatusCode::OK, &json!({"paths": paths}))
}

/// `GET /openapi/v3/api/v1`, `/openapi/v3/apis/<group>/<version>`.
pub(crate) async fn openapi_group_version(Path(path): Path<String>) -> Response {
    let segs: Vec<&str> = path.split('/').collect();
    let (group, version) = match segs.as_slice() {
        ["api", v] => ("", *v),
        ["apis", g, v] => (*g, *v),
        _ => return ApiError::NoRoute.into_response(),
    };
    let mut paths = serde_json::Map::new();
    for def in RESOURCES
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        let prefix = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        let path = if def.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", def.plural)
        } else {
            format!("{prefix}/{}/{{name}}", def.plural)
        };
        let patch = json!({
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": def.kind},
            "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}],
            "responses": {"200": {"description": "OK"}},
        });
        paths.insert(path, json!({"patch": patch}));
    }
    // A real server's documents give the reviews a POST only; the fake names a PATCH
    // with `fieldValidation` so that kubectl leaves validation to the server here too
    // (it has no schemas to validate with).
    for (_, _, plural, kind) in REVIEWS
        .iter()
        .filter(|(g, v, _, _)| *g == group && *v == version)
    {
        let patch = json!({
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": kind},
            "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}],
            "responses": {"200": {"description": "OK"}},
        });
        paths.insert(
            format!("/apis/{group}/{version}/{plural}"),
            json!({"patch": patch}),
        );
    }
    if paths.is_empty() {
        return ApiError::NoRoute.into_response();
    }
    json_response(
        StatusCode::OK,
        &json!({
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes (topospread fake)", "version": format!("v1.{DEFAULT_MINOR}.0")},
            "paths": paths,
            "components": {"schemas": {}},
        }),
    )
}

/// `GET /healthz`, `/livez`, `/readyz`.
pub(crate) async fn healthz() -> &'static str {
    "ok"
}
