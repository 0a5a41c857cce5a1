//! Node templates from autoscalers' own objects, where they carry the facts a Node
//! template does: a Karpenter `NodePool` (karpenter.sh/v1) sized by `--instance-type`,
//! and cluster-autoscaler's Cluster API node groups (a MachineDeployment, MachineSet or
//! MachinePool with the autoscaler's size and capacity annotations). Each becomes Node
//! manifests read by [`NodeTemplate::from_node`]; the README lists the fields used.

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;
use std::collections::BTreeMap;
use topospread::Snapshot;
use topospread::api::quantity::Quantity;
use topospread::api::resources::Resources;
use topospread_planning::capacity::{
    ANNOTATION_PRICE, LimitedResource, MAX_COUNT, NodeTemplate, SharedLimit, ZONE_KEY, ZoneChoice,
    parse_price,
};

/// The label Karpenter puts on every node of a NodePool.
const NODEPOOL_LABEL: &str = "karpenter.sh/nodepool";
/// The instance-type label.
const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
/// Karpenter's limit on the node shapes one NodePool expands to here.
const MAX_SHAPES: usize = 64;

/// cluster-autoscaler's Cluster API annotations.
const CAPI_MIN: &str = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size";
const CAPI_MAX: &str = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size";
const CAPACITY: &str = "capacity.cluster-autoscaler.kubernetes.io/";
/// cluster-autoscaler's `maxPods` when the annotation is absent.
const CAPI_DEFAULT_MAX_PODS: &str = "110";
/// The label prefixes Cluster API propagates from a MachineDeployment's template to its
/// nodes (and cluster-autoscaler reads from it).
const CAPI_MANAGED_PREFIXES: [&str; 3] = [
    "node-role.kubernetes.io",
    "node-restriction.kubernetes.io",
    "node.cluster.x-k8s.io",
];

/// An instance type's shape, from `--instance-type NAME=CPU,MEMORY,PODS[,price=P][,KEY=VALUE...]`:
/// what a NodePool does not state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct InstanceType {
    /// `m5.large`.
    pub(super) name: String,
    /// `cpu`, `memory`, `pods` as given (allocatable).
    pub(super) allocatable: BTreeMap<String, String>,
    /// `price=`, in millionths (0 when absent).
    pub(super) price_micros: u64,
    /// Further `KEY=VALUE` pairs: the labels its nodes carry (`kubernetes.io/arch=arm64`).
    pub(super) labels: BTreeMap<String, String>,
}

impl InstanceType {
    /// Reads one `--instance-type` value; the error names the flag and the part.
    pub(super) fn parse(spec: &str) -> Result<Self, String> {
        let bad = |what: String| format!("--instance-type {spec:?}: {what}");
        let (name, rest) = spec
            .split_once('=')
            .ok_or_else(|| bad("expected NAME=CPU,MEMORY,PODS[,price=P][,KEY=VALUE...]".into()))?;
        let name = name.trim();
        if name.is_empty() || name.contains(['/', ',', ' ']) {
            return Err(bad(format!("{name:?} is not an instance type name")));
        }
        let parts: Vec<&str> = rest.split(',').map(str::trim).collect();
        if parts.len() < 3 || parts[..3].iter().any(|p| p.contains('=')) {
            return Err(bad(
                "give CPU, MEMORY and PODS first (allocatable, as a node of the type reports it)"
                    .into(),
            ));
        }
        let mut allocatable = BTreeMap::new();
        for (resource, value) in ["cpu", "memory", "pods"].iter().zip(&parts[..3]) {
            let q =
                Quantity::parse(value).map_err(|e| bad(format!("{resource} {value:?}: {e}")))?;
            if q.signum() <= 0 {
                return Err(bad(format!("{resource} {value:?}: must be positive")));
            }
            allocatable.insert((*resource).to_string(), (*value).to_string());
        }
        let mut price_micros = 0;
        let mut labels = BTreeMap::new();
        for extra in &parts[3..] {
            let (k, v) = extra
                .split_once('=')
                .ok_or_else(|| bad(format!("{extra:?}: expected price=P or KEY=VALUE")))?;
            if k == "price" {
                price_micros = parse_price(v).ok_or_else(|| {
                    bad(format!(
                        "price {v:?} is not a price (a non-negative decimal, at most 6 decimals)"
                    ))
                })?;
            } else if k.is_empty() || k == ZONE_KEY || k == INSTANCE_TYPE_LABEL {
                return Err(bad(format!(
                    "label {k:?}: the zone and the instance type come from the NodePool"
                )));
            } else {
                labels.insert(k.to_string(), v.to_string());
            }
        }
        Ok(Self {
            name: name.to_string(),
            allocatable,
            price_micros,
            labels,
        })
    }
}

/// What readers of autoscaler objects need besides the object.
pub(super) struct Readers<'a> {
    /// `--instance-type`.
    pub(super) instance_types: &'a [InstanceType],
    /// The cluster's zones.
    pub(super) zones: &'a [String],
    /// EC2NodeClasses given with the templates: name -> `spec.kubelet.maxPods`.
    pub(super) max_pods: &'a BTreeMap<String, i64>,
}

/// The kind of autoscaler object `doc` is, if one is read here.
pub(super) enum Kind {
    /// A karpenter.sh NodePool.
    NodePool,
    /// A karpenter.k8s.aws EC2NodeClass (its `spec.kubelet.maxPods` is read).
    Ec2NodeClass,
    /// A cluster.x-k8s.io MachineDeployment, MachineSet or MachinePool.
    NodeGroup,
}

/// Which autoscaler object `doc` is; `None` for anything else.
pub(super) fn kind(doc: &Value) -> Option<Kind> {
    let api = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
    let group = api.split_once('/').map_or("", |(g, _)| g);
    match (group, kind) {
        ("karpenter.sh", "NodePool") => Some(Kind::NodePool),
        ("karpenter.k8s.aws", "EC2NodeClass") => Some(Kind::Ec2NodeClass),
        ("cluster.x-k8s.io", "MachineDeployment" | "MachineSet" | "MachinePool") => {
            Some(Kind::NodeGroup)
        }
        _ => None,
    }
}

/// `kind "name"` of an object, for messages.
pub(super) fn describe(doc: &Value) -> String {
    format!(
        "{} {:?}",
        doc.get("kind").and_then(Value::as_str).unwrap_or("object"),
        name_of(doc)
    )
}

fn name_of(doc: &Value) -> &str {
    doc.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// An EC2NodeClass's name and `spec.kubelet.maxPods`, if it sets one.
pub(super) fn node_class_max_pods(doc: &Value) -> Result<Option<(String, i64)>, String> {
    let Some(v) = doc.pointer("/spec/kubelet/maxPods") else {
        return Ok(None);
    };
    let n = v.as_i64().filter(|n| *n > 0).ok_or_else(|| {
        format!(
            "{}: spec.kubelet.maxPods: {v} is not a positive whole number",
            describe(doc)
        )
    })?;
    Ok(Some((name_of(doc).to_string(), n)))
}

fn string_map(doc: &Value, pointer: &str, field: &str) -> Result<BTreeMap<String, String>, String> {
    match doc.pointer(pointer) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Err(format!(
                    "{}: {field}[{k}]: {other} is not a string",
                    describe(doc)
                )),
            })
            .collect(),
        Some(other) => Err(format!("{}: {field}: {other} is not a map", describe(doc))),
    }
}

fn taints(doc: &Value, pointer: &str, field: &str) -> Result<Vec<core::Taint>, String> {
    match doc.pointer(pointer) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v) => serde_json::from_value::<Vec<core::Taint>>(v.clone())
            .map_err(|e| format!("{}: {field}: {e}", describe(doc))),
    }
}

/// A Node manifest for a template.
fn manifest(
    name: &str,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    taints: Vec<core::Taint>,
    allocatable: &BTreeMap<String, String>,
) -> core::Node {
    core::Node {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(labels),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        },
        spec: Some(core::NodeSpec {
            taints: (!taints.is_empty()).then_some(taints),
            ..core::NodeSpec::default()
        }),
        status: Some(core::NodeStatus {
            allocatable: Some(
                allocatable
                    .iter()
                    .map(|(k, v)| (k.clone(), K8sQuantity(v.clone())))
                    .collect(),
            ),
            ..core::NodeStatus::default()
        }),
    }
}

/// A resource's amount in `r` (millicores for cpu, else units).
fn amount(r: &Resources, resource: &str) -> i64 {
    match resource {
        "cpu" => r.milli_cpu,
        "memory" => r.memory,
        "ephemeral-storage" => r.ephemeral_storage,
        "pods" => r.allowed_pod_number,
        other => r.scalar(other),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
}

#[derive(Clone, Debug)]
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

impl Requirement {
    fn admits(&self, value: Option<&str>) -> bool {
        let number = |v: &str| v.parse::<i64>().ok();
        match self.op {
            Op::In => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            Op::NotIn => value.is_none_or(|v| !self.values.iter().any(|x| x == v)),
            Op::Exists => value.is_some(),
            Op::DoesNotExist => value.is_none(),
            Op::Gt => value
                .and_then(number)
                .zip(self.values.first().and_then(|b| number(b)))
                .is_some_and(|(v, b)| v > b),
            Op::Lt => value
                .and_then(number)
                .zip(self.values.first().and_then(|b| number(b)))
                .is_some_and(|(v, b)| v < b),
        }
    }
}

fn requirements(doc: &Value) -> Result<Vec<Requirement>, String> {
    let field = "spec.template.spec.requirements";
    let Some(list) = doc.pointer("/spec/template/spec/requirements") else {
        return Ok(Vec::new());
    };
    let Some(list) = list.as_array() else {
        return Err(format!("{}: {field}: not a list", describe(doc)));
    };
    let mut out = Vec::new();
    for (i, r) in list.iter().enumerate() {
        let at = format!("{}: {field}[{i}]", describe(doc));
        let key = r
            .get("key")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .ok_or_else(|| format!("{at}.key: missing"))?;
        let op = match r.get("operator").and_then(Value::as_str) {
            Some("In") => Op::In,
            Some("NotIn") => Op::NotIn,
            Some("Exists") => Op::Exists,
            Some("DoesNotExist") => Op::DoesNotExist,
            Some("Gt") => Op::Gt,
            Some("Lt") => Op::Lt,
            other => {
                return Err(format!(
                    "{at}.operator: {} is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt",
                    other.map_or("missing".to_string(), |o| format!("{o:?}"))
                ));
            }
        };
        let values: Vec<String> = match r.get("values") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| format!("{at}.values: {v} is not a string"))
                })
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(format!("{at}.values: {other} is not a list")),
        };
        match op {
            Op::In if values.is_empty() => {
                return Err(format!("{at}.values: In needs at least one value"));
            }
            Op::Exists | Op::DoesNotExist if !values.is_empty() => {
                return Err(format!("{at}.values: {op:?} takes no values"));
            }
            Op::Gt | Op::Lt if values.len() != 1 || values[0].parse::<i64>().is_err() => {
                return Err(format!("{at}.values: {op:?} takes one integer"));
            }
            _ => {}
        }
        out.push(Requirement {
            key: key.to_string(),
            op,
            values,
        });
    }
    Ok(out)
}

/// A NodePool's templates: one per instance type (and per value of a requirement that
/// allows several), with its labels, taints, zones, price and `spec.limits`.
pub(super) fn node_pool(
    doc: &Value,
    readers: &Readers<'_>,
    snapshot: &mut Snapshot,
) -> Result<Vec<NodeTemplate>, String> {
    let what = describe(doc);
    let api = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if api != "karpenter.sh/v1" {
        return Err(format!(
            "{what}: apiVersion {api:?}: only karpenter.sh/v1 NodePools are read"
        ));
    }
    let pool = name_of(doc).to_string();
    if pool.is_empty() {
        return Err(format!("{what}: metadata.name: a NodePool needs a name"));
    }
    let template_labels = string_map(
        doc,
        "/spec/template/metadata/labels",
        "spec.template.metadata.labels",
    )?;
    let node_taints = taints(
        doc,
        "/spec/template/spec/taints",
        "spec.template.spec.taints",
    )?;
    // Startup taints are validated but not applied: Karpenter expects another system to
    // remove them, and pods need not tolerate them.
    taints(
        doc,
        "/spec/template/spec/startupTaints",
        "spec.template.spec.startupTaints",
    )?;
    let reqs = requirements(doc)?;
    let zone_reqs: Vec<&Requirement> = reqs.iter().filter(|r| r.key == ZONE_KEY).collect();
    let zones = pool_zones(&what, &template_labels, &zone_reqs, readers)?;
    let max_pods = doc
        .pointer("/spec/template/spec/nodeClassRef")
        .filter(|r| r.get("kind").and_then(Value::as_str) == Some("EC2NodeClass"))
        .and_then(|r| r.get("name").and_then(Value::as_str))
        .and_then(|n| readers.max_pods.get(n).copied());
    let shapes = pool_shapes(&what, &pool, &reqs, &template_labels, readers)?;
    let remaining = pool_limits(doc, &what, &pool, snapshot)?;

    pool_templates(
        &what,
        &pool,
        PoolShape {
            shapes,
            zones,
            taints: node_taints,
            max_pods,
        },
        &remaining,
        snapshot,
    )
}

/// The zones a NodePool's nodes may be in: its template's zone label, else what its
/// zone requirements allow of the cluster's zones (or any zone, without any).
fn pool_zones(
    what: &str,
    template_labels: &BTreeMap<String, String>,
    zone_reqs: &[&Requirement],
    readers: &Readers<'_>,
) -> Result<ZoneChoice, String> {
    let field = "spec.template.spec.requirements";
    Ok(if let Some(z) = template_labels.get(ZONE_KEY) {
        if !zone_reqs.iter().all(|r| r.admits(Some(z))) {
            return Err(format!(
                "{what}: spec.template.metadata.labels[{ZONE_KEY}]: {z:?} is excluded by {field}"
            ));
        }
        ZoneChoice::Pinned(z.clone())
    } else if zone_reqs.is_empty() {
        ZoneChoice::Any
    } else {
        if let Some(r) = zone_reqs
            .iter()
            .find(|r| matches!(r.op, Op::DoesNotExist | Op::Gt | Op::Lt))
        {
            return Err(format!(
                "{what}: {field}: {ZONE_KEY} {:?}: every node Karpenter launches is in a zone; use In or NotIn",
                r.op
            ));
        }
        let listed: Option<Vec<String>> = zone_reqs
            .iter()
            .filter(|r| r.op == Op::In)
            .map(|r| r.values.clone())
            .reduce(|a, b| a.into_iter().filter(|z| b.contains(z)).collect());
        let candidates = listed.unwrap_or_else(|| readers.zones.to_vec());
        let kept: Vec<String> = candidates
            .into_iter()
            .filter(|z| zone_reqs.iter().all(|r| r.admits(Some(z))))
            .collect();
        if kept.is_empty() {
            return Err(format!(
                "{what}: {field}: {ZONE_KEY}: no zone satisfies them (the cluster's: {})",
                readers.zones.join(",")
            ));
        }
        ZoneChoice::Listed(kept)
    })
}

/// A NodePool's `spec.limits`, less what its nodes in the cluster hold: what its new
/// nodes may still take of each resource (millicores for cpu).
fn pool_limits(
    doc: &Value,
    what: &str,
    pool: &str,
    snapshot: &Snapshot,
) -> Result<Vec<(String, i64)>, String> {
    let limits = string_map(doc, "/spec/limits", "spec.limits").or_else(|_| {
        // Quantities may be written as numbers (`cpu: 1000`).
        match doc.pointer("/spec/limits") {
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| match v {
                    Value::Number(n) => Ok((k.clone(), n.to_string())),
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    other => Err(format!(
                        "{what}: spec.limits[{k}]: {other} is not a quantity"
                    )),
                })
                .collect(),
            _ => Err(format!("{what}: spec.limits: not a map")),
        }
    })?;
    let mut remaining: Vec<(String, i64)> = Vec::new();
    for (resource, value) in &limits {
        let q = Quantity::parse(value)
            .map_err(|e| format!("{what}: spec.limits[{resource}]: {value:?}: {e}"))?;
        if q.signum() < 0 {
            return Err(format!(
                "{what}: spec.limits[{resource}]: {value:?} is negative"
            ));
        }
        let limit = if resource == "cpu" {
            q.milli_value()
        } else {
            q.value()
        };
        let used = used_by_pool(snapshot, pool, resource);
        remaining.push((resource.clone(), limit.saturating_sub(used).max(0)));
    }

    Ok(remaining)
}

/// One node shape of a NodePool: the instance type, the labels its node carries and the
/// suffix naming its template.
type NodeShape<'a> = (&'a InstanceType, BTreeMap<String, String>, String);

/// What a NodePool's templates are made of: its node shapes (instance type, labels,
/// name suffix), zones, taints and EC2NodeClass `maxPods`.
struct PoolShape<'a> {
    shapes: Vec<NodeShape<'a>>,
    zones: ZoneChoice,
    taints: Vec<core::Taint>,
    max_pods: Option<i64>,
}

/// One template per shape, named `POOL-TYPE[-VALUE...]`, priced, bounded by the pool's
/// remaining limits (shared among its templates when it has several).
fn pool_templates(
    what: &str,
    pool: &str,
    pool_shape: PoolShape<'_>,
    remaining: &[(String, i64)],
    snapshot: &mut Snapshot,
) -> Result<Vec<NodeTemplate>, String> {
    let PoolShape {
        shapes,
        zones,
        taints: node_taints,
        max_pods,
    } = pool_shape;
    let several = shapes.len() > 1;
    let mut out = Vec::new();
    for (it, labels, suffix) in shapes {
        let name = format!("{pool}-{}{suffix}", it.name);
        let mut allocatable = it.allocatable.clone();
        if let Some(m) = max_pods {
            let pods = Quantity::parse(&allocatable["pods"]).map_or(0, |q| q.value());
            if m < pods {
                allocatable.insert("pods".to_string(), m.to_string());
            }
        }
        let mut annotations = BTreeMap::new();
        annotations.insert(ANNOTATION_PRICE.to_string(), price_text(it.price_micros));
        let node = manifest(
            &name,
            labels,
            annotations,
            node_taints.clone(),
            &allocatable,
        );
        let mut t = NodeTemplate::from_node(&node, snapshot)
            .map_err(|e| format!("{what}: instance type {}: {e}", it.name))?;
        t.zones = zones.clone();
        let mut resources = Vec::new();
        let mut max = MAX_COUNT;
        for (resource, left) in remaining {
            let per_node = amount(&t.node.allocatable, resource);
            if per_node > 0 {
                max = max.min(u32::try_from(left / per_node).unwrap_or(MAX_COUNT));
            }
            resources.push(LimitedResource {
                resource: resource.clone(),
                remaining: *left,
                per_node,
            });
        }
        if !remaining.is_empty() {
            t.max_count = Some(max);
        }
        if several && !resources.is_empty() {
            t.shared = Some(SharedLimit {
                group: format!("nodepool/{pool}"),
                resources,
            });
        }
        out.push(t);
    }
    Ok(out)
}

/// A NodePool's node shapes: each `--instance-type` its requirements admit, times the
/// values they allow of other labels, with the labels a node of it carries and the
/// suffix naming it.
fn pool_shapes<'a>(
    what: &str,
    pool: &str,
    reqs: &[Requirement],
    template_labels: &BTreeMap<String, String>,
    readers: &Readers<'a>,
) -> Result<Vec<NodeShape<'a>>, String> {
    let on = |key: &str| reqs.iter().filter(|r| r.key == key).collect::<Vec<_>>();
    let field = "spec.template.spec.requirements";
    if readers.instance_types.is_empty() {
        return Err(format!(
            "{what}: a NodePool does not state its nodes' allocatable: give each instance type it may launch with --instance-type NAME=CPU,MEMORY,PODS"
        ));
    }
    let type_reqs = on(INSTANCE_TYPE_LABEL);
    if let Some(r) = type_reqs.iter().find(|r| matches!(r.op, Op::Gt | Op::Lt)) {
        return Err(format!(
            "{what}: {field}: {INSTANCE_TYPE_LABEL} {:?}: instance types are names, not numbers",
            r.op
        ));
    }
    let other_keys: Vec<&str> = {
        let mut keys: Vec<&str> = reqs
            .iter()
            .map(|r| r.key.as_str())
            .filter(|k| *k != ZONE_KEY && *k != INSTANCE_TYPE_LABEL)
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    };
    // Per shape: instance type, labels, name suffix.
    let mut shapes: Vec<NodeShape<'_>> = Vec::new();
    'types: for it in readers.instance_types {
        if !type_reqs.iter().all(|r| r.admits(Some(&it.name))) {
            continue;
        }
        let mut labels = template_labels.clone();
        for (k, v) in &it.labels {
            match labels.get(k) {
                Some(have) if have != v => continue 'types,
                _ => {
                    labels.insert(k.clone(), v.clone());
                }
            }
        }
        labels.insert(NODEPOOL_LABEL.to_string(), pool.to_string());
        labels.insert(INSTANCE_TYPE_LABEL.to_string(), it.name.clone());
        let mut variants: Vec<(BTreeMap<String, String>, String)> = vec![(labels, String::new())];
        for key in &other_keys {
            let rs = on(key);
            let given = variants[0].0.get(*key).cloned();
            if let Some(v) = given {
                if !rs.iter().all(|r| r.admits(Some(&v))) {
                    continue 'types;
                }
                continue;
            }
            let allowed: Option<Vec<String>> = rs
                .iter()
                .filter(|r| r.op == Op::In)
                .map(|r| r.values.clone())
                .reduce(|a, b| a.into_iter().filter(|x| b.contains(x)).collect());
            match allowed {
                Some(values) => {
                    let values: Vec<String> = values
                        .into_iter()
                        .filter(|v| rs.iter().all(|r| r.admits(Some(v))))
                        .collect();
                    if values.is_empty() {
                        return Err(format!(
                            "{what}: {field}: {key}: no value satisfies them all"
                        ));
                    }
                    let many = values.len() > 1;
                    variants = variants
                        .into_iter()
                        .flat_map(|(labels, suffix)| {
                            values.iter().map(move |v| {
                                let mut l = labels.clone();
                                l.insert((*key).to_string(), v.clone());
                                let s = if many {
                                    format!("{suffix}-{v}")
                                } else {
                                    suffix.clone()
                                };
                                (l, s)
                            })
                        })
                        .collect();
                }
                None => {
                    if let Some(r) = rs
                        .iter()
                        .find(|r| matches!(r.op, Op::Exists | Op::Gt | Op::Lt))
                    {
                        return Err(format!(
                            "{what}: {field}: {key} {:?}: no value is known for it: name its values with In, or give instance types the label (--instance-type NAME=CPU,MEMORY,PODS,{key}=VALUE)",
                            r.op
                        ));
                    }
                }
            }
        }
        for (labels, suffix) in variants {
            shapes.push((it, labels, suffix));
            if shapes.len() > MAX_SHAPES {
                return Err(format!(
                    "{what}: {field}: more than {MAX_SHAPES} node shapes (instance types times the values requirements allow): narrow them"
                ));
            }
        }
    }
    if shapes.is_empty() {
        return Err(format!(
            "{what}: {field}: no --instance-type satisfies them (given: {})",
            readers
                .instance_types
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(",")
        ));
    }

    Ok(shapes)
}

fn price_text(micros: u64) -> String {
    topospread_planning::capacity::format_price(micros)
}

/// What the cluster's nodes of NodePool `pool` hold of `resource` (their allocatable).
fn used_by_pool(snapshot: &Snapshot, pool: &str, resource: &str) -> i64 {
    let symbols = snapshot.symbols();
    let (Some(key), Some(value)) = (symbols.get(NODEPOOL_LABEL), symbols.get(pool)) else {
        return 0;
    };
    snapshot
        .nodes()
        .iter()
        .filter(|n| n.node.labels.get(key) == Some(value))
        .map(|n| amount(&n.node.allocatable, resource))
        .sum()
}

/// A Cluster API node group as cluster-autoscaler's clusterapi provider sees it: sizes
/// from its min/max annotations, the shape from its `capacity.cluster-autoscaler…`
/// annotations, labels and taints from its template and annotations.
pub(super) fn node_group(doc: &Value, snapshot: &mut Snapshot) -> Result<NodeTemplate, String> {
    let what = describe(doc);
    let name = name_of(doc).to_string();
    if name.is_empty() {
        return Err(format!("{what}: metadata.name: a node group needs a name"));
    }
    let annotations = string_map(doc, "/metadata/annotations", "metadata.annotations")?;
    let size = |key: &str| -> Result<u32, String> {
        let v = annotations.get(key).ok_or_else(|| {
            format!(
                "{what}: metadata.annotations[{key}]: missing: cluster-autoscaler scales only node groups with both {CAPI_MIN} and {CAPI_MAX}"
            )
        })?;
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| *n <= MAX_COUNT)
            .ok_or_else(|| {
                format!(
                    "{what}: metadata.annotations[{key}]: {v:?} is not a whole number from 0 to {MAX_COUNT}"
                )
            })
    };
    let (min, max) = (size(CAPI_MIN)?, size(CAPI_MAX)?);
    if max < min || max == 0 {
        return Err(format!(
            "{what}: metadata.annotations[{CAPI_MAX}]: {max} leaves the group no room to scale (min {min})"
        ));
    }
    let replicas = match doc.pointer("/spec/replicas") {
        None | Some(Value::Null) => min,
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{what}: spec.replicas: {v} is not a whole number"))?,
    };
    let capacity = |key: &str| annotations.get(&format!("{CAPACITY}{key}")).cloned();
    let mut allocatable = BTreeMap::new();
    for (key, resource, required) in [
        ("cpu", "cpu", true),
        ("memory", "memory", true),
        ("ephemeral-disk", "ephemeral-storage", false),
        ("maxPods", "pods", false),
    ] {
        match capacity(key) {
            Some(v) => {
                Quantity::parse(&v).map_err(|e| {
                    format!("{what}: metadata.annotations[{CAPACITY}{key}]: {v:?}: {e}")
                })?;
                allocatable.insert(resource.to_string(), v);
            }
            None if required => {
                return Err(format!(
                    "{what}: metadata.annotations[{CAPACITY}{key}]: missing: cpu and memory size the group's nodes (the infrastructure template is not read)"
                ));
            }
            None => {}
        }
    }
    allocatable
        .entry("pods".to_string())
        .or_insert_with(|| CAPI_DEFAULT_MAX_PODS.to_string());
    if let Some(count) = capacity("gpu-count") {
        let Some(resource) = capacity("gpu-type") else {
            return Err(format!(
                "{what}: metadata.annotations[{CAPACITY}gpu-type]: missing beside gpu-count (the resource name, e.g. nvidia.com/gpu)"
            ));
        };
        Quantity::parse(&count).map_err(|e| {
            format!("{what}: metadata.annotations[{CAPACITY}gpu-count]: {count:?}: {e}")
        })?;
        allocatable.insert(resource, count);
    }
    // Labels: cluster-autoscaler's defaults for a node scaled from zero, the labels
    // Cluster API propagates from the template, then the annotation's.
    let mut labels = BTreeMap::new();
    labels.insert("kubernetes.io/arch".to_string(), "amd64".to_string());
    labels.insert("kubernetes.io/os".to_string(), "linux".to_string());
    for (k, v) in string_map(
        doc,
        "/spec/template/metadata/labels",
        "spec.template.metadata.labels",
    )? {
        let domain = k.split_once('/').map_or("", |(d, _)| d);
        if CAPI_MANAGED_PREFIXES
            .iter()
            .any(|p| domain == *p || domain.ends_with(&format!(".{p}")))
        {
            labels.insert(k, v);
        }
    }
    if let Some(list) = capacity("labels") {
        for pair in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').ok_or_else(|| {
                format!("{what}: metadata.annotations[{CAPACITY}labels]: {pair:?} is not key=value")
            })?;
            labels.insert(k.to_string(), v.to_string());
        }
    }
    if !labels.contains_key(ZONE_KEY)
        && let Some(fd) = doc
            .pointer("/spec/template/spec/failureDomain")
            .and_then(Value::as_str)
            .filter(|f| !f.is_empty())
    {
        labels.insert(ZONE_KEY.to_string(), fd.to_string());
    }
    // Taints: the template's, then the annotation's (replacing one of the same key and
    // effect).
    let mut node_taints = taints(
        doc,
        "/spec/template/spec/taints",
        "spec.template.spec.taints",
    )?;
    if let Some(list) = capacity("taints") {
        for spec in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let t = parse_taint(spec).ok_or_else(|| {
                format!(
                    "{what}: metadata.annotations[{CAPACITY}taints]: {spec:?} is not key=value:Effect"
                )
            })?;
            match node_taints
                .iter_mut()
                .find(|x| x.key == t.key && x.effect == t.effect)
            {
                Some(x) => *x = t,
                None => node_taints.push(t),
            }
        }
    }
    let mut node_annotations = BTreeMap::new();
    if let Some(p) = annotations.get(ANNOTATION_PRICE) {
        node_annotations.insert(ANNOTATION_PRICE.to_string(), p.clone());
    }
    let node = manifest(&name, labels, node_annotations, node_taints, &allocatable);
    let mut t = NodeTemplate::from_node(&node, snapshot).map_err(|e| format!("{what}: {e}"))?;
    t.max_count = Some(max.saturating_sub(replicas));
    Ok(t)
}

/// `key=value:Effect` or `key:Effect`, the form of the taints annotation.
fn parse_taint(spec: &str) -> Option<core::Taint> {
    let (kv, effect) = spec.rsplit_once(':')?;
    if !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
        return None;
    }
    let (key, value) = match kv.split_once('=') {
        Some((k, v)) => (k, Some(v.to_string())),
        None => (kv, None),
    };
    if key.is_empty() || value.as_deref().is_some_and(|v| v.contains('=')) {
        return None;
    }
    Some(core::Taint {
        key: key.to_string(),
        value,
        effect: effect.to_string(),
        time_added: None,
    })
}

#[cfg(test)]
mod tests {
    use super::{InstanceType, Op, Requirement, parse_taint};

    #[test]
    fn instance_types_read_allocatable_price_and_labels() {
        let t = InstanceType::parse("m6g.large=1930m,7Gi,29,price=0.077,kubernetes.io/arch=arm64")
            .expect("parses");
        assert_eq!(t.name, "m6g.large");
        assert_eq!(t.allocatable["cpu"], "1930m");
        assert_eq!(t.price_micros, 77_000);
        assert_eq!(t.labels["kubernetes.io/arch"], "arm64");
        for bad in [
            "m5.large",
            "m5.large=2,8Gi",
            "m5.large=2,8Gi,abc",
            "m5.large=2,8Gi,-1",
            "m5.large=2,8Gi,29,price=-1",
            "m5.large=2,8Gi,29,topology.kubernetes.io/zone=a",
        ] {
            let e = InstanceType::parse(bad).expect_err(bad);
            assert!(e.starts_with("--instance-type"), "{e}");
        }
    }

    #[test]
    fn requirements_admit_as_karpenter_reads_them() {
        let r = |op, values: &[&str]| Requirement {
            key: "k".into(),
            op,
            values: values.iter().map(|v| v.to_string()).collect(),
        };
        assert!(r(Op::In, &["a", "b"]).admits(Some("b")));
        assert!(!r(Op::In, &["a"]).admits(None));
        assert!(r(Op::NotIn, &["a"]).admits(None));
        assert!(!r(Op::NotIn, &["a"]).admits(Some("a")));
        assert!(r(Op::Gt, &["4"]).admits(Some("8")));
        assert!(!r(Op::Gt, &["4"]).admits(Some("4")));
        assert!(r(Op::Lt, &["4"]).admits(Some("2")));
        assert!(!r(Op::Lt, &["4"]).admits(Some("x")));
        assert!(r(Op::DoesNotExist, &[]).admits(None));
        assert!(!r(Op::Exists, &[]).admits(None));
    }

    #[test]
    fn taint_annotations_read_key_value_effect() {
        let t = parse_taint("gpu=true:NoSchedule").expect("taint");
        assert_eq!(
            (t.key.as_str(), t.value.as_deref(), t.effect.as_str()),
            ("gpu", Some("true"), "NoSchedule")
        );
        assert!(parse_taint("dedicated:NoExecute").is_some());
        assert!(parse_taint("gpu=true").is_none());
        assert!(parse_taint("gpu=true:Sometimes").is_none());
    }
}
