//! Why a cluster could not be reached or read, and API errors on one line as kubectl
//! prints them.

/// Why a cluster could not be reached or read: each names the kubeconfig or the server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The kubeconfig (or in-cluster configuration) cannot be read or used.
    #[error("{origin}: {message}")]
    Kubeconfig {
        /// Which configuration: `kubeconfig PATH`, or where it was looked for.
        origin: String,
        /// What is wrong with it.
        message: String,
    },
    /// No client could be built for the cluster the configuration names.
    #[error("cluster {server}: {message}")]
    Client {
        /// The server URL.
        server: String,
        /// Why.
        message: String,
    },
    /// The API server's `/version` could not be read or understood.
    #[error("cluster {server}: reading the API server's release (/version): {message}")]
    ServerVersion {
        /// The server URL.
        server: String,
        /// Why.
        message: String,
    },
    /// The API server runs a release topospread does not model, and neither
    /// `--kubernetes-version` nor `--allow-unsupported-kubernetes-version` was given.
    #[error(
        "cluster {server}: the API server runs Kubernetes {git_version}, outside the releases topospread models (1.{oldest} to 1.{newest}): give --kubernetes-version, or --allow-unsupported-kubernetes-version to behave as {nearest}"
    )]
    UnsupportedRelease {
        /// The server URL.
        server: String,
        /// Its `gitVersion`.
        git_version: String,
        /// The oldest minor modelled.
        oldest: u32,
        /// The newest minor modelled.
        newest: u32,
        /// What forcing would behave as.
        nearest: topospread::version::KubernetesVersion,
    },
    /// Listing a kind the answer needs failed.
    #[error("cluster {server}: listing {kinds}: {message}")]
    List {
        /// The server URL.
        server: String,
        /// The kind's plural (`Nodes`, `PriorityClasses`).
        kinds: String,
        /// The API's answer on one line ([`describe`]).
        message: String,
    },
}

/// A result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An API `Status` on one line, as kubectl prints it: `Error from server (Reason):
/// message` (not the `Status { .. }` dump kube's own message ends with).
pub fn status_line(s: &kube::core::Status) -> String {
    let message = if s.message.is_empty() {
        format!("the server responded with the status code {}", s.code)
    } else {
        s.message.lines().next().unwrap_or("").to_string()
    };
    if s.reason.is_empty() {
        format!("Error from server: {message}")
    } else {
        format!("Error from server ({}): {message}", s.reason)
    }
}

/// A client error on one line: an API `Status` as [`status_line`] prints it, any other
/// error as its message.
pub fn describe(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => status_line(s),
        e => e.to_string().lines().next().unwrap_or("").to_string(),
    }
}

/// A watch error on one line: what failed, then [`describe`]'s words.
pub fn describe_watch(e: &kube::runtime::watcher::Error) -> String {
    use kube::runtime::watcher::Error as W;
    match e {
        W::InitialListFailed(k) => format!("initial list failed: {}", describe(k)),
        W::WatchStartFailed(k) => format!("starting the watch failed: {}", describe(k)),
        W::WatchError(s) => format!("the watch failed: {}", status_line(s)),
        W::WatchFailed(k) => format!("the watch stream failed: {}", describe(k)),
        e => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_status_is_one_line_as_kubectl_prints_it() {
        let status: kube::core::Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "code": 409, "reason": "Conflict",
            "message": "Operation cannot be fulfilled on pods \"web-0\": the object has been modified",
        }))
        .expect("the test Status deserializes");
        let e = kube::Error::Api(Box::new(status.clone()));
        assert_eq!(
            describe(&e),
            "Error from server (Conflict): Operation cannot be fulfilled on pods \"web-0\": the object has been modified"
        );
        assert!(
            e.to_string().contains("Status {"),
            "kube's own words dump it"
        );
        let w = kube::runtime::watcher::Error::WatchError(Box::new(status));
        assert_eq!(
            describe_watch(&w),
            "the watch failed: Error from server (Conflict): Operation cannot be fulfilled on pods \"web-0\": the object has been modified"
        );
        let bare: kube::core::Status = serde_json::from_value(serde_json::json!({"code": 500}))
            .expect("the test object deserializes");
        assert_eq!(
            status_line(&bare),
            "Error from server: the server responded with the status code 500"
        );
    }
}
