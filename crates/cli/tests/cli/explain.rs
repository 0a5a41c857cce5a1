//! `explain KIND/NAME`: the next pending pod of a workload.

use super::{fixture, run, stderr, stdout};

#[test]
fn a_workload_is_explained_through_its_next_pending_pod() {
    let f = fixture("workloads.yaml");
    let by_workload = run(&["explain", "-f", &f, "sts/data/db"]);
    assert_eq!(
        by_workload.status.code(),
        Some(0),
        "{}",
        stderr(&by_workload)
    );
    let text = stdout(&by_workload);
    // The StatefulSet's first ordinal is its next pod; the same output as naming it.
    assert!(text.starts_with("pod data/db-0\n"), "{text}");
    let by_pod = run(&["explain", "-f", &f, "data/db-0"]);
    assert_eq!(stdout(&by_pod), text);
    let long = run(&["explain", "-f", &f, "statefulset/data/db"]);
    assert_eq!(stdout(&long), text);
}

#[test]
fn a_workload_with_every_pod_bound_says_how_to_see_the_next() {
    let f = fixture("controllers/live-deployment.yaml");
    let o = run(&["explain", "-f", &f, "deployment/web"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert!(
        err.contains("deployment default/web: no pending pod (2 pod(s), every one bound); --scale deployment/default/web=3"),
        "{err}"
    );
    let scaled = run(&[
        "explain",
        "-f",
        &f,
        "deployment/web",
        "--scale",
        "deployment/web=3",
    ]);
    assert_eq!(scaled.status.code(), Some(0), "{}", stderr(&scaled));
    let text = stdout(&scaled);
    assert!(text.starts_with("pod default/web-"), "{text}");
    assert!(text.contains("app=web: a=1 b=1 c=0"), "{text}");
}

#[test]
fn an_unknown_workload_names_the_ones_there_are() {
    let f = fixture("workloads.yaml");
    let o = run(&["explain", "-f", &f, "deployment/nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "deployment default/nope: not found in the files (workloads: statefulset/data/db, daemonset/kube-system/agent)"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn explain_summarises_a_constraint_with_many_domains() {
    // 40 hostnames: the spread is summarised (count, histogram, extremes), with the skew
    // the engine measures; the three zones are listed in full.
    let f = fixture("forty-nodes.yaml");
    let o = run(&["explain", "-f", &f, "deployment/web"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    // Every replica schedules, so the last one is explained, with the spread its cycle saw.
    assert!(
        text.contains(
            "all 12 pending pod(s) of the workload schedule; explaining the last one scheduled"
        ),
        "{text}"
    );
    assert!(
        text.contains("Spread: matching pods per eligible domain, as PodTopologySpread counts\n  topology.kubernetes.io/zone maxSkew=1 DoNotSchedule app=web: zone-a=7 zone-b=7 zone-c=6 (min 6, skew 1)\n  kubernetes.io/hostname maxSkew=1 ScheduleAnyway app=web: (min 0, skew 1)\n    40 domains, 20 pods, min 0, max 1, skew 1\n    domains per pod count: 0: 20, 1: 20\n"),
        "{text}"
    );
    // The extremes name three domains each, not all forty.
    for line in text.lines().filter(|l| l.contains("loaded: ")) {
        assert_eq!(line.matches('=').count(), 3, "{line}");
    }
}

#[test]
fn a_preempting_pod_shows_its_failed_cycle_the_victims_and_the_cycle_after() {
    let f = fixture("preemption.yaml");
    let o = run(&["explain", "-f", &f, "checkout", "--wide"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    // The failed cycle and its preemption come before the cycle that binds.
    let failed = text.find("== Failed cycle").expect("the failed cycle");
    let victims = text
        .find("  default/report  priority 10")
        .expect("the victim");
    let after = text
        .find("== Cycle after the eviction")
        .expect("the cycle after");
    assert!(failed < victims && victims < after, "{text}");
    insta::assert_snapshot!("explain_preemption", text);
}

#[test]
fn a_preempting_pod_in_json() {
    let f = fixture("preemption.yaml");
    let o = run(&["explain", "-f", &f, "checkout", "-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["apiVersion"], "topospread.dev/v1alpha1");
    assert_eq!(v["kind"], "ExplainReport");
    assert_eq!(v["outcome"], serde_json::json!({"scheduled": "n1"}));
    assert!(v.get("preemption").is_none(), "{v}");
    let failed = &v["preempting_cycle"];
    assert!(
        failed["outcome"]["pending"]
            .as_str()
            .is_some_and(|m| m.starts_with("0/2 nodes are available: 2 Insufficient cpu.")),
        "{failed}"
    );
    assert_eq!(
        failed["preemption"],
        serde_json::json!({"node": "n1", "victims": [
            {"namespace": "default", "name": "report", "priority": 10}
        ]})
    );
    assert_eq!(failed["nodes"].as_array().map(Vec::len), Some(2));
    assert!(
        v["context"][0]
            .as_str()
            .is_some_and(|c| c.starts_with("nominated to n1 (status.nominatedNodeName)")),
        "{v}"
    );
}

const NOMINATED: &str = "\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: v1
kind: Pod
metadata: {name: busy}
spec:
  nodeName: n2
  containers: [{name: c, image: nginx, resources: {requests: {cpu: '3', memory: 6Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
status: {nominatedNodeName: NOMINATED}
";

#[test]
fn a_nominated_pod_is_tried_on_its_nominated_node_first() {
    let f = super::temp("nominated.yaml", &NOMINATED.replace("NOMINATED", "n2"));
    let o = run(&["explain", "-f", &f, "web", "--wide"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("  nominated to n2 (status.nominatedNodeName): Filter ran there first and it passed, so no other node was evaluated\n"), "{text}");
    assert!(
        text.contains("(cycle) NotEvaluated: the pod's nominated node passed Filter first"),
        "{text}"
    );
    assert!(text.ends_with("Result: scheduled to n2\n"), "{text}");
}

#[test]
fn a_nomination_to_a_missing_node_is_ignored_with_a_note() {
    let f = super::temp(
        "nominated-gone.yaml",
        &NOMINATED.replace("NOMINATED", "gone"),
    );
    let o = run(&["explain", "-f", &f, "web"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(
            "  status.nominatedNodeName names node \"gone\", which is not in the cluster: ignored\n"
        ),
        "{text}"
    );
    assert!(text.ends_with("Result: scheduled to n1\n"), "{text}");
    let o = run(&["simulate", "-f", &f, "-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert!(
        v["notes"].as_array().is_some_and(|n| n.iter().any(|n| n
            == "pod default/web (nominated to gone): status.nominatedNodeName names a node not in the cluster: the nomination is ignored")),
        "{}",
        v["notes"]
    );
}

#[test]
fn a_node_keeps_room_for_a_higher_priority_nominated_pod() {
    // `reserved` fits nowhere and may not preempt: it stays pending, nominated to n1,
    // and `web` (lower priority) finds n1 full once it is counted there.
    let yaml = "\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: v1
kind: Pod
metadata: {name: e1}
spec: {nodeName: n1, priority: 1000, containers: [{name: c, image: nginx, resources: {requests: {cpu: '2'}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: e2}
spec: {nodeName: n2, priority: 1000, containers: [{name: c, image: nginx, resources: {requests: {cpu: '3'}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: reserved}
spec: {priority: 100, preemptionPolicy: Never, containers: [{name: c, image: nginx, resources: {requests: {cpu: '3'}}}]}
status: {nominatedNodeName: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec: {priority: 10, containers: [{name: c, image: nginx, resources: {requests: {cpu: '1'}}}]}
";
    let f = super::temp("reserved.yaml", yaml);
    let grouped = run(&["explain", "-f", &f, "web"]);
    assert!(
        stdout(&grouped).contains("  pods nominated to 1 node(s) were counted there: n1\n"),
        "{}",
        stdout(&grouped)
    );
    let o = run(&["explain", "-f", &f, "web", "--wide"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(
            "  n1    rejected by NodeResourcesFit\n          counts the pods nominated here: default/reserved\n"
        ),
        "{text}"
    );
    assert!(text.ends_with("Result: scheduled to n2\n"), "{text}");
}

/// A kubectl-style dump of `nodes` nodes in five zones (every tenth node tainted
/// `dedicated=gpu:NoSchedule`), two `app=web` pods bound in zone-0, and a 3-replica
/// Deployment spreading over zones (DoNotSchedule) and hostnames (ScheduleAnyway).
pub(super) fn big_cluster(nodes: usize) -> String {
    let mut items: Vec<serde_json::Value> = (0..nodes)
        .map(|i| {
            let name = format!("node-{i:04}");
            let taints = if i % 10 == 9 {
                serde_json::json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])
            } else {
                serde_json::json!([])
            };
            serde_json::json!({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {
                    "kubernetes.io/hostname": name,
                    "topology.kubernetes.io/zone": format!("zone-{}", i % 5)}},
                "spec": {"taints": taints},
                "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}
            })
        })
        .collect();
    for (i, node) in ["node-0000", "node-0005"].iter().enumerate() {
        items.push(serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("old-{i}"), "namespace": "default", "labels": {"app": "web"}},
            "spec": {"nodeName": node, "containers": [{"name": "web", "image": "web"}]}
        }));
    }
    let selector = serde_json::json!({"matchLabels": {"app": "web"}});
    items.push(serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "selector": selector,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "web", "image": "web",
                        "resources": {"requests": {"cpu": "500m"}}}],
                    "topologySpreadConstraints": [
                        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                         "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector},
                        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                         "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": selector}
                    ]
                }
            }
        }
    }));
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

#[test]
fn explain_at_five_thousand_nodes_is_a_screenful_and_wide_lists_every_node() {
    let f = super::temp("explain-5000.json", &big_cluster(5000));
    let o = run(&["explain", "-f", &f, "deployment/web"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.lines().count() < 60,
        "{} lines:\n{text}",
        text.lines().count()
    );
    assert!(text.contains("Filter: 5,000 node(s), "), "{text}");
    // Every replica schedules, so the last is explained: by then the zones its
    // predecessors filled fail the zone constraint, zone-0's nodes first.
    assert!(text.contains("explaining the last one scheduled"), "{text}");
    assert!(
        text.contains(" node(s) didn't match pod topology spread constraints [PodTopologySpread]: node-0000, node-0001,"),
        "{text}"
    );
    assert!(
        text.contains(" node(s) had untolerated taint(s) [TaintToleration]: node-0009, node-0019,"),
        "{text}"
    );
    assert!(text.contains("Score: the 10 highest of "), "{text}");
    // The chosen node heads the highest-scoring nodes, marked.
    let chosen = text
        .lines()
        .find_map(|l| l.strip_prefix("Result: scheduled to "))
        .expect("scheduled");
    let first = text
        .lines()
        .skip_while(|l| !l.starts_with("Score: the 10 highest"))
        .nth(2)
        .expect("a first row");
    assert!(
        first.starts_with(&format!("  {chosen} ")) && first.ends_with("<- chosen"),
        "{text}"
    );
    // zone-0 holds two pods from the start, two zones one replica each.
    let zones = text
        .lines()
        .find(|l| l.contains("topology.kubernetes.io/zone maxSkew=1 DoNotSchedule app=web: "))
        .expect("the zone spread");
    assert!(
        zones.ends_with("zone-0=2 zone-1=1 zone-2=1 zone-3=0 zone-4=0 (min 0, skew 2)"),
        "{text}"
    );
    // The group counts add up to every node.
    let counted: usize = text
        .lines()
        .skip_while(|l| !l.starts_with("Filter: "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| {
            l.split_whitespace()
                .next()?
                .replace(',', "")
                .parse::<usize>()
                .ok()
        })
        .sum();
    assert_eq!(counted, 5000, "{text}");

    let top = run(&["explain", "-f", &f, "deployment/web", "--top", "3"]);
    let rows = stdout(&top)
        .lines()
        .skip_while(|l| !l.starts_with("Score: the 3 highest"))
        .skip(2)
        .take_while(|l| l.starts_with("  node-"))
        .count();
    assert_eq!(rows, 3, "{}", stdout(&top));

    let wide = run(&["explain", "-f", &f, "deployment/web", "--wide"]);
    assert_eq!(wide.status.code(), Some(0), "{}", stderr(&wide));
    let wide = stdout(&wide);
    let verdict_lines = wide
        .lines()
        .filter(|l| {
            let mut words = l.split_whitespace();
            words.next().is_some_and(|n| n.starts_with("node-"))
                && matches!(words.next(), Some("feasible" | "rejected"))
        })
        .count();
    assert_eq!(verdict_lines, 5000);
}

/// The fixture's StatefulSet is OrderedReady: db-1 is created once db-0 is bound, and
/// is explained from that cycle on; db-2 waits for db-1, which stays Pending, so it is
/// never created and there is no cycle to show.
#[test]
fn an_ordered_ready_ordinal_is_explained_once_created_and_never_created_says_why() {
    let f = fixture("workloads.yaml");
    let later = run(&["explain", "-f", &f, "data/db-1"]);
    // Exit 1: it stays Pending.
    assert_eq!(later.status.code(), Some(1), "{}", stderr(&later));
    let text = stdout(&later);
    assert!(text.starts_with("pod data/db-1\n"), "{text}");
    assert!(
        text.contains("didn't match pod topology spread constraints"),
        "{text}"
    );
    let never = run(&["explain", "-f", &f, "data/db-2"]);
    assert_eq!(never.status.code(), Some(2), "{}", stdout(&never));
    assert!(never.stdout.is_empty());
    let err = stderr(&never);
    assert!(
        err.contains(
            "pod data/db-2: never created, so never scheduled: db-2 not created: StatefulSet db (OrderedReady) waits for db-1 to be Running and Ready"
        ),
        "{err}"
    );
}

/// Two nodes with room for two 500m replicas each, and a Deployment of `replicas`.
fn two_nodes_and_web(replicas: usize) -> String {
    format!(
        r#"
apiVersion: v1
kind: List
items:
- {{apiVersion: v1, kind: Node, metadata: {{name: n1, labels: {{kubernetes.io/hostname: n1}}}}, status: {{allocatable: {{cpu: "1", memory: 4Gi, pods: "110"}}}}}}
- {{apiVersion: v1, kind: Node, metadata: {{name: n2, labels: {{kubernetes.io/hostname: n2}}}}, status: {{allocatable: {{cpu: "1", memory: 4Gi, pods: "110"}}}}}}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {{name: web, namespace: default}}
  spec:
    replicas: {replicas}
    selector: {{matchLabels: {{app: web}}}}
    template:
      metadata: {{labels: {{app: web}}}}
      spec:
        containers: [{{name: c, image: pause, resources: {{requests: {{cpu: 500m}}}}}}]
"#
    )
}

#[test]
fn explain_of_a_workload_explains_the_first_replica_that_stays_pending() {
    // Five replicas: the fifth stays Pending.
    let f = super::temp("explain-pending-replicas.yaml", &two_nodes_and_web(5));
    let o = run(&["explain", "-f", &f, "deployment/web"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(
            "1 of 5 pending pod(s) of the workload stay Pending; explaining the first (`explain POD` for another)"
        ),
        "{text}"
    );
    assert!(
        text.contains("Result: Pending: 0/2 nodes are available: 2 Insufficient cpu."),
        "{text}"
    );
}

#[test]
fn simulate_groups_pending_pods_by_message_unless_wide() {
    let f = super::temp("simulate-pending-groups.yaml", &two_nodes_and_web(12));
    let o = run(&["simulate", "-f", &f]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    let section: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Pending ("))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(section.len(), 2, "{text}");
    assert!(
        section[0].starts_with("  8 pods: 0/2 nodes are available: 2 Insufficient cpu."),
        "{text}"
    );
    assert!(
        section[1].ends_with(", ... and 5 more (--wide lists every pod)"),
        "{text}"
    );
    let wide = stdout(&run(&["simulate", "-f", &f, "--wide"]));
    let rows = wide
        .lines()
        .skip_while(|l| !l.starts_with("Pending ("))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .count();
    assert_eq!(rows, 8, "{wide}");
}

#[test]
fn without_nodes_pods_stay_pending_as_kube_scheduler_leaves_them() {
    // ErrNoNodesAvailable: every pod Pending with upstream's words, no preemption, no loop.
    let f = super::temp(
        "no-nodes.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: lonely}\nspec: {containers: [{name: c, image: pause}]}\n",
    );
    let o = run(&["simulate", "-f", &f]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("  default/lonely: no nodes available to schedule pods\n"),
        "{}",
        stdout(&o)
    );
}
