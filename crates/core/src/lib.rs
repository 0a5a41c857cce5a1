//! topospread: Kubernetes Pod Topology Spread scheduling, with kube-scheduler's semantics.
//!
//! This is the scheduling core, pure and free of I/O: k8s-openapi objects are turned once
//! into compact internal types ([`convert`] into [`api`]: interned labels, compiled
//! selectors) and kept in a [`Snapshot`], a live cache that nodes and pods can be added
//! to, updated in and removed from at any time. A [`Scheduler`] holds one
//! [`Profile`](framework::Profile) per configured scheduler name and a scheduling
//! queue; each cycle runs the framework's extension points and the
//! default plugins ([`plugins`]), PodTopologySpread among them. [`Simulation`] drives it
//! on a virtual clock; the live scheduler drives the same scheduler on the real one.
//! Loading YAML, workloads and API-server validation live in `topospread-k8s`.
//!
//! ```
//! use k8s_openapi::api::core::v1::{Node, Pod};
//! use topospread::{Features, Scheduler, SchedulerConfig, Simulation, Snapshot, convert};
//!
//! let node: Node = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "a"}},
//!     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
//! })).unwrap();
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"}},
//!     "spec": {"containers": [{"name": "c"}], "topologySpreadConstraints": [{
//!         "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
//!         "whenUnsatisfiable": "DoNotSchedule",
//!         "labelSelector": {"matchLabels": {"app": "web"}}}]}
//! })).unwrap();
//!
//! let mut snapshot = Snapshot::new();
//! let node = convert::node(&node, snapshot.symbols_mut()).unwrap();
//! snapshot.add_node(node).unwrap();
//! let pod = convert::pod(&pod, snapshot.symbols_mut()).unwrap();
//! let web = snapshot.add_pod(pod).unwrap();
//!
//! let config = SchedulerConfig::default();
//! let scheduler = Scheduler::new(&config, Features::default(), &mut snapshot).unwrap();
//! let mut simulation = Simulation::new(scheduler);
//! simulation.enqueue_pending(&snapshot);
//! simulation.run(&mut snapshot, |_, _| {}).unwrap();
//! let node = snapshot.pod_node(web).unwrap();
//! assert_eq!(&*snapshot.node(node).node.name, "n1");
//! ```

pub mod admission;
pub mod api;
#[cfg(any(test, feature = "builders"))]
pub mod builders;
pub mod config;
pub mod convert;
mod features;
pub mod framework;
pub mod plugins;
mod queue;
mod rng;
mod scheduler;
mod simulation;
pub mod snapshot;
pub mod spread;
pub mod validation;
pub mod version;

pub use config::SchedulerConfig;
pub use features::{Feature, Features};
pub use framework::{ConfigError, Profiles, check_configuration};
pub use queue::{
    Clock, PendingCounts, Popped, QueueConfig, QueueError, QueueName, SchedulingQueue, SystemClock,
    VirtualClock,
};
pub use rng::Rng;
pub use scheduler::{
    Attempt, EnqueueError, Explanation, NodeFilterVerdicts, PodOutcome, Preemption, ScheduleResult,
    Scheduler, Victim,
};
pub use simulation::{DrainAction, Drained, SimEvent, Simulation, SimulationError};
pub use snapshot::Snapshot;
