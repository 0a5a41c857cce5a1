//! topospread: Kubernetes Pod Topology Spread scheduling, with kube-scheduler's semantics.
//!
//! The engine is pure: it takes Kubernetes objects (k8s-openapi types or YAML text), turns
//! them into compact internal types, and runs the scheduling framework over a snapshot.
//! It does no I/O; the `topospread` CLI and the live scheduler are thin shells over it.

pub mod api;
pub mod config;
pub mod convert;
pub mod features;
pub mod framework;
pub mod load;
pub mod plugins;
pub mod render;
pub mod scenario;
pub mod scheduler;
pub mod snapshot;
pub mod workloads;
