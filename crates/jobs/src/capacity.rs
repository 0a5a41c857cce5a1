//! `capacity`: the fewest template nodes, per template and zone, that let every pending
//! pod schedule, planned by `topospread-planning` and proven by its simulation; beside
//! it cluster-autoscaler's binpacking estimate, and with `--remove-idle` the nodes that
//! can go. A versioned report with a JSON Schema generated from its types.
//!
//! Templates are Node manifests, Karpenter NodePools sized by `--instance-type`, or
//! cluster-autoscaler's Cluster API node groups (the `autoscalers` module).

mod autoscalers;

use crate::cluster::Cluster;
use crate::context::Context;
use crate::error::{Error, Result, refuse};
use crate::input::{self, PodForm};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use topospread_k8s::load::Object;
use topospread_planning::capacity::{
    self as planning, CapacityError, IdleRequest, Limits, NodeTemplate, ZoneChoice, format_price,
};

/// The report's `apiVersion`.
pub const API_VERSION: &str = crate::simulate::API_VERSION;
/// The report's `kind`.
pub const KIND: &str = "CapacityReport";

/// What to plan.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CapacityRequest {
    /// The cluster, seed and configuration.
    pub cluster: Cluster,
    /// `--node-template`: files of Node manifests.
    pub templates: Vec<PathBuf>,
    /// `--remove-idle`: also list the nodes that can be removed.
    pub remove_idle: bool,
    /// `--instance-type NAME=CPU,MEMORY,PODS[,price=P][,KEY=VALUE...]`: the shapes a
    /// NodePool's instance types have (a NodePool does not state allocatable).
    pub instance_types: Vec<String>,
}

impl CapacityRequest {
    /// A request for `cluster` with these template files.
    pub fn new(cluster: impl Into<Cluster>, templates: Vec<PathBuf>) -> Self {
        Self {
            cluster: cluster.into(),
            templates,
            remove_idle: false,
            instance_types: Vec::new(),
        }
    }
}

/// A template as read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TemplateReport {
    /// Its name.
    pub name: String,
    /// The zones its nodes may go to (empty: the cluster has none).
    pub zones: Vec<String>,
    /// `topospread.io/max-count`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_count: Option<u32>,
    /// `topospread.io/price` (0 when not given).
    pub price: String,
}

/// Nodes of one template added in one zone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AdditionReport {
    /// The template.
    pub template: String,
    /// The zone (absent when the cluster has no zones).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// How many.
    pub count: u32,
    /// Their names in the verified run.
    pub nodes: Vec<String>,
}

/// A pending pod and the node the verified run placed it on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PlacedPod {
    /// `namespace/name`.
    pub pod: String,
    /// The node.
    pub node: String,
}

/// A pod no number of template nodes places.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnplaceableReport {
    /// `namespace/name`.
    pub pod: String,
    /// Why.
    pub reason: String,
}

/// cluster-autoscaler's binpacking estimate for one template, simulated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GreedyReport {
    /// The template.
    pub template: String,
    /// Nodes it adds.
    pub nodes: u32,
    /// Pending pods it packed.
    pub packed: usize,
    /// Pods the scheduler leaves Pending with those nodes.
    pub pending_after: usize,
    /// It hit the template's max-count.
    pub capped: bool,
}

/// One constraint's counts after the verified run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SpreadReport {
    /// `topology.kubernetes.io/zone maxSkew=1 DoNotSchedule app=web`.
    pub constraint: String,
    /// Matching pods per eligible domain.
    pub counts: BTreeMap<String, i64>,
    /// Largest count minus the global minimum.
    pub skew: i64,
}

/// A workload with pending pods, after the verified run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WorkloadCapacity {
    /// `namespace/controller` or `namespace/pod`.
    pub workload: String,
    /// Its pods pending with nothing added.
    pub pending_before: usize,
    /// Of those, placed in the verified run.
    pub placed: usize,
    /// Its constraints, counted after the run.
    pub spread: Vec<SpreadReport>,
}

/// A pod moved off a removable node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MovedPod {
    /// `namespace/name` of the pod on the removed node.
    pub pod: String,
    /// The node its replacement was placed on.
    pub to: String,
}

/// A node `--remove-idle` found removable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RemovalReport {
    /// The node.
    pub node: String,
    /// Its pods, rescheduled.
    pub moved: Vec<MovedPod>,
    /// Its DaemonSet pods, gone with it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub daemon_pods: Vec<String>,
}

/// The contract of `topospread capacity -o json`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct CapacityReport {
    /// [`API_VERSION`].
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// [`KIND`].
    pub kind: String,
    /// The seed of every run.
    pub seed: u64,
    /// The templates as read.
    pub templates: Vec<TemplateReport>,
    /// Pods the cluster as it is leaves Pending.
    pub pending_before: usize,
    /// Nodes to add in all.
    pub nodes: u32,
    /// Their price (the templates' `topospread.io/price` summed).
    pub price: String,
    /// Whether an exhaustive search proved no vector with fewer nodes (or as many,
    /// cheaper) schedules the pods.
    pub exact: bool,
    /// No fewer nodes can do (the exact minimum when `exact`).
    pub lower_bound: u32,
    /// Simulations run.
    pub simulations: usize,
    /// The nodes to add, per template and zone.
    pub additions: Vec<AdditionReport>,
    /// Where the verified run placed the pods pending before.
    pub placed: Vec<PlacedPod>,
    /// Pods still Pending in the verified run.
    pub pending_after: usize,
    /// Pods no number of template nodes places, and why.
    pub unplaceable: Vec<UnplaceableReport>,
    /// cluster-autoscaler's binpacking estimate per template, simulated.
    pub greedy: Vec<GreedyReport>,
    /// The workloads with pending pods, and their spread in the verified run.
    pub workloads: Vec<WorkloadCapacity>,
    /// `--remove-idle`: nodes that can be removed one after another.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remove_idle: Option<Vec<RemovalReport>>,
    /// How long planning took (loading excluded); not part of the document.
    #[serde(skip)]
    pub planned_in: Duration,
}

impl CapacityReport {
    /// Whether some pods stay Pending whatever is added.
    pub fn failed(&self) -> bool {
        self.pending_after > 0
    }
}

/// The JSON Schema of [`CapacityReport`] as it is written, as checked in under `schema/`.
pub fn schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    serde_json::to_value(generator.into_root_schema_for::<CapacityReport>()).unwrap_or_default()
}

/// Loads the cluster and the templates, plans, and reports the verified run.
pub fn capacity(ctx: &Context, request: CapacityRequest) -> Result<CapacityReport> {
    if request.templates.is_empty() {
        refuse!("--node-template: give at least one file of Node manifests");
    }
    let seed = request.cluster.seed;
    let (input, setup) = request.cluster.load(ctx, PodForm::Compact)?;
    let mut world = input::build(ctx, &input, seed, &[])?;
    let instance_types = request
        .instance_types
        .iter()
        .map(|spec| autoscalers::InstanceType::parse(spec))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(Error::Refused)?;
    let zones = cluster_zones(&world.snapshot);
    let templates = read_templates(
        ctx,
        &request.templates,
        seed,
        &instance_types,
        &zones,
        &mut world,
    )?;
    let start = Instant::now();
    let template_reports = templates
        .iter()
        .map(|t| TemplateReport {
            name: t.name.clone(),
            zones: match &t.zones {
                ZoneChoice::Pinned(z) => vec![z.clone()],
                ZoneChoice::Allowed(list) | ZoneChoice::Listed(list) => list.clone(),
                ZoneChoice::Any => zones.clone(),
            },
            max_count: t.max_count,
            price: format_price(t.price_micros),
        })
        .collect();
    let req = planning::CapacityRequest {
        snapshot: &world.snapshot,
        config: &setup.config,
        features: setup.features,
        seed,
        templates,
        limits: Limits::default(),
    };
    let plan = planning::plan(&req).map_err(capacity_error)?;
    let remove_idle = if request.remove_idle {
        let removals = planning::remove_idle(&IdleRequest {
            snapshot: &world.snapshot,
            config: &setup.config,
            features: setup.features,
            seed,
            max_candidates: 200,
        })
        .map_err(capacity_error)?;
        Some(
            removals
                .into_iter()
                .map(|r| RemovalReport {
                    node: r.node,
                    moved: r
                        .moved
                        .into_iter()
                        .map(|(pod, to)| MovedPod { pod, to })
                        .collect(),
                    daemon_pods: r.daemon_pods,
                })
                .collect(),
        )
    } else {
        None
    };
    let snapshot = &plan.snapshot;
    let symbols = snapshot.symbols();
    let placed = plan
        .pending_before
        .iter()
        .filter_map(|id| {
            let pod = snapshot.pod(*id)?;
            let node = snapshot.pod_node(*id)?;
            Some(PlacedPod {
                pod: format!("{}/{}", symbols.resolve(pod.namespace), pod.name),
                node: snapshot.node(node).node.name.to_string(),
            })
        })
        .collect();
    Ok(CapacityReport {
        api_version: API_VERSION.to_string(),
        kind: KIND.to_string(),
        seed,
        templates: template_reports,
        pending_before: plan.pending_before.len(),
        nodes: plan.total_nodes(),
        price: format_price(plan.price_micros),
        exact: plan.exact,
        lower_bound: plan.lower_bound,
        simulations: plan.simulations,
        additions: plan
            .additions
            .iter()
            .map(|a| AdditionReport {
                template: a.template.clone(),
                zone: a.zone.clone(),
                count: a.count,
                nodes: a.nodes.clone(),
            })
            .collect(),
        placed,
        pending_after: plan.pending_after.len(),
        unplaceable: plan
            .unplaceable
            .iter()
            .map(|u| UnplaceableReport {
                pod: u.pod.clone(),
                reason: u.reason.clone(),
            })
            .collect(),
        greedy: plan
            .greedy
            .iter()
            .map(|g| GreedyReport {
                template: g.template.clone(),
                nodes: g.nodes,
                packed: g.packed,
                pending_after: g.pending_after,
                capped: g.capped,
            })
            .collect(),
        workloads: plan
            .spread
            .iter()
            .map(|w| WorkloadCapacity {
                workload: w.workload.clone(),
                pending_before: w.pending_before,
                placed: w.placed,
                spread: w
                    .constraints
                    .iter()
                    .map(|c| SpreadReport {
                        constraint: c.constraint.to_string(),
                        counts: c.counts.clone(),
                        skew: c.skew,
                    })
                    .collect(),
            })
            .collect(),
        remove_idle,
        planned_in: start.elapsed(),
    })
}

/// The templates in the `--node-template` files: Node manifests (read by the loader, as
/// the cluster's are), then NodePools and Cluster API node groups in file order.
fn read_templates(
    ctx: &Context,
    files: &[PathBuf],
    seed: u64,
    instance_types: &[autoscalers::InstanceType],
    zones: &[String],
    world: &mut topospread_driver::World,
) -> Result<Vec<NodeTemplate>> {
    let read = input::load(ctx, files, None, seed, PodForm::Whole, None)?;
    let mut templates = Vec::new();
    for l in &read.objects {
        match &l.object {
            Object::Node(n) => templates.push(
                NodeTemplate::from_node(n, &mut world.snapshot)
                    .map_err(|e| Error::Refused(format!("{}: {e}", l.source)))?,
            ),
            other => refuse!(
                "{}: a {}: a node template must be a Node (kind: Node, with labels, taints and status.allocatable), a karpenter.sh/v1 NodePool or a cluster.x-k8s.io MachineDeployment, MachineSet or MachinePool",
                l.source,
                other.kind()
            ),
        }
    }
    // The loader skips kinds it does not read; read the autoscalers' here.
    let mut docs = Vec::new();
    for path in files {
        if path.is_dir() {
            continue;
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Refused(format!("{}: {e}", path.display())))?;
        let values: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text)
            .map_err(|e| Error::Refused(format!("{}: {e}", path.display())))?;
        for (i, doc) in values.into_iter().enumerate() {
            if doc.is_null() {
                continue;
            }
            let kind = doc
                .get("kind")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("");
            let api = doc
                .get("apiVersion")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("");
            match autoscalers::kind(&doc) {
                Some(k) => docs.push((format!("{} (document {})", path.display(), i + 1), k, doc)),
                // Nodes were read by the loader above (which refused any other kind it
                // reads); a List's items too.
                None if (kind == "Node" && api == "v1") || kind.ends_with("List") => {}
                None => refuse!(
                    "{} (document {}): a {kind} ({api}): a node template must be a Node, a karpenter.sh/v1 NodePool or a cluster.x-k8s.io MachineDeployment, MachineSet or MachinePool",
                    path.display(),
                    i + 1
                ),
            }
        }
    }
    let mut max_pods = BTreeMap::new();
    for (source, kind, doc) in &docs {
        if let autoscalers::Kind::Ec2NodeClass = kind
            && let Some((name, n)) = autoscalers::node_class_max_pods(doc)
                .map_err(|e| Error::Refused(format!("{source}: {e}")))?
        {
            max_pods.insert(name, n);
        }
    }
    let readers = autoscalers::Readers {
        instance_types,
        zones,
        max_pods: &max_pods,
    };
    let mut pools = 0;
    for (source, kind, doc) in &docs {
        let read = match kind {
            autoscalers::Kind::NodePool => {
                pools += 1;
                autoscalers::node_pool(doc, &readers, &mut world.snapshot)
            }
            autoscalers::Kind::NodeGroup => {
                autoscalers::node_group(doc, &mut world.snapshot).map(|t| vec![t])
            }
            autoscalers::Kind::Ec2NodeClass => Ok(Vec::new()),
        };
        templates.extend(read.map_err(|e| Error::Refused(format!("{source}: {e}")))?);
    }
    if !instance_types.is_empty() && pools == 0 {
        refuse!("--instance-type: sizes a NodePool's instance types, and no NodePool is given");
    }
    if templates.is_empty() {
        refuse!(
            "--node-template {}: no Node, NodePool or node group in the file(s)",
            files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
    }
    Ok(templates)
}

fn capacity_error(e: CapacityError) -> Error {
    match e {
        CapacityError::Simulation(m) => Error::Simulation(format!("capacity: {m}")),
        other => Error::Refused(other.to_string()),
    }
}

/// The zones the cluster's nodes are in, sorted.
fn cluster_zones(snapshot: &topospread::Snapshot) -> Vec<String> {
    let symbols = snapshot.symbols();
    let Some(key) = symbols.get(planning::ZONE_KEY) else {
        return Vec::new();
    };
    let set: std::collections::BTreeSet<String> = snapshot
        .nodes()
        .iter()
        .filter_map(|n| n.node.labels.get(key))
        .map(|v| symbols.resolve(v).to_string())
        .collect();
    set.into_iter().collect()
}
