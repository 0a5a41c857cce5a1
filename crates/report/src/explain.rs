//! One pod's scheduling cycle, rendered for a person: each node's verdict per Filter
//! plugin, each feasible node's score per Score plugin with the weighted total, the
//! domain counts each constraint saw, and the outcome.

use crate::summary::SummaryText as _;
use std::fmt::Write as _;
use topospread_jobs::report::explain::{
    ConstraintCounts, ExplainView, FilterVerdict, NodeExplanation, PreemptionView,
};
use topospread_jobs::report::summary::summarize;

/// Beyond this many domains a constraint's counts are summarised.
const LISTED_DOMAINS: usize = 12;

fn counts_text(c: &ConstraintCounts) -> String {
    if c.counts.is_empty() {
        return format!("  {}: no eligible domain", c.constraint);
    }
    // With a skew, the global minimum it was measured from (minDomains applied: 0 when
    // fewer domains than minDomains), as PodTopologySpread's Filter uses it.
    let min = match (c.skew, c.counts.iter().map(|x| x.1).max()) {
        (Some(skew), Some(max)) => max - skew,
        _ => c.counts.iter().map(|x| x.1).min().unwrap_or(0),
    };
    let tail = match c.skew {
        Some(skew) => format!("(min {min}, skew {skew})"),
        None => format!("(min {min})"),
    };
    if c.counts.len() <= LISTED_DOMAINS {
        let cs: Vec<String> = c.counts.iter().map(|(d, n)| format!("{d}={n}")).collect();
        return format!("  {}: {} {tail}", c.constraint, cs.join(" "));
    }
    let counts: Vec<(String, u32)> = c
        .counts
        .iter()
        .map(|(d, n)| (d.clone(), u32::try_from(*n).unwrap_or(0)))
        .collect();
    let summary = summarize(&counts);
    format!(
        "  {}: {tail}\n{}",
        c.constraint,
        summary.lines("    ").trim_end()
    )
}

/// How [`render_explanation`] lays out the nodes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ExplainLayout {
    /// How many of the highest-scoring nodes the grouped layout lists.
    pub top: usize,
    /// Every node with every plugin's verdict and score, instead of verdict groups and
    /// the top-scoring nodes (unreadable at thousands of nodes, complete at any size).
    pub wide: bool,
}

impl Default for ExplainLayout {
    fn default() -> Self {
        Self {
            top: 10,
            wide: false,
        }
    }
}

/// Nodes that got the same Filter verdict: feasible, or rejected by the same plugin with
/// the same reasons (as kube-scheduler's FitError groups them in "0/N nodes are
/// available: ...", `FitError.Error` in pkg/scheduler/framework/types.go).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerdictGroup<'a> {
    /// The rejecting plugin; `None` for the feasible nodes.
    pub plugin: Option<&'a str>,
    /// `Success` for the feasible nodes, else the rejecting status code
    /// (`Unschedulable`, `UnschedulableAndUnresolvable`, `NotEvaluated`, ...).
    pub code: &'a str,
    /// The plugin's reasons, as upstream words them (empty for the feasible nodes).
    pub reasons: &'a [String],
    /// The nodes, in the report's order.
    pub nodes: Vec<&'a NodeExplanation>,
}

impl VerdictGroup<'_> {
    /// Whether these are the feasible nodes.
    pub fn feasible(&self) -> bool {
        self.plugin.is_none()
    }

    /// Whether these nodes were never filtered (the cycle had enough feasible nodes:
    /// percentageOfNodesToScore, or the nominated node passed first).
    pub fn not_evaluated(&self) -> bool {
        self.code == "NotEvaluated"
    }

    /// `feasible`, the reasons joined (`Insufficient cpu, Insufficient memory`), or the
    /// plugin and code when it gave no reason.
    pub fn label(&self) -> String {
        match self.plugin {
            None => "feasible".to_string(),
            Some(_) if self.not_evaluated() => {
                format!("not evaluated ({})", self.reasons.join(", "))
            }
            Some(plugin) if self.reasons.is_empty() => {
                format!("rejected by {plugin} ({})", self.code)
            }
            Some(_) => self.reasons.join(", "),
        }
    }
}

/// The Filter verdict that decided `node`: its first status neither Success nor Skip.
fn rejection(node: &NodeExplanation) -> Option<&FilterVerdict> {
    node.filters
        .iter()
        .find(|f| f.code != "Success" && f.code != "Skip")
}

/// The nodes grouped by verdict: the feasible first, then the largest groups (ties by
/// label), each group's nodes in the report's order.
pub fn verdict_groups(v: &ExplainView) -> Vec<VerdictGroup<'_>> {
    let mut groups: Vec<VerdictGroup<'_>> = Vec::new();
    for node in &v.nodes {
        let (plugin, code, reasons) = match rejection(node) {
            None => (None, "Success", &[][..]),
            Some(f) => (Some(f.plugin.as_str()), f.code.as_str(), &f.reasons[..]),
        };
        match groups
            .iter_mut()
            .find(|g| g.plugin == plugin && g.code == code && g.reasons == reasons)
        {
            Some(g) => g.nodes.push(node),
            None => groups.push(VerdictGroup {
                plugin,
                code,
                reasons,
                nodes: vec![node],
            }),
        }
    }
    groups.sort_by(|a, b| {
        b.feasible()
            .cmp(&a.feasible())
            .then_with(|| b.nodes.len().cmp(&a.nodes.len()))
            .then_with(|| a.label().cmp(&b.label()))
    });
    groups
}

/// The scored nodes, highest total first; among equal totals the chosen node first,
/// then the report's order (kube-scheduler's `selectHost` picks among the highest at
/// random, so the chosen node need not be the first listed otherwise).
pub fn ranked_nodes(v: &ExplainView) -> Vec<&NodeExplanation> {
    let chosen = v.outcome.as_deref().ok();
    let mut scored: Vec<&NodeExplanation> = v.nodes.iter().filter(|n| n.total.is_some()).collect();
    scored.sort_by_key(|n| (std::cmp::Reverse(n.total), Some(n.node.as_str()) != chosen));
    scored
}

/// The Score plugins of the scored nodes, in the order they ran.
pub fn score_plugins(v: &ExplainView) -> Vec<&str> {
    let mut plugins: Vec<&str> = Vec::new();
    for s in v.nodes.iter().flat_map(|n| &n.scores) {
        if !plugins.contains(&s.plugin.as_str()) {
            plugins.push(&s.plugin);
        }
    }
    plugins
}

/// `4500` as `4,500`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// How many node names a verdict group lists before `... and N more`.
const NAMED_NODES: usize = 5;

/// Up to [`NAMED_NODES`] names, then how many more.
fn some_names<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let total = names.len();
    let mut out: Vec<&str> = names.take(NAMED_NODES).collect();
    let more;
    if total > NAMED_NODES {
        more = format!("... and {} more", thousands(total - NAMED_NODES));
        out.push(&more);
    }
    out.join(", ")
}

/// Renders the explanation as plain text: a pod that preempted gets its failed cycle,
/// the preemption (node, victims, nomination), then the cycle after the eviction. The
/// default layout groups the nodes by verdict and lists the top-scoring ones, so it
/// stays a screenful at 5,000 nodes; [`ExplainLayout::wide`] lists every node.
pub fn render_explanation(v: &ExplainView, layout: ExplainLayout) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "pod {}", v.pod);
    for line in &v.context {
        let _ = writeln!(out, "  {line}");
    }
    if let Some(failed) = &v.preempting_cycle {
        let _ = writeln!(
            out,
            "\n== Failed cycle: no node fit, so preemption ran (DefaultPreemption PostFilter)"
        );
        render_cycle(&mut out, failed, layout);
        let _ = writeln!(out, "\n== Cycle after the eviction");
    }
    render_cycle(&mut out, v, layout);
    out
}

fn render_preemption(out: &mut String, p: &PreemptionView) {
    let _ = writeln!(
        out,
        "\nPreemption: node {} chosen; {} victim(s) evicted, most important first",
        p.node,
        p.victims.len()
    );
    for victim in &p.victims {
        let _ = writeln!(
            out,
            "  {}/{}  priority {}",
            victim.namespace, victim.name, victim.priority
        );
    }
    let _ = writeln!(
        out,
        "  the pod is nominated to {} (status.nominatedNodeName): its next cycle tries that node first",
        p.node
    );
}

fn render_cycle(out: &mut String, v: &ExplainView, layout: ExplainLayout) {
    if layout.wide {
        render_wide(out, v);
    } else {
        render_grouped(out, v, layout.top);
    }
    let _ = match &v.outcome {
        Ok(node) => writeln!(out, "\nResult: scheduled to {node}"),
        Err(message) => writeln!(out, "\nResult: Pending: {message}"),
    };
    if let Some(p) = &v.preemption {
        render_preemption(out, p);
    }
}

/// Verdict groups, the top-scoring nodes, then the counts per constraint.
fn render_grouped(out: &mut String, v: &ExplainView, top: usize) {
    let groups = verdict_groups(v);
    let feasible = groups
        .iter()
        .filter(|g| g.feasible())
        .map(|g| g.nodes.len())
        .sum::<usize>();
    let _ = writeln!(
        out,
        "\nFilter: {} node(s), {} feasible (--wide: every node's verdict per plugin)",
        thousands(v.nodes.len()),
        thousands(feasible),
    );
    let count_w = groups
        .iter()
        .map(|g| thousands(g.nodes.len()).len())
        .max()
        .unwrap_or(1);
    for g in &groups {
        let by = match g.plugin {
            Some(plugin) if !g.reasons.is_empty() && !g.not_evaluated() => format!(" [{plugin}]"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {:>count_w$} {}{by}: {}",
            thousands(g.nodes.len()),
            g.label(),
            some_names(g.nodes.iter().map(|n| n.node.as_str()))
        );
    }
    let nominated: Vec<&NodeExplanation> =
        v.nodes.iter().filter(|n| !n.nominated.is_empty()).collect();
    if !nominated.is_empty() {
        let _ = writeln!(
            out,
            "  pods nominated to {} node(s) were counted there: {}",
            thousands(nominated.len()),
            some_names(nominated.iter().map(|n| n.node.as_str()))
        );
    }
    let ranked = ranked_nodes(v);
    if !ranked.is_empty() && top > 0 {
        let shown = &ranked[..top.min(ranked.len())];
        let _ = writeln!(
            out,
            "\nScore: the {} highest of {} scored node(s); per plugin raw/normalized/weighted{}",
            shown.len(),
            thousands(ranked.len()),
            if shown.len() < ranked.len() {
                " (--top N for more)"
            } else {
                ""
            }
        );
        let plugins = score_plugins(v);
        let cell = |n: &NodeExplanation, plugin: &str| {
            n.scores.iter().find(|s| s.plugin == plugin).map_or_else(
                || "-".to_string(),
                |s| format!("{}/{}/{}", s.raw, s.normalized, s.weighted),
            )
        };
        let name_w = shown.iter().map(|n| n.node.len()).max().unwrap_or(0).max(4);
        let total_w = shown
            .iter()
            .map(|n| n.total.unwrap_or(0).to_string().len())
            .max()
            .unwrap_or(0)
            .max(5);
        let widths: Vec<usize> = plugins
            .iter()
            .map(|p| {
                shown
                    .iter()
                    .map(|n| cell(n, p).len())
                    .max()
                    .unwrap_or(0)
                    .max(p.len())
            })
            .collect();
        let mut header = format!("  {:<name_w$}  {:>total_w$}", "NODE", "TOTAL");
        for (p, w) in plugins.iter().zip(&widths) {
            let _ = write!(header, "  {p:<w$}");
        }
        let _ = writeln!(out, "{}", header.trim_end());
        let chosen = v.outcome.as_deref().ok();
        for n in shown {
            let mut row = format!("  {:<name_w$}  {:>total_w$}", n.node, n.total.unwrap_or(0));
            for (p, w) in plugins.iter().zip(&widths) {
                let _ = write!(row, "  {:<w$}", cell(n, p));
            }
            if Some(n.node.as_str()) == chosen {
                row.push_str("  <- chosen");
            }
            let _ = writeln!(out, "{}", row.trim_end());
        }
        let best = ranked[0].total;
        let tied = ranked.iter().take_while(|n| n.total == best).count();
        if tied > 1 {
            let _ = writeln!(
                out,
                "  {} node(s) share the highest total, {}: kube-scheduler picks one of them at random (selectHost)",
                thousands(tied),
                best.unwrap_or(0)
            );
        }
    }
    render_counts(out, v);
}

/// The counts each constraint saw: PodTopologySpread's Filter view, then Score's.
fn render_counts(out: &mut String, v: &ExplainView) {
    if !v.spread.is_empty() {
        let _ = writeln!(
            out,
            "\nSpread: matching pods per eligible domain, as PodTopologySpread counts{}",
            if v.spread_from_defaults {
                " (the cluster's default constraints)"
            } else {
                ""
            }
        );
        for c in &v.spread {
            let _ = writeln!(out, "{}", counts_text(c));
        }
    }
    if !v.score_counts.is_empty() {
        let _ = writeln!(
            out,
            "\nScore: matching pods per domain of the feasible nodes"
        );
        for c in &v.score_counts {
            let _ = writeln!(out, "{}", counts_text(c));
        }
    }
}

/// Every node: its verdict per Filter plugin, then its score per Score plugin.
fn render_wide(out: &mut String, v: &ExplainView) {
    render_counts(out, v);
    let _ = writeln!(out, "\nFilter");
    let name_w = v
        .nodes
        .iter()
        .map(|n| n.node.len())
        .max()
        .unwrap_or(4)
        .max(4);
    for n in &v.nodes {
        let verdict = match rejection(n) {
            None => "feasible".to_string(),
            Some(f) => format!("rejected by {}", f.plugin),
        };
        let _ = writeln!(out, "  {:<name_w$}  {verdict}", n.node);
        if !n.nominated.is_empty() {
            let _ = writeln!(
                out,
                "  {:<name_w$}    counts the pods nominated here: {}",
                "",
                n.nominated.join(", ")
            );
        }
        let passed: Vec<&str> = n
            .filters
            .iter()
            .filter(|f| f.code == "Success")
            .map(|f| f.plugin.as_str())
            .collect();
        if !passed.is_empty() {
            let _ = writeln!(out, "  {:<name_w$}    passed: {}", "", passed.join(", "));
        }
        let skipped: Vec<&str> = n
            .filters
            .iter()
            .filter(|f| f.code == "Skip")
            .map(|f| f.plugin.as_str())
            .collect();
        if !skipped.is_empty() {
            let _ = writeln!(
                out,
                "  {:<name_w$}    skipped (nothing to check): {}",
                "",
                skipped.join(", ")
            );
        }
        for f in n
            .filters
            .iter()
            .filter(|f| f.code != "Success" && f.code != "Skip")
        {
            let why = if f.reasons.is_empty() {
                String::new()
            } else {
                format!(": {}", f.reasons.join("; "))
            };
            let _ = writeln!(out, "  {:<name_w$}    {} {}{why}", "", f.plugin, f.code);
        }
    }
    let scored: Vec<&NodeExplanation> = v.nodes.iter().filter(|n| n.total.is_some()).collect();
    if !scored.is_empty() {
        let _ = writeln!(out, "\nScore (raw, after NormalizeScore, × weight)");
        let plugin_w = scored
            .iter()
            .flat_map(|n| n.scores.iter().map(|s| s.plugin.len()))
            .max()
            .unwrap_or(0);
        for n in scored {
            let _ = writeln!(out, "  {:<name_w$}  total {}", n.node, n.total.unwrap_or(0));
            for s in &n.scores {
                let _ = writeln!(
                    out,
                    "  {:<name_w$}    {:<plugin_w$}  raw {:>4}  normalized {:>3}  weighted {:>3}",
                    "", s.plugin, s.raw, s.normalized, s.weighted
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use topospread::api::WhenUnsatisfiable;
    use topospread::spread::ConstraintRef;
    use topospread_jobs::report::explain::ScoreView;

    /// `zone maxSkew=1 DoNotSchedule app=web`.
    fn zone_web() -> ConstraintRef {
        ConstraintRef::new("zone", 1, WhenUnsatisfiable::DoNotSchedule, "app=web")
    }

    fn verdict(plugin: &str, code: &str, reasons: &[&str]) -> FilterVerdict {
        FilterVerdict {
            plugin: plugin.into(),
            code: code.into(),
            reasons: reasons.iter().map(|r| r.to_string()).collect(),
        }
    }

    fn feasible(name: &str, total: i64) -> NodeExplanation {
        NodeExplanation {
            node: name.into(),
            filters: vec![verdict("NodeResourcesFit", "Success", &[])],
            scores: vec![
                ScoreView {
                    plugin: "NodeResourcesFit".into(),
                    raw: total,
                    normalized: total,
                    weighted: total,
                },
                ScoreView {
                    plugin: "PodTopologySpread".into(),
                    raw: 1,
                    normalized: 50,
                    weighted: 100,
                },
            ],
            total: Some(total + 100),
            nominated: Vec::new(),
        }
    }

    fn rejected(name: &str, plugin: &str, code: &str, reasons: &[&str]) -> NodeExplanation {
        NodeExplanation {
            node: name.into(),
            filters: vec![
                verdict("NodeUnschedulable", "Success", &[]),
                verdict("NodeAffinity", "Skip", &[]),
                verdict(plugin, code, reasons),
            ],
            scores: Vec::new(),
            total: None,
            nominated: Vec::new(),
        }
    }

    const SPREAD: &str = "node(s) didn't match pod topology spread constraints";

    fn view(nodes: Vec<NodeExplanation>) -> ExplainView {
        ExplainView {
            pod: "default/web-0".into(),
            context: Vec::new(),
            nodes,
            spread: vec![ConstraintCounts::new(
                &zone_web(),
                vec![("a".into(), 2), ("b".into(), 1)],
                Some(1),
            )],
            spread_from_defaults: false,
            score_counts: Vec::new(),
            outcome: Ok("n3".into()),
            preemption: None,
            preempting_cycle: None,
        }
    }

    fn cluster() -> ExplainView {
        view(vec![
            feasible("n1", 10),
            rejected("n2", "PodTopologySpread", "Unschedulable", &[SPREAD]),
            feasible("n3", 30),
            rejected(
                "n4",
                "NodeResourcesFit",
                "Unschedulable",
                &["Insufficient cpu", "Insufficient memory"],
            ),
            rejected("n5", "PodTopologySpread", "Unschedulable", &[SPREAD]),
            feasible("n6", 20),
            rejected(
                "n7",
                "(cycle)",
                "NotEvaluated",
                &["the cycle found enough feasible nodes before this one"],
            ),
        ])
    }

    #[test]
    fn nodes_are_grouped_by_the_verdict_that_decided_them() {
        let v = cluster();
        let groups = verdict_groups(&v);
        let summary: Vec<(String, Vec<&str>)> = groups
            .iter()
            .map(|g| (g.label(), g.nodes.iter().map(|n| n.node.as_str()).collect()))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("feasible".to_string(), vec!["n1", "n3", "n6"]),
                (SPREAD.to_string(), vec!["n2", "n5"]),
                (
                    "Insufficient cpu, Insufficient memory".to_string(),
                    vec!["n4"]
                ),
                (
                    "not evaluated (the cycle found enough feasible nodes before this one)"
                        .to_string(),
                    vec!["n7"]
                ),
            ]
        );
        assert_eq!(groups[1].plugin, Some("PodTopologySpread"));
        assert!(groups[3].not_evaluated());
    }

    #[test]
    fn scored_nodes_rank_by_total_then_report_order() {
        let mut v = cluster();
        v.nodes.push(feasible("n8", 30));
        let ranked: Vec<&str> = ranked_nodes(&v).iter().map(|n| n.node.as_str()).collect();
        assert_eq!(ranked, vec!["n3", "n8", "n6", "n1"]);
        // The chosen node leads its tie.
        v.outcome = Ok("n8".into());
        let ranked: Vec<&str> = ranked_nodes(&v).iter().map(|n| n.node.as_str()).collect();
        assert_eq!(ranked, vec!["n8", "n3", "n6", "n1"]);
        let text = render_explanation(&v, ExplainLayout::default());
        assert!(
            text.contains("  2 node(s) share the highest total, 130: kube-scheduler picks one of them at random (selectHost)\n"),
            "{text}"
        );
        assert!(
            text.contains("  n8      130  30/30/30          1/50/100           <- chosen\n"),
            "{text}"
        );
        assert_eq!(
            score_plugins(&v),
            vec!["NodeResourcesFit", "PodTopologySpread"]
        );
    }

    #[test]
    fn the_minimum_shown_is_the_global_minimum_the_skew_was_measured_from() {
        // minDomains 3 over two domains: the global minimum is 0, the skew 2.
        let c = ConstraintCounts::new(&zone_web(), vec![("a".into(), 2), ("b".into(), 1)], Some(2));
        assert_eq!(
            counts_text(&c),
            "  zone maxSkew=1 DoNotSchedule app=web: a=2 b=1 (min 0, skew 2)"
        );
        let score = ConstraintCounts { skew: None, ..c };
        assert_eq!(
            counts_text(&score),
            "  zone maxSkew=1 DoNotSchedule app=web: a=2 b=1 (min 1)"
        );
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(4500), "4,500");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn the_grouped_layout_lists_groups_then_the_top_nodes_then_the_counts() {
        let text = render_explanation(
            &cluster(),
            ExplainLayout {
                top: 2,
                wide: false,
            },
        );
        let expected = "\
pod default/web-0

Filter: 7 node(s), 3 feasible (--wide: every node's verdict per plugin)
  3 feasible: n1, n3, n6
  2 node(s) didn't match pod topology spread constraints [PodTopologySpread]: n2, n5
  1 Insufficient cpu, Insufficient memory [NodeResourcesFit]: n4
  1 not evaluated (the cycle found enough feasible nodes before this one): n7

Score: the 2 highest of 3 scored node(s); per plugin raw/normalized/weighted (--top N for more)
  NODE  TOTAL  NodeResourcesFit  PodTopologySpread
  n3      130  30/30/30          1/50/100           <- chosen
  n6      120  20/20/20          1/50/100

Spread: matching pods per eligible domain, as PodTopologySpread counts
  zone maxSkew=1 DoNotSchedule app=web: a=2 b=1 (min 1, skew 1)

Result: scheduled to n3
";
        assert_eq!(text, expected);
    }

    #[test]
    fn a_large_group_names_a_few_nodes_and_counts_the_rest() {
        let nodes = (0..4500)
            .map(|i| feasible(&format!("node-{i:04}"), 1))
            .chain((0..500).map(|i| {
                rejected(
                    &format!("tainted-{i:03}"),
                    "TaintToleration",
                    "UnschedulableAndUnresolvable",
                    &["node(s) had untolerated taint {dedicated: gpu}"],
                )
            }))
            .collect();
        let text = render_explanation(&view(nodes), ExplainLayout::default());
        assert!(
            text.contains("  4,500 feasible: node-0000, node-0001, node-0002, node-0003, node-0004, ... and 4,495 more\n"),
            "{text}"
        );
        assert!(
            text.contains("    500 node(s) had untolerated taint {dedicated: gpu} [TaintToleration]: tainted-000,"),
            "{text}"
        );
        assert!(
            text.contains("Score: the 10 highest of 4,500 scored node(s)"),
            "{text}"
        );
        assert!(text.lines().count() < 30, "{text}");
    }

    #[test]
    fn the_wide_layout_lists_every_node() {
        let text = render_explanation(&cluster(), ExplainLayout { top: 1, wide: true });
        for n in ["n1", "n2", "n3", "n4", "n5", "n6", "n7"] {
            assert!(
                text.lines().any(|l| l.starts_with(&format!("  {n}  "))),
                "{n}: {text}"
            );
        }
        assert!(
            text.contains(
                "          NodeResourcesFit Unschedulable: Insufficient cpu; Insufficient memory\n"
            ),
            "{text}"
        );
        assert!(!text.contains("feasible (--wide"), "{text}");
    }
}
