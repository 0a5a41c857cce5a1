//! `-o html` for `simulate`, `explain` and `rebalance`: one self-contained page each
//! (balanced markup, the expected SVG charts, nothing fetched, input escaped), and bad
//! input refused as `-o json` refuses it, with nothing on stdout.

use super::{fixture, run, stderr, stdout, temp};
use std::path::PathBuf;

/// Elements HTML closes by themselves.
const VOID: [&str; 6] = ["meta", "br", "hr", "img", "input", "link"];

/// Checks the page is well-formed enough: a doctype, every element closed in order
/// (SVG's `/>` and HTML's void elements aside; `<style>` and `<script>` bodies
/// skipped), nothing after `</html>`.
fn assert_well_formed(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>\n"), "{html}");
    assert!(html.ends_with("</html>\n"));
    let mut open: Vec<String> = Vec::new();
    // A moving slice, not a copy of what is left per tag: pages of 5,000 rows have
    // tens of thousands of tags.
    let mut rest = &html["<!DOCTYPE html>".len()..];
    while let Some(at) = rest.find('<') {
        let end = rest[at..].find('>').expect("a tag ends") + at;
        let tag = &rest[at + 1..end];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        assert!(!name.is_empty(), "a stray '<' at: {}", &rest[at..end + 1]);
        let mut next = end + 1;
        if let Some(closing) = tag.strip_prefix('/') {
            let top = open.pop();
            assert_eq!(top.as_deref(), Some(closing.trim()), "closing </{closing}>");
        } else if !tag.ends_with('/') && !VOID.contains(&name.as_str()) {
            if name == "script" || name == "style" {
                let close = format!("</{name}>");
                next = rest[next..].find(&close).expect("raw text ends") + next;
            }
            open.push(name);
        }
        rest = &rest[next..];
    }
    assert!(open.is_empty(), "left open: {open:?}");
}

/// Checks nothing is fetched: no `src`/`href` attribute, no URL anywhere.
fn assert_self_contained(html: &str) {
    for attr in [" src=", " href=", "http://", "https://", "@import"] {
        assert!(!html.contains(attr), "{attr} in the page");
    }
}

fn count(html: &str, needle: &str) -> usize {
    html.matches(needle).count()
}

#[test]
fn simulate_html_draws_each_constraint_before_and_after() {
    let f = fixture("forty-nodes.yaml");
    let json = run(&["simulate", "-f", &f, "-o", "json"]);
    let o = run(&["simulate", "-f", &f, "-o", "html"]);
    assert_eq!(o.status.code(), json.status.code(), "{}", stderr(&o));
    let html = stdout(&o);
    assert_well_formed(&html);
    assert_self_contained(&html);
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json");
    let constraints: Vec<&serde_json::Value> = v["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .flat_map(|w| w["constraints"].as_array().expect("constraints"))
        .collect();
    // One figure before and one after per constraint: the zones as a bar each, the 40
    // hostnames (past 60 they would be a histogram) too.
    assert_eq!(
        count(&html, "<svg class=\"chart counts\""),
        2 * constraints.len()
    );
    let domains: usize = constraints
        .iter()
        .map(|c| {
            c["before"].as_object().map_or(0, |m| m.len())
                + c["after"].as_object().map_or(0, |m| m.len())
        })
        .sum();
    assert_eq!(count(&html, "<rect class=\"bar"), domains);
    assert_eq!(count(&html, "<line class=\"limit\""), 2 * constraints.len());
    assert!(
        html.contains("topology.kubernetes.io/zone maxSkew=1 DoNotSchedule"),
        "{html}"
    );
    // Every placement is a row of the sortable table.
    let pods = v["pods"].as_array().expect("pods").len();
    let table = &html[html.find("id=\"placements\"").expect("placements")..];
    assert_eq!(count(table, "<tr><td>"), pods);
    assert_eq!(count(&html, "<script>"), 1);
}

/// 5,000 hostnames are too many for bars: a heatmap cell per node, grouped by the
/// nodes' zones, each cell's node and count on hover; the zones stay bars with the
/// maxSkew band.
#[test]
fn simulate_html_draws_5000_nodes_as_a_heatmap_grouped_by_zone() {
    let f = temp("html-sim-5000.json", &super::explain::big_cluster(5000));
    let o = run(&["simulate", "-f", &f, "-o", "html"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = stdout(&o);
    assert_well_formed(&html);
    assert_self_contained(&html);
    // Before and after, each a cell per eligible node.
    let heatmaps = count(&html, "<svg class=\"chart heatmap\"");
    assert_eq!(heatmaps, 2, "one before, one after");
    let cells = count(&html, "<rect class=\"cell\"");
    assert_eq!(cells % 2, 0);
    assert!(cells >= 2 * 4500, "{cells} cells");
    for z in 0..5 {
        // The group's name, then its domains and pods.
        let group = format!(">zone-{z}</text><text x=");
        assert_eq!(count(&html, &group), 2, "zone-{z} group");
    }
    assert!(!html.contains("(no outer domain)"), "every node has a zone");
    assert!(
        html.contains("<title>node-0000: 1</title>"),
        "node-0000 holds old-0"
    );
    assert!(
        count(&html, "<rect class=\"band\"") >= 2,
        "the zone bars' band"
    );
    assert!(html.len() < 8 << 20, "{} bytes", html.len());
}

#[test]
fn simulate_html_lists_pending_pods_with_their_reasons() {
    let o = run(&[
        "simulate",
        "-f",
        &fixture("docs-conflict.yaml"),
        "-o",
        "html",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let html = stdout(&o);
    assert_well_formed(&html);
    assert!(
        html.contains("<h2 class=\"bad\">Pending: 1 pod(s)</h2>"),
        "{html}"
    );
    assert!(
        html.contains("<td class=\"mono\">default/mypod</td><td>0/3 nodes are available: 3 node(s) didn&#39;t match pod topology spread constraints."),
        "{html}"
    );
}

#[test]
fn input_strings_are_escaped() {
    // The API server refuses the LimitRange by itself (min above max); the page quotes
    // the refusal, which names the file: a name like markup is shown, not run.
    let f = temp(
        "lr-<script>alert('x')<i>.yaml",
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits: [{type: Container, min: {cpu: '2'}, max: {cpu: '1'}}]\n",
    );
    let o = run(&[
        "simulate",
        "-f",
        &fixture("docs-conflict.yaml"),
        "-f",
        &f,
        "-o",
        "html",
    ]);
    let html = stdout(&o);
    assert_well_formed(&html);
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(!html.contains("<i>"), "{html}");
    assert!(
        html.contains("lr-&lt;script&gt;alert(&#39;x&#39;)&lt;i&gt;.yaml"),
        "{html}"
    );
    assert_eq!(count(&html, "<script>"), 1, "the sorting script alone");
}

#[test]
fn explain_html_has_every_node_in_a_sortable_table() {
    let f = temp("html-5000.json", &super::explain::big_cluster(5000));
    let o = run(&["explain", "-f", &f, "deployment/web", "-o", "html"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = stdout(&o);
    assert_well_formed(&html);
    assert_self_contained(&html);
    let table = &html[html
        .find("<table class=\"sortable\" id=\"nodes\">")
        .expect("node table")..];
    let rows = count(table, "<tr class=\"feasible") + count(table, "<tr class=\"rejected");
    assert_eq!(rows, 5000);
    assert_eq!(count(table, "<tr class=\"feasible chosen\""), 1);
    assert_eq!(count(&html, "<script>"), 1);
    // Verdict groups as one stacked bar, and the groups' table.
    assert!(
        html.contains("<svg class=\"chart groups\""),
        "no groups chart"
    );
    assert!(
        html.contains("node(s) didn&#39;t match pod topology spread constraints"),
        "no spread group"
    );
    // The zone constraint's five domains as bars with the global minimum and maxSkew
    // lines; the hostname constraint's 5,000 domains as a histogram.
    assert!(
        html.contains("<rect class=\"bar over\""),
        "zone-0 is above min + maxSkew"
    );
    assert!(
        html.contains("<svg class=\"chart histogram\""),
        "no histogram"
    );
    assert!(count(&html, "<line class=\"min\"") >= 1);
    assert!(count(&html, "<line class=\"limit\"") >= 1);
    assert!(html.len() < 8 << 20, "{} bytes", html.len());
}

#[test]
fn explain_html_of_the_docs_conflict() {
    let o = run(&[
        "explain",
        "-f",
        &fixture("docs-conflict.yaml"),
        "mypod",
        "-o",
        "html",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let html = stdout(&o);
    assert_well_formed(&html);
    assert_self_contained(&html);
    // Two constraints (zone, node): a bar per domain, both lines each.
    assert_eq!(count(&html, "<svg class=\"chart counts\""), 2);
    assert_eq!(count(&html, "<rect class=\"bar"), 5);
    assert_eq!(count(&html, "<line class=\"limit\""), 2);
    insta::assert_snapshot!("explain_conflict_html", html);
}

#[test]
fn explain_html_shows_a_preempting_pods_two_cycles() {
    let o = run(&[
        "explain",
        "-f",
        &fixture("preemption.yaml"),
        "checkout",
        "-o",
        "html",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = stdout(&o);
    assert_well_formed(&html);
    assert!(html.contains("id=\"failed-nodes\""), "{html}");
    assert!(html.contains("id=\"nodes\""), "{html}");
    assert!(
        html.contains("Preemption: node <b>n1</b> chosen; 1 victim(s)"),
        "{html}"
    );
    assert!(
        html.contains("<li>default/report (priority 10)</li>"),
        "{html}"
    );
}

fn shape(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/rebalance")
        .join(format!("{name}.yaml"))
        .display()
        .to_string()
}

#[test]
fn rebalance_html_draws_moves_as_arrows_between_domains() {
    let o = run(&["rebalance", "-f", &shape("full-zone"), "-o", "html"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = stdout(&o);
    assert_well_formed(&html);
    assert_self_contained(&html);
    // Three moves (table snapshot rebalance_full_zone): c1->b1, a1->c1, a1->b1 are, by
    // zone, zc->zb, za->zc, za->zb: three arrows.
    assert_eq!(count(&html, "<svg class=\"chart moves\""), 1);
    assert_eq!(count(&html, "<line class=\"move\""), 3);
    for (from, to) in [("zc", "zb"), ("za", "zc"), ("za", "zb")] {
        assert!(
            html.contains(&format!("<title>1 move(s): {from} to {to}</title>")),
            "{html}"
        );
    }
    let table = &html[html.find("id=\"moves\"").expect("moves table")..];
    assert_eq!(count(table, "<tr><td class=\"num\""), 3);
    // Before and after per constraint.
    assert_eq!(count(&html, "<svg class=\"chart counts\""), 2);
    assert!(html.contains("before: skew 4"), "{html}");
    assert!(html.contains("after: skew 1"), "{html}");
    insta::assert_snapshot!("rebalance_full_zone_html", html);
}

#[test]
fn rebalance_scale_html_lists_every_pods_cost() {
    let f = shape("scale-plan-10-to-3");
    let json = run(&[
        "rebalance",
        "-f",
        &f,
        "--scale",
        "replicaset/web=3",
        "-o",
        "json",
    ]);
    let o = run(&[
        "rebalance",
        "-f",
        &f,
        "--scale",
        "replicaset/web=3",
        "-o",
        "html",
    ]);
    assert_eq!(o.status.code(), json.status.code(), "{}", stderr(&o));
    let html = stdout(&o);
    assert_well_formed(&html);
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json");
    let pods = v["pods"].as_array().expect("pods");
    let table = &html[html.find("id=\"pods\"").expect("pods table")..];
    assert_eq!(count(table, "<tr class="), pods.len());
    let removed = pods.iter().filter(|p| p["delete"] == true).count();
    assert_eq!(count(table, "<td>remove</td>"), removed);
}

#[test]
fn bad_input_is_refused_as_with_json_and_nothing_is_printed() {
    let missing = fixture("no-such-file.yaml");
    let cases: [&[&str]; 4] = [
        &["simulate", "-f", &missing],
        &["explain", "-f", &fixture("docs-conflict.yaml"), "nope"],
        &["rebalance", "-f", &missing],
        &["rebalance", "-f", &shape("full-zone"), "-l", "app in (("],
    ];
    for args in cases {
        let json = run(&[args, &["-o", "json"]].concat());
        let html = run(&[args, &["-o", "html"]].concat());
        assert_eq!(html.status.code(), Some(2), "{args:?}: {}", stderr(&html));
        assert_eq!(html.status.code(), json.status.code(), "{args:?}");
        assert!(html.stdout.is_empty(), "{args:?}: {}", stdout(&html));
        assert_eq!(stderr(&html), stderr(&json), "{args:?}");
    }
}
