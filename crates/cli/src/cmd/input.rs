//! Reading manifest files into a snapshot: size-limited reads, typed parsing, workload
//! expansion, and the queue of pending pods in PrioritySort order.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use topospread::convert;
use topospread::snapshot::{PodId, Snapshot};
use topospread_k8s::build::{self, Refused};
use topospread_k8s::load::{Loaded, parse_manifests};
use topospread_k8s::workloads::{Expansion, expand};

/// The largest file read: larger ones are refused before reading.
pub(crate) const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// The Kubernetes docs' example, used when no file is given.
pub(crate) const DOCS_EXAMPLE: &str = include_str!("../../examples/docs-example.yaml");
/// The name the embedded example goes by in messages.
pub(crate) const DOCS_EXAMPLE_NAME: &str = "docs-example.yaml (built in)";

/// Reads a file with a size limit, so a wrong path does not exhaust memory.
pub(crate) fn read_limited(path: &Path) -> Result<String> {
    let len = std::fs::metadata(path)
        .with_context(|| format!("{}: cannot read", path.display()))?
        .len();
    if len > MAX_FILE_BYTES {
        bail!(
            "{}: file is {len} bytes; files over {} MiB are refused",
            path.display(),
            MAX_FILE_BYTES / (1024 * 1024)
        );
    }
    std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read as UTF-8 text", path.display()))
}

/// What the files held.
pub(crate) struct Input {
    /// Every object, file by file.
    pub(crate) objects: Vec<Loaded>,
    /// Skipped objects, one line each.
    pub(crate) notes: Vec<String>,
}

/// Loads `files`, or the built-in docs example when there are none.
pub(crate) fn load(files: &[PathBuf]) -> Result<Input> {
    let mut input = Input {
        objects: Vec::new(),
        notes: Vec::new(),
    };
    if files.is_empty() {
        let m = parse_manifests(DOCS_EXAMPLE, DOCS_EXAMPLE_NAME)?;
        input.objects = m.objects;
        return Ok(input);
    }
    for f in files {
        let text = read_limited(f)?;
        let m = parse_manifests(&text, &f.display().to_string())?;
        input.objects.extend(m.objects);
        input.notes.extend(m.skipped);
    }
    Ok(input)
}

/// Loads the live cluster when one is asked for, then `files` on top of it; without a
/// cluster, as [`load`].
pub(crate) fn load_sources(files: &[PathBuf], live: &crate::cli::LiveArgs) -> Result<Input> {
    if !live.wanted() {
        return load(files);
    }
    let mut objects = super::live::list_cluster(live)?;
    let mut notes = Vec::new();
    if !files.is_empty() {
        let from_files = load(files)?;
        objects.extend(from_files.objects);
        notes = from_files.notes;
    }
    Ok(Input { objects, notes })
}

/// A snapshot with the workloads' pods added and the pending ones queued.
pub(crate) struct World {
    /// Nodes and every pod (bound or pending).
    pub(crate) snapshot: Snapshot,
    /// The workloads' pods and ReplicaSets.
    pub(crate) expansion: Expansion,
    /// Pending pods, in PrioritySort order.
    pub(crate) queue: Vec<PodId>,
    /// Things to tell the user (skipped objects, workloads that could not be expanded).
    pub(crate) notes: Vec<String>,
    /// Pods Priority admission refused (a PriorityClass that does not exist): never in
    /// the snapshot, reported like pending pods.
    pub(crate) refused: Vec<Refused>,
}

/// Builds the world: snapshot from the files, workloads expanded (`seed` fixes names).
pub(crate) fn build(input: &Input, seed: u64) -> Result<World> {
    let expansion = expand(&input.objects, seed);
    let built = build::build(input.objects.iter().chain(&expansion.replica_sets))?;
    let mut snapshot = built.snapshot;
    let mut refused = built.refused;
    for p in &expansion.pods {
        if let Some(r) = build::admit_and_add(&mut snapshot, &p.pod, &p.source.file)? {
            refused.push(r);
        }
    }
    let mut notes = input.notes.clone();
    notes.extend(expansion.notes.iter().cloned());
    notes.extend(
        expansion
            .errors
            .iter()
            .map(|e| format!("{e}: workload not expanded")),
    );
    let mut queue = Vec::new();
    for (id, pod) in snapshot.pods() {
        if snapshot.pod_node(id).is_some() || pod.terminating {
            continue;
        }
        queue.push((id, pod.priority));
    }
    // Listed in PrioritySort order (higher priority first, then file order), the
    // order the queue first pops them in.
    queue.sort_by_key(|q| std::cmp::Reverse(q.1));
    Ok(World {
        snapshot,
        expansion,
        queue: queue.into_iter().map(|(id, _)| id).collect(),
        notes,
        refused,
    })
}

/// `name` or `namespace/name` -> (namespace, name).
pub(crate) fn split_pod_ref(s: &str) -> (&str, &str) {
    match s.split_once('/') {
        Some((ns, name)) => (ns, name),
        None => (convert::DEFAULT_NAMESPACE, s),
    }
}
