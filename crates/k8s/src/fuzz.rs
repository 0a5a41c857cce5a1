//! What `topospread validate` does with a file's text, as one function for the fuzz target
//! (`fuzz/fuzz_targets/validate.rs`) and its stable-toolchain stand-in (the `fuzz_smoke`
//! test) alike: parse the manifests, validate every workload and scheduler configuration,
//! run every lint, build the snapshot and run the cluster lints. Any panic is a bug: all of
//! it reads user input.

use crate::build::build_snapshot;
use crate::load::{Object, parse_manifests, parse_yaml_documents};
use crate::validation::{
    ApiServerFeatures, ClusterLinter, Workload, aggregate_message, lint_workload,
    template_pods_create, validate_scheduler_configuration, validate_workload_create,
};

/// Runs `text` through the whole `validate` pipeline, under the default API server
/// features and with the selector-merge gate off, discarding every result: only a panic
/// (or a hang) says anything.
pub fn validate_pipeline(text: &str) {
    // The untyped path: any document, read by kind.
    if let Ok(docs) = parse_yaml_documents(text, "fuzz.yaml") {
        for doc in docs {
            if let Ok(Some(w)) = Workload::from_value(doc) {
                let _ = validate_workload_create(&w, &ApiServerFeatures::default());
            }
        }
    }
    let Ok(manifests) = parse_manifests(text, "fuzz.yaml") else {
        return;
    };
    let features = [
        ApiServerFeatures::default(),
        ApiServerFeatures {
            match_label_keys_in_pod_topology_spread_selector_merge: false,
            ..ApiServerFeatures::default()
        },
    ];
    let mut workloads = Vec::new();
    for loaded in &manifests.objects {
        if let Object::SchedulerConfiguration(config) = &loaded.object
            && let Ok(errors) = validate_scheduler_configuration(config, Default::default())
        {
            let _ = aggregate_message(&errors);
        }
        let Some(w) = Workload::from_object(&loaded.object) else {
            continue;
        };
        for f in &features {
            let errors = validate_workload_create(&w, f);
            let _ = aggregate_message(&errors);
            let _ = template_pods_create(&w, f);
            for lint in lint_workload(&w, f) {
                let _ = lint.to_string();
            }
        }
        workloads.push(w);
    }
    let Ok(snapshot) = build_snapshot(&manifests.objects) else {
        return;
    };
    let Ok(mut linter) = ClusterLinter::new(snapshot) else {
        return;
    };
    for w in &workloads {
        for lint in linter.lint(w) {
            let _ = lint.to_string();
        }
    }
}
