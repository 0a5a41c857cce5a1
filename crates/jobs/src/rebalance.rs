//! `rebalance`: a plan of moves that restores topology spread (or the descheduler's
//! strategy replayed), and the scale-down variant that chooses which pods a ReplicaSet
//! should remove, each as a versioned report with a JSON Schema generated from its types
//! (`schema/rebalance-report.json`, `schema/scale-down-report.json`).

use crate::error::{Error, Result, refuse};
use crate::input::{self, Input};
use crate::report::rebalance::{Plan, ScalePlan};
use crate::selector::parse_selector;
use crate::{Cluster, Context, config};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use topospread::snapshot::Snapshot;
use topospread_driver::{ClusterDriver, World};
use topospread_k8s::load::Object;
use topospread_planning::rebalance::{self, NotEvictable, RebalanceOptions, Strategy};

/// The reports' `apiVersion`.
pub const API_VERSION: &str = crate::simulate::API_VERSION;
/// The `kind` of a [`RebalanceReport`].
pub const KIND: &str = "RebalanceReport";
/// The `kind` of a [`ScaleDownReport`].
pub const SCALE_DOWN_KIND: &str = "ScaleDownReport";

/// What to plan, and in what cluster.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RebalanceRequest {
    /// The cluster, as `simulate` reads it.
    pub cluster: Cluster,
    /// Only move pods of this namespace (and report only its workloads).
    pub namespace: Option<String>,
    /// Only move pods this label selector (`app=web,tier!=db`) matches.
    pub selector: Option<String>,
    /// At most this many moves (evictions for the descheduler strategy).
    pub max_moves: usize,
    /// The planning strategy.
    pub strategy: Strategy,
    /// Descheduler strategy: balance ScheduleAnyway constraints too.
    pub include_schedule_anyway: bool,
    /// Descheduler strategy: its `topologyBalanceNodeFit`.
    pub topology_balance_node_fit: bool,
    /// Descheduler strategy: the default evictor's `nodeFit`.
    pub node_fit: bool,
    /// Descheduler strategy: its `namespaces.exclude`.
    pub exclude_namespaces: Vec<String>,
    /// Keep what [`Rebalance::cluster_yaml`] writes back: each bound pod as written,
    /// beside its compact form.
    pub write_back: bool,
}

impl RebalanceRequest {
    /// A request for `cluster` with the CLI's defaults (greedy strategy, 1000 moves,
    /// every namespace).
    pub fn new(cluster: impl Into<Cluster>) -> Self {
        Self {
            cluster: cluster.into(),
            namespace: None,
            selector: None,
            max_moves: 1000,
            strategy: Strategy::Topospread,
            include_schedule_anyway: false,
            topology_balance_node_fit: true,
            node_fit: false,
            exclude_namespaces: Vec::new(),
            write_back: false,
        }
    }
}

/// The contract of `topospread rebalance -o json`: the plan's moves, what stays
/// unresolved, and each workload's spread before and after.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct RebalanceReport {
    /// [`API_VERSION`].
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// [`KIND`].
    pub kind: String,
    /// The plan.
    #[serde(flatten)]
    pub plan: Plan,
}

impl RebalanceReport {
    /// Whether the plan leaves every DoNotSchedule constraint within maxSkew and no
    /// replacement Pending.
    pub fn settled(&self) -> bool {
        self.plan.final_violations == 0 && self.plan.pending == 0
    }
}

/// A plan, with what it needs to write the cluster it leads to.
pub struct Rebalance {
    /// The versioned report.
    pub report: RebalanceReport,
    /// Notes for the user (pods scheduled first, skipped objects).
    pub notes: Vec<String>,
    /// How long planning took (loading excluded).
    pub planning: Duration,
    input: Input,
    world: World,
    /// The cluster the plan leads to.
    after: Snapshot,
}

impl Rebalance {
    /// The cluster the plan leads to (each move's replacement bound where it lands).
    pub fn cluster_after(&self) -> &Snapshot {
        &self.after
    }

    /// The cluster after the plan as YAML, as `simulate -o yaml` writes one; the
    /// descheduler strategy's Pending replacements are written Pending. Needs
    /// [`RebalanceRequest::write_back`].
    pub fn cluster_yaml(&mut self) -> Result<String> {
        let mut out = Vec::new();
        self.write_cluster_yaml(&mut out)?;
        String::from_utf8(out).map_err(|e| Error::Render(e.to_string()))
    }

    /// [`Rebalance::cluster_yaml`] written to `out` as it is made.
    pub fn write_cluster_yaml(&mut self, out: &mut dyn std::io::Write) -> Result<()> {
        // The cluster the plan leads to (the world's own went into planning), lent to
        // the world for the writing.
        std::mem::swap(&mut self.world.snapshot, &mut self.after);
        let written =
            topospread_driver::cluster_yaml(&self.input.objects, &self.world, None, &[], out);
        std::mem::swap(&mut self.world.snapshot, &mut self.after);
        Ok(written?)
    }
}

/// The cluster loaded, its pending pods scheduled first (as `simulate` would), and the
/// pods the strategy's evictor refuses to evict.
struct Prepared {
    input: Input,
    world: World,
    setup: config::SchedulerSetup,
    notes: Vec<String>,
    blockers: BTreeMap<(String, String), NotEvictable>,
}

fn prepare(
    ctx: &Context,
    cluster: Cluster,
    strategy: Strategy,
    write_back: bool,
) -> Result<Prepared> {
    let seed = cluster.seed;
    let form = if write_back {
        input::PodForm::CompactWritten
    } else {
        input::PodForm::Compact
    };
    let (input, setup) = cluster.load(ctx, form)?;
    let mut world = input::build(ctx, &input, seed, &[])?;
    let mut notes = input::world_notes(ctx, &input, &world);
    if !world.queue.is_empty()
        || !world.expansion.ordered.is_empty()
        || !world.expansion.rollouts.is_empty()
    {
        // Workloads in the files that have no pods yet are scheduled first, as
        // `simulate` would: the plan starts from where they land.
        let mut driver = ClusterDriver::start(world, &setup, seed)?;
        let n = driver.settle(&mut (), 0)?.len();
        world = driver.into_parts().0;
        notes.push(format!(
            "{n} pending pods were scheduled first (as simulate does)"
        ));
    }
    let descheduler = strategy == Strategy::Descheduler;
    let blocker = if descheduler {
        rebalance::descheduler_eviction_blocker
    } else {
        rebalance::eviction_blocker
    };
    let mut blockers = BTreeMap::new();
    let mut block = |ns: Option<&str>, name: Option<&str>, b: Option<NotEvictable>| {
        if let Some(b) = b {
            let key = (
                ns.unwrap_or("default").to_string(),
                name.unwrap_or_default().to_string(),
            );
            blockers.insert(key, b);
        }
    };
    for l in &input.objects {
        match &l.object {
            Object::Pod(p) => block(
                p.metadata.namespace.as_deref(),
                p.metadata.name.as_deref(),
                blocker(p),
            ),
            // Read off the pod as written when it was compacted.
            Object::CompactPod(p) => block(
                Some(&p.namespace),
                Some(&p.name),
                p.eviction_blockers.as_ref().and_then(|b| {
                    if descheduler {
                        b.descheduler.clone()
                    } else {
                        b.topospread.clone()
                    }
                }),
            ),
            _ => {}
        }
    }
    for p in &world.expansion.pods {
        let meta = &p.pod.metadata;
        block(
            meta.namespace.as_deref(),
            meta.name.as_deref(),
            blocker(&p.pod),
        );
    }
    Ok(Prepared {
        input,
        world,
        setup,
        notes,
        blockers,
    })
}

/// Plans the moves that restore spread, each checked with the scheduler.
pub fn rebalance(ctx: &Context, request: RebalanceRequest) -> Result<Rebalance> {
    let seed = request.cluster.seed;
    let mut p = prepare(ctx, request.cluster, request.strategy, request.write_back)?;
    let selector = match &request.selector {
        None => None,
        Some(s) => Some(parse_selector(s).map_err(|e| Error::Refused(format!("-l {s:?}: {e}")))?),
    };
    let mut options = RebalanceOptions::default();
    options.namespace = request.namespace;
    options.selector = selector;
    options.max_moves = request.max_moves;
    options.strategy = request.strategy;
    options.blockers = p.blockers;
    options.descheduler_soft = request.include_schedule_anyway;
    options.topology_balance_node_fit = request.topology_balance_node_fit;
    options.descheduler_node_fit = request.node_fit;
    options.exclude_namespaces = request.exclude_namespaces;
    options.seed = seed;
    if options.strategy == Strategy::Descheduler
        && let Some(note) =
            nothing_selected(&mut p.world.snapshot, &options, request.selector.as_deref())
    {
        p.notes.push(note);
    }
    let started = Instant::now();
    // The world's snapshot is planned on in place (the plan keeps the result): it is
    // not needed again, and a copy of a large cluster is hundreds of megabytes.
    let plan = rebalance::plan_owned(
        std::mem::take(&mut p.world.snapshot),
        &p.setup.config,
        p.setup.features,
        &options,
    )
    .map_err(|e| Error::Refused(e.to_string()))?;
    let planning = started.elapsed();
    Ok(Rebalance {
        report: RebalanceReport {
            api_version: API_VERSION.into(),
            kind: KIND.into(),
            plan: Plan::from(&plan),
        },
        notes: p.notes,
        planning,
        input: p.input,
        world: p.world,
        after: plan.snapshot,
    })
}

/// The descheduler's filters selecting no bound pod: it evicts nothing and succeeds
/// (a CronJob's run while the app is scaled to zero), so the plan is empty with this
/// note, where topospread's own strategy refuses the scope.
fn nothing_selected(
    snapshot: &mut topospread::snapshot::Snapshot,
    options: &RebalanceOptions,
    selector: Option<&str>,
) -> Option<String> {
    let compiled = match &options.selector {
        Some(s) => Some(
            topospread::api::Selector::from_label_selector(Some(s), snapshot.symbols_mut()).ok()?,
        ),
        None => None,
    };
    let symbols = snapshot.symbols();
    let any = snapshot.pods().any(|(id, pod)| {
        snapshot.pod_node(id).is_some()
            && options
                .namespace
                .as_deref()
                .is_none_or(|n| symbols.resolve(pod.namespace) == n)
            && compiled
                .as_ref()
                .is_none_or(|s| s.matches(&pod.labels, symbols))
    });
    if any {
        return None;
    }
    let mut what = Vec::new();
    if let Some(n) = &options.namespace {
        what.push(format!("namespace {n:?}"));
    }
    if let Some(s) = selector {
        what.push(format!("selector {s:?}"));
    }
    if what.is_empty() {
        what.push("the input".into());
    }
    Some(format!(
        "no bound pod matches {}: the descheduler evicts nothing and ends successfully",
        what.join(" and ")
    ))
}

/// Which scale-down to plan: `--scale KIND/NAME=N` in the cluster's namespace.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ScaleDownRequest {
    /// The cluster, as `simulate` reads it.
    pub cluster: Cluster,
    /// The workload's namespace (`default` when `None`).
    pub namespace: Option<String>,
    /// `deployment/web=3`, `replicaset/NAME=N`, `replicationcontroller/NAME=N`.
    pub scale: String,
}

impl ScaleDownRequest {
    /// A request to scale `scale` (`deployment/web=3`) in `cluster`'s `default`
    /// namespace.
    pub fn new(cluster: impl Into<Cluster>, scale: impl Into<String>) -> Self {
        Self {
            cluster: cluster.into(),
            namespace: None,
            scale: scale.into(),
        }
    }
}

/// The contract of `topospread rebalance --scale ... -o json`: every pod's
/// pod-deletion-cost, removed ones first, and the spread before and after.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct ScaleDownReport {
    /// [`API_VERSION`].
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// [`SCALE_DOWN_KIND`].
    pub kind: String,
    /// The plan.
    #[serde(flatten)]
    pub plan: ScalePlan,
}

/// Chooses which pods a scale-down removes so the rest stay spread, as
/// pod-deletion-cost values the ReplicaSet controller honours.
pub fn scale_down(ctx: &Context, request: ScaleDownRequest) -> Result<ScaleDownReport> {
    let scale = request.scale.as_str();
    // One grammar with `simulate --scale`: KIND/NAME=N or KIND/NAMESPACE/NAME=N.
    let parsed: topospread_k8s::workloads::Scale = scale
        .parse()
        .map_err(|e: topospread_k8s::workloads::ScaleError| Error::Refused(e.to_string()))?;
    let explicit_namespace = scale
        .rsplit_once('=')
        .is_some_and(|(target, _)| target.matches('/').count() == 2);
    let namespace = match (&request.namespace, explicit_namespace) {
        (Some(n), true) if *n != parsed.namespace => refuse!(
            "--scale {scale:?} names namespace {:?} but --namespace is {n:?}",
            parsed.namespace
        ),
        (Some(n), false) => n.as_str(),
        _ => parsed.namespace.as_str(),
    };
    let name = parsed.name.as_str();
    let kind = parsed.kind;
    let replicas = usize::try_from(parsed.replicas).unwrap_or(0);
    let p = prepare(ctx, request.cluster, Strategy::Topospread, false)?;
    let controller = match kind {
        "deployment" => match deployment_replica_set(&p.input, &p.world, namespace, name) {
            Some(rs) => rs,
            None => refuse!(
                "--scale {scale:?}: deployment {name:?} in namespace {namespace}: no such workload with a ReplicaSet in the input"
            ),
        },
        "replicaset" | "replicationcontroller" => name.to_string(),
        "statefulset" => refuse!(
            "--scale {scale:?}: a StatefulSet removes its highest ordinals first; pod-deletion-cost does not apply"
        ),
        other => refuse!(
            "--scale {scale:?}: unknown kind {other:?} (deployment, replicaset or replicationcontroller)"
        ),
    };
    let plan = rebalance::plan_scale_down(
        &p.world.snapshot,
        &p.setup.config,
        p.setup.features,
        namespace,
        &controller,
        &format!("{kind}/{name}"),
        replicas,
    )
    .map_err(|e| Error::Refused(format!("--scale {scale:?}: {e}")))?;
    Ok(ScaleDownReport {
        api_version: API_VERSION.into(),
        kind: SCALE_DOWN_KIND.into(),
        plan: ScalePlan::from(&plan),
    })
}

/// The ReplicaSet a Deployment owns in the input (the one with the most pods when
/// several do), by its owner reference.
fn deployment_replica_set(
    input: &Input,
    world: &World,
    namespace: &str,
    name: &str,
) -> Option<String> {
    let owned = input
        .objects
        .iter()
        .chain(&world.expansion.replica_sets)
        .filter_map(|l| match &l.object {
            Object::ReplicaSet(rs) => Some(rs),
            _ => None,
        })
        .filter(|rs| rs.metadata.namespace.as_deref().unwrap_or("default") == namespace)
        .filter(|rs| {
            rs.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && o.kind == "Deployment" && o.name == name)
        })
        .filter_map(|rs| rs.metadata.name.clone());
    let snapshot = &world.snapshot;
    owned.max_by_key(|rs| {
        snapshot
            .pods()
            .filter(|(id, p)| {
                snapshot.pod_node(*id).is_some()
                    && p.controller.as_ref().is_some_and(|c| &*c.name == rs)
            })
            .count()
    })
}

/// The JSON Schemas (draft 2020-12) of [`RebalanceReport`] and [`ScaleDownReport`].
pub fn schemas() -> (serde_json::Value, serde_json::Value) {
    let generate = |root: schemars::Schema| serde_json::to_value(root).unwrap_or_default();
    let settings = || {
        schemars::generate::SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator()
    };
    (
        generate(settings().into_root_schema_for::<RebalanceReport>()),
        generate(settings().into_root_schema_for::<ScaleDownReport>()),
    )
}
