//! `validate` reads pods read back from a server compact, and reports on them as it did
//! reading them whole.

use super::{ValidateRequest, check, read, validate};
use crate::context::Context;
use crate::input::PodForm;
use std::path::PathBuf;
use topospread::api::Symbols;
use topospread_k8s::load::Object;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../cli/tests/fixtures/{name}"))
}

// A dump's pods, among them a duplicate name, a pod bound to a missing node, an invalid
// pod, a finished one and lints on pods: the report is the one whole pods give, and the
// pods read back from the server were never kept whole.
#[test]
fn a_dump_reports_as_with_whole_pods_without_keeping_them() {
    let ctx = Context::new();
    let file = fixture("validate/dump.yaml");
    let input = read(&ctx, vec![file.clone()].into()).expect("the fixture reads");
    let whole_pods: Vec<&str> = input
        .objects
        .iter()
        .filter_map(|l| match &l.object {
            Object::Pod(p) => p.metadata.name.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(
        whole_pods,
        ["hand-1"],
        "only the pod written by hand is whole"
    );

    let report = validate(&ctx, ValidateRequest::new(vec![file.clone()])).expect("validates");
    let whole = crate::ClusterSource::new(vec![file])
        .load(&ctx, 0, PodForm::Whole)
        .expect("the fixture reads");
    let expected = check(
        &ctx,
        &whole.objects,
        &[],
        Symbols::default(),
        false,
        whole.inputs,
    )
    .expect("validates whole");
    assert_eq!(
        serde_json::to_value(&report.diagnostics).expect("serializes"),
        serde_json::to_value(&expected.diagnostics).expect("serializes")
    );
    assert_eq!(
        serde_json::to_value(&report.summary).expect("serializes"),
        serde_json::to_value(&expected.summary).expect("serializes")
    );
    assert_eq!(report.skipped_lints, expected.skipped_lints);

    let found: Vec<String> = report
        .diagnostics
        .iter()
        .map(|d| {
            let name = d.object.name.as_deref().unwrap_or_default();
            format!("{name} {} {}", d.code.unwrap_or(d.kind), d.field)
        })
        .collect();
    assert_eq!(
        found,
        [
            // The fixture's nodes were written without their status.
            "n1 TS012 status.allocatable",
            "n2 TS012 status.allocatable",
            "n3 TS012 status.allocatable",
            "web-1 TS002 spec.topologySpreadConstraints[0].topologyKey",
            "web-1 TS003 spec.topologySpreadConstraints[0].minDomains",
            "web-2 TS002 spec.topologySpreadConstraints[0].topologyKey",
            "web-2 TS003 spec.topologySpreadConstraints[0].minDomains",
            "web-1 Duplicate metadata.name",
            "web-1 TS002 spec.topologySpreadConstraints[0].topologyKey",
            "web-1 TS003 spec.topologySpreadConstraints[0].minDomains",
            "web-4 Invalid spec.nodeName",
            "bad-1 Invalid spec.topologySpreadConstraints[0].maxSkew",
            "bad-1 TS002 spec.topologySpreadConstraints[0].topologyKey",
            "sel-1 TS001 spec.topologySpreadConstraints[0].labelSelector",
            "sel-1 TS002 spec.topologySpreadConstraints[0].topologyKey",
            "hand-1 TS002 spec.topologySpreadConstraints[0].topologyKey",
            "hand-1 TS003 spec.topologySpreadConstraints[0].minDomains",
        ],
        "{found:#?}"
    );
}
