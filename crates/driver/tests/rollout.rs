//! Deployment rollouts as the deployment controller runs them: the step order, the
//! readiness model, the interleavings' end skews and the warning, the progress deadline.

use topospread::Features;
use topospread::Scheduler;
use topospread::Simulation;
use topospread::config::SchedulerConfig;
use topospread::snapshot::Snapshot;
use topospread_driver::rollout::{roll_out, roll_out_in};
use topospread_k8s::build;
use topospread_k8s::load::parse_manifests;
use topospread_k8s::workloads::{
    DEFAULT_MAX_PODS, ExpandOptions, Expansion, Interleaving, RolloutReport, WorkloadFeatures,
    expand_with,
};

/// Three zones of one node; a Deployment of 9 replicas at 3/3/3 whose template changed,
/// a zone DoNotSchedule constraint (with matchLabelKeys when asked), the old pods of one
/// scale-up with UIDs rising from zone a to zone c.
fn cluster(match_label_keys: bool, min_ready_seconds: i32, strategy: &str) -> String {
    let keys = if match_label_keys {
        ", matchLabelKeys: [pod-template-hash]"
    } else {
        ""
    };
    let tsc = format!(
        "[{{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}{keys}}}]"
    );
    let mut docs = Vec::new();
    for (i, z) in ["a", "b", "c"].iter().enumerate() {
        docs.push(format!(
            "{{apiVersion: v1, kind: Node, metadata: {{name: n{i}, labels: {{zone: {z}}}}}, status: {{allocatable: {{cpu: '8', memory: 16Gi, pods: '110'}}}}}}"
        ));
    }
    docs.push(format!(
        "{{apiVersion: apps/v1, kind: Deployment, metadata: {{name: web, namespace: default, uid: d1}}, spec: {{replicas: 9, minReadySeconds: {min_ready_seconds}, selector: {{matchLabels: {{app: web}}}}, strategy: {strategy}, template: {{metadata: {{labels: {{app: web}}}}, spec: {{containers: [{{name: web, image: 'nginx:1.26'}}], topologySpreadConstraints: {tsc}}}}}}}}}"
    ));
    docs.push(format!(
        "{{apiVersion: apps/v1, kind: ReplicaSet, metadata: {{name: web-old, namespace: default, uid: r1, labels: {{app: web, pod-template-hash: old}}, ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: web, uid: d1, controller: true}}]}}, spec: {{replicas: 9, selector: {{matchLabels: {{app: web, pod-template-hash: old}}}}, template: {{metadata: {{labels: {{app: web, pod-template-hash: old}}}}, spec: {{containers: [{{name: web, image: 'nginx:1.25'}}], topologySpreadConstraints: {tsc}}}}}}}}}"
    ));
    for k in 0..9 {
        let (node, zone) = (k / 3, ["a", "b", "c"][k / 3]);
        docs.push(format!(
            "{{apiVersion: v1, kind: Pod, metadata: {{name: web-old-{zone}{k}, namespace: default, uid: p{k}, creationTimestamp: '2024-01-01T00:00:00Z', labels: {{app: web, pod-template-hash: old}}, ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web-old, uid: r1, controller: true}}]}}, spec: {{nodeName: n{node}, containers: [{{name: web, image: 'nginx:1.25'}}], topologySpreadConstraints: {tsc}}}, status: {{phase: Running, conditions: [{{type: Ready, status: 'True', lastTransitionTime: '2024-01-01T00:00:0{k}Z'}}]}}}}"
        ));
    }
    format!(
        "apiVersion: v1\nkind: List\nitems:\n- {}\n",
        docs.join("\n- ")
    )
}

const SURGE_25: &str = "{type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}";

/// A scheduler on the default profile for `snapshot`.
fn scheduler(snapshot: &mut Snapshot) -> Option<Simulation> {
    Scheduler::new(&SchedulerConfig::default(), Features::default(), snapshot)
        .ok()
        .map(Simulation::new)
}

/// The cluster expanded as the controllers would an hour after the old pods became
/// Ready: one LogarithmicScaleDown bucket, so the ReplicaSet controller removes the
/// lowest UIDs first.
fn expanded(objects: &[topospread_k8s::load::Loaded]) -> Expansion {
    let now_ns = 1_704_070_800 * 1_000_000_000_i128; // 2024-01-01T01:00:00Z
    let e = expand_with(
        objects,
        ExpandOptions {
            seed: 0,
            max_pods: DEFAULT_MAX_PODS,
            scale: &[],
            features: WorkloadFeatures::default().at(now_ns),
        },
    )
    .unwrap_or_else(|(e, _)| panic!("{e}"));
    assert!(e.errors.is_empty(), "{:?}", e.errors);
    e
}

/// The cluster's rollout carried out with `ready_after`, every interleaving run.
fn roll(text: &str, ready_after: u32) -> RolloutReport {
    let objects = parse_manifests(text, "rollout.yaml")
        .expect("cluster")
        .objects;
    let e = expanded(&objects);
    let built = build::build(objects.iter().chain(&e.replica_sets)).expect("snapshot");
    let mut snapshot = built.snapshot;
    let mut sim = scheduler(&mut snapshot).expect("scheduler");
    let r = e.rollouts.first().expect("a rollout");
    roll_out(r, &mut sim, &mut snapshot, ready_after, &mut |s| {
        scheduler(s)
    })
    .expect("rollout")
}

/// kubernetes#98215's shape: the sync after the surge shrinks the old ReplicaSet while
/// the 3 new pods are neither scheduled nor available, and old and new pods counted
/// together leave the new revision skewed at the end (3/4/2, as a v1.32 cluster ended).
#[test]
fn the_old_replicaset_shrinks_before_the_surge_pods_are_scheduled() {
    let r = roll(&cluster(false, 0, SURGE_25), 0);
    assert!(r.complete, "{r:?}");
    assert_eq!(r.interleaving, Interleaving::ALL[0].name());
    let first = &r.steps[0];
    assert_eq!(
        first.action,
        format!("scale replicaset/{} to 3", r.new_replica_set)
    );
    assert_eq!((first.revisions[0].pods, first.revisions[0].bound), (3, 0));
    let second = &r.steps[1];
    assert_eq!(second.action, "scale replicaset/web-old to 7");
    assert_eq!(second.revisions[0].bound, 0, "new pods not yet scheduled");
    // The two lowest UIDs go: zone a's.
    assert_eq!(
        second.revisions[1].spread["zone"],
        [
            ("a".to_string(), 1),
            ("b".to_string(), 3),
            ("c".to_string(), 3)
        ]
        .into_iter()
        .collect()
    );
    // Never more than replicas + maxSurge pods, never fewer than replicas -
    // maxUnavailable available.
    for s in &r.steps {
        let pods: usize = s.revisions.iter().map(|v| v.pods).sum();
        let available: usize = s.revisions.iter().map(|v| v.available).sum();
        assert!(pods <= 12 && available >= 7, "{s:?}");
    }
    let end = &r.interleavings[0].end[0];
    assert_eq!(
        end.counts.values().copied().collect::<Vec<_>>(),
        [3, 4, 2],
        "{end:?}"
    );
    assert_eq!(end.skew, 2);
}

/// Every interleaving runs to the end; their skews give the range, and a constraint
/// without matchLabelKeys whose end skew exceeds maxSkew is warned of.
#[test]
fn interleavings_give_the_range_of_end_skews_and_the_warning() {
    let r = roll(&cluster(false, 0, SURGE_25), 0);
    let names: Vec<String> = r.interleavings.iter().map(|i| i.name.clone()).collect();
    let all: Vec<String> = Interleaving::ALL.iter().map(|i| i.name()).collect();
    assert_eq!(names, all);
    assert!(r.interleavings.iter().all(|i| i.complete));
    let skews: Vec<i64> = r.interleavings.iter().map(|i| i.end[0].skew).collect();
    let range = &r.end_skew[0];
    assert_eq!(
        (range.min, range.max),
        (
            *skews.iter().min().expect("skews"),
            *skews.iter().max().expect("skews")
        )
    );
    assert!(range.max > 1 && !range.per_revision, "{range:?}");
    let w = r.warning.as_deref().expect("warning");
    assert!(
        w.starts_with(
            "this rollout can leave the spread skewed; add `matchLabelKeys: [pod-template-hash]`"
        ),
        "{w}"
    );
    // One pod Ready at a time takes more syncs than all together.
    assert!(
        r.interleavings[1].steps > r.interleavings[0].steps,
        "{names:?}"
    );
}

#[test]
fn match_label_keys_keeps_every_interleaving_even_and_silent() {
    let r = roll(&cluster(true, 0, SURGE_25), 0);
    assert!(
        r.end_skew.iter().all(|e| e.per_revision && e.max == 0),
        "{r:?}"
    );
    assert!(r.warning.is_none());
    for il in &r.interleavings {
        assert_eq!(
            il.end[0].counts.values().copied().collect::<Vec<_>>(),
            [3, 3, 3]
        );
    }
}

/// Availability comes `ready_after` + minReadySeconds after binding: each wave of new
/// pods costs that much logical time, and a wait beyond progressDeadlineSeconds (600)
/// turns the Progressing condition False although the rollout goes on.
#[test]
fn readiness_delays_and_the_progress_deadline() {
    let r = roll(&cluster(false, 30, SURGE_25), 10);
    assert!(r.complete);
    assert_eq!((r.ready_after_seconds, r.min_ready_seconds), (10, 30));
    // Two waves of new pods (3 + 2, then 4) wait for availability: 2 x 40 s.
    assert_eq!(r.duration_seconds, 80, "{r:?}");
    assert!(r.deadline_exceeded.is_none());
    let r = roll(&cluster(false, 0, SURGE_25), 700);
    assert!(r.complete);
    let d = r.deadline_exceeded.as_deref().expect("deadline");
    assert!(
        d.contains("ProgressDeadlineExceeded") && d.contains("progressDeadlineSeconds 600"),
        "{d}"
    );
}

/// The scheduler binding each sync's new pods first: the surge lands against the old
/// pods still all there (one per zone), before the old ReplicaSet shrinks.
#[test]
fn scheduler_first_binds_the_surge_against_every_old_pod() {
    let text = cluster(false, 0, SURGE_25);
    let objects = parse_manifests(&text, "rollout.yaml")
        .expect("cluster")
        .objects;
    let e = expanded(&objects);
    let built = build::build(objects.iter().chain(&e.replica_sets)).expect("snapshot");
    let mut snapshot = built.snapshot;
    let mut sim = scheduler(&mut snapshot).expect("scheduler");
    let il = Interleaving {
        scheduler_first: true,
        one_at_a_time: false,
    };
    let r = roll_out_in(&e.rollouts[0], &mut sim, &mut snapshot, 0, il).expect("rollout");
    assert_eq!(r.interleaving, "scheduler first, ready together");
    let first = &r.steps[0].revisions[0];
    assert_eq!((first.pods, first.bound, first.available), (3, 3, 0));
    assert_eq!(
        first.spread["zone"].values().copied().collect::<Vec<_>>(),
        [1, 1, 1]
    );
    assert_eq!(r.steps[1].action, "scale replicaset/web-old to 7");
    assert!(r.complete);
}

/// Room for 240 pods (8 cpu a node, 100m each) and 300 replicas: every old pod goes,
/// 60 new ones stay Pending, and the rollout can never finish.
#[test]
fn a_rollout_short_of_room_stalls_with_the_old_pods_gone() {
    let text = cluster(false, 0, SURGE_25)
        .replace(
            "replicas: 9, minReadySeconds",
            "replicas: 300, minReadySeconds",
        )
        .replace(
            "image: 'nginx:1.26'",
            "image: 'nginx:1.26', resources: {requests: {cpu: 100m}}",
        );
    let r = roll(&text, 0);
    assert!(!r.complete);
    let s = r.stalled.as_ref().expect("stalled");
    assert_eq!(
        (s.old_replicas, s.new_replicas, s.new_available),
        (0, 300, 240)
    );
    assert_eq!(s.pending.len(), 60, "{s:?}");
    assert!(
        s.reason.starts_with(
            "every old pod is gone and the new ReplicaSet has its 300 replicas, but 60 new pods stay Pending; the rollout can never finish: after progressDeadlineSeconds (600)"
        ),
        "{}",
        s.reason
    );
    assert!(r.interleavings.iter().all(|i| !i.complete));
    assert!(r.end_skew.is_empty(), "only complete runs have an end skew");
}
