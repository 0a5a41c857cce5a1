//! What can stop the live scheduler.

/// Why the scheduler ([`Running::wait`](crate::Running::wait)) stopped with a failure. Transient API errors are not here:
/// watchers retry with backoff and binds requeue; these end the process so its pod
/// restarts.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration cannot be served.
    #[error("configuration: {message}")]
    Config {
        /// What is wrong with it.
        message: String,
    },
    /// The scheduler could not be built from the configuration.
    #[error("configuration: {0}")]
    Scheduler(#[from] topospread::ConfigError),
    /// This replica held the lease and could not renew it in time: another replica may
    /// be scheduling now, so this one stopped at once.
    #[error("lost the lease {namespace}/{name}: {reason}")]
    LeaseLost {
        /// The Lease's namespace.
        namespace: String,
        /// The Lease's name.
        name: String,
        /// Why the renewal failed.
        reason: String,
    },
    /// The metrics and health endpoint could not listen.
    #[error("listening on {addr}: {source}")]
    Listen {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A serving certificate or key cannot be read or used.
    #[error("{flag} {}: {message}", path.display())]
    Tls {
        /// The flag that names the file.
        flag: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        message: String,
    },
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
    /// An internal task (the metrics and health server, leader election, the scheduler
    /// itself) stopped or panicked: the process ends so that its pod restarts.
    #[error("{task} stopped: {reason}")]
    TaskStopped {
        /// Which task.
        task: &'static str,
        /// Why (its error, or its panic).
        reason: String,
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
    /// Every watch stream ended (the client was dropped): nothing more can be learned.
    #[error("the watch streams ended")]
    WatchesEnded,
}

/// A result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<topospread_kubeclient::Error> for Error {
    /// The client's errors, as the same variants (and words) of this crate's.
    fn from(e: topospread_kubeclient::Error) -> Self {
        use topospread_kubeclient::Error as C;
        match e {
            C::Kubeconfig { origin, message } => Self::Kubeconfig { origin, message },
            C::Client { server, message } => Self::Client { server, message },
            C::ServerVersion { server, message } => Self::ServerVersion { server, message },
            C::UnsupportedRelease {
                server,
                git_version,
                oldest,
                newest,
                nearest,
            } => Self::UnsupportedRelease {
                server,
                git_version,
                oldest,
                newest,
                nearest,
            },
            C::List {
                server,
                kinds,
                message,
            } => Self::Client {
                server,
                message: format!("listing {kinds}: {message}"),
            },
        }
    }
}
