//! The capacity planner at scale: 5,000 nodes over three zones, nearly full, and 10,000
//! pending pods of 20 workloads, each with a zone and a hostname DoNotSchedule
//! constraint; one template. Prints the wall time of `plan`, the nodes it adds, the
//! simulations it ran, and the binpacking estimate beside it.
//!
//! `cargo bench -p topospread-planning --bench capacity [-- NODES PODS WORKLOADS]`

use std::time::Instant;
use topospread::builders::{NodeBuilder, PodBuilder};
use topospread::{Features, SchedulerConfig, Snapshot};
use topospread_planning::capacity::{CapacityRequest, NodeTemplate, plan};

const ZONES: [&str; 3] = ["us-east-1a", "us-east-1b", "us-east-1c"];
const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let nodes = args.first().copied().unwrap_or(5_000);
    let pods = args.get(1).copied().unwrap_or(10_000);
    let workloads = args.get(2).copied().unwrap_or(20);
    let start = Instant::now();
    let mut s = Snapshot::new();
    for i in 0..nodes {
        let name = format!("node-{i}");
        let n = NodeBuilder::new(&name)
            .label(HOST, &name)
            .label(ZONE, ZONES[i % 3])
            .allocatable("cpu", "8")
            .allocatable("memory", "32Gi")
            .allocatable("pods", "110")
            .build();
        let n = topospread::convert::node(&n, s.symbols_mut()).expect("node");
        s.add_node(n).expect("adds");
        // Nearly full: 7.9 of 8 cpu used by a batch pod.
        let p = PodBuilder::new(&format!("batch-{i}"))
            .namespace("default")
            .label("app", "batch")
            .request("cpu", "7900m")
            .node(&name)
            .build();
        let p = topospread::convert::pod(&p, s.symbols_mut()).expect("pod");
        s.add_pod(p).expect("adds");
    }
    for j in 0..pods {
        let app = format!("app-{}", j % workloads);
        let p = PodBuilder::new(&format!("{app}-{j}"))
            .namespace("default")
            .label("app", &app)
            .request("cpu", "250m")
            .request("memory", "512Mi")
            .owner("apps/v1", "ReplicaSet", &app)
            .spread(1, ZONE, "DoNotSchedule", &[("app", &app)])
            .spread(1, HOST, "DoNotSchedule", &[("app", &app)])
            .build();
        let p = topospread::convert::pod(&p, s.symbols_mut()).expect("pod");
        s.add_pod(p).expect("adds");
    }
    let template: k8s_openapi::api::core::v1::Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "m5-2xlarge", "annotations": {"topospread.io/price": "0.384"}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}
    }))
    .expect("template");
    let template = NodeTemplate::from_node(&template, &mut s).expect("template");
    eprintln!(
        "built {nodes} nodes, {pods} pending pods of {workloads} workloads in {:.2} s",
        start.elapsed().as_secs_f64()
    );
    let config = SchedulerConfig::default();
    let request = CapacityRequest::new(&s, &config, Features::default(), vec![template]);
    let start = Instant::now();
    let answer = plan(&request).expect("plans");
    let took = start.elapsed();
    let greedy = answer.greedy.first();
    println!(
        "capacity: {nodes} nodes, {pods} pending pods, {workloads} workloads: {:.2} s, {} simulations; adds {} nodes ({}), {} pending after, lower bound {}; binpacking estimate {} nodes, {} pending after",
        took.as_secs_f64(),
        answer.simulations,
        answer.total_nodes(),
        answer
            .additions
            .iter()
            .map(|a| format!("{}x{}", a.count, a.zone.as_deref().unwrap_or("-")))
            .collect::<Vec<_>>()
            .join(" "),
        answer.pending_after.len(),
        answer.lower_bound,
        greedy.map_or(0, |g| g.nodes),
        greedy.map_or(0, |g| g.pending_after),
    );
}
