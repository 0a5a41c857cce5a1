//! Workloads expanded into the pods their controllers would create.
//!
//! - Deployment: a ReplicaSet `<deployment>-<pod-template-hash>` (see
//!   [`pod_template_hash`] for how the hash is computed), then its pods.
//! - ReplicaSet, ReplicationController: pods `<owner>-<5 chars>`.
//! - StatefulSet: pods `<name>-0 .. <name>-(n-1)` (from `spec.ordinals.start` when
//!   set), in order, labelled
//!   `statefulset.kubernetes.io/pod-name` and `apps.kubernetes.io/pod-index`.
//! - Job: `parallelism` pods (default 1), capped by the `completions` its Succeeded pods
//!   have not yet made; none when suspended.
//! - CronJob: nothing (its pods exist only while a Job runs); a note says so.
//! - DaemonSet: one pod per node the DaemonSet controller would place one on, pinned
//!   with required node affinity on `metadata.name` as the controller does.
//!
//! Pods that already exist and are controlled by a workload count towards its size, so
//! a snapshot written after a simulation (workloads and bound pods) expands to nothing
//! new. Finished pods (phase Succeeded or Failed) do not, as controllers count only active
//! pods: the StatefulSet controller recreates a failed ordinal, a ReplicaSet replaces an
//! evicted pod. Pure: the caller reads the files.
//!
//! A Deployment adopts its live ReplicaSets (`deployment.rs`): the one whose template
//! equals the Deployment's, `pod-template-hash` aside, makes the missing pods under its
//! own name and hash. More pods than replicas (the manifest's, or a [`Scale`] request)
//! are [`Expansion::removed`] in the ReplicaSet controller's order, a StatefulSet's from
//! the highest ordinal. A Deployment whose old ReplicaSets still have pods is left as a
//! [`Rollout`], which the caller carries out step by step through the scheduler.
//!
//! ```
//! use topospread_k8s::load::parse_manifests;
//! use topospread_k8s::workloads::expand;
//!
//! let text = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: c, image: i}]}\n";
//! let m = parse_manifests(text, "db.yaml").unwrap();
//! let e = expand(&m.objects, 0);
//! let names: Vec<_> = e.pods.iter().map(|p| p.pod.metadata.name.clone().unwrap()).collect();
//! assert_eq!(names, ["db-0", "db-1"]);
//! ```

mod claims;
mod daemonset;
pub(crate) mod deployment;
mod existing;
mod naming;
mod ordered;
mod rollout;
mod scale;
mod statefulset;
pub(crate) use scale::requirements_match;
mod template;

use crate::load::{Loaded, Object, Source};
use crate::notes::Note;
use existing::Existing;
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use std::collections::{BTreeMap, BTreeSet};
use topospread::convert::DEFAULT_NAMESPACE;

pub(crate) use daemonset::pod_node;
pub use naming::{pod_template_hash, suffix as generated_name_suffix};
pub use ordered::{OrderedSet, Ordinal, RollingUpdate, Synced};
pub use rollout::{
    EndSpread, Interleaving, InterleavingReport, Revision, RevisionState, Rollout, RolloutReport,
    RolloutStall, SkewRange, StalledPod, StepReport,
};
pub(crate) use scale::candidate as deletion_candidate;
use scale::selector_matches;
pub use scale::{RemovedPod, Scale, ScaleError};
use topospread_planning::controller::TimeScale;

/// `pod-template-hash`: the label the deployment controller adds to its ReplicaSets' pods.
pub const POD_TEMPLATE_HASH_LABEL: &str = "pod-template-hash";
/// The StatefulSet pod-name label.
pub const STATEFULSET_POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// `controller-revision-hash`: the revision a StatefulSet (or DaemonSet) pod was made from.
pub const REVISION_LABEL: &str = "controller-revision-hash";

/// A workload whose pods could not be made, with the field at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {object}: {field}: {message}")]
pub struct WorkloadError {
    /// The file it came from.
    pub file: String,
    /// The workload, as `kind/name`.
    pub object: String,
    /// The field path, in the workload (`spec.template.spec...`).
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// A pod a controller would create.
#[derive(Clone, Debug)]
pub struct ExpandedPod {
    /// Where its workload came from.
    pub source: Source,
    /// The pod, with labels, namespace and a controller owner reference.
    pub pod: Pod,
}

/// A workload and the pods that belong to it (existing and new), for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadSummary {
    /// `Deployment`, `StatefulSet`, ...
    pub kind: &'static str,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// The pods, existing first, then new, by name.
    pub pods: Vec<String>,
}

/// What expansion produced.
#[derive(Clone, Debug, Default)]
pub struct Expansion {
    /// New pods, workload by workload, in creation order.
    pub pods: Vec<ExpandedPod>,
    /// ReplicaSets made for Deployments (not already in the input), so default
    /// spreading finds their selectors.
    pub replica_sets: Vec<Loaded>,
    /// Every workload with its pods.
    pub workloads: Vec<WorkloadSummary>,
    /// Things skipped on purpose, one note per object.
    pub notes: Vec<Note>,
    /// Workloads that could not be expanded; the others still are.
    pub errors: Vec<WorkloadError>,
    /// Existing pods their controller removes (more pods than replicas), in the
    /// controller's deletion order.
    pub removed: Vec<RemovedPod>,
    /// Deployments whose rollout is still to be carried out, step by step through the
    /// scheduler (the cluster driver's rollout); their new pods are not in [`Expansion::pods`].
    pub rollouts: Vec<Rollout>,
    /// PersistentVolumeClaims a `Parallel` StatefulSet's `volumeClaimTemplates` make for
    /// its new pods (`<template>-<set>-<ordinal>`), those not already in the input. An
    /// OrderedReady set's come with each ordinal it creates ([`OrderedSet::sync`]).
    pub claims: Vec<Loaded>,
    /// StatefulSets under `podManagementPolicy: OrderedReady` (the default): their new
    /// pods, still in [`Expansion::pods`], are created one ordinal at a time
    /// ([`OrderedSet::sync`]), not all at once.
    pub ordered: Vec<OrderedSet>,
}

fn ns_of(meta: &ObjectMeta) -> String {
    meta.namespace
        .clone()
        .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string())
}

fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
}

/// The API server's and the StatefulSet controller's gates that change the pods a
/// workload makes (`--kubernetes-version`, `--feature-gates`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkloadFeatures {
    /// `StatefulSetStartOrdinal`: while off, the API server drops `spec.ordinals` on
    /// create (`dropStatefulSetDisabledFields`) and the controller numbers from 0
    /// (`getStartOrdinal`).
    pub statefulset_start_ordinal: bool,
    /// `MaxUnavailableStatefulSet`: while off, the API server drops
    /// `spec.updateStrategy.rollingUpdate.maxUnavailable` and a rolling update replaces
    /// one pod at a time.
    pub max_unavailable_statefulset: bool,
    /// The release's minor version (1.x), for notes.
    pub release: u32,
    /// How the ReplicaSet controller's scale-down compares ready and creation times:
    /// exact until [`WorkloadFeatures::at`] gives the controller's clock.
    pub scale_down_times: TimeScale,
    /// LogarithmicScaleDown (on by default from 1.22, locked on from 1.31).
    logarithmic_scale_down: bool,
}

impl WorkloadFeatures {
    /// The gates of one release, `--feature-gates` applied.
    pub fn from_gates(gates: &topospread::version::FeatureGates) -> Self {
        Self {
            statefulset_start_ordinal: gates.enabled("StatefulSetStartOrdinal"),
            max_unavailable_statefulset: gates.enabled("MaxUnavailableStatefulSet"),
            release: gates.version().minor,
            scale_down_times: TimeScale::Exact,
            logarithmic_scale_down: logarithmic_scale_down(gates),
        }
    }

    /// These gates with the controller's clock at `now_ns` (nanoseconds since the epoch):
    /// under LogarithmicScaleDown, scale-downs then compare times by log2 bucket.
    #[must_use]
    pub fn at(self, now_ns: i128) -> Self {
        Self {
            scale_down_times: if self.logarithmic_scale_down {
                TimeScale::Logarithmic { now_ns }
            } else {
                TimeScale::Exact
            },
            ..self
        }
    }
}

/// Whether the ReplicaSet controller buckets times (KEP-2185, kubernetes PR 99212):
/// beta and on from 1.22 (older than every supported release), GA and locked on from
/// 1.31, so only `--feature-gates LogarithmicScaleDown=false` before 1.31 turns it off.
fn logarithmic_scale_down(gates: &topospread::version::FeatureGates) -> bool {
    let set = gates
        .unmodelled_settings()
        .contains(&"LogarithmicScaleDown");
    !set || gates.version().minor >= 31 || gates.enabled("LogarithmicScaleDown")
}

impl Default for WorkloadFeatures {
    /// The newest release's defaults.
    fn default() -> Self {
        Self::from_gates(&topospread::version::FeatureGates::default())
    }
}

/// The default of [`ExpandOptions::max_pods`].
pub const DEFAULT_MAX_PODS: usize = 1_000_000;

/// How [`expand_with`] expands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpandOptions<'s> {
    /// Fixes the random-looking name suffixes.
    pub seed: u64,
    /// The most pods all workloads together may create: a replica count beyond it is an
    /// error naming the field, not an exhausted machine.
    pub max_pods: usize,
    /// Replica counts replacing the manifests' (`--scale`); one naming no workload of
    /// the input is an error.
    pub scale: &'s [Scale],
    /// The release's gates for the API server and the controllers.
    pub features: WorkloadFeatures,
}

/// Expands every workload in `objects` into the pods its controller would create.
/// `seed` fixes the random-looking name suffixes. At most [`DEFAULT_MAX_PODS`] pods are
/// made; the workload that would pass that limit, and those after it, make none.
pub fn expand(objects: &[Loaded], seed: u64) -> Expansion {
    match expand_with(
        objects,
        ExpandOptions {
            seed,
            max_pods: DEFAULT_MAX_PODS,
            scale: &[],
            features: WorkloadFeatures::default(),
        },
    ) {
        Ok(e) => e,
        Err((e, mut partial)) => {
            partial.errors.push(e);
            partial
        }
    }
}

/// [`expand`] with a limit on the pods made: `Err` names the workload and its replica
/// field that would pass `options.max_pods`, with what was expanded before it.
#[allow(clippy::result_large_err)] // the partial expansion is the point of the error
pub fn expand_with(
    objects: &[Loaded],
    options: ExpandOptions<'_>,
) -> Result<Expansion, (WorkloadError, Expansion)> {
    let mut x = Expander {
        existing: Existing::scan(objects),
        objects,
        related: None,
        scale: options.scale,
        scaled: vec![false; options.scale.len()],
        claimed: BTreeSet::new(),
        seed: options.seed,
        max_pods: options.max_pods,
        features: options.features,
        too_many: None,
        out: Expansion::default(),
        admission: std::sync::Arc::new(crate::admission::Admission::from_objects(objects)),
        nodes: objects
            .iter()
            .filter_map(|l| match &l.object {
                Object::Node(n) => Some(&**n),
                _ => None,
            })
            .collect(),
    };
    x.claim_replica_sets();
    for l in objects {
        x.object(l);
        if let Some(e) = x.too_many.take() {
            return Err((e, x.out));
        }
    }
    if let Some(i) = x.scaled.iter().position(|used| !used) {
        let s = &options.scale[i];
        return Err((
            WorkloadError {
                file: "--scale".into(),
                object: format!("{}/{}", s.kind, s.name),
                field: "metadata.name".into(),
                message: format!(
                    "Not found: no {} {:?} in namespace {:?} in the input",
                    s.kind, s.name, s.namespace
                ),
            },
            x.out,
        ));
    }
    Ok(x.out)
}

/// Names every object that has only `metadata.generateName`, as the API server does on
/// create (the prefix and 5 random-looking characters, fixed by `seed`), avoiding the
/// names of other objects of the same kind and namespace.
pub fn name_generated(objects: &mut [Loaded], seed: u64) {
    let unnamed = |l: &Loaded| {
        l.object.metadata().is_some_and(|m| {
            m.name.as_deref().is_none_or(str::is_empty)
                && m.generate_name.as_deref().is_some_and(|g| !g.is_empty())
        })
    };
    if !objects.iter().any(unnamed) {
        return;
    }
    let mut taken: BTreeSet<(&'static str, String, String)> = objects
        .iter()
        .filter_map(|l| {
            if let Object::CompactPod(p) = &l.object {
                return Some(("Pod", p.namespace.clone(), p.name.clone()));
            }
            let meta = l.object.metadata()?;
            let name = meta.name.clone().filter(|n| !n.is_empty())?;
            Some((l.object.kind(), ns_of(meta), name))
        })
        .collect();
    let mut index = 0usize;
    for l in objects.iter_mut() {
        let kind = l.object.kind();
        let Some(meta) = l.object.metadata_mut() else {
            continue;
        };
        let Some(prefix) = meta.generate_name.clone().filter(|g| !g.is_empty()) else {
            continue;
        };
        if meta.name.as_deref().is_some_and(|n| !n.is_empty()) {
            continue;
        }
        let ns = ns_of(meta);
        let mut attempt = 0;
        let name = loop {
            let name = naming::generated_name(seed, &prefix, index, attempt);
            if attempt >= 16 || !taken.contains(&(kind, ns.clone(), name.clone())) {
                break name;
            }
            attempt += 1;
        };
        index += 1;
        taken.insert((kind, ns, name.clone()));
        meta.name = Some(name);
    }
}

/// The owner of the pods being made.
struct Owner<'a> {
    api_version: &'static str,
    kind: &'static str,
    meta: &'a ObjectMeta,
}

impl Owner<'_> {
    fn name(&self) -> String {
        self.meta.name.clone().unwrap_or_default()
    }
    fn object(&self) -> String {
        format!("{}/{}", self.kind.to_lowercase(), self.name())
    }
    fn reference(&self) -> OwnerReference {
        let name = self.name();
        OwnerReference {
            api_version: self.api_version.to_string(),
            kind: self.kind.to_string(),
            uid: self
                .meta
                .uid
                .clone()
                .unwrap_or_else(|| naming::uid(self.kind, &ns_of(self.meta), &name)),
            name,
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }
}

struct Expander<'a> {
    existing: Existing,
    /// Every object of the input.
    objects: &'a [Loaded],
    /// While a Deployment's ReplicaSet is expanded: the nodes of every pod of the
    /// Deployment (the co-location ranks of the deletion order).
    related: Option<Vec<String>>,
    /// `--scale` requests, and which of them named a workload.
    scale: &'a [Scale],
    scaled: Vec<bool>,
    /// (namespace, name) of the input ReplicaSets a Deployment of the input claims.
    claimed: BTreeSet<(String, String)>,
    seed: u64,
    /// [`ExpandOptions::max_pods`].
    max_pods: usize,
    /// [`ExpandOptions::features`].
    features: WorkloadFeatures,
    /// Set when a workload would pass `max_pods`: expansion stops there.
    too_many: Option<WorkloadError>,
    out: Expansion,
    nodes: Vec<&'a k8s_openapi::api::core::v1::Node>,
    /// The admission plugins' view of the input, for rollouts' pods.
    admission: std::sync::Arc<crate::admission::Admission>,
}

/// How the pods of one workload are named and labelled.
enum Naming {
    /// `<owner>-<5 chars>`.
    Random,
    /// `<owner>-<ordinal>` from `spec.ordinals.start`, with the StatefulSet labels.
    Ordinal {
        /// The first ordinal (`spec.ordinals.start`, StatefulSetStartOrdinal).
        start: usize,
    },
    /// `<owner>-<index>-<5 chars>`, an Indexed Job.
    Indexed,
}

impl<'a> Expander<'a> {
    fn error(&mut self, source: &Source, object: String, field: &str, message: String) {
        self.out.errors.push(WorkloadError {
            file: source.file.clone(),
            object,
            field: field.to_string(),
            message,
        });
    }

    fn object(&mut self, l: &'a Loaded) {
        let s = &l.source;
        if !self.template_valid(s, &l.object) {
            return;
        }
        match &l.object {
            Object::Deployment(d) => self.deployment(s, d),
            Object::ReplicaSet(rs) => {
                let controlled_by_deployment = controller_of(&rs.metadata).is_some_and(|o| {
                    o.kind == "Deployment"
                        && self
                            .existing
                            .deployments
                            .contains(&(ns_of(&rs.metadata), o.name.clone()))
                });
                let key = (
                    ns_of(&rs.metadata),
                    rs.metadata.name.clone().unwrap_or_default(),
                );
                if controlled_by_deployment || self.claimed.contains(&key) {
                    return;
                }
                let owner = Owner {
                    api_version: "apps/v1",
                    kind: "ReplicaSet",
                    meta: &rs.metadata,
                };
                let spec = &rs.spec;
                let replicas =
                    self.replicas_for("replicaset", &key.0, &key.1, spec.replicas.unwrap_or(1));
                let template = spec.template.as_ref();
                self.pods(
                    s,
                    &owner,
                    "ReplicaSet",
                    template,
                    replicas,
                    Naming::Random,
                    &[],
                );
            }
            Object::ReplicationController(rc) => {
                let owner = Owner {
                    api_version: "v1",
                    kind: "ReplicationController",
                    meta: &rc.metadata,
                };
                let spec = rc.spec.as_ref();
                let replicas = self.replicas_for(
                    "replicationcontroller",
                    &ns_of(&rc.metadata),
                    &owner.name(),
                    spec.and_then(|s| s.replicas).unwrap_or(1),
                );
                let template = spec.and_then(|s| s.template.as_ref());
                self.pods(
                    s,
                    &owner,
                    "ReplicationController",
                    template,
                    replicas,
                    Naming::Random,
                    &[],
                );
            }
            Object::StatefulSet(ss) => self.stateful_set(s, ss),
            Object::Job(job) => self.job(s, job),
            Object::CronJob(cj) => self.out.notes.push(Note::new(
                format!(
                    "{}: cronjob/{}",
                    s.file,
                    cj.metadata.name.as_deref().unwrap_or("")
                ),
                "skipped: a CronJob's pods exist only while one of its Jobs runs",
            )),
            Object::DaemonSet(ds) => {
                let nodes = self.nodes.clone();
                daemonset::expand(self, s, ds, &nodes);
            }
            _ => {}
        }
    }

    fn job(&mut self, s: &Source, job: &k8s_openapi::api::batch::v1::Job) {
        let owner = Owner {
            api_version: "batch/v1",
            kind: "Job",
            meta: &job.metadata,
        };
        let Some(spec) = job.spec.as_ref() else {
            return self.error(s, owner.object(), "spec", "Required value".into());
        };
        if spec.suspend == Some(true) {
            self.out.notes.push(Note::new(
                format!("{}: {}", s.file, owner.object()),
                "suspended: no pods",
            ));
            return;
        }
        let parallelism = spec.parallelism.unwrap_or(1);
        // The job controller: active pods up to parallelism, never more than the
        // completions still missing (succeeded pods count toward completions).
        let succeeded = self
            .existing
            .succeeded
            .get(&(ns_of(&job.metadata), owner.name()))
            .copied()
            .unwrap_or(0);
        let n = spec.completions.map_or(parallelism, |c| {
            parallelism.min(c.saturating_sub(succeeded))
        });
        let uid = owner.reference().uid;
        let name = owner.name();
        let labels = [
            ("batch.kubernetes.io/controller-uid", uid.as_str()),
            ("batch.kubernetes.io/job-name", name.as_str()),
            ("controller-uid", uid.as_str()),
            ("job-name", name.as_str()),
        ];
        let naming = if spec.completion_mode.as_deref() == Some("Indexed") {
            Naming::Indexed
        } else {
            Naming::Random
        };
        self.pods(s, &owner, "Job", Some(&spec.template), n, naming, &labels);
    }

    /// Makes the missing pods of one workload from its template.
    #[allow(clippy::too_many_arguments)]
    fn pods(
        &mut self,
        s: &Source,
        owner: &Owner<'_>,
        workload_kind: &'static str,
        template: Option<&PodTemplateSpec>,
        replicas: i32,
        naming: Naming,
        extra_labels: &[(&str, &str)],
    ) -> Option<Pod> {
        let ns = ns_of(owner.meta);
        let owner_name = owner.name();
        let mut existing: Vec<String> = self.existing.owned(&ns, owner.kind, &owner_name).to_vec();
        let want = usize::try_from(replicas).unwrap_or(0);
        let start = match naming {
            Naming::Ordinal { start } => Some(start),
            _ => None,
        };
        if (existing.len() > want || start.is_some()) && workload_kind != "Job" {
            let gone = self.scale_down(&ns, &owner.object(), &existing, want, start);
            existing.retain(|p| !gone.contains(p));
        }
        let mut summary = WorkloadSummary {
            kind: workload_kind,
            namespace: ns.clone(),
            name: owner_name.clone(),
            pods: existing.clone(),
        };
        let Some(template) = template else {
            if want > 0 {
                self.error(s, owner.object(), "spec.template", "Required value".into());
            }
            self.out.workloads.push(summary);
            return None;
        };
        let base = match self.template_pod(s, owner, template, &ns) {
            Some(p) => p,
            None => {
                self.out.workloads.push(summary);
                return None;
            }
        };
        let missing = want.saturating_sub(existing.len());
        if self.out.pods.len().saturating_add(missing) > self.max_pods {
            self.too_many = Some(WorkloadError {
                file: s.file.clone(),
                object: owner.object(),
                field: if workload_kind == "Job" {
                    "spec.parallelism".into()
                } else {
                    "spec.replicas".into()
                },
                message: format!(
                    "Invalid value: {replicas}: the workloads would make more than {} pods",
                    self.max_pods
                ),
            });
            return None;
        }
        let mut made = existing.len();
        let mut index = start.unwrap_or(0);
        while made < want {
            let name = match naming {
                Naming::Ordinal { .. } => format!("{owner_name}-{index}"),
                Naming::Random | Naming::Indexed => {
                    let prefix = match naming {
                        Naming::Indexed => format!("{owner_name}-{index}"),
                        _ => owner_name.clone(),
                    };
                    self.fresh_name(&ns, &prefix, index)
                }
            };
            let ordinal = index;
            index += 1;
            if self.existing.names.contains(&(ns.clone(), name.clone())) {
                if matches!(naming, Naming::Ordinal { .. }) {
                    continue; // that ordinal exists (perhaps under another owner)
                }
                continue;
            }
            let mut pod = base.clone();
            let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
            for (k, v) in extra_labels {
                labels.insert((*k).into(), (*v).into());
            }
            match naming {
                Naming::Ordinal { .. } => statefulset::identity(&mut pod, &name, ordinal),
                Naming::Indexed => {
                    labels.insert(
                        "batch.kubernetes.io/job-completion-index".into(),
                        ordinal.to_string(),
                    );
                }
                // Made with `generateName`, as the controllers make them
                // (`CreatePodsWithGenerateName`): the API server's refusals name the prefix.
                Naming::Random => pod.metadata.generate_name = Some(format!("{owner_name}-")),
            }
            pod.metadata.name = Some(name.clone());
            self.existing.names.insert((ns.clone(), name.clone()));
            summary.pods.push(name);
            self.out.pods.push(ExpandedPod {
                source: s.clone(),
                pod,
            });
            made += 1;
        }
        self.out.workloads.push(summary);
        Some(base)
    }

    /// `<prefix>-<5 chars>` not yet taken in the namespace.
    fn fresh_name(&self, ns: &str, prefix: &str, index: usize) -> String {
        let mut attempt = 0;
        loop {
            let name = format!(
                "{prefix}-{}",
                naming::suffix(self.seed, prefix, index, attempt)
            );
            if attempt > 16
                || !self
                    .existing
                    .names
                    .contains(&(ns.to_string(), name.clone()))
            {
                return name;
            }
            attempt += 1;
        }
    }
}
