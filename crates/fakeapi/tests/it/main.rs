//! The fake API server driven by kube 5's real client and kube-runtime's watcher
//! (and kubectl when it is installed): one integration-test binary.
#![allow(clippy::unwrap_used)]

mod support;

mod crud;
mod faults;
mod kubectl;
mod leases;
mod list;
mod pods;
mod watch;
