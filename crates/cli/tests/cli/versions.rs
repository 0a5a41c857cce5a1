//! `--kubernetes-version` and `--feature-gates`: what changed between releases.

use super::{fixture, run, stderr};

fn node_of_web(args: &[&str]) -> String {
    let f = fixture("versions/empty-selector.yaml");
    let mut all = vec!["simulate", "-f", &f, "-o", "json"];
    all.extend_from_slice(args);
    let o = run(&all);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    v["pods"][0]["node"]
        .as_str()
        .expect("web bound")
        .to_string()
}

#[test]
fn an_empty_selector_counts_every_pod_only_from_1_38() {
    // Newest: the two db pods count, so zone-a is full at maxSkew 1.
    assert_eq!(node_of_web(&[]), "node-b");
    assert_eq!(node_of_web(&["--kubernetes-version", "1.38"]), "node-b");
    // 1.27 to 1.37 count no pod: node affinity's preference wins.
    assert_eq!(node_of_web(&["--kubernetes-version", "1.37"]), "node-a");
    assert_eq!(node_of_web(&["--kubernetes-version", "v1.27.3"]), "node-a");
    // Before 1.27 the selector counted every pod again.
    assert_eq!(node_of_web(&["--kubernetes-version", "1.26"]), "node-b");
}

#[test]
fn validate_warns_that_the_empty_selector_differs_by_release() {
    let f = fixture("versions/empty-selector.yaml");
    let o = run(&["validate", "-f", &f]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("TS008"), "{out}");
    assert!(
        out.contains("spec.topologySpreadConstraints[0].labelSelector"),
        "{out}"
    );
}

#[test]
fn a_gate_of_the_release_that_is_not_modelled_is_accepted_with_a_note() {
    // kubernetes issue 22: 1.30 refused SchedulerQueueingHints, a gate it has.
    let f = fixture("versions/empty-selector.yaml");
    let o = run(&[
        "simulate",
        "-f",
        &f,
        "--kubernetes-version",
        "1.30",
        "--feature-gates",
        "SchedulerQueueingHints=false",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(
        all.contains("--feature-gates SchedulerQueueingHints: accepted as kube-scheduler accepts them; topospread does not model them"),
        "{all}"
    );
}

#[test]
fn bad_versions_and_gates_exit_2_with_one_line() {
    let f = fixture("versions/empty-selector.yaml");
    for (args, want) in [
        (
            vec!["--kubernetes-version", "1.24"],
            "topospread models 1.25 to 1.38",
        ),
        (
            vec!["--kubernetes-version", "2.0"],
            "is not a Kubernetes version",
        ),
        (
            vec!["--feature-gates", "NoSuchGate=true"],
            "unrecognized feature gate \"NoSuchGate\"",
        ),
        (
            vec!["--feature-gates", "PodLevelResources"],
            "is not Name=true or Name=false",
        ),
        (
            vec![
                "--kubernetes-version",
                "1.30",
                "--feature-gates",
                "MinDomainsInPodTopologySpread=false",
            ],
            "feature is locked to true in Kubernetes 1.30",
        ),
        // Removed in 1.32 (kubernetes PR 126863): kube-scheduler no longer knows it.
        (
            vec!["--feature-gates", "MinDomainsInPodTopologySpread=true"],
            "unrecognized feature gate \"MinDomainsInPodTopologySpread\" in Kubernetes 1.38: removed in 1.32",
        ),
        (
            vec![
                "--kubernetes-version",
                "1.27",
                "--feature-gates",
                "SchedulerQueueingHints=true",
            ],
            "in Kubernetes 1.27: first in 1.28",
        ),
    ] {
        let mut all = vec!["simulate", "-f", &f];
        all.extend(args.iter().copied());
        let o = run(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn the_spread_report_counts_what_the_plugin_counts() {
    // nodeTaintsPolicy: Honor leaves the tainted zone out, a node without the key is no
    // domain: two pods in the only eligible zone is no skew.
    let f = fixture("spread-report-policies.yaml");
    let o = run(&["simulate", "-f", &f, "-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let c = &v["workloads"][0]["constraints"][0];
    assert_eq!(c["after"], serde_json::json!({"zone-a": 2}));
    assert_eq!(c["before"], serde_json::json!({"zone-a": 0}));
    assert_eq!(c["skew_after"], 0);
    assert!(v["workloads"][0].get("constraints_from_defaults").is_none());
}

#[test]
fn default_constraints_are_reported_as_such() {
    let f = fixture("default-constraints.yaml");
    let o = run(&["simulate", "-f", &f, "-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let web = &v["workloads"][0];
    assert_eq!(web["constraints_from_defaults"], true, "{web}");
    let got: Vec<(&str, i64)> = web["constraints"]
        .as_array()
        .expect("constraints")
        .iter()
        .filter_map(|c| Some((c["topology_key"].as_str()?, c["max_skew"].as_i64()?)))
        .collect();
    assert_eq!(
        got,
        [
            ("kubernetes.io/hostname", 3),
            ("topology.kubernetes.io/zone", 5)
        ]
    );
    assert_eq!(
        web["constraints"][1]["after"],
        serde_json::json!({"a": 2, "b": 2})
    );
    // Soft defaults within their maxSkew are one line; --wide gives their domains.
    let table = run(&["simulate", "-f", &f]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("(no constraints of its own; the cluster's default constraints, ScheduleAnyway, within maxSkew: kubernetes.io/hostname skew "),
        "{text}"
    );
    assert!(!text.contains("    after:"), "{text}");
    let wide = run(&["simulate", "-f", &f, "--wide"]);
    let text = String::from_utf8_lossy(&wide.stdout);
    assert!(
        text.contains("(no constraints of its own: the cluster's default constraints)"),
        "{text}"
    );
    assert!(text.contains("    after:  a=2 b=2"), "{text}");
}

#[test]
fn a_dump_of_an_older_cluster_is_noted_unless_the_version_is_given() {
    let f = fixture("versions/kubelet-1-30.yaml");
    let note = "note: the nodes run Kubernetes 1.30 (status.nodeInfo.kubeletVersion); simulating 1.38: --kubernetes-version 1.30 follows them";
    let o = run(&["simulate", "-f", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(note));
    let given = run(&["simulate", "-f", &f, "--kubernetes-version", "1.30"]);
    assert!(!String::from_utf8_lossy(&given.stdout).contains("note:"));
}

#[test]
fn pods_a_server_stored_with_merged_match_label_keys_read_under_every_release() {
    let f = fixture("versions/merged-match-label-keys.yaml");
    for release in ["1.32", "1.33", "1.34", "1.36", "1.38"] {
        let o = run(&[
            "simulate",
            "-f",
            &f,
            "--kubernetes-version",
            release,
            "-o",
            "json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{release}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        // Only web-new (v2) counts with the pending pod: zone a holds 1, so it goes to b.
        let pending = v["pods"]
            .as_array()
            .and_then(|pods| pods.iter().find(|p| p["pod"] == "pending"))
            .expect("the pending pod");
        assert_eq!(pending["node"], "b1", "{release}");
    }
    let o = run(&["validate", "-f", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", super::stdout(&o));
}

#[test]
fn a_manifest_for_creation_with_the_key_in_both_places_is_refused_from_1_34() {
    // The same pod as a manifest (no uid): the API server merges pod-template-hash once
    // more on create, so the key appears twice in the selector.
    let text =
        std::fs::read_to_string(fixture("versions/merged-match-label-keys.yaml")).expect("fixture");
    let manifest: String = text
        .lines()
        .filter(|l| {
            !l.trim_start().starts_with("uid:")
                && !l.trim_start().starts_with("resourceVersion:")
                && !l.trim_start().starts_with("creationTimestamp:")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let f = super::temp("merged-as-manifest.yaml", &manifest);
    let o = run(&["validate", "-f", &f, "--kubernetes-version", "1.36"]);
    let out = super::stdout(&o);
    assert_ne!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("exists in both matchLabelKeys and labelSelector"),
        "{out}"
    );
}

#[test]
fn validate_checks_the_scheduler_configuration_in_the_release_asked() {
    let config = "apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled: [{name: EBSLimits}]
";
    let f = super::temp("ebs-limits-config.yaml", config);
    // 1.30 still registers EBSLimits (removed in 1.32, PR 124003).
    let o = run(&["validate", "-f", &f, "--kubernetes-version", "1.30"]);
    assert_eq!(o.status.code(), Some(0), "{}", super::stdout(&o));
    let o = run(&["validate", "-f", &f]);
    assert_eq!(o.status.code(), Some(1), "{}", super::stdout(&o));
    assert!(
        super::stdout(&o).contains("it was removed in 1.32"),
        "{}",
        super::stdout(&o)
    );
}
