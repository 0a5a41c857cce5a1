//! The driver's walk on small clusters: admission of objects applied over earlier ones,
//! the world's build, the scheduler with the StatefulSet controller syncing, what-ifs on
//! nodes, and the write-back read again.

use std::collections::BTreeMap;
use topospread::Features;
use topospread::api::Symbols;
use topospread::config::SchedulerConfig;
use topospread_driver::{
    BuildOptions, ClusterDriver, NodeWhatIfs, Placement, Provisioning, SchedulerSetup, World,
    admit_objects, cluster_yaml, world,
};
use topospread_k8s::load::{Loaded, parse_manifests};
use topospread_k8s::validation::ApiServerFeatures;
use topospread_k8s::workloads::{DEFAULT_MAX_PODS, WorkloadFeatures, name_generated};

/// Two nodes in each of zones a, b and c.
const NODES: &str = "
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: a1, labels: {topology.kubernetes.io/zone: a, kubernetes.io/hostname: a1}}, status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}}
- {apiVersion: v1, kind: Node, metadata: {name: a2, labels: {topology.kubernetes.io/zone: a, kubernetes.io/hostname: a2}}, status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}}
- {apiVersion: v1, kind: Node, metadata: {name: b1, labels: {topology.kubernetes.io/zone: b, kubernetes.io/hostname: b1}}, status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}}
- {apiVersion: v1, kind: Node, metadata: {name: b2, labels: {topology.kubernetes.io/zone: b, kubernetes.io/hostname: b2}}, status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}}
- {apiVersion: v1, kind: Node, metadata: {name: c1, labels: {topology.kubernetes.io/zone: c, kubernetes.io/hostname: c1}}, status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}}
- {apiVersion: v1, kind: Node, metadata: {name: c2, labels: {topology.kubernetes.io/zone: c, kubernetes.io/hostname: c2}}, status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}}
";

/// A workload of `replicas` pods labelled `app: NAME`, spread over zones (DoNotSchedule).
fn workload(kind: &str, name: &str, replicas: u32, extra: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: {kind}
metadata: {{name: {name}, namespace: default}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}{extra}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: c, image: 'nginx:1.27', resources: {{requests: {{cpu: 100m}}}}}}]
      topologySpreadConstraints:
      - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: {name}}}}}}}
"
    )
}

fn objects(docs: &[&str]) -> Vec<Loaded> {
    let mut out = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        let m = parse_manifests(d, &format!("doc{i}.yaml")).expect("manifests");
        out.extend(m.objects);
    }
    name_generated(&mut out, 0);
    out
}

fn options() -> BuildOptions<'static> {
    BuildOptions {
        seed: 0,
        max_pods: DEFAULT_MAX_PODS,
        scale: &[],
        workloads: WorkloadFeatures::default(),
        requests: Default::default(),
        provisioning: Provisioning::Off,
    }
}

fn build(objects: &[Loaded]) -> World {
    world::build(objects, &Symbols::default(), options()).expect("world")
}

fn setup() -> SchedulerSetup {
    SchedulerSetup::new(
        "default profile",
        SchedulerConfig::default(),
        Features::default(),
    )
}

/// Bound pods per zone, by pod name prefix.
fn zones(world: &World, prefix: &str) -> BTreeMap<String, usize> {
    let s = &world.snapshot;
    let key = s
        .symbols()
        .get("topology.kubernetes.io/zone")
        .expect("zone key");
    let mut out = BTreeMap::new();
    for (id, p) in s.pods() {
        if !p.name.starts_with(prefix) {
            continue;
        }
        if let Some(n) = s.pod_node(id) {
            let zone = s.node(n).node.labels.get(key).expect("zone label");
            *out.entry(s.symbols().resolve(zone).to_string())
                .or_default() += 1;
        }
    }
    out
}

#[test]
fn an_ordered_statefulset_is_created_ordinal_by_ordinal_and_spread() {
    let sts = workload("StatefulSet", "db", 3, "\n  serviceName: db");
    let world = build(&objects(&[NODES, &sts]));
    // Only ordinal 0 exists before the scheduler runs: the others wait for it.
    assert_eq!(world.queue.len(), 1);
    let mut driver = ClusterDriver::start(world, &setup(), 0).expect("driver");
    let placements = driver.settle(&mut (), 0).expect("settle");
    let names: Vec<String> = placements
        .iter()
        .filter_map(|(id, _)| Some(driver.snapshot().pod(*id)?.name.to_string()))
        .collect();
    assert_eq!(names, ["db-0", "db-1", "db-2"]);
    assert!(
        placements
            .iter()
            .all(|(_, p)| matches!(p, Placement::Scheduled(_)))
    );
    let counts = zones(driver.world(), "db-");
    assert_eq!(counts.values().copied().collect::<Vec<_>>(), [1, 1, 1]);
}

#[test]
fn losing_a_zone_brings_its_pods_back_elsewhere_within_the_skew() {
    let web = workload("Deployment", "web", 6, "");
    let world = build(&objects(&[NODES, &web]));
    let mut driver = ClusterDriver::start(world, &setup(), 0).expect("driver");
    driver.settle(&mut (), 0).expect("first run");
    assert_eq!(
        zones(driver.world(), "web-").values().sum::<usize>(),
        6,
        "every replica bound before the what-if"
    );
    let lose = ["topology.kubernetes.io/zone=c".to_string()];
    let all = objects(&[NODES, &web]);
    let what = NodeWhatIfs {
        lose: &lose,
        ..NodeWhatIfs::default()
    };
    let drained = driver
        .what_if(what, &all)
        .expect("what-if")
        .expect("drained");
    assert_eq!(drained.nodes, ["c1", "c2"]);
    assert_eq!(drained.replaced.len(), 2, "zone c's two replicas replaced");
    driver.schedule(&mut ()).expect("rescheduled");
    // Zone c has no node left, so it is no domain: 3 and 3 in a and b.
    assert_eq!(
        zones(driver.world(), "web-"),
        BTreeMap::from([("a".to_string(), 3), ("b".to_string(), 3)])
    );
}

#[test]
fn a_what_if_naming_what_the_cluster_lacks_is_refused() {
    let world = build(&objects(&[NODES]));
    let mut driver = ClusterDriver::start(world, &setup(), 0).expect("driver");
    let drain = ["nope".to_string()];
    let what = NodeWhatIfs {
        drain: &drain,
        ..NodeWhatIfs::default()
    };
    let e = driver.what_if(what, &[]).expect_err("unknown node");
    assert_eq!(e.to_string(), "--drain nope: node \"nope\" not found");
    let lose = ["zone".to_string()];
    let what = NodeWhatIfs {
        lose: &lose,
        ..NodeWhatIfs::default()
    };
    let e = driver.what_if(what, &[]).expect_err("malformed");
    assert!(
        e.to_string().starts_with("--lose zone: want KEY=VALUE"),
        "{e}"
    );
}

#[test]
fn a_workload_applied_again_keeps_its_replicas_and_its_selector() {
    let first = workload("Deployment", "web", 5, "");
    // The same Deployment without replicas (kept, as kubectl apply keeps it), then one
    // whose selector changed (refused: the field is immutable).
    let again = first.replace("  replicas: 5\n", "");
    let changed = first
        .replace(
            "selector: {matchLabels: {app: web}}",
            "selector: {matchLabels: {app: web, tier: x}}",
        )
        .replace(
            "metadata: {labels: {app: web}}",
            "metadata: {labels: {app: web, tier: x}}",
        );
    let mut all = objects(&[NODES, &first, &again, &changed]);
    let admitted = admit_objects(&mut all, &ApiServerFeatures::default()).expect("admitted");
    assert_eq!(admitted.refused.len(), 1, "{:?}", admitted.refused);
    let refusal = admitted.refused[0].to_string();
    assert!(
        refusal.contains("spec.selector: Invalid value"),
        "{refusal}"
    );
    assert!(refusal.contains("field is immutable"), "{refusal}");
    let world = build(&all);
    assert_eq!(world.queue.len(), 5, "replicas kept from the first apply");
}

#[test]
fn the_written_cluster_reads_back_to_the_same_placements() {
    let web = workload("Deployment", "web", 4, "");
    let all = objects(&[NODES, &web]);
    let mut driver = ClusterDriver::start(build(&all), &setup(), 0).expect("driver");
    driver.settle(&mut (), 0).expect("settle");
    let (world, _) = driver.into_parts();
    let mut out = Vec::new();
    cluster_yaml(&all, &world, None, &[], &mut out).expect("written");
    let text = String::from_utf8(out).expect("utf-8");
    let again = build(&objects(&[&text]));
    assert!(again.queue.is_empty(), "nothing left to schedule");
    let placed = |w: &World| {
        let s = &w.snapshot;
        let mut v: Vec<(String, String)> = s
            .pods()
            .filter_map(|(id, p)| {
                Some((
                    p.name.to_string(),
                    s.node(s.pod_node(id)?).node.name.to_string(),
                ))
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(placed(&again), placed(&world));
    assert_eq!(placed(&world).len(), 4);
}
