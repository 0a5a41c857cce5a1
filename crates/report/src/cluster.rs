//! The cluster drawn as the Kubernetes docs draw it: topology domains over nodes over
//! pods, in ASCII boxes, with matching-pod counts per domain and the skew per key.

use crate::summary::SummaryText as _;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use topospread::api::Sym;
use topospread::snapshot::{NodeId, Snapshot};
use topospread_jobs::domains::{Highlight, counts_by_domain, matching_on, skew};
use topospread_jobs::report::summary::summarize;

/// What to draw.
#[derive(Clone, Debug)]
pub struct ShowOptions {
    /// Topology keys, outermost first.
    pub topology_keys: Vec<String>,
    /// Matching pods.
    pub highlight: Highlight,
    /// Rows of boxes wider than this wrap (at outermost-domain boundaries); nodes that
    /// do not fit even so are collapsed into per-domain summaries.
    pub max_width: usize,
    /// Draw every node and list every domain, however wide.
    pub wide: bool,
}

/// One line: `zone: zoneA=2 zoneB=1, skew 1`.
pub fn counts_line(key: &str, counts: &[(String, u32)]) -> String {
    if counts.is_empty() {
        return format!("{key}: no node carries this key");
    }
    let cs: Vec<String> = counts.iter().map(|(d, n)| format!("{d}={n}")).collect();
    format!("{key}: {}, skew {}", cs.join(" "), skew(counts))
}

/// A box in the drawing: a domain (with children) or a node (a leaf).
struct Cell {
    label: String,
    width: usize,
    children: Vec<Cell>,
    pods: String,
}

impl Cell {
    fn layout(&mut self) -> usize {
        if self.children.is_empty() {
            self.width = self.label.len().max(self.pods.chars().count()) + 2;
        } else {
            let inner: usize =
                self.children.iter_mut().map(Cell::layout).sum::<usize>() + self.children.len() - 1;
            let need = self.label.len() + 2;
            if need > inner {
                self.widen_last(need - inner);
            }
            self.width = inner.max(need);
        }
        self.width
    }

    fn widen_last(&mut self, extra: usize) {
        self.width += extra;
        if let Some(last) = self.children.last_mut() {
            last.widen_last(extra);
        }
    }

    /// The cells at `depth` below this one (0: itself).
    fn at<'a>(&'a self, depth: usize, out: &mut Vec<&'a Cell>) {
        if depth == 0 || self.children.is_empty() {
            out.push(self);
        } else {
            for c in &self.children {
                c.at(depth - 1, out);
            }
        }
    }
}

/// How the cells are made from sorted nodes.
struct Tree<'a> {
    /// Key levels drawn; below the last, nodes (or, collapsed, one summary per domain).
    keys: usize,
    last_is_per_node: bool,
    /// Nodes are not drawn: each domain of the last level drawn is one summary cell.
    collapsed: bool,
    /// A domain's label from its level, value and the nodes of its box.
    label_of: &'a LabelFn<'a>,
    leaf: &'a dyn Fn(NodeId, String) -> Cell,
    node_label: &'a dyn Fn(NodeId) -> String,
    summary: &'a SummaryFn<'a>,
}

impl Tree<'_> {
    fn build(&self, level: usize, nodes: &[(Vec<String>, NodeId)]) -> Vec<Cell> {
        if level == self.keys {
            return nodes
                .iter()
                .map(|(_, id)| (self.leaf)(*id, (self.node_label)(*id)))
                .collect();
        }
        let mut out = Vec::new();
        let mut i = 0;
        while i < nodes.len() {
            let v = &nodes[i].0[level];
            let j = i + nodes[i..].iter().take_while(|n| &n.0[level] == v).count();
            let label = (self.label_of)(level, v, &nodes[i..j]);
            if level + 1 == self.keys && self.collapsed {
                out.push((self.summary)(&nodes[i..j], label));
            } else if level + 1 == self.keys && self.last_is_per_node {
                out.push((self.leaf)(nodes[i].1, label));
            } else {
                out.push(Cell {
                    label,
                    width: 0,
                    children: self.build(level + 1, &nodes[i..j]),
                    pods: String::new(),
                });
            }
            i = j;
        }
        out
    }
}

fn border(cells: &[&Cell]) -> String {
    let mut s = String::from("+");
    for c in cells {
        s.push_str(&"-".repeat(c.width));
        s.push('+');
    }
    s
}

fn row(cells: &[&Cell], text: impl Fn(&Cell) -> String) -> String {
    let mut s = String::from("|");
    for c in cells {
        let t = text(c);
        let len = t.chars().count();
        let left = (c.width.saturating_sub(len)) / 2;
        let right = c.width.saturating_sub(len + left);
        let _ = write!(s, "{}{t}{}|", " ".repeat(left), " ".repeat(right));
    }
    s
}

/// The pods on a node: `P` matching, `o` other; counted when there are many.
fn pods_text(matching: usize, other: usize) -> String {
    if matching + other <= 4 {
        let mut v = vec!["P"; matching];
        v.extend(std::iter::repeat_n("o", other));
        v.join(" ")
    } else if other == 0 {
        format!("{matching}P")
    } else if matching == 0 {
        format!("{other}o")
    } else {
        format!("{matching}P {other}o")
    }
}

/// The boxes of a drawing, laid out, and how many label rows they have.
struct Drawing {
    tops: Vec<Cell>,
    depth: usize,
}

/// The pods of many nodes: `12P 3400o`, counted.
fn totals_text(matching: usize, other: usize) -> String {
    match (matching, other) {
        (0, 0) => "no pods".to_string(),
        (m, 0) => format!("{m}P"),
        (0, o) => format!("{o}o"),
        (m, o) => format!("{m}P {o}o"),
    }
}

/// Draws the cluster. Nodes without a key are grouped under `(no <key>)`. When an
/// outermost domain would be wider than `max_width` even alone (hundreds of nodes in a
/// zone), nodes are collapsed into one summary per domain of the inner keys, and
/// inner keys are dropped until the domains fit; `wide` draws every node regardless.
pub fn render_cluster(snapshot: &Snapshot, opts: &ShowOptions) -> String {
    let nodes = sorted_nodes(snapshot, opts);
    let keys = &opts.topology_keys;
    let last_is_per_node = !keys.is_empty()
        && nodes.windows(2).all(|w| w[0].0 != w[1].0)
        && nodes
            .iter()
            .all(|(vs, _)| vs.last().is_some_and(|v| !v.starts_with("(no ")));
    // Each node's matching and other pods, counted once.
    let per_node: Vec<(usize, usize)> = snapshot
        .nodes()
        .iter()
        .map(|info| {
            let m = matching_on(snapshot, info.id, &opts.highlight);
            let total = info
                .pods()
                .iter()
                .filter(|p| snapshot.pod(**p).is_some())
                .count();
            (m, total - m)
        })
        .collect();
    let matching: Vec<usize> = per_node.iter().map(|p| p.0).collect();
    let counts: Vec<Vec<(String, u32)>> = opts
        .topology_keys
        .iter()
        .map(|k| counts_by_domain(snapshot, k, &matching))
        .collect();
    let count_maps: Vec<HashMap<&str, u32>> = counts
        .iter()
        .map(|c| c.iter().map(|(v, n)| (v.as_str(), *n)).collect())
        .collect();
    let leaf = |id: NodeId, label: String| {
        let (m, other) = per_node[id.index()];
        Cell {
            label,
            width: 0,
            children: Vec::new(),
            pods: pods_text(m, other),
        }
    };
    // A domain of an inner key can sit in several outer boxes (`rack1` in each zone):
    // each box counts its own nodes, and says what the whole domain holds.
    let split = split_domains(&nodes);
    let label_of = |level: usize, v: &str, group: &[(Vec<String>, NodeId)]| -> String {
        let Some(total) = count_maps[level].get(v) else {
            return v.to_string();
        };
        if split[level].contains(v) {
            let here: usize = group.iter().map(|(_, id)| per_node[id.index()].0).sum();
            format!("{v} ({here} of {total})")
        } else {
            format!("{v} ({total})")
        }
    };
    let node_label = |id: NodeId| {
        let n = per_node[id.index()].0;
        format!("{} ({n})", snapshot.node(id).node.name)
    };
    let summary = |group: &[(Vec<String>, NodeId)], label: String| {
        let (m, other) = group.iter().fold((0, 0), |(m, o), (_, id)| {
            let (nm, no) = per_node[id.index()];
            (m + nm, o + no)
        });
        Cell {
            label,
            width: 0,
            children: Vec::new(),
            pods: format!(
                "{} node{}: {}",
                group.len(),
                if group.len() == 1 { "" } else { "s" },
                totals_text(m, other)
            ),
        }
    };
    let all_label = |n: usize| format!("all {n} nodes");
    let draw = |levels: usize, collapsed: bool| -> Drawing {
        if collapsed && levels == 0 {
            let mut cell = summary(&nodes, all_label(nodes.len()));
            cell.layout();
            return Drawing {
                tops: vec![cell],
                depth: 1,
            };
        }
        let tree = Tree {
            keys: levels,
            last_is_per_node: last_is_per_node && levels == keys.len(),
            collapsed,
            label_of: &label_of,
            leaf: &leaf,
            node_label: &node_label,
            summary: &summary,
        };
        let mut tops = tree.build(0, &nodes);
        for t in &mut tops {
            t.layout();
        }
        // A node row is added under the keys unless the last key is one node per
        // domain, or nodes are collapsed.
        let depth = levels + usize::from(!collapsed && !tree.last_is_per_node);
        Drawing { tops, depth }
    };
    let fits = |d: &Drawing| d.tops.iter().all(|t| t.width + 2 <= opts.max_width);
    let mut drawing = draw(keys.len(), false);
    let mut collapsed_to = None;
    if !opts.wide && !fits(&drawing) {
        // Drop the per-node key first (it is the node row), then inner keys.
        let mut levels = keys.len() - usize::from(last_is_per_node);
        loop {
            drawing = draw(levels, true);
            if fits(&drawing) || levels == 0 {
                break;
            }
            levels -= 1;
        }
        collapsed_to = Some(levels);
    }
    let mut out = write_drawing(drawing, opts.max_width);
    if nodes.is_empty() {
        out.push_str("(no nodes)\n");
    }
    write_legend(
        &mut out,
        snapshot,
        opts,
        &counts,
        split.iter().any(|s| !s.is_empty()),
        collapsed_to.map(|levels| (levels, nodes.len())),
    );
    out
}

/// Each node with its domain value under each key (`(no KEY)` without the label),
/// sorted by those values (nodes without a key after those with it), then by name.
fn sorted_nodes(snapshot: &Snapshot, opts: &ShowOptions) -> Vec<(Vec<String>, NodeId)> {
    let symbols = snapshot.symbols();
    let keys: Vec<Option<Sym>> = opts.topology_keys.iter().map(|k| symbols.get(k)).collect();
    let value_of = |id: NodeId, i: usize| -> String {
        let labels = &snapshot.node(id).node.labels;
        match keys[i].and_then(|k| labels.get(k)) {
            Some(v) => symbols.resolve(v).to_string(),
            None => format!("(no {})", opts.topology_keys[i]),
        }
    };
    let mut nodes: Vec<(Vec<String>, NodeId)> = snapshot
        .nodes()
        .iter()
        .map(|n| ((0..keys.len()).map(|i| value_of(n.id, i)).collect(), n.id))
        .collect();
    // Domains by value, nodes without a key after those with it, then nodes by name.
    nodes.sort_by(|a, b| {
        a.0.iter()
            .map(|v| (v.starts_with("(no "), v))
            .cmp(b.0.iter().map(|v| (v.starts_with("(no "), v)))
            .then_with(|| {
                snapshot
                    .node(a.1)
                    .node
                    .name
                    .cmp(&snapshot.node(b.1).node.name)
            })
    });
    nodes
}

/// The drawing's boxes, row by row, wrapped at outermost boundaries to `max_width`.
fn write_drawing(drawing: Drawing, max_width: usize) -> String {
    let Drawing { tops, depth } = drawing;
    let mut out = String::new();
    let mut start = 0;
    while start < tops.len() {
        let mut width = 1;
        let mut end = start;
        while end < tops.len() && (end == start || width + tops[end].width < max_width) {
            width += tops[end].width + 1;
            end += 1;
        }
        let group: Vec<&Cell> = tops[start..end].iter().collect();
        for d in 0..depth {
            let mut cells = Vec::new();
            for g in &group {
                g.at(d, &mut cells);
            }
            let _ = writeln!(out, "{}", border(&cells));
            let _ = writeln!(out, "{}", row(&cells, |c| c.label.clone()));
        }
        let mut leaves = Vec::new();
        for g in &group {
            g.at(depth, &mut leaves);
        }
        let _ = writeln!(out, "{}", border(&leaves));
        let _ = writeln!(out, "{}", row(&leaves, |c| c.pods.clone()));
        let _ = writeln!(out, "{}", border(&leaves));
        start = end;
        if start < tops.len() {
            out.push('\n');
        }
    }
    out
}

/// What the picture's letters mean, each key's counts (summarised when too wide), how
/// nodes were collapsed (`collapsed`: the levels kept and the node count) and the
/// pending pods not drawn.
fn write_legend(
    out: &mut String,
    snapshot: &Snapshot,
    opts: &ShowOptions,
    counts: &[Vec<(String, u32)>],
    split_boxes: bool,
    collapsed: Option<(usize, usize)>,
) {
    let pending: Vec<&str> = snapshot
        .pods()
        .filter(|(id, _)| snapshot.pod_node(*id).is_none())
        .map(|(_, p)| p.name.as_ref())
        .collect();
    let of_whole = if split_boxes {
        ", (n of m) = n here of the domain's m"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "P = pod matching {}, o = other pod, (n) = matching pods in the domain{of_whole}",
        opts.highlight.description
    );
    let mut summarised = false;
    for (k, c) in opts.topology_keys.iter().zip(counts) {
        let line = counts_line(k, c);
        if opts.wide || line.chars().count() <= opts.max_width {
            let _ = writeln!(out, "{line}");
        } else {
            summarised = true;
            let s = summarize(c);
            let _ = writeln!(out, "{k}: {}", s.headline());
            let _ = write!(
                out,
                "{}",
                s.lines("  ").split_once('\n').map_or("", |x| x.1)
            );
        }
    }
    if let Some((levels, nodes)) = collapsed {
        let shown = if levels == 0 {
            "one summary for the whole cluster".to_string()
        } else {
            format!("one summary per {} domain", opts.topology_keys[levels - 1])
        };
        let _ = writeln!(
            out,
            "{nodes} nodes do not fit {} columns: drawn as {shown}; --wide draws every node, --width N sets the width",
            opts.max_width
        );
    } else if summarised {
        let _ = writeln!(out, "--wide lists every domain");
    }
    if !pending.is_empty() {
        // The docs' incoming pod by name: the picture is the cluster it arrives in.
        const NAMED: usize = 3;
        let mut names = pending[..NAMED.min(pending.len())].join(", ");
        if pending.len() > NAMED {
            let _ = write!(names, " and {} more", pending.len() - NAMED);
        }
        let _ = writeln!(out, "{} pending pod(s) not drawn: {names}", pending.len());
    }
}

/// Draws one collapsed domain: its nodes (with their inner domain values) and its label.
type SummaryFn<'a> = dyn Fn(&[(Vec<String>, NodeId)], String) -> Cell + 'a;

/// Labels a domain's box: its level, its value, the nodes in the box.
type LabelFn<'a> = dyn Fn(usize, &str, &[(Vec<String>, NodeId)]) -> String + 'a;

/// Per key level, the domains drawn in more than one box: nodes with that value differ
/// in an outer key's value (`rack1` in zoneA and in zoneB).
fn split_domains(nodes: &[(Vec<String>, NodeId)]) -> Vec<HashSet<&str>> {
    let levels = nodes.first().map_or(0, |n| n.0.len());
    (0..levels)
        .map(|level| {
            let mut outer: HashMap<&str, &[String]> = HashMap::new();
            let mut split = HashSet::new();
            for (values, _) in nodes {
                let v = values[level].as_str();
                if v.starts_with("(no ") {
                    // Nodes without the key: not a domain, never counted.
                    continue;
                }
                let prefix = &values[..level];
                if *outer.entry(v).or_insert(prefix) != prefix {
                    split.insert(v);
                }
            }
            split
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_are_drawn_one_by_one_then_counted() {
        assert_eq!(pods_text(0, 0), "");
        assert_eq!(pods_text(2, 1), "P P o");
        assert_eq!(pods_text(4, 0), "P P P P");
        assert_eq!(pods_text(5, 0), "5P");
        assert_eq!(pods_text(0, 7), "7o");
        assert_eq!(pods_text(12, 3), "12P 3o");
    }

    #[test]
    fn a_domain_is_split_when_it_sits_in_several_outer_boxes() {
        let row = |values: &[&str], id: u32| {
            (
                values.iter().map(|v| (*v).to_string()).collect::<Vec<_>>(),
                NodeId(id),
            )
        };
        let nodes = vec![
            row(&["r1", "rack1"], 0),
            row(&["r1", "rack2"], 1),
            row(&["r1", "(no rack)"], 2),
            row(&["r2", "rack1"], 3),
            row(&["r2", "(no rack)"], 4),
        ];
        let split = split_domains(&nodes);
        assert!(split[0].is_empty(), "{split:?}");
        assert_eq!(
            split[1],
            HashSet::from(["rack1"]),
            "nodes without the key are no domain"
        );
        assert!(split_domains(&[]).is_empty());
    }

    #[test]
    fn a_counts_line_lists_the_domains_and_the_skew() {
        let c = |v: &[u32]| -> Vec<(String, u32)> {
            v.iter()
                .enumerate()
                .map(|(i, n)| (i.to_string(), *n))
                .collect()
        };
        assert_eq!(counts_line("zone", &c(&[2, 1])), "zone: 0=2 1=1, skew 1");
    }
}
