//! Reading manifests into a snapshot: `-f` paths resolved (files, folders, `-R`, `-` for
//! stdin), every input read through a byte cap, typed parsing, API-server admission,
//! workload expansion under a pod cap, and the queue of pending pods in PrioritySort
//! order.

mod read;

use crate::context::Context;
use crate::error::{Error, Result, refuse};
use std::collections::HashSet;
use std::path::PathBuf;
use topospread::api::Symbols;
use topospread::convert;
use topospread::plugins::volumebinding::{self, TopologyChoice};
use topospread::snapshot::{PodId, Snapshot};
use topospread::version::KubernetesVersion;
use topospread_k8s::build::{self, Refused};
use topospread_k8s::load::{
    Compactor, LoadError, Loaded, Manifests, Object, UnknownField, parse_manifests,
    parse_manifests_reader_with,
};
use topospread_k8s::notes::{Note, summarize};
use topospread_k8s::workloads::{
    self, ExpandOptions, Expansion, Ordinal, Scale, Synced, WorkloadFeatures, expand_with,
};

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
    // Workloads named again by a later file are applied over the earlier object, as
    // `kubectl apply` updates it; an update the API server refuses leaves the earlier.
    let applied = topospread_k8s::apply::apply_over(&mut input.objects);
    input.notes.extend(applied.notes);
    input.refused.extend(applied.refused);
    let (object_only, fatal): (Vec<_>, Vec<_>) = topospread_k8s::validation::validate_objects_with(
        &input.objects,
        &ctx.api_server_features(),
    )
    .into_iter()
    .partition(|r| r.object_only);
    if let Some(e) = fatal.into_iter().next() {
        refuse!("{e}");
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

/// A snapshot with the workloads' pods added and the pending ones queued; cloned to
/// schedule one prepared cluster several times ([`crate::explain::Explainer`]).
#[derive(Clone)]
pub struct World {
    /// Nodes and every pod (bound or pending).
    pub snapshot: Snapshot,
    /// The snapshot before controllers removed pods (scale-downs), when they did.
    pub before_removal: Option<Snapshot>,
    /// The rollouts carried out so far (simulate fills it).
    pub rollouts: Vec<topospread_k8s::workloads::RolloutReport>,
    /// The workloads' pods and ReplicaSets.
    pub expansion: Expansion,
    /// Pending pods, in PrioritySort order.
    pub queue: Vec<PodId>,
    /// Things to tell the user, one line per kind of note (skipped objects, finished
    /// pods left out, workloads that could not be expanded).
    pub notes: Vec<String>,
    /// Pods Priority admission refused (a PriorityClass that does not exist): never in
    /// the snapshot, reported like pending pods.
    pub refused: Vec<Refused>,
    /// Objects the API server refuses by themselves ([`Input::refused`]), one line each.
    pub refused_objects: Vec<String>,
}

/// Builds the world: snapshot from the files, workloads expanded (`seed` fixes names)
/// up to `--max-pods` pods, with `scale`'s replica counts; the pods controllers remove
/// leave the snapshot before anything is scheduled.
pub fn build(ctx: &Context, input: &Input, seed: u64, scale: &[Scale]) -> Result<World> {
    let max_pods = ctx.input().max_pods;
    let expansion = expand_with(
        &input.objects,
        ExpandOptions {
            seed,
            max_pods,
            scale,
            features: WorkloadFeatures::from_gates(ctx.gates()).at(now_ns()),
        },
    )
    .map_err(|(e, _)| {
        if e.file == "--scale" {
            Error::Refused(e.to_string())
        } else {
            Error::Refused(format!("{e} (--max-pods raises the limit)"))
        }
    })?;
    let built = build::build_provisioning_in(
        input
            .objects
            .iter()
            .chain(&expansion.replica_sets)
            .chain(&expansion.claims),
        ctx.gates().request_options(),
        input.symbols.clone(),
        input.provision_zone.as_deref(),
    )?;
    if let Some(zone) = input.provision_zone.as_deref() {
        check_provision_zone(&built.snapshot, zone)?;
    }
    let mut snapshot = built.snapshot;
    let mut refused = built.refused;
    // Rollouts' pods use the same quotas as every other pod created here.
    let mut expansion = expansion;
    for r in &mut expansion.rollouts {
        r.admission = std::sync::Arc::new(built.admission.clone());
    }
    for set in &mut expansion.ordered {
        set.admission = std::sync::Arc::new(built.admission.clone());
    }
    // An OrderedReady StatefulSet's new pods are created one ordinal at a time, the
    // first of them now if every ordinal below it is Running and Ready.
    let held: HashSet<(&str, &str)> = expansion
        .ordered
        .iter()
        .flat_map(|o| {
            o.ordinals.iter().filter_map(|p| match p {
                Ordinal::Missing(p) => Some((o.namespace.as_str(), p.metadata.name.as_deref()?)),
                _ => None,
            })
        })
        .collect();
    for p in &expansion.pods {
        let ns = p.pod.metadata.namespace.as_deref().unwrap_or_default();
        let name = p.pod.metadata.name.as_deref().unwrap_or_default();
        if held.contains(&(ns, name)) {
            continue;
        }
        if let Some(r) =
            build::admit_and_add_with(&mut snapshot, &p.pod, &p.source.file, &built.admission)?
        {
            refused.push(r);
        }
    }
    drop(held);
    // The cluster as it is, for reports' "before", when controllers remove pods from it.
    let condemned = expansion
        .ordered
        .iter()
        .any(|o| !o.condemned.is_empty() || o.updating());
    let before_removal = (!expansion.removed.is_empty() || condemned).then(|| snapshot.clone());
    // The OrderedReady sets' first sync: each creates its first missing ordinal, or
    // deletes condemned pods (bound ones go at once, one per sync) when every ordinal
    // is Running and Ready.
    let mut removed = Vec::new();
    loop {
        let mut deleted = false;
        for set in &mut expansion.ordered {
            match set.sync(&mut snapshot, &mut |s, id| {
                s.remove_pod(id);
            })? {
                Synced::Refused(r) => refused.push(*r),
                Synced::Deleted(r) => {
                    removed.push(r);
                    deleted = true;
                }
                // A rolling update deleted pods: their ordinals come back next sync.
                Synced::Updated(_) => deleted = true,
                Synced::Created(_) | Synced::Nothing => {}
            }
        }
        if !deleted {
            break;
        }
    }
    expansion.removed.extend(removed);
    for r in &expansion.removed {
        if let Some(id) = snapshot.pod_id(&r.namespace, &r.pod) {
            snapshot.remove_pod(id);
        }
    }
    let mut notes = input.notes.clone();
    notes.extend(built.storage_notes.iter().cloned());
    // The claims OrderedReady sets created with their first ordinals.
    let created_claims: Vec<Loaded> = expansion
        .ordered
        .iter()
        .flat_map(|o| {
            o.created_claims.iter().map(|c| Loaded {
                source: o.source.clone(),
                object: Object::PersistentVolumeClaim(Box::new(c.clone())),
            })
        })
        .collect();
    notes.extend(build::unbound_claim_notes(&snapshot, &created_claims));
    notes.extend(finished_notes(&input.objects));
    notes.extend(unmodelled_notes(&input.objects, &expansion));
    notes.extend(expansion.notes.iter().cloned());
    notes.extend(unknown_nominations(&snapshot));
    let mut notes = summarize(&notes);
    notes.extend(version_note(ctx, &input.objects));
    notes.extend(gates_note(ctx));
    notes.extend(
        expansion
            .errors
            .iter()
            .map(|e| format!("{e}: workload not expanded")),
    );
    notes.extend(
        built
            .refused_storage
            .iter()
            .map(|r| format!("{r} (refused, left out)")),
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

/// `--provision-zone` must name a zone some node is in.
fn check_provision_zone(snapshot: &Snapshot, zone: &str) -> Result<()> {
    let symbols = snapshot.symbols();
    let known = symbols.get(volumebinding::ZONE_LABEL).is_some_and(|key| {
        snapshot.nodes().iter().any(|n| {
            n.node
                .labels
                .get(key)
                .is_some_and(|v| symbols.resolve(v) == zone)
        })
    });
    if known {
        return Ok(());
    }
    refuse!(
        "--provision-zone {zone:?}: no node has {}={zone}",
        volumebinding::ZONE_LABEL
    );
}

/// One line per way volumes were provisioned for Immediate claims, naming each claim
/// and where its volume went: the provisioner's choice is an assumption the user may
/// override (`--provision-zone`).
pub fn provision_notes(snapshot: &Snapshot) -> Vec<String> {
    let notes: Vec<Note> = snapshot
        .immediate_provisions()
        .iter()
        .map(|p| {
            let place: Vec<String> = p.topology.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let place = if place.is_empty() {
                "every node".to_string()
            } else {
                place.join(",")
            };
            let subject = format!(
                "persistentvolumeclaim/{}/{} in {place}",
                p.namespace, p.claim
            );
            let provisioner = &p.provisioner;
            let message = match p.choice {
                TopologyChoice::Provisioner => format!(
                    "Immediate StorageClass: volume provisioned by {provisioner} when the claim \
                     was created, in the topology external-provisioner picks for the claim's \
                     name (--provision-zone to choose)"
                ),
                TopologyChoice::Chosen => format!(
                    "Immediate StorageClass: volume provisioned by {provisioner} when the claim \
                     was created, in the --provision-zone zone"
                ),
                TopologyChoice::ChosenNotOffered => format!(
                    "Immediate StorageClass: the --provision-zone zone is not among those its \
                     class and driver offer; volume provisioned by {provisioner} where \
                     external-provisioner puts it"
                ),
                TopologyChoice::None => format!(
                    "Immediate StorageClass: volume provisioned by {provisioner} when the claim \
                     was created, reachable from every node (no allowedTopologies, and no \
                     CSINode gives the driver's topology keys; --provision-zone to pin a zone)"
                ),
            };
            Note::new(subject, message)
        })
        .collect();
    summarize(&notes)
}

/// One note per pending pod whose `status.nominatedNodeName` names a node the cluster
/// does not have: kube-scheduler keeps such a nomination, but no Filter reads it and the
/// pod's cycle evaluates every node (`evaluateNominatedNode` finds no node).
fn unknown_nominations(snapshot: &Snapshot) -> Vec<Note> {
    snapshot
        .pods()
        .filter(|(id, p)| snapshot.pod_node(*id).is_none() && !p.terminating)
        .filter_map(|(_, p)| {
            let node = p.nominated_node_name.as_deref()?;
            snapshot.node_id(node).is_none().then(|| {
                Note::new(
                    format!(
                        "pod {}/{} (nominated to {})",
                        snapshot.symbols().resolve(p.namespace),
                        p.name,
                        topospread_k8s::load::escape_control(node)
                    ),
                    "status.nominatedNodeName names a node not in the cluster: the nomination is ignored",
                )
            })
        })
        .collect()
}

/// A note for each pod to schedule (pending in the input, or made by a workload)
/// that asks the scheduler for what topospread does not model
/// ([`topospread_k8s::notes::unmodelled`]).
fn unmodelled_notes(objects: &[Loaded], expansion: &Expansion) -> Vec<Note> {
    let subject = |file: &str, pod: &k8s_openapi::api::core::v1::Pod| {
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        format!("{file}: pod/{}", topospread_k8s::load::escape_control(name))
    };
    let pending = objects.iter().filter_map(|l| match &l.object {
        Object::Pod(p) if p.spec.as_ref().is_none_or(|s| s.node_name.is_none()) => {
            Some((subject(&l.source.file, p), &**p))
        }
        _ => None,
    });
    let made = expansion
        .pods
        .iter()
        .map(|p| (subject(&p.source.file, &p.pod), &p.pod));
    // A rollout's pods are made as it runs: its template speaks for them.
    let rollouts = expansion.rollouts.iter().map(|r| {
        let who = format!(
            "{}: deployment/{} (its new pods)",
            r.source.file, r.deployment
        );
        (who, &r.template)
    });
    // Extended resources some node lists in its allocatable.
    let advertised: std::collections::BTreeSet<String> = objects
        .iter()
        .filter_map(|l| match &l.object {
            Object::Node(n) => n.status.as_ref()?.allocatable.as_ref(),
            _ => None,
        })
        .flat_map(|a| a.keys().cloned())
        .collect();
    pending
        .chain(made)
        .chain(rollouts)
        .flat_map(|(who, pod)| {
            let extended =
                topospread_k8s::notes::unadvertised_extended_resources(&who, pod, &advertised);
            topospread_k8s::notes::unmodelled(&who, pod)
                .into_iter()
                .chain(extended)
        })
        .collect()
}

/// One note per pod left out of the snapshot because it has finished (phase Succeeded
/// or Failed), all with one message so they summarise to one line.
pub fn finished_notes(objects: &[Loaded]) -> Vec<Note> {
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
