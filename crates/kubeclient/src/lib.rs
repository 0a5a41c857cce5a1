//! Reading a live cluster, for the `--live` commands (`simulate`, `rebalance`, `ui`,
//! ...) and for the daemon (`topospread-serve`) alike: the client from the kubeconfig
//! or the in-cluster service account ([`client`]), rate-limited as kube-scheduler's
//! ([`ClientLimits`]); the API server's release and the choice of the release to behave
//! as ([`server_release`], [`choose_release`]); objects typed without their
//! `managedFields` ([`Lean`]); and every object the scheduler reads listed into the
//! loader's objects ([`list_cluster`]). Nothing here schedules or serves.

mod client;
mod error;
pub mod lean;
pub mod limit;
mod list;
mod release;

pub use client::{ClientOptions, client, client_from_config, config, user_agent};
pub use error::{Error, Result, describe, describe_watch, status_line};
pub use lean::Lean;
pub use limit::ClientLimits;
pub use list::{PAGE, list_cluster};
pub use release::{
    Backoff, ReleaseChoice, ReleaseSource, ServerRelease, choose_release, release_of,
    server_release,
};
