//! The loader's tests over whole files: unknown fields, kinds, lists, errors.

use super::*;
use k8s_openapi::api::core::v1::Pod;

/// `validate` reads past unknown fields, in documents and in lists' items alike,
/// and learns each one's object and field; other commands refuse the file.
#[test]
fn unknown_fields_are_collected_when_asked() {
    let text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [], nodeNme: x}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: [{name: c, securityContext: {allowPrivilegedEscalation: false}}]}\n";
    let mut m = Manifests::collecting_unknown_fields();
    parse_manifests_reader_with(text.as_bytes(), "u.yaml", &mut m).expect("reads");
    assert_eq!(m.objects.len(), 2);
    let found: Vec<(&str, &str, usize)> = m
        .unknown_fields
        .iter()
        .map(|u| (u.object.as_str(), u.field.as_str(), u.source.document))
        .collect();
    assert_eq!(
        found,
        [
            ("pod/a", "spec.nodeNme", 1),
            (
                "pod/b",
                "spec.containers[0].securityContext.allowPrivilegedEscalation",
                2
            )
        ]
    );
    let e = parse_manifests(text, "u.yaml").expect_err("strict");
    assert_eq!(e.to_string(), "u.yaml: pod/a: spec.nodeNme: unknown field");
}

#[test]
fn a_kustomization_is_refused_with_the_command_that_renders_it() {
    let text =
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n";
    let e = parse_manifests(text, "overlay/kustomization.yaml").expect_err("refused");
    assert_eq!(
        e.to_string(),
        "overlay/kustomization.yaml: kustomization/<unnamed>: a kustomize Kustomization, which kubectl kustomize renders into manifests; render it: `kubectl kustomize overlay | topospread ... -f -`"
    );
    // Another group's Kustomization (Flux's) is a custom resource, skipped.
    let flux =
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps}\n";
    assert!(parse_manifests(flux, "flux.yaml").is_ok());
}

/// Objects read elsewhere (a live cluster's) are left as the loader leaves its own.
#[test]
fn objects_read_elsewhere_drop_what_nothing_reads() {
    let json = r#"{"metadata": {"name": "p", "managedFields": [{"manager": "kubelet"}]},
        "spec": {"containers": [{"name": "c"}]}}"#;
    let pod: Pod = serde_json::from_str(json).expect("types");
    let mut object = Object::Pod(Box::new(pod));
    object.drop_unread();
    let meta = object.metadata().expect("metadata");
    assert_eq!(meta.name.as_deref(), Some("p"));
    assert_eq!(meta.managed_fields, None);
}

#[test]
fn multi_document_and_list() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: 4, pods: 110}}\n---\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p1}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n";
    let m = parse_manifests(text, "f.yaml").expect("parses");
    assert_eq!(m.objects.len(), 2);
    assert_eq!(m.skipped.len(), 1);
    let Object::Node(n) = &m.objects[0].object else {
        panic!("not a node")
    };
    let alloc = n.status.as_ref().and_then(|s| s.allocatable.as_ref());
    assert_eq!(
        alloc.and_then(|a| a.get("cpu")).map(|q| q.0.as_str()),
        Some("4")
    );
    assert_eq!(m.objects[1].source.item, Some(0));
}

#[test]
fn typed_lists_lend_their_items_kind_and_api_version() {
    let text = "{\"apiVersion\": \"v1\", \"kind\": \"NodeList\", \"items\": [{\"metadata\": {\"name\": \"n1\"}}]}\n{\"apiVersion\": \"v1\", \"kind\": \"PodList\", \"items\": [{\"metadata\": {\"name\": \"p\"}}, {\"metadata\": {\"name\": \"q\"}}]}\n{\"apiVersion\": \"v1\", \"kind\": \"EventList\", \"items\": [{\"metadata\": {\"name\": \"e\"}}]}";
    let m = parse_manifests(text, "dump.json").expect("parses");
    let kinds: Vec<&str> = m.objects.iter().map(|l| l.object.kind()).collect();
    assert_eq!(kinds, ["Node", "Pod", "Pod"]);
    assert_eq!(m.objects[2].source.document, 2);
    assert_eq!(m.objects[2].source.item, Some(1));
    assert_eq!(m.skipped.len(), 1);
    assert_eq!(m.skipped[0].subject, "dump.json: event/e");
}

#[test]
fn kinds_the_scheduler_reads_but_topospread_does_not_model_say_so() {
    let text = "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: cap, namespace: kube-system}\nstorageClassName: zonal\n---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: ebs.csi.aws.com}\nspec: {storageCapacity: true}\n---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n---\napiVersion: scheduling.k8s.io/v1alpha3\nkind: Workload\nmetadata: {name: w}\n---\napiVersion: example.com/v1\nkind: DeviceClass\nmetadata: {name: other}\n";
    let m = parse_manifests(text, "s.yaml").expect("parses");
    let notes: Vec<String> = m.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(notes.len(), 5, "{notes:?}");
    assert!(
        notes[0].starts_with("s.yaml: csistoragecapacity/cap (namespace kube-system): skipped: kind CSIStorageCapacity (storage.k8s.io/v1) read by the scheduler (VolumeBinding's storage capacity check"),
        "{}",
        notes[0]
    );
    assert!(
        notes[1]
            .contains("kind CSIDriver (storage.k8s.io/v1) read by the scheduler's volume plugins"),
        "{}",
        notes[1]
    );
    assert!(
        notes[2].contains(
            "kind DeviceClass (resource.k8s.io/v1) read by the scheduler (DynamicResources"
        ),
        "{}",
        notes[2]
    );
    assert!(
        notes[3].contains(
            "kind Workload (scheduling.k8s.io/v1alpha3) read by the scheduler (gang scheduling"
        ),
        "{}",
        notes[3]
    );
    // A custom resource of the same name is another kind.
    assert!(
        notes[4].ends_with("kind DeviceClass (example.com/v1) is not read by the scheduler"),
        "{}",
        notes[4]
    );
    assert!(
        notes
            .iter()
            .all(|n| !n.contains("does not affect scheduling"))
    );
}

#[test]
fn unknown_kinds_and_custom_resources_are_skipped_with_a_note() {
    let text = "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: sm, namespace: mon}\nspec: {anything: [1, 2]}\n---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: vj}\nspec: {minAvailable: 3}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";
    let m = parse_manifests(text, "chart.yaml").expect("skipped, not refused");
    assert!(m.objects.is_empty());
    let lines: Vec<String> = m.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            "chart.yaml: servicemonitor/sm (namespace mon): skipped: kind ServiceMonitor (monitoring.coreos.com/v1) is not read by the scheduler",
            "chart.yaml: job/vj: skipped: kind Job (batch.volcano.sh/v1alpha1) is not read by the scheduler",
            "chart.yaml: configmap/c: skipped: kind ConfigMap (v1) does not affect scheduling",
        ]
    );
}

#[test]
fn a_list_whose_items_is_not_a_list_is_refused() {
    let e = parse_manifests("apiVersion: v1\nkind: List\nitems: {a: b}\n", "l.yaml")
        .expect_err("refused");
    assert_eq!(
        e.to_string(),
        "l.yaml: document 1: List: items: Invalid value: object: must be a list of objects"
    );
    let m = parse_manifests(
        "apiVersion: v1\nkind: List\nitems: []\nmetadata: {}\n",
        "l.yaml",
    )
    .expect("an empty list");
    assert!(m.objects.is_empty());
    let e = parse_manifests(
        "apiVersion: v1\nkind: List\nitems: [{metadata: {name: x}}]\n",
        "l.yaml",
    )
    .expect_err("an item of kind: List needs a kind");
    assert!(matches!(e, LoadError::MissingKind { .. }));
}

#[test]
fn fields_a_server_wrote_that_the_schema_lacks_are_noted_not_fatal() {
    let dump = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, uid: u1}\nspec: {futureField: g, containers: [{name: c}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: q, uid: u2}\nspec: {futureField: g, containers: [{name: c}]}\n";
    let m = parse_manifests(dump, "dump.yaml").expect("a dump loads");
    assert_eq!(m.objects.len(), 2);
    let lines = crate::notes::summarize(&m.skipped);
    assert_eq!(
        lines,
        [
            "ignored: field spec.futureField is not in the bundled schema (an object read from a newer server) (2 objects: dump.yaml: pod/p; dump.yaml: pod/q)"
        ]
    );
    // A manifest meant for creation stays strict.
    let e = parse_manifests(&dump.replace(", uid: u1", ""), "m.yaml").expect_err("strict");
    assert_eq!(
        e.to_string(),
        "m.yaml: pod/p: spec.futureField: unknown field"
    );
}

#[test]
fn names_are_printed_without_control_characters() {
    let v = serde_json::json!({"metadata": {"name": "a\u{1b}[31mb\n"}});
    assert_eq!(object_name("Pod", &v), "pod/a\\u{1b}[31mb\\n");
}

#[test]
fn priority_classes_and_disruption_budgets_are_typed() {
    let text = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\npreemptionPolicy: Never\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db}\nspec: {minAvailable: 1, selector: {matchLabels: {app: db}}}\n";
    let m = parse_manifests(text, "f.yaml").expect("parses");
    assert!(m.skipped.is_empty());
    let kinds: Vec<&str> = m.objects.iter().map(|l| l.object.kind()).collect();
    assert_eq!(kinds, ["PriorityClass", "PodDisruptionBudget"]);
    let Object::PriorityClass(pc) = &m.objects[0].object else {
        panic!("not a PriorityClass")
    };
    assert_eq!(pc.value, Some(1000));
}

#[test]
fn unknown_field_and_kind_and_type_errors_name_the_place() {
    let e = parse_manifests(
        "kind: Pod\nmetadata: {name: p}\nspec: {nodeNme: x}\n",
        "a.yaml",
    )
    .expect_err("unknown field");
    assert_eq!(e.to_string(), "a.yaml: pod/p: spec.nodeNme: unknown field");
    let e = parse_manifests(
        "kind: Pod\nmetadata: {name: p}\nspec: {topologySpreadConstraints: [{maxSkew: x}]}\n",
        "a.yaml",
    )
    .expect_err("type error");
    assert!(
        e.to_string()
            .starts_with("a.yaml: pod/p: spec.topologySpreadConstraints[0].maxSkew: ")
    );
    let e = parse_manifests("a: [", "a.yaml").expect_err("bad yaml");
    assert!(matches!(e, LoadError::Yaml { .. }));
}
