//! The converter against the thorough reader (serde-saphyr's value tree, typed as the
//! loader types a piece the converter leaves) on real text: every piece of every YAML fixture,
//! of the dump shapes the streaming loader's tests read, of those reprinted in block
//! style, and of a list as kubectl prints it, typed as every kind the loader types
//! straight from text.

use super::tests::converted;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A node and a pod as `kubectl get -o yaml` prints them (Go's yaml.Marshal).
const KUBECTL: &str = r#"apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    annotations:
      csi.volume.kubernetes.io/nodeid: '{"ebs.csi.aws.com":"i-0abc"}'
      node.alpha.kubernetes.io/ttl: "0"
    creationTimestamp: "2026-11-01T10:00:00Z"
    labels:
      kubernetes.io/hostname: ip-10-0-0-1.eu-west-1.compute.internal
      topology.kubernetes.io/zone: eu-west-1a
    managedFields:
    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:status:
          f:conditions:
            k:{"type":"Ready"}:
              .: {}
              f:lastHeartbeatTime: {}
      manager: kubelet
      operation: Update
      subresource: status
      time: "2026-11-20T08:14:31Z"
    name: ip-10-0-0-1.eu-west-1.compute.internal
    resourceVersion: "1000000"
  spec:
    podCIDR: 100.64.0.0/24
    providerID: aws:///eu-west-1a/i-0abc
    taints:
    - effect: NoSchedule
      key: dedicated
      value: gpu
  status:
    addresses:
    - address: 10.0.0.1
      type: InternalIP
    allocatable:
      cpu: 7910m
      ephemeral-storage: "95491281146"
      memory: 31482748Ki
      pods: "58"
    conditions:
    - lastHeartbeatTime: "2026-11-20T08:14:31Z"
      message: kubelet is posting ready status
      reason: KubeletReady
      status: "True"
      type: Ready
    daemonEndpoints:
      kubeletEndpoint:
        Port: 10250
    images:
    - names:
      - registry.k8s.io/pause:3.10
      sizeBytes: 320368
    nodeInfo:
      architecture: amd64
      kubeletVersion: v1.35.0
- apiVersion: v1
  kind: Pod
  metadata:
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: |
        {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"}}
      note: |-
        two
          lines
    labels:
      app: web
    name: web
    namespace: default
    ownerReferences:
    - apiVersion: apps/v1
      blockOwnerDeletion: true
      controller: true
      kind: ReplicaSet
      name: web-7d9f8b6c5
      uid: 5f0c1e7a-0000-4000-8000-000000000001
  spec:
    containers:
    - args:
      - --port=8080
      - -v
      command:
      - /bin/sh
      - -c
      - 'echo "it''s up" # not a comment'
      image: registry.example.com/web:1.27.3
      name: app
      ports:
      - containerPort: 8080
        name: http
        protocol: TCP
      readinessProbe:
        httpGet:
          path: /healthz
          port: http
      resources:
        requests:
          cpu: 100m
          memory: 256Mi
    dnsPolicy: ClusterFirst
    nodeName: ip-10-0-0-1.eu-west-1.compute.internal
    priority: 0
    securityContext: {}
    terminationGracePeriodSeconds: 30
    tolerations:
    - effect: NoExecute
      key: node.kubernetes.io/not-ready
      operator: Exists
      tolerationSeconds: 300
    topologySpreadConstraints:
    - labelSelector:
        matchLabels:
          app: web
      maxSkew: 1
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: DoNotSchedule
  status:
    conditions:
    - lastProbeTime: null
      lastTransitionTime: "2026-11-19T12:00:09Z"
      status: "True"
      type: Ready
    hostIP: 10.0.0.1
    phase: Running
kind: List
metadata:
  resourceVersion: ""
"#;

#[test]
fn kubectl_items_convert_and_type_as_the_tree_types_them() {
    let items: Vec<String> = pieces(KUBECTL)
        .into_iter()
        .filter(|p| p.starts_with("  apiVersion: v1\n  kind: "))
        .collect();
    assert_eq!(items.len(), 2, "{items:#?}");
    for item in &items {
        assert!(same_objects(item), "not converted: {item}");
    }
    let node = converted(&items[0]).expect("converts");
    assert_eq!(
        node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"],
        10250
    );
    let pod = converted(&items[1]).expect("converts");
    assert_eq!(
        pod["spec"]["containers"][0]["ports"][0]["containerPort"],
        8080
    );
    assert_eq!(
        pod["spec"]["containers"][0]["command"][2],
        "echo \"it's up\" # not a comment"
    );
    assert_eq!(pod["metadata"]["annotations"]["note"], "two\n  lines");
    let (yaml, json) = pod_both_ways(&items[1]);
    assert!(
        yaml.is_some() && json.is_some_and(|j| j.is_some()),
        "both type it"
    );
}

/// The fixtures' folders, walked for YAML files.
fn yaml_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, files);
            } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                files.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in [
        "crates/cli/tests/fixtures",
        "tests/conformance",
        "crates/k8s/tests/fixtures",
    ] {
        walk(&root.join(dir), &mut files);
    }
    files
}

/// Every piece a YAML text holds that the loader might type: each document, and each
/// block-sequence entry at any depth (its dash blanked, its more indented lines with it,
/// as the streaming loader cuts a list's items).
fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut doc = String::new();
    for line in text.split_inclusive('\n') {
        let marker = |m: &str| {
            line.starts_with(m) && line.as_bytes().get(3).is_none_or(u8::is_ascii_whitespace)
        };
        if marker("---") || marker("...") {
            out.push(std::mem::take(&mut doc));
        } else {
            doc.push_str(line);
        }
    }
    out.push(doc);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = &line[indent..];
        if !(body.starts_with("- ") || body.trim_end() == "-") {
            continue;
        }
        let mut piece = format!("{} {}", &line[..indent], &body[1..]);
        for next in &lines[i + 1..] {
            let t = next.trim_start_matches(' ');
            let blank = t.trim().is_empty() || t.starts_with('#');
            if !blank && next.len() - t.len() <= indent {
                break;
            }
            piece.push_str(next);
        }
        out.push(piece);
    }
    out
}

/// The kinds the loader types straight from text.
const KINDS: [&str; 17] = [
    "Node",
    "Pod",
    "Service",
    "ReplicaSet",
    "ReplicationController",
    "StatefulSet",
    "Deployment",
    "DaemonSet",
    "Job",
    "CronJob",
    "PriorityClass",
    "PodDisruptionBudget",
    "Namespace",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
];

/// The piece typed as every kind both ways: wherever the JSON route types it, the tree route
/// types it to the same object. Returns whether the converter took the piece.
fn same_objects(piece: &str) -> bool {
    if converted(piece).is_none() {
        return false;
    }
    let routes = super::super::stream::Routes::read(piece);
    for kind in KINDS {
        let Some(Some(json)) = routes.json(kind) else {
            continue;
        };
        let Some(tree) = routes.tree(kind) else {
            panic!("{kind} types through JSON only: {piece:?}")
        };
        assert_eq!(
            object_value(&json),
            object_value(&tree),
            "{kind}: {piece:?}"
        );
    }
    true
}

/// The text typed as a Pod by the tree route and by the JSON route.
fn pod_both_ways(
    text: &str,
) -> (
    Option<super::super::Object>,
    Option<Option<super::super::Object>>,
) {
    let routes = super::super::stream::Routes::read(text);
    (routes.tree("Pod"), routes.json("Pod"))
}

fn object_value(o: &super::super::Object) -> Value {
    use super::super::Object as O;
    let v = match o {
        O::Node(x) => serde_json::to_value(x),
        O::Pod(x) => serde_json::to_value(x),
        O::Service(x) => serde_json::to_value(x),
        O::ReplicaSet(x) => serde_json::to_value(x),
        O::ReplicationController(x) => serde_json::to_value(x),
        O::StatefulSet(x) => serde_json::to_value(x),
        O::Deployment(x) => serde_json::to_value(x),
        O::DaemonSet(x) => serde_json::to_value(x),
        O::Job(x) => serde_json::to_value(x),
        O::CronJob(x) => serde_json::to_value(x),
        O::PriorityClass(x) => serde_json::to_value(x),
        O::PodDisruptionBudget(x) => serde_json::to_value(x),
        O::Namespace(x) => serde_json::to_value(x),
        O::PersistentVolumeClaim(x) => serde_json::to_value(x),
        O::PersistentVolume(x) => serde_json::to_value(x),
        O::StorageClass(x) => serde_json::to_value(x),
        O::CsiNode(x) => serde_json::to_value(x),
        O::LimitRange(x) => serde_json::to_value(x),
        O::RuntimeClass(x) => serde_json::to_value(x),
        O::ResourceQuota(x) => serde_json::to_value(x),
        O::Unserved(x) => serde_json::to_value(&x.metadata),
        O::SchedulerConfiguration(x) => Ok(x.clone()),
        O::CompactPod(p) => panic!("pod {} read compact; these tests read whole", p.name),
    };
    v.expect("serializes")
}

/// The texts of the fixtures and dump shapes, each also as serde-saphyr writes its
/// documents back in block style.
fn corpus() -> Vec<String> {
    let mut texts: Vec<String> = yaml_files()
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("fixture reads"))
        .collect();
    texts.extend(super::super::stream::tests::dump_shapes());
    let mut reprinted = Vec::new();
    for t in &texts {
        let docs: Vec<Value> = if t.trim_start().starts_with(['{', '[']) {
            serde_json::Deserializer::from_str(t)
                .into_iter()
                .map_while(Result::ok)
                .collect()
        } else {
            serde_saphyr::from_multiple_with_options(t, super::super::yaml_options())
                .unwrap_or_default()
        };
        for d in docs.iter().filter(|d| !d.is_null()) {
            if let Ok(y) = serde_saphyr::to_string(d) {
                reprinted.push(y);
            }
        }
    }
    texts.extend(reprinted);
    texts
}

/// The corpus's distinct pieces (a piece repeated in fixtures is checked once), every
/// `PARTS`th from `part`: the corpus is split over [`PARTS`] tests so the test threads
/// share it. Returns how many of them the converter took, and how many there were.
fn corpus_part(part: usize) -> (usize, usize) {
    let mut seen = std::collections::HashSet::new();
    let mut distinct = Vec::new();
    for text in corpus() {
        for piece in pieces(&text) {
            if seen.insert(piece.clone()) {
                distinct.push(piece);
            }
        }
    }
    let mine: Vec<_> = distinct.into_iter().skip(part).step_by(PARTS).collect();
    let taken = mine.iter().filter(|p| same_objects(p)).count();
    (taken, mine.len())
}

/// How many tests share the corpus.
const PARTS: usize = 4;

/// The converter must take most of what a block-style printer writes: at least half of
/// each part's distinct pieces (4,178 of the corpus's 7,305 on 2026-11-26).
fn check_corpus_part(part: usize) {
    let (taken, all) = corpus_part(part);
    assert!(taken * 2 > all, "converted {taken} of {all} pieces");
}

#[test]
fn fixtures_and_dump_shapes_type_as_the_tree_types_them_0() {
    check_corpus_part(0);
}

#[test]
fn fixtures_and_dump_shapes_type_as_the_tree_types_them_1() {
    check_corpus_part(1);
}

#[test]
fn fixtures_and_dump_shapes_type_as_the_tree_types_them_2() {
    check_corpus_part(2);
}

#[test]
fn fixtures_and_dump_shapes_type_as_the_tree_types_them_3() {
    check_corpus_part(3);
}

/// Where a plain number or boolean stands in a string field, the converted JSON does not
/// type, so the loader types such an item through the value tree, which reads the
/// scalar's text as Kubernetes' decoder does; a quoted number in an integer field types
/// neither way (the API server refuses it too).
#[test]
fn what_only_the_tree_types_is_left_to_it() {
    let pods = [
        ("  kind: Pod\n  metadata:\n    name: 8080\n", json!("8080")),
        ("  kind: Pod\n  metadata:\n    name: true\n", json!("true")),
    ];
    for (text, name) in pods {
        let (tree, json) = pod_both_ways(text);
        assert!(matches!(json, Some(None)), "the JSON route fails: {text:?}");
        let tree = object_value(&tree.expect("the tree types it"));
        assert_eq!(tree["metadata"]["name"], name);
    }
    let text = "  kind: Pod\n  spec:\n    containers:\n    - name: c\n      ports:\n      - containerPort: \"8080\"\n";
    let (tree, json) = pod_both_ways(text);
    assert!(matches!(json, Some(None)), "the JSON route fails");
    assert!(tree.is_none(), "the tree route fails");
}
