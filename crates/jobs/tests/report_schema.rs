//! The reports' JSON Schemas: each checked-in file is what the types generate
//! (`UPDATE_SCHEMA=1 cargo test -p topospread-jobs --test report_schema` rewrites them),
//! and real reports validate against them, optional parts (preemption, drains, refusals,
//! rollouts, every kind of validation finding) included.

use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use topospread_jobs::simulate::{SimulateRequest, schema, simulate};
use topospread_jobs::validate::{ValidateRequest, validate};
use topospread_jobs::{Cluster, ClusterSource, Context};

fn schema_file() -> PathBuf {
    schema_path("simulation-report.json")
}

fn schema_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(name)
}

/// The checked-in schema `name` is `generated` (rewritten first under UPDATE_SCHEMA).
fn assert_checked_in(name: &str, generated: &Value) {
    let generated = serde_json::to_string_pretty(generated).expect("schema serializes") + "\n";
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(schema_path(name), &generated).expect("schema written");
    }
    let checked_in = std::fs::read_to_string(schema_path(name)).expect("schema file reads");
    assert_eq!(
        checked_in, generated,
        "schema/{name} is stale: rerun with UPDATE_SCHEMA=1"
    );
}

#[test]
fn the_checked_in_schemas_are_the_generated_ones() {
    assert_checked_in("simulation-report.json", &schema());
    assert_checked_in(
        "validation-report.json",
        &topospread_jobs::validate::schema(),
    );
    assert_checked_in("test-report.json", &topospread_jobs::test::schema());
    assert_checked_in("explain-report.json", &topospread_jobs::explain::schema());
    let (rebalance, scale_down) = topospread_jobs::rebalance::schemas();
    assert_checked_in("rebalance-report.json", &rebalance);
    assert_checked_in("scale-down-report.json", &scale_down);
    assert_checked_in("show-report.json", &topospread_jobs::show::schema());
    assert_checked_in("guard-report.json", &topospread_jobs::guard::schema());
    assert_checked_in("capacity-report.json", &topospread_jobs::capacity::schema());
}

#[test]
fn test_reports_of_the_conformance_cases_validate() {
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/scheduler");
    let request = topospread_jobs::test::TestRequest::new(vec![cases]);
    let report = topospread_jobs::test::run(&Context::new(), &request).expect("cases run");
    assert!(report.passed > 20, "{} cases passed", report.passed);
    let value = serde_json::to_value(&report).expect("serializes");
    assert_eq!(value["kind"], "TestReport");
    assert_valid_against(&value, &schema_path("test-report.json"));
}

/// A small JSON Schema (2020-12) checker for what schemars emits: `$ref` into `$defs`,
/// `type` (one or several), `properties`/`required`/`additionalProperties`, `items`,
/// `prefixItems`, `anyOf`/`oneOf`, `enum`, `const`, `minimum`. Stricter than the
/// standard in one way: an object field the schema does not describe is an error, so a
/// report cannot carry undocumented fields.
fn check(schema: &Value, value: &Value, root: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(s) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            errors.push(format!("{path}: not allowed"));
        }
        return;
    };
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        match root.get("$defs").and_then(|d| d.get(name)) {
            Some(def) => check(def, value, root, path, errors),
            None => errors.push(format!("{path}: unresolved $ref {r}")),
        }
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let fits = types.iter().any(|t| match *t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            _ => false,
        });
        if !fits {
            errors.push(format!("{path}: {value} is not of type {types:?}"));
            return;
        }
    }
    if let Some(min) = s.get("minimum").and_then(Value::as_f64)
        && value.as_f64().is_some_and(|v| v < min)
    {
        errors.push(format!("{path}: {value} is below {min}"));
    }
    if let Some(options) = s.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        errors.push(format!("{path}: {value} is not one of {options:?}"));
    }
    if let Some(c) = s.get("const")
        && c != value
    {
        errors.push(format!("{path}: {value} is not {c}"));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = s.get(key).and_then(Value::as_array) {
            let fitting = options
                .iter()
                .filter(|o| {
                    let mut e = Vec::new();
                    check(o, value, root, path, &mut e);
                    e.is_empty()
                })
                .count();
            if fitting == 0 || (key == "oneOf" && fitting > 1) {
                errors.push(format!(
                    "{path}: {value} fits {fitting} of the {key} options"
                ));
            }
        }
    }
    if let Value::Object(object) = value {
        let empty = Map::new();
        let properties = s
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        for name in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = name.as_str()
                && !object.contains_key(name)
            {
                errors.push(format!("{path}: missing required {name}"));
            }
        }
        for (k, v) in object {
            let here = format!("{path}.{k}");
            match (properties.get(k), s.get("additionalProperties")) {
                (Some(p), _) => check(p, v, root, &here, errors),
                (None, Some(extra)) => check(extra, v, root, &here, errors),
                (None, None) if !properties.is_empty() => {
                    errors.push(format!("{here}: not in the schema"));
                }
                (None, None) => {}
            }
        }
    }
    if let Value::Array(items) = value {
        let prefix = s.get("prefixItems").and_then(Value::as_array);
        for (i, item) in items.iter().enumerate() {
            let here = format!("{path}[{i}]");
            match prefix.and_then(|p| p.get(i)) {
                Some(p) => check(p, item, root, &here, errors),
                None => {
                    if let Some(each) = s.get("items") {
                        check(each, item, root, &here, errors);
                    }
                }
            }
        }
    }
}

fn assert_valid(report: &Value) {
    assert_valid_against(report, &schema_file());
}

fn assert_valid_against(report: &Value, schema_file: &Path) {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_file).expect("schema reads"))
            .expect("schema is JSON");
    let mut errors = Vec::new();
    check(&schema, report, &schema, "$", &mut errors);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cli/tests/fixtures")
        .join(name)
}

#[test]
fn the_docs_example_report_validates() {
    let run = simulate(
        &Context::new(),
        SimulateRequest::new(Cluster::default()),
        &mut (),
    )
    .expect("simulates");
    let report = serde_json::to_value(&run.report).expect("serializes");
    assert_eq!(report["apiVersion"], "topospread.dev/v1alpha1");
    assert_eq!(report["kind"], "SimulationReport");
    assert_eq!((run.report.scheduled, run.report.pending), (6, 0));
    assert_valid(&report);
}

#[test]
fn reports_with_every_optional_part_validate() {
    let mut checked = 0;
    let mut parts = std::collections::BTreeSet::new();
    let mut files = Vec::new();
    let mut dirs = vec![fixture("")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixtures folder") {
            let path = entry.expect("fixture entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "yaml") {
                files.push(path);
            }
        }
    }
    files.sort();
    for f in files {
        // Fixtures that are meant to be refused say so by failing; those are not reports.
        let Ok(run) = simulate(
            &Context::new(),
            SimulateRequest::new(vec![f.clone()]),
            &mut (),
        ) else {
            continue;
        };
        let report = serde_json::to_value(&run.report).expect("serializes");
        for part in ["preempted", "refused", "removed", "rollouts"] {
            if report[part].as_array().is_some_and(|a| !a.is_empty()) {
                parts.insert(part);
            }
        }
        let mut errors = Vec::new();
        let schema: Value =
            serde_json::from_str(&std::fs::read_to_string(schema_file()).expect("schema reads"))
                .expect("schema is JSON");
        check(&schema, &report, &schema, "$", &mut errors);
        assert!(errors.is_empty(), "{}: {}", f.display(), errors.join("\n"));
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} fixtures simulated");
    // Preemption and drains have tests of their own below.
    assert!(
        parts.contains("rollouts"),
        "the fixtures exercised only {parts:?}"
    );
}

/// One 1-cpu node running a low-priority pod of a ReplicaSet, and a high-priority pod
/// that needs the room: it preempts, and the ReplicaSet's replacement stays Pending.
const PREEMPTION: &str = r#"
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: low, namespace: default, uid: rs-low}
spec:
  replicas: 1
  selector: {matchLabels: {app: low}}
  template:
    metadata: {labels: {app: low}}
    spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: low-1
  namespace: default
  labels: {app: low}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: low, uid: rs-low, controller: true}]
spec:
  nodeName: n1
  containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: high, namespace: default}
spec:
  priorityClassName: high
  containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
"#;

#[test]
fn a_preemption_report_and_its_cluster_yaml() {
    let dir = std::env::temp_dir().join(format!("topospread-jobs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("preemption.yaml");
    std::fs::write(&file, PREEMPTION).expect("fixture written");
    let mut request = SimulateRequest::new(vec![file]);
    request.write_back = true;
    let run = simulate(&Context::new(), request, &mut ()).expect("simulates");
    let report = serde_json::to_value(&run.report).expect("serializes");
    assert_eq!(report["preempted"][0]["pod"], "low-1", "{report}");
    assert_eq!(report["preempted"][0]["by"], "default/high", "{report}");
    assert_valid(&report);
    // The cluster written back has the preemptor bound and the victim gone; its
    // replacement is written pending (no room is left for it).
    let yaml = run.cluster_yaml().expect("cluster yaml");
    assert!(!yaml.contains("name: low-1\n"), "{yaml}");
    let high = yaml
        .split("---\n")
        .find(|d| d.starts_with("apiVersion: v1\nkind: Pod") && d.contains("name: high\n"))
        .expect("the preemptor is written");
    assert!(high.contains("nodeName: n1"), "{high}");
    let replacement = yaml
        .split("---\n")
        .find(|d| d.contains("kind: Pod") && d.contains("app: low"))
        .expect("the replacement is written");
    assert!(!replacement.contains("nodeName"), "{replacement}");
}

#[test]
fn a_drain_report_validates() {
    let mut request = SimulateRequest::new(Cluster::default());
    request.drain = vec!["node1".into()];
    let run = simulate(&Context::new(), request, &mut ()).expect("simulates");
    let report = serde_json::to_value(&run.report).expect("serializes");
    assert_eq!(report["drained"]["cordoned"][0], "node1");
    assert_valid(&report);
    let mut request = SimulateRequest::new(Cluster::default());
    request.remove_node = vec!["node1".into()];
    let run = simulate(&Context::new(), request, &mut ()).expect("simulates");
    let report = serde_json::to_value(&run.report).expect("serializes");
    assert_eq!(report["drained"]["nodes"][0], "node1");
    assert_valid(&report);
}

#[test]
fn the_checker_rejects_what_the_schema_forbids() {
    let run = simulate(
        &Context::new(),
        SimulateRequest::new(Cluster::default()),
        &mut (),
    )
    .expect("simulates");
    let mut report = serde_json::to_value(&run.report).expect("serializes");
    report["scheduled"] = Value::String("six".into());
    report["pods"][0]["colour"] = Value::String("blue".into());
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_file()).expect("schema reads"))
            .expect("schema is JSON");
    let mut errors = Vec::new();
    check(&schema, &report, &schema, "$", &mut errors);
    assert!(
        errors.iter().any(|e| e.starts_with("$.scheduled")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.starts_with("$.pods[0].colour")),
        "{errors:?}"
    );
}

#[test]
fn validation_reports_of_every_fixture_validate() {
    let dir = fixture("validate");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("validate fixtures")
        .map(|e| e.expect("fixture entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut kinds = std::collections::BTreeSet::new();
    let mut checked = 0;
    for f in files {
        // Files that do not parse are refused before any report: nothing to check.
        let Ok(report) = validate(&Context::new(), ValidateRequest::new(vec![f.clone()])) else {
            continue;
        };
        let value = serde_json::to_value(&report).expect("serializes");
        assert_eq!(value["apiVersion"], "topospread.dev/v1alpha1");
        assert_eq!(value["kind"], "ValidationReport");
        for d in &report.diagnostics {
            kinds.insert(serde_json::to_value(d).expect("serializes")["type"].to_string());
        }
        assert_valid_against(&value, &schema_path("validation-report.json"));
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} fixtures validated");
    for kind in ["Invalid", "Required", "Lint"] {
        assert!(
            kinds.contains(&format!("{kind:?}")),
            "no {kind} finding among {kinds:?}"
        );
    }
}

#[test]
fn explain_reports_validate_scheduled_preempting_and_pending() {
    use topospread_jobs::explain::{ExplainRequest, KIND, explain};
    let dir = std::env::temp_dir().join(format!("topospread-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("preemption.yaml");
    std::fs::write(&file, PREEMPTION).expect("fixture written");
    let schema = schema_path("explain-report.json");
    // The docs' example: a pod that schedules.
    let docs = explain(
        &Context::new(),
        ExplainRequest::new(Cluster::default(), "deployment/mypod"),
    )
    .expect("explains");
    assert!(docs.scheduled());
    // A pod that preempts: the failed cycle and its victims come with it.
    let high = explain(
        &Context::new(),
        ExplainRequest::new(vec![file.clone()], "high"),
    )
    .expect("explains");
    assert!(high.scheduled());
    let failed = high
        .cycle
        .preempting_cycle
        .as_ref()
        .expect("the failed cycle");
    assert_eq!(failed.preemption.as_ref().map(|p| p.victims.len()), Some(1));
    // The evicted pod's replacement: pending, with the scheduler's message.
    let replacement = explain(
        &Context::new(),
        ExplainRequest::new(vec![file.clone()], "replicaset/low"),
    );
    for report in [docs, high] {
        let value = serde_json::to_value(&report).expect("serializes");
        assert_eq!(value["kind"], KIND);
        assert_eq!(value["apiVersion"], "topospread.dev/v1alpha1");
        assert_valid_against(&value, &schema);
    }
    let err = replacement.expect_err("every pod of the ReplicaSet is bound before the run");
    assert!(err.to_string().contains("replicaset default/low"), "{err}");
    let missing =
        explain(&Context::new(), ExplainRequest::new(vec![file], "nope")).expect_err("no such pod");
    assert!(
        missing
            .to_string()
            .starts_with("pod default/nope: not found"),
        "{missing}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rebalance_and_scale_down_reports_validate() {
    use topospread_jobs::rebalance::{
        RebalanceRequest, ScaleDownRequest, rebalance as plan, scale_down,
    };
    use topospread_planning::rebalance::Strategy;
    let shapes = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/rebalance");
    let mut checked = 0;
    for (shape, strategy) in [
        ("full-zone", Strategy::Topospread),
        ("full-zone", Strategy::Descheduler),
        ("zone-vs-hostname", Strategy::Topospread),
        ("pdb-forbids", Strategy::Topospread),
    ] {
        let mut request = RebalanceRequest::new(vec![shapes.join(format!("{shape}.yaml"))]);
        request.strategy = strategy;
        request.write_back = true;
        let mut result = plan(&Context::new(), request).expect("plans");
        let value = serde_json::to_value(&result.report).expect("serializes");
        assert_eq!(value["kind"], "RebalanceReport");
        assert_valid_against(&value, &schema_path("rebalance-report.json"));
        assert!(
            result
                .cluster_yaml()
                .expect("writes YAML")
                .contains("kind: Node")
        );
        checked += 1;
    }
    assert_eq!(checked, 4);
    let report = scale_down(
        &Context::new(),
        ScaleDownRequest::new(
            vec![shapes.join("scale-plan-10-to-3.yaml")],
            "replicaset/web=3",
        ),
    )
    .expect("plans the scale-down");
    assert_eq!(report.plan.to, 3);
    let value = serde_json::to_value(&report).expect("serializes");
    assert_eq!(value["kind"], "ScaleDownReport");
    assert_valid_against(&value, &schema_path("scale-down-report.json"));
    let bad = scale_down(
        &Context::new(),
        ScaleDownRequest::new(vec![shapes.join("scale-plan-10-to-3.yaml")], "web"),
    )
    .expect_err("no replica count");
    assert!(bad.to_string().contains("expected KIND/NAME=N"), "{bad}");
}

/// The `app: web` pods `wide.yaml` binds.
const WIDE_WEB_PODS: u32 = 9;

#[test]
fn show_reports_validate_with_and_without_a_selector() {
    use topospread_jobs::show::{ShowRequest, show};
    // The docs' conflict: mypod pending beside five foo=bar pods, 3 in zoneA, 2 in zoneB.
    let docs = show(
        &Context::new(),
        ShowRequest::new(vec![fixture("docs-conflict.yaml")]),
    )
    .expect("shows");
    let spread = docs.report.spread.as_ref().expect("the engine's counts");
    assert_eq!(spread.pod, "default/mypod");
    let zone = &spread.constraints[0];
    assert_eq!((zone.topology_key.as_str(), zone.skew), ("zone", 1));
    assert_eq!(docs.report.domains.len(), docs.topology_keys.len());
    let zones = &docs.report.domains[0];
    let counts: Vec<(&str, u32)> = zones.counts.iter().map(|(d, n)| (d.as_str(), *n)).collect();
    assert_eq!(counts, [("zoneA", 3), ("zoneB", 2)]);
    let mut request = ShowRequest::new(vec![fixture("wide.yaml")]);
    request.selector = Some("app=web".into());
    let marked = show(&Context::new(), request).expect("shows");
    assert!(marked.report.spread.is_none());
    let outermost = &marked.report.domains[0];
    assert_eq!(
        outermost.counts.values().sum::<u32>(),
        WIDE_WEB_PODS,
        "{outermost:?}"
    );
    for report in [docs.report, marked.report] {
        let value = serde_json::to_value(&report).expect("serializes");
        assert_eq!(value["kind"], "ShowReport");
        assert_valid_against(&value, &schema_path("show-report.json"));
    }
    let mut bad = ShowRequest::new(ClusterSource::default());
    bad.selector = Some("app in (".into());
    assert!(show(&Context::new(), bad).is_err());
}

#[test]
fn guard_reports_validate_with_patches_user_costs_and_notes() {
    let shapes = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/guard");
    // (shape, at least this many patches, notes, user-set costs left alone)
    for (shape, patches, notes, user_costs) in [("crowded-node", 6, 0, 0), ("bad-pods", 1, 3, 1)] {
        let request =
            topospread_jobs::guard::GuardRequest::new(vec![shapes.join(format!("{shape}.yaml"))]);
        let report = topospread_jobs::guard::plan(&Context::new(), &request).expect("guard plans");
        let value = serde_json::to_value(&report).expect("serializes");
        assert_eq!(value["apiVersion"], "topospread.dev/v1alpha1", "{shape}");
        assert_eq!(value["kind"], "GuardReport", "{shape}");
        assert!(
            report.plan.patches().count() >= patches,
            "{shape}: {} patches",
            report.plan.patches().count()
        );
        assert!(
            report.plan.notes.len() >= notes,
            "{shape}: {:?}",
            report.plan.notes
        );
        let kept: usize = report
            .plan
            .replica_sets
            .iter()
            .map(|r| r.user_costs.len())
            .sum();
        assert_eq!(kept, user_costs, "{shape}");
        assert_valid_against(&value, &schema_path("guard-report.json"));
    }
}

#[test]
fn capacity_reports_validate() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fixtures/capacity");
    let mut request = topospread_jobs::capacity::CapacityRequest::new(
        Cluster::new(vec![fixtures.join("idle.yaml")]),
        vec![fixtures.join("nodegroup.yaml")],
    );
    request.remove_idle = true;
    let report = topospread_jobs::capacity::capacity(&Context::new(), request).expect("plans");
    let value = serde_json::to_value(&report).expect("serializes");
    assert_eq!(value["kind"], "CapacityReport");
    assert_valid_against(&value, &schema_path("capacity-report.json"));
}
