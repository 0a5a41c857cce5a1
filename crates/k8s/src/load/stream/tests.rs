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
fn errors_inside_deeply_indented_items_name_their_line_and_column() {
    // Indentation of 0 to 20 spaces (runs longer and shorter than the eight the splitter
    // skips at once), then an error: its column counts every space before it.
    for indent in 0..=20 {
        let pad = " ".repeat(indent);
        let text = format!(
            "{{\"kind\": \"List\", \"items\": [\n{pad}{{\"kind\": \"Node\",\n{pad}\"metadata\":\n{pad}{{\"name\": }}}}\n]}}"
        );
        let e = parse_manifests(&text, "l.json").expect_err("refused");
        assert_eq!(
            e.to_string(),
            format!(
                "l.json: invalid JSON: expected value at line 4 column {}",
                indent + 10
            ),
            "indent {indent}"
        );
    }
}

#[test]
fn dump_shapes_read_as_the_tree_reader_reads_them() {
    for (i, text) in dump_shapes().iter().enumerate() {
        same(text, &format!("case{i}"));
    }
}

/// `managedFields` is skipped while typing, and still read as the tree reader reads it:
/// the same objects when it types, the same error (naming the field) when it does not.
#[test]
fn managed_fields_read_as_the_tree_reader_reads_them() {
    for managed in [
        "[]",
        "null",
        r#"[{"manager": "kubelet", "operation": "Update", "time": "2026-11-20T08:14:31Z", "fieldsV1": {"f:status": {".": {}}}}]"#,
        r#"[{"manager": "kubelet", "time": "yesterday"}]"#,
        r#"[{"manager": 7}]"#,
        r#"[{"manager": "m", "bogus": 1}]"#,
        r#"[null]"#,
        "5",
    ] {
        let node = format!(
            r#"{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "n", "managedFields": {managed}}}, "status": {{"allocatable": {{"cpu": "4"}}}}}}"#
        );
        let json = format!(r#"{{"apiVersion": "v1", "kind": "List", "items": [{node}, {node}]}}"#);
        same(&json, &format!("managedFields {managed} (JSON)"));
        let yaml = format!("apiVersion: v1\nkind: List\nitems:\n- {node}\n");
        same(&yaml, &format!("managedFields {managed} (YAML)"));
    }
    let bad = r#"{"kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "managedFields": [{"time": "yesterday"}]}}]}"#;
    let error = super::super::parse_manifests(bad, "d.json").expect_err("refused");
    assert!(
        error.to_string().contains("metadata.managedFields[0].time"),
        "{error}"
    );
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

mod batches {
    //! Lists of many batches, read by several threads: the same objects, notes, symbol
    //! table and first error as one thread reading them.

    use crate::load::Compactor;
    use crate::validation::ApiServerFeatures;
    use serde_json::{Value, json};
    use topospread::api::resources::RequestOptions;

    /// A `List` of nodes and 1,600 pods (bound ones with labels, affinity and spread
    /// constraints that intern new strings all along; a few read the thorough way, a few
    /// pending, a few ConfigMaps), then a `PodList` whose 600 items wait for its kind.
    fn dump(yaml: bool) -> String {
        let mut items: Vec<Value> = (0..20)
            .map(|n| {
                json!({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": format!("n{n}"), "labels": {"zone": format!("z{}", n % 4)}},
                    "status": {"allocatable": {"cpu": "64", "pods": "500"}}})
            })
            .collect();
        for i in 0..1600 {
            if i % 250 == 7 {
                items.push(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("c{i}")}}));
            }
            let mut pod = pod(i);
            pod["apiVersion"] = json!("v1");
            pod["kind"] = json!("Pod");
            if i % 97 == 5 {
                // Read back from a newer server: typed the thorough way, with a note.
                pod["spec"]["futureField"] = json!("x");
            }
            if i % 101 == 3 {
                pod["spec"].as_object_mut().map(|s| s.remove("nodeName"));
            }
            items.push(pod);
        }
        let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
        let typed = json!({"apiVersion": "v1", "kind": "PodList",
            "items": (1600..2200).map(pod).collect::<Vec<_>>()});
        if yaml {
            let to = |v: &Value| serde_saphyr::to_string(v).expect("serializes");
            format!("{}---\n{}", to(&list), to(&typed))
        } else {
            format!("{list}\n{typed}")
        }
    }

    fn pod(i: usize) -> Value {
        json!({
            "metadata": {"name": format!("p{i}"), "namespace": format!("ns{}", i % 7),
                "uid": format!("u{i}"),
                "labels": {"app": format!("a{}", i % 13), "pod-name": format!("p{i}"),
                    format!("k{}", i % 11): format!("v{}", i % 17)}},
            "spec": {
                "nodeName": format!("n{}", i % 20),
                "containers": [{"name": "c", "image": format!("img{}", i % 5),
                    "resources": {"limits": {"cpu": "100m", "memory": format!("{}Mi", 1 + i % 9)}}}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "zone", "operator": "In", "values": [format!("z{}", i % 4), format!("w{i}")]}]}]}}},
                "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": format!("t{}", i % 23),
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app": format!("a{}", i % 13)}}}]
            }
        })
    }

    /// What a read gave: each object (compact pods with their symbol numbers), each note,
    /// and the symbol table's strings in symbol order.
    fn read(text: &str, workers: usize) -> Result<(Vec<String>, Vec<String>, String), String> {
        let compactor = Compactor::new(RequestOptions::default(), ApiServerFeatures::default());
        let (m, c) = super::super::read_compact(text.as_bytes(), "dump", compactor, workers)
            .map_err(|e| e.to_string())?;
        let objects = m.objects.iter().map(|l| format!("{l:?}")).collect();
        let notes = m.skipped.iter().map(ToString::to_string).collect();
        // The Debug form's `texts` lists the strings by symbol (its map is unordered).
        let symbols = format!("{:?}", c.into_symbols());
        let texts = symbols.split_once("texts: ").map(|(_, t)| t.to_string());
        Ok((objects, notes, texts.unwrap_or_default()))
    }

    #[test]
    fn many_batches_compact_the_same_on_any_number_of_threads() {
        for yaml in [false, true] {
            let text = dump(yaml);
            let one = read(&text, 1).expect("reads");
            let (objects, notes, texts) = &one;
            assert_eq!(objects.len(), 20 + 1600 + 600, "yaml {yaml}");
            let compact = objects.iter().filter(|o| o.contains("CompactPod")).count();
            let pending = (0..1600).filter(|i| i % 101 == 3).count();
            assert_eq!(compact, 1600 + 600 - pending, "yaml {yaml}");
            let newer = (0..1600).filter(|i| i % 97 == 5).count();
            let config_maps = (0..1600).filter(|i| i % 250 == 7).count();
            assert_eq!(notes.len(), newer + config_maps, "yaml {yaml}: {notes:?}");
            assert!(texts.contains("\"w1599\"") && texts.contains("\"w2199\""));
            for workers in [2, 5] {
                let many = read(&text, workers);
                assert!(many == Ok(one.clone()), "yaml {yaml}, {workers} threads");
            }
        }
    }

    #[test]
    fn the_first_error_in_the_file_is_the_one_reported_on_any_number_of_threads() {
        let text = dump(false)
            .replacen(
                "\"name\":\"p1400\"",
                "\"name\":\"p1400\",\"generation\":\"x\"",
                1,
            )
            .replacen(
                "\"name\":\"p900\"",
                "\"name\":\"p900\",\"generation\":[]",
                1,
            );
        let one = read(&text, 1).expect_err("refused");
        assert!(
            one.starts_with("dump: pod/p900 (namespace ns4): metadata.generation: "),
            "{one}"
        );
        for workers in [2, 4] {
            assert_eq!(read(&text, workers).expect_err("refused"), one);
        }
    }
}
