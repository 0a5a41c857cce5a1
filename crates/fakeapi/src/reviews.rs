//! TokenReview (authentication.k8s.io/v1) and SubjectAccessReview
//! (authorization.k8s.io/v1) creation, as a real API server answers them for delegated
//! authentication and authorization: the review comes back `201 Created` with its spec
//! and a `status`. Tokens and the non-resource URLs each user may reach are set by the
//! test ([`FakeApi::add_token`](crate::FakeApi::add_token),
//! [`FakeApi::allow_path`](crate::FakeApi::allow_path)); resource attributes are never
//! allowed (the fake has no RBAC). Reviews are not stored, as upstream's are not.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::{ApiError, json_response};
use crate::server::Shared;

/// The review resources: group, version, plural, kind.
pub(crate) const REVIEWS: [(&str, &str, &str, &str); 2] = [
    ("authentication.k8s.io", "v1", "tokenreviews", "TokenReview"),
    (
        "authorization.k8s.io",
        "v1",
        "subjectaccessreviews",
        "SubjectAccessReview",
    ),
];

/// The audience a real API server reports for its own service-account tokens.
const AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";

/// Who the test says a token belongs to, and which non-resource URLs who may reach.
#[derive(Debug, Default)]
pub(crate) struct Identities {
    tokens: BTreeMap<String, User>,
    /// (user or group, verb or `*`, path or prefix ending in `*`).
    paths: Vec<(String, String, String)>,
}

#[derive(Debug, Clone)]
struct User {
    username: String,
    uid: String,
    groups: Vec<String>,
}

impl Identities {
    pub(crate) fn add_token(&mut self, token: &str, username: &str, groups: &[&str]) {
        let mut groups: Vec<String> = groups.iter().map(ToString::to_string).collect();
        // A real server adds the group every authenticated user is in.
        if !groups.iter().any(|g| g == "system:authenticated") {
            groups.push("system:authenticated".into());
        }
        self.tokens.insert(
            token.to_string(),
            User {
                username: username.to_string(),
                uid: format!("uid-{username}"),
                groups,
            },
        );
    }

    pub(crate) fn allow_path(&mut self, subject: &str, verb: &str, path: &str) {
        self.paths
            .push((subject.to_string(), verb.to_string(), path.to_string()));
    }

    fn allowed(&self, user: &str, groups: &[String], verb: &str, path: &str) -> bool {
        self.paths.iter().any(|(who, v, p)| {
            (who == user || groups.contains(who))
                && (v == "*" || v == verb)
                && match p.strip_suffix('*') {
                    Some(prefix) => path.starts_with(prefix),
                    None => p == path,
                }
        })
    }
}

/// The body as a review of `kind`: a JSON object of that kind (a missing `kind` is
/// taken as this one, as the endpoint's decoder defaults it).
fn parse(body: &Bytes, kind: &str, api_version: &str) -> Result<Value, ApiError> {
    let mut review: Value = serde_json::from_slice(body).map_err(|e| ApiError::BadRequest {
        message: format!("couldn't get version/kind; json parse error: {e}"),
    })?;
    if !review.is_object() {
        return Err(ApiError::BadRequest {
            message: format!("the body of the request is not a {kind}"),
        });
    }
    match review.get("kind").and_then(Value::as_str) {
        None | Some("") => review["kind"] = json!(kind),
        Some(k) if k == kind => {}
        Some(k) => {
            return Err(ApiError::BadRequest {
                message: format!("not a {kind}: {k}"),
            });
        }
    }
    review["apiVersion"] = json!(api_version);
    if review
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty())
    {
        return Err(ApiError::BadRequest {
            message: "namespace is not allowed on this type".into(),
        });
    }
    let meta = review
        .as_object_mut()
        .and_then(|o| o.get_mut("metadata"))
        .and_then(Value::as_object_mut);
    match meta {
        Some(m) => {
            m.insert("creationTimestamp".into(), Value::Null);
        }
        None => review["metadata"] = json!({"creationTimestamp": null}),
    }
    Ok(review)
}

/// `POST /apis/authentication.k8s.io/v1/tokenreviews`.
pub(crate) async fn token_review(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let mut review = match parse(&body, "TokenReview", "authentication.k8s.io/v1") {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let token = review
        .pointer("/spec/token")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if token.is_empty() {
        // Upstream's tokenreview REST storage.
        return ApiError::BadRequest {
            message: "token is required for TokenReview in authentication".into(),
        }
        .into_response();
    }
    let asked: Vec<Value> = review
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let user = shared.identities().tokens.get(&token).cloned();
    review["status"] = match user {
        Some(u) if asked.is_empty() || asked.iter().any(|a| a == AUDIENCE) => json!({
            "authenticated": true,
            "user": {"username": u.username, "uid": u.uid, "groups": u.groups},
            "audiences": [AUDIENCE],
        }),
        Some(_) => {
            json!({"user": {}, "error": "[invalid bearer token, token audiences is invalid]"})
        }
        None => json!({"user": {}, "error": "[invalid bearer token, token lookup failed]"}),
    };
    json_response(StatusCode::CREATED, &review)
}

/// `POST /apis/authorization.k8s.io/v1/subjectaccessreviews`.
pub(crate) async fn subject_access_review(
    State(shared): State<Arc<Shared>>,
    body: Bytes,
) -> Response {
    let mut review = match parse(&body, "SubjectAccessReview", "authorization.k8s.io/v1") {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let spec = review.get("spec").cloned().unwrap_or(Value::Null);
    let user = spec.get("user").and_then(Value::as_str).unwrap_or("");
    let groups: Vec<String> = spec
        .get("groups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|g| g.as_str().map(str::to_string))
        .collect();
    let resource = spec.get("resourceAttributes").filter(|v| !v.is_null());
    let non_resource = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
    // Upstream's ValidateSubjectAccessReviewSpec, in its order.
    let invalid = match (resource, non_resource) {
        (Some(_), Some(_)) => Some(
            "spec.nonResourceAttributes: Invalid value: \"object\": cannot be specified in combination with resourceAttributes",
        ),
        (None, None) => Some(
            "spec.resourceAttributes: Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ),
        _ if user.is_empty() && groups.is_empty() => {
            Some("spec.user: Invalid value: \"\": at least one of user or group must be specified")
        }
        _ => None,
    };
    if let Some(message) = invalid {
        return ApiError::Invalid {
            kind: "SubjectAccessReview".into(),
            group: "authorization.k8s.io",
            name: String::new(),
            message: message.into(),
        }
        .into_response();
    }
    let allowed = non_resource.is_some_and(|attrs| {
        let path = attrs.get("path").and_then(Value::as_str).unwrap_or("");
        let verb = attrs.get("verb").and_then(Value::as_str).unwrap_or("");
        shared.identities().allowed(user, &groups, verb, path)
    });
    review["status"] = if allowed {
        json!({"allowed": true, "reason": format!("allowed by the fake API server's rule for {user:?}")})
    } else {
        json!({"allowed": false})
    };
    json_response(StatusCode::CREATED, &review)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn paths_match_users_groups_verbs_and_prefixes() {
        let mut ids = Identities::default();
        ids.allow_path("alice", "get", "/metrics");
        ids.allow_path("system:monitoring", "*", "/debug/*");
        let none: Vec<String> = Vec::new();
        assert!(ids.allowed("alice", &none, "get", "/metrics"));
        assert!(!ids.allowed("alice", &none, "post", "/metrics"));
        assert!(!ids.allowed("bob", &none, "get", "/metrics"));
        let monitoring = vec!["system:monitoring".to_string()];
        assert!(ids.allowed("bob", &monitoring, "put", "/debug/pprof"));
        assert!(!ids.allowed("bob", &monitoring, "get", "/metrics"));
    }
}
