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
//!
//! ```
//! use topospread_k8s::{build, load};
//!
//! let yaml = "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {zone: a}}\n";
//! let manifests = load::parse_manifests(yaml, "cluster.yaml").unwrap();
//! let snapshot = build::build_snapshot(&manifests.objects).unwrap();
//! assert_eq!(snapshot.nodes().len(), 1);
//! ```

pub mod admission;
pub mod build;
pub mod load;
pub mod notes;
pub mod validation;
pub mod workloads;
