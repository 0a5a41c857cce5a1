//! Property tests: generated manifests (random constraint lists, selectors, label maps and
//! node sets, written out as YAML) go through `parse_manifests` -> validation -> lints ->
//! `build_snapshot` -> cluster lints without a panic, and every finding names a field
//! under the object's pod spec.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use topospread_k8s::build::build_snapshot;
use topospread_k8s::load::{Object, parse_manifests};
use topospread_k8s::validation::{
    ApiServerFeatures, ClusterLinter, InputPods, Workload, lint_pod_affinity, lint_workload,
    template_pods_create, validate_scheduler_configuration, validate_workload_create,
};

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("app".to_string()),
        Just("zone".to_string()),
        Just("topology.kubernetes.io/zone".to_string()),
        Just("kubernetes.io/hostname".to_string()),
        Just("pod-template-hash".to_string()),
        Just("controller-revision-hash".to_string()),
        Just(String::new()),
        Just("bad key".to_string()),
        Just("/x".to_string()),
        Just("x".repeat(64)),
        "[a-z]{1,3}",
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("web".to_string()),
        Just("a".to_string()),
        Just("zoneA".to_string()),
        Just(String::new()),
        Just("-bad".to_string()),
        Just("true".to_string()),
        Just("1".to_string()),
        Just("v".repeat(64)),
        "[a-c]{1,2}",
    ]
}

fn labels() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(key(), value(), 0..4)
        .prop_map(|m| m.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
}

fn pick(options: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::sample::select(options).prop_map(str::to_string)
}

fn selector() -> impl Strategy<Value = Option<Value>> {
    let expression = (
        key(),
        pick(&["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Bogus", ""]),
        prop::option::of(prop::collection::vec(value(), 0..3)),
    )
        .prop_map(|(k, op, values)| {
            let mut e = json!({"key": k, "operator": op});
            if let Some(v) = values {
                e["values"] = json!(v);
            }
            e
        });
    prop::option::of(
        (
            prop::option::of(labels()),
            prop::option::of(prop::collection::vec(expression, 0..3)),
        )
            .prop_map(|(ml, me)| {
                let mut s = Map::new();
                if let Some(ml) = ml {
                    s.insert("matchLabels".into(), Value::Object(ml));
                }
                if let Some(me) = me {
                    s.insert("matchExpressions".into(), json!(me));
                }
                Value::Object(s)
            }),
    )
}

fn constraint() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(&[-1i64, 0, 1, 2, 3, 2_147_483_647][..]),
        key(),
        pick(&["DoNotSchedule", "ScheduleAnyway", "", "Sometimes"]),
        prop::option::of(prop::sample::select(&[-1i64, 0, 1, 2, 3, 100][..])),
        prop::option::of(pick(&["Honor", "Ignore", "honor"])),
        prop::option::of(pick(&["Honor", "Ignore", ""])),
        prop::option::of(prop::collection::vec(key(), 0..3)),
        selector(),
    )
        .prop_map(|(skew, tk, action, min, nap, ntp, mlk, sel)| {
            let mut c = json!({"maxSkew": skew, "topologyKey": tk, "whenUnsatisfiable": action});
            if let Some(m) = min {
                c["minDomains"] = json!(m);
            }
            if let Some(p) = nap {
                c["nodeAffinityPolicy"] = json!(p);
            }
            if let Some(p) = ntp {
                c["nodeTaintsPolicy"] = json!(p);
            }
            if let Some(k) = mlk {
                c["matchLabelKeys"] = json!(k);
            }
            if let Some(s) = sel {
                c["labelSelector"] = s;
            }
            c
        })
}

fn pod_spec(nodes: usize) -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(constraint(), 0..4),
        prop::option::of(labels()),
        prop::option::of(0..nodes + 2),
        any::<bool>(),
    )
        .prop_map(move |(cs, node_selector, node, tolerate)| {
            let mut spec = json!({"containers": [{"name": "c", "image": "i"}], "topologySpreadConstraints": cs});
            if let Some(ns) = node_selector {
                spec["nodeSelector"] = Value::Object(ns);
            }
            if let Some(n) = node {
                // Indexes past the node list name a node that does not exist.
                spec["nodeName"] = json!(format!("n{n}"));
            }
            if tolerate {
                spec["tolerations"] = json!([{"operator": "Exists"}]);
            }
            spec
        })
}

/// One object holding a pod spec, of any kind validate reads.
fn workload(i: usize, nodes: usize) -> impl Strategy<Value = Value> {
    (
        0..8usize,
        labels(),
        pod_spec(nodes),
        prop::option::of(pick(&["default", "prod"])),
    )
        .prop_map(move |(kind, labels, spec, ns)| {
            let mut meta = json!({"name": format!("w{i}"), "labels": labels});
            if let Some(ns) = ns {
                meta["namespace"] = json!(ns);
            }
            let template = json!({"metadata": {"labels": labels}, "spec": spec});
            let selector = json!({"matchLabels": labels});
            let (api, kind, body) = match kind {
                0 => ("v1", "Pod", json!({"spec": spec})),
                1 => (
                    "apps/v1",
                    "Deployment",
                    json!({"spec": {"selector": selector, "template": template}}),
                ),
                2 => (
                    "apps/v1",
                    "ReplicaSet",
                    json!({"spec": {"selector": selector, "template": template}}),
                ),
                3 => (
                    "apps/v1",
                    "StatefulSet",
                    json!({"spec": {"selector": selector, "template": template}}),
                ),
                4 => (
                    "apps/v1",
                    "DaemonSet",
                    json!({"spec": {"selector": selector, "template": template}}),
                ),
                5 => ("batch/v1", "Job", json!({"spec": {"template": template}})),
                6 => (
                    "batch/v1",
                    "CronJob",
                    json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}}),
                ),
                _ => (
                    "v1",
                    "ReplicationController",
                    json!({"spec": {"template": template}}),
                ),
            };
            let mut o = json!({"apiVersion": api, "kind": kind, "metadata": meta});
            if let (Some(o), Some(body)) = (o.as_object_mut(), body.as_object()) {
                o.extend(body.clone());
            }
            o
        })
}

fn node(i: usize) -> impl Strategy<Value = Value> {
    (labels(), any::<bool>()).prop_map(move |(labels, tainted)| {
        let mut n = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("n{i}"), "labels": labels}});
        if tainted {
            n["spec"] = json!({"taints": [{"key": "k", "effect": "NoSchedule"}]});
        }
        n
    })
}

fn scheduler_config() -> impl Strategy<Value = Value> {
    (
        prop::option::of(pick(&["System", "List", "", "Other"])),
        prop::collection::vec(constraint(), 0..3),
    )
        .prop_map(|(dt, cs)| {
            let mut args = json!({"defaultConstraints": cs});
            if let Some(dt) = dt {
                args["defaultingType"] = json!(dt);
            }
            json!({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": "s", "pluginConfig": [{"name": "PodTopologySpread", "args": args}]}]})
        })
}

/// Nodes, workloads and maybe a scheduler configuration, as a multi-document YAML file.
fn manifests() -> impl Strategy<Value = String> {
    (0..6usize, 1..4usize)
        .prop_flat_map(|(nodes, workloads)| {
            (
                (0..nodes).map(node).collect::<Vec<_>>(),
                (0..workloads)
                    .map(|i| workload(i, nodes))
                    .collect::<Vec<_>>(),
                prop::option::of(scheduler_config()),
            )
        })
        .prop_map(|(nodes, workloads, config)| {
            let docs: Vec<Value> = nodes.into_iter().chain(workloads).chain(config).collect();
            serde_saphyr::to_string_multiple(&docs).unwrap_or_default()
        })
}

/// Where every finding about `w` must point: under its pod spec.
fn spec_prefix(w: &Workload) -> String {
    w.pod_spec().map(|s| s.path.to_string()).unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn validate_and_lint_never_panic(yaml in manifests()) {
        let manifests = match parse_manifests(&yaml, "gen.yaml") {
            Ok(m) => m,
            // A generated value the typed objects refuse (e.g. a huge minDomains) is an
            // error with a message, which is all we ask.
            Err(e) => { prop_assert!(!e.to_string().is_empty()); return Ok(()); }
        };
        let features = ApiServerFeatures::default();
        let mut workloads = Vec::new();
        let pods = InputPods::new(&manifests.objects);
        for l in &manifests.objects {
            if let Object::SchedulerConfiguration(c) = &l.object {
                for e in validate_scheduler_configuration(c, Default::default()).unwrap_or_default() {
                    prop_assert!(e.field.starts_with("profiles[0].pluginConfig[0].args."), "{e}");
                }
            }
            let Some(w) = Workload::from_object(&l.object) else { continue };
            let prefix = spec_prefix(&w);
            for e in validate_workload_create(&w, &features)
                .into_iter()
                .chain(template_pods_create(&w, &features))
            {
                prop_assert!(e.field.starts_with(&prefix), "{e} not under {prefix}");
            }
            for lint in lint_workload(&w, &features) {
                prop_assert!(lint.field.starts_with(&prefix), "{lint} not under {prefix}");
            }
            for lint in lint_pod_affinity(&w, &pods) {
                prop_assert!(!lint.code.needs_nodes());
                prop_assert!(lint.field.starts_with(&prefix), "{lint} not under {prefix}");
            }
            workloads.push(w);
        }
        let has_nodes = manifests.objects.iter().any(|l| matches!(l.object, Object::Node(_)));
        if let Ok(snapshot) = build_snapshot(&manifests.objects) {
            let mut linter = ClusterLinter::new(snapshot).map_err(|e| TestCaseError::fail(e.to_string()))?;
            for w in &workloads {
                let lints = linter.lint(w);
                // The shared linter reuses answers across pods alike; a fresh one cannot.
                let fresh = build_snapshot(&manifests.objects)
                    .ok()
                    .and_then(|s| ClusterLinter::new(s).ok())
                    .map(|mut l| l.lint(w));
                prop_assert_eq!(Some(&lints), fresh.as_ref());
                prop_assert!(has_nodes || lints.is_empty());
                let prefix = spec_prefix(w);
                for lint in lints {
                    prop_assert!(lint.code.needs_nodes());
                    prop_assert!(lint.field.starts_with(&prefix), "{lint} not under {prefix}");
                }
            }
        }
    }
}
