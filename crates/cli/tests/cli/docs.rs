//! The Kubernetes docs' topology spread examples ("Pod Topology Spread Constraints":
//! the 4-node cluster in zoneA/zoneB, one constraint, two constraints, the conflicting
//! 3-node cluster, the node affinity that excludes zoneC), each cluster and pod as the
//! page gives them (`fixtures/docs/`), run through `show`, `simulate --show` and
//! `explain`, and the pictures compared with the ones the page draws: the same boxes
//! over the same nodes with the same pods, widths and our `(n)` counts aside.
//!
//! Also `show` with nested keys: an inner domain that sits in several outer boxes counts
//! each box's own pods, and says the whole domain's total.

use super::{fixture, run, stderr, stdout, temp};

/// A box of a picture: its text (the `(n)`/`(n of m)` counts taken off) and the leaf
/// columns it spans, first and last, counted in the bottom row's boxes.
type Box = (String, usize, usize);

/// The first box picture in `text` as rows of boxes, laid out independent of widths:
/// each `|` row's boxes, located by the columns of the bottom border's `+`s.
fn picture(text: &str) -> Vec<Vec<Box>> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with('+'))
        .take_while(|l| l.starts_with('+') || l.starts_with('|'))
        .collect();
    let leaves: Vec<usize> = lines
        .last()
        .map(|l| {
            l.char_indices()
                .filter(|c| c.1 == '+')
                .map(|c| c.0)
                .collect()
        })
        .unwrap_or_default();
    let leaf = |col: usize| leaves.iter().position(|c| *c == col);
    lines
        .iter()
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            let bars: Vec<usize> = l
                .char_indices()
                .filter(|c| c.1 == '|')
                .map(|c| c.0)
                .collect();
            bars.windows(2)
                .map(|w| {
                    let text = without_count(l[w[0] + 1..w[1]].trim());
                    let first = leaf(w[0]).unwrap_or(usize::MAX);
                    let last = leaf(w[1]).map_or(usize::MAX, |i| i.saturating_sub(1));
                    (text, first, last)
                })
                .collect()
        })
        .collect()
}

/// `zoneA (2)` or `rack1 (1 of 3)` -> `zoneA`, `rack1`.
fn without_count(text: &str) -> String {
    match text.rsplit_once(" (") {
        Some((name, rest))
            if rest.ends_with(')')
                && rest[..rest.len() - 1]
                    .split(" of ")
                    .all(|n| n.parse::<u32>().is_ok()) =>
        {
            name.to_string()
        }
        _ => text.to_string(),
    }
}

/// The 4-node cluster as the page draws it, with the three `foo: bar` pods.
const FOUR_NODES: &str = "
+---------------+---------------+
|     zoneA     |     zoneB     |
+-------+-------+-------+-------+
| node1 | node2 | node3 | node4 |
+-------+-------+-------+-------+
|   P   |   P   |   P   |       |
+-------+-------+-------+-------+
";

/// Where mypod may go with one constraint on `zone`: the page's two pictures.
const ONE_CONSTRAINT_NODE4: &str = "
+---------------+---------------+
|     zoneA     |     zoneB     |
+-------+-------+-------+-------+
| node1 | node2 | node3 | node4 |
+-------+-------+-------+-------+
|   P   |   P   |   P   |   P   |
+-------+-------+-------+-------+
";
const ONE_CONSTRAINT_NODE3: &str = "
+---------------+---------------+
|     zoneA     |     zoneB     |
+-------+-------+-------+-------+
| node1 | node2 | node3 | node4 |
+-------+-------+-------+-------+
|   P   |   P   |  P P  |       |
+-------+-------+-------+-------+
";

/// The 3-node cluster where two constraints conflict.
const THREE_NODES: &str = "
+---------------+-------+
|     zoneA     | zoneB |
+-------+-------+-------+
| node1 | node2 | node3 |
+-------+-------+-------+
|  P P  |   P   |  P P  |
+-------+-------+-------+
";

/// The 5-node cluster from zoneA to zoneC.
const FIVE_NODES: &str = "
+---------------+---------------+-------+
|     zoneA     |     zoneB     | zoneC |
+-------+-------+-------+-------+-------+
| node1 | node2 | node3 | node4 | node5 |
+-------+-------+-------+-------+-------+
|   P   |   P   |   P   |       |       |
+-------+-------+-------+-------+-------+
";

/// Runs `topospread ARGS` on docs fixtures (`@NAME` is `fixtures/docs/NAME.yaml`):
/// stdout and the exit code.
fn docs(args: &[&str]) -> (String, i32) {
    let args: Vec<String> = args
        .iter()
        .map(|a| match a.strip_prefix('@') {
            Some(name) => fixture(&format!("docs/{name}.yaml")),
            None => (*a).to_string(),
        })
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&args);
    let code = o.status.code().unwrap_or(-1);
    assert!(
        matches!(code, 0 | 1),
        "{args:?} exited {code}: {}",
        stderr(&o)
    );
    (stdout(&o), code)
}

/// The picture `simulate --show` appends, after the table.
fn drawn_by_simulate(out: &str) -> Vec<Vec<Box>> {
    let at = out.find("\n+-").expect("simulate --show draws a picture");
    picture(&out[at..])
}

#[test]
fn the_parser_reads_the_pages_pictures_and_ours_alike() {
    let page = picture(FOUR_NODES);
    assert_eq!(
        page[0],
        vec![("zoneA".into(), 0, 1), ("zoneB".into(), 2, 3)],
        "{page:?}"
    );
    assert_eq!(page[2][3], (String::new(), 3, 3));
    let ours = "+-----------------------+\n|       zoneA (2)       |\n\
+-----------+-----------+\n| node1 (1) | node2 (1) |\n+-----------+-----------+\n\
|     P     |    P o    |\n+-----------+-----------+\n";
    assert_eq!(
        picture(ours),
        vec![
            vec![("zoneA".to_string(), 0, 1)],
            vec![("node1".to_string(), 0, 0), ("node2".to_string(), 1, 1)],
            vec![("P".to_string(), 0, 0), ("P o".to_string(), 1, 1)],
        ]
    );
    assert_eq!(without_count("rack1 (1 of 3)"), "rack1");
    assert_eq!(without_count("zone (a)"), "zone (a)");
}

/// "One TopologySpreadConstraint": the cluster before, then mypod in zoneB only.
#[test]
fn one_constraint_mypod_goes_to_zone_b() {
    let (out, code) = docs(&["show", "-f", "@4node", "-f", "@one-constraint"]);
    assert_eq!(code, 0);
    assert_eq!(picture(&out), picture(FOUR_NODES), "{out}");
    assert!(
        out.contains("P = pod matching foo=bar in namespace default (the selector of mypod's constraint on zone)"),
        "{out}"
    );
    assert!(out.contains("zone: zoneA=2 zoneB=1, skew 1"), "{out}");
    assert!(
        out.contains("1 pending pod(s) not drawn: mypod"),
        "the incoming pod is named: {out}"
    );

    let (out, code) = docs(&[
        "simulate",
        "-f",
        "@4node",
        "-f",
        "@one-constraint",
        "--show",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("default    mypod  node4  zoneB"), "{out}");
    assert!(out.contains("before: zoneA=2 zoneB=1  skew 1"), "{out}");
    assert!(out.contains("after:  zoneA=2 zoneB=2  skew 0"), "{out}");
    let after = drawn_by_simulate(&out);
    assert!(
        after == picture(ONE_CONSTRAINT_NODE4) || after == picture(ONE_CONSTRAINT_NODE3),
        "one of the page's two pictures: {out}"
    );

    let (out, _) = docs(&["explain", "-f", "@4node", "-f", "@one-constraint", "mypod"]);
    assert!(
        out.contains("2 feasible: node3, node4"),
        "the page: mypod can only go to zoneB: {out}"
    );
    assert!(
        out.contains(
            "node(s) didn't match pod topology spread constraints [PodTopologySpread]: node1, node2"
        ),
        "{out}"
    );
}

/// The page's one-line variants of one-constraint.yaml, as a file: `from` replaced by
/// `to`.
fn variant(name: &str, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(fixture("docs/one-constraint.yaml")).expect("fixture");
    assert!(text.contains(from), "{from} in one-constraint.yaml");
    temp(name, &text.replace(from, to))
}

/// "Change maxSkew to a bigger value like 2 so that the incoming Pod can be placed onto
/// zoneA as well"; "Change topologyKey to node ... can only be placed onto node4",
/// drawn as the page draws the cluster (zones over nodes).
#[test]
fn the_pages_variants_of_one_constraint() {
    let four = fixture("docs/4node.yaml");
    let skew2 = variant("docs-skew2.yaml", "maxSkew: 1", "maxSkew: 2");
    let o = run(&["explain", "-f", &four, "-f", &skew2, "mypod"]);
    let out = stdout(&o);
    assert!(
        out.contains("4 feasible: node1, node2, node3, node4"),
        "{out}"
    );

    let by_node = variant(
        "docs-by-node.yaml",
        "topologyKey: zone",
        "topologyKey: node",
    );
    let o = run(&["simulate", "-f", &four, "-f", &by_node, "--show"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("default    mypod  node4  zoneB"), "{out}");
    assert_eq!(
        drawn_by_simulate(&out),
        picture(ONE_CONSTRAINT_NODE4),
        "{out}"
    );
    let o = run(&["show", "-f", &four, "-f", &by_node]);
    let out = stdout(&o);
    assert_eq!(picture(&out), picture(FOUR_NODES), "{out}");
    assert!(
        out.contains("(the selector of mypod's constraint on node)"),
        "{out}"
    );
}

/// "Multiple TopologySpreadConstraints": zoneB by the first, node4 by the second.
#[test]
fn two_constraints_leave_only_node4() {
    let (out, code) = docs(&["show", "-f", "@4node", "-f", "@two-constraints"]);
    assert_eq!(code, 0);
    assert_eq!(picture(&out), picture(FOUR_NODES), "{out}");
    assert!(out.contains("zone: zoneA=2 zoneB=1, skew 1"), "{out}");
    assert!(
        out.contains("node: node1=1 node2=1 node3=1 node4=0, skew 1"),
        "{out}"
    );

    let (out, code) = docs(&[
        "simulate",
        "-f",
        "@4node",
        "-f",
        "@two-constraints",
        "--show",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("default    mypod  node4  zoneB"), "{out}");
    assert_eq!(
        drawn_by_simulate(&out),
        picture(ONE_CONSTRAINT_NODE4),
        "{out}"
    );

    let (out, _) = docs(&["explain", "-f", "@4node", "-f", "@two-constraints", "mypod"]);
    assert!(out.contains("1 feasible: node4"), "{out}");
}

/// The conflict: zoneB by the first constraint, node2 by the second; mypod stays Pending.
#[test]
fn conflicting_constraints_keep_mypod_pending() {
    let (out, code) = docs(&["show", "-f", "@3node", "-f", "@two-constraints"]);
    assert_eq!(code, 0);
    assert_eq!(picture(&out), picture(THREE_NODES), "{out}");

    let (out, code) = docs(&[
        "simulate",
        "-f",
        "@3node",
        "-f",
        "@two-constraints",
        "--show",
    ]);
    assert_eq!(code, 1, "Pending exits 1: {out}");
    assert!(out.contains("default    mypod  <pending>  -"), "{out}");
    assert!(
        out.contains("3 node(s) didn't match pod topology spread constraints"),
        "{out}"
    );
    assert_eq!(drawn_by_simulate(&out), picture(THREE_NODES), "{out}");
    assert!(out.contains("1 pending pod(s) not drawn: mypod"), "{out}");

    let (out, code) = docs(&["explain", "-f", "@3node", "-f", "@two-constraints", "mypod"]);
    assert_eq!(code, 1);
    assert!(out.contains("0 feasible"), "{out}");
    assert!(
        out.contains("zone maxSkew=1 DoNotSchedule foo=bar: zoneA=3 zoneB=2 (min 2, skew 1)"),
        "{out}"
    );
    assert!(
        out.contains(
            "node maxSkew=1 DoNotSchedule foo=bar: node1=2 node2=1 node3=2 (min 1, skew 1)"
        ),
        "{out}"
    );
}

/// The node affinity convention: zoneC excluded, mypod goes to zoneB, not zoneC.
#[test]
fn node_affinity_keeps_mypod_out_of_zone_c() {
    let (out, code) = docs(&[
        "show",
        "-f",
        "@5node",
        "-f",
        "@one-constraint-with-nodeaffinity",
    ]);
    assert_eq!(code, 0);
    assert_eq!(picture(&out), picture(FIVE_NODES), "{out}");
    let counted = out
        .split("As PodTopologySpread counts for default/mypod")
        .nth(1)
        .expect("the plugin's counts");
    assert!(
        counted.contains("zoneA=2 zoneB=1  skew 1") && !counted.contains("zoneC"),
        "zoneC is not a domain mypod's constraint counts: {counted}"
    );

    let (out, code) = docs(&[
        "simulate",
        "-f",
        "@5node",
        "-f",
        "@one-constraint-with-nodeaffinity",
        "--show",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("default    mypod  node4  zoneB"), "{out}");
    let mut after = picture(FIVE_NODES);
    after[2][3].0 = "P".into();
    assert_eq!(drawn_by_simulate(&out), after, "{out}");

    let (out, _) = docs(&[
        "explain",
        "-f",
        "@5node",
        "-f",
        "@one-constraint-with-nodeaffinity",
        "mypod",
    ]);
    assert!(out.contains("2 feasible: node3, node4"), "{out}");
    assert!(
        out.contains("didn't match Pod's node affinity/selector [NodeAffinity]: node5"),
        "{out}"
    );
}

/// Two regions with a `rack1` and a `rack2` each, three pods in rack1 (two in r1) and
/// four in rack2 (three in r2), one constraint on `rack`.
fn racks() -> String {
    let mut items = Vec::new();
    for (node, region, rack) in [
        ("a1", "r1", "rack1"),
        ("a2", "r1", "rack2"),
        ("b1", "r2", "rack1"),
        ("b2", "r2", "rack2"),
    ] {
        items.push(serde_json::json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node, "labels": {"topology.kubernetes.io/region": region,
                "kubernetes.io/hostname": node, "rack": rack}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}));
    }
    for (i, node) in ["a1", "a1", "a2", "b1", "b2", "b2", "b2"]
        .iter()
        .enumerate()
    {
        items.push(serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("p{i}"), "namespace": "default", "labels": {"app": "web"}},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}],
                "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "rack",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}}}]}}));
    }
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

/// `--topology-key A --topology-key B`: B's domains inside each A box, each counting
/// its own box's pods; B's totals on B's line, not in every box.
#[test]
fn show_nests_inner_domains_with_their_own_counts() {
    let f = temp("docs-racks.json", &racks());
    let o = run(&[
        "show",
        "-f",
        &f,
        "--topology-key",
        "topology.kubernetes.io/region",
        "--topology-key",
        "rack",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("|             r1 (3)              |             r2 (4)              |"),
        "{out}"
    );
    assert!(
        out.contains("| rack1 (2 of 3) | rack2 (1 of 4) | rack1 (1 of 3) | rack2 (3 of 4) |"),
        "each rack box counts its region's pods, of the rack's total: {out}"
    );
    assert!(
        out.contains("|      P P       |       P        |       P        |     P P P      |"),
        "{out}"
    );
    assert!(out.contains("(n of m) = n here of the domain's m"), "{out}");
    assert!(out.contains("rack: rack1=3 rack2=4, skew 1"), "{out}");

    // Without --topology-key, the constraint's own key is drawn: racks over nodes
    // (by hostname).
    let o = run(&["show", "-f", &f]);
    let out = stdout(&o);
    assert_eq!(
        picture(&out),
        vec![
            vec![("rack1".to_string(), 0, 1), ("rack2".to_string(), 2, 3)],
            vec![
                ("a1".to_string(), 0, 0),
                ("b1".to_string(), 1, 1),
                ("a2".to_string(), 2, 2),
                ("b2".to_string(), 3, 3)
            ],
            vec![
                ("P P".to_string(), 0, 0),
                ("P".to_string(), 1, 1),
                ("P".to_string(), 2, 2),
                ("P P P".to_string(), 3, 3)
            ],
        ],
        "{out}"
    );
    assert!(
        !out.contains("(2 of"),
        "racks are outermost, never split: {out}"
    );
    assert!(out.contains("rack: rack1=3 rack2=4, skew 1"), "{out}");
    assert!(
        out.contains("kubernetes.io/hostname: a1=2 a2=1 b1=1 b2=3, skew 2"),
        "{out}"
    );
    assert!(!out.contains("topology.kubernetes.io/region:"), "{out}");
}
