//! Reading manifests into a snapshot: `-f` paths resolved (files, folders, `-R`, `-` for
//! stdin), every input read through a byte cap, typed parsing, API-server admission,
//! workload expansion under a pod cap, and the queue of pending pods in PrioritySort
//! order.

mod read;

use crate::context::Context;
use crate::error::{Error, Result, refuse};
use std::path::PathBuf;
use topospread::api::Symbols;
use topospread::convert;
use topospread::snapshot::Snapshot;
use topospread::version::KubernetesVersion;
use topospread_driver::{BuildOptions, Provisioning, World, admit_objects};
use topospread_k8s::load::{
    Compactor, LoadError, Loaded, Manifests, Object, UnknownField, parse_manifests,
    parse_manifests_reader_with,
};
use topospread_k8s::notes::{Note, summarize};
use topospread_k8s::workloads::{self, Scale, WorkloadFeatures};

pub use read::{InputPath, open_path, read_path, resolve};

/// The Kubernetes docs' example, used when no file is given.
pub const DOCS_EXAMPLE: &str = include_str!("../examples/docs-example.yaml");
/// The name the embedded example goes by in messages.
pub const DOCS_EXAMPLE_NAME: &str = "docs-example.yaml (built in)";

/// A note when the nodes' kubelets (`status.nodeInfo.kubeletVersion`, most of them) run
/// another release than the one simulated and `--kubernetes-version` was not given.
fn version_note(ctx: &Context, objects: &[Loaded]) -> Option<String> {
    if ctx.version_given() {
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
    let simulated = ctx.gates().version();
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

/// A note naming the `--feature-gates` kube-scheduler accepts that topospread does not
/// model, so that a run with them is not taken as their simulation.
fn gates_note(ctx: &Context) -> Option<String> {
    let names = ctx.gates().unmodelled_settings();
    (!names.is_empty()).then(|| {
        format!(
            "--feature-gates {}: accepted as kube-scheduler accepts them; topospread does not model them, so they change none of its answers",
            names.join(", ")
        )
    })
}

/// How loaded pods are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodForm {
    /// Every pod as its k8s-openapi object: for commands that write pods back.
    Whole,
    /// Bound pods converted as they are read ([`Object::CompactPod`]): a dump's pods
    /// never all exist as k8s-openapi objects at once.
    Compact,
    /// [`PodForm::Compact`], each bound pod also kept as written (compact JSON), for
    /// commands that write the cluster back (`-o yaml`) one pod at a time.
    CompactWritten,
    /// [`PodForm::Compact`] for `validate`: bound pods read back from a server, with
    /// what the lints read of them ([`Compactor::linting`]).
    Linted,
}

/// What the files held.
#[derive(Default)]
pub struct Input {
    /// Every object, file by file (KubeSchedulerConfigurations included).
    pub objects: Vec<Loaded>,
    /// Skipped objects, one note each.
    pub notes: Vec<Note>,
    /// How many inputs (files, stdin) were read.
    pub inputs: usize,
    /// The symbols compact pods were interned in (empty when none were read).
    pub symbols: Symbols,
    /// Objects the API server refuses by themselves (a workload whose selector does not
    /// match its template, ...): left out of `objects`, reported, the rest goes on.
    pub refused: Vec<topospread_k8s::validation::Refusal>,
    /// Fields the objects' types lack, when collected (`validate`).
    pub unknown_fields: Vec<UnknownField>,
    /// Inputs that could not be read, when reading went on past them (`validate`).
    pub unreadable: Vec<Error>,
    /// `--provision-zone`: the zone Immediate claims' volumes are provisioned in.
    pub provision_zone: Option<String>,
}

impl Input {
    /// The KubeSchedulerConfiguration among the files, with the file it is in; an error
    /// when there are several (kube-scheduler reads one).
    pub fn scheduler_configuration(&self) -> Result<Option<(&str, &serde_json::Value)>> {
        let mut found = self.objects.iter().filter_map(|l| match &l.object {
            Object::SchedulerConfiguration(v) => Some((l.source.file.as_str(), v)),
            _ => None,
        });
        let first = found.next();
        if let (Some((file, _)), Some((second, _))) = (first, found.next()) {
            refuse!(
                "{second}: a second KubeSchedulerConfiguration (the first is in {file}); the scheduler reads one"
            );
        }
        Ok(first)
    }
}

/// Loads `files` (files, folders, `-` for stdin), or the built-in docs example when
/// there are none; objects with only `generateName` are named with `seed`; pods are
/// kept in `form`; namespaced objects without a namespace get `namespace` (`-n`).
fn load_files(
    ctx: &Context,
    files: &[PathBuf],
    seed: u64,
    form: PodForm,
    namespace: Option<&str>,
) -> Result<Input> {
    if files.is_empty() {
        let m = parse_manifests(DOCS_EXAMPLE, DOCS_EXAMPLE_NAME)?;
        return Ok(Input {
            objects: m.objects,
            inputs: 1,
            ..Input::default()
        });
    }
    let paths = resolve(files, ctx.input().recursive)?;
    let mut reader = Reader::new(ctx, form, namespace, false);
    for p in &paths {
        reader.read(p)?;
    }
    reader.finish(&paths, seed)
}

/// [`load_files`] for `validate`, going on past every input it cannot read: those are
/// [`Input::unreadable`], and unknown fields are [`Input::unknown_fields`].
pub(crate) fn load_files_each(
    ctx: &Context,
    files: &[PathBuf],
    form: PodForm,
    namespace: Option<&str>,
) -> Result<Input> {
    let (paths, mut unreadable) = read::resolve_each(files, ctx.input().recursive);
    let mut reader = Reader::new(ctx, form, namespace, true);
    for p in &paths {
        if let Err(e) = reader.read(p) {
            unreadable.push(e);
        }
    }
    let none_read = reader.input.objects.is_empty() && reader.input.notes.is_empty();
    let mut input = if none_read && !unreadable.is_empty() {
        // What was refused says why nothing was read.
        reader.input
    } else {
        reader.finish(&paths, 0)?
    };
    input.unreadable = unreadable;
    Ok(input)
}

/// Reads inputs one at a time into an [`Input`], with one compactor for them all.
struct Reader<'a> {
    ctx: &'a Context,
    input: Input,
    compactor: Option<Compactor>,
    namespace: Option<&'a str>,
    /// Unknown fields are collected, not refused (`validate`).
    collect_unknown: bool,
}

impl<'a> Reader<'a> {
    fn new(
        ctx: &'a Context,
        form: PodForm,
        namespace: Option<&'a str>,
        collect_unknown: bool,
    ) -> Self {
        let compactor = || Compactor::new(ctx.gates().request_options(), ctx.api_server_features());
        // Objects given a namespace by `-n` are read whole: a compact pod's namespace
        // is fixed as it is read.
        let form = if namespace.is_some() {
            PodForm::Whole
        } else {
            form
        };
        let compactor = match form {
            PodForm::Whole => None,
            PodForm::Compact => Some(compactor()),
            PodForm::CompactWritten => Some(compactor().keeping_written()),
            PodForm::Linted => Some(compactor().linting()),
        };
        Self {
            ctx,
            input: Input::default(),
            compactor,
            namespace,
            collect_unknown,
        }
    }

    /// Reads one input; an input that fails to parse and holds `{{` is named a Helm
    /// template.
    fn read(&mut self, p: &InputPath) -> Result<()> {
        let file = p.to_string();
        let (reader, marks) = read::open_watched(p, self.ctx.input().max_input_bytes)?;
        let mut m = if self.collect_unknown {
            Manifests::collecting_unknown_fields()
        } else {
            Manifests::default()
        };
        m.set_compactor(self.compactor.take());
        let read = parse_manifests_reader_with(reader, &file, &mut m);
        self.compactor = m.take_compactor();
        read.map_err(|e| helm_template(e, &marks, &file))?;
        if let Some(ns) = self.namespace {
            set_namespace(&mut m.objects, ns)?;
        }
        self.input.objects.extend(m.objects);
        self.input.notes.extend(m.skipped);
        self.input.unknown_fields.extend(m.unknown_fields);
        self.input.inputs += 1;
        Ok(())
    }

    /// The input read, refused when the inputs held nothing at all.
    fn finish(mut self, paths: &[InputPath], seed: u64) -> Result<Input> {
        if self.input.objects.is_empty() && self.input.notes.is_empty() && !paths.is_empty() {
            let names: Vec<String> = paths.iter().map(ToString::to_string).collect();
            refuse!(
                "nothing was read from {}: no Kubernetes objects in it (empty, or only comments)",
                names.join(", ")
            );
        }
        self.input.symbols = self
            .compactor
            .map(Compactor::into_symbols)
            .unwrap_or_default();
        workloads::name_generated(&mut self.input.objects, seed);
        Ok(self.input)
    }
}

/// `e`, or the advice to render a Helm template when the input that failed to parse
/// holds `{{`.
fn helm_template(e: LoadError, marks: &read::TemplateMarks, file: &str) -> Error {
    let syntax = matches!(
        e,
        LoadError::Yaml { .. }
            | LoadError::Json { .. }
            | LoadError::MissingKind { .. }
            | LoadError::Field { .. }
            | LoadError::UnknownField { .. }
    );
    if !(syntax && marks.seen()) {
        return Error::Load(e);
    }
    Error::Load(LoadError::Unrendered {
        file: file.to_string(),
        what: "a Helm template ({{ ... }}), not a manifest".to_string(),
        render: format!("helm template {}", read::chart_of(file)),
    })
}

/// Whether objects of this kind live in a namespace.
fn namespaced(object: &Object) -> bool {
    matches!(
        object,
        Object::Pod(_)
            | Object::CompactPod(_)
            | Object::Service(_)
            | Object::ReplicaSet(_)
            | Object::ReplicationController(_)
            | Object::StatefulSet(_)
            | Object::Deployment(_)
            | Object::DaemonSet(_)
            | Object::Job(_)
            | Object::CronJob(_)
            | Object::PodDisruptionBudget(_)
            | Object::PersistentVolumeClaim(_)
            | Object::LimitRange(_)
            | Object::ResourceQuota(_)
    )
}

/// `-n`: namespaced objects without a namespace get `ns`; one with another namespace is
/// refused in kubectl's words.
fn set_namespace(objects: &mut [Loaded], ns: &str) -> Result<()> {
    for l in objects.iter_mut().filter(|l| namespaced(&l.object)) {
        let kind = l.object.kind().to_lowercase();
        let Some(meta) = l.object.metadata_mut() else {
            continue;
        };
        match meta.namespace.as_deref() {
            None | Some("") => meta.namespace = Some(ns.to_string()),
            Some(own) if own == ns => {}
            Some(own) => refuse!(
                "{}: {kind}/{}: the namespace from the provided object {own:?} does not match the namespace {ns:?}. You must pass '--namespace={own}' to perform this operation.",
                l.source.file,
                topospread_k8s::load::escape_control(meta.name.as_deref().unwrap_or_default()),
            ),
        }
    }
    Ok(())
}

/// The objects of a live cluster when the caller listed one (`live`), then `files` on
/// top of them; without a cluster, `files` alone (the built-in docs example when there
/// are none). Pods read from files are kept in `form`; `namespace` (`-n`) is given to
/// the files' namespaced objects that have none.
pub fn load(
    ctx: &Context,
    files: &[PathBuf],
    live: Option<Vec<Loaded>>,
    seed: u64,
    form: PodForm,
    namespace: Option<&str>,
) -> Result<Input> {
    let Some(objects) = live else {
        return load_files(ctx, files, seed, form, namespace);
    };
    let mut input = Input {
        objects,
        inputs: 1,
        ..Input::default()
    };
    if !files.is_empty() {
        let from_files = load_files(ctx, files, seed, form, namespace)?;
        input.objects.extend(from_files.objects);
        input.notes.extend(from_files.notes);
        input.inputs += from_files.inputs;
        input.symbols = from_files.symbols;
    }
    Ok(input)
}

/// [`load`], then the API server's validation of every object: the first object it
/// would refuse is the error, except for refusals of one object by itself, which leave
/// that object out ([`Input::refused`]).
pub fn load_admitted(
    ctx: &Context,
    files: &[PathBuf],
    live: Option<Vec<Loaded>>,
    seed: u64,
    form: PodForm,
    namespace: Option<&str>,
) -> Result<Input> {
    let mut input = load(ctx, files, live, seed, form, namespace)?;
    let admitted = admit_objects(&mut input.objects, &ctx.api_server_features())?;
    input.notes.extend(admitted.notes);
    input.refused.extend(admitted.refused);
    Ok(input)
}

/// Builds the world ([`topospread_driver::world::build`]) under the context's limits and
/// release: workloads expanded up to `--max-pods` pods (`seed` fixes names) with
/// `scale`'s replica counts, the cluster's provisioners running (`--provision-zone`).
pub fn build(ctx: &Context, input: &Input, seed: u64, scale: &[Scale]) -> Result<World> {
    let options = BuildOptions {
        seed,
        max_pods: ctx.input().max_pods,
        scale,
        workloads: WorkloadFeatures::from_gates(ctx.gates()).at(now_ns()),
        requests: ctx.gates().request_options(),
        provisioning: Provisioning::On {
            zone: input.provision_zone.as_deref(),
        },
    };
    Ok(topospread_driver::world::build(
        &input.objects,
        &input.symbols,
        options,
    )?)
}

/// The lines a report's notes start with: the files' and the world's notes, one line per
/// kind, then the release's and the gates' notes and the world's errors.
pub fn world_notes(ctx: &Context, input: &Input, world: &World) -> Vec<String> {
    let all: Vec<Note> = input.notes.iter().chain(&world.notes).cloned().collect();
    let mut notes = summarize(&all);
    notes.extend(version_note(ctx, &input.objects));
    notes.extend(gates_note(ctx));
    notes.extend(world.errors.iter().cloned());
    notes
}

/// One line per way volumes were provisioned for Immediate claims
/// ([`topospread_driver::notes::provisions`]).
pub fn provision_notes(snapshot: &Snapshot) -> Vec<String> {
    summarize(&topospread_driver::notes::provisions(snapshot))
}

/// `name` or `namespace/name` -> (namespace, name).
pub fn split_pod_ref(s: &str) -> (&str, &str) {
    match s.split_once('/') {
        Some((ns, name)) => (ns, name),
        None => (convert::DEFAULT_NAMESPACE, s),
    }
}

/// The wall clock in nanoseconds since the epoch: the ReplicaSet controller's `Now` when
/// a scale-in happens, which its LogarithmicScaleDown buckets are measured from.
pub(crate) fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
}
