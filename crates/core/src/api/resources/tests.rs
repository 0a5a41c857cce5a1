//! Cases after upstream's `helpers_test.go` (component-helpers), `fit_test.go`'s
//! computePodResourceRequest example, `types_test.go` (NodeInfo non-zero requests) and
//! `v1helper` name tests.

use k8s_openapi::api::core::v1::{NodeStatus, PodSpec};
use serde_json::json;

use super::*;

fn spec(value: serde_json::Value) -> PodSpec {
    serde_json::from_value(value).expect("bad test pod spec")
}

fn requests(value: serde_json::Value) -> PodResourceRequests {
    pod_requests(&spec(value)).expect("pod_requests")
}

fn container(name: &str, req: serde_json::Value) -> serde_json::Value {
    json!({"name": name, "resources": {"requests": req}})
}

const GI: i64 = 1 << 30;

#[test]
fn init_containers_set_a_floor() {
    // fit.go's computePodResourceRequest example: cpu 3, memory 3G.
    let r = requests(json!({
        "initContainers": [
            container("ic1", json!({"cpu": "2", "memory": "1Gi"})),
            container("ic2", json!({"cpu": "2", "memory": "3Gi"})),
        ],
        "containers": [
            container("c1", json!({"cpu": "2", "memory": "1Gi"})),
            container("c2", json!({"cpu": "1", "memory": "1Gi"})),
        ],
    }));
    assert_eq!((r.requested.milli_cpu, r.requested.memory), (3000, 3 * GI));
}

#[test]
fn restartable_init_containers_run_beside_the_rest() {
    // Sidecar r (1) runs with init i (5): floor 6; sidecars r+s (3) add to the sum 1.
    let r = requests(json!({
        "initContainers": [
            {"name": "r", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
            container("i", json!({"cpu": "5"})),
            {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "2"}}},
        ],
        "containers": [container("c", json!({"cpu": "1"}))],
    }));
    assert_eq!(r.requested.milli_cpu, 6000);

    // A late big sidecar beats an early init container.
    let r = requests(json!({
        "initContainers": [
            container("i", json!({"cpu": "2"})),
            {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "3"}}},
        ],
        "containers": [container("c", json!({"cpu": "1"}))],
    }));
    assert_eq!(r.requested.milli_cpu, 4000);
}

#[test]
fn overhead_is_added_last() {
    let r = requests(json!({
        "initContainers": [container("i", json!({"cpu": "2"}))],
        "containers": [container("c", json!({"cpu": "1", "memory": "1Gi"}))],
        "overhead": {"cpu": "250m", "memory": "120Mi"},
    }));
    assert_eq!(r.requested.milli_cpu, 2250);
    assert_eq!(r.requested.memory, GI + 120 * 1024 * 1024);
    assert_eq!(
        r.non_zero,
        NonZeroRequests {
            milli_cpu: 2250,
            memory: GI + 120 * 1024 * 1024
        }
    );
}

#[test]
fn quantities_are_summed_before_rounding() {
    let r = requests(json!({
        "containers": [
            container("a", json!({"cpu": "0.5m", "memory": "0.5"})),
            container("b", json!({"cpu": "0.5m", "memory": "0.5"})),
        ],
    }));
    assert_eq!((r.requested.milli_cpu, r.requested.memory), (1, 1));
    let r =
        requests(json!({"containers": [container("a", json!({"cpu": "0.1m", "memory": "0.1"}))]}));
    assert_eq!((r.requested.milli_cpu, r.requested.memory), (1, 1));
}

#[test]
fn non_zero_defaults_apply_per_container() {
    let mi = 1024 * 1024;
    // No requests at all: 100m and 200Mi per container.
    let r = requests(json!({"containers": [{"name": "a"}, {"name": "b"}]}));
    assert_eq!(r.requested, Resources::default());
    assert_eq!(
        r.non_zero,
        NonZeroRequests {
            milli_cpu: 200,
            memory: 400 * mi
        }
    );
    assert_eq!(r.score_non_zero, r.non_zero);
    // An explicit zero is kept.
    let r = requests(json!({"containers": [container("a", json!({"cpu": "0"}))]}));
    assert_eq!(
        r.non_zero,
        NonZeroRequests {
            milli_cpu: 0,
            memory: 200 * mi
        }
    );
    // Only the missing resource is defaulted.
    let r =
        requests(json!({"containers": [container("a", json!({"memory": "1Gi"})), {"name": "b"}]}));
    assert_eq!(
        r.non_zero,
        NonZeroRequests {
            milli_cpu: 200,
            memory: GI + 200 * mi
        }
    );
    // Init containers are defaulted too and act as a floor.
    let r = requests(json!({
        "initContainers": [{"name": "i"}],
        "containers": [container("a", json!({"cpu": "50m", "memory": "10Mi"}))],
    }));
    assert_eq!(
        r.non_zero,
        NonZeroRequests {
            milli_cpu: 100,
            memory: 200 * mi
        }
    );
    // A pod with no containers requests nothing, even for scoring.
    let r = requests(json!({"containers": []}));
    assert_eq!(r.non_zero, NonZeroRequests::default());
}

#[test]
fn pod_level_requests_replace_cpu_memory_and_hugepages() {
    let mi = 1024 * 1024;
    let value = json!({
        "resources": {"requests": {"cpu": "2", "hugepages-2Mi": "4Mi"}},
        "containers": [
            container("a", json!({"cpu": "100m", "hugepages-2Mi": "2Mi", "example.com/gpu": "1"})),
            {"name": "b"},
        ],
        "overhead": {"cpu": "100m"},
    });
    let r = requests(value.clone());
    assert_eq!(r.requested.milli_cpu, 2100);
    assert_eq!(r.requested.scalar("hugepages-2Mi"), 4 * mi);
    assert_eq!(r.requested.scalar("example.com/gpu"), 1);
    // NodeInfo: memory is requested nowhere, so every container gets 200Mi; cpu is set.
    assert_eq!(
        r.non_zero,
        NonZeroRequests {
            milli_cpu: 2100,
            memory: 400 * mi
        }
    );
    assert_eq!(
        r.score_non_zero,
        NonZeroRequests {
            milli_cpu: 2100,
            memory: 400 * mi
        }
    );

    // NodeInfo and the scorers differ when some container sets memory and the pod
    // level sets only cpu: the scorer defaults the other container, NodeInfo does not.
    let r = requests(json!({
        "resources": {"requests": {"cpu": "1"}},
        "containers": [container("a", json!({"memory": "1Gi"})), {"name": "b"}],
    }));
    assert_eq!(
        r.non_zero,
        NonZeroRequests {
            milli_cpu: 1000,
            memory: GI
        }
    );
    assert_eq!(
        r.score_non_zero,
        NonZeroRequests {
            milli_cpu: 1000,
            memory: GI + 200 * mi
        }
    );

    // With the feature gate off the pod level is ignored.
    let options = RequestOptions {
        pod_level_resources: false,
        ..RequestOptions::default()
    };
    let off = pod_requests_with(&spec(value), None, options);
    assert_eq!(off.map(|r| r.requested.milli_cpu), Ok(200));
}

#[test]
fn score_request_picks_the_right_counter() {
    let r = requests(json!({
        "containers": [container("a", json!({"ephemeral-storage": "1Ki", "example.com/gpu": "2"}))],
    }));
    assert_eq!(r.score_request("cpu", false), 100);
    assert_eq!(r.score_request("cpu", true), 0);
    assert_eq!(r.score_request("memory", false), 200 * 1024 * 1024);
    assert_eq!(r.score_request("ephemeral-storage", true), 1024);
    assert_eq!(r.score_request("example.com/gpu", false), 2);
    assert_eq!(r.score_request("storage", false), 0);
}

#[test]
fn errors_name_the_field() {
    let err = pod_requests(&spec(json!({
        "containers": [container("a", json!({"cpu": "1"})), container("b", json!({"cpu": "1 core"}))],
    })));
    assert_eq!(
        err.map_err(|e| e.to_string()),
        Err(
            "spec.containers[1].resources.requests[cpu]: \"1 core\": quantities must match \
             the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
                .to_owned()
        )
    );
    let err = pod_requests(&spec(json!({
        "initContainers": [container("i", json!({"memory": "-1Gi"}))],
        "containers": [],
    })));
    assert_eq!(
        err.map_err(|e| e.to_string()),
        Err(
            "spec.initContainers[0].resources.requests[memory]: Invalid value: \"-1Gi\": \
             must be greater than or equal to 0"
                .to_owned()
        )
    );
    let err = pod_requests(&spec(json!({"containers": [], "overhead": {"cpu": "1x"}})));
    assert!(
        matches!(err, Err(ResourceError::Quantity { ref path, .. }) if path == "spec.overhead[cpu]")
    );
}

#[test]
fn node_allocatable_reads_every_dimension() {
    let status: NodeStatus = serde_json::from_value(json!({
        "allocatable": {
            "cpu": "3800m", "memory": "10Gi", "ephemeral-storage": "100Gi", "pods": "110",
            "example.com/gpu": "2", "hugepages-2Mi": "1Gi", "storage": "1Ti",
            "example.com/none": "0",
        }
    }))
    .unwrap();
    let a = node_allocatable(&status).map_err(|e| e.to_string());
    let a = a.unwrap();
    assert_eq!(
        (
            a.milli_cpu,
            a.memory,
            a.ephemeral_storage,
            a.allowed_pod_number
        ),
        (3800, 10 * GI, 100 * GI, 110)
    );
    assert_eq!(
        a.scalars().collect::<Vec<_>>(),
        vec![
            ("example.com/gpu", 2),
            ("example.com/none", 0),
            ("hugepages-2Mi", GI)
        ]
    );
    assert_eq!(a.scalar_entry("example.com/none"), Some(0));
    assert_eq!(a.scalar_entry("example.com/other"), None);
    assert_eq!(
        node_allocatable(&NodeStatus::default()),
        Ok(Resources::default())
    );
    let bad: NodeStatus =
        serde_json::from_value(json!({"allocatable": {"memory": "ten"}})).unwrap();
    assert!(
        matches!(node_allocatable(&bad), Err(ResourceError::Quantity { ref path, .. }) if path == "status.allocatable[memory]")
    );
}

#[test]
fn resources_add_and_sub() {
    let mut a = Resources {
        milli_cpu: 100,
        memory: 10,
        ..Resources::default()
    };
    a.set_scalar("b.io/x", 1);
    let mut b = Resources {
        milli_cpu: 50,
        ephemeral_storage: 5,
        ..Resources::default()
    };
    b.set_scalar("a.io/y", 2);
    b.set_scalar("b.io/x", 3);
    a.add(&b);
    assert_eq!((a.milli_cpu, a.memory, a.ephemeral_storage), (150, 10, 5));
    assert_eq!(
        a.scalars().collect::<Vec<_>>(),
        vec![("a.io/y", 2), ("b.io/x", 4)]
    );
    a.sub(&b);
    assert_eq!(
        a.scalars().collect::<Vec<_>>(),
        vec![("a.io/y", 0), ("b.io/x", 1)]
    );
    assert_eq!(a.milli_cpu, 100);
}

#[test]
fn host_ports_take_upstream_defaults() {
    let s = spec(json!({
        "initContainers": [{"name": "i", "ports": [{"containerPort": 1, "hostPort": 1}]}],
        "containers": [
            {"name": "a", "ports": [
                {"containerPort": 80, "hostPort": 8080},
                {"containerPort": 81},
                {"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "127.0.0.1"},
                {"containerPort": 82, "hostPort": 0},
            ]},
        ],
    }));
    assert_eq!(
        host_ports(&s),
        vec![
            HostPort {
                ip: "0.0.0.0".into(),
                protocol: "TCP".into(),
                port: 8080
            },
            HostPort {
                ip: "127.0.0.1".into(),
                protocol: "UDP".into(),
                port: 53
            },
        ]
    );
}

#[test]
fn resource_name_classes() {
    for (name, extended, scalar) in [
        ("cpu", false, false),
        ("memory", false, false),
        ("storage", false, false),
        ("example.com/gpu", true, true),
        ("nvidia.com/gpu", true, true),
        ("kubernetes.io/foo", false, true),
        ("foo.kubernetes.io/bar", false, true),
        ("requests.example.com/x", false, false),
        ("a/b/c", false, false),
        ("Example.com/x", false, false),
        ("example.com/", false, false),
        ("example.com/-x", false, false),
        ("hugepages-2Mi", false, true),
        ("attachable-volumes-aws-ebs", false, true),
    ] {
        assert_eq!(is_extended_resource_name(name), extended, "{name} extended");
        assert_eq!(is_scalar_resource_name(name), scalar, "{name} scalar");
    }
}

fn status(value: serde_json::Value) -> k8s_openapi::api::core::v1::PodStatus {
    serde_json::from_value(value).expect("bad test pod status")
}

fn bound(spec_value: serde_json::Value, status_value: serde_json::Value) -> PodResourceRequests {
    pod_requests_with(
        &spec(spec_value),
        Some(&status(status_value)),
        RequestOptions::default(),
    )
    .expect("pod_requests_with")
}

#[test]
fn resized_pods_count_the_larger_of_spec_allocated_and_actuated() {
    // TestPodResourceRequests' in-place resize cases: spec 2 cpu, allocated 4 → 4;
    // spec 4, allocated 2 → 4 (the larger); actuated 3 with nothing allocated → 3.
    let one = |cpu: &str| json!({"containers": [container("c", json!({"cpu": cpu}))]});
    let st = |allocated: Option<&str>, actuated: Option<&str>| {
        let mut cs =
            json!({"name": "c", "image": "i", "imageID": "", "ready": true, "restartCount": 0});
        if let Some(a) = allocated {
            cs["allocatedResources"] = json!({"cpu": a});
        }
        if let Some(a) = actuated {
            cs["resources"] = json!({"requests": {"cpu": a}});
        }
        json!({"containerStatuses": [cs]})
    };
    assert_eq!(
        bound(one("2"), st(Some("4"), None)).requested.milli_cpu,
        4000
    );
    assert_eq!(
        bound(one("4"), st(Some("2"), None)).requested.milli_cpu,
        4000
    );
    assert_eq!(
        bound(one("1"), st(None, Some("3"))).requested.milli_cpu,
        3000
    );
    // Infeasible resize: the spec no longer counts.
    let mut infeasible = st(Some("2"), None);
    infeasible["conditions"] =
        json!([{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]);
    assert_eq!(bound(one("4"), infeasible).requested.milli_cpu, 2000);
    // Deferred resize: it does.
    let mut deferred = st(Some("2"), None);
    deferred["conditions"] =
        json!([{"type": "PodResizePending", "status": "True", "reason": "Deferred"}]);
    assert_eq!(bound(one("4"), deferred).requested.milli_cpu, 4000);
    // Status ignored when the gate is off, and for the pod being scheduled.
    let off = RequestOptions {
        in_place_pod_vertical_scaling: false,
        ..RequestOptions::default()
    };
    let r = pod_requests_with(&spec(one("2")), Some(&status(st(Some("4"), None))), off);
    assert_eq!(r.map(|r| r.requested.milli_cpu), Ok(2000));
    // Non-zero defaults apply per source: an allocation without memory still gets 200Mi.
    let r = bound(one("2"), st(Some("4"), None));
    assert_eq!(
        r.non_zero,
        NonZeroRequests {
            milli_cpu: 4000,
            memory: 200 * 1024 * 1024
        }
    );
    // Bad status quantities name the status field.
    let err = pod_requests_with(
        &spec(one("1")),
        Some(&status(st(Some("x"), None))),
        RequestOptions::default(),
    );
    assert!(
        matches!(err, Err(ResourceError::Quantity { ref path, .. }) if path == "status.containerStatuses[0].allocatedResources[cpu]")
    );
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn pod_requests_never_panic(cpu in "\\PC{0,12}", memory in "[-+0-9.eEinumkKMGTP]{0,12}") {
            let _ = pod_requests(&spec(json!({
                "containers": [container("c", json!({"cpu": cpu, "memory": memory}))],
                "overhead": {"cpu": memory},
            })));
        }

        /// Without sidecars: max(Σ containers, max init) + overhead, per resource.
        #[test]
        fn matches_the_simple_formula_without_sidecars(
            containers in prop::collection::vec(0i64..10_000, 0..4),
            inits in prop::collection::vec(0i64..10_000, 0..3),
            overhead in 0i64..1_000,
        ) {
            let cpu = |m: &i64| container("c", json!({"cpu": format!("{m}m")}));
            let r = requests(json!({
                "containers": containers.iter().map(cpu).collect::<Vec<_>>(),
                "initContainers": inits.iter().map(cpu).collect::<Vec<_>>(),
                "overhead": {"cpu": format!("{overhead}m")},
            }));
            let sum: i64 = containers.iter().sum();
            let floor = inits.iter().copied().max().unwrap_or(0);
            prop_assert_eq!(r.requested.milli_cpu, sum.max(floor) + overhead);
            // Non-zero cpu only differs by the defaults for missing requests, and
            // every container here sets cpu.
            prop_assert_eq!(r.non_zero.milli_cpu, r.requested.milli_cpu);
        }
    }
}
