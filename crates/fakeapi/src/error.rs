//! Errors: the API failures the server answers with a `Status` object, and the
//! crate's own failures (binding a listener).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// A group and a resource (`pods`, `deployments.apps`), the way the API server
/// names what an error is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GroupResource {
    pub(crate) group: &'static str,
    pub(crate) resource: String,
}

impl std::fmt::Display for GroupResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// A request the server refuses, carrying what the `Status` body will say. The
/// messages follow upstream's `k8s.io/apimachinery/pkg/api/errors` wording so
/// clients that match on them behave as against a real server.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum ApiError {
    /// 404 for a named object.
    #[error("{resource} \"{name}\" not found")]
    NotFound {
        resource: GroupResource,
        name: String,
    },
    /// 404 for a path the server does not serve.
    #[error("the server could not find the requested resource")]
    NoRoute,
    /// 409 on create when the name is taken.
    #[error("{resource} \"{name}\" already exists")]
    AlreadyExists {
        resource: GroupResource,
        name: String,
    },
    /// 409 for a failed optimistic-concurrency or precondition check.
    #[error("Operation cannot be fulfilled on {resource} \"{name}\": {reason}")]
    Conflict {
        resource: GroupResource,
        name: String,
        reason: String,
    },
    /// 403, as an admission plugin refusing a create answers.
    #[error("{resource} \"{name}\" is forbidden: {reason}")]
    Forbidden {
        resource: GroupResource,
        name: String,
        reason: String,
    },
    /// 403 as RBAC refuses a request none of the user's roles allows.
    #[error(
        "{resource} is forbidden: User \"system:anonymous\" cannot {verb} resource \"{resource}\" in API group \"{api_group}\" {}",
        scope(namespace)
    )]
    RbacForbidden {
        resource: GroupResource,
        verb: String,
        api_group: String,
        namespace: Option<String>,
    },
    /// 400 for a request the server cannot parse.
    #[error("{message}")]
    BadRequest { message: String },
    /// 422 for an object that fails validation.
    #[error("{kind}{} \"{name}\" is invalid: {message}", dotted(group))]
    Invalid {
        kind: String,
        group: &'static str,
        name: String,
        message: String,
    },
    /// 405 for a verb a resource does not support.
    #[error("{message}")]
    MethodNotAllowed { message: String },
    /// 410 Expired: a watch or continue token older than the kept history.
    #[error("{message}")]
    Expired { message: String },
    /// 415 for a patch type the server does not know.
    #[error(
        "the body of the request was in an unknown format - accepted media types include: {accepted}"
    )]
    UnsupportedMediaType { accepted: String },
    /// 429, as an eviction blocked by a PodDisruptionBudget answers.
    #[error("{message}")]
    TooManyRequests {
        message: String,
        cause: Option<String>,
    },
    /// 429 with `Retry-After`, as API Priority and Fairness answers a request it
    /// rejects (used by fault injection).
    #[error("Too many requests, please try again later.")]
    Throttled { retry_after_seconds: u64 },
    /// 504, as a watch from a resourceVersion the server has not reached gets.
    #[error("Timeout: Too large resource version: {requested}, current: {current}")]
    TooLargeResourceVersion { requested: u64, current: u64 },
    /// 500, used by fault injection.
    #[error("Internal error occurred: {message}")]
    Internal { message: String },
}

/// Where an RBAC refusal applies, as upstream words it.
fn scope(namespace: &Option<String>) -> String {
    match namespace {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_string(),
    }
}

/// `.group`, or nothing for the core group: upstream's qualified kind suffix.
fn dotted(group: &str) -> String {
    if group.is_empty() {
        String::new()
    } else {
        format!(".{group}")
    }
}

impl ApiError {
    /// A 400 naming the problem.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        ApiError::BadRequest {
            message: message.into(),
        }
    }

    /// The HTTP status code, which is also the `code` of the `Status` body.
    pub(crate) fn code(&self) -> u16 {
        match self {
            ApiError::NotFound { .. } | ApiError::NoRoute => 404,
            ApiError::AlreadyExists { .. } | ApiError::Conflict { .. } => 409,
            ApiError::BadRequest { .. } => 400,
            ApiError::Forbidden { .. } | ApiError::RbacForbidden { .. } => 403,
            ApiError::Invalid { .. } => 422,
            ApiError::MethodNotAllowed { .. } => 405,
            ApiError::Expired { .. } => 410,
            ApiError::UnsupportedMediaType { .. } => 415,
            ApiError::TooManyRequests { .. } | ApiError::Throttled { .. } => 429,
            ApiError::Internal { .. } => 500,
            ApiError::TooLargeResourceVersion { .. } => 504,
        }
    }

    /// The machine-readable `reason` of the `Status` body.
    fn reason(&self) -> &'static str {
        match self {
            ApiError::NotFound { .. } | ApiError::NoRoute => "NotFound",
            ApiError::AlreadyExists { .. } => "AlreadyExists",
            ApiError::Conflict { .. } => "Conflict",
            ApiError::BadRequest { .. } => "BadRequest",
            ApiError::Forbidden { .. } | ApiError::RbacForbidden { .. } => "Forbidden",
            ApiError::Invalid { .. } => "Invalid",
            ApiError::MethodNotAllowed { .. } => "MethodNotAllowed",
            ApiError::Expired { .. } => "Expired",
            ApiError::UnsupportedMediaType { .. } => "UnsupportedMediaType",
            ApiError::TooManyRequests { .. } | ApiError::Throttled { .. } => "TooManyRequests",
            ApiError::Internal { .. } => "InternalError",
            ApiError::TooLargeResourceVersion { .. } => "Timeout",
        }
    }

    /// The `details` of the `Status` body, when upstream sets any.
    fn details(&self) -> Option<Value> {
        let named = |resource: &GroupResource, name: &str| {
            let mut d = json!({"name": name, "kind": resource.resource});
            if !resource.group.is_empty() {
                d["group"] = json!(resource.group);
            }
            d
        };
        match self {
            ApiError::NotFound { resource, name }
            | ApiError::AlreadyExists { resource, name }
            | ApiError::Conflict { resource, name, .. }
            | ApiError::Forbidden { resource, name, .. } => Some(named(resource, name)),
            ApiError::Invalid {
                kind,
                group,
                name,
                message,
            } => {
                let mut d = json!({"name": name, "kind": kind});
                if !group.is_empty() {
                    d["group"] = json!(group);
                }
                // The field error as a cause, which kubectl prints after "is invalid: ".
                if let Some((field, detail)) = message.split_once(": ") {
                    let reason = if detail.starts_with("Required value") {
                        "FieldValueRequired"
                    } else {
                        "FieldValueInvalid"
                    };
                    d["causes"] = json!([{"reason": reason, "message": detail, "field": field}]);
                }
                Some(d)
            }
            ApiError::TooManyRequests {
                cause: Some(cause), ..
            } => Some(json!({"causes": [{"reason": "DisruptionBudget", "message": cause}]})),
            ApiError::Internal { message } => Some(json!({"causes": [{"message": message}]})),
            ApiError::Throttled {
                retry_after_seconds,
            } => Some(json!({"retryAfterSeconds": retry_after_seconds})),
            ApiError::TooLargeResourceVersion { .. } => Some(json!({
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1,
            })),
            _ => None,
        }
    }

    /// The `Status` object (kind Status, apiVersion v1) the response carries.
    pub(crate) fn status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.to_string(),
            "reason": self.reason(),
            "code": self.code(),
        });
        if let Some(details) = self.details() {
            status["details"] = details;
        }
        status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = json_response(code, &self.status());
        if let ApiError::Throttled {
            retry_after_seconds,
        } = self
        {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(retry_after_seconds),
            );
        }
        response
    }
}

/// A JSON response with the content type the API server sends.
pub(crate) fn json_response(code: StatusCode, body: &Value) -> Response {
    (
        code,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A success `Status`, what binding and eviction answer with.
pub(crate) fn success_status(code: u16) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": code,
    })
}

/// Failures of the fake server itself, as opposed to refusals it sends to clients.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The loopback listener could not be bound.
    #[error("binding the fake API server to {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// What the OS said.
        source: std::io::Error,
    },
    /// An object handed to the handle has no `apiVersion`/`kind` the server serves,
    /// or no `metadata.name`.
    #[error("object not accepted by the fake API server: {reason}")]
    BadObject {
        /// What is wrong with it.
        reason: String,
    },
    /// A resource name (`pods`, `deployments.apps`) the server does not serve.
    #[error("unknown resource {resource:?}")]
    UnknownResource {
        /// The name asked for.
        resource: String,
    },
    /// The server refused the write (exists, invalid, ...); the message is the
    /// `Status` message a client would have seen.
    #[error("{message}")]
    Refused {
        /// The HTTP code a client would have got.
        code: u16,
        /// The `Status` message.
        message: String,
    },
}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        Error::Refused {
            code: e.code(),
            message: e.to_string(),
        }
    }
}
