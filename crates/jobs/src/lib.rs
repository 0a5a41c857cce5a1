//! Each topospread command's work as a library call: a typed request in, a typed,
//! versioned report out. The `topospread` CLI parses flags, calls these and renders what
//! they return; another program can call them the same way.
//!
//! Every call takes a [`Context`]: the input limits and the Kubernetes release with its
//! feature gates. Nothing is read from process globals.
//!
//! ```
//! use topospread_jobs::{Context, simulate};
//!
//! // The Kubernetes docs' example cluster (no files given), the newest release.
//! let ctx = Context::new();
//! let run = simulate::simulate(&ctx, simulate::SimulateRequest::new(vec![], 0), &mut ())?;
//! assert_eq!(run.report.kind, simulate::KIND);
//! assert_eq!((run.report.scheduled, run.report.pending), (6, 0));
//! # Ok::<(), topospread_jobs::Error>(())
//! ```

mod context;
mod error;

pub mod config;
pub mod explain;
pub mod input;
pub mod rebalance;
pub mod runtime;
pub mod show;
pub mod simulate;
pub mod test;
pub mod validate;
pub mod whatif;

pub use context::{Context, DEFAULT_MAX_INPUT_BYTES, InputOptions};
pub use error::{Error, Result};
