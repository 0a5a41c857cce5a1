//! `topospread capacity`: the nodes to add per template and zone, checked by
//! simulation, beside the binpacking estimate; `--remove-idle`; bad templates.

use super::{fixture, run, stderr, stdout, temp};
use std::collections::BTreeSet;

fn json(args: &[&str]) -> (serde_json::Value, i32) {
    let o = run(args);
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("JSON on stdout ({e}): {}", stderr(&o)));
    (v, o.status.code().expect("exit code"))
}

fn names(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|n| n.as_str().expect("string").to_string())
        .collect()
}

/// kubernetes/autoscaler#4129's shape: 50 replicas with a zone and a hostname
/// constraint on three m5.large nodes. The plan adds 15 nodes, 5 per zone, the exact
/// minimum; its run places every pending pod, on nodes the cluster or the plan has; the
/// binpacking estimate's 14 nodes leave pods Pending.
#[test]
fn autoscaler_4129_is_planned_exactly_and_the_estimate_falls_short() {
    let cluster = fixture("capacity/autoscaler-4129.yaml");
    let group = fixture("capacity/nodegroup.yaml");
    let (v, code) = json(&[
        "capacity",
        "-f",
        &cluster,
        "--node-template",
        &group,
        "-o",
        "json",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["kind"], "CapacityReport");
    assert_eq!(v["nodes"], 15);
    assert_eq!(v["exact"], true);
    assert_eq!(v["price"], "1.44");
    assert_eq!(v["pending_after"], 0);
    let counts: Vec<(String, u64)> = v["additions"]
        .as_array()
        .expect("additions")
        .iter()
        .map(|a| {
            (
                a["zone"].as_str().expect("zone").to_string(),
                a["count"].as_u64().expect("count"),
            )
        })
        .collect();
    assert_eq!(
        counts,
        [
            ("us-east-1a".to_string(), 5),
            ("us-east-1b".to_string(), 5),
            ("us-east-1c".to_string(), 5)
        ]
    );
    let mut known: BTreeSet<String> = (0..3).map(|i| format!("ip-10-0-{i}-10")).collect();
    for a in v["additions"].as_array().expect("additions") {
        known.extend(names(&a["nodes"]));
    }
    let placed = v["placed"].as_array().expect("placed");
    assert_eq!(
        placed.len() as u64,
        v["pending_before"].as_u64().expect("n")
    );
    for p in placed {
        let node = p["node"].as_str().expect("node");
        assert!(
            known.contains(node),
            "{node} is neither in the cluster nor added"
        );
    }
    let zone = &v["workloads"][0]["spread"][0];
    assert!(zone["skew"].as_i64().expect("skew") <= 1);
    let greedy = &v["greedy"][0];
    assert_eq!(greedy["nodes"], 14);
    assert!(greedy["pending_after"].as_u64().expect("n") > 0);
}

/// A pod whose node selector no template satisfies is named, with the reason; the run
/// exits 1 and plans for the rest.
#[test]
fn a_pod_no_template_hosts_is_named_and_exits_1() {
    let cluster = temp(
        "capacity-gpu.yaml",
        r#"
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {topology.kubernetes.io/zone: a, kubernetes.io/hostname: a1}}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: default}
spec:
  nodeSelector: {accelerator: a100}
  containers: [{name: c, image: x}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
"#,
    );
    let group = fixture("capacity/nodegroup-4cpu.yaml");
    let o = run(&["capacity", "-f", &cluster, "--node-template", &group]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Add 1 node(s)"), "{out}");
    assert!(
        out.contains("default/trainer: no template can host it (m5-xlarge: node selector or required node affinity does not match)"),
        "{out}"
    );
}

/// Bad templates: one line naming the object, exit 2, nothing on stdout.
#[test]
fn bad_templates_are_one_line_naming_them() {
    let cluster = fixture("capacity/autoscaler-4129.yaml");
    let pod = temp(
        "capacity-not-a-node.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n",
    );
    let negative = temp(
        "capacity-negative.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: t, annotations: {topospread.io/max-count: \"-3\"}}\nstatus: {allocatable: {cpu: \"1\", pods: \"10\"}}\n",
    );
    let zone = temp(
        "capacity-zone.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: t, annotations: {topospread.io/zones: \"us-east-1z\"}}\nstatus: {allocatable: {cpu: \"1\", pods: \"10\"}}\n",
    );
    let no_pods = temp(
        "capacity-nopods.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: t}\nstatus: {allocatable: {cpu: \"1\"}}\n",
    );
    for (file, want) in [
        (&pod, "a node template must be a Node"),
        (
            &negative,
            "node template \"t\": metadata.annotations[topospread.io/max-count]: \"-3\"",
        ),
        (&zone, "zone \"us-east-1z\" is not a zone of the cluster"),
        (&no_pods, "status.allocatable.pods"),
    ] {
        let o = run(&["capacity", "-f", &cluster, "--node-template", file]);
        assert_eq!(o.status.code(), Some(2), "{file}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
        assert!(stdout(&o).is_empty());
    }
}

/// `--remove-idle`: the empty node goes, then a1 (its replica moves to a2, in the same
/// zone); a2 cannot (b1 is full, so its two replicas would stay Pending), nor b1.
#[test]
fn remove_idle_lists_nodes_checked_by_simulation() {
    let cluster = fixture("capacity/idle.yaml");
    let group = fixture("capacity/nodegroup.yaml");
    let (v, code) = json(&[
        "capacity",
        "-f",
        &cluster,
        "--node-template",
        &group,
        "--remove-idle",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["nodes"], 0);
    let removable: Vec<&str> = v["remove_idle"]
        .as_array()
        .expect("remove_idle")
        .iter()
        .map(|r| r["node"].as_str().expect("node"))
        .collect();
    assert_eq!(removable, ["a3", "a1"]);
    let moved = &v["remove_idle"][1]["moved"][0];
    assert_eq!(
        (moved["pod"].as_str(), moved["to"].as_str()),
        (Some("default/web-0"), Some("a2"))
    );
}

/// `-o html` draws the plan: the nodes added per zone as bars, each template's additions
/// (5 per zone for autoscaler#4129's shape), each constraint's spread after the run with
/// its maxSkew band, and the binpacking estimate beside it.
#[test]
fn the_plan_as_html_draws_nodes_per_zone_and_the_spread() {
    let cluster = fixture("capacity/autoscaler-4129.yaml");
    let group = fixture("capacity/nodegroup.yaml");
    let o = run(&[
        "capacity",
        "-f",
        &cluster,
        "--node-template",
        &group,
        "-o",
        "html",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = stdout(&o);
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<h2>Nodes added per zone</h2>"), "{html}");
    for zone in ["us-east-1a", "us-east-1b", "us-east-1c"] {
        let row = format!(
            "<td class=\"mono\">m5-large</td><td class=\"mono\">{zone}</td><td class=\"num\" data-v=\"5\">5</td>"
        );
        assert!(html.contains(&row), "no row for {zone}");
    }
    assert!(
        html.contains("shaded: minimum to minimum + maxSkew"),
        "{html}"
    );
    assert!(html.contains("Binpacking estimate"), "{html}");
}

/// A Karpenter NodePool (karpenter.sh/v1) sized by `--instance-type`: its requirements
/// give the zones and the instance types, its template labels, its EC2NodeClass's
/// `kubelet.maxPods` caps the pods per node; the plan is the proven minimum over both
/// types, labelled as Karpenter labels its nodes, and every pod is placed.
#[test]
fn a_karpenter_node_pool_is_read_with_its_instance_types() {
    let cluster = fixture("capacity/autoscaler-4129.yaml");
    let pool = fixture("capacity/nodepool.yaml");
    let (v, code) = json(&[
        "capacity",
        "-f",
        &cluster,
        "--node-template",
        &pool,
        "--instance-type",
        "m5.large=1930m,7Gi,29,price=0.096",
        "--instance-type",
        "m5.xlarge=3920m,14Gi,58,price=0.192",
        "--instance-type",
        "c5.large=1930m,3Gi,29,price=0.085",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{v}");
    let templates: Vec<(&str, &serde_json::Value)> = v["templates"]
        .as_array()
        .expect("templates")
        .iter()
        .map(|t| (t["name"].as_str().expect("name"), &t["zones"]))
        .collect();
    // c5.large is not in the requirements' instance types.
    assert_eq!(
        templates.iter().map(|t| t.0).collect::<Vec<_>>(),
        ["general-m5.large", "general-m5.xlarge"]
    );
    assert_eq!(
        templates[0].1,
        &serde_json::json!(["us-east-1a", "us-east-1b", "us-east-1c"])
    );
    assert_eq!(v["pending_after"], 0);
    // Two instance types over three zones (six slots): the exact search proves twelve
    // nodes the minimum. An m5.xlarge holds seven replicas by room, but the hostname
    // constraint lets a node end with at most the minimum (three, on the m5.large
    // nodes) plus one; the cheapest twelve mix both types.
    assert_eq!(v["nodes"], 12, "{v}");
    assert_eq!(v["exact"], true);
    assert_eq!(v["lower_bound"], 12);
    assert_eq!(v["price"], "1.632");
    let per_type = |t: &str| -> u64 {
        v["additions"]
            .as_array()
            .expect("additions")
            .iter()
            .filter(|a| a["template"] == t)
            .map(|a| a["count"].as_u64().expect("count"))
            .sum()
    };
    assert_eq!(
        (per_type("general-m5.large"), per_type("general-m5.xlarge")),
        (7, 5)
    );
}

/// A NodePool's `spec.limits` caps what it may add, its own nodes in the cluster
/// counted: cpu 10 with one 1930m node of the pool already there leaves room for four
/// m5.large nodes, so pods stay Pending and the run exits 1.
#[test]
fn a_node_pool_limit_caps_the_nodes_added() {
    let cluster = fixture("capacity/autoscaler-4129.yaml");
    let pool = temp(
        "capacity-nodepool-limit.yaml",
        r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: small}
spec:
  template:
    spec:
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
  limits: {cpu: 10}
"#,
    );
    let existing = temp(
        "capacity-nodepool-existing.yaml",
        r#"
apiVersion: v1
kind: Node
metadata:
  name: small-1
  labels: {kubernetes.io/hostname: small-1, topology.kubernetes.io/zone: us-east-1a, karpenter.sh/nodepool: small}
spec:
  taints: [{key: dedicated, value: other, effect: NoSchedule}]
status:
  allocatable: {cpu: 1930m, memory: 7Gi, pods: "29"}
"#,
    );
    let (v, code) = json(&[
        "capacity",
        "-f",
        &cluster,
        "-f",
        &existing,
        "--node-template",
        &pool,
        "--instance-type",
        "m5.large=1930m,7Gi,29",
        "-o",
        "json",
    ]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["templates"][0]["max_count"], 4);
    assert!(v["nodes"].as_u64().expect("nodes") <= 4, "{v}");
    assert!(v["pending_after"].as_u64().expect("n") > 0);
}

/// cluster-autoscaler's Cluster API node group: min/max-size and the scale-from-zero
/// capacity annotations, the failure domain as the zone, the labels Cluster API
/// propagates; max-size less the replicas it has is the most it adds.
#[test]
fn a_cluster_api_node_group_is_read_as_cluster_autoscaler_reads_it() {
    let cluster = fixture("capacity/autoscaler-4129.yaml");
    let group = fixture("capacity/machinedeployment.yaml");
    let (v, code) = json(&[
        "capacity",
        "-f",
        &cluster,
        "--node-template",
        &group,
        "-o",
        "json",
    ]);
    let t = &v["templates"][0];
    assert_eq!(t["name"], "md-1a");
    assert_eq!(t["zones"], serde_json::json!(["us-east-1a"]));
    assert_eq!(t["max_count"], 5);
    assert_eq!(t["price"], "0.096");
    // One zone only: the zone constraint lets few replicas through, and five nodes at
    // most; the rest are named.
    assert_eq!(code, 1);
    assert!(v["nodes"].as_u64().expect("nodes") <= 5);
    for a in v["additions"].as_array().expect("additions") {
        assert_eq!(a["zone"], "us-east-1a");
    }
}

/// Bad autoscaler objects and flags: one line naming the object and field, exit 2.
#[test]
fn bad_node_pools_and_node_groups_are_one_line_naming_them() {
    let cluster = fixture("capacity/autoscaler-4129.yaml");
    let pool = fixture("capacity/nodepool.yaml");
    let bad_op = temp(
        "capacity-nodepool-op.yaml",
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n      requirements: [{key: kubernetes.io/arch, operator: Within, values: [amd64]}]\n",
    );
    let exists = temp(
        "capacity-nodepool-exists.yaml",
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n      requirements: [{key: example.com/tier, operator: Exists}]\n",
    );
    let no_max = temp(
        "capacity-md-nomax.yaml",
        "apiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineDeployment\nmetadata:\n  name: md\n  annotations: {cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: \"0\", capacity.cluster-autoscaler.kubernetes.io/cpu: \"2\", capacity.cluster-autoscaler.kubernetes.io/memory: 8Gi}\n",
    );
    let no_cpu = temp(
        "capacity-md-nocpu.yaml",
        "apiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineSet\nmetadata:\n  name: ms\n  annotations: {cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: \"0\", cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: \"3\"}\n",
    );
    let custom = temp(
        "capacity-custom.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
    );
    let it = "--instance-type=m5.large=1930m,7Gi,29";
    for (file, flag, want) in [
        (
            &pool,
            None,
            "NodePool \"general\": a NodePool does not state its nodes' allocatable: give each instance type it may launch with --instance-type",
        ),
        (
            &pool,
            Some("--instance-type=m5.large=2,8Gi"),
            "--instance-type \"m5.large=2,8Gi\": give CPU, MEMORY and PODS first",
        ),
        (
            &pool,
            Some("--instance-type=t3.micro=2,1Gi,4"),
            "NodePool \"general\": spec.template.spec.requirements: no --instance-type satisfies them (given: t3.micro)",
        ),
        (
            &bad_op,
            Some(it),
            "NodePool \"p\": spec.template.spec.requirements[0].operator: \"Within\" is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt",
        ),
        (
            &exists,
            Some(it),
            "NodePool \"p\": spec.template.spec.requirements: example.com/tier Exists: no value is known for it",
        ),
        (
            &no_max,
            None,
            "MachineDeployment \"md\": metadata.annotations[cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size]: missing",
        ),
        (
            &no_cpu,
            None,
            "MachineSet \"ms\": metadata.annotations[capacity.cluster-autoscaler.kubernetes.io/cpu]: missing",
        ),
        (
            &custom,
            None,
            "a Widget (example.com/v1): a node template must be a Node",
        ),
    ] {
        let mut args = vec!["capacity", "-f", &cluster, "--node-template", file];
        args.extend(flag);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{file}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
        assert!(stdout(&o).is_empty());
    }
}
