//! Each topospread command's work as a library call: a typed request in, a typed,
//! versioned report out. The `topospread` CLI parses flags, calls these and renders what
//! they return; another program can call them the same way.
//!
//! Every call takes a [`Context`]: the input limits and the Kubernetes release with its
//! feature gates. Nothing is read from process globals. The jobs that read a cluster
//! take it as one [`Cluster`] (or, when they run no scheduler, a [`ClusterSource`])
//! inside their request.
//!
//! Every type of the JSON contract lives here, each report beside its job and the parts
//! the planners and controllers produce in [`report`], converted from their typed
//! results; `topospread-report`, `-html` and `-ui` render these types.
//!
//! ```
//! use topospread_jobs::{Cluster, Context, simulate};
//!
//! // The Kubernetes docs' example cluster (no files given), the newest release.
//! let ctx = Context::new();
//! let request = simulate::SimulateRequest::new(Cluster::default());
//! let run = simulate::simulate(&ctx, request, &mut ())?;
//! assert_eq!(run.report.kind, simulate::KIND);
//! assert_eq!((run.report.scheduled, run.report.pending), (6, 0));
//! # Ok::<(), topospread_jobs::Error>(())
//! ```

mod cluster;
mod context;
mod error;

pub mod capacity;
pub mod config;
pub mod domains;
pub mod explain;
pub mod guard;
pub mod input;
pub mod rebalance;
pub mod report;
pub mod runtime;
pub mod selector;
pub mod show;
pub mod simulate;
pub mod test;
pub mod validate;
pub mod whatif;

pub use cluster::{Cluster, ClusterSource};
pub use context::{Context, DEFAULT_MAX_INPUT_BYTES, InputOptions};
pub use error::{Error, Result};
