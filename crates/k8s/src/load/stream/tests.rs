//! The streaming reader against the tree reader, on fixtures, dump shapes and generated
//! lists; YAML anchors shared by list items.

use super::super::{parse_manifests, parse_manifests_tree};
use std::path::Path;

/// Both readers agree: the same objects and notes, or the same error.
fn same(text: &str, file: &str) {
    let streamed = parse_manifests(text, file);
    let tree = parse_manifests_tree(text, file);
    match (&streamed, &tree) {
        (Ok(s), Ok(t)) => {
            assert_eq!(s.objects.len(), t.objects.len(), "{file}");
            for (a, b) in s.objects.iter().zip(&t.objects) {
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "{file}");
            }
            let notes = |m: &super::Manifests| -> Vec<String> {
                m.skipped.iter().map(ToString::to_string).collect()
            };
            assert_eq!(notes(s), notes(t), "{file}");
        }
        (Err(s), Err(t)) => assert_eq!(s.to_string(), t.to_string(), "{file}"),
        _ => panic!("{file}: streamed {streamed:?}, tree {tree:?}"),
    }
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, files);
        } else if p
            .extension()
            .is_some_and(|x| x == "yaml" || x == "json" || x == "yml")
        {
            files.push(p);
        }
    }
}

#[test]
fn every_fixture_reads_as_the_tree_reader_reads_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in [
        "crates/cli/tests/fixtures",
        "crates/jobs/examples",
        "deploy",
        "crates/k8s/tests/fixtures",
    ] {
        walk(&root.join(dir), &mut files);
    }
    assert!(files.len() > 30, "fixtures found: {}", files.len());
    for f in files {
        let text = std::fs::read_to_string(&f).expect("fixture reads");
        same(&text, &f.display().to_string());
    }
}

/// Texts shaped as dumps are (kubectl's lists, typed lists, cluster-info dumps,
/// YAML lists), with the odd cases and errors around them.
pub(in crate::load) fn dump_shapes() -> Vec<String> {
    let node = |n: &str| {
        format!(
            "{{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {{\"name\": \"{n}\", \"managedFields\": [{{\"manager\": \"k\", \"fieldsV1\": {{\"f:a\": {{}}}}}}]}}, \"status\": {{\"allocatable\": {{\"cpu\": \"4\"}}}}}}"
        )
    };
    let cases = [
        // kubectl get -o json: items before kind.
        format!(
            "{{\"apiVersion\": \"v1\", \"items\": [{}, {}], \"kind\": \"List\", \"metadata\": {{\"resourceVersion\": \"\"}}}}",
            node("a"),
            node("b")
        ),
        // The API's typed lists: items without kind, before and after the list's kind.
        "{\"kind\": \"PodList\", \"apiVersion\": \"v1\", \"items\": [{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"containers\": []}}]}".into(),
        "{\"items\": [{\"metadata\": {\"name\": \"p\"}}], \"kind\": \"PodList\", \"apiVersion\": \"v1\"}".into(),
        // cluster-info dump: concatenated lists with logs between.
        format!(
            "{{\"kind\": \"NodeList\", \"apiVersion\": \"v1\", \"items\": [{}]}}\n==== START logs for container c of pod a/b ====\nlog {{ [ line\n==== END logs for container c of pod a/b ====\n[{}]",
            node("x"),
            node("y")
        ),
        // Not a list, with an items field; an items field that is not a list.
        "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"}, \"items\": [{\"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}}]}".into(),
        "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": {\"a\": 1}}".into(),
        "{\"apiVersion\": \"v1\", \"kind\": \"Foo\", \"metadata\": {\"name\": \"f\"}, \"items\": [{\"kind\": \"Pod\"}]}".into(),
        // Numbers where strings are wanted; null strings.
        "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\", \"labels\": {\"a\": 1}}, \"status\": {\"allocatable\": {\"cpu\": 4}}}".into(),
        // Syntax errors, placed in the file.
        "{\"kind\": \"Node\", \"metadata\": {\"name\": \"a\"}}\n\n{\"b\": ]}".into(),
        "{\"apiVersion\": \"v1\", \"items\": [\n  {\"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}},\n  {\"kind\": \"Node\", \"metadata\": {\"name\": }}\n], \"kind\": \"List\"}".into(),
        "{\"apiVersion\": \"v1\", \"items\": [{\"kind\": \"Node\"}".into(),
        "[{\"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}}, 3]".into(),
        "{\"kind\": \"Node\"} x".into(),
        // YAML: kubectl get -o yaml, with entries at column 0 and at column 2.
        "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n    managedFields:\n    - manager: k\n      fieldsV1: {f:a: {}}\n  status:\n    allocatable: {cpu: 4, pods: \"110\"}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p, namespace: d}\n  spec:\n    containers:\n    - name: c\n      command: |\n        echo\n\n        - not an entry\n    nodeName: a\nkind: List\nmetadata:\n  resourceVersion: \"\"\n".into(),
        "kind: List\napiVersion: v1\nitems:\n  # nodes\n  - kind: Node\n    metadata: {name: a}\n\n  - metadata: {name: b}\n    kind: \"Node\"\n---\n---\nkind: PodList\napiVersion: v1\nitems:\n- metadata: {name: q}\n".into(),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  items:\n  - a\n---\nkind: Foo\nitems:\n  a: b\n".into(),
        "kind: List\nitems:\n- kind: Node\n  metadata: {name: [}\n".into(),
        "kind: List\nitems:\n- kind: Node\n  metadata: {name: n}\n  spec: {taints: [{key: k, effect: NoSchedule, valu: x}]}\n".into(),
        "~\n---\nkind: Node\nmetadata: {name: a}\n...\n---\n# only a comment\n".into(),
        "--- {kind: Node, metadata: {name: a}}\n--- \nkind: Node\nmetadata: {name: b}\n".into(),
        // A syntax error in the list's own fields after its items: placed in the file.
        "kind: List\nitems:\n- kind: Node\n  metadata: {name: a}\n\n- kind: Node\n  metadata: {name: b}\nmetadata: {name: [}\n".into(),
        // Anchors: shared by items (PyYAML's `&id001`), defined before the items, used
        // after them, in a typed list, an alias to nothing, and across documents.
        PYYAML_LIST.into(),
        "apiVersion: v1\nkind: List\nmetadata: {labels: &l {z: a}}\nitems:\n- kind: Node\n  metadata: {name: a, labels: *l}\n".into(),
        "kind: NodeList\napiVersion: v1\nitems:\n- metadata: {name: a}\n- metadata:\n    name: b\n    labels: &z\n      zone: z1\n- metadata: {name: c, labels: *z}\nmetadata: {labels: *z}\n".into(),
        "kind: List\nitems:\n- kind: Node\n  metadata: {name: a}\n- kind: Node\n  metadata: {name: b, labels: *nope}\n".into(),
        "kind: List\nitems:\n- kind: Node\n  metadata: {name: a, labels: &l {z: a}}\n- kind: Node\n  metadata: {name: b, labels: *l}\n  status: {allocatable: {cpu: [}}\n".into(),
        ACROSS_DOCUMENTS.into(),
    ];
    cases.into()
}

/// A list as PyYAML dumps it: the second pod's labels are an alias of the first's.
const PYYAML_LIST: &str = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    labels: &id001\n      app: web\n    name: a\n  spec:\n    containers:\n    - name: c\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    labels: *id001\n    name: b\n  spec:\n    containers:\n    - name: c\n";

/// An alias in one document of an anchor in another: YAML does not carry anchors
/// across `---`.
const ACROSS_DOCUMENTS: &str = "kind: Node\nmetadata: {name: a, labels: &l {z: a}}\n---\nkind: Node\nmetadata: {name: b, labels: *l}\n";

#[test]
fn list_items_share_anchors() {
    let m = parse_manifests(PYYAML_LIST, "pyyaml.yaml").expect("loads");
    let labels: Vec<_> = m
        .objects
        .iter()
        .map(|l| {
            let meta = l.object.metadata().expect("a pod has metadata");
            (meta.name.clone(), meta.labels.clone().unwrap_or_default())
        })
        .collect();
    assert_eq!(labels.len(), 2);
    for (i, (name, labels)) in labels.iter().enumerate() {
        assert_eq!(name.as_deref(), Some(["a", "b"][i]));
        assert_eq!(labels.get("app").map(String::as_str), Some("web"));
    }
    assert_eq!(m.objects[1].source.item, Some(1));
}

#[test]
fn anchors_are_not_shared_across_documents() {
    let e = parse_manifests(ACROSS_DOCUMENTS, "two.yaml").expect_err("refused");
    let text = e.to_string();
    assert!(
        text.starts_with("two.yaml: invalid YAML: line 5 column "),
        "{text}"
    );
    assert!(text.contains("unknown anchor"), "{text}");
}

#[test]
fn errors_after_the_items_name_their_line_in_the_file() {
    let text = "kind: List\nitems:\n- kind: Node\n  metadata: {name: a}\n- kind: Node\n  metadata: {name: b}\nmetadata: {name: [}\n";
    let e = parse_manifests(text, "l.yaml").expect_err("refused");
    assert!(
        e.to_string()
            .starts_with("l.yaml: invalid YAML: line 7 column "),
        "{e}"
    );
    let e = parse_manifests("{\"kind\": \"List\", \"items\": [\n  {\"kind\": \"Node\"},\n  {\"kind\": \"Node\", \"metadata\": {\"name\": }}\n]}", "l.json")
        .expect_err("refused");
    assert_eq!(
        e.to_string(),
        "l.json: invalid JSON: expected value at line 3 column 41"
    );
}

#[test]
fn dump_shapes_read_as_the_tree_reader_reads_them() {
    for (i, text) in dump_shapes().iter().enumerate() {
        same(text, &format!("case{i}"));
    }
}

#[test]
fn json_documents_separated_as_yaml_separates_them() {
    let text = "{\"kind\": \"Node\", \"metadata\": {\"name\": \"a\"}}\n---\n{\"kind\": \"Node\", \"metadata\": {\"name\": \"b\"}}\n...\n";
    let m = super::super::parse_manifests(text, "s.yaml").expect("reads");
    let names: Vec<_> = m
        .objects
        .iter()
        .filter_map(|l| l.object.metadata()?.name.clone())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(m.objects[1].source.document, 2);
}

#[test]
fn the_reader_error_names_the_file() {
    struct Failing;
    impl std::io::Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("input larger than 1 MiB"))
        }
    }
    let e = super::parse_manifests_reader(std::io::BufReader::new(Failing), "big.json")
        .expect_err("fails");
    assert_eq!(e.to_string(), "big.json: input larger than 1 MiB");
}

mod generated {
    use super::same;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn object() -> impl Strategy<Value = Value> {
        let name = "[a-z][a-z0-9-]{0,8}";
        prop_oneof![
            (name, 0u32..64, proptest::bool::ANY).prop_map(|(n, cpu, as_number)| {
                let cpu = if as_number { json!(cpu) } else { json!(cpu.to_string()) };
                json!({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": n, "labels": {"zone": "z", "note": "a \"quoted\" [x] {y}"}},
                    "status": {"allocatable": {"cpu": cpu}}})
            }),
            (name, proptest::option::of(name)).prop_map(|(n, node)| {
                json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": n, "namespace": "d", "annotations": {"cmd": "line1\nline2\n- not: an item"}},
                    "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}})
            }),
            name.prop_map(|n| json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": n}, "data": {"items": "- a\n- b"}})),
            name.prop_map(|n| json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": n}, "spec": {"nodeNme": "typo"}})),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn generated_lists_read_as_the_tree_reader_reads_them(
            items in proptest::collection::vec(object(), 0..6),
            typed in proptest::bool::ANY,
            pretty in proptest::bool::ANY,
            yaml in proptest::bool::ANY,
        ) {
            let items: Vec<Value> = if typed {
                // A typed list's items leave their kind to the list.
                items
                    .into_iter()
                    .filter(|i| i["kind"] == "Pod")
                    .map(|mut i| {
                        if let Some(m) = i.as_object_mut() {
                            m.remove("kind");
                            m.remove("apiVersion");
                        }
                        i
                    })
                    .collect()
            } else {
                items
            };
            let kind = if typed { "PodList" } else { "List" };
            let list = json!({"apiVersion": "v1", "kind": kind, "items": items, "metadata": {}});
            let text = if yaml {
                serde_saphyr::to_string(&list).expect("serializes")
            } else if pretty {
                serde_json::to_string_pretty(&list).expect("serializes")
            } else {
                serde_json::to_string(&list).expect("serializes")
            };
            same(&text, "generated");
        }
    }
}
