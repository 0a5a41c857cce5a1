//! Why a job stops: one enum, each message naming the input (file, object, field) as the
//! CLI prints it on one line.

use topospread_k8s::build::BuildError;
use topospread_k8s::load::LoadError;

/// Why a job could not produce its report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An input that cannot be read (missing, unreadable, over the byte cap, not UTF-8).
    #[error("{input}: {reason}")]
    Read {
        /// The file, folder or `<stdin>`.
        input: String,
        /// What went wrong.
        reason: String,
    },
    /// An input that cannot be read, with the system's error.
    #[error("{context}: {source}")]
    Io {
        /// The file or folder and what was being done.
        context: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// A manifest that does not parse.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// An object that cannot become part of the snapshot.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// Input the API server, a controller or kube-scheduler would refuse, or flags that
    /// name something the input lacks.
    #[error("{0}")]
    Refused(String),
    /// The engine failed while simulating (a bug, or an impossible state it reports).
    #[error("{0}")]
    Simulation(String),
    /// A report could not be written.
    #[error("writing the report: {0}")]
    Render(String),
}

impl From<topospread_driver::DriverError> for Error {
    fn from(e: topospread_driver::DriverError) -> Self {
        match e {
            topospread_driver::DriverError::Build(e) => Self::Build(e),
            topospread_driver::DriverError::Refused(m) => Self::Refused(m),
            topospread_driver::DriverError::Render(m) => Self::Render(m),
            topospread_driver::DriverError::Io { context, source } => Self::Io { context, source },
            other => Self::Simulation(other.to_string()),
        }
    }
}

/// A job's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Returns [`Error::Refused`] with a formatted message.
macro_rules! refuse {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::Refused(format!($($arg)*)))
    };
}
pub(crate) use refuse;
