//! `topospread validate`, run as a user runs it: the built binary on the fixtures in
//! `tests/fixtures/validate/`, checking exit codes, kubectl-style lines and the JSON schema,
//! with insta snapshots of the text output.

use std::path::PathBuf;
use std::process::Command;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/validate")
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `topospread validate ARGS` inside the fixtures folder, so paths in the output are
/// the short names given.
fn validate(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_topospread"))
        .arg("validate")
        .args(args)
        .current_dir(fixtures())
        .output()
        .expect("the binary runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn exit_0_when_valid() {
    let r = validate(&["-f", "valid.yaml"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .ends_with("2 objects checked: 0 errors, 0 warnings\n")
    );
}

#[test]
fn exit_1_when_invalid_with_kubectl_lines() {
    let r = validate(&["-f", "invalid.yaml"]);
    assert_eq!(r.code, 1);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines.contains(
        &"deployment/web: spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"
    ));
    assert!(lines.contains(
        &"pod/cache (namespace prod): spec.topologySpreadConstraints[1].labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
    ));
    insta::assert_snapshot!("invalid", r.stdout);
}

#[test]
fn several_files_prefix_the_file() {
    let r = validate(&["-f", "valid.yaml", "invalid.yaml"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.lines().any(|l| l
        == "invalid.yaml: deployment/web: spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"));
    // -f may also be repeated, and --filename is kubectl's spelling.
    let r = validate(&["-f", "valid.yaml", "--filename", "invalid.yaml"]);
    assert_eq!(r.code, 1);
}

#[test]
fn lints_warn_and_strict_fails() {
    let r = validate(&["-f", "lints.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    insta::assert_snapshot!("lints", r.stdout);
    let r = validate(&["-f", "lints.yaml", "--strict"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains(
        "deployment/api: spec.template.spec.topologySpreadConstraints[1].labelSelector: error[TS001]: "
    ));
    assert!(!r.stdout.contains("warning["));
}

#[test]
fn template_pods_rejected_is_an_error() {
    let r = validate(&["-f", "template-pods-rejected.yaml"]);
    assert_eq!(r.code, 1);
    insta::assert_snapshot!("template_pods_rejected", r.stdout);
}

#[test]
fn cluster_lints_run_with_nodes() {
    let r = validate(&["-f", "cluster.yaml", "workloads.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    insta::assert_snapshot!("cluster", r.stdout);
    // Without the nodes, they are skipped and say so.
    let r = validate(&["-f", "workloads.yaml"]);
    assert_eq!(r.code, 0);
    assert!(!r.stdout.contains("[TS005]"));
    assert!(r.stdout.contains("note: cluster lints skipped"));
}

#[test]
fn scheduler_configuration_args() {
    let r = validate(&["-f", "scheduler-config.yaml"]);
    assert_eq!(r.code, 1);
    insta::assert_snapshot!("scheduler_config", r.stdout);
}

#[test]
fn exit_2_when_a_file_cannot_be_read_or_parsed() {
    // Reported on its line with the others' findings; the run exits 2 at the end.
    for (args, wanted) in [
        (&["-f", "broken.yaml"][..], "broken.yaml: invalid YAML"),
        (
            &["-f", "valid.yaml", "missing.yaml"][..],
            "missing.yaml: cannot read",
        ),
    ] {
        let r = validate(args);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stdout.contains(wanted), "{args:?}: {}", r.stdout);
        assert!(r.stdout.ends_with(", 1 input not read\n"), "{}", r.stdout);
    }
    // An unknown field is an error of its object, which is still checked.
    let r = validate(&["-f", "unknown-field.yaml"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("pod/p: spec.topologySpreadConstraints[0].maxSkw: unknown field (a typo"),
        "{}",
        r.stdout
    );
}

#[test]
fn json_schema() {
    let r = validate(&["-f", "invalid.yaml", "lints.yaml", "-o", "json"]);
    assert_eq!(r.code, 1);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("one JSON object");
    assert_eq!(v["apiVersion"], "topospread.dev/v1alpha1");
    assert_eq!(v["kind"], "ValidationReport");
    assert_eq!(v["summary"]["errors"], 6);
    assert_eq!(v["summary"]["warnings"], 3);
    assert_eq!(
        v["skipped_lints"],
        serde_json::json!(["TS002", "TS003", "TS005", "TS009", "TS010", "TS013"])
    );
    let first = &v["diagnostics"][0];
    assert_eq!(
        first,
        &serde_json::json!({
            "file": "invalid.yaml",
            "document": 1,
            "item": null,
            "object": {"kind": "Deployment", "namespace": null, "name": "web"},
            "field": "spec.template.spec.topologySpreadConstraints[0].maxSkew",
            "severity": "error",
            "type": "Invalid",
            "code": null,
            "value": "0",
            "detail": "must be greater than zero",
            "why": null,
            "message": "spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"
        })
    );
    let lint = v["diagnostics"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["code"] == "TS004"))
        .expect("a TS004 diagnostic");
    assert_eq!(lint["type"], "Lint");
    assert_eq!(lint["severity"], "warning");
    assert_eq!(lint["file"], "lints.yaml");
    assert_eq!(lint["document"], 2);
    assert_eq!(lint["object"]["namespace"], "data");
    assert!(lint["why"].as_str().is_some_and(|w| w.contains("https://")));
}

#[test]
fn a_rollout_that_cannot_finish_is_linted() {
    let r = validate(&["-f", "rollout-stall.yaml"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let Some(line) = r.stdout.lines().find(|l| l.contains("[TS009]")) else {
        panic!("no TS009: {}", r.stdout)
    };
    assert!(
        line.starts_with(
            "deployment/web (namespace default): spec.template.spec.topologySpreadConstraints[0]: warning[TS009]: a rollout can never finish: the strategy resolves to maxUnavailable 0 (maxSurge 1) for 3 replicas"
        ),
        "{line}"
    );
    assert!(
        line.contains(
            "minDomains 4 exceeds the 3 eligible domain(s) of \"topology.kubernetes.io/zone\""
        ),
        "{line}"
    );
    let r = validate(&["-f", "rollout-stall.yaml", "--strict"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("error[TS009]"), "{}", r.stdout);
}

/// A template's pod-deletion-cost with a plus sign is refused as the API server refuses
/// it, by `validate` and by `simulate` alike.
#[test]
fn a_plus_signed_deletion_cost_is_refused() {
    let want = "deployment/web (namespace default): spec.template.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: \"+7\": must be a 32bit integer";
    let r = validate(&["-f", "deletion-cost-plus.yaml"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(want), "{}", r.stdout);
    let out = Command::new(env!("CARGO_BIN_EXE_topospread"))
        .args(["simulate", "-f", "deletion-cost-plus.yaml"])
        .current_dir(fixtures())
        .output()
        .expect("the binary runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(want));
}

/// A folder with bad files: every file's problems are reported, the good files are still
/// checked, an unknown field is an error of its object (which is still checked), and the
/// run exits 2 at the end for the files that could not be read.
#[test]
fn every_file_is_reported_and_the_rest_checked() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("validate-mixed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).expect("dir");
    let deployment = |name: &str, extra: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers:\n      - name: c\n        image: i\n{extra}"
        )
    };
    let files = [
        (
            "a-helm.yaml",
            "kind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n".to_string(),
        ),
        (
            "b-broken.yaml",
            "kind: Pod\nmetadata: {name: x\n".to_string(),
        ),
        (
            "c-typo.yaml",
            deployment(
                "typo",
                "        securityContext: {allowPrivilegedEscalation: false}\n      topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: typo}}}]\n",
            ),
        ),
        ("sub/good.yaml", deployment("good", "")),
    ];
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).expect("write");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_topospread"))
        .args(["validate", "-R", "-f", "."])
        .current_dir(&dir)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("./a-helm.yaml: a Helm template"),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("./b-broken.yaml: invalid YAML: "),
        "{stdout}"
    );
    assert_eq!(
        lines[2],
        "./c-typo.yaml: deployment/typo: spec.template.spec.containers[0].securityContext.allowPrivilegedEscalation: unknown field (a typo, or a field of another release: the API server refuses it under strict field validation; the rest of the object was checked)"
    );
    assert!(
        lines[3].starts_with("./c-typo.yaml: deployment/typo: spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("2 objects checked: 2 errors, 1 warning, 2 inputs not read\n"),
        "{stdout}"
    );
    // Without the unreadable files, the findings exit 1.
    let out = Command::new(env!("CARGO_BIN_EXE_topospread"))
        .args(["validate", "-f", "c-typo.yaml", "-f", "sub", "-o", "json"])
        .current_dir(&dir)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["summary"]["errors"], 2);
    assert_eq!(report["diagnostics"][0]["type"], "UnknownField");
}

/// TS010 to TS013 through `validate`, and TS013 in `explain` of a pod it keeps Pending.
#[test]
fn lints_of_unusable_nodes_and_selectors() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("validate-lints-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let node = |name: &str, zone: &str, extra: &str| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{topology.kubernetes.io/zone: {zone}}}}}\n{extra}status: {{allocatable: {{cpu: '8', memory: 16Gi, pods: '110'}}}}\n---\n"
        )
    };
    let cluster = format!(
        "{}{}{}apiVersion: v1\nkind: Node\nmetadata: {{name: bare, labels: {{topology.kubernetes.io/zone: d}}}}\nspec: {{taints: [{{key: k, effect: NoSchedule}}]}}\n",
        node("a1", "a", ""),
        node("b1", "b", ""),
        node(
            "c1",
            "c",
            "spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\n"
        ),
    );
    std::fs::write(dir.join("cluster.yaml"), cluster).expect("write");
    let web = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 6\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: i}]\n      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app.kubernetes.io/name: web}}}]}}\n      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [pod-template-hash]}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: gpu}\nspec:\n  selector: {matchLabels: {app: gpu}}\n  template:\n    metadata: {labels: {app: gpu}}\n    spec:\n      containers: [{name: c, image: i}]\n      nodeSelector: {accelerator: h100}\n";
    std::fs::write(dir.join("apps.yaml"), web).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_topospread"))
        .args(["validate", "-f", "cluster.yaml", "-f", "apps.yaml"])
        .current_dir(&dir)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let codes: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.split_once("warning[").map(|(_, r)| &r[..5]))
        .collect();
    assert_eq!(codes, ["TS012", "TS011", "TS013", "TS010"], "{stdout}");
    for want in [
        "cluster.yaml: node/bare: status.allocatable: warning[TS012]",
        "apps.yaml: deployment/web: spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: warning[TS011]",
        "apps.yaml: deployment/web: spec.template.spec.topologySpreadConstraints[0].nodeTaintsPolicy: warning[TS013]: c, d of \"topology.kubernetes.io/zone\" hold the global minimum (0)",
        "set nodeTaintsPolicy: Honor",
        "apps.yaml: deployment/gpu: spec.template.spec.nodeSelector: warning[TS010]: no node of the 4 in the input",
    ] {
        assert!(stdout.contains(want), "{want}\n{stdout}");
    }
    // Two pods land (one per usable zone): the others stay Pending, and explain says why.
    let out = Command::new(env!("CARGO_BIN_EXE_topospread"))
        .args(["simulate", "-f", "cluster.yaml", "-f", "apps.yaml"])
        .current_dir(&dir)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let pending = stdout
        .lines()
        .find(|l| l.contains("<pending>") && l.contains("web-"))
        .and_then(|l| l.split_whitespace().nth(1))
        .expect("a pending web pod");
    let out = Command::new(env!("CARGO_BIN_EXE_topospread"))
        .args(["explain", "-f", "cluster.yaml", "-f", "apps.yaml", pending])
        .current_dir(&dir)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("  TS013 spec.topologySpreadConstraints[0].nodeTaintsPolicy: c, d of \"topology.kubernetes.io/zone\" hold the global minimum (0)"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
