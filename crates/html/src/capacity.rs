//! `capacity -o html`: the nodes the plan adds per zone as bars, each template's
//! additions, the spread the verified run gives each workload (bars with the global
//! minimum and the maxSkew band), the binpacking estimate beside it, and what no number
//! of nodes places.

use crate::chart::{self, Counts};
use crate::page::{Esc, Page, list_section};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use topospread_jobs::capacity::CapacityReport;

/// One picture of a capacity plan, for a page that embeds it (`topospread ui`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapacityFigure {
    /// What it is of: `nodes added per zone`, or a workload.
    pub title: String,
    /// Its caption: the constraint, the global minimum and the maxSkew band.
    pub caption: String,
    /// The bars as one `<svg>` element, every string from the input escaped.
    pub svg: String,
}

/// The plan's pictures as `-o html` draws them: the nodes added per zone, then each
/// workload's spread per constraint after the verified run.
pub fn capacity_figures(report: &CapacityReport) -> Vec<CapacityFigure> {
    let mut out = Vec::new();
    let per_zone = nodes_per_zone(report);
    if !per_zone.is_empty() {
        let counts = Counts {
            caption: "nodes added per zone",
            counts: per_zone.iter().map(|(z, n)| (*z, *n)).collect(),
            min: None,
            max_skew: None,
            groups: None,
        };
        let mut svg = String::new();
        chart::counts_svg(&mut svg, &counts);
        out.push(CapacityFigure {
            title: "nodes added per zone".to_string(),
            caption: format!("{} node(s) added, price {}", report.nodes, report.price),
            svg,
        });
    }
    for w in &report.workloads {
        for s in &w.spread {
            let min = s.counts.values().min().copied();
            let counts = Counts {
                caption: &s.constraint,
                counts: s.counts.iter().map(|(d, n)| (d.as_str(), *n)).collect(),
                min,
                max_skew: max_skew(&s.constraint),
                groups: None,
            };
            let mut svg = String::new();
            chart::counts_svg(&mut svg, &counts);
            let mut caption = s.constraint.clone();
            if let Some(min) = min {
                let _ = write!(caption, "; global minimum {min}");
            }
            if let Some(limit) = counts.limit() {
                let _ = write!(
                    caption,
                    "; shaded: minimum to minimum + maxSkew = {limit}; red: above it"
                );
            }
            let _ = write!(caption, "; skew {}", s.skew);
            out.push(CapacityFigure {
                title: w.workload.clone(),
                caption,
                svg,
            });
        }
    }
    out
}

fn nodes_per_zone(report: &CapacityReport) -> BTreeMap<&str, i64> {
    let mut per_zone: BTreeMap<&str, i64> = BTreeMap::new();
    for a in &report.additions {
        *per_zone
            .entry(a.zone.as_deref().unwrap_or("(no zone)"))
            .or_default() += i64::from(a.count);
    }
    per_zone
}

/// The page for a capacity plan.
pub fn capacity(report: &CapacityReport) -> String {
    let kind = if report.exact {
        "the fewest (exhaustive search)".to_string()
    } else {
        format!("heuristic; lower bound {}", report.lower_bound)
    };
    let mut page = Page::new(
        "topospread capacity",
        &format!(
            "{} node(s) to add · price {} · {kind} · {} simulation(s)",
            report.nodes, report.price, report.simulations
        ),
    );
    let out = page.html();
    let _ = writeln!(
        out,
        "<section><h2>Pending pods</h2><p>{} pending before; <span class=\"{}\">{} pending after the plan</span>; {} no number of nodes places</p></section>",
        report.pending_before,
        if report.pending_after == 0 {
            "ok"
        } else {
            "bad"
        },
        report.pending_after,
        report.unplaceable.len()
    );
    let per_zone = nodes_per_zone(report);
    if !per_zone.is_empty() {
        out.push_str("<section><h2>Nodes added per zone</h2>");
        chart::counts_figure(
            out,
            &Counts {
                caption: "nodes added per zone",
                counts: per_zone.iter().map(|(z, n)| (*z, *n)).collect(),
                min: None,
                max_skew: None,
                groups: None,
            },
        );
        out.push_str("</section>\n");
        page.html().push_str("<section><h2>Additions</h2>");
        page.sortable_table(
            "additions",
            &[
                ("Template", false),
                ("Zone", false),
                ("Nodes", true),
                ("Names", false),
            ],
        );
        let out = page.html();
        for a in &report.additions {
            let _ = writeln!(
                out,
                "<tr><td class=\"mono\">{}</td><td class=\"mono\">{}</td><td class=\"num\" data-v=\"{n}\">{n}</td><td class=\"mono\">{}</td></tr>",
                Esc(&a.template),
                Esc(a.zone.as_deref().unwrap_or("-")),
                Esc(&a.nodes.join(", ")),
                n = a.count,
            );
        }
        out.push_str("</tbody></table></section>\n");
    }
    let out = page.html();
    for w in &report.workloads {
        if w.spread.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            "<section><h2>{}</h2><p>{} of {} pending pod(s) placed</p><div class=\"pair\">",
            Esc(&w.workload),
            w.placed,
            w.pending_before
        );
        for s in &w.spread {
            chart::counts_figure(
                out,
                &Counts {
                    caption: &s.constraint,
                    counts: s.counts.iter().map(|(d, n)| (d.as_str(), *n)).collect(),
                    min: s.counts.values().min().copied(),
                    max_skew: max_skew(&s.constraint),
                    groups: None,
                },
            );
        }
        out.push_str("</div></section>\n");
    }
    if !report.greedy.is_empty() {
        page.html()
            .push_str("<section><h2>Binpacking estimate (no spread), simulated</h2>");
        page.sortable_table(
            "greedy",
            &[
                ("Template", false),
                ("Nodes", true),
                ("Packed", true),
                ("Pending after", true),
            ],
        );
        let out = page.html();
        for g in &report.greedy {
            let _ = writeln!(
                out,
                "<tr><td class=\"mono\">{}</td><td class=\"num\" data-v=\"{n}\">{n}{}</td><td class=\"num\" data-v=\"{p}\">{p}</td><td class=\"num {}\" data-v=\"{a}\">{a}</td></tr>",
                Esc(&g.template),
                if g.capped { " (max-count)" } else { "" },
                if g.pending_after == 0 { "ok" } else { "bad" },
                n = g.nodes,
                p = g.packed,
                a = g.pending_after,
            );
        }
        out.push_str("</tbody></table></section>\n");
    }
    let unplaceable: Vec<String> = report
        .unplaceable
        .iter()
        .map(|u| format!("{}: {}", u.pod, u.reason))
        .collect();
    list_section(page.html(), "Placed by no number of nodes", &unplaceable);
    if let Some(removals) = &report.remove_idle {
        let lines: Vec<String> = removals
            .iter()
            .map(|r| format!("{}: {} pod(s) moved", r.node, r.moved.len()))
            .collect();
        list_section(page.html(), "Removable nodes (--remove-idle)", &lines);
    }
    page.finish()
}

/// The `maxSkew=N` of a constraint as the report words it.
fn max_skew(constraint: &str) -> Option<i64> {
    constraint
        .split_whitespace()
        .find_map(|t| t.strip_prefix("maxSkew="))
        .and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::max_skew;

    #[test]
    fn max_skew_is_read_off_the_constraint() {
        assert_eq!(
            max_skew("topology.kubernetes.io/zone maxSkew=1 DoNotSchedule app=web"),
            Some(1)
        );
        assert_eq!(max_skew("kubernetes.io/hostname"), None);
    }
}
