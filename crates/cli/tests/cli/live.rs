//! Reading a live cluster (`--kubeconfig`): the fake API server on loopback stands in for
//! a real one; the binary lists it page by page, as it would a real cluster.

use super::{run, stderr, stdout};
use serde_json::{Value, json};
use std::path::PathBuf;
use topospread_fakeapi::FakeApi;

fn node(name: &str, zone: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": name, "labels": {
               "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
}

fn pod(name: &str, node: Option<&str>, phase: &str) -> Value {
    let mut spec = json!({"containers": [{"name": "c", "image": "nginx"}]});
    if let Some(n) = node {
        spec["nodeName"] = json!(n);
    }
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
           "spec": spec, "status": {"phase": phase}})
}

/// A fake cluster: two zones of two nodes, `web` pods already in zone a (one finished),
/// served on loopback; returns the kubeconfig's path and the server handle.
fn cluster(runtime: &tokio::runtime::Runtime) -> (PathBuf, topospread_fakeapi::Served) {
    cluster_with(runtime, Vec::new())
}

/// [`cluster`] holding `extra` objects as well.
fn cluster_with(
    runtime: &tokio::runtime::Runtime,
    extra: Vec<Value>,
) -> (PathBuf, topospread_fakeapi::Served) {
    let fake = FakeApi::new();
    for o in extra {
        fake.insert(o).unwrap();
    }
    for (n, z) in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")] {
        fake.insert(node(n, z)).unwrap();
    }
    fake.insert(pod("web-old-1", Some("a1"), "Running"))
        .unwrap();
    fake.insert(pod("web-old-2", Some("a2"), "Running"))
        .unwrap();
    // A finished pod keeps its labels but kube-scheduler never counts it.
    fake.insert(pod("web-done", Some("a1"), "Succeeded"))
        .unwrap();
    let served = runtime
        .block_on(fake.serve("127.0.0.1:0".parse().unwrap()))
        .unwrap();
    // One folder per cluster: tests run in parallel in this process.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("live-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("kubeconfig");
    std::fs::write(&path, served.kubeconfig()).unwrap();
    (path, served)
}

const NEW_PODS: &str = "
apiVersion: v1
kind: Pod
metadata: {name: web-new-1, labels: {app: web}}
spec:
  containers: [{name: c, image: nginx}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
     labelSelector: {matchLabels: {app: web}}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-new-2, labels: {app: web}}
spec:
  containers: [{name: c, image: nginx}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
     labelSelector: {matchLabels: {app: web}}}
";

#[test]
fn files_add_to_the_live_cluster() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (kubeconfig, served) = cluster(&runtime);
    let new = kubeconfig.with_file_name("new.yaml");
    std::fs::write(&new, NEW_PODS).unwrap();
    let o = run(&[
        "simulate",
        "--kubeconfig",
        &kubeconfig.display().to_string(),
        "-f",
        &new.display().to_string(),
        "-o",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
    // Two running pods in zone a (the finished one does not count), so with maxSkew 1
    // both new pods must go to zone b.
    let pods = report["pods"].as_array().unwrap();
    for name in ["web-new-1", "web-new-2"] {
        let Some(p) = pods.iter().find(|p| p["pod"] == name) else {
            panic!("{name}: {report}")
        };
        assert_eq!(p["zone"], "b", "{name}: {report}");
    }
    assert!(pods.iter().all(|p| p["pod"] != "web-done"), "{report}");
    runtime.block_on(served.shutdown());
}

/// `topospread show --kubeconfig KUBECONFIG`'s output, asserting it exits 0.
fn show(kubeconfig: &std::path::Path) -> String {
    let o = run(&["show", "--kubeconfig", &kubeconfig.display().to_string()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn show_reads_the_cluster_without_files() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (kubeconfig, served) = cluster(&runtime);
    let out = show(&kubeconfig);
    // The finished pod on a1 is not listed (field selector), so a1 holds one pod.
    assert!(
        out.contains("| a1 (1) | a2 (1) | b1 (0) | b2 (0) |"),
        "{out}"
    );
    assert!(
        out.contains("topology.kubernetes.io/zone: a=2 b=0"),
        "{out}"
    );
    runtime.block_on(served.shutdown());
}

/// A real API server returns every object with its managedFields; the list reads them
/// (checked, not built) and the pods count as any others. One whose managedFields does
/// not decode fails the read with kube's message, as the whole object did before.
#[test]
fn listed_objects_with_managed_fields_count_and_bad_ones_fail_the_read() {
    let managed = json!([{"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubelet",
        "operation": "Update", "subresource": "status", "time": "2026-11-20T08:14:31Z",
        "fieldsV1": {"f:status": {"f:phase": {}}}}]);
    let mut running = pod("web-managed", Some("b1"), "Running");
    running["metadata"]["managedFields"] = managed;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (kubeconfig, served) = cluster_with(&runtime, vec![running]);
    let out = show(&kubeconfig);
    assert!(
        out.contains("topology.kubernetes.io/zone: a=2 b=1"),
        "{out}"
    );
    runtime.block_on(served.shutdown());

    let mut bad = pod("web-bad", Some("b1"), "Running");
    bad["metadata"]["managedFields"] = json!([{"manager": "kubelet", "time": "yesterday"}]);
    let (kubeconfig, served) = cluster_with(&runtime, vec![bad]);
    let o = run(&["show", "--kubeconfig", &kubeconfig.display().to_string()]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("listing Pods"), "{err}");
    runtime.block_on(served.shutdown());
}

#[test]
fn an_unreachable_cluster_is_one_line_and_exit_2() {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("live-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:9'}\n\
         users:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n\
         current-context: x\n",
    )
    .unwrap();
    let o = run(&["show", "--kubeconfig", &path.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("cluster http://127.0.0.1:9"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(stdout(&o).is_empty());

    let garbled = dir.join("garbled");
    std::fs::write(&garbled, "clusters: [oops").unwrap();
    let o = run(&["show", "--kubeconfig", &garbled.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("kubeconfig {}", garbled.display())),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).trim_end().lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn validate_reads_the_cluster_without_files() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (kubeconfig, served) = cluster(&runtime);
    let o = run(&[
        "validate",
        "--kubeconfig",
        &kubeconfig.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("objects checked: 0 errors"), "{out}");
    runtime.block_on(served.shutdown());
}

/// The cluster's storage objects and LimitRanges, listed with the rest: a claim bound to
/// a volume in zone b takes the file's pod there (VolumeBinding, VolumeZone), and the
/// namespace's LimitRange refuses a file's pod above its maximum (LimitRanger), as the
/// cluster's API server would on `kubectl apply`.
#[test]
fn the_clusters_volumes_and_limit_ranges_apply_to_the_files_pods() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let extra = vec![
        json!({"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": "cpu-resource-constraint", "namespace": "default"},
            "spec": {"limits": [{"type": "Container", "max": {"cpu": "500m"}, "min": {"cpu": "100m"}}]}}),
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "ebs-sc"}, "provisioner": "ebs.csi.aws.com",
            "volumeBindingMode": "WaitForFirstConsumer"}),
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-b"},
            "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                "storageClassName": "ebs-sc",
                "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-b"},
                "claimRef": {"namespace": "default", "name": "data"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]}]}}},
            "status": {"phase": "Bound"}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "default",
                "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "ebs-sc",
                "volumeName": "pv-b", "resources": {"requests": {"storage": "5Gi"}}},
            "status": {"phase": "Bound"}}),
    ];
    let (kubeconfig, served) = cluster_with(&runtime, extra);
    let new = kubeconfig.with_file_name("claims.yaml");
    std::fs::write(
        &new,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: db}\nspec:\n  containers: [{name: c, image: postgres, resources: {limits: {cpu: 200m}}}]\n  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  containers: [{name: c, image: nginx, resources: {limits: {cpu: '1'}}}]\n",
    )
    .unwrap();
    let o = run(&[
        "simulate",
        "--kubeconfig",
        &kubeconfig.display().to_string(),
        "-f",
        &new.display().to_string(),
        "-o",
        "json",
    ]);
    let report: Value = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}{}", stdout(&o), stderr(&o));
    });
    assert_eq!(o.status.code(), Some(1), "{report}");
    let pods = report["pods"].as_array().unwrap();
    let Some(db) = pods.iter().find(|p| p["pod"] == "db") else {
        panic!("{report}")
    };
    // Zone a holds the `web` pods; the claim's volume is in zone b: the pod goes there.
    assert_eq!(db["zone"], "b", "{report}");
    let refused = report["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{report}");
    assert_eq!(refused[0]["pod"], "big");
    assert_eq!(
        refused[0]["message"],
        "pods \"big\" is forbidden: maximum cpu usage per Container is 500m, but limit is 1"
    );
    runtime.block_on(served.shutdown());
}

/// A cluster whose API server reports `1.<minor>`: zone a (room) holds two running pods,
/// zone b has no room; served on loopback. Returns the kubeconfig, the server and the
/// fake's handle (for its request log).
fn release_cluster(
    runtime: &tokio::runtime::Runtime,
    minor: u32,
) -> (PathBuf, topospread_fakeapi::Served, FakeApi) {
    let fake = FakeApi::builder().kubernetes_minor(minor).build();
    for (name, zone, cpu) in [("a1", "a", "8"), ("b1", "b", "100m")] {
        fake.insert(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}))
            .unwrap();
    }
    for i in 0..2 {
        let mut p = pod(&format!("other-{i}"), Some("a1"), "Running");
        p["metadata"]["labels"] = json!({"app": "other"});
        fake.insert(p).unwrap();
    }
    let served = runtime
        .block_on(fake.serve("127.0.0.1:0".parse().unwrap()))
        .unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("release-{}-{minor}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("kubeconfig");
    std::fs::write(&path, served.kubeconfig()).unwrap();
    std::fs::write(dir.join("pod.yaml"), EMPTY_SELECTOR_POD).unwrap();
    (path, served, fake)
}

/// A pod spread over zones by `labelSelector: {}`: on 1.27 to 1.37 it counts no pod
/// (kubernetes PR 116607), from 1.38 every pod of the namespace (PR 141340).
const EMPTY_SELECTOR_POD: &str = "
apiVersion: v1
kind: Pod
metadata: {name: empty-selector, labels: {app: web}}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: '1'}}}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
     labelSelector: {}}
";

/// `simulate --kubeconfig ... -o json`: the new pod's node (`None`: pending) and stderr.
fn simulate_empty_selector(
    kubeconfig: &std::path::Path,
    extra: &[&str],
) -> (Option<String>, String) {
    let pod = kubeconfig.with_file_name("pod.yaml");
    let mut args = vec![
        "simulate",
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "-f",
        pod.to_str().unwrap(),
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    let Ok(report) = serde_json::from_str::<Value>(&stdout(&o)) else {
        panic!("not JSON: {} {}", stdout(&o), stderr(&o))
    };
    let node = report["pods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pod"] == "empty-selector")
        .and_then(|p| p["node"].as_str().map(str::to_string));
    (node, stderr(&o))
}

#[test]
fn live_commands_behave_as_the_cluster_release() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (kubeconfig, served, _) = release_cluster(&runtime, 32);
    let (node, err) = simulate_empty_selector(&kubeconfig, &[]);
    assert_eq!(node.as_deref(), Some("a1"), "{err}");
    assert!(
        err.contains(
            "note: behaving as Kubernetes 1.32, the API server's release (v1.32.0-topospread-fakeapi)"
        ),
        "{err}"
    );
    // --kubernetes-version overrides the cluster: 1.38 counts the two running pods.
    let (node, err) = simulate_empty_selector(&kubeconfig, &["--kubernetes-version", "1.38"]);
    assert_eq!(node, None, "{err}");
    assert!(!err.contains("behaving as"), "{err}");
    runtime.block_on(served.shutdown());
}

#[test]
fn an_unsupported_cluster_release_is_refused_unless_forced() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (kubeconfig, served, fake) = release_cluster(&runtime, 24);
    let k = kubeconfig.display().to_string();
    let o = run(&["show", "--kubeconfig", &k]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("the API server runs Kubernetes v1.24.0-topospread-fakeapi, outside the releases topospread models (1.25 to 1.38)"),
        "{err}"
    );
    assert!(stdout(&o).is_empty());
    let o = run(&[
        "show",
        "--kubeconfig",
        &k,
        "--allow-unsupported-kubernetes-version",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("behaving as Kubernetes 1.25, the supported release nearest"));

    // serve refuses before any watch starts.
    let config = kubeconfig.with_file_name("serve.yaml");
    std::fs::write(
        &config,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n\
         leaderElection: {leaderElect: false}\nprofiles: [{schedulerName: topospread}]\n",
    )
    .unwrap();
    fake.clear_requests();
    let o = run(&[
        "serve",
        "--config",
        config.to_str().unwrap(),
        "--kubeconfig",
        &k,
        "--secure-port",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    let last = err.trim_end().lines().last().unwrap_or("");
    assert!(
        last.starts_with("error: cluster http://")
            && last.contains("--allow-unsupported-kubernetes-version to behave as 1.25"),
        "{err}"
    );
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.verb != "watch" && r.verb != "list"),
        "{:?}",
        fake.requests()
    );
    runtime.block_on(served.shutdown());
}

#[test]
fn every_live_read_names_the_command_in_its_user_agent() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (kubeconfig, served, fake) = release_cluster(&runtime, 36);
    let k = kubeconfig.display().to_string();
    for command in ["show", "simulate", "validate", "rebalance"] {
        fake.clear_requests();
        let o = run(&[command, "--kubeconfig", &k]);
        assert_ne!(o.status.code(), Some(2), "{command}: {}", stderr(&o));
        let expected = format!("topospread/{} ({command})", env!("CARGO_PKG_VERSION"));
        let requests = fake.requests();
        assert!(
            requests.iter().any(|r| r.verb == "list"),
            "{command}: {requests:?}"
        );
        let other: Vec<_> = requests
            .iter()
            .filter(|r| r.user_agent.as_deref() != Some(expected.as_str()))
            .collect();
        assert!(other.is_empty(), "{command}: want {expected}: {other:?}");
    }
    runtime.block_on(served.shutdown());
}

/// Credentials that may not list LimitRanges or PriorityClasses (403), on a server that
/// does not serve RuntimeClasses (404): each is one note naming the kind, the permission
/// and what is not modelled, and the run goes on; a refused list of Pods still ends it.
#[test]
fn refused_optional_lists_are_notes_and_pods_stay_required() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (kubeconfig, served, fake) = release_cluster(&runtime, 32);
    fake.set_faults(
        topospread_fakeapi::Faults::seeded(0)
            .forbid(Some("list"), "limitranges")
            .forbid(Some("list"), "priorityclasses")
            .not_served("runtimeclasses"),
    );
    let (node, err) = simulate_empty_selector(&kubeconfig, &[]);
    assert_eq!(node.as_deref(), Some("a1"), "{err}");
    for note in [
        "LimitRanges not read (`list limitranges` forbidden): the files' pods get no LimitRange defaults or limits",
        "PriorityClasses not read (`list priorityclasses.scheduling.k8s.io` forbidden)",
        "RuntimeClasses not read (`list runtimeclasses.node.k8s.io` not served by this API server)",
    ] {
        assert_eq!(err.matches(note).count(), 1, "{note}: {err}");
    }
    let k = kubeconfig.display().to_string();
    let o = run(&["validate", "--kubeconfig", &k]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`list limitranges` forbidden"),
        "{}",
        stderr(&o)
    );

    fake.set_faults(topospread_fakeapi::Faults::seeded(0).forbid(Some("list"), "pods"));
    let o = run(&["show", "--kubeconfig", &k]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("listing Pods: Error from server (Forbidden): pods is forbidden"),
        "{err}"
    );
    runtime.block_on(served.shutdown());
}
