//! `rebalance -o html`: each workload's counts before and after the plan, and its
//! moves as arrows between the domains pods leave and the domains their replacements
//! land in; `rebalance --scale -o html`: the counts before and after the scale-down and
//! every pod's deletion cost.

use crate::chart::{self, Counts};
use crate::page::{Esc, Page, list_section};
use std::fmt::Write as _;
use topospread::snapshot::Snapshot;
use topospread_jobs::rebalance::{Rebalance, ScaleDownReport};
use topospread_jobs::report::spread::{ConstraintSpread, WorkloadSpread};

/// The page for a rebalancing plan.
pub fn rebalance(plan: &Rebalance) -> String {
    let report = &plan.report;
    let p = &report.plan;
    let strategy = &p.strategy;
    let mut page = Page::new(
        "topospread rebalance",
        &format!(
            "{strategy} strategy · {} move(s) · {} round(s) · {}",
            p.moves.len(),
            p.rounds,
            report.kind
        ),
    );
    let out = page.html();
    let _ = writeln!(
        out,
        "<section><h2>Excess skew</h2><p>DoNotSchedule {} &rarr; {}, ScheduleAnyway {} &rarr; {}; <span class=\"{}\">{} DoNotSchedule constraint(s) violated after the plan</span>{}</p></section>",
        p.violation_before.hard,
        p.violation_after.hard,
        p.violation_before.soft,
        p.violation_after.soft,
        if p.final_violations == 0 { "ok" } else { "bad" },
        p.final_violations,
        if p.pending > 0 {
            format!(
                "; <span class=\"bad\">{} replacement(s) Pending</span>",
                p.pending
            )
        } else {
            String::new()
        }
    );
    if !p.moves.is_empty() {
        out.push_str("<section><h2>Moves between domains</h2><div class=\"pair\">");
        for (id, (key, moves)) in domain_moves(plan).into_iter().enumerate() {
            chart::moves_chart(out, id, &key, &moves);
        }
        out.push_str("</div></section>\n");
    }
    spread(out, &p.before, &p.after);
    let unresolved: Vec<String> = p
        .unresolved
        .iter()
        .map(|u| format!("{}: {}: {}", u.workload, u.constraint, u.why))
        .collect();
    list_section(out, "Unresolved", &unresolved);
    if !p.moves.is_empty() {
        page.html().push_str("<section><h2>Moves</h2>");
        page.sortable_table(
            "moves",
            &[
                ("#", true),
                ("Pod", false),
                ("From", false),
                ("To", false),
                ("Reason", false),
            ],
        );
        let out = page.html();
        for (i, m) in p.moves.iter().enumerate() {
            let _ = writeln!(
                out,
                "<tr><td class=\"num\" data-v=\"{n}\">{n}</td><td class=\"mono\">{}/{}</td><td class=\"mono\">{}</td><td class=\"mono\">{}</td><td>{}</td></tr>",
                Esc(&m.namespace),
                Esc(&m.pod),
                Esc(&m.from),
                Esc(&m.to),
                Esc(&m.reason),
                n = i + 1,
            );
        }
        out.push_str("</tbody></table></section>\n");
    }
    page.finish()
}

/// For each topology key of the plan's constraints (in the order they first appear),
/// every move as the domains of its from and to nodes.
fn domain_moves(plan: &Rebalance) -> Vec<(String, Vec<(String, String)>)> {
    let p = &plan.report.plan;
    let after = plan.cluster_after();
    let mut keys: Vec<&str> = Vec::new();
    for c in p.before.iter().flat_map(|w| &w.constraints) {
        if !keys.contains(&c.topology_key.as_str()) {
            keys.push(&c.topology_key);
        }
    }
    keys.into_iter()
        .map(|key| {
            let moves = p
                .moves
                .iter()
                .map(|m| (domain_of(after, &m.from, key), domain_of(after, &m.to, key)))
                .collect();
            (key.to_string(), moves)
        })
        .collect()
}

/// One topology key's moves between domains, drawn as `rebalance -o html` draws them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MovesChart {
    /// The topology key whose domains the arrows join.
    pub topology_key: String,
    /// Each move's domains (evicted from, lands in), in the plan's order.
    pub moves: Vec<(String, String)>,
    /// The arrows as one `<svg>` element (every string from the input escaped), for a
    /// page that embeds the chart itself (`topospread ui`).
    pub svg: String,
}

/// The plan's moves as arrows between domains, one chart per topology key of its
/// constraints; none when the plan moves nothing.
pub fn moves_charts(plan: &Rebalance) -> Vec<MovesChart> {
    if plan.report.plan.moves.is_empty() {
        return Vec::new();
    }
    domain_moves(plan)
        .into_iter()
        .enumerate()
        .map(|(id, (topology_key, moves))| {
            let mut svg = String::new();
            chart::moves_svg(&mut svg, id, &topology_key, &moves);
            MovesChart {
                topology_key,
                moves,
                svg,
            }
        })
        .collect()
}

/// The page for a scale-down plan.
pub fn scale_down(report: &ScaleDownReport) -> String {
    let p = &report.plan;
    let removed = p.pods.iter().filter(|d| d.delete).count();
    let mut page = Page::new(
        &format!("topospread rebalance --scale {}", p.workload),
        &format!(
            "scale {} → {} removes {removed} pod(s); lower pod-deletion-cost goes first · {}",
            p.from, p.to, report.kind
        ),
    );
    spread(page.html(), &p.before, &p.after);
    page.html().push_str("<section><h2>Pods</h2>");
    page.sortable_table(
        "pods",
        &[
            ("Pod", false),
            ("Node", false),
            ("pod-deletion-cost", true),
            ("", false),
        ],
    );
    let out = page.html();
    for d in &p.pods {
        let _ = writeln!(
            out,
            "<tr class=\"{}\"><td class=\"mono\">{}/{}</td><td class=\"mono\">{}</td><td class=\"num\" data-v=\"{c}\">{c}</td><td>{}</td></tr>",
            if d.delete { "rejected" } else { "feasible" },
            Esc(&d.namespace),
            Esc(&d.pod),
            Esc(&d.node),
            if d.delete { "remove" } else { "keep" },
            c = d.cost,
        );
    }
    out.push_str("</tbody></table></section>\n");
    page.finish()
}

/// `node`'s value of `key`, or `(no KEY label)`.
fn domain_of(snapshot: &Snapshot, node: &str, key: &str) -> String {
    let symbols = snapshot.symbols();
    snapshot
        .node_id(node)
        .zip(symbols.get(key))
        .and_then(|(id, key)| snapshot.node(id).node.labels.get(key))
        .map_or_else(
            || format!("(no {key} label)"),
            |v| symbols.resolve(v).to_string(),
        )
}

/// Per workload and constraint, the counts before and after side by side.
fn spread(out: &mut String, before: &[WorkloadSpread], after: &[WorkloadSpread]) {
    for (b, a) in before.iter().zip(after) {
        let _ = write!(
            out,
            "<section class=\"workload\"><h2>{} <span class=\"muted\">(namespace {})</span></h2>",
            Esc(&b.workload),
            Esc(&b.namespace)
        );
        for (cb, ca) in b.constraints.iter().zip(&a.constraints) {
            let _ = write!(out, "<h3>{}</h3><div class=\"pair\">", Esc(&cb.constraint));
            figure(out, "before", cb);
            figure(out, "after", ca);
            out.push_str("</div>\n");
        }
        out.push_str("</section>\n");
    }
}

fn figure(out: &mut String, when: &str, c: &ConstraintSpread) {
    let max = c.counts.values().max().copied();
    chart::counts_figure(
        out,
        &Counts {
            caption: &format!("{when}: skew {}", c.skew),
            counts: c.counts.iter().map(|(d, n)| (d.as_str(), *n)).collect(),
            // The skew is measured from the global minimum (minDomains applied).
            min: max.map(|m| m - c.skew),
            max_skew: Some(i64::from(c.max_skew)),
            groups: None,
        },
    );
}
