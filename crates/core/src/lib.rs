//! topospread: Kubernetes Pod Topology Spread scheduling, with kube-scheduler's semantics.
//!
//! The engine is pure: it takes Kubernetes objects (YAML text or k8s-openapi types),
//! turns them once into compact internal types ([`api`]: interned labels, compiled
//! selectors), and runs the scheduling framework ([`framework`]) and its plugins
//! ([`plugins`]) over a [`snapshot::Snapshot`]. It does no I/O; the `topospread` CLI and
//! the live scheduler are thin shells over it.
//!
//! ```
//! use topospread::{convert, load, scenario};
//!
//! let yaml = "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {zone: a}}\n";
//! let manifests = load::parse_manifests(yaml, "cluster.yaml").unwrap();
//! let snapshot = convert::build_snapshot(&manifests.objects).unwrap();
//! assert_eq!(snapshot.nodes().len(), 1);
//! # let _ = scenario::CaseKind::Plugin;
//! ```

pub mod admission;
pub mod api;
pub mod builders;
pub mod config;
pub mod convert;
pub mod features;
pub mod framework;
pub mod load;
pub mod perf;
pub mod plugins;
pub mod queue;
pub mod rebalance;
pub mod render;
pub mod scenario;
pub mod scheduler;
pub mod simulation;
pub mod snapshot;
pub mod validation;
pub mod workloads;

pub use config::SchedulerConfig;
pub use features::Features;
pub use framework::{ConfigError, Profiles, check_configuration};
pub use scheduler::{Explanation, Preemption, ScheduleResult, Scheduler};
pub use snapshot::Snapshot;
