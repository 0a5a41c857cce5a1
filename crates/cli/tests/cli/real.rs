//! Real manifests (`fixtures/real/`, `fixtures/real-cases/`, each naming its source) on
//! clusters suited to them, with what the cluster's control plane would make of them:
//! admission's refusals, the controllers' pods, the scheduler's placements and its
//! pending messages word for word.

use super::{fixture, run, stderr, stdout, temp};
use serde_json::Value;

/// `simulate -o json` on `files` (fixture paths or absolute ones): the report and exit code.
fn simulate(files: &[&str], extra: &[&str]) -> (Value, i32) {
    let mut args = vec!["simulate".to_string()];
    for f in files {
        args.push("-f".into());
        args.push(if f.starts_with('/') {
            f.to_string()
        } else {
            fixture(f)
        });
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(["-o".to_string(), "json".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&args);
    let v = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}\n{}", stdout(&o), stderr(&o));
    });
    (v, o.status.code().unwrap_or(-1))
}

/// The simulated pod whose name starts with `prefix` (its node, zone, message).
fn pods<'a>(v: &'a Value, prefix: &str) -> Vec<&'a Value> {
    v["pods"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["pod"].as_str().is_some_and(|n| n.starts_with(prefix)))
        .collect()
}

/// `(pod, node)` of every scheduled pod, `(pod, "")` of a pending one, sorted.
fn nodes_of(v: &Value, prefix: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = pods(v, prefix)
        .iter()
        .map(|p| {
            (
                p["pod"].as_str().unwrap_or("").to_string(),
                p["node"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Nodes in zones `zones` (one each, 4 CPUs, 16Gi), named `node-<zone>`.
fn nodes_in(name: &str, zones: &[&str]) -> String {
    let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for z in zones {
        text.push_str(&format!(
            "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: node-{z}\n    labels: {{kubernetes.io/hostname: node-{z}, kubernetes.io/os: linux, topology.kubernetes.io/zone: {z}}}\n  status:\n    allocatable: {{cpu: '4', memory: 16Gi, pods: '110'}}\n"
        ));
    }
    temp(name, &text)
}

/// Argo CD's HA install on two nodes: redis-ha's StatefulSet and its HAProxy Deployment
/// want three nodes (required pod anti-affinity on `kubernetes.io/hostname`), so the
/// third of each stays Pending, as Argo CD's docs warn. redis-ha-server-2 exists: its
/// StatefulSet (OrderedReady) creates one ordinal at a time, server-2 once servers 0
/// and 1 are bound (Running and Ready), which they are; it is the last, so nothing is
/// held back behind it. argocd-server and the repo server (two replicas, required anti-affinity per
/// host, preferred per zone) take one node, so one zone, each.
#[test]
fn argo_cd_ha_on_two_nodes_leaves_the_third_replicas_pending() {
    let nodes = nodes_in("argo-two-nodes.yaml", &["zone-a", "zone-b"]);
    let (v, code) = simulate(&[&nodes, "real/argo-cd-ha.yaml"], &[]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(
        (v["scheduled"].as_u64(), v["pending"].as_u64()),
        (Some(12), Some(2))
    );
    let message = "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.";
    let redis = nodes_of(&v, "argocd-redis-ha-server-");
    assert_eq!(
        redis.iter().filter(|(_, n)| n.is_empty()).count(),
        1,
        "{redis:?}"
    );
    assert_eq!(redis[2].1, "", "the last ordinal waits: {redis:?}");
    // Created one at a time, each once the one below was bound: none held back.
    let sets: Vec<&Value> = v["workloads"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|w| w["kind"] == "StatefulSet")
        .collect();
    assert!(!sets.is_empty(), "{v}");
    for w in sets {
        assert!(w["not_created"].is_null(), "{w}");
    }
    let pending: Vec<&Value> = v["pods"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["node"].is_null())
        .collect();
    for p in &pending {
        assert_eq!(p["message"], message, "{p}");
    }
    let haproxy = nodes_of(&v, "argocd-redis-ha-haproxy-");
    assert_eq!(
        haproxy.iter().filter(|(_, n)| n.is_empty()).count(),
        1,
        "{haproxy:?}"
    );
    for app in ["argocd-server-", "argocd-repo-server-"] {
        let mut zones: Vec<&str> = pods(&v, app)
            .iter()
            .filter_map(|p| p["zone"].as_str())
            .collect();
        zones.sort();
        assert_eq!(zones, ["zone-a", "zone-b"], "{app}");
    }
    // Three nodes: everything fits, one redis server per node.
    let (v, code) = simulate(&["real-nodes.yaml", "real/argo-cd-ha.yaml"], &[]);
    assert_eq!(code, 0, "{v}");
    let mut redis_nodes: Vec<String> = nodes_of(&v, "argocd-redis-ha-server-")
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    redis_nodes.sort();
    assert_eq!(redis_nodes, ["node-a", "node-b", "node-c"]);
}

/// A kind cluster's own node list: the control-plane node carries the
/// `node-role.kubernetes.io/control-plane:NoSchedule` taint, so of the EBS CSI driver
/// only the node DaemonSet (which tolerates every taint) runs there; both controller
/// replicas go to the one worker, their preferred anti-affinity notwithstanding.
#[test]
fn a_kind_cluster_keeps_its_control_plane_for_what_tolerates_the_taint() {
    let (v, code) = simulate(
        &["real-cases/kind-nodes.yaml", "real/aws-ebs-csi-driver.yaml"],
        &[],
    );
    assert_eq!(code, 0, "{v}");
    let daemons = nodes_of(&v, "ebs-csi-node-");
    let mut on: Vec<&str> = daemons.iter().map(|(_, n)| n.as_str()).collect();
    on.sort();
    assert_eq!(on, ["kind-control-plane", "kind-worker"], "{daemons:?}");
    let controllers = nodes_of(&v, "ebs-csi-controller-");
    assert_eq!(controllers.len(), 2);
    assert!(
        controllers.iter().all(|(_, n)| n == "kind-worker"),
        "{controllers:?}"
    );
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        notes.contains(&"the nodes run Kubernetes 1.26 (status.nodeInfo.kubeletVersion); simulating 1.38: --kubernetes-version 1.26 follows them"),
        "{notes:?}"
    );
    // Notes name the file as it was given: a path ending in the fixture's.
    assert!(
        notes.iter().any(|n| n.ends_with("real/aws-ebs-csi-driver.yaml: csidriver/ebs.csi.aws.com: skipped: kind CSIDriver (storage.k8s.io/v1) read by the scheduler's volume plugins (VolumeBinding reads spec.storageCapacity) but not modelled")),
        "{notes:?}"
    );
}

/// kwok's LimitRange walkthrough, on kwok's example node: the LimitRange gives every
/// container of `default` a default limit of its max, 500m. pod-beyond-limit asks for
/// 700m without a limit, so it gets 500m as its limit and the API server's validation
/// (run after the mutating admission plugins) refuses it with the message the
/// walkthrough shows; pod-within-limit (400m) is created and runs on the node.
#[test]
fn kwoks_limit_range_walkthrough_refuses_the_pod_beyond_the_limit() {
    let (v, code) = simulate(
        &[
            "real-cases/kwok-node.yaml",
            "real-cases/kwok-limit-range.yaml",
        ],
        &[],
    );
    assert_eq!(code, 1, "{v}");
    let refused = v["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{v}");
    assert_eq!(refused[0]["pod"], "pod-beyond-limit");
    assert_eq!(
        refused[0]["message"],
        "Pod \"pod-beyond-limit\" is invalid: spec.containers[0].resources.requests: Invalid value: \"700m\": must be less than or equal to cpu limit of 500m"
    );
    assert_eq!(
        nodes_of(&v, "pod-"),
        [("pod-within-limit".to_string(), "kwok-node-0".to_string())]
    );
}

/// The EBS CSI driver's static provisioning example: a PersistentVolume in us-east-2c
/// (required node affinity on the zone) that the claim names. The PV controller binds
/// them; the pod then goes where the volume can be attached, or nowhere.
#[test]
fn a_static_ebs_volume_takes_its_pod_to_its_zone() {
    let three = nodes_in(
        "ebs-three-zones.yaml",
        &["us-east-2a", "us-east-2b", "us-east-2c"],
    );
    let (v, code) = simulate(
        &[&three, "real-cases/aws-ebs-static-provisioning.yaml"],
        &[],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(pods(&v, "app")[0]["zone"], "us-east-2c", "{v}");
    let two = nodes_in("ebs-two-zones.yaml", &["us-east-2a", "us-east-2b"]);
    let (v, code) = simulate(&[&two, "real-cases/aws-ebs-static-provisioning.yaml"], &[]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(
        pods(&v, "app")[0]["message"],
        "0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node affinity. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
    // Before 1.33 the reason read "had volume node affinity conflict".
    let (v, _) = simulate(
        &[&two, "real-cases/aws-ebs-static-provisioning.yaml"],
        &["--kubernetes-version", "1.32"],
    );
    assert_eq!(
        pods(&v, "app")[0]["message"],
        "0/2 nodes are available: 2 node(s) had volume node affinity conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
}

/// The EBS CSI driver's StorageClass example: WaitForFirstConsumer with
/// `allowedTopologies` us-east-2c. The claim is provisioned where its pod is scheduled,
/// which can only be a node of that zone; without one, the pod waits.
#[test]
fn allowed_topologies_keep_a_delayed_claims_pod_in_the_allowed_zone() {
    let three = nodes_in(
        "ebs-three-zones-sc.yaml",
        &["us-east-2a", "us-east-2b", "us-east-2c"],
    );
    let (v, code) = simulate(&[&three, "real-cases/aws-ebs-storageclass.yaml"], &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(pods(&v, "app")[0]["zone"], "us-east-2c", "{v}");
    let two = nodes_in("ebs-two-zones-sc.yaml", &["us-east-2a", "us-east-2b"]);
    let (v, code) = simulate(&[&two, "real-cases/aws-ebs-storageclass.yaml"], &[]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(
        pods(&v, "app")[0]["message"],
        "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
}

/// The docs' ZooKeeper StatefulSet re-created over the claims a previous one left
/// (`datadir-zk-N`, bound to zonal volumes in zone-a, zone-a and zone-b): each pod goes
/// to its volume's zone. zk-0 and zk-1 share zone-a's one node: the example's
/// anti-affinity selects `app in (zk)`, a label its pods do not carry
/// (`app.kubernetes.io/name: zk`), so it keeps nothing apart.
#[test]
fn a_statefulsets_pods_follow_their_zonal_volumes() {
    let mut volumes = String::new();
    for (i, zone) in ["zone-a", "zone-a", "zone-b"].iter().enumerate() {
        volumes.push_str(&format!(
            "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: pv-zk-{i}}}\nspec:\n  capacity: {{storage: 10Gi}}\n  accessModes: [ReadWriteOnce]\n  storageClassName: ''\n  csi: {{driver: ebs.csi.aws.com, volumeHandle: vol-zk-{i}}}\n  claimRef: {{namespace: default, name: datadir-zk-{i}}}\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - matchExpressions:\n        - {{key: topology.kubernetes.io/zone, operator: In, values: [{zone}]}}\nstatus: {{phase: Bound}}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: datadir-zk-{i}\n  annotations: {{pv.kubernetes.io/bind-completed: 'yes'}}\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: ''\n  volumeName: pv-zk-{i}\n  resources: {{requests: {{storage: 10Gi}}}}\nstatus: {{phase: Bound}}\n"
        ));
    }
    let volumes = temp("zk-volumes.yaml", &volumes);
    let (v, code) = simulate(
        &["real-nodes.yaml", &volumes, "real-cases/zookeeper.yaml"],
        &[],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        nodes_of(&v, "zk-"),
        [
            ("zk-0".to_string(), "node-a".to_string()),
            ("zk-1".to_string(), "node-a".to_string()),
            ("zk-2".to_string(), "node-b".to_string()),
        ]
    );
}

/// The docs' `web` StatefulSet (claims from `volumeClaimTemplates`, no
/// storageClassName) in a cluster whose only StorageClass, local-path, is not the
/// default: the claims get no class, nothing provisions them, and web-0 waits. Its
/// StatefulSet is OrderedReady, so web-1 is never created while web-0 is not Running
/// and Ready: the report says so, and counts it neither as a pod nor as pending.
#[test]
fn a_statefulset_without_a_default_storage_class_waits_for_its_claims() {
    let (v, code) = simulate(
        &[
            "real-nodes.yaml",
            "real/local-path-provisioner.yaml",
            "real-cases/web-statefulset.yaml",
        ],
        &[],
    );
    assert_eq!(code, 1, "{v}");
    let web = pods(&v, "web-0");
    assert_eq!(web.len(), 1, "{v}");
    assert_eq!(
        web[0]["message"],
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    assert!(pods(&v, "web-1").is_empty(), "{v}");
    assert_eq!(v["pending"], 1, "{v}");
    let Some(set) = v["workloads"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|w| w["kind"] == "StatefulSet" && w["name"] == "web")
    else {
        panic!("no StatefulSet web: {v}")
    };
    assert_eq!(
        (set["pods"].as_u64(), set["pending"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(set["not_created"], serde_json::json!(["web-1"]), "{set}");
    assert_eq!(
        set["not_created_reason"],
        "web-1 not created: StatefulSet web (OrderedReady) waits for web-0 to be Running and Ready"
    );
    // The cluster it leaves has no web-1 either.
    let o = run(&[
        "simulate",
        "-f",
        &fixture("real-nodes.yaml"),
        "-f",
        &fixture("real/local-path-provisioner.yaml"),
        "-f",
        &fixture("real-cases/web-statefulset.yaml"),
        "-o",
        "yaml",
    ]);
    let yaml = stdout(&o);
    assert!(yaml.contains("name: web-0\n"), "{yaml}");
    assert!(!yaml.contains("name: web-1\n"), "{yaml}");
}

/// Operators whose workloads are custom resources: the operator's Deployment is
/// scheduled, the custom resources (a CloudNativePG Cluster, Strimzi's Kafka and node
/// pools) are skipped with a note naming them, as no controller of the simulation makes
/// their pods.
#[test]
fn operators_run_and_their_custom_resources_are_named_as_skipped() {
    for (file, pod, skipped) in [
        (
            "real/cloudnative-pg.yaml",
            "controller-manager-",
            "real/cloudnative-pg.yaml: cluster/cluster-example: skipped: kind Cluster (postgresql.cnpg.io/v1) is not read by the scheduler",
        ),
        (
            "real/strimzi.yaml",
            "strimzi-cluster-operator-",
            "real/strimzi.yaml: kafka/my-cluster: skipped: kind Kafka (kafka.strimzi.io/v1) is not read by the scheduler",
        ),
    ] {
        let (v, code) = simulate(&["real-cases/kind-nodes.yaml", file], &[]);
        assert_eq!(code, 0, "{file}: {v}");
        assert_eq!(
            nodes_of(&v, pod)
                .iter()
                .map(|(_, n)| n.as_str())
                .collect::<Vec<_>>(),
            ["kind-worker"],
            "{file}: {v}"
        );
        assert!(
            v["notes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .any(|n| n.ends_with(skipped)),
            "{file}: {}",
            v["notes"]
        );
    }
}

/// Grafana Mimir's zone-aware ingesters (the Helm chart's rendered test output): three
/// StatefulSets, `ingester-zone-a/b/c`, Parallel, one replica each, spread per host
/// (ScheduleAnyway) and with a 2Gi claim template of no class. Without a default
/// StorageClass every claim stays unbound and every ingester waits (Parallel: all three
/// are created); with kind's default class (WaitForFirstConsumer) they are provisioned
/// where the ingesters land, one per node. These values set no node affinity, so the
/// pods' `zone` label does not pin them to the nodes' zones.
#[test]
fn mimirs_zone_aware_ingesters_wait_for_a_default_class_then_spread_per_host() {
    let (v, code) = simulate(&["real-nodes.yaml", "real-cases/mimir-ingesters.yaml"], &[]);
    assert_eq!(code, 1, "{v}");
    let ingesters = pods(&v, "classic-architecture-values-mimir-ingester-zone-");
    assert_eq!(ingesters.len(), 3, "{v}");
    for p in &ingesters {
        assert_eq!(p["namespace"], "citestns");
        assert_eq!(
            p["message"],
            "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
            "{p}"
        );
    }
    let standard = temp(
        "kind-standard-class.yaml",
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: standard\n  annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}\nprovisioner: rancher.io/local-path\nvolumeBindingMode: WaitForFirstConsumer\n",
    );
    let (v, code) = simulate(
        &[
            "real-nodes.yaml",
            &standard,
            "real-cases/mimir-ingesters.yaml",
        ],
        &[],
    );
    assert_eq!(code, 0, "{v}");
    let mut on: Vec<String> = nodes_of(&v, "classic-architecture-values-mimir-ingester-zone-")
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    on.sort();
    assert_eq!(on, ["node-a", "node-b", "node-c"]);
}

/// Every fixture of `real-cases/` names where it was copied from: the repository, the
/// commit and the file's path at that commit.
#[test]
fn every_real_case_names_its_source_commit_and_path() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/real-cases")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        let mut lines = text.lines();
        let source = lines.next().unwrap_or("");
        let path = lines.next().unwrap_or("");
        let Some((repo, commit)) = source
            .strip_prefix("# Source: https://github.com/")
            .and_then(|rest| rest.split_once(" ("))
            .and_then(|(repo, rest)| Some((repo, rest.split_once(", commit ")?.1)))
        else {
            panic!("{}: {source}", f.display())
        };
        let commit = commit.trim_end_matches(')');
        assert_eq!(commit.len(), 40, "{}: {source}", f.display());
        assert!(
            path.starts_with(&format!("#   https://github.com/{repo}/blob/{commit}/")),
            "{}: {path}",
            f.display()
        );
    }
}
