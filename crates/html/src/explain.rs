//! `explain -o html`: the verdict groups, every node in a sortable table, and the
//! domain counts each constraint saw with its global minimum and maxSkew.

use crate::chart::{self, Counts};
use crate::page::{Esc, Page, list_section};
use std::fmt::Write as _;
use topospread_jobs::explain::ExplainReport;
use topospread_jobs::report::explain::{ConstraintCounts, ExplainView, NodeExplanation};
use topospread_report::{ranked_nodes, score_plugins, thousands, verdict_groups};

/// The page for one pod's scheduling cycle (and the failed cycle whose preemption
/// made room for it).
pub fn explain(report: &ExplainReport) -> String {
    let v = &report.cycle;
    let outcome = match &v.outcome {
        Ok(node) => format!("scheduled to {node}"),
        Err(_) => "Pending".to_string(),
    };
    let mut page = Page::new(
        &format!("topospread explain {}", v.pod),
        &format!(
            "{} · {} · {} node(s)",
            outcome,
            report.kind,
            thousands(v.nodes.len())
        ),
    );
    list_section(page.html(), "Context", &v.context);
    if let Some(failed) = &v.preempting_cycle {
        page.html().push_str(
            "<h2>Failed cycle: no node fit, so preemption ran (DefaultPreemption PostFilter)</h2>\n",
        );
        cycle(&mut page, failed, "failed-");
        page.html().push_str("<h2>Cycle after the eviction</h2>\n");
    }
    cycle(&mut page, v, "");
    page.finish()
}

/// One cycle's sections; `prefix` keeps element ids unique when two cycles share the
/// page.
fn cycle(page: &mut Page, v: &ExplainView, prefix: &str) {
    let out = page.html();
    out.push_str("<section><h2>Result</h2>");
    match &v.outcome {
        Ok(node) => {
            let _ = write!(out, "<p class=\"ok\">scheduled to <b>{}</b></p>", Esc(node));
        }
        Err(message) => {
            let _ = write!(out, "<p class=\"bad\">Pending: {}</p>", Esc(message));
        }
    }
    if let Some(p) = &v.preemption {
        let _ = write!(
            out,
            "<p>Preemption: node <b>{}</b> chosen; {} victim(s) evicted, most important first; the pod is nominated there (status.nominatedNodeName).</p><ul class=\"reasons\">",
            Esc(&p.node),
            p.victims.len()
        );
        for victim in &p.victims {
            let _ = write!(
                out,
                "<li>{}/{} (priority {})</li>",
                Esc(&victim.namespace),
                Esc(&victim.name),
                victim.priority
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>\n");

    let groups = verdict_groups(v);
    let feasible: usize = groups
        .iter()
        .filter(|g| g.feasible())
        .map(|g| g.nodes.len())
        .sum();
    let _ = write!(
        out,
        "<section><h2>Filter: {} node(s), {} feasible</h2>",
        thousands(v.nodes.len()),
        thousands(feasible)
    );
    let bars: Vec<(String, usize, bool)> = groups
        .iter()
        .map(|g| (g.label(), g.nodes.len(), g.feasible()))
        .collect();
    chart::groups_bar(out, &bars);
    out.push_str("<table><thead><tr><th class=\"num\">Nodes</th><th>Verdict</th><th>Plugin</th><th>Code</th><th>First nodes</th></tr></thead><tbody>\n");
    for g in &groups {
        let names: Vec<&str> = g.nodes.iter().take(5).map(|n| n.node.as_str()).collect();
        let more = if g.nodes.len() > names.len() {
            format!(", ... and {} more", thousands(g.nodes.len() - names.len()))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<tr class=\"{}\"><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"mono\">{}{more}</td></tr>",
            if g.feasible() { "feasible" } else { "rejected" },
            thousands(g.nodes.len()),
            Esc(&g.label()),
            Esc(g.plugin.unwrap_or("")),
            Esc(g.code),
            Esc(&names.join(", ")),
        );
    }
    out.push_str("</tbody></table></section>\n");

    constraint_charts(
        out,
        &v.spread,
        &format!(
            "Spread: matching pods per eligible domain, as PodTopologySpread counts{}",
            if v.spread_from_defaults {
                " (the cluster's default constraints)"
            } else {
                ""
            }
        ),
    );
    constraint_charts(
        out,
        &v.score_counts,
        "Score: matching pods per domain of the feasible nodes",
    );
    node_table(page, v, prefix);
}

fn constraint_charts(out: &mut String, constraints: &[ConstraintCounts], heading: &str) {
    if constraints.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<section><h2>{}</h2><div class=\"pair\">",
        Esc(heading)
    );
    for c in constraints {
        let max = c.counts.iter().map(|x| x.1).max();
        // The skew is measured from the global minimum (minDomains applied): the
        // report's skew gives it back without counting again.
        let min = match (c.skew, max) {
            (Some(skew), Some(max)) => Some(max - skew),
            _ => c.counts.iter().map(|x| x.1).min(),
        };
        let caption = match c.skew {
            Some(skew) => format!("{} (skew {skew})", c.constraint),
            None => c.constraint.clone(),
        };
        chart::counts_figure(
            out,
            &Counts {
                caption: &caption,
                counts: c.counts.iter().map(|(d, n)| (d.as_str(), *n)).collect(),
                min,
                max_skew: c.skew.map(|_| i64::from(c.max_skew)),
                groups: None,
            },
        );
    }
    out.push_str("</div></section>\n");
}

/// Every node: verdict, total and each plugin's score, sortable.
fn node_table(page: &mut Page, v: &ExplainView, prefix: &str) {
    let plugins = score_plugins(v);
    let rank: std::collections::HashMap<&str, usize> = ranked_nodes(v)
        .iter()
        .enumerate()
        .map(|(i, n)| (n.node.as_str(), i + 1))
        .collect();
    let _ = write!(
        page.html(),
        "<section><h2>Nodes</h2><p class=\"muted\">Every node; click a column to sort. Score cells: raw / normalized / weighted (sorted by weighted).</p>"
    );
    let mut headers: Vec<(&str, bool)> = vec![
        ("Rank", true),
        ("Node", false),
        ("Verdict", false),
        ("Total", true),
    ];
    headers.extend(plugins.iter().map(|p| (*p, true)));
    page.sortable_table(&format!("{prefix}nodes"), &headers);
    let chosen = v.outcome.as_ref().ok();
    let out = page.html();
    for n in &v.nodes {
        row(out, n, &plugins, rank.get(n.node.as_str()).copied(), chosen);
    }
    out.push_str("</tbody></table></section>\n");
}

fn row(
    out: &mut String,
    n: &NodeExplanation,
    plugins: &[&str],
    rank: Option<usize>,
    chosen: Option<&String>,
) {
    let rejection = n
        .filters
        .iter()
        .find(|f| f.code != "Success" && f.code != "Skip");
    let class = match (rejection, chosen == Some(&n.node)) {
        (None, true) => "feasible chosen",
        (None, false) => "feasible",
        (Some(_), _) => "rejected",
    };
    let _ = write!(out, "<tr class=\"{class}\">");
    match rank {
        Some(r) => {
            let _ = write!(out, "<td class=\"num\" data-v=\"{r}\">{r}</td>");
        }
        None => out.push_str("<td class=\"num\" data-v=\"1e9\"></td>"),
    }
    let _ = write!(out, "<td class=\"mono\">{}</td>", Esc(&n.node));
    match rejection {
        None => out.push_str("<td>feasible"),
        Some(f) => {
            let why = if f.reasons.is_empty() {
                f.code.clone()
            } else {
                f.reasons.join("; ")
            };
            let _ = write!(out, "<td>{}: {}", Esc(&f.plugin), Esc(&why));
        }
    }
    if !n.nominated.is_empty() {
        let _ = write!(
            out,
            "<br><span class=\"muted\">counts the pods nominated here: {}</span>",
            Esc(&n.nominated.join(", "))
        );
    }
    out.push_str("</td>");
    match n.total {
        Some(t) => {
            let _ = write!(out, "<td class=\"num\" data-v=\"{t}\">{t}</td>");
        }
        None => out.push_str("<td class=\"num\" data-v=\"-1\"></td>"),
    }
    for p in plugins {
        match n.scores.iter().find(|s| s.plugin == *p) {
            Some(s) => {
                let _ = write!(
                    out,
                    "<td class=\"num\" data-v=\"{}\">{} / {} / {}</td>",
                    s.weighted, s.raw, s.normalized, s.weighted
                );
            }
            None => out.push_str("<td class=\"num\" data-v=\"-1\"></td>"),
        }
    }
    out.push_str("</tr>\n");
}
