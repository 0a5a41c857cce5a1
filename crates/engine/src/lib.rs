//! topospread: Kubernetes Pod Topology Spread scheduling, with kube-scheduler's semantics.
//!
//! The engine is pure: it takes Kubernetes objects (k8s-openapi types or YAML text), turns
//! them into compact internal types, and runs the scheduling framework over a snapshot.
//! It does no I/O; the `topospread` CLI and the live scheduler are thin shells over it.
//!
//! ```
//! use topospread::{Features, ScheduleResult, Scheduler, SchedulerConfig, Snapshot};
//!
//! let mut snapshot = Snapshot::new();
//! let mut scheduler =
//!     Scheduler::new(&SchedulerConfig::default(), Features::default(), &mut snapshot)?;
//! // No nodes yet: the cycle fails as kube-scheduler's does.
//! let pod: k8s_openapi::api::core::v1::Pod =
//!     serde_json::from_value(serde_json::json!({"metadata": {"name": "p"}}))?;
//! let pod = topospread::convert::pod(&pod, snapshot.symbols_mut())?;
//! assert!(matches!(scheduler.schedule_one(&snapshot, &pod), ScheduleResult::Error(_)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod api;
pub mod config;
pub mod convert;
pub mod features;
pub mod framework;
pub mod load;
pub mod plugins;
pub mod scenario;
pub mod scheduler;
pub mod snapshot;

pub use config::SchedulerConfig;
pub use features::Features;
pub use framework::ConfigError;
pub use scheduler::{Explanation, Preemption, ScheduleResult, Scheduler};
pub use snapshot::Snapshot;
