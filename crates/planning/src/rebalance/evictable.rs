//! Which pods a plan may evict: the descheduler's default evictor rules (a controller
//! recreates the pod; not a DaemonSet or mirror pod; no local storage; not critical;
//! not terminating), the plan's scope (namespace, label selector), and the pod's
//! PodDisruptionBudgets.

use k8s_openapi::api::core::v1 as core;
use serde::Serialize;
use std::collections::BTreeMap;
use topospread::api::{Pod, Selector, Sym};
use topospread::snapshot::Snapshot;

/// `kubernetes.io/config.mirror`: the annotation the kubelet puts on a static pod's mirror.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// Priorities from here on are system-critical (`system-cluster-critical` is 2e9).
pub(crate) const SYSTEM_CRITICAL_PRIORITY: i32 = 2_000_000_000;
/// `kubernetes.io/config.source`: where the kubelet read a pod; anything but `api` is static.
const CONFIG_SOURCE_ANNOTATION: &str = "kubernetes.io/config.source";
/// `descheduler.alpha.kubernetes.io/evict`: the descheduler may evict the pod whatever else holds.
const EVICT_ANNOTATION: &str = "descheduler.alpha.kubernetes.io/evict";

/// Why a pod is never evicted, whatever the plan would gain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "camelCase", tag = "reason")]
#[non_exhaustive]
pub enum NotEvictable {
    /// No controller would recreate it.
    #[error("not managed by a controller (nothing would recreate it)")]
    NoController,
    /// No owner reference at all (the descheduler's evictor requires one, of any kind).
    #[error("has no owner reference")]
    NoOwner,
    /// A static pod (`kubernetes.io/config.source` other than `api`).
    #[error("a static pod")]
    Static,
    /// A DaemonSet runs one per node; moving it means nothing.
    #[error("owned by a DaemonSet")]
    DaemonSet,
    /// A static pod's mirror: the kubelet owns it.
    #[error("a mirror (static) pod")]
    Mirror,
    /// emptyDir or hostPath data would be lost.
    #[error("uses local storage (volume {volume:?})")]
    LocalStorage {
        /// The volume.
        volume: String,
    },
    /// System-critical priority.
    #[error("system-critical priority")]
    Critical,
    /// Already terminating.
    #[error("terminating")]
    Terminating,
}

/// What the internal pod does not record: the eviction blockers read off a manifest
/// (owner kind, mirror annotation, volumes). `None` for a pod the rules allow to move.
pub fn eviction_blocker(pod: &core::Pod) -> Option<NotEvictable> {
    let meta = &pod.metadata;
    if meta.deletion_timestamp.is_some() {
        return Some(NotEvictable::Terminating);
    }
    if meta
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(MIRROR_ANNOTATION))
    {
        return Some(NotEvictable::Mirror);
    }
    let owner = meta
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true));
    match owner.map(|o| o.kind.as_str()) {
        None => return Some(NotEvictable::NoController),
        Some("DaemonSet") => return Some(NotEvictable::DaemonSet),
        Some(_) => {}
    }
    let spec = pod.spec.as_ref();
    if let Some(blocker) = local_storage(spec) {
        return Some(blocker);
    }
    if spec.and_then(|s| s.priority).unwrap_or(0) >= SYSTEM_CRITICAL_PRIORITY
        || spec
            .and_then(|s| s.priority_class_name.as_deref())
            .is_some_and(|c| c == "system-cluster-critical" || c == "system-node-critical")
    {
        return Some(NotEvictable::Critical);
    }
    None
}

/// The descheduler's DefaultEvictor `Filter` with its default protections, read off a
/// manifest (kubernetes-sigs/descheduler `pkg/framework/plugins/defaultevictor/
/// defaultevictor.go`): the `descheduler.alpha.kubernetes.io/evict` annotation allows any
/// pod; otherwise mirror and static pods, terminating pods, pods without any owner
/// reference (controller or not; failed bare pods are protected by default too), pods
/// with a DaemonSet owner, pods with emptyDir or hostPath volumes, and pods whose
/// `spec.priority` is system-critical are not evicted. `None` for a pod it may evict.
pub fn descheduler_eviction_blocker(pod: &core::Pod) -> Option<NotEvictable> {
    let meta = &pod.metadata;
    let annotations = meta.annotations.as_ref();
    if annotations.is_some_and(|a| a.contains_key(EVICT_ANNOTATION)) {
        return None;
    }
    if annotations.is_some_and(|a| a.contains_key(MIRROR_ANNOTATION)) {
        return Some(NotEvictable::Mirror);
    }
    if annotations
        .and_then(|a| a.get(CONFIG_SOURCE_ANNOTATION))
        .is_some_and(|s| s != "api")
    {
        return Some(NotEvictable::Static);
    }
    if meta.deletion_timestamp.is_some() {
        return Some(NotEvictable::Terminating);
    }
    let owners = meta.owner_references.as_deref().unwrap_or_default();
    if owners.is_empty() {
        return Some(NotEvictable::NoOwner);
    }
    if owners.iter().any(|o| o.kind == "DaemonSet") {
        return Some(NotEvictable::DaemonSet);
    }
    let spec = pod.spec.as_ref();
    if let Some(blocker) = local_storage(spec) {
        return Some(blocker);
    }
    if spec
        .and_then(|s| s.priority)
        .is_some_and(|p| p >= SYSTEM_CRITICAL_PRIORITY)
    {
        return Some(NotEvictable::Critical);
    }
    None
}

/// Why a pod is not a candidate right now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Blocked {
    /// Outside `--namespace` / `-l`.
    OutOfScope,
    /// The eviction rules forbid it.
    Rule(NotEvictable),
    /// A PodDisruptionBudget allows no disruption: `namespace/name`.
    Budget(String),
}

impl std::fmt::Display for Blocked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::OutOfScope => f.write_str("outside the namespace/selector given"),
            Self::Rule(r) => r.fmt(f),
            Self::Budget(b) => write!(f, "PodDisruptionBudget {b} allows no disruptions"),
        }
    }
}

/// The plan's scope and the blockers known from the manifests.
#[derive(Debug)]
pub(crate) struct Evictability {
    namespace: Option<Sym>,
    /// `Some` when a namespace was given that no pod lives in (nothing is in scope).
    namespace_missing: bool,
    selector: Option<Selector>,
    /// `(namespace, name)` -> blocker, from [`eviction_blocker`].
    rules: BTreeMap<(String, String), NotEvictable>,
}

impl Evictability {
    pub(crate) fn new(
        snapshot: &Snapshot,
        namespace: Option<&str>,
        selector: Option<Selector>,
        rules: BTreeMap<(String, String), NotEvictable>,
    ) -> Self {
        let ns = namespace.and_then(|n| snapshot.symbols().get(n));
        Self {
            namespace: ns,
            namespace_missing: namespace.is_some() && ns.is_none(),
            selector,
            rules,
        }
    }

    /// Whether the pod is inside `--namespace` and `-l`.
    pub(crate) fn in_scope(&self, pod: &Pod, snapshot: &Snapshot) -> bool {
        !self.namespace_missing
            && self.namespace.is_none_or(|n| n == pod.namespace)
            && self
                .selector
                .as_ref()
                .is_none_or(|s| s.matches(&pod.labels, snapshot.symbols()))
    }

    /// Whether the pod is inside `--namespace` (helpers that make room may be outside `-l`).
    pub(crate) fn in_namespace(&self, pod: &Pod) -> bool {
        !self.namespace_missing && self.namespace.is_none_or(|n| n == pod.namespace)
    }

    /// Why the pod may not be evicted at this step, ignoring scope; `None` if it may.
    pub(crate) fn blocker(&self, pod: &Pod, snapshot: &Snapshot) -> Option<Blocked> {
        let symbols = snapshot.symbols();
        let key = (
            symbols.resolve(pod.namespace).to_string(),
            pod.name.to_string(),
        );
        if let Some(r) = self.rules.get(&key) {
            return Some(Blocked::Rule(r.clone()));
        }
        if pod.terminating {
            return Some(Blocked::Rule(NotEvictable::Terminating));
        }
        if pod.controller.is_none() {
            return Some(Blocked::Rule(NotEvictable::NoController));
        }
        if pod.priority >= SYSTEM_CRITICAL_PRIORITY {
            return Some(Blocked::Rule(NotEvictable::Critical));
        }
        // Moves run one at a time and each waits for its replacement to be Ready, so a
        // budget's allowance is the same at every step: one eviction needs one.
        snapshot
            .workloads()
            .disruption_budgets
            .iter()
            .find(|b| b.covers(pod.namespace, &pod.labels, symbols) && b.disruptions_allowed <= 0)
            .map(|b| Blocked::Budget(format!("{}/{}", symbols.resolve(b.namespace), b.name)))
    }

    /// [`Self::blocker`], with scope first.
    pub(crate) fn candidate_blocker(&self, pod: &Pod, snapshot: &Snapshot) -> Option<Blocked> {
        if !self.in_scope(pod, snapshot) {
            return Some(Blocked::OutOfScope);
        }
        self.blocker(pod, snapshot)
    }
}

/// The first emptyDir or hostPath volume, which both evictors protect (its data is lost
/// with the pod).
fn local_storage(spec: Option<&core::PodSpec>) -> Option<NotEvictable> {
    let v = spec
        .and_then(|s| s.volumes.as_ref())
        .into_iter()
        .flatten()
        .find(|v| v.empty_dir.is_some() || v.host_path.is_some())?;
    Some(NotEvictable::LocalStorage {
        volume: v.name.clone(),
    })
}
