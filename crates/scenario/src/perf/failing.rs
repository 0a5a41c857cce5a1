//! Workloads of pods that fit nowhere: the replicas of one template failing, one after
//! the other, on a large cluster that does not change between them. They measure what a
//! failed cycle costs (Filter on every node, and DefaultPreemption's search).

use super::{PerfWorkload, Pods, ZONE, default_node, default_pod, zoned_nodes};
use k8s_openapi::api::core::v1::{Node, Pod};

/// A replica of the Deployment `web` (through its ReplicaSet), with a zone constraint.
fn replica(i: usize, cpu: &str, priority: i32) -> Pod {
    let mut pod = default_pod(&format!("web-7d4b9c8f6-{i:05}"))
        .label("app", "web")
        .request("cpu", cpu)
        .spread(1, ZONE, "DoNotSchedule", &[("app", "web")])
        .owner("apps/v1", "ReplicaSet", "web-7d4b9c8f6")
        .build();
    if let Some(spec) = pod.spec.as_mut() {
        spec.priority = Some(priority);
    }
    pod
}

/// `unschedulable`: `measured` replicas asking for more cpu than any node has, on
/// `nodes` nodes already holding `init` pods. Each is Unschedulable everywhere
/// (`Insufficient cpu`), and preemption finds no lower-priority pod to evict.
pub(super) fn unschedulable(
    name: &str,
    nodes: usize,
    init: usize,
    measured: usize,
) -> PerfWorkload {
    PerfWorkload {
        name: name.to_string(),
        nodes: zoned_nodes(nodes),
        services: Vec::new(),
        init_pods: super::init_pods(init),
        measured_pods: Pods::new(measured, |i| replica(i, "8", 0)),
    }
}

/// 4-cpu nodes, each with three 1-cpu pods of priority 2000 (system daemons) and one
/// 500m pod of priority 0 (a batch job), bound already.
fn full_nodes(nodes: usize) -> (Vec<Node>, Pods) {
    let all: Vec<Node> = (0..nodes)
        .map(|i| {
            default_node(i)
                .label(ZONE, super::ZONES[i % super::ZONES.len()])
                .build()
        })
        .collect();
    let pods = Pods::new(nodes * 4, |i| {
        let (n, j) = (i / 4, i % 4);
        let (cpu, priority) = if j < 3 { ("1", 2000) } else { ("500m", 0) };
        let mut pod = default_pod(&format!("filler-{n}-{j}"))
            .request("cpu", cpu)
            .node(&format!("node-{n}"))
            .build();
        if let Some(spec) = pod.spec.as_mut() {
            spec.priority = Some(priority);
        }
        pod
    });
    (all, pods)
}

/// `preemption-unhelpful`: `measured` replicas of priority 1000 asking for 1500m cpu, on
/// `nodes` 4-cpu nodes with 500m free. Each node could evict its priority-0 pod, so
/// DefaultPreemption simulates that on every node, and even then 1 cpu is too little.
pub(super) fn preemption_unhelpful(name: &str, nodes: usize, measured: usize) -> PerfWorkload {
    let (nodes, fillers) = full_nodes(nodes);
    PerfWorkload {
        name: name.to_string(),
        nodes,
        services: Vec::new(),
        init_pods: fillers,
        measured_pods: Pods::new(measured, |i| replica(i, "1500m", 1000)),
    }
}
