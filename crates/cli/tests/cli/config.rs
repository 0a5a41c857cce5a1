//! `--config`: one KubeSchedulerConfiguration per file, strictly decoded and validated as
//! kube-scheduler does at start-up; each refusal exits 2 with a message naming the field,
//! and `topospread validate` refuses the same files.

use super::{run, stderr, stdout, temp};

const HEAD: &str = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
const NODES: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}\n";

/// `simulate --config` refuses `config` (see [`refused_by_simulate`]); `validate`
/// refuses the same file too (exit 1 or 2) naming the first `want`.
fn refused(name: &str, config: &str, want: &[&str]) {
    refused_by_simulate(name, config, want);
    let path = temp(name, config);
    let v = run(&["validate", "-f", &path]);
    let all = format!("{}{}", stdout(&v), stderr(&v));
    assert!(
        matches!(v.status.code(), Some(1 | 2)),
        "{name}: validate accepted it: {all}"
    );
    assert!(
        all.contains(want[0]),
        "{name}: want {:?} in: {all}",
        want[0]
    );
}

/// `simulate --config` refuses `config` with exit 2 and a message holding every `want`.
fn refused_by_simulate(name: &str, config: &str, want: &[&str]) {
    let nodes = temp("nodes.yaml", NODES);
    let path = temp(name, config);
    let o = run(&["simulate", "-f", &nodes, "--config", &path]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{name}: {err}");
    for w in want {
        assert!(err.contains(w), "{name}: want {w:?} in: {err}");
    }
}

#[test]
fn a_valid_config_with_two_profiles_runs() {
    let nodes = temp("nodes-ok.yaml", NODES);
    let path = temp(
        "ok.yaml",
        &format!(
            "{HEAD}podInitialBackoffSeconds: 2\nleaderElection: {{leaderElect: false}}\nprofiles:\n- schedulerName: default-scheduler\n- schedulerName: other\n  pluginConfig:\n  - name: DefaultPreemption\n    args: {{minCandidateNodesPercentage: 20, minCandidateNodesAbsolute: 5}}\n"
        ),
    );
    let o = run(&["simulate", "-f", &nodes, "--config", &path]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = run(&["validate", "-f", &path]);
    assert_eq!(v.status.code(), Some(0), "{}", stdout(&v));
}

#[test]
fn one_document_of_version_v1() {
    // Several objects in one file are fine for `validate -f`; only --config refuses them.
    refused_by_simulate(
        "two-docs.yaml",
        &format!("{HEAD}---\n{HEAD}"),
        &["exactly one KubeSchedulerConfiguration"],
    );
    refused_by_simulate(
        "other-object.yaml",
        &format!("{HEAD}---\n{NODES}"),
        &["exactly one KubeSchedulerConfiguration", "kind Node"],
    );
    refused(
        "v1beta3.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
        &[
            "apiVersion",
            "only kubescheduler.config.k8s.io/v1 is supported",
        ],
    );
}

#[test]
fn unknown_fields_are_named() {
    refused(
        "top.yaml",
        &format!("{HEAD}bogus: 1\n"),
        &["bogus: unknown field"],
    );
    refused(
        "profile.yaml",
        &format!("{HEAD}profiles:\n- schedulerName: a\n  bogus: 1\n"),
        &["profiles[0].bogus: unknown field"],
    );
    refused(
        "plugins.yaml",
        &format!(
            "{HEAD}profiles:\n- plugins:\n    filter:\n      enabled: [{{name: NodeName, bogus: 1}}]\n"
        ),
        &["profiles[0].plugins.filter.enabled[0].bogus: unknown field"],
    );
    for (plugin, args) in [
        ("PodTopologySpread", "{foo: 1}"),
        ("NodeResourcesFit", "{foo: 1}"),
        ("NodeResourcesBalancedAllocation", "{foo: 1}"),
        ("InterPodAffinity", "{foo: 1}"),
        ("NodeAffinity", "{foo: 1}"),
        ("DefaultPreemption", "{foo: 1}"),
    ] {
        refused(
            &format!("args-{plugin}.yaml"),
            &format!("{HEAD}profiles:\n- pluginConfig:\n  - name: {plugin}\n    args: {args}\n"),
            &["profiles[0].pluginConfig[0].args.foo: unknown field"],
        );
    }
    refused(
        "leader.yaml",
        &format!("{HEAD}leaderElection: {{leaderElect: true, bogus: 1}}\n"),
        &["leaderElection.bogus: unknown field"],
    );
}

#[test]
fn start_up_validation_covers_every_profile() {
    let cases: &[(&str, String, &[&str])] = &[
        (
            "defaulting.yaml",
            format!(
                "{HEAD}profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultConstraints: [{{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}}]\n"
            ),
            &[
                "profiles[0].pluginConfig[0].args.defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty",
            ],
        ),
        (
            "duplicate-name.yaml",
            format!("{HEAD}profiles:\n- schedulerName: a\n- schedulerName: a\n"),
            &["profiles[1].schedulerName: Duplicate value"],
        ),
        (
            "queue-sort.yaml",
            format!(
                "{HEAD}profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n      disabled: [{{name: '*'}}]\n      enabled: [{{name: PrioritySort}}]\n"
            ),
            &[
                "profiles[1].plugins.queueSort: Invalid value",
                "must be the same for all profiles",
            ],
        ),
        (
            "unknown-plugin-second.yaml",
            format!(
                "{HEAD}profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    score:\n      enabled: [{{name: Bogus}}]\n"
            ),
            &["profiles[1].plugins.score.enabled[0].name", "\"Bogus\""],
        ),
        (
            "percentage.yaml",
            format!("{HEAD}percentageOfNodesToScore: 101\n"),
            &["percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"],
        ),
        (
            "profile-percentage.yaml",
            format!(
                "{HEAD}profiles:\n- schedulerName: a\n- schedulerName: b\n  percentageOfNodesToScore: -1\n"
            ),
            &["profiles[1].percentageOfNodesToScore: Invalid value: -1"],
        ),
        (
            "initial-backoff.yaml",
            format!("{HEAD}podInitialBackoffSeconds: 0\n"),
            &["podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"],
        ),
        (
            "max-backoff.yaml",
            format!("{HEAD}podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n"),
            &[
                "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds",
            ],
        ),
        (
            "parallelism.yaml",
            format!("{HEAD}parallelism: 0\n"),
            &["parallelism: Invalid value: 0: should be an integer value greater than zero"],
        ),
        (
            "lease.yaml",
            format!(
                "{HEAD}leaderElection: {{leaderElect: true, leaseDuration: 5s, renewDeadline: 10s}}\n"
            ),
            &[
                "leaderElection.leaseDuration",
                "LeaseDuration must be greater than RenewDeadline",
            ],
        ),
        (
            "retry.yaml",
            format!("{HEAD}leaderElection: {{leaderElect: true, retryPeriod: 0s}}\n"),
            &["leaderElection.retryPeriod", "must be greater than zero"],
        ),
        (
            "lock.yaml",
            format!("{HEAD}leaderElection: {{leaderElect: true, resourceLock: endpoints}}\n"),
            &[
                "leaderElection.resourceLock",
                "resourceLock value must be \"leases\"",
            ],
        ),
        (
            "lock-name.yaml",
            format!("{HEAD}leaderElection: {{leaderElect: true, resourceName: ''}}\n"),
            &["leaderElection.resourceName", "resourceName is required"],
        ),
        (
            "empty-name.yaml",
            format!("{HEAD}profiles:\n- schedulerName: ''\n"),
            &["profiles[0].schedulerName: Required value"],
        ),
        (
            "preemption.yaml",
            format!(
                "{HEAD}profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {{minCandidateNodesPercentage: 101}}\n"
            ),
            &[
                "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
            ],
        ),
        (
            "preemption-zero.yaml",
            format!(
                "{HEAD}profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}}\n"
            ),
            &["cannot be zero at the same time as minCandidateNodesAbsolute"],
        ),
    ];
    for (name, config, want) in cases {
        refused(name, config, want);
    }
}
