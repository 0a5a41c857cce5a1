//! Kubernetes objects in, for the topospread scheduling core.
//!
//! - [`load`]: YAML and JSON manifests and kubectl dumps into k8s-openapi objects, with
//!   errors naming the file, object and field.
//! - [`build`]: a [`Snapshot`](topospread::Snapshot) from loaded objects, pods through
//!   Priority [`admission`] as the API server would admit them.
//! - [`workloads`]: what controllers would create (Deployments, ReplicaSets,
//!   StatefulSets, DaemonSets, Jobs), as pending pods.
//! - [`notes`]: what was skipped or left out, summarised one line per kind of note.
//! - [`validation`]: the API server's validation of objects and the scheduler's
//!   configuration, and lints for what is accepted but will not do what was meant.
//! - [`fuzz`]: all of `validate` over one text, the fuzz target's and `fuzz_smoke`'s pipeline.
//!
//! ```
//! use topospread::{Features, Scheduler, SchedulerConfig, Simulation};
//! use topospread_k8s::{build, load};
//!
//! let yaml = r#"
//! apiVersion: v1
//! kind: Node
//! metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}
//! status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
//! ---
//! apiVersion: v1
//! kind: Pod
//! metadata: {name: web-0, labels: {app: web}}
//! spec:
//!   containers: [{name: c}]
//!   topologySpreadConstraints:
//!   - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone,
//!      whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
//! "#;
//! let manifests = load::parse_manifests(yaml, "cluster.yaml").unwrap();
//! let mut snapshot = build::build_snapshot(&manifests.objects).unwrap();
//! let scheduler =
//!     Scheduler::new(&SchedulerConfig::default(), Features::default(), &mut snapshot).unwrap();
//! let mut simulation = Simulation::new(scheduler);
//! simulation.enqueue_pending(&snapshot);
//! simulation.run(&mut snapshot, |_, _| {}).unwrap();
//! let (web, _) = snapshot.pods().next().unwrap();
//! assert!(snapshot.pod_node(web).is_some());
//! ```

pub mod admission;
pub mod apply;
pub mod build;
pub mod fuzz;
pub mod load;
pub mod notes;
pub mod validation;
pub mod workloads;
