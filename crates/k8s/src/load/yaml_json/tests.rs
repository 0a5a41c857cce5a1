//! The converter against serde-saphyr: on the shapes it reads, on what it must leave to
//! the parser, and on generated and mutated documents.

use super::to_json;
use proptest::prelude::*;
use serde_json::{Value, json};

/// What serde-saphyr reads from the text, with the loader's options.
fn saphyr(yaml: &str) -> Result<Value, String> {
    serde_saphyr::from_str_with_options(yaml, super::super::yaml_options())
        .map_err(|e| e.to_string())
}

/// The converter's reading, checked against serde-saphyr's whenever it answers.
pub(super) fn converted(yaml: &str) -> Option<Value> {
    let json = to_json(yaml)?;
    let ours: Value = serde_json::from_str(&json)
        .expect("the converter writes valid JSON (proptest prints the YAML)");
    let theirs = saphyr(yaml)
        .expect("serde-saphyr reads what the converter took (proptest prints the YAML)");
    assert_eq!(ours, theirs, "converted {yaml:?} to {json}");
    Some(ours)
}

fn reads(yaml: &str, expected: Value) {
    assert_eq!(converted(yaml), Some(expected), "{yaml:?}");
}

fn bails(yaml: &str) {
    assert_eq!(to_json(yaml), None, "{yaml:?} should be left to the parser");
}

#[test]
fn nested_mappings_and_sequences() {
    reads(
        "  apiVersion: v1\n  kind: Pod\n  metadata:\n    labels:\n      app: web\n    name: p\n  spec:\n    containers:\n    - name: c\n      ports:\n      - containerPort: 8080\n        protocol: TCP\n      - containerPort: -1\n    - name: d\n      args:\n        - a\n        - /b\n",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"app": "web"}, "name": "p"},
            "spec": {"containers": [
                {"name": "c", "ports": [{"containerPort": 8080, "protocol": "TCP"}, {"containerPort": -1}]},
                {"name": "d", "args": ["a", "/b"]}]}}),
    );
    // Keys and values as kubectl prints managedFields, comments, blank lines.
    reads(
        "# head\nf:status:\n  k:{\"type\":\"Ready\"}:\n    .: {}\n\n    f:reason: []\n  # note\n  x: null\n  yy:\nz: true\n",
        json!({"f:status": {"k:{\"type\":\"Ready\"}": {".": {}, "f:reason": []}, "x": null, "yy": null}, "z": true}),
    );
    reads(
        "a:\n   - b: 0\n     c: false\n   - \"q\"\n",
        json!({"a": [{"b": 0, "c": false}, "q"]}),
    );
}

#[test]
fn quoted_scalars_and_escapes() {
    reads(
        r##"a: "x \"y\" \\ \/ \n\t\r \x41\u00e9\U0001F600 \0\a\b\v\f\e\ \N\_\L\P"
b: 'it''s \n "q"'
"c d": ''
'e''f': "#x: y"
g: "ключ ☃"
h: caf☃ a#b [x] {y},z
"##,
        json!({"a": "x \"y\" \\ / \n\t\r Aé😀 \0\u{7}\u{8}\u{b}\u{c}\u{1b} \u{85}\u{a0}\u{2028}\u{2029}",
            "b": "it's \\n \"q\"", "c d": "", "e'f": "#x: y", "g": "ключ ☃", "h": "caf☃ a#b [x] {y},z"}),
    );
}

#[test]
fn empty_collections_and_scalars() {
    reads(
        "a: {}\nb: []\nc:\n- {}\n- []\n",
        json!({"a": {}, "b": [], "c": [{}, []]}),
    );
    reads(
        "zero: 0\nm: 9223372036854775807\nl: -9223372036854775807\nip: 10.0.0.1\ncpu: 100m\nmem: 8Gi\nt: 2024-01-01T00:00:00Z\nv: v1.2.3\nu: 1_000.5\ndot: .\nd: .name\n",
        json!({"zero": 0, "m": i64::MAX, "l": -i64::MAX, "ip": "10.0.0.1", "cpu": "100m", "mem": "8Gi",
            "t": "2024-01-01T00:00:00Z", "v": "v1.2.3", "u": "1_000.5", "dot": ".", "d": ".name"}),
    );
}

#[test]
fn literal_block_scalars() {
    reads(
        "a: |\n  one\n    two\n\n  # three: x\n\nb: |-\n    x\n    y\nc: |+\n  k\n\n\nd:\n- |\n  e\n- f\n",
        json!({"a": "one\n  two\n\n# three: x\n", "b": "x\ny", "c": "k\n\n\n", "d": ["e\n", "f"]}),
    );
    reads(
        "a: |\n\n  x\n   \n  y\nb: 1\n",
        json!({"a": "\nx\n \ny\n", "b": 1}),
    );
    reads(
        "  a: |\n    x\n  b: |-\n    y\n",
        json!({"a": "x\n", "b": "y"}),
    );
}

#[test]
fn what_the_parser_must_read() {
    let scalars = [
        "yes",
        "No",
        "NO",
        "on",
        "Off",
        "y",
        "N",
        "True",
        "FALSE",
        "Null",
        "NULL",
        "~",
        "0x1F",
        "0o17",
        "0b11",
        "1e3",
        "1E3",
        ".5",
        "1.5",
        "-1.5",
        "1.",
        "007",
        "-007",
        "00",
        "1_000",
        "-",
        "-1a",
        "-.5",
        "-inf",
        "-Infinity",
        "---",
        "---a",
        "+1",
        "-0",
        ".inf",
        "-.inf",
        ".NaN",
        "nan",
        "inf",
        "Infinity",
        "99999999999999999999",
        "&a x",
        "*a",
        "!!str x",
        "!t x",
        "? x",
        "%x",
        "@x",
        "`x",
        "{a: b}",
        "[a]",
        "a: b",
        "a #c",
        "a:",
        "a ",
        ">",
        ">-",
        "|2",
        "| # c",
        "\"a\" b",
        "\"a",
        "'a",
        "\"\\q\"",
        "\"\\ud800\"",
        "\"\\x4\"",
        ",a",
        "=",
        "<<",
    ];
    for s in scalars {
        bails(&format!("k: {s}\n"));
        if !s.starts_with("a:") && s != "a: b" {
            bails(&format!("k:\n- {s}\n"));
        }
    }
    for key in [
        "null", "true", "1", "~", "<<", "? a", "-1", "[a]", "y", "a ", "&a a", "!t a",
    ] {
        bails(&format!("{key}: v\n"));
    }
    let texts = [
        "a: b\n  c\n",               // a multi-line plain scalar
        "a: \"b\n  c\"\n",           // a multi-line quoted scalar
        "a: b\na: c\n",              // a duplicate key
        "a: b\n\"a\": c\n",          // the same key, quoted
        "a:\n\tb: c\n",              // a tab
        "a: b\r\n",                  // a carriage return
        "a: b\n b: c\n",             // odd indentation
        "a:\n  b: c\n d: e\n",       // a dedent to no level
        "a:\n- b\n  - c\n",          // an entry more indented
        "a: b\n- c\n",               // an entry in a mapping
        "a:\n  - b\nc:\n- d\n -e\n", // a bad dedent in a sequence
        "- - a\n",                   // a nested sequence on one line
        "-\n  a: b\n",               // an entry on the next line
        "-  a: b\n",                 // extra spaces after the dash
        "a: b # c\n",                // a trailing comment
        "a: &x b\nc: *x\n",          // anchors and aliases
        "a: !!str b\n",              // a tag
        "a: {b: c}\n",               // a flow mapping with content
        "a: >\n  b\n",               // a folded scalar
        "a: |\nb: c\n",              // an empty literal
        "a: |\n  b",                 // a literal without its final line break
        "a: |\n    \n  b\n",         // a leading empty line longer than the content's indentation
        "a: b\n---\nc: d\n",         // a document marker
        "a: b\n...\n",               // a document end
        "a: b\nc",                   // a stray scalar
        "a",                         // a scalar document
        "",                          // nothing
        "- a\n",                     // a sequence document
        "a: b\u{85}c\n",             // a C1 control character
        "a: \u{feff}b\n",            // a byte-order mark
        "a: b\u{2028}c\n",           // a line separator
        "? a\n: b\n",                // a complex key
        "a : b\n",                   // a space before the colon
        "\"a\" : b\n",               // the same, quoted
        "a:  b\n",                   // two spaces after the colon
    ];
    for t in texts {
        bails(t);
    }
    let deep = (0..50).fold(String::from("x: 1\n"), |inner, i| {
        let pad: String = inner.lines().map(|l| format!("  {l}\n")).collect();
        format!("k{i}:\n{pad}")
    });
    bails(&deep);
    bails(&format!("{}: v\n", "k".repeat(600)));
}

/// A scalar as YAML text: mostly what the converter takes (plain, quoted, numbers,
/// booleans, null), sometimes a doubtful one or random text.
fn scalar() -> impl Strategy<Value = String> {
    let taken = prop::sample::select(vec![
        "a",
        "web",
        "/dev/x",
        "true",
        "false",
        "null",
        "0",
        "42",
        "-7",
        "10.0.0.1",
        "100m",
        "a#b",
        "k:{\"a\":1}",
        "\"a\\\"b\\u00e9\"",
        "'it''s'",
        "\"\"",
        "''",
        "{}",
        "[]",
        "x y",
        "2024-01-01T00:00:00Z",
        "a:b",
        ".",
        "\"\\x41\\N\\/\"",
        "'#: x'",
        "\"8080\"",
        "v1.2",
        "caf\u{e9}",
        "[x]{y},z",
        "-v",
        "--port=80",
    ]);
    let doubtful = prop::sample::select(vec![
        "1.5", "1e3", "007", "yes", "~", "Null", "0x1F", ".5", "inf", "nan", "-", "-inf", "\u{e9}",
        "True", "1_000", ".inf",
    ]);
    prop_oneof![
        12 => taken.prop_map(String::from),
        1 => doubtful.prop_map(String::from),
        1 => "[a-z0-9. :#'\"-]{1,6}",
    ]
}

/// A key as YAML text.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z]{3,8}",
        1 => prop::sample::select(vec!["f:x", ".", "\"q k\"", "'s'", "k:{\"t\":1}", "1", "y"])
            .prop_map(String::from),
    ]
}

/// A YAML node written at `indent`, as a block value (the text after `key:`).
fn node(depth: u32) -> BoxedStrategy<Node> {
    let leaf = scalar().prop_map(Node::Scalar);
    let block = prop::sample::select(vec!["|", "|-", "|+"]).prop_flat_map(|h| {
        prop::collection::vec("[a-z #:]{0,5}", 1..4)
            .prop_map(move |lines| Node::Literal(h.to_string(), lines))
    });
    if depth == 0 {
        return prop_oneof![leaf, block].boxed();
    }
    prop_oneof![
        2 => leaf,
        1 => block,
        2 => prop::collection::vec((key(), node(depth - 1)), 1..4).prop_map(Node::Map),
        2 => (prop::collection::vec(node(depth - 1), 1..4), any::<bool>())
            .prop_map(|(items, indented)| Node::Seq(items, indented)),
    ]
    .boxed()
}

/// A generated YAML node.
#[derive(Clone, Debug)]
enum Node {
    Scalar(String),
    Literal(String, Vec<String>),
    Map(Vec<(String, Node)>),
    /// Entries, and whether they are indented under their key.
    Seq(Vec<Node>, bool),
}

/// Writes `n` as the value after `key:` (or `- `) at `indent`.
fn write(n: &Node, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match n {
        Node::Scalar(s) => out.push_str(&format!(" {s}\n")),
        Node::Literal(h, lines) => {
            out.push_str(&format!(" {h}\n"));
            for l in lines {
                out.push_str(&format!("{pad}  {l}\n"));
            }
        }
        Node::Map(entries) => {
            out.push('\n');
            for (k, v) in entries {
                out.push_str(&format!("{pad}  {k}:"));
                write(v, indent + 2, out);
            }
        }
        Node::Seq(items, indented) => {
            out.push('\n');
            let at = if *indented { indent + 2 } else { indent };
            for v in items {
                out.push_str(&" ".repeat(at));
                out.push('-');
                let Node::Map(entries) = v else {
                    write(v, at, out);
                    continue;
                };
                // A mapping entry in compact form: its first key on the dash's line.
                for (j, (k, v)) in entries.iter().enumerate() {
                    if j == 0 {
                        out.push(' ');
                    } else {
                        out.push_str(&" ".repeat(at + 2));
                    }
                    out.push_str(k);
                    out.push(':');
                    write(v, at + 2, out);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]
    #[test]
    fn generated_documents_read_as_serde_saphyr_reads_them(
        entries in prop::collection::vec((key(), node(3)), 1..5),
        mutation in proptest::option::weighted(0.3, (any::<prop::sample::Index>(), prop::sample::select(
            vec![" ", "  ", "\n", "\n#c\n", "\n\n", "\t", "#", ": ", "- ", "-", "\"", "'", "&", "*", "!", "{", "|", "\\", "x"]))),
    ) {
        let mut text = String::new();
        for (k, v) in &entries {
            text.push_str(k);
            text.push(':');
            write(v, 0, &mut text);
        }
        if let Some((at, s)) = mutation {
            let mut i = at.index(text.len() + 1);
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            text.insert_str(i, s);
        }
        converted(&text);
    }
}
