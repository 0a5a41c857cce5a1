use super::*;
use crate::build::build_snapshot;
use crate::load::{Loaded, Object, parse_manifests};

fn load(yaml: &str) -> Vec<Loaded> {
    parse_manifests(yaml, "t.yaml").unwrap().objects
}

/// The lints of every workload in `yaml`, static then (if the text has nodes) cluster.
fn lints(yaml: &str) -> Vec<(&'static str, String)> {
    let objects = load(yaml);
    let snapshot = build_snapshot(&objects).unwrap();
    let mut cluster = ClusterLinter::new(snapshot).unwrap();
    let mut out = Vec::new();
    for l in &objects {
        let Some(w) = Workload::from_object(&l.object) else {
            continue;
        };
        out.extend(lint_workload(&w, &ApiServerFeatures::default()));
        out.extend(cluster.lint(&w));
    }
    out.into_iter().map(|l| (l.code.code(), l.field)).collect()
}

fn messages(yaml: &str) -> Vec<String> {
    let objects = load(yaml);
    let snapshot = build_snapshot(&objects).expect("snapshot");
    let mut cluster = ClusterLinter::new(snapshot).expect("plugin");
    let mut out = Vec::new();
    for l in &objects {
        if let Some(w) = Workload::from_object(&l.object) {
            out.extend(lint_workload(&w, &ApiServerFeatures::default()));
            out.extend(cluster.lint(&w));
        }
    }
    out.iter().map(|l| format!("{} {l}", l.code)).collect()
}

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: web}}\nspec:\n  containers: []\n  topologySpreadConstraints:\n";

fn pod(constraints: &str) -> String {
    format!("{POD}{constraints}")
}

fn deployment(constraints: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers: []\n      topologySpreadConstraints:\n{}",
        constraints
            .lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    )
}

#[test]
fn codes_are_stable_and_documented() {
    let codes: Vec<&str> = LintCode::ALL.iter().map(|c| c.code()).collect();
    assert_eq!(
        codes,
        [
            "TS001", "TS002", "TS003", "TS004", "TS005", "TS006", "TS007", "TS008", "TS009",
            "TS010", "TS011", "TS012", "TS013"
        ]
    );
    for c in LintCode::ALL {
        assert!(c.why().contains("https://"), "{c} why points somewhere");
        assert!(!c.why().contains('\n'), "{c} why is one line");
    }
}

#[test]
fn ts001_selector_misses_own_pod() {
    let got = lints(&pod(
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: api}}}\n  - {maxSkew: 1, topologyKey: host, whenUnsatisfiable: ScheduleAnyway}\n  - {maxSkew: 1, topologyKey: rack, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n",
    ));
    assert_eq!(
        got,
        [
            (
                "TS001",
                "spec.topologySpreadConstraints[0].labelSelector".to_string()
            ),
            ("TS001", "spec.topologySpreadConstraints[1]".to_string()),
        ]
    );
    let m = messages(&pod(
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: api}}}\n",
    ));
    assert_eq!(
        m,
        [
            "TS001 spec.topologySpreadConstraints[0].labelSelector: app=api does not match the pod's own labels {app=web}, so its pods do not count themselves and do not spread against each other"
        ]
    );
}

#[test]
fn ts001_skips_labels_the_controller_adds_and_bad_selectors() {
    let got = lints(&deployment(
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web, pod-template-hash: abc}}}\n  - {maxSkew: 1, topologyKey: host, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchExpressions: [{key: app, operator: Bad}]}}\n",
    ));
    assert!(got.iter().all(|(c, _)| *c != "TS001"), "{got:?}");
}

#[test]
fn ts004_match_label_key_not_a_label() {
    let got = lints(&pod(
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [app, version]}\n",
    ));
    assert_eq!(
        got,
        [(
            "TS004",
            "spec.topologySpreadConstraints[0].matchLabelKeys[1]".to_string()
        )]
    );
    // pod-template-hash is added by the Deployment controller.
    let got = lints(&deployment(
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [pod-template-hash]}\n",
    ));
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn ts006_deployment_without_pod_template_hash() {
    let got = lints(&deployment(
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n  - {maxSkew: 1, topologyKey: host, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: other}}}\n",
    ));
    assert!(got.contains(&(
        "TS006",
        "spec.template.spec.topologySpreadConstraints[0].matchLabelKeys".to_string()
    )));
    // The second constraint spreads by someone else's labels: TS001, not TS006.
    assert!(!got.contains(&(
        "TS006",
        "spec.template.spec.topologySpreadConstraints[1].matchLabelKeys".to_string()
    )));
    // A ReplicaSet has no rollouts.
    let rs = deployment(
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n",
    )
    .replace("kind: Deployment", "kind: ReplicaSet");
    assert!(lints(&rs).is_empty());
}

#[test]
fn ts007_template_pods_rejected() {
    let got = lints(&deployment(
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [app, pod-template-hash]}\n",
    ));
    assert_eq!(
        got,
        [(
            "TS007",
            "spec.template.spec.topologySpreadConstraints[0][0]".to_string()
        )]
    );
    assert_eq!(
        LintCode::TemplatePodsRejected.default_severity(),
        Severity::Error
    );
}

const NODES: &str = "
apiVersion: v1
kind: Node
metadata: {name: node1, labels: {zone: zoneA, kubernetes.io/hostname: node1}}
---
apiVersion: v1
kind: Node
metadata: {name: node2, labels: {zone: zoneA, kubernetes.io/hostname: node2}}
---
apiVersion: v1
kind: Node
metadata: {name: node3, labels: {zone: zoneB, kubernetes.io/hostname: node3}}
";

fn placed(name: &str, node: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {{foo: bar}}}}\nspec: {{nodeName: {node}, containers: []}}\n"
    )
}

#[test]
fn ts002_topology_key_missing_on_all_or_some_nodes() {
    let yaml = format!(
        "{NODES}---\n{}",
        pod(
            "  - {maxSkew: 1, topologyKey: rack, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n"
        )
    );
    let m = messages(&yaml);
    assert_eq!(
        m,
        [
            "TS002 spec.topologySpreadConstraints[0].topologyKey: no node carries the label \"rack\" (3 checked), so every node is filtered out (node(s) didn't match pod topology spread constraints (missing required label)) and the pod stays Pending"
        ]
    );
    let some = yaml.replace("zone: zoneB", "rack: r1, zone: zoneB");
    let m = messages(&some);
    assert_eq!(
        m,
        [
            "TS002 spec.topologySpreadConstraints[0].topologyKey: 2 of the 3 nodes lack the label \"rack\" (node1, node2): pods never land on them"
        ]
    );
    // Nodes the nodeSelector rules out do not count.
    let selected = some.replace(
        "containers: []",
        "containers: []\n  nodeSelector: {zone: zoneB}",
    );
    assert!(messages(&selected).is_empty());
}

#[test]
fn ts003_min_domains_exceeds_domains() {
    let yaml = format!(
        "{NODES}---\n{}",
        pod(
            "  - {maxSkew: 1, minDomains: 3, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n"
        )
    );
    assert_eq!(
        messages(&yaml),
        [
            "TS003 spec.topologySpreadConstraints[0].minDomains: minDomains is 3 but the nodes offer 2 eligible domain(s) of \"zone\" (zoneA, zoneB): the global minimum counts as 0, so each domain takes at most maxSkew (1) matching pods, 2 in all, and the rest stay Pending until the cluster grows"
        ]
    );
    assert!(lints(&yaml.replace("minDomains: 3", "minDomains: 2")).is_empty());
}

#[test]
fn ts005_docs_two_constraint_conflict() {
    // The docs' example: zoneA = node1 (2 pods), node2 (1); zoneB = node3 (2).
    let mut yaml = NODES.to_string();
    for (name, node) in [
        ("a", "node1"),
        ("b", "node1"),
        ("c", "node2"),
        ("d", "node3"),
        ("e", "node3"),
    ] {
        yaml.push_str(&placed(name, node));
    }
    yaml.push_str("---\napiVersion: v1\nkind: Pod\nmetadata: {name: mypod, labels: {foo: bar}}\nspec:\n  containers: []\n  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {foo: bar}}}\n  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {foo: bar}}}\n");
    assert_eq!(
        messages(&yaml),
        [
            "TS005 spec.topologySpreadConstraints: no node satisfies the DoNotSchedule constraints together, though each alone fits some node: [0] (zone) fits node3; [1] (kubernetes.io/hostname) fits node2; the pod stays Pending"
        ]
    );
    // One pod fewer in zoneA: node2 satisfies both.
    let fits = yaml.replace(&placed("b", "node1"), "");
    assert!(lints(&fits).is_empty());
}

#[test]
fn cluster_lints_need_nodes() {
    let yaml = pod(
        "  - {maxSkew: 1, minDomains: 9, topologyKey: rack, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n",
    );
    assert!(lints(&yaml).is_empty());
}

#[test]
fn first_pod_of_a_deployment() {
    let objects = load(&deployment(
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n",
    ));
    let w = Workload::from_object(&objects[0].object).expect("workload");
    let p = first_pod(&w).expect("pod");
    assert_eq!(p.metadata.name.as_deref(), Some("web-0"));
    let labels = p.metadata.labels.unwrap_or_default();
    assert_eq!(
        labels.get("pod-template-hash").map(String::as_str),
        Some(FIRST_POD_TEMPLATE_HASH)
    );
    assert_eq!(labels.get("app").map(String::as_str), Some("web"));
}

#[test]
fn ts008_empty_selector_unless_match_label_keys_add_requirements() {
    let got = lints(&pod(
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}\n  - {maxSkew: 1, topologyKey: rack, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {}}, matchLabelKeys: [app]}\n  - {maxSkew: 1, topologyKey: host, whenUnsatisfiable: DoNotSchedule, labelSelector: {}, matchLabelKeys: [tier]}\n",
    ));
    let ts008: Vec<&String> = got
        .iter()
        .filter(|(code, _)| *code == "TS008")
        .map(|(_, field)| field)
        .collect();
    assert_eq!(
        ts008,
        [
            "spec.topologySpreadConstraints[0].labelSelector",
            "spec.topologySpreadConstraints[2].labelSelector"
        ]
    );
}

#[test]
fn statefulset_pods_share_one_lint_answer() {
    // A StatefulSet's pods differ in name, hostname, volumes and pod-name label; the
    // lints read none of these, so the three are linted once and alike.
    let mut yaml = String::from(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {zone: a}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n",
    );
    for i in 0..3 {
        yaml.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: db-{i}\n  labels: {{app: db, statefulset.kubernetes.io/pod-name: db-{i}}}\nspec:\n  nodeName: n1\n  hostname: db-{i}\n  subdomain: db\n  containers: [{{name: c, image: i}}]\n  volumes: [{{name: data, persistentVolumeClaim: {{claimName: data-db-{i}}}}}]\n  topologySpreadConstraints:\n  - {{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: db}}}}}}\n"
        ));
    }
    let objects = load(&yaml);
    let snapshot = build_snapshot(&objects).expect("snapshot");
    let mut cluster = ClusterLinter::new(snapshot).expect("plugin");
    let mut found = Vec::new();
    for l in &objects {
        if let Some(w) = Workload::from_object(&l.object) {
            found.push(cluster.lint(&w));
        }
    }
    assert_eq!(found.len(), 3);
    assert!(found.iter().all(|l| *l == found[0]), "{found:?}");
    assert_eq!(found[0].len(), 1, "{found:?}");
    assert_eq!(found[0][0].code.code(), "TS002");
    assert_eq!(cluster.distinct_pods_linted(), 1);
}

#[test]
fn ts009_rollout_cannot_finish() {
    let constraint = "        - {maxSkew: 1, minDomains: 3, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n";
    // Two zones, each taking at most maxSkew 1 pod: 2 replicas fill them, and 25% of 2
    // resolves to maxSurge 1, maxUnavailable 0.
    let yaml = format!(
        "{NODES}---\n{}",
        deployment(constraint).replace("spec:\n  selector", "spec:\n  replicas: 2\n  selector")
    );
    let ts009 = |yaml: &str| -> Vec<String> {
        messages(yaml)
            .into_iter()
            .filter(|m| m.starts_with("TS009"))
            .collect()
    };
    assert_eq!(
        ts009(&yaml),
        [
            "TS009 spec.template.spec.topologySpreadConstraints[0]: a rollout can never finish: the strategy resolves to maxUnavailable 0 (maxSurge 1) for 2 replicas, so no old pod goes before a new one is available, but minDomains 3 exceeds the 2 eligible domain(s) of \"zone\", each domain takes at most maxSkew (1) matching pods, 2 in all, and the old revision's 2 pods, which this selector counts, fill them: the surge pod stays Pending; allow spec.strategy.rollingUpdate.maxUnavailable of 1 or more, or add matchLabelKeys: [pod-template-hash]"
        ]
    );
    // Room left for the surge pod: one replica in two zones.
    assert!(ts009(&yaml.replace("replicas: 2", "replicas: 1")).is_empty());
    // An old pod may go first.
    let unavailable = yaml.replace(
        "  replicas: 2\n",
        "  replicas: 2\n  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}\n",
    );
    assert!(ts009(&unavailable).is_empty());
    // Recreate deletes the old pods first.
    let recreate = yaml.replace(
        "  replicas: 2\n",
        "  replicas: 2\n  strategy: {type: Recreate}\n",
    );
    assert!(ts009(&recreate).is_empty());
    // Each revision spread on its own: the new pods do not count the old ones.
    let per_revision = yaml.replace(
        "labelSelector: {matchLabels: {app: web}}}",
        "labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [pod-template-hash]}",
    );
    assert!(ts009(&per_revision).is_empty());
    // As many domains as minDomains: the global minimum is a real count again.
    assert!(ts009(&yaml.replace("minDomains: 3", "minDomains: 2")).is_empty());
    // ScheduleAnyway never keeps a pod Pending.
    assert!(ts009(&yaml.replace("DoNotSchedule", "ScheduleAnyway")).is_empty());
}

const NODES3: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: a1, labels: {zone: a, disk: ssd}}\nstatus: {allocatable: {pods: '10'}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b1, labels: {zone: b, disk: ssd}}\nstatus: {allocatable: {pods: '10'}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: c1, labels: {zone: c, disk: hdd}}\nspec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\nstatus: {allocatable: {pods: '10'}}\n";

/// A Deployment of `web` pods with `spec` under its pod spec (indented by 6).
fn web_with(spec: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers: []\n{spec}"
    )
}

#[test]
fn ts010_node_selector_or_affinity_matches_no_node() {
    let m = messages(&format!(
        "{NODES3}---\n{}",
        web_with("      nodeSelector: {disk: nvme}\n")
    ));
    assert_eq!(
        m,
        [
            "TS010 spec.template.spec.nodeSelector: no node of the 3 in the input satisfies the pod's nodeSelector, so every pod stays Pending (3 node(s) didn't match Pod's node affinity/selector); label the nodes, or fix the selector"
        ]
    );
    // Each part matches some node, but not together.
    let got = lints(&format!(
        "{NODES3}---\n{}",
        web_with(
            "      nodeSelector: {disk: ssd}\n      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [c]}]}]}}}\n"
        )
    ));
    assert_eq!(
        got,
        [(
            "TS010",
            "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution".to_string()
        )]
    );
    // A node that matches, or no nodes at all: nothing to say.
    let got = lints(&format!(
        "{NODES3}---\n{}",
        web_with("      nodeSelector: {disk: hdd}\n")
    ));
    assert!(got.is_empty(), "{got:?}");
    let got = lints(&web_with("      nodeSelector: {disk: nvme}\n"));
    assert!(got.is_empty(), "{got:?}");
}

/// The TS011 lints of every workload in `yaml`.
fn affinity_lints(yaml: &str) -> Vec<String> {
    let objects = load(yaml);
    let pods = InputPods::new(&objects);
    objects
        .iter()
        .filter_map(|l| Workload::from_object(&l.object))
        .flat_map(|w| lint_pod_affinity(&w, &pods))
        .map(|l| format!("{} {l}", l.code))
        .collect()
}

#[test]
fn ts011_anti_affinity_that_misses_its_own_pods() {
    let anti = |selector: &str| {
        web_with(&format!(
            "      affinity: {{podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{{topologyKey: kubernetes.io/hostname, labelSelector: {{matchLabels: {selector}}}}}]}}}}\n"
        ))
    };
    assert_eq!(
        affinity_lints(&anti("{app.kubernetes.io/name: web}")),
        [
            "TS011 spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: app.kubernetes.io/name=web does not match the pod template's own labels {app=web}, nor any pod in the input (namespace default): the rule never keeps the workload's pods apart (per \"kubernetes.io/hostname\"): as a \"one per node\" rule it is a no-op; select the pods' own labels"
        ]
    );
    // Its own labels, or another workload of the input (kept apart from it on purpose).
    assert!(affinity_lints(&anti("{app: web}")).is_empty());
    let db = "apiVersion: v1\nkind: Pod\nmetadata: {name: db, labels: {app: db}}\nspec: {containers: []}\n";
    assert!(affinity_lints(&format!("{}---\n{db}", anti("{app: db}"))).is_empty());
    // A label the controller adds cannot be judged from the template.
    assert!(affinity_lints(&anti("{pod-template-hash: abc}")).is_empty());
    // Required affinity to pods that do not exist.
    let affinity = web_with(
        "      affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: {topologyKey: zone, labelSelector: {matchLabels: {app: cache}}}}]}}\n",
    );
    assert_eq!(
        affinity_lints(&affinity),
        [
            "TS011 spec.template.spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector: app=cache does not match the pod template's own labels {app=web}, nor any pod in the input (namespace default): the preference never draws the pods anywhere"
        ]
    );
}

#[test]
fn ts012_node_without_allocatable() {
    for (node, fires) in [
        ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", true),
        (
            "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {}}\n",
            true,
        ),
        (
            "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {pods: '1'}}\n",
            false,
        ),
    ] {
        let objects = load(node);
        let Object::Node(n) = &objects[0].object else {
            panic!("a node");
        };
        let lint = lint_node(n);
        assert_eq!(lint.is_some(), fires, "{node}");
        if let Some(l) = lint {
            assert_eq!(l.code, LintCode::NodeWithoutAllocatable);
            assert_eq!(l.field, "status.allocatable");
        }
    }
}

#[test]
fn ts013_minimum_held_by_nodes_the_pod_cannot_use() {
    let spread = |policies: &str| {
        web_with(&format!(
            "      topologySpreadConstraints:\n      - {{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}, matchLabelKeys: [pod-template-hash]{policies}}}\n"
        ))
    };
    // Zone c's only node is tainted: counted under the default nodeTaintsPolicy Ignore.
    let m = messages(&format!("{NODES3}---\n{}", spread("")));
    assert_eq!(
        m,
        [
            "TS013 spec.template.spec.topologySpreadConstraints[0].nodeTaintsPolicy: c of \"zone\" holds the global minimum (0) though the pod can use none of its nodes (taints it does not tolerate, counted under nodeTaintsPolicy: Ignore): the minimum never rises, so every other domain takes at most 1 matching pods and the rest stay Pending; set nodeTaintsPolicy: Honor"
        ]
    );
    assert!(
        messages(&format!(
            "{NODES3}---\n{}",
            spread(", nodeTaintsPolicy: Honor")
        ))
        .is_empty()
    );
    // Nodes outside the pod's nodeSelector count only under nodeAffinityPolicy: Ignore.
    let selected = |policy: &str| {
        spread(policy).replace("      containers: []\n", "      containers: []\n      nodeSelector: {disk: ssd}\n      tolerations: [{operator: Exists}]\n")
    };
    assert!(messages(&format!("{NODES3}---\n{}", selected(""))).is_empty());
    let got = lints(&format!(
        "{NODES3}---\n{}",
        selected(", nodeAffinityPolicy: Ignore")
    ));
    assert_eq!(
        got,
        [(
            "TS013",
            "spec.template.spec.topologySpreadConstraints[0].nodeAffinityPolicy".to_string()
        )]
    );
}
