//! A dev-only, in-process fake Kubernetes API server for testing clients such as
//! the live scheduler without a cluster.
//!
//! It serves JSON over HTTP for pods (with `binding`, `status` and `eviction`),
//! nodes, namespaces, services, replication controllers, events (core and
//! `events.k8s.io`), the `apps/v1` workloads, PodDisruptionBudgets,
//! PriorityClasses, Leases, ServiceAccounts, ConfigMaps and RBAC objects: list
//! with `limit`/`continue` and selectors, watch with resourceVersions, bookmarks,
//! 410 Expired and selector-exit events, optimistic concurrency, patches, and
//! discovery enough for kubectl. TokenReview and SubjectAccessReview creation is
//! answered from the tokens and path grants a test sets ([`FakeApi::add_token`],
//! [`FakeApi::allow_path`]). A [`FakeApi`] handle seeds objects, counts bindings,
//! keeps a request log in Kubernetes terms ([`RequestRecord`]) and injects
//! [`Faults`].
//!
//! In process, [`FakeApi::router`] is the service `kube::Client::new` takes; on
//! loopback, [`FakeApi::serve`] returns a [`Served`] with the URL and a
//! kubeconfig for binaries and kubectl.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::Pod;
//! use kube::api::{Api, ListParams};
//! use topospread_fakeapi::FakeApi;
//!
//! let fake = FakeApi::new();
//! fake.insert(serde_json::json!({
//!     "apiVersion": "v1", "kind": "Pod",
//!     "metadata": {"name": "web-0", "namespace": "default"},
//!     "spec": {"containers": [{"name": "c", "image": "nginx"}]},
//! }))?;
//! let client = kube::Client::new(fake.router(), "default");
//! let pods: Api<Pod> = Api::default_namespaced(client);
//! assert_eq!(pods.list(&ListParams::default()).await?.items.len(), 1);
//! # Ok(())
//! # }
//! ```
//!
//! Where it knowingly differs from a real API server:
//! - Continue tokens page through the current state, not a snapshot (pages
//!   still report the first page's resourceVersion, so a watch from it replays
//!   anything newer); compaction expires them with 410.
//! - Deletion is immediate whatever the grace period (finalizers are honoured);
//!   no garbage collection, no namespace cascade; namespaces appear on first use.
//! - Validation is light: unknown fields are kept, only identity, types,
//!   `spec.nodeName` immutability and a few upstream checks are enforced.
//! - Server-side apply is a strategic merge with no field ownership; its body
//!   must be JSON (what kube sends). `dryRun` is refused. No Table output, so
//!   kubectl prints names and ages only.
//! - Core and `events.k8s.io` events are stored apart.
//! - RBAC objects are stored, never enforced: every request is allowed. A
//!   SubjectAccessReview allows only the non-resource URLs a test granted, never
//!   resource attributes; the OpenAPI documents give the reviews a PATCH (a real
//!   server's have a POST only) so that kubectl leaves their validation to the server.

mod discovery;
mod error;
mod faults;
mod handlers;
mod patch;
mod pods;
mod request;
mod resources;
mod reviews;
mod selectors;
mod server;
mod store;
mod util;
mod watch;

pub use discovery::DEFAULT_MINOR;
pub use error::Error;
pub use faults::Faults;
pub use server::{Builder, FakeApi, RequestRecord, Served};
