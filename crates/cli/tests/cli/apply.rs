//! Manifests applied over a cluster that already holds their objects (issue 42): an
//! immutable field's change is refused as the API server refuses it and the live
//! object stays; `spec.replicas` left out of the manifest keeps the live value, as
//! `kubectl apply` keeps a count `kubectl scale` or an HPA set. `validate` refuses what
//! the same admission refuses.

use super::{fixture, run, stderr, stdout, temp};

const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: nginx:1, resources: {requests: {cpu: 100m}}}]\n";

/// The cluster after `web` was created: its ReplicaSet and four bound pods.
fn state() -> String {
    let nodes = fixture("volumes/three-zones.yaml");
    let web = temp("apply-web.yaml", WEB);
    let o = run(&["simulate", "-f", &nodes, "-f", &web, "-o", "yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    temp("apply-state.yaml", &stdout(&o))
}

#[test]
fn a_changed_selector_is_refused_and_the_deployment_kept() {
    let state = state();
    let changed = WEB
        .replace("  replicas: 4\n", "")
        .replace("{app: web}", "{app: web, tier: fe}");
    let manifest = temp("apply-selector.yaml", &changed);
    let o = run(&["simulate", "-f", &state, "-f", &manifest]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    assert!(
        out.contains("apply-selector.yaml: deployment/web (namespace default): spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\", \"tier\":\"fe\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"),
        "{out}"
    );
    assert!(
        out.contains("deployment/web (namespace default): 4 pods, 4 scheduled"),
        "{out}"
    );
    assert!(!out.contains("Rollout of deployment"), "{out}");
}

#[test]
fn replicas_left_out_keep_the_live_count_through_a_rollout() {
    let state = state();
    let new_image = WEB
        .replace("  replicas: 4\n", "")
        .replace("nginx:1", "nginx:2");
    let manifest = temp("apply-image.yaml", &new_image);
    let o = run(&["simulate", "-f", &state, "-f", &manifest]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    assert!(
        out.contains("apply-image.yaml: deployment/web (namespace default): applied over the object read from"),
        "{out}"
    );
    assert!(out.contains("spec.replicas 4 kept"), "{out}");
    assert!(out.contains("4 scheduled, 0 pending"), "{out}");
}

/// `validate` runs the admission `simulate` runs (issue 42): a LimitRange that refuses
/// every pod a Deployment would make is one error, in the words simulate prints, and
/// naming the pod as the API server names a `generateName` pod.
#[test]
fn validate_refuses_what_simulate_admission_refuses_once_per_workload() {
    let nodes = fixture("volumes/three-zones.yaml");
    let files = temp(
        "validate-admission.yaml",
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr, namespace: default}\nspec:\n  limits: [{type: Container, max: {cpu: 500m}}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}, limits: {cpu: '1'}}}]\n",
    );
    let v = run(&["validate", "-f", &nodes, "-f", &files]);
    let out = stdout(&v);
    assert_eq!(v.status.code(), Some(1), "{out}\n{}", stderr(&v));
    let forbidden: Vec<&str> = out.lines().filter(|l| l.contains("is forbidden")).collect();
    assert_eq!(forbidden.len(), 1, "{out}");
    let message = forbidden[0]
        .split_once("): ")
        .map(|(_, m)| m)
        .unwrap_or_default();
    assert!(
        message.starts_with("pods \"web-")
            && message.ends_with(
                "-\" is forbidden: maximum cpu usage per Container is 500m, but limit is 1"
            ),
        "{out}"
    );
    let s = run(&["simulate", "-f", &nodes, "-f", &files]);
    let simulated = stdout(&s);
    assert!(
        simulated.contains(message),
        "simulate words it otherwise:\n{simulated}"
    );
    assert!(simulated.contains("3 refused"), "{simulated}");
}

/// A workload whose pods count differently says so (issue 43): a DaemonSet reports no
/// spread (its pods are pinned one per node), and a StatefulSet with a Service per pod
/// names the selector its second pod counts.
#[test]
fn workloads_whose_pods_count_differently_say_so() {
    let nodes = fixture("volumes/three-zones.yaml");
    let mut text = String::from(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: default}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec: {containers: [{name: c, image: a}]}\n---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: kafka, namespace: default}\nspec:\n  replicas: 3\n  serviceName: kafka\n  selector: {matchLabels: {app: kafka}}\n  template:\n    metadata: {labels: {app: kafka}}\n    spec: {containers: [{name: c, image: k}]}\n",
    );
    for i in 0..3 {
        text.push_str(&format!("---\napiVersion: v1\nkind: Service\nmetadata: {{name: kafka-{i}, namespace: default}}\nspec:\n  selector: {{statefulset.kubernetes.io/pod-name: kafka-{i}}}\n  ports: [{{port: 9092}}]\n"));
    }
    let files = temp("counted.yaml", &text);
    let o = run(&["simulate", "-f", &nodes, "-f", &files]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    assert!(
        out.contains("daemonset/agent (namespace default): 3 pods, 3 scheduled, 0 pending\n  (a DaemonSet's pods are pinned one per node, so each counts only its own node; no spread to report)\n"),
        "{out}"
    );
    assert!(
        out.contains("(its pods count different selectors (a Service per pod?): kafka-0 shown; kafka-1 counts app=kafka,statefulset.kubernetes.io/pod-name=kafka-1)"),
        "{out}"
    );
}
