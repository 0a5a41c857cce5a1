//! Property tests: validation never panics, whatever the constraints hold, and its errors
//! stay under the path it was given.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodSpec, TopologySpreadConstraint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};
use proptest::prelude::*;
use topospread::config::PodTopologySpreadArgs;
use topospread_k8s::validation::{
    ApiServerFeatures, FieldPath, PodValidationOptions, Workload, is_qualified_name,
    is_valid_label_value, template_pods_create, validate_pod_topology_spread_args,
    validate_topology_spread_constraints, validate_workload_create,
};

/// Short strings over an alphabet that hits every branch of the name checks.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("zone".to_string()),
        Just("app".to_string()),
        Just("DoNotSchedule".to_string()),
        Just("ScheduleAnyway".to_string()),
        "[a-zA-Z0-9./_ =é-]{0,12}",
        "[a-z]{60,70}",
    ]
}

fn selector() -> impl Strategy<Value = Option<LabelSelector>> {
    let requirement = (
        token(),
        prop_oneof![
            Just("In".to_string()),
            Just("NotIn".to_string()),
            Just("Exists".to_string()),
            Just("DoesNotExist".to_string()),
            token()
        ],
        proptest::option::of(proptest::collection::vec(token(), 0..3)),
    )
        .prop_map(|(key, operator, values)| LabelSelectorRequirement {
            key,
            operator,
            values,
        });
    proptest::option::of(
        (
            proptest::option::of(proptest::collection::btree_map(token(), token(), 0..3)),
            proptest::option::of(proptest::collection::vec(requirement, 0..4)),
        )
            .prop_map(|(match_labels, match_expressions)| LabelSelector {
                match_labels,
                match_expressions,
            }),
    )
}

fn constraint() -> impl Strategy<Value = TopologySpreadConstraint> {
    (
        any::<i32>(),
        token(),
        token(),
        proptest::option::of(any::<i32>()),
        proptest::option::of(token()),
        proptest::option::of(token()),
        proptest::option::of(proptest::collection::vec(token(), 0..4)),
        selector(),
    )
        .prop_map(
            |(max_skew, topology_key, when_unsatisfiable, min_domains, naff, ntaint, keys, sel)| {
                TopologySpreadConstraint {
                    max_skew,
                    topology_key,
                    when_unsatisfiable,
                    min_domains,
                    node_affinity_policy: naff,
                    node_taints_policy: ntaint,
                    match_label_keys: keys,
                    label_selector: sel,
                }
            },
        )
}

fn options() -> impl Strategy<Value = PodValidationOptions> {
    any::<[bool; 5]>().prop_map(|b| PodValidationOptions {
        allow_match_label_keys_in_pod_topology_spread: b[0],
        allow_match_label_keys_in_pod_topology_spread_selector_merge: b[1],
        old_pod_violates_match_label_keys_validation: b[2],
        old_pod_violates_legacy_match_label_keys_validation: b[3],
        allow_invalid_topology_spread_constraint_label_selector: b[4],
    })
}

proptest! {
    #[test]
    fn pod_validation_never_panics(
        constraints in proptest::collection::vec(constraint(), 0..5),
        opts in options(),
    ) {
        let path = FieldPath::new("spec").child("topologySpreadConstraints");
        let errors = validate_topology_spread_constraints(&constraints, &path, &opts);
        for e in &errors {
            prop_assert!(e.field.starts_with("spec.topologySpreadConstraints["), "{}", e.field);
            let text = e.to_string();
            let prefix = format!("{}: ", e.field);
            prop_assert!(text.starts_with(&prefix), "{}", text);
        }
        if constraints.is_empty() {
            prop_assert!(errors.is_empty());
        }
    }

    #[test]
    fn args_validation_never_panics(
        constraints in proptest::collection::vec(constraint(), 0..5),
        defaulting_type in proptest::option::of(token()),
    ) {
        let args = PodTopologySpreadArgs {
            default_constraints: constraints,
            defaulting_type,
            ..Default::default()
        };
        for e in validate_pod_topology_spread_args(&args, &FieldPath::new("args")) {
            prop_assert!(e.field.starts_with("args."), "{}", e.field);
        }
    }

    #[test]
    fn create_validation_never_panics(
        constraints in proptest::collection::vec(constraint(), 0..4),
        labels in proptest::collection::btree_map(token(), token(), 0..4),
        gates in any::<(bool, bool)>(),
    ) {
        let pod = Pod {
            metadata: ObjectMeta { labels: Some(labels), ..Default::default() },
            spec: Some(PodSpec { topology_spread_constraints: Some(constraints), ..Default::default() }),
            status: None,
        };
        let features = ApiServerFeatures {
            match_label_keys_in_pod_topology_spread: gates.0,
            match_label_keys_in_pod_topology_spread_selector_merge: gates.1,
            ..ApiServerFeatures::default()
        };
        let w = Workload::Pod(pod);
        let _ = validate_workload_create(&w, &features);
        prop_assert!(template_pods_create(&w, &features).is_empty());
    }

    #[test]
    fn well_formed_constraints_are_valid(
        keys in proptest::collection::btree_set("[a-z][a-z0-9]{0,8}", 1..4),
        max_skew in 1..100i32,
        min_domains in proptest::option::of(1..10i32),
    ) {
        // one constraint per key, DoNotSchedule, selector on a label (with a `-`) no key can be
        let constraints: Vec<TopologySpreadConstraint> = keys
            .iter()
            .map(|k| TopologySpreadConstraint {
                max_skew,
                topology_key: format!("example.com/{k}"),
                when_unsatisfiable: "DoNotSchedule".into(),
                min_domains,
                match_label_keys: Some(vec![k.clone()]),
                label_selector: Some(LabelSelector {
                    match_labels: Some(BTreeMap::from([("selected-by".to_string(), "yes".to_string())])),
                    match_expressions: None,
                }),
                ..Default::default()
            })
            .collect();
        let path = FieldPath::new("spec").child("topologySpreadConstraints");
        for opts in [PodValidationOptions::default(), PodValidationOptions::create(true, true)] {
            let errors = validate_topology_spread_constraints(&constraints, &path, &opts);
            prop_assert!(errors.is_empty(), "{errors:?}");
        }
    }

    #[test]
    fn label_values_are_label_names_or_empty(value in "[a-zA-Z0-9._-]{0,70}") {
        // Without a '/', a non-empty value is a valid label value iff it is a valid name.
        if !value.is_empty() {
            prop_assert_eq!(is_valid_label_value(&value).is_empty(), is_qualified_name(&value).is_empty());
        } else {
            prop_assert!(is_valid_label_value(&value).is_empty());
        }
    }
}
