//! Planners that sit above topospread's scheduler and answer questions by simulating it.
//!
//! [`capacity`] answers "how many nodes of which template, in which zone, do these
//! pending pods need": the fewest new nodes (then the lowest price) such that the same
//! scheduler, run over the cluster with those nodes, places every pending pod it can
//! place at all. Every answer is the outcome of a simulation, never an estimate alone.
//! [`rebalance`] plans evictions (or scale-ins) that bring workloads back within their
//! maxSkew, and [`guard`] the `pod-deletion-cost` annotations that keep a ReplicaSet's
//! scale-in spread; [`controller`] is the workload controllers' arithmetic (deletion
//! order, rollout steps) that they and `topospread-k8s`'s workloads share.
//!
//! ```
//! use topospread::{Features, SchedulerConfig, Snapshot};
//! use topospread_planning::capacity::{CapacityRequest, NodeTemplate, plan};
//!
//! // An empty cluster, one pending pod, one template of 4-cpu nodes.
//! let mut snapshot = Snapshot::new();
//! let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-0", "namespace": "default"},
//!     "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
//! })).unwrap();
//! let pod = topospread::convert::pod(&pod, snapshot.symbols_mut()).unwrap();
//! snapshot.add_pod(pod).unwrap();
//! let node: k8s_openapi::api::core::v1::Node = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "m5"},
//!     "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}
//! })).unwrap();
//! let template = NodeTemplate::from_node(&node, &mut snapshot).unwrap();
//!
//! let config = SchedulerConfig::default();
//! let request = CapacityRequest::new(&snapshot, &config, Features::default(), vec![template]);
//! let answer = plan(&request).unwrap();
//! assert_eq!(answer.total_nodes(), 1);
//! assert!(answer.unplaceable.is_empty());
//! ```

pub mod capacity;
pub mod controller;
pub mod guard;
pub mod rebalance;
