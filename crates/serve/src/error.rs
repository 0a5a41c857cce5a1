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
    /// Every watch stream ended (the client was dropped): nothing more can be learned.
    #[error("the watch streams ended")]
    WatchesEnded,
}

/// A result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
