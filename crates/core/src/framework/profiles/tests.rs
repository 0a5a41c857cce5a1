use super::*;
use serde_json::json;

fn doc(extra: Value) -> Value {
    let mut v = json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration"
    });
    if let (Some(m), Value::Object(e)) = (v.as_object_mut(), extra) {
        m.extend(e);
    }
    v
}

#[test]
fn every_profile_is_built_and_found_by_scheduler_name() {
    let config = check_configuration(
        &doc(json!({"profiles": [
            {"schedulerName": "a"},
            {"schedulerName": "b", "pluginConfig": [{"name": "DefaultPreemption",
                "args": {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": 5}}]}
        ]})),
        Features::default(),
    )
    .expect("the two-profile configuration is valid");
    let profiles = Profiles::build(
        &Registry::in_tree(),
        &config,
        Features::default(),
        &mut Symbols::default(),
    )
    .expect("the profiles build");
    assert_eq!(profiles.as_slice().len(), 2);
    let b = profiles.get("b").expect("profile b is built");
    assert_eq!(
        b.default_preemption_args().min_candidate_nodes_percentage,
        20
    );
    assert_eq!(b.default_preemption_args().min_candidate_nodes_absolute, 5);
    let a = profiles.get("a").expect("profile a is built");
    assert_eq!(
        a.default_preemption_args().min_candidate_nodes_absolute,
        100
    );
    assert!(profiles.get("default-scheduler").is_none());
}

#[test]
fn backoff_defaults() {
    let config = check_configuration(&doc(json!({})), Features::default())
        .expect("the test configuration is valid");
    assert_eq!(config.pod_initial_backoff_seconds(), 1);
    assert_eq!(config.pod_max_backoff_seconds(), 10);
    let config = check_configuration(
        &doc(json!({"podInitialBackoffSeconds": 2, "podMaxBackoffSeconds": 30})),
        Features::default(),
    )
    .expect("the test configuration is valid");
    assert_eq!(config.pod_initial_backoff_seconds(), 2);
    assert_eq!(config.pod_max_backoff_seconds(), 30);
}

#[test]
fn refusals_name_the_field() {
    let err = |extra: Value| match check_configuration(&doc(extra), Features::default()) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    };
    let e = err(
        json!({"profiles": [{"pluginConfig": [{"name": "InterPodAffinity", "args": {"foo": 1}}]}]}),
    );
    assert!(matches!(e, ConfigError::Parse(_)), "{e}");
    assert_eq!(
        e.to_string(),
        "profiles[0].pluginConfig[0].args.foo: unknown field"
    );
    let e = err(
        json!({"profiles": [{"schedulerName": "a"}, {"schedulerName": "b",
        "plugins": {"filter": {"enabled": [{"name": "Bogus"}]}}}]}),
    );
    assert!(matches!(e, ConfigError::UnknownPlugin { .. }), "{e}");
    let e = err(json!({"parallelism": 0, "podInitialBackoffSeconds": 0}));
    let ConfigError::Invalid { errors } = &e else {
        panic!("want ConfigError::Invalid, got {e}")
    };
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["parallelism", "podInitialBackoffSeconds"]);
    assert!(e.field_errors().is_some());
}
