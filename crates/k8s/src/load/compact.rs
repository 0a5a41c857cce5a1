//! Bound pods kept compact: a dump's tens of thousands of running pods are converted to
//! the engine's form as they are read, keeping besides it only what controllers,
//! admission and reports read of them, and the k8s-openapi object (kilobytes per pod
//! whatever it holds) is dropped. Commands that write pods back read pods whole
//! instead; `validate` keeps what its lints read of each pod ([`Compactor::linting`]).

use k8s_openapi::api::core::v1::Pod;
use std::sync::{Arc, Mutex};

use crate::admission::resource_quota::{QuotaPod, QuotaPods};
use topospread::api::Symbols;
use topospread::api::resources::RequestOptions;
use topospread::convert::{self, ConvertError, DEFAULT_NAMESPACE};
use topospread_planning::controller::DeletionCandidate;
use topospread_planning::rebalance::{
    NotEvictable, descheduler_eviction_blocker, eviction_blocker,
};

use super::{Loaded, Object};
use crate::validation::{
    ApiServerFeatures, Lint, LintPod, LintPods, Refusal, Workload, lint_workload,
    validate_objects_with,
};

/// A bound pod as read in compact form: its conversion, and what else is read of it.
#[derive(Debug)]
pub struct CompactPod {
    /// `metadata.namespace` (`default` when left out).
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace` as written (reports of refusals name it so).
    pub namespace_written: Option<String>,
    /// The controlling owner reference's kind and name.
    pub controller: Option<(String, String)>,
    /// `status.phase`.
    pub phase: Option<String>,
    /// `metadata.deletionTimestamp` is set.
    pub terminating: bool,
    /// `spec.nodeName`, or the node a DaemonSet pod's affinity pins it to.
    pub daemon_node: Option<String>,
    /// What the ReplicaSet controller's deletion order reads of it.
    pub candidate: DeletionCandidate,
    /// `spec.priorityClassName`, `spec.priority` and `spec.preemptionPolicy` as
    /// written: Priority admission runs when the snapshot is built, once every
    /// PriorityClass of the files is known.
    pub priority_class_name: Option<String>,
    /// `spec.priority` as written.
    pub priority: Option<i32>,
    /// `spec.preemptionPolicy` as written.
    pub preemption_policy: Option<String>,
    /// What the API server would refuse of the object (usually nothing).
    pub refusals: Vec<Refusal>,
    /// What the ResourceQuota admission plugin counts of it.
    pub quota: Arc<QuotaPod>,
    /// Annotated `kubernetes.io/config.mirror`: a static pod's mirror, which its node's
    /// kubelet runs.
    pub mirror: bool,
    /// The `controller-revision-hash` label of a pod a StatefulSet controls (its
    /// revision, which a rolling update compares), kept for those pods only.
    pub revision: Option<String>,
    /// Why rebalance's evictors never evict it, when one of them does not (boxed: most
    /// pods of a dump have none, and a dump has hundreds of thousands).
    pub eviction_blockers: Option<Box<EvictionBlockers>>,
    /// The pod as written (before the API server's defaults), as compact JSON, when the
    /// compactor keeps it for writing back ([`Compactor::keeping_written`]).
    written: Option<Box<[u8]>>,
    /// What [`lint_workload`] finds in the pod as written, when read for linting.
    pub lints: Vec<Lint>,
    /// The pod the cluster lints read for it, when read for linting and it has
    /// constraints.
    pub lint_pod: Option<Arc<LintPod>>,
    /// The pod in the engine's form (interned in the [`Compactor`]'s symbols), or why
    /// it has none; moved into the snapshot when it is built, so it exists once.
    /// Boxed, so the room is given back when it is taken.
    converted: Mutex<Option<Box<Converted>>>,
}

/// A pod's conversion, or why it has none.
type Converted = Result<topospread::api::Pod, ConvertError>;

impl Clone for CompactPod {
    fn clone(&self) -> Self {
        Self {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            namespace_written: self.namespace_written.clone(),
            controller: self.controller.clone(),
            phase: self.phase.clone(),
            terminating: self.terminating,
            daemon_node: self.daemon_node.clone(),
            candidate: self.candidate.clone(),
            priority_class_name: self.priority_class_name.clone(),
            priority: self.priority,
            preemption_policy: self.preemption_policy.clone(),
            refusals: self.refusals.clone(),
            quota: self.quota.clone(),
            mirror: self.mirror,
            revision: self.revision.clone(),
            eviction_blockers: self.eviction_blockers.clone(),
            written: self.written.clone(),
            lints: self.lints.clone(),
            lint_pod: self.lint_pod.clone(),
            converted: Mutex::new(self.lock().clone()),
        }
    }
}

impl CompactPod {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Box<Converted>>> {
        // A panic while holding the lock cannot leave the value half-written.
        self.converted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Moves the converted pod out, for the snapshot; `None` once taken (a second
    /// snapshot from the same objects needs them read again).
    pub fn take_converted(&self) -> Option<Converted> {
        self.lock().take().map(|c| *c)
    }

    /// The pod as written, read back from what [`Compactor::keeping_written`] kept;
    /// `None` when nothing was kept.
    pub fn written(&self) -> Option<Result<Pod, serde_json::Error>> {
        self.written.as_deref().map(serde_json::from_slice)
    }

    /// Whether the pod has finished (`status.phase` Succeeded or Failed).
    pub fn is_finished(&self) -> bool {
        matches!(self.phase.as_deref(), Some("Succeeded" | "Failed"))
    }
}

/// Why rebalance's evictors never evict a pod, read off the pod as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvictionBlockers {
    /// Rebalance's own evictor ([`eviction_blocker`]).
    pub topospread: Option<NotEvictable>,
    /// The descheduler's default evictor ([`descheduler_eviction_blocker`]).
    pub descheduler: Option<NotEvictable>,
    /// Its first emptyDir volume, which `kubectl drain` will not evict without
    /// `--delete-emptydir-data` (hostPath it evicts).
    pub empty_dir: Option<String>,
}

/// Converts bound pods as they are read: owns the symbol table the snapshot is then
/// built with, and the gates conversion and validation follow.
#[derive(Clone, Debug, Default)]
pub struct Compactor {
    symbols: Symbols,
    rules: Rules,
}

/// The gates a pod is compacted under: all of compaction but the symbol table, so the
/// typing workers admit pods while conversion, which interns, runs in file order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rules {
    request_options: RequestOptions,
    features: ApiServerFeatures,
    /// Quota views, shared between the pods that read the same.
    quota_pods: Arc<QuotaPods>,
    /// Keep each pod as written, for writing back.
    keep_written: bool,
    /// With [`Compactor::linting`]: the pods the cluster lints read, shared likewise.
    lint_pods: Option<Arc<LintPods>>,
}

impl Compactor {
    /// A compactor converting under `request_options` and validating under `features`.
    pub fn new(request_options: RequestOptions, features: ApiServerFeatures) -> Self {
        Self {
            symbols: Symbols::default(),
            rules: Rules {
                request_options,
                features,
                quota_pods: Arc::default(),
                keep_written: false,
                lint_pods: None,
            },
        }
    }

    /// This compactor, keeping each pod as written (compact JSON, a fraction of the
    /// k8s-openapi object's size) so that a command writing the cluster back
    /// (`-o yaml`) can read it again, one pod at a time.
    pub fn keeping_written(mut self) -> Self {
        self.rules.keep_written = true;
        self
    }

    /// Also keeps what `validate`'s lints read of each pod ([`CompactPod::lints`],
    /// [`CompactPod::lint_pod`]), and compacts only pods read back from a server: the
    /// snapshot admits a pod written by hand through LimitRanger, RuntimeClass and quota,
    /// which compact pods skip.
    pub fn linting(mut self) -> Self {
        self.rules.lint_pods = Some(Arc::default());
        self
    }

    /// The symbols the compact pods were interned in: the snapshot built from them
    /// must start from these.
    pub fn into_symbols(self) -> Symbols {
        self.symbols
    }

    /// The gates, for the typing workers.
    pub(crate) fn rules(&self) -> Rules {
        self.rules.clone()
    }

    /// The symbol table, for conversion elsewhere in file order; given back with
    /// [`Compactor::restore_symbols`] before this compactor converts again.
    pub(crate) fn take_symbols(&mut self) -> Symbols {
        std::mem::take(&mut self.symbols)
    }

    /// Gives back the table [`Compactor::take_symbols`] lent.
    pub(crate) fn restore_symbols(&mut self, symbols: Symbols) {
        self.symbols = symbols;
    }

    /// Replaces every whole bound pod of `objects` by its compact form. Pods without a
    /// node, or named only by `generateName`, stay whole.
    pub fn compact(&mut self, objects: &mut [Loaded]) {
        for l in objects {
            if let Some(admitted) = self.rules.admit(l) {
                self.rules.convert(l, admitted, &mut self.symbols);
            }
        }
    }
}

impl Rules {
    /// Everything compaction does to a whole bound pod before conversion: the API
    /// server's validation and defaults (applied to the object in place), and what
    /// controllers, admission and reports read of it. `None` for any other object.
    pub(crate) fn admit(&self, l: &mut Loaded) -> Option<Box<CompactPod>> {
        let linting = self.lint_pods.as_deref();
        if !matches!(&l.object, Object::Pod(p)
            if compactable(p) && (linting.is_none() || crate::build::from_server(p)))
        {
            return None;
        }
        let refusals = validate_objects_with(std::slice::from_ref(l), &self.features);
        let Object::Pod(p) = &mut l.object else {
            return None;
        };
        // Read before the defaults, as the commands reading pods whole read them.
        let written = self
            .keep_written
            .then(|| serde_json::to_vec(&**p).ok())
            .flatten()
            .map(Vec::into_boxed_slice);
        let blockers = EvictionBlockers {
            topospread: eviction_blocker(p),
            descheduler: descheduler_eviction_blocker(p),
            empty_dir: p
                .spec
                .as_ref()
                .and_then(|s| s.volumes.as_ref())
                .and_then(|v| v.iter().find(|v| v.empty_dir.is_some()))
                .map(|v| v.name.clone()),
        };
        let (lints, lint_pod) = match linting {
            Some(lint_pods) => (self.lint(p), lint_pods.read(p)),
            None => (Vec::new(), None),
        };
        // The API server's defaults (a pod read back from a cluster has them already).
        crate::admission::set_pod_defaults(p);
        let mut compact = admitted(p, refusals, &self.quota_pods);
        compact.written = written;
        compact.eviction_blockers = (blockers.topospread.is_some()
            || blockers.descheduler.is_some()
            || blockers.empty_dir.is_some())
        .then(|| Box::new(blockers));
        compact.lints = lints;
        compact.lint_pod = lint_pod;
        Some(Box::new(compact))
    }

    /// [`lint_workload`] on the pod as written (lent to the workload, not copied).
    fn lint(&self, p: &mut Pod) -> Vec<Lint> {
        let workload = Workload::Pod(std::mem::take(p));
        let lints = lint_workload(&workload, &self.features);
        if let Workload::Pod(pod) = workload {
            *p = pod;
        }
        lints
    }

    /// Converts the pod `admit` admitted (interning into `symbols`) and puts its compact
    /// form in place of the whole object, which is dropped.
    pub(crate) fn convert(
        &self,
        l: &mut Loaded,
        mut compact: Box<CompactPod>,
        symbols: &mut Symbols,
    ) {
        let Object::Pod(p) = &l.object else {
            return;
        };
        let converted = convert::pod_with(p, symbols, self.request_options);
        // In file order: the first pod the cluster lints read alike is the one kept.
        if let (Some(lint_pods), Some(read)) = (&self.lint_pods, compact.lint_pod.take()) {
            compact.lint_pod = Some(lint_pods.keep(read));
        }
        compact.converted = Mutex::new(Some(Box::new(converted)));
        l.object = Object::CompactPod(compact);
    }
}

/// What is read of an admitted pod besides its conversion (made later, in file order).
fn admitted(p: &Pod, refusals: Vec<Refusal>, quota_pods: &QuotaPods) -> CompactPod {
    let meta = &p.metadata;
    let spec = p.spec.as_ref();
    let controller = meta
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .map(|o| (o.kind.clone(), o.name.clone()));
    let revision = controller
        .as_ref()
        .filter(|(kind, _)| kind == "StatefulSet")
        .and_then(|_| meta.labels.as_ref()?.get(crate::workloads::REVISION_LABEL))
        .cloned();
    CompactPod {
        namespace: meta
            .namespace
            .clone()
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string()),
        name: meta.name.clone().unwrap_or_default(),
        namespace_written: meta.namespace.clone(),
        controller,
        phase: p.status.as_ref().and_then(|s| s.phase.clone()),
        terminating: meta.deletion_timestamp.is_some(),
        daemon_node: crate::workloads::pod_node(p),
        candidate: crate::workloads::deletion_candidate(p),
        priority_class_name: spec.and_then(|s| s.priority_class_name.clone()),
        priority: spec.and_then(|s| s.priority),
        preemption_policy: spec.and_then(|s| s.preemption_policy.clone()),
        refusals,
        quota: quota_pods.of(p),
        mirror: meta
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key("kubernetes.io/config.mirror")),
        revision,
        eviction_blockers: None,
        written: None,
        lints: Vec::new(),
        lint_pod: None,
        converted: Mutex::new(None),
    }
}

/// A pod bound to a node and named: what a dump is made of.
fn compactable(p: &Pod) -> bool {
    p.metadata.name.as_deref().is_some_and(|n| !n.is_empty())
        && p.spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_some_and(|n| !n.is_empty())
}
