//! The `topospread` binary end to end: output snapshots (insta) on the fixtures, exit
//! codes 0/1/2, and the one-line messages bad input gets.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failure is a failing test

#[path = "cli/admission.rs"]
mod admission;
#[path = "cli/apply.rs"]
mod apply;
#[path = "cli/capacity.rs"]
mod capacity;
#[path = "cli/config.rs"]
mod config;
#[cfg(feature = "live")]
#[path = "cli/daemon.rs"]
mod daemon;
#[path = "cli/docs.rs"]
mod docs;
#[path = "cli/explain.rs"]
mod explain;
#[path = "cli/guard.rs"]
mod guard;
#[path = "cli/html.rs"]
mod html;
#[path = "cli/image.rs"]
mod image;
#[path = "cli/input.rs"]
mod input;
#[cfg(feature = "live")]
#[path = "cli/live.rs"]
mod live;
#[path = "cli/readme.rs"]
mod readme;
#[path = "cli/real.rs"]
mod real;
#[path = "cli/rebalance.rs"]
mod rebalance;
#[path = "cli/scale.rs"]
mod scale;
#[cfg(feature = "live")]
#[path = "cli/secure.rs"]
mod secure;
#[path = "cli/statefulset.rs"]
mod statefulset;
#[path = "cli/test_command.rs"]
mod test_command;
#[cfg(feature = "live")]
#[path = "cli/ui.rs"]
mod ui;
#[path = "cli/validate.rs"]
mod validate;
#[path = "cli/versions.rs"]
mod versions;
#[path = "cli/volumes.rs"]
mod volumes;
#[path = "cli/whatif.rs"]
mod whatif;

use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn run(args: &[&str]) -> Output {
    // Output is laid out for `COLUMNS` (80 when unset): unset, so runs are alike.
    Command::new(env!("CARGO_BIN_EXE_topospread"))
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `text` to a fresh temporary file and returns its path.
fn temp(name: &str, text: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    // Written aside and renamed into place: tests running at once that write the same
    // name never read each other's half-written file.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let aside = dir.join(format!(".{name}.{n}.tmp"));
    std::fs::write(&aside, text).expect("temp file");
    std::fs::rename(&aside, &path).expect("temp file in place");
    path.display().to_string()
}

/// Fixture paths are absolute; snapshots keep only the file name.
fn scrub(text: &str) -> String {
    let dir = fixture("");
    text.replace(&dir, "fixtures/")
}

#[test]
fn simulate_default_is_the_docs_example() {
    let o = run(&["simulate", "--show"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("simulate_default", stdout(&o));
}

#[test]
fn simulate_reports_pending_pods_and_exits_1() {
    let o = run(&["simulate", "-f", &fixture("docs-conflict.yaml")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    insta::assert_snapshot!("simulate_conflict", stdout(&o));
}

#[test]
fn simulate_workloads() {
    let o = run(&["simulate", "-f", &fixture("workloads.yaml"), "--show"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    insta::assert_snapshot!("simulate_workloads", scrub(&stdout(&o)));
}

#[test]
fn simulate_counts_with_match_label_keys() {
    let o = run(&["simulate", "-f", &fixture("match-label-keys.yaml")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    // The old revision's three pods in zone a do not count for the new revision.
    assert!(out.contains("    before: a=0 b=0  skew 0\n"), "{out}");
    assert!(out.contains("    after:  a=2 b=2  skew 0\n"), "{out}");
    assert!(out.contains("(app=web,pod-template-hash="), "{out}");
}

fn added_affinity_config(operator: &str) -> String {
    temp(
        &format!("added-affinity-{operator}.yaml"),
        &format!(
            "apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {{key: zone, operator: {operator}, values: [zoneB]}}
"
        ),
    )
}

#[test]
fn added_affinity_keeps_every_pod_off_the_excluded_zone() {
    let o = run(&["simulate", "--config", &added_affinity_config("NotIn")]);
    let out = stdout(&o);
    // The docs' example: zoneB is off limits, yet still a domain for the zone
    // constraint (inclusion policies read the pod's affinity, not the profile's), so
    // zoneA takes one pod and the rest stay pending.
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(!out.contains("zoneB\n"), "{out}");
    assert!(out.contains("1 scheduled, 5 pending"), "{out}");
    assert!(
        out.contains("2 node(s) didn't match scheduler-enforced node affinity"),
        "{out}"
    );
}

#[test]
fn invalid_added_affinity_exits_2_naming_the_field() {
    let o = run(&["simulate", "--config", &added_affinity_config("Bogus")]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]: Invalid value: \"Bogus\" is not a valid node selector operator"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn scheduling_gates_keep_a_pod_pending() {
    let o = run(&["simulate", "-f", &fixture("scheduling-gates.yaml")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("default/gated: waiting for scheduling gates: [example.com/quota]\n"),
        "{out}"
    );
    assert!(out.contains("1 scheduled, 1 pending"), "{out}");
}

#[test]
fn simulate_json_is_machine_readable() {
    let o = run(&["simulate", "-o", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["scheduled"], 6);
    assert_eq!(v["pending"], 0);
    assert_eq!(v["workloads"][0]["constraints"][0]["skew_after"], 0);
}

#[test]
fn simulate_yaml_is_the_next_input() {
    let o = run(&["simulate", "-o", "yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let path = temp("next.yaml", &stdout(&o));
    // Read back: the pods are bound, the Deployment is satisfied, nothing is new.
    let again = run(&["simulate", "-f", &path, "-o", "json"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let v: serde_json::Value = serde_json::from_str(&stdout(&again)).expect("json");
    assert_eq!(v["pods"].as_array().map(Vec::len), Some(0));
    let shown = run(&["show", "-f", &path]);
    assert!(stdout(&shown).contains("zoneA (3)"), "{}", stdout(&shown));
}

#[test]
fn show_draws_domains_over_nodes_over_pods() {
    let o = run(&["show", "-f", &fixture("docs-conflict.yaml")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("show_conflict", stdout(&o));
}

/// `simulate --show` draws the key the constraints spread over: a constraint on
/// `region` is drawn as regions (their totals), not as zones or hostnames alone.
#[test]
fn simulate_show_draws_the_constraints_own_key() {
    let mut items: Vec<serde_json::Value> = (0..6)
        .map(|i| {
            serde_json::json!({"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": format!("node-{i}"), "labels": {
                    "kubernetes.io/hostname": format!("node-{i}"),
                    "topology.kubernetes.io/zone": format!("zone-{}", i % 3),
                    "topology.kubernetes.io/region": format!("region-{}", i % 2)}},
                "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}})
        })
        .collect();
    let sel = serde_json::json!({"matchLabels": {"app": "web"}});
    items.push(
        serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 4, "selector": sel, "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "w", "image": "w"}],
                "topologySpreadConstraints": [{"maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/region",
                    "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}]}}}}),
    );
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    let f = temp("show-region.json", &list.to_string());
    let o = run(&["simulate", "-f", &f, "--show"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let picture = &out[out.find("+---").expect("a picture")..];
    assert!(
        picture.contains("region-0 (2)") && picture.contains("region-1 (2)"),
        "{out}"
    );
    assert!(
        !picture.contains("zone-0 ("),
        "zones are not the constraint's key: {out}"
    );
    assert!(
        picture.contains("topology.kubernetes.io/region: region-0=2 region-1=2, skew 0"),
        "{out}"
    );
}

#[test]
fn show_json_is_the_versioned_counts() {
    let o = run(&["show", "-f", &fixture("docs-conflict.yaml"), "-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["kind"], "ShowReport");
    assert_eq!(
        v["domains"][0]["counts"],
        serde_json::json!({"zoneA": 3, "zoneB": 2})
    );
    assert_eq!(v["spread"]["pod"], "default/mypod");
    let bad = run(&["show", "-l", "app in (", "-o", "json"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stdout(&bad).is_empty(),
        "nothing on stdout: {}",
        stdout(&bad)
    );
}

#[test]
fn show_adds_what_the_plugin_counts_where_it_differs_from_the_drawing() {
    // b1 is tainted and the constraint honours taints: the drawing shows zone-b, the
    // plugin does not count it (nor x1, which has no zone).
    let path = temp(
        "show-policies.yaml",
        "apiVersion: v1\nkind: List\nitems:\n\
- {apiVersion: v1, kind: Node, metadata: {name: a1, labels: {topology.kubernetes.io/zone: zone-a}}, status: {allocatable: {cpu: '4', pods: '10'}}}\n\
- {apiVersion: v1, kind: Node, metadata: {name: b1, labels: {topology.kubernetes.io/zone: zone-b}}, spec: {taints: [{key: k, effect: NoSchedule}]}, status: {allocatable: {cpu: '4', pods: '10'}}}\n\
- {apiVersion: v1, kind: Node, metadata: {name: x1}, status: {allocatable: {cpu: '4', pods: '10'}}}\n\
- {apiVersion: v1, kind: Pod, metadata: {name: p1, namespace: default, labels: {app: web}}, spec: {nodeName: a1, containers: [{name: c, image: i}], topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: Honor, labelSelector: {matchLabels: {app: web}}}]}}\n",
    );
    let o = run(&["show", "-f", &path, "--width", "200"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("zone-b (0)"),
        "the drawing shows every node: {out}"
    );
    assert!(
        out.contains("As PodTopologySpread counts for default/p1 (eligible domains only):"),
        "{out}"
    );
    let counted = out
        .split("As PodTopologySpread counts")
        .nth(1)
        .expect("the plugin's counts");
    assert!(counted.contains("zone-a=1  skew 0"), "{counted}");
    assert!(
        !counted.contains("zone-b"),
        "a tainted node's domain is not counted: {counted}"
    );
}

#[test]
fn show_wraps_wide_clusters() {
    let o = run(&[
        "show",
        "-f",
        &fixture("wide.yaml"),
        "-l",
        "app=web",
        "--width",
        "80",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("show_wide", stdout(&o));
}

#[test]
fn show_with_explicit_keys() {
    let o = run(&[
        "show",
        "-f",
        &fixture("wide.yaml"),
        "--topology-key",
        "topology.kubernetes.io/zone",
        "-l",
        "app in (web,cache)",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("show_zone_only", stdout(&o));
}

#[test]
fn explain_a_pending_pod() {
    let o = run(&[
        "explain",
        "-f",
        &fixture("docs-conflict.yaml"),
        "mypod",
        "--wide",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    insta::assert_snapshot!("explain_conflict", stdout(&o));
}

#[test]
fn explain_groups_nodes_by_verdict_by_default() {
    let o = run(&["explain", "-f", &fixture("docs-conflict.yaml"), "mypod"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    insta::assert_snapshot!("explain_conflict_grouped", stdout(&o));
    let o = run(&["explain", "-f", &fixture("soft-spread.yaml"), "dflt"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("explain_soft_spread_grouped", stdout(&o));
}

#[test]
fn explain_shows_what_score_counted() {
    let o = run(&[
        "explain",
        "-f",
        &fixture("soft-spread.yaml"),
        "dflt",
        "--wide",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    // The system defaults, with the Service's selector, as Score counted them after
    // `old` (n1) and `soft` (placed before this pod) are bound.
    assert!(
        out.contains("topology.kubernetes.io/zone maxSkew=5 ScheduleAnyway app=web"),
        "{out}"
    );
    insta::assert_snapshot!("explain_soft_spread", out);
}

#[test]
fn explain_a_pod_made_from_a_workload() {
    let o = run(&[
        "explain",
        "-f",
        &fixture("workloads.yaml"),
        "data/db-1",
        "--wide",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    insta::assert_snapshot!("explain_statefulset", stdout(&o));
}

#[test]
fn explain_unknown_pod_exits_2() {
    let o = run(&["explain", "-f", &fixture("docs-conflict.yaml"), "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
    assert!(
        stderr(&o).contains("pod default/nope: not found"),
        "{}",
        stderr(&o)
    );
}

/// Bad input: exit 2, one line on stderr naming file, object and field, nothing on stdout.
fn bad(name: &str, text: &str, args: &[&str], want: &[&str]) {
    let path = temp(name, text);
    let mut all = vec!["simulate", "-f", path.as_str()];
    all.extend_from_slice(args);
    let o = run(&all);
    assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
    assert!(stdout(&o).is_empty(), "{name}: stdout: {}", stdout(&o));
    let err = scrub(&stderr(&o));
    assert_eq!(err.lines().count(), 1, "{name}: {err}");
    for w in want {
        assert!(err.contains(w), "{name}: want {w:?} in {err}");
    }
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    bad(
        "unparseable.yaml",
        "a: [",
        &[],
        &["unparseable.yaml", "invalid YAML"],
    );
    bad(
        "maxskew.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: i}]\n      topologySpreadConstraints: [{maxSkew: 0, minDomains: -1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]\n",
        &[],
        &[
            "maxskew.yaml: deployment/web: spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
        ],
    );
    bad(
        "replicas.yaml",
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  replicas: -1\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: c, image: i}]}\n",
        &[],
        &[
            "replicas.yaml: statefulset/db: spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ],
    );
    bad(
        "name.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: \"evil\\e[31m\\nname\"}\nspec: {containers: [{name: c, image: i}]}\n",
        &[],
        &[
            "name.yaml: pod/evil\\u{1b}[31m\\nname: metadata.name: Invalid value: \"evil\\x1b[31m\\nname\"",
        ],
    );
    bad(
        "items.yaml",
        "apiVersion: v1\nkind: List\nitems: {metadata: {name: x}}\n",
        &[],
        &["items.yaml: document 1: List: items: Invalid value: object: must be a list of objects"],
    );
    bad(
        "dangling.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: ghost, containers: [{name: c, image: i}]}\n",
        &[],
        &[
            "dangling.yaml",
            "pod default/p",
            "spec.nodeName",
            "\"ghost\"",
        ],
    );
    bad(
        "field.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeNme: x}\n",
        &[],
        &["field.yaml", "pod/p", "spec.nodeNme", "unknown field"],
    );
    bad(
        "quantity.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {allocatable: {cpu: lots, pods: '10'}}\n",
        &[],
        &[
            "quantity.yaml",
            "node/node-a",
            "status.allocatable[cpu]",
            "\"lots\"",
        ],
    );
    let config = temp(
        "config.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    filter:\n      enabled: [{name: Bogus}]\n",
    );
    bad(
        "ok.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
        &["--config", &config],
        &[
            "config.yaml",
            "profiles[0].plugins.filter.enabled[0].name",
            "\"Bogus\"",
        ],
    );
}

#[test]
fn invalid_template_is_reported_and_the_rest_goes_on() {
    let path = temp(
        "template.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: bad}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: c, image: i}]\n      tolerations: [{key: k, operator: Exists, effect: Sometimes}]\n---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: good}\nspec:\n  replicas: 2\n  selector: {matchLabels: {a: c}}\n  template:\n    metadata: {labels: {a: c}}\n    spec: {containers: [{name: c, image: i}]}\n",
    );
    let o = run(&["simulate", "-f", &path]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("2 scheduled, 0 pending"), "{out}");
    assert!(
        out.contains("replicaset/bad: spec.template.spec.tolerations[0].effect"),
        "{out}"
    );
}

#[test]
fn huge_files_are_refused() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("big.yaml");
    let f = std::fs::File::create(&path).expect("file");
    f.set_len(257 * 1024 * 1024).expect("sparse file");
    let o = run(&["show", "-f", &path.display().to_string()]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("big.yaml: input larger than 256 MiB (268435456 bytes); --max-input-bytes raises the limit"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_selector_exits_2() {
    let o = run(&["show", "-l", "app in web"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
    assert!(stderr(&o).contains("invalid selector"), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_2() {
    let o = run(&["simulate", "-o", "xml"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bench_json_reports_the_measured_figures() {
    let o = run(&[
        "bench",
        "topology-spreading-500nodes",
        "--format",
        "json",
        "--runs",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    assert_eq!(v["workload"], "topology-spreading-500nodes");
    for key in [
        "pods_per_second",
        "p50_ms",
        "p99_ms",
        "peak_rss_bytes",
        "nodes_scored_per_pod",
    ] {
        assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {v}");
    }
    assert!(v["p50_ms"].as_f64() <= v["p99_ms"].as_f64(), "{v}");
    assert_eq!(v["scheduled"], v["measured_pods"], "{v}");
    assert_eq!(v["runs_pods_per_second"].as_array().map(Vec::len), Some(2));
    // Adaptive percentageOfNodesToScore on 500 nodes: 50 - 500/125 = 46% of them.
    assert!(v["nodes_scored_per_pod"].as_f64() <= Some(230.0), "{v}");
}

#[test]
fn bench_unknown_workload_exits_2() {
    let o = run(&["bench", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("workload \"nope\""), "{}", stderr(&o));
}

const MISSING_PRIORITY_CLASS: &str = "apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a}}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: ghost}
spec: {priorityClassName: nope, containers: [{name: c, image: pause}]}
---
apiVersion: v1
kind: Pod
metadata: {name: fine}
spec: {priorityClassName: high, containers: [{name: c, image: pause}]}
---
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec: {containers: [{name: c, image: pause}]}
";

#[test]
fn a_pod_naming_a_missing_priority_class_is_refused_and_the_rest_schedule() {
    let path = temp("missing-priority-class.yaml", MISSING_PRIORITY_CLASS);
    let o = run(&["simulate", "-f", &path]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(
        out.contains("Refused by admission (never created)\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "  default/ghost: pods \"ghost\" is forbidden: no PriorityClass with name nope was found\n"
        ),
        "{out}"
    );
    assert!(out.contains("2 scheduled, 0 pending, 1 refused"), "{out}");

    let o = run(&["simulate", "-f", &path, "-o", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["scheduled"], 2);
    assert_eq!(json["refused"][0]["pod"], "ghost");
    assert_eq!(
        json["refused"][0]["message"],
        "pods \"ghost\" is forbidden: no PriorityClass with name nope was found"
    );
}

#[test]
fn simulate_summarises_keys_with_more_domains_than_fit_a_line() {
    let f = fixture("forty-nodes.yaml");
    let o = run(&["simulate", "-f", &f]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let spread = &out[out.find("deployment/web").expect("workload section")..];
    insta::assert_snapshot!("simulate_summary", scrub(spread));
    let wide = stdout(&run(&["simulate", "-f", &f, "--wide"]));
    assert!(
        wide.contains("node-00=") && wide.contains("node-39="),
        "{wide}"
    );
    assert!(!wide.contains("--wide or -o json"), "{wide}");
}

#[test]
fn simulate_json_has_every_domain_and_the_summaries() {
    let o = run(&["simulate", "-f", &fixture("forty-nodes.yaml"), "-o", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let c = &v["workloads"][0]["constraints"][1];
    assert_eq!(c["topology_key"], "kubernetes.io/hostname");
    assert_eq!(c["after"].as_object().map(|m| m.len()), Some(40));
    assert_eq!(c["summary_after"]["domains"], 40);
    assert_eq!(c["summary_after"]["total"], 21);
}

#[test]
fn show_collapses_nodes_that_do_not_fit_the_width() {
    let f = fixture("forty-nodes.yaml");
    let o = run(&["show", "-f", &f]);
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!("show_collapsed", stdout(&o));
    // Narrower than a zone's summary: one summary for the whole cluster.
    insta::assert_snapshot!(
        "show_collapsed_narrow",
        stdout(&run(&["show", "-f", &f, "--width", "20"]))
    );
    let wide = stdout(&run(&["show", "-f", &f, "--wide"]));
    assert!(
        wide.contains("node-39 (") && !wide.contains("do not fit"),
        "{wide}"
    );
}

#[test]
fn bench_load_generates_a_dump_and_measures_simulate() {
    for format in ["json", "yaml"] {
        let o = run(&[
            "bench",
            "load",
            "--nodes",
            "12",
            "--pods",
            "60",
            "--replicas",
            "6",
            "--format",
            format,
            "-o",
            "json",
        ]);
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
        assert_eq!(v["format"], format);
        assert_eq!(
            (v["nodes"].as_u64(), v["pods"].as_u64()),
            (Some(12), Some(60))
        );
        assert_eq!(
            (v["scheduled"].as_u64(), v["pending"].as_u64()),
            (Some(6), Some(0)),
            "{v}"
        );
        for key in [
            "load_seconds",
            "schedule_seconds",
            "total_seconds",
            "peak_rss_bytes",
        ] {
            assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {v}");
        }
        assert!(
            v["dump_bytes"].as_u64().is_some_and(|b| b > 60 * 2000),
            "{v}"
        );
    }
}

#[test]
fn bench_load_measures_a_given_dump_beside_json_load() {
    // A generated YAML dump kept with its JSON form, as gen_dump.py writes them.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-bench-dump-{}", std::process::id()));
    let dir_arg = dir.display().to_string();
    let o = run(&[
        "bench", "load", "--nodes", "12", "--pods", "60", "--format", "yaml", "--dir", &dir_arg,
        "-o", "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let yaml = dir.join("cluster.yaml").display().to_string();
    let o = run(&[
        "bench",
        "load",
        "--dump",
        &yaml,
        "--replicas",
        "6",
        "--runs",
        "2",
        "-o",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    assert_eq!(v["format"], "yaml", "{v}");
    assert_eq!(v["dump"].as_str(), Some(yaml.as_str()), "{v}");
    assert!(v["nodes"].is_null() && v["pods"].is_null(), "{v}");
    assert_eq!(
        (v["scheduled"].as_u64(), v["pending"].as_u64()),
        (Some(6), Some(0)),
        "{v}"
    );
    let python = Command::new("python3").arg("--version").output().is_ok();
    if python {
        // json.load read cluster.json, beside the YAML dump, after each of the two runs.
        assert_eq!(
            v["runs_json_load_seconds"].as_array().map(Vec::len),
            Some(2),
            "{v}"
        );
        let (j, ratio, total) = (
            v["json_load_seconds"].as_f64(),
            v["ratio_to_json_load"].as_f64(),
            v["total_seconds"].as_f64(),
        );
        assert!(j.is_some_and(|j| j > 0.0), "{v}");
        let expected = total.zip(j).map(|(t, j)| t / j);
        assert!(
            ratio
                .zip(expected)
                .is_some_and(|(r, e)| (r - e).abs() < 1e-9),
            "{v}"
        );
        assert!(v["json_load_not_measured"].is_null(), "{v}");
    }
    // Without python3 on PATH, the text says so and the rest is measured.
    let o = Command::new(env!("CARGO_BIN_EXE_topospread"))
        .args(["bench", "load", "--dump", &yaml, "--replicas", "6"])
        .env("PATH", dir.join("no-such-dir"))
        .output()
        .expect("the binary runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("json.load: not measured (python3 not found)"),
        "{text}"
    );
    assert!(text.contains("simulate (total)"), "{text}");
    // A YAML dump without a JSON form beside it is measured without json.load.
    std::fs::remove_file(dir.join("cluster.json")).expect("removed");
    let o = run(&["bench", "load", "--dump", &yaml, "--replicas", "6"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("json.load: not measured (no JSON form of the dump: "),
        "{}",
        stdout(&o)
    );
    // --dump measures the dump it is given: the generator's flags do not go with it.
    let o = run(&["bench", "load", "--dump", &yaml, "--nodes", "3"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_guard_times_the_planning_on_a_generated_cluster() {
    let o = run(&[
        "bench",
        "guard",
        "--nodes",
        "30",
        "--replica-sets",
        "7",
        "--replicas",
        "12",
        "--runs",
        "2",
        "-o",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    assert_eq!(
        (
            v["nodes"].as_u64(),
            v["pods"].as_u64(),
            v["replica_sets"].as_u64()
        ),
        (Some(30), Some(84), Some(7)),
        "{v}"
    );
    // The five ReplicaSets crowded out of zone zc (6-6-0) need costs, and a scale-in
    // cannot bring them within maxSkew; the two even ones (4-4-4) keep it.
    assert!(v["patches"].as_u64().is_some_and(|p| p > 0), "{v}");
    assert_eq!(v["violated_after_scale_in"].as_u64(), Some(5), "{v}");
    assert_eq!(v["runs_planning_seconds"].as_array().map(Vec::len), Some(2));
    assert!(
        v["planning_seconds"].as_f64().is_some_and(|s| s > 0.0),
        "{v}"
    );
}

#[test]
fn bench_failing_workloads_report_the_cache() {
    for workload in ["unschedulable-500nodes", "preemption-unhelpful-500nodes"] {
        let o = run(&["bench", workload, "--format", "json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
        assert_eq!(
            (v["scheduled"].as_u64(), v["unschedulable"].as_u64()),
            (Some(0), Some(300)),
            "{v}"
        );
        assert_eq!(v["failure_cache_hits"], 299, "{v}");
    }
}

#[cfg(feature = "live")]
#[test]
fn serve_with_a_kubeconfig_that_does_not_parse_names_it_and_exits_2() {
    let config = temp(
        "serve-config.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: topospread\n",
    );
    let kubeconfig = temp("serve-kubeconfig.yaml", "this: [is not a kubeconfig");
    let o = run(&[
        "serve",
        "--config",
        &config,
        "--kubeconfig",
        &kubeconfig,
        "--secure-port",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or("");
    assert!(line.contains("serve-kubeconfig.yaml"), "{err}");
}

/// A build without the `live` feature (`--no-default-features`) parses the live flags and
/// refuses them in one line, exit 2.
#[cfg(not(feature = "live"))]
#[test]
fn live_faces_in_an_offline_build_say_how_to_get_them() {
    let o = run(&["simulate", "--live"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("built without the `live` feature"),
        "{}",
        stderr(&o)
    );
    let config = temp(
        "offline-serve-config.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: topospread\n",
    );
    let o = run(&["serve", "--config", &config]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("serve: this topospread was built without"),
        "{}",
        stderr(&o)
    );
}

#[cfg(feature = "live")]
#[test]
fn serve_refuses_kube_schedulers_own_lease_before_any_request() {
    let config = temp(
        "serve-ks-lease.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nleaderElection:\n  resourceName: kube-scheduler\nprofiles:\n- schedulerName: topospread\n",
    );
    // Nothing listens there: a request would fail with a connection error instead.
    let kubeconfig = temp(
        "serve-ks-kubeconfig.yaml",
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:9'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
    );
    let o = run(&[
        "serve",
        "--config",
        &config,
        "--kubeconfig",
        &kubeconfig,
        "--secure-port",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or("");
    assert!(
        line.contains("leaderElection.resourceName")
            && line.contains("--allow-kube-scheduler-lease"),
        "{err}"
    );
}
