//! Reading manifests into a snapshot: `-f` paths resolved (files, folders, `-R`, `-` for
//! stdin), every input read through a byte cap, typed parsing, API-server admission,
//! workload expansion under a pod cap, and the queue of pending pods in PrioritySort
//! order.

mod read;

use anyhow::{Result, bail};
use std::path::PathBuf;
use std::sync::OnceLock;
use topospread::api::Symbols;
use topospread::convert;
use topospread::snapshot::{PodId, Snapshot};
use topospread::version::{FeatureGates, KubernetesVersion, VersionError};
use topospread_k8s::build::{self, Refused};
use topospread_k8s::load::{
    Compactor, Loaded, Object, parse_manifests, parse_manifests_reader,
    parse_manifests_reader_compact,
};
use topospread_k8s::notes::{Note, summarize};
use topospread_k8s::validation::ApiServerFeatures;
use topospread_k8s::workloads::{self, ExpandOptions, Expansion, Scale, expand_with};

pub(crate) use read::{InputPath, open_path, read_path, resolve};

/// The default of `--max-input-bytes`: 256 MiB.
pub(crate) const DEFAULT_MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// The Kubernetes docs' example, used when no file is given.
pub(crate) const DOCS_EXAMPLE: &str = include_str!("../../examples/docs-example.yaml");
/// The name the embedded example goes by in messages.
pub(crate) const DOCS_EXAMPLE_NAME: &str = "docs-example.yaml (built in)";

/// The limits and folder walk every command's input goes through, from the global flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct InputOptions {
    /// `--max-input-bytes`: the most bytes read from one input.
    pub(crate) max_input_bytes: u64,
    /// `--max-pods`: the most pods workload expansion makes.
    pub(crate) max_pods: usize,
    /// `-R`: folders are walked recursively.
    pub(crate) recursive: bool,
}

impl Default for InputOptions {
    fn default() -> Self {
        Self {
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
            max_pods: workloads::DEFAULT_MAX_PODS,
            recursive: false,
        }
    }
}

/// Set once by `main` from the command line, before any command runs.
static OPTIONS: OnceLock<InputOptions> = OnceLock::new();

/// Records the global input flags (`main` calls this once).
pub(crate) fn set_options(options: InputOptions) {
    // A second call would be a programming error; the first value stays.
    let _ = OPTIONS.set(options);
}

/// `--kubernetes-version` and `--feature-gates`, set once by `main`.
static GATES: OnceLock<FeatureGates> = OnceLock::new();

/// The release's gates with `--feature-gates` applied.
pub(crate) fn gates_from_flags(
    version: Option<&str>,
    feature_gates: Option<&str>,
) -> Result<FeatureGates, VersionError> {
    let version = match version {
        Some(v) => v.parse::<KubernetesVersion>()?,
        None => KubernetesVersion::NEWEST,
    };
    let mut gates = FeatureGates::new(version);
    if let Some(spec) = feature_gates {
        gates.apply(spec)?;
    }
    Ok(gates)
}

/// Whether `--kubernetes-version` was given (else the nodes' version is only noted).
static VERSION_GIVEN: OnceLock<bool> = OnceLock::new();

/// Records the release and gates, and whether the release was asked for (`main` calls
/// this once).
pub(crate) fn set_gates(gates: FeatureGates, version_given: bool) {
    let _ = GATES.set(gates);
    let _ = VERSION_GIVEN.set(version_given);
}

/// A note when the nodes' kubelets (`status.nodeInfo.kubeletVersion`, most of them) run
/// another release than the one simulated and `--kubernetes-version` was not given.
fn version_note(objects: &[Loaded]) -> Option<String> {
    if VERSION_GIVEN.get().copied().unwrap_or(false) {
        return None;
    }
    let mut minors: std::collections::BTreeMap<u32, usize> = std::collections::BTreeMap::new();
    for l in objects {
        if let Object::Node(n) = &l.object
            && let Some(info) = n.status.as_ref().and_then(|s| s.node_info.as_ref())
            && let Ok(v) = KubernetesVersion::parse_any(&info.kubelet_version)
        {
            *minors.entry(v.minor).or_default() += 1;
        }
    }
    let (&minor, _) = minors.iter().max_by_key(|(m, n)| (**n, **m))?;
    let simulated = gates().version();
    if minor == simulated.minor {
        return None;
    }
    let nodes = KubernetesVersion { minor };
    Some(match nodes.supported() {
        Ok(v) => format!(
            "the nodes run Kubernetes {v} (status.nodeInfo.kubeletVersion); simulating {simulated}: --kubernetes-version {v} follows them"
        ),
        Err(e) => format!(
            "the nodes run Kubernetes {nodes} (status.nodeInfo.kubeletVersion); simulating {simulated} ({e})"
        ),
    })
}

/// The release and gates every command follows (the newest release's defaults when
/// `main` has not set them).
pub(crate) fn gates() -> FeatureGates {
    GATES.get().cloned().unwrap_or_default()
}

/// The API server's gates of [`gates`].
pub(crate) fn api_server_features() -> ApiServerFeatures {
    ApiServerFeatures::from_gates(&gates())
}

/// The global input flags (the defaults when `main` has not set them).
pub(crate) fn options() -> InputOptions {
    OPTIONS.get().copied().unwrap_or_default()
}

/// How loaded pods are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PodForm {
    /// Every pod as its k8s-openapi object: for commands that write pods back or lint
    /// them.
    Whole,
    /// Bound pods converted as they are read ([`Object::CompactPod`]): a dump's pods
    /// never all exist as k8s-openapi objects at once.
    Compact,
}

/// What the files held.
pub(crate) struct Input {
    /// Every object, file by file (KubeSchedulerConfigurations included).
    pub(crate) objects: Vec<Loaded>,
    /// Skipped objects, one note each.
    pub(crate) notes: Vec<Note>,
    /// How many inputs (files, stdin) were read.
    pub(crate) inputs: usize,
    /// The symbols compact pods were interned in (empty when none were read).
    pub(crate) symbols: Symbols,
    /// Objects the API server refuses by themselves (a workload whose selector does not
    /// match its template, ...): left out of `objects`, reported, the rest goes on.
    pub(crate) refused: Vec<topospread_k8s::validation::Refusal>,
}

impl Input {
    /// The KubeSchedulerConfiguration among the files, with the file it is in; an error
    /// when there are several (kube-scheduler reads one).
    pub(crate) fn scheduler_configuration(&self) -> Result<Option<(&str, &serde_json::Value)>> {
        let mut found = self.objects.iter().filter_map(|l| match &l.object {
            Object::SchedulerConfiguration(v) => Some((l.source.file.as_str(), v)),
            _ => None,
        });
        let first = found.next();
        if let (Some((file, _)), Some((second, _))) = (first, found.next()) {
            bail!(
                "{second}: a second KubeSchedulerConfiguration (the first is in {file}); the scheduler reads one"
            );
        }
        Ok(first)
    }
}

/// Loads `files` (files, folders, `-` for stdin), or the built-in docs example when
/// there are none; objects with only `generateName` are named with `seed`; pods are
/// kept in `form`.
fn load_as(files: &[PathBuf], seed: u64, form: PodForm) -> Result<Input> {
    let mut input = Input {
        objects: Vec::new(),
        notes: Vec::new(),
        inputs: 0,
        symbols: Symbols::default(),
        refused: Vec::new(),
    };
    if files.is_empty() {
        let m = parse_manifests(DOCS_EXAMPLE, DOCS_EXAMPLE_NAME)?;
        input.objects = m.objects;
        input.inputs = 1;
        return Ok(input);
    }
    let opts = options();
    let paths = resolve(files, opts.recursive)?;
    input.inputs = paths.len();
    let mut compactor = (form == PodForm::Compact)
        .then(|| Compactor::new(gates().request_options(), api_server_features()));
    for p in &paths {
        let reader = open_path(p, opts.max_input_bytes)?;
        let m = match compactor.take() {
            Some(c) => {
                let (m, c) = parse_manifests_reader_compact(reader, &p.to_string(), c)?;
                compactor = Some(c);
                m
            }
            None => parse_manifests_reader(reader, &p.to_string())?,
        };
        if input.objects.is_empty() {
            input.objects = m.objects;
        } else {
            input.objects.extend(m.objects);
        }
        input.notes.extend(m.skipped);
    }
    input.symbols = compactor.map(Compactor::into_symbols).unwrap_or_default();
    workloads::name_generated(&mut input.objects, seed);
    Ok(input)
}

/// The live cluster when one is asked for, then `files` on top of it (without a cluster,
/// as [`load`]).
pub(crate) fn load_live(
    files: &[PathBuf],
    live: &crate::cli::LiveArgs,
    seed: u64,
) -> Result<Input> {
    load_live_as(files, live, seed, PodForm::Whole)
}

/// [`load_live`], pods read from files kept in `form`.
fn load_live_as(
    files: &[PathBuf],
    live: &crate::cli::LiveArgs,
    seed: u64,
    form: PodForm,
) -> Result<Input> {
    if !live.wanted() {
        return load_as(files, seed, form);
    }
    let mut input = Input {
        objects: super::live::list_cluster(live)?,
        notes: Vec::new(),
        inputs: 1,
        symbols: Symbols::default(),
        refused: Vec::new(),
    };
    if !files.is_empty() {
        let from_files = load_as(files, seed, form)?;
        input.objects.extend(from_files.objects);
        input.notes.extend(from_files.notes);
        input.inputs += from_files.inputs;
        input.symbols = from_files.symbols;
    }
    Ok(input)
}

/// [`load_live`], then the API server's validation of every object: the first object it
/// would refuse is the error, except for refusals of one object by itself, which leave
/// that object out ([`Input::refused`]).
pub(crate) fn load_admitted(
    files: &[PathBuf],
    live: &crate::cli::LiveArgs,
    seed: u64,
) -> Result<Input> {
    load_admitted_as(files, live, seed, PodForm::Whole)
}

/// [`load_admitted`], pods read from files kept in `form`.
pub(crate) fn load_admitted_as(
    files: &[PathBuf],
    live: &crate::cli::LiveArgs,
    seed: u64,
    form: PodForm,
) -> Result<Input> {
    let mut input = load_live_as(files, live, seed, form)?;
    let (object_only, fatal): (Vec<_>, Vec<_>) =
        topospread_k8s::validation::validate_objects_with(&input.objects, &api_server_features())
            .into_iter()
            .partition(|r| r.object_only);
    if let Some(e) = fatal.into_iter().next() {
        bail!("{e}");
    }
    if !object_only.is_empty() {
        input.objects.retain(|l| {
            !object_only
                .iter()
                .any(|r| r.source == l.source && r.kind == l.object.kind())
        });
        input.refused.extend(object_only);
    }
    Ok(input)
}

/// A snapshot with the workloads' pods added and the pending ones queued.
pub(crate) struct World {
    /// Nodes and every pod (bound or pending).
    pub(crate) snapshot: Snapshot,
    /// The snapshot before controllers removed pods (scale-downs), when they did.
    pub(crate) before_removal: Option<Snapshot>,
    /// The rollouts carried out so far (simulate fills it).
    pub(crate) rollouts: Vec<topospread_k8s::workloads::RolloutReport>,
    /// The workloads' pods and ReplicaSets.
    pub(crate) expansion: Expansion,
    /// Pending pods, in PrioritySort order.
    pub(crate) queue: Vec<PodId>,
    /// Things to tell the user, one line per kind of note (skipped objects, finished
    /// pods left out, workloads that could not be expanded).
    pub(crate) notes: Vec<String>,
    /// Pods Priority admission refused (a PriorityClass that does not exist): never in
    /// the snapshot, reported like pending pods.
    pub(crate) refused: Vec<Refused>,
    /// Objects the API server refuses by themselves ([`Input::refused`]), one line each.
    pub(crate) refused_objects: Vec<String>,
}

/// Builds the world: snapshot from the files, workloads expanded (`seed` fixes names)
/// up to `--max-pods` pods, with `scale`'s replica counts; the pods controllers remove
/// leave the snapshot before anything is scheduled.
pub(crate) fn build(input: &Input, seed: u64, scale: &[Scale]) -> Result<World> {
    let max_pods = options().max_pods;
    let expansion = expand_with(
        &input.objects,
        ExpandOptions {
            seed,
            max_pods,
            scale,
        },
    )
    .map_err(|(e, _)| {
        if e.file == "--scale" {
            anyhow::anyhow!("{e}")
        } else {
            anyhow::anyhow!("{e} (--max-pods raises the limit)")
        }
    })?;
    let built = build::build_with_symbols(
        input.objects.iter().chain(&expansion.replica_sets),
        gates().request_options(),
        input.symbols.clone(),
    )?;
    let mut snapshot = built.snapshot;
    let mut refused = built.refused;
    for p in &expansion.pods {
        if let Some(r) =
            build::admit_and_add_with(&mut snapshot, &p.pod, &p.source.file, &built.admission)?
        {
            refused.push(r);
        }
    }
    // The cluster as it is, for reports' "before", when controllers remove pods from it.
    let before_removal = (!expansion.removed.is_empty()).then(|| snapshot.clone());
    for r in &expansion.removed {
        if let Some(id) = snapshot.pod_id(&r.namespace, &r.pod) {
            snapshot.remove_pod(id);
        }
    }
    let mut notes = input.notes.clone();
    notes.extend(finished_notes(&input.objects));
    notes.extend(expansion.notes.iter().cloned());
    let mut notes = summarize(&notes);
    notes.extend(version_note(&input.objects));
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
        before_removal,
        rollouts: Vec::new(),
        expansion,
        queue: queue.into_iter().map(|(id, _)| id).collect(),
        notes,
        refused,
        refused_objects: input.refused.iter().map(ToString::to_string).collect(),
    })
}

/// One note per pod left out of the snapshot because it has finished (phase Succeeded
/// or Failed), all with one message so they summarise to one line.
pub(crate) fn finished_notes(objects: &[Loaded]) -> Vec<Note> {
    objects
        .iter()
        .filter_map(|l| {
            let name = match &l.object {
                Object::Pod(p) if build::is_finished(p) => {
                    p.metadata.name.as_deref().unwrap_or_default()
                }
                Object::CompactPod(p) if p.is_finished() => &p.name,
                _ => return None,
            };
            Some(Note::new(
                format!(
                    "{}: pod/{}",
                    l.source.file,
                    topospread_k8s::load::escape_control(name)
                ),
                "left out: phase Succeeded or Failed (the scheduler does not see finished pods)",
            ))
        })
        .collect()
}

/// `name` or `namespace/name` -> (namespace, name).
pub(crate) fn split_pod_ref(s: &str) -> (&str, &str) {
    match s.split_once('/') {
        Some((ns, name)) => (ns, name),
        None => (convert::DEFAULT_NAMESPACE, s),
    }
}
