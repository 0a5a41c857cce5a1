//! Why the driver stops: input the API server, a controller or kube-scheduler refuses,
//! or an engine failure, each one line naming the object or flag.

use topospread_k8s::build::BuildError;

/// Why the cluster could not be built or driven.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    /// An object that cannot become part of the snapshot.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// Input the API server, a controller or kube-scheduler would refuse, or a what-if
    /// naming something the cluster lacks.
    #[error("{0}")]
    Refused(String),
    /// The engine failed while simulating (a bug, or an impossible state it reports).
    #[error("{0}")]
    Simulation(String),
    /// The cluster could not be written back (an object that does not serialize, a pod
    /// kept only in compact form).
    #[error("writing the cluster: {0}")]
    Render(String),
    /// The cluster could not be written to its destination.
    #[error("{context}: {source}")]
    Io {
        /// What was being written.
        context: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
}

/// A driver result.
pub type Result<T, E = DriverError> = std::result::Result<T, E>;

/// Returns [`DriverError::Refused`] with a formatted message.
macro_rules! refuse {
    ($($arg:tt)*) => {
        return Err($crate::error::DriverError::Refused(format!($($arg)*)))
    };
}
pub(crate) use refuse;
