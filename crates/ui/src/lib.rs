//! `topospread ui`: a local web app over a cluster loaded once. The objects are read
//! and admitted at start and kept in memory; every view (the domains, the simulation's
//! pending pods, a pod's explain, a what-if) is a job run over them, so a question never
//! pays the load again (issue 27's "pay the load once").
//!
//! The server binds loopback unless told otherwise and refuses cross-origin requests:
//! a page on another site cannot read the cluster or drive what-ifs through a browser.

mod edit;
mod server;
mod session;
mod views;

pub use server::{Bound, bind, router};
pub use session::{Options, Session};
pub use views::{
    CapacityFigureView, CapacityView, ClusterView, ConstraintChange, ConstraintSpread, DomainGroup,
    DomainMove, MovesView, NodeCell, SpreadView, WhatIfRequest, WhatIfView, WorkloadSpread,
};

/// Why the app could not start or answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The job refused or failed (bad files, an unknown pod, a what-if the API server
    /// would refuse): the job's one-line message.
    #[error(transparent)]
    Job(#[from] topospread_jobs::Error),
    /// A request that names something the cluster lacks, or asks nothing.
    #[error("{0}")]
    Request(String),
    /// The address could not be bound.
    #[error("binding {address}: {source}")]
    Bind {
        /// The address asked for.
        address: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The server stopped with an error.
    #[error("serving: {0}")]
    Serve(#[source] std::io::Error),
}
