//! What a request is about, in Kubernetes terms: verb, resource, subresource,
//! namespace and name, parsed from the method and URL the way upstream's
//! `RequestInfoFactory` does. Routing, fault injection and the request log all
//! read it.

use axum::http::{Method, Uri};

use crate::resources;
#[cfg(test)]
use crate::resources::RESOURCES;

/// The resource part of a request URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// Index into the resource table; `None` when the URL names a resource the
    /// fake does not serve.
    pub(crate) res: Option<usize>,
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) resource: String,
    pub(crate) subresource: Option<String>,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    /// Path segments beyond `name/subresource`, which no resource serves.
    pub(crate) extra: bool,
}

/// A parsed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestInfo {
    /// get, list, watch, create, update, patch, delete, deletecollection (or the
    /// lower-cased method for non-resource URLs).
    pub(crate) verb: String,
    /// `None` for non-resource URLs (`/version`, discovery).
    pub(crate) target: Option<Target>,
}

/// Whether a query parameter that upstream parses as a boolean is true.
pub(crate) fn truthy(v: &str) -> bool {
    matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True")
}

/// Whether the query asks for a watch (`watch=true`, `watch=1`).
pub(crate) fn is_watch(uri: &Uri) -> bool {
    uri.query().is_some_and(|q| {
        q.split('&')
            .filter_map(|kv| kv.split_once('=').or(Some((kv, "true"))))
            .any(|(k, v)| k == "watch" && truthy(v))
    })
}

impl RequestInfo {
    /// Parses method and URL.
    pub(crate) fn parse(method: &Method, uri: &Uri) -> Self {
        let segs: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
        let (group, version, rest) = match segs.as_slice() {
            ["api", version, rest @ ..] if !rest.is_empty() => ("", *version, rest),
            ["apis", group, version, rest @ ..] if !rest.is_empty() => (*group, *version, rest),
            _ => {
                return RequestInfo {
                    verb: method.as_str().to_ascii_lowercase(),
                    target: None,
                };
            }
        };
        let mut namespace = None;
        let mut rest: &[&str] = rest;
        let mut ns_object = false;
        if rest[0] == "namespaces" && rest.len() > 1 {
            namespace = Some(rest[1].to_owned());
            if rest.len() > 2 && !matches!(rest[2], "status" | "finalize") {
                rest = &rest[2..];
            } else {
                ns_object = true;
            }
        }
        let (resource, name, subresource, extra) = if ns_object {
            (
                "namespaces",
                namespace.take(),
                rest.get(2).map(|s| (*s).to_owned()),
                rest.len() > 3,
            )
        } else {
            (
                rest[0],
                rest.get(1).map(|s| (*s).to_owned()),
                rest.get(2).map(|s| (*s).to_owned()),
                rest.len() > 3,
            )
        };
        let verb = match *method {
            Method::GET | Method::HEAD if is_watch(uri) => "watch",
            Method::GET if name.is_some() => "get",
            Method::GET | Method::HEAD => "list",
            Method::POST => "create",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE if name.is_some() => "delete",
            Method::DELETE => "deletecollection",
            _ => "unknown",
        };
        RequestInfo {
            verb: verb.to_owned(),
            target: Some(Target {
                res: resources::by_path(group, version, resource),
                group: group.to_owned(),
                version: version.to_owned(),
                resource: resource.to_owned(),
                subresource,
                namespace,
                name,
                extra,
            }),
        }
    }

    /// The resource definition, when the URL names a served resource.
    #[cfg(test)]
    fn def(&self) -> Option<&'static resources::ResourceDef> {
        self.target.as_ref()?.res.map(|i| &RESOURCES[i])
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn info(method: Method, url: &str) -> RequestInfo {
        RequestInfo::parse(&method, &url.parse().unwrap())
    }

    #[test]
    fn parses_like_upstream() {
        let i = info(Method::GET, "/api/v1/pods?watch=1");
        assert_eq!(i.verb, "watch");
        let t = i.target.unwrap();
        assert_eq!(
            (t.resource.as_str(), t.namespace, t.name),
            ("pods", None, None)
        );

        let i = info(Method::POST, "/api/v1/namespaces/ns/pods/p/binding");
        let t = i.target.unwrap();
        assert_eq!(i.verb, "create");
        assert_eq!(t.namespace.as_deref(), Some("ns"));
        assert_eq!(t.name.as_deref(), Some("p"));
        assert_eq!(t.subresource.as_deref(), Some("binding"));

        let i = info(Method::GET, "/api/v1/namespaces/kube-system");
        let t = i.target.unwrap();
        assert_eq!(
            (i.verb.as_str(), t.resource.as_str(), t.name.as_deref()),
            ("get", "namespaces", Some("kube-system"))
        );

        let i = info(
            Method::PUT,
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l",
        );
        assert_eq!(i.verb, "update");
        assert!(i.def().is_some());

        let i = info(Method::GET, "/api/v1/namespaces/a/pods/p?watch=true");
        assert_eq!(i.verb, "watch");

        let i = info(Method::DELETE, "/apis/apps/v1/namespaces/a/deployments");
        assert_eq!(i.verb, "deletecollection");

        assert!(info(Method::GET, "/apis/apps/v1").target.is_none());
        assert!(info(Method::GET, "/version").target.is_none());
        assert!(info(Method::GET, "/api/v1/widgets").def().is_none());
    }
}
