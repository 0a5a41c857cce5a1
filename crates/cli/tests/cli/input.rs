//! Input as users have it: folders, stdin, lists and dumps, custom resources, finished
//! pods, generateName, a configuration among the files; and the bounds every input goes
//! through (bytes read, pods expanded), each refusal one line with exit 2.

use super::{run, stderr, stdout, temp};
use std::io::Write;
use std::process::{Command, Stdio};

const NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}\nstatus: {allocatable: {cpu: '1', memory: 4Gi, pods: '10'}}\n";
const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}\n";

/// A fresh folder under the temp dir.
fn folder(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("input-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

/// Runs the binary with `stdin` piped in.
fn run_stdin(args: &[&str], stdin: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_topospread"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("writes");
    child.wait_with_output().expect("runs")
}

/// An endless input stops at the byte cap (its speed is measured by `bench`, not here).
#[test]
fn dev_zero_is_refused_at_the_cap() {
    let o = run(&["simulate", "-f", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: /dev/zero: input larger than 256 MiB (268435456 bytes); --max-input-bytes raises the limit\n"
    );
    assert!(stdout(&o).is_empty());
}

#[test]
fn the_byte_cap_applies_to_files_and_stdin_and_the_flag_raises_it() {
    let path = temp("capped.yaml", NODE);
    let o = run(&["show", "--max-input-bytes", "20", "-f", &path]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "capped.yaml: input larger than 20 bytes; --max-input-bytes raises the limit"
        ),
        "{}",
        stderr(&o)
    );
    let o = run_stdin(&["show", "--max-input-bytes", "20", "-f", "-"], NODE);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("<stdin>: input larger than 20 bytes"),
        "{}",
        stderr(&o)
    );
    let o = run(&["show", "--max-input-bytes", "4096", "-f", &path]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn stdin_is_read_with_dash() {
    let o = run_stdin(&["simulate", "-f", "-"], &format!("{NODE}---\n{POD}"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("default    p    n1    a"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn folders_as_kubectl_reads_them() {
    let dir = folder("walk");
    std::fs::write(dir.join("nodes.yaml"), NODE).expect("write");
    std::fs::write(dir.join("notes.txt"), "not a manifest").expect("write");
    std::fs::create_dir(dir.join("apps")).expect("dir");
    std::fs::write(dir.join("apps/pod.yml"), POD).expect("write");
    // A symlink back to the folder itself: walked once, no loop.
    std::os::unix::fs::symlink(&dir, dir.join("apps/loop")).expect("symlink");
    let d = dir.display().to_string();
    let o = run(&["simulate", "-f", &d]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("0 scheduled, 0 pending"),
        "{}",
        stdout(&o)
    );
    let o = run(&["simulate", "-R", "-f", &d]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1 scheduled, 0 pending"),
        "{}",
        stdout(&o)
    );
    let empty = folder("empty");
    let o = run(&["simulate", "-f", &empty.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no .yaml, .yml or .json files"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn cluster_info_dump_lists_and_logs_load() {
    let dump = concat!(
        "{\"kind\": \"NodeList\", \"apiVersion\": \"v1\", \"metadata\": {\"resourceVersion\": \"1\"}, \"items\": [",
        "{\"metadata\": {\"name\": \"n1\", \"labels\": {\"topology.kubernetes.io/zone\": \"a\"}, \"managedFields\": [{\"manager\": \"kubelet\", \"operation\": \"Update\", \"apiVersion\": \"v1\", \"fieldsType\": \"FieldsV1\", \"fieldsV1\": {\"f:status\": {}}}]},",
        " \"status\": {\"allocatable\": {\"cpu\": \"1\", \"memory\": \"4Gi\", \"pods\": \"10\"}, \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}}]}\n",
        "{\"kind\": \"EventList\", \"apiVersion\": \"v1\", \"items\": [{\"metadata\": {\"name\": \"e1\"}}, {\"metadata\": {\"name\": \"e2\"}}]}\n",
        "{\"kind\": \"PodList\", \"apiVersion\": \"v1\", \"items\": [",
        "{\"metadata\": {\"name\": \"evicted\", \"namespace\": \"kube-system\"}, \"spec\": {\"nodeName\": \"n1\", \"containers\": [{\"name\": \"c\", \"resources\": {\"requests\": {\"cpu\": \"1\"}}}]}, \"status\": {\"phase\": \"Failed\", \"reason\": \"Evicted\"}},",
        "{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"containers\": [{\"name\": \"c\", \"resources\": {\"requests\": {\"cpu\": \"1\"}}}]}, \"status\": {\"phase\": \"Pending\"}}]}\n",
        "==== START logs for container c of pod kube-system/evicted ====\n",
        "I0101 00:00:00 started {\n",
        "==== END logs for container c of pod kube-system/evicted ====\n",
    );
    let path = temp("dump.json", dump);
    let o = run(&["simulate", "-f", &path]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    // The evicted pod's CPU is not counted: p fits on the 1-CPU node.
    assert!(out.contains("default    p    n1    a"), "{out}");
    assert!(
        out.contains("note: skipped: kind Event (v1) does not affect scheduling (2 objects:"),
        "{out}"
    );
    assert!(
        out.contains("evicted: left out: phase Succeeded or Failed"),
        "{out}"
    );
}

#[test]
fn custom_resources_are_skipped_with_one_note_per_kind() {
    let mut text = format!("{NODE}---\n{POD}");
    for i in 0..3 {
        text.push_str(&format!("---\napiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {{name: sm{i}}}\nspec: {{endpoints: [{{port: web}}]}}\n"));
    }
    text.push_str("---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec: {template: {spec: {requirements: []}}}\n");
    let path = temp("crds.yaml", &text);
    let o = run(&["simulate", "-f", &path]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let notes: Vec<String> = stdout(&o)
        .lines()
        .filter(|l| l.starts_with("note: "))
        .map(|l| l.replace(&path, "crds.yaml"))
        .collect();
    insta::assert_snapshot!("custom_resource_notes", notes.join("\n"));
}

#[test]
fn generate_name_pods_are_named_per_seed() {
    let pod = POD.replace("metadata: {name: p}", "metadata: {generateName: job-}");
    let path = temp("generate.yaml", &format!("{NODE}---\n{pod}"));
    let name = |seed: &str| {
        let o = run(&["simulate", "-f", &path, "--seed", seed, "-o", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
        v["pods"][0]["pod"].as_str().expect("a name").to_string()
    };
    let a = name("0");
    assert!(a.starts_with("job-") && a.len() == 9, "{a}");
    assert_eq!(a, name("0"));
    assert_ne!(a, name("1"));
}

#[test]
fn a_configuration_among_the_files_is_used_and_not_twice() {
    let config = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: custom\n";
    let pod = POD.replace("spec: {", "spec: {schedulerName: custom, ");
    let path = temp(
        "with-config.yaml",
        &format!("{NODE}---\n{pod}---\n{config}"),
    );
    let o = run(&["simulate", "-f", &path]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("1 scheduled, 0 pending"),
        "{}",
        stdout(&o)
    );
    let separate = temp("separate-config.yaml", config);
    let o = run(&["simulate", "-f", &path, "--config", &separate]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a KubeSchedulerConfiguration is among the -f files and --config"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn built_in_priority_classes_exist() {
    let pod = POD.replace(
        "spec: {",
        "spec: {priorityClassName: system-cluster-critical, ",
    );
    let path = temp("critical.yaml", &format!("{NODE}---\n{pod}"));
    let o = run(&["simulate", "-f", &path]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(!stdout(&o).contains("Refused"), "{}", stdout(&o));
}

#[test]
fn absurd_replica_counts_stop_at_the_pod_cap() {
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: huge}\nspec:\n  replicas: 2147483647\n  selector: {matchLabels: {app: huge}}\n  template:\n    metadata: {labels: {app: huge}}\n    spec: {containers: [{name: c, image: i}]}\n";
    let path = temp("huge.yaml", &format!("{NODE}---\n{deploy}"));
    let o = run(&["simulate", "-f", &path]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("deployment/huge: spec.replicas: Invalid value: 2147483647: the workloads would make more than 1000000 pods (--max-pods raises the limit)"),
        "{err}"
    );
    let small = deploy.replace("2147483647", "3");
    let path = temp("small.yaml", &format!("{NODE}---\n{small}"));
    let o = run(&["simulate", "--max-pods", "2", "-f", &path]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("more than 2 pods"), "{}", stderr(&o));
}

#[test]
fn validate_finds_cluster_errors_and_exits_1() {
    let text = format!(
        "{NODE}---\n{NODE}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: lost}}\nspec: {{nodeName: n9, containers: [{{name: c, image: i}}]}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: neg}}\nspec: {{containers: [{{name: c, image: i, resources: {{requests: {{memory: '-1Gi'}}}}}}]}}\n"
    );
    let path = temp("cluster-errors.yaml", &text);
    let o = run(&["validate", "-f", &path]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    for want in [
        "node/n1: metadata.name: Duplicate value: \"n1\"",
        "pod/lost: spec.nodeName: Invalid value: \"n9\"",
        "pod/neg: spec.containers[0].resources.requests[memory]: Invalid value: \"-1Gi\": must be greater than or equal to 0",
    ] {
        assert!(out.contains(want), "want {want:?} in {out}");
    }
}

/// Install manifests of well-known projects (fixtures/real, each naming its source):
/// every one simulates on three nodes with all its pods scheduled, its custom resources
/// and RBAC skipped with notes. metrics-server's `manifests/base` Deployment has no
/// selector (its kustomization adds one): the API server refuses it as it stands, so it
/// is reported as refused (exit 1) and nothing else of the file fails.
#[test]
fn real_world_manifests_simulate() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real");
    let nodes = super::fixture("real-nodes.yaml");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/real")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{} real manifests", files.len());
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        assert!(
            text.starts_with("# Source: https://github.com/"),
            "{}: names its source",
            f.display()
        );
        let o = run(&["simulate", "-f", &nodes, "-f", &f.display().to_string()]);
        let out = stdout(&o);
        if f.ends_with("metrics-server.yaml") {
            assert_eq!(o.status.code(), Some(1), "{out}");
            assert!(
                out.contains("deployment/metrics-server (namespace kube-system): spec.selector: Required value"),
                "{out}"
            );
            continue;
        }
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}: {}{out}",
            f.display(),
            stderr(&o)
        );
        assert!(
            out.contains(" scheduled, 0 pending\n"),
            "{}: {out}",
            f.display()
        );
        assert!(!out.starts_with("0 scheduled"), "{}: {out}", f.display());
    }
    // The folder at once, as `-f DIR` reads it.
    let o = run(&[
        "simulate",
        "-f",
        &nodes,
        "-f",
        &dir.display().to_string(),
        "-o",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["pending"], 0);
    assert_eq!(
        v["refused_objects"].as_array().map(Vec::len),
        Some(2),
        "{v}"
    );
    assert!(
        v["scheduled"].as_u64().unwrap_or(0) >= 25,
        "{}",
        v["scheduled"]
    );
}

#[test]
fn an_endless_fifo_stops_at_the_cap() {
    let dir = folder("fifo");
    let fifo = dir.join("endless.yaml");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let path = fifo.clone();
    // The writer fills the FIFO until the reader goes away (EPIPE ends the loop).
    let writer = std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("opens the fifo");
        let line = b"# a comment that never ends\n".repeat(1024);
        while f.write_all(&line).is_ok() {}
    });
    let o = run(&[
        "simulate",
        "--max-input-bytes",
        "1048576",
        "-f",
        &fifo.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("endless.yaml: input larger than 1 MiB (1048576 bytes); --max-input-bytes raises the limit"),
        "{}",
        stderr(&o)
    );
    writer.join().expect("the writer ends");
}

/// A kustomize folder holds the source of manifests: refused with the command that
/// renders it, whether given with -f or met while walking with -R; a Kustomization
/// object alone in a file likewise.
#[test]
fn kustomize_folders_and_objects_are_refused_with_the_way_to_render_them() {
    let dir = folder("kustomize");
    std::fs::create_dir(dir.join("overlay")).expect("dir");
    let kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: prod\nresources: [pod.yaml]\n";
    std::fs::write(dir.join("overlay/kustomization.yaml"), kustomization).expect("write");
    std::fs::write(dir.join("overlay/pod.yaml"), POD).expect("write");
    std::fs::write(dir.join("nodes.yaml"), NODE).expect("write");
    let overlay = dir.join("overlay").display().to_string();
    let o = run(&["simulate", "-f", &overlay]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {overlay}: a kustomize folder (kustomization.yaml), whose manifests kubectl kustomize renders; render it: `kubectl kustomize {overlay} | topospread ... -f -`\n"
        )
    );
    assert!(stdout(&o).is_empty());
    let o = run(&["simulate", "-R", "-f", &dir.display().to_string()]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains(&format!(
            "render it: `kubectl kustomize {overlay} | topospread ... -f -`"
        )),
        "{}",
        stderr(&o)
    );
    let lone = dir.join("overlay/kustomization.yaml").display().to_string();
    let o = run(&["simulate", "-f", &lone]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {lone}: kustomization/<unnamed>: a kustomize Kustomization, which kubectl kustomize renders into manifests; render it: `kubectl kustomize {overlay} | topospread ... -f -`\n"
        )
    );
}

/// An unrendered Helm template is named as one, with the chart to render, not as the
/// YAML error its `{{ ... }}` makes; so is a chart's folder.
#[test]
fn helm_templates_and_charts_are_refused_with_the_way_to_render_them() {
    let chart = folder("chart");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    )
    .expect("write");
    std::fs::create_dir(chart.join("templates")).expect("dir");
    let template = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include \"web.fullname\" . }}\nspec:\n  replicas: {{ .Values.replicas }}\n";
    std::fs::write(chart.join("templates/deployment.yaml"), template).expect("write");
    let c = chart.display().to_string();
    let file = chart
        .join("templates/deployment.yaml")
        .display()
        .to_string();
    let o = run(&["simulate", "-f", &file]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {file}: a Helm template ({{{{ ... }}}}), not a manifest; render it: `helm template {c} | topospread ... -f -`\n"
        )
    );
    let o = run_stdin(&["validate", "-f", "-"], template);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("<stdin>: a Helm template ({{ ... }}), not a manifest; render it: `helm template CHART | topospread ... -f -`\n"),
        "{}",
        stdout(&o)
    );
    for dir in [c.clone(), format!("{c}/templates")] {
        let o = run(&["show", "-f", &dir]);
        assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
        assert_eq!(
            stderr(&o),
            format!(
                "error: {dir}: a Helm chart (Chart.yaml), whose templates helm renders into manifests; render it: `helm template {c} | topospread ... -f -`\n"
            )
        );
    }
}

/// Nothing to read is said, exit 2: not an empty table.
#[test]
fn empty_input_says_nothing_was_read() {
    let o = run_stdin(&["simulate", "-f", "-"], "");
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert_eq!(
        stderr(&o),
        "error: nothing was read from <stdin>: no Kubernetes objects in it (empty, or only comments)\n"
    );
    assert!(stdout(&o).is_empty());
    let path = temp("comments-only.yaml", "# nothing here\n---\n");
    let o = run(&["validate", "-f", &path]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("nothing was read from "),
        "{}",
        stderr(&o)
    );
    let empty = folder("nothing");
    let o = run(&["show", "-f", &empty.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("nothing was read from the folder"),
        "{}",
        stderr(&o)
    );
}

/// `-n` gives namespaced objects without one its namespace, as kubectl does, and
/// refuses one that names another in kubectl's words.
#[test]
fn namespace_flag_sets_the_namespace_of_objects_without_one() {
    let o = run_stdin(
        &["simulate", "-n", "prod", "-f", "-"],
        &format!("{NODE}---\n{POD}"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("prod       p    n1    a"),
        "{}",
        stdout(&o)
    );
    let other = POD.replace("metadata: {name: p}", "metadata: {name: p, namespace: dev}");
    let o = run_stdin(
        &["simulate", "--namespace", "prod", "-f", "-"],
        &format!("{NODE}---\n{other}"),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert_eq!(
        stderr(&o),
        "error: <stdin>: pod/p: the namespace from the provided object \"dev\" does not match the namespace \"prod\". You must pass '--namespace=dev' to perform this operation.\n"
    );
    let o = run_stdin(
        &["explain", "-n", "prod", "-f", "-", "p"],
        &format!("{NODE}---\n{POD}"),
    );
    assert!(
        stdout(&o).contains("pod prod/p"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
}
