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
    /// The cluster could not be reached or read (its kubeconfig, a client for it, its
    /// release): the client's error, with its words.
    #[error(transparent)]
    Client(#[from] topospread_kubeclient::Error),
    /// An internal task (the metrics and health server, leader election, the scheduler
    /// itself) stopped or panicked: the process ends so that its pod restarts.
    #[error("{task} stopped: {reason}")]
    TaskStopped {
        /// Which task.
        task: &'static str,
        /// Why (its error, or its panic).
        reason: String,
    },
    /// Every watch stream ended (the client was dropped): nothing more can be learned.
    #[error("the watch streams ended")]
    WatchesEnded,
}

/// A result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
