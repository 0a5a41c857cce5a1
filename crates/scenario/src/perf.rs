//! kube-scheduler's scheduler_perf workloads for topology spreading, generated in memory:
//! the clusters and pods `topospread bench` schedules and measures.

mod failing;

use k8s_openapi::api::core::v1::{Node, Pod, Service, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::sync::Arc;
use topospread::builders::{NodeBuilder, PodBuilder};

const ZONE: &str = "topology.kubernetes.io/zone";
const HOSTNAME: &str = "kubernetes.io/hostname";
const ZONES: [&str; 3] = ["moon-1", "moon-2", "moon-3"];

/// Pods made on demand, one at a time: a 55,000-pod workload never holds them all as
/// k8s-openapi objects (about 3 KB each), so the benchmark's peak memory is the
/// scheduler's, not the generator's.
#[derive(Clone)]
pub struct Pods {
    count: usize,
    make: Arc<dyn Fn(usize) -> Pod + Send + Sync>,
}

impl Pods {
    /// `count` pods, the i-th made by `make(i)`.
    pub fn new(count: usize, make: impl Fn(usize) -> Pod + Send + Sync + 'static) -> Self {
        Self {
            count,
            make: Arc::new(make),
        }
    }

    /// How many pods.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Makes each pod in turn.
    pub fn iter(&self) -> impl Iterator<Item = Pod> + '_ {
        (0..self.count).map(|i| (self.make)(i))
    }
}

impl Default for Pods {
    fn default() -> Self {
        Self::new(0, |_| Pod::default())
    }
}

impl std::fmt::Debug for Pods {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pods({})", self.count)
    }
}

/// One benchmark workload: a cluster, pods to place first, and the pods measured.
#[derive(Clone, Debug, Default)]
pub struct PerfWorkload {
    /// The workload's name, as `topospread bench` takes it.
    pub name: String,
    /// The nodes.
    pub nodes: Vec<Node>,
    /// Services (for the selector default spreading derives).
    pub services: Vec<Service>,
    /// Pods scheduled before measuring starts.
    pub init_pods: Pods,
    /// Pods whose scheduling is measured.
    pub measured_pods: Pods,
}

/// The workload names `topospread bench` accepts.
pub const WORKLOADS: &[&str] = &[
    "topology-spreading",
    "preferred-topology-spreading",
    "default-topology-spreading",
    "node-inclusion-policy",
    "topology-spreading-500nodes",
    "preferred-topology-spreading-500nodes",
    "default-topology-spreading-500nodes",
    "node-inclusion-policy-500nodes",
    "unschedulable",
    "preemption-unhelpful",
    "unschedulable-500nodes",
    "preemption-unhelpful-500nodes",
];

/// scheduler_perf's `node-default.yaml`: cpu 4, memory 32Gi, 110 pods.
fn default_node(i: usize) -> NodeBuilder {
    let name = format!("node-{i}");
    NodeBuilder::new(&name)
        .label(HOSTNAME, &name)
        .allocatable("cpu", "4")
        .allocatable("memory", "32Gi")
        .allocatable("pods", "110")
}

fn zoned_nodes(n: usize) -> Vec<Node> {
    (0..n)
        .map(|i| default_node(i).label(ZONE, ZONES[i % ZONES.len()]).build())
        .collect()
}

/// scheduler_perf's `pod-default.yaml`: 100m cpu, 500Mi memory.
fn default_pod(name: &str) -> PodBuilder {
    PodBuilder::new(name)
        .request("cpu", "100m")
        .request("memory", "500Mi")
}

fn init_pods(n: usize) -> Pods {
    Pods::new(n, |i| default_pod(&format!("init-{i}")).build())
}

fn spreading(name: &str, nodes: usize, init: usize, measured: usize, when: &str) -> PerfWorkload {
    let when = when.to_string();
    PerfWorkload {
        name: name.to_string(),
        nodes: zoned_nodes(nodes),
        services: Vec::new(),
        init_pods: init_pods(init),
        measured_pods: Pods::new(measured, move |i| {
            default_pod(&format!("spread-{i}"))
                .label("color", "blue")
                .spread(5, ZONE, &when, &[("color", "blue")])
                .build()
        }),
    }
}

fn default_spreading(name: &str, nodes: usize, init: usize, measured: usize) -> PerfWorkload {
    let service = Service {
        metadata: ObjectMeta {
            name: Some("scheduler-perf".to_string()),
            namespace: Some("default".to_string()),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            selector: Some([("app".to_string(), "scheduler-perf".to_string())].into()),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    };
    PerfWorkload {
        name: name.to_string(),
        nodes: zoned_nodes(nodes),
        services: vec![service],
        init_pods: init_pods(init),
        measured_pods: Pods::new(measured, |i| {
            PodBuilder::new(&format!("default-{i}"))
                .label("app", "scheduler-perf")
                .build()
        }),
    }
}

fn node_inclusion(name: &str, nodes: usize, tainted: usize, measured: usize) -> PerfWorkload {
    let mut all: Vec<Node> = (0..nodes).map(|i| default_node(i).build()).collect();
    all.extend(
        (nodes..nodes + tainted).map(|i| default_node(i).taint("foo", "", "NoSchedule").build()),
    );
    PerfWorkload {
        name: name.to_string(),
        nodes: all,
        services: Vec::new(),
        init_pods: Pods::default(),
        measured_pods: Pods::new(measured, |i| {
            PodBuilder::new(&format!("inclusion-{i}"))
                .label("foo", "bar")
                .spread(1, HOSTNAME, "DoNotSchedule", &[("foo", "bar")])
                .inclusion_policies("Honor", "Honor")
                .build()
        }),
    }
}

/// Generates a workload by name; `None` for a name not in [`WORKLOADS`]. Besides
/// scheduler_perf's workloads, `unschedulable` (3,000 replicas that fit nowhere on
/// 5,000 nodes) and `preemption-unhelpful` (3,000 high-priority replicas on 5,000 full
/// nodes, where evicting every lower-priority pod still leaves too little room) measure
/// what failing pods cost. Their init pods are bound already (`spec.nodeName`).
pub fn workload(name: &str) -> Option<PerfWorkload> {
    Some(match name {
        "topology-spreading" => spreading(name, 5000, 5000, 5000, "DoNotSchedule"),
        "preferred-topology-spreading" => spreading(name, 5000, 5000, 5000, "ScheduleAnyway"),
        "default-topology-spreading" => default_spreading(name, 5000, 5000, 50_000),
        "node-inclusion-policy" => node_inclusion(name, 4000, 1000, 4000),
        "topology-spreading-500nodes" => spreading(name, 500, 1000, 1000, "DoNotSchedule"),
        "preferred-topology-spreading-500nodes" => {
            spreading(name, 500, 1000, 1000, "ScheduleAnyway")
        }
        "default-topology-spreading-500nodes" => default_spreading(name, 500, 500, 5000),
        "node-inclusion-policy-500nodes" => node_inclusion(name, 400, 100, 400),
        "unschedulable" => failing::unschedulable(name, 5000, 5000, 3000),
        "preemption-unhelpful" => failing::preemption_unhelpful(name, 5000, 3000),
        "unschedulable-500nodes" => failing::unschedulable(name, 500, 500, 300),
        "preemption-unhelpful-500nodes" => failing::preemption_unhelpful(name, 500, 300),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_workload_generates() {
        for name in WORKLOADS {
            let w = workload(name).expect("named workload exists");
            assert!(!w.nodes.is_empty() && !w.measured_pods.is_empty(), "{name}");
        }
        assert!(workload("nope").is_none());
        let w = workload("node-inclusion-policy").expect("exists");
        assert_eq!((w.nodes.len(), w.measured_pods.len()), (5000, 4000));
        let w = workload("preemption-unhelpful").expect("exists");
        assert_eq!(
            (w.nodes.len(), w.init_pods.len(), w.measured_pods.len()),
            (5000, 20_000, 3000)
        );
        assert!(
            w.init_pods
                .iter()
                .all(|p| p.spec.as_ref().is_some_and(|s| s.node_name.is_some()))
        );
    }
}

/// A workload converted for scheduling: the cluster snapshot and the pods, in order.
#[derive(Debug)]
pub struct Prepared {
    /// The cluster, with the workload's nodes and services.
    pub snapshot: topospread::snapshot::Snapshot,
    /// Pods scheduled before measuring.
    pub init: Vec<topospread::api::Pod>,
    /// Pods whose scheduling is measured.
    pub measured: Vec<topospread::api::Pod>,
}

/// Converts a generated workload once, so measuring covers scheduling alone.
pub fn prepare(w: &PerfWorkload) -> Result<Prepared, topospread::convert::ConvertError> {
    use topospread::convert;
    let mut snapshot = topospread::snapshot::Snapshot::new();
    for n in &w.nodes {
        let node = convert::node(n, snapshot.symbols_mut())?;
        // Generated names are unique, so adding cannot fail; a failure would be a bug here.
        if let Err(e) = snapshot.add_node(node) {
            return Err(convert::ConvertError {
                object: "node".into(),
                field: "metadata.name".into(),
                message: e.to_string(),
            });
        }
    }
    for s in &w.services {
        let mut workloads = std::mem::take(snapshot.workloads_mut());
        topospread_k8s::build::add_workload(
            &topospread_k8s::load::Object::Service(Box::new(s.clone())),
            &mut workloads,
            snapshot.symbols_mut(),
        );
        *snapshot.workloads_mut() = workloads;
    }
    let mut pods = |list: &Pods| -> Result<Vec<topospread::api::Pod>, convert::ConvertError> {
        list.iter()
            .map(|p| convert::pod(&p, snapshot.symbols_mut()))
            .collect()
    };
    let init = pods(&w.init_pods)?;
    let measured = pods(&w.measured_pods)?;
    Ok(Prepared {
        snapshot,
        init,
        measured,
    })
}
