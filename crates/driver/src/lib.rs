//! The cluster driver: one path through a simulated cluster, the one every topospread
//! command takes (`simulate`, `explain`, `validate`, `rebalance`, `guard`, `capacity`,
//! the web view and the scenario runner).
//!
//! It plays the parts of the API server and the controller manager around the engine's
//! scheduler, in the order a cluster does:
//! 1. [`admit_objects`]: workloads named again are applied over the earlier object as
//!    `kubectl apply` updates it (immutable fields refused), and every object is
//!    validated as the API server validates it on create.
//! 2. [`world::build`]: the snapshot of the objects; the workloads expanded by their
//!    controllers (ReplicaSets adopted or made, scale-ins, StatefulSet ordinals and their
//!    claims, DaemonSet and Job pods), each pod through the API server's admission
//!    plugins; Immediate claims provisioned; the first StatefulSet sync; the queue in
//!    PrioritySort order.
//! 3. [`ClusterDriver`]: what-ifs on nodes (drain, remove, lose), the scheduler until the
//!    queue settles with the StatefulSet controller syncing after each settling, then the
//!    Deployments' rollouts; the state is read back for reports, and written back as
//!    manifests ([`cluster_yaml`], `-o yaml`) that read back to the same cluster.

mod admit;
mod driver;
mod error;
pub mod notes;
pub mod rollout;
mod runtime;
pub mod whatif;
pub mod world;
mod write;

pub use admit::{Admitted, admit_objects};
pub use driver::{ClusterDriver, Placements};
pub use error::{DriverError, Result};
pub use runtime::{Placement, Progress, Runtime, SchedulerSetup};
pub use whatif::NodeWhatIfs;
pub use world::{BuildOptions, Provisioning, World};
pub use write::cluster_yaml;
