//! Bound pods read in compact form build the same cluster as pods read whole: the same
//! pods on the same nodes with the same priorities, requests and labels, the same
//! refusals (API-server validation, Priority admission), the same finished pods and the
//! same workload expansion, over every CLI fixture and a dump-shaped cluster.

use std::path::{Path, PathBuf};
use topospread::api::resources::RequestOptions;
use topospread::snapshot::Snapshot;
use topospread_k8s::build::{self, BuiltSnapshot};
use topospread_k8s::load::{
    Compactor, Loaded, Object, parse_manifests_reader, parse_manifests_reader_compact,
};
use topospread_k8s::validation::{ApiServerFeatures, validate_cluster, validate_objects_with};
use topospread_k8s::workloads::expand;

/// Everything compared: pods with what the scheduler reads of them, in a form free of
/// symbol numbering.
fn pods(snapshot: &Snapshot) -> Vec<String> {
    let symbols = snapshot.symbols();
    let mut out: Vec<String> = snapshot
        .pods()
        .map(|(id, p)| {
            let mut labels: Vec<String> = p
                .labels
                .iter()
                .map(|(k, v)| format!("{}={}", symbols.resolve(k), symbols.resolve(v)))
                .collect();
            labels.sort();
            format!(
                "{}/{} node={:?} prio={} never={} term={} labels={labels:?} req={:?} ports={:?} tol={} tsc={} images={:?} ctrl={:?}",
                symbols.resolve(p.namespace),
                p.name,
                snapshot.pod_node(id).map(|n| snapshot.node(n).node.name.to_string()),
                p.priority,
                p.preemption_never,
                p.terminating,
                p.requests,
                p.host_ports,
                p.tolerations.len(),
                p.spread_constraints.len(),
                p.images,
                p.controller,
            )
        })
        .collect();
    out.sort();
    out
}

fn read(text: &str, file: &str, compact: bool) -> (Vec<Loaded>, Compactor) {
    if compact {
        let (m, c) = parse_manifests_reader_compact(
            text.as_bytes(),
            file,
            Compactor::new(RequestOptions::default(), ApiServerFeatures::default()),
        )
        .expect("the fixture loads compacted (the error names the file)");
        (m.objects, c)
    } else {
        let m = parse_manifests_reader(text.as_bytes(), file)
            .expect("the fixture loads (the error names the file)");
        (m.objects, Compactor::default())
    }
}

/// What a command sees of the files: refusals, the built snapshot (or its error), the
/// expansion.
fn outcome(text: &str, file: &str, compact: bool) -> Vec<String> {
    let (objects, compactor) = read(text, file, compact);
    if compact {
        assert!(
            !objects.iter().any(|l| matches!(&l.object, Object::Pod(p)
                if p.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty())
                    && p.metadata.name.as_deref().is_some_and(|n| !n.is_empty()))),
            "{file}: a bound pod was left whole"
        );
    }
    let mut out: Vec<String> = validate_objects_with(&objects, &ApiServerFeatures::default())
        .iter()
        .chain(&validate_cluster(&objects))
        .map(|r| format!("refused: {r}"))
        .collect();
    let e = expand(&objects, 0);
    out.extend(
        e.pods
            .iter()
            .map(|p| format!("expanded: {:?}", p.pod.metadata.name)),
    );
    out.extend(e.removed.iter().map(|r| format!("removed: {r:?}")));
    out.extend(e.errors.iter().map(|r| format!("error: {r}")));
    match build::build_with_symbols(
        objects.iter().chain(&e.replica_sets),
        RequestOptions::default(),
        compactor.into_symbols(),
    ) {
        Ok(BuiltSnapshot {
            snapshot,
            refused,
            finished,
            ..
        }) => {
            out.extend(pods(&snapshot));
            out.extend(refused.iter().map(|r| format!("admission: {r:?}")));
            out.extend(finished.iter().map(|f| format!("finished: {f}")));
        }
        Err(e) => out.push(format!("build error: {e}")),
    }
    out
}

fn same(text: &str, file: &str) {
    let whole = outcome(text, file, false);
    let compact = outcome(text, file, true);
    assert_eq!(whole, compact, "{file}");
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, files);
        } else if p
            .extension()
            .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
        {
            files.push(p);
        }
    }
}

/// Every CLI fixture that loads, as (name, text): files that do not (bad-input
/// fixtures) fail the same way either way.
fn loading_fixtures() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fixtures");
    let mut files = Vec::new();
    walk(&root, &mut files);
    assert!(files.len() > 20, "fixtures found: {}", files.len());
    files
        .iter()
        .map(|f| (f.display().to_string(), std::fs::read_to_string(f).unwrap()))
        .filter(|(name, text)| parse_manifests_reader(text.as_bytes(), name).is_ok())
        .collect()
}

#[test]
fn every_cli_fixture_builds_the_same_cluster_compact() {
    let mut compared = 0;
    for (name, text) in loading_fixtures() {
        same(&text, &name);
        compared += 1;
    }
    assert!(compared > 20, "compared {compared}");
}

#[test]
fn a_dump_with_priorities_finished_and_refused_pods_builds_the_same_cluster_compact() {
    let text = r#"
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {topology.kubernetes.io/zone: a, kubernetes.io/hostname: n1}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2, labels: {topology.kubernetes.io/zone: b, kubernetes.io/hostname: n2}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata:
    name: critical
    namespace: kube-system
    managedFields: [{manager: kubelet, operation: Update}]
  spec:
    nodeName: n1
    priorityClassName: system-cluster-critical
    containers: [{name: c, resources: {requests: {cpu: 100m}}, ports: [{containerPort: 53, hostPort: 53}]}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: gold-pod, labels: {app: web}}
  spec: {nodeName: n2, priorityClassName: gold, containers: [{name: c}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: missing-class}
  spec: {nodeName: n2, priorityClassName: nope, containers: [{name: c}]}
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-abc-1
    labels: {app: web, pod-template-hash: abc}
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: u1, controller: true}]
    annotations: {controller.kubernetes.io/pod-deletion-cost: "5"}
  spec:
    nodeName: n1
    containers: [{name: c, image: web:1, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
    topologySpreadConstraints:
    - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
  status:
    phase: Running
    conditions: [{type: Ready, status: "True", lastTransitionTime: "2026-11-19T12:00:09Z"}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-abc-2
    labels: {app: web, pod-template-hash: abc}
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: u1, controller: true}]
  spec: {nodeName: n2, containers: [{name: c, image: web:1}]}
  status: {phase: Pending}
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-abc-evicted
    labels: {app: web, pod-template-hash: abc}
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: u1, controller: true}]
  spec: {nodeName: n2, containers: [{name: c}]}
  status: {phase: Failed, reason: Evicted}
- apiVersion: v1
  kind: Pod
  metadata: {name: pending}
  spec: {containers: [{name: c}]}
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata: {name: web-abc, labels: {app: web}}
  spec:
    replicas: 1
    selector: {matchLabels: {app: web, pod-template-hash: abc}}
    template:
      metadata: {labels: {app: web, pod-template-hash: abc}}
      spec: {containers: [{name: c, image: web:1}]}
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: gold}
  value: 1000
  preemptionPolicy: Never
"#;
    same(text, "dump.yaml");
    let mut json =
        serde_json::to_string(&serde_saphyr::from_str::<serde_json::Value>(text).unwrap()).unwrap();
    json.push('\n');
    same(&json, "dump.json");
    let outcome = outcome(text, "dump.yaml", true);
    assert!(
        outcome
            .iter()
            .any(|l| l.starts_with("default/gold-pod") && l.contains("prio=1000 never=true")),
        "{outcome:#?}"
    );
    assert!(
        outcome
            .iter()
            .any(|l| l.starts_with("admission:") && l.contains("nope"))
    );
    assert!(
        outcome
            .iter()
            .any(|l| l == "finished: default/web-abc-evicted")
    );
    assert!(
        outcome
            .iter()
            .any(|l| l.starts_with("removed:") && l.contains("web-abc-"))
    );
}

#[test]
fn refusals_of_compact_pods_name_the_object_and_field() {
    let text = "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: n1}\n- kind: Pod\n  metadata: {name: p, namespace: ns, labels: {\"a b\": x}}\n  spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: \"-1\"}}}]}\n- kind: Pod\n  metadata: {name: p, namespace: ns}\n  spec: {nodeName: n9, containers: [{name: c}]}\n";
    same(text, "f.yaml");
    let got = outcome(text, "f.yaml", true);
    let refused: Vec<&String> = got.iter().filter(|l| l.starts_with("refused:")).collect();
    assert_eq!(refused.len(), 4, "{refused:#?}");
    assert!(refused[0].contains("f.yaml: pod/p (namespace ns): metadata.labels"));
    assert!(refused[1].contains("spec.containers[0].resources.requests[cpu]"));
    assert!(refused[2].contains("metadata.name: Duplicate value: \"p\""));
    assert!(refused[3].contains("spec.nodeName: Invalid value: \"n9\""));
}

/// Each bound pod of `text` read whole, beside its compact form kept as written: what
/// `-o yaml` writes back and what rebalance's evictors read must be those of the whole
/// pod. Returns how many pods were compared, and how many of them rebalance never evicts.
fn kept_as_written(text: &str, file: &str) -> (usize, usize) {
    use topospread_planning::rebalance::{descheduler_eviction_blocker, eviction_blocker};
    let (whole, _) = read(text, file, false);
    let (compact, _) = parse_manifests_reader_compact(
        text.as_bytes(),
        file,
        Compactor::new(RequestOptions::default(), ApiServerFeatures::default()).keeping_written(),
    )
    .expect("the fixture loads compacted");
    assert_eq!(whole.len(), compact.objects.len(), "{file}");
    let (mut compared, mut blocked) = (0, 0);
    for (w, c) in whole.iter().zip(&compact.objects) {
        let (Object::Pod(w), Object::CompactPod(c)) = (&w.object, &c.object) else {
            continue;
        };
        let written = c.written().expect("kept").expect("reads back");
        assert_eq!(&written, &**w, "{file}: {}", c.name);
        let blockers = c.eviction_blockers.as_deref();
        let topospread = blockers.and_then(|b| b.topospread.clone());
        let descheduler = blockers.and_then(|b| b.descheduler.clone());
        assert_eq!(topospread, eviction_blocker(w), "{file}: {}", c.name);
        assert_eq!(
            descheduler,
            descheduler_eviction_blocker(w),
            "{file}: {}",
            c.name
        );
        compared += 1;
        blocked += usize::from(topospread.is_some());
    }
    (compared, blocked)
}

#[test]
fn compact_pods_kept_as_written_read_back_whole_with_their_eviction_blockers() {
    let text = r#"apiVersion: v1
kind: List
items:
  - {kind: Node, apiVersion: v1, metadata: {name: n1}}
  - apiVersion: v1
    kind: Pod
    metadata:
      name: scratch
      ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}]
    spec:
      nodeName: n1
      containers: [{name: c, resources: {requests: {cpu: 100m}}}]
      volumes: [{name: tmp, emptyDir: {}}]
    status: {phase: Running, conditions: [{type: Ready, status: "True"}]}
  - apiVersion: v1
    kind: Pod
    metadata: {name: bare, annotations: {descheduler.alpha.kubernetes.io/evict: "true"}}
    spec: {nodeName: n1, containers: [{name: c}]}
  - apiVersion: v1
    kind: Pod
    metadata:
      name: static-n1
      namespace: kube-system
      annotations: {kubernetes.io/config.mirror: abc, kubernetes.io/config.source: file}
    spec: {nodeName: n1, priorityClassName: system-node-critical, containers: [{name: c}]}
  - apiVersion: v1
    kind: Pod
    metadata:
      name: agent
      ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: u2, controller: true}]
    spec: {nodeName: n1, containers: [{name: c}]}
  - apiVersion: v1
    kind: Pod
    metadata:
      name: leaving
      deletionTimestamp: "2026-11-19T12:00:09Z"
      ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}]
    spec: {nodeName: n1, containers: [{name: c}]}
"#;
    // Local storage, no controller, a mirror, a DaemonSet's, terminating.
    assert_eq!(kept_as_written(text, "dump.yaml"), (5, 5));
    let compared: usize = loading_fixtures()
        .iter()
        .map(|(name, text)| kept_as_written(text, name).0)
        .sum();
    assert!(compared > 50, "compared {compared} pods");
}
