//! `simulate -o html`: each workload's spread per topology key before and after as
//! bar charts per domain, the pending pods with their reasons, and every placement.

use crate::chart::{self, Counts};
use crate::page::{Esc, Page, list_section};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use topospread::snapshot::Snapshot;
use topospread_jobs::simulate::{ConstraintReport, SimulationReport};

/// The zone labels a heatmap groups other keys' domains by, the well-known one first.
const ZONE_KEYS: [&str; 2] = ["topology.kubernetes.io/zone", "zone"];

/// The page for a simulation. With the cluster it ran on, a constraint with too many
/// domains for bars draws them as a heatmap grouped by zone.
pub fn simulate(r: &SimulationReport, cluster: Option<&Snapshot>) -> String {
    let mut page = Page::new(
        "topospread simulate",
        &format!(
            "{} scheduled · {} pending · {} workload(s) · seed {} · {}",
            r.scheduled,
            r.pending,
            r.workloads.len(),
            r.seed,
            r.kind
        ),
    );
    let out = page.html();
    for w in &r.workloads {
        let _ = write!(
            out,
            "<section class=\"workload\"><h2>{}/{} <span class=\"muted\">(namespace {})</span></h2><p>{} pods, {} scheduled, {} pending{}</p>",
            Esc(&w.kind.to_lowercase()),
            Esc(&w.name),
            Esc(&w.namespace),
            w.pods,
            w.scheduled,
            if w.pending > 0 {
                format!("<span class=\"bad\">{}</span>", w.pending)
            } else {
                "0".to_string()
            },
            if w.constraints_from_defaults {
                " · no constraints of its own: the cluster's default constraints"
            } else {
                ""
            }
        );
        if w.constraints.is_empty() {
            out.push_str("<p class=\"muted\">no topology spread constraint</p>");
        }
        for c in &w.constraints {
            let zones = cluster.and_then(|s| zones_of(s, c));
            constraint(out, c, zones.as_ref());
        }
        for event in &w.failed_create {
            let _ = write!(out, "<p class=\"bad\">FailedCreate: {}</p>", Esc(event));
        }
        out.push_str("</section>\n");
    }
    pending(out, r);
    if let Some(d) = &r.drained {
        let mut lines = Vec::new();
        if !d.cordoned.is_empty() {
            lines.push(format!(
                "drained {} node(s) as kubectl drain does (cordoned, kept): {}",
                d.cordoned.len(),
                d.cordoned.join(", ")
            ));
        }
        lines.push(format!(
            "removed {} node(s): {}; {} replacement(s) rescheduled, {} pending",
            d.nodes.len(),
            d.nodes.join(", "),
            d.rescheduled,
            d.pending
        ));
        lines.extend(
            d.refused
                .iter()
                .map(|r| format!("{}: kubectl drain refuses: {}", r.pod, r.reason)),
        );
        lines.extend(d.blocked.iter().map(|b| {
            format!(
                "{}: PodDisruptionBudget {} blocks its eviction",
                b.pod, b.budget
            )
        }));
        lines.extend(d.workloads.iter().map(|w| {
            let mut l = format!(
                "{}/{}: {} replaced, {} rescheduled, {} pending",
                w.namespace, w.controller, w.replaced, w.rescheduled, w.pending
            );
            if let Some(m) = &w.message {
                let _ = write!(l, ": {m}");
            }
            l
        }));
        lines.extend(
            d.lost
                .iter()
                .map(|p| format!("{p}: no controller, lost with its node")),
        );
        list_section(out, "What-if: nodes removed", &lines);
    }
    let preempted: Vec<String> = r
        .preempted
        .iter()
        .map(|p| {
            format!(
                "{}/{} on {}: evicted for {}",
                p.namespace, p.pod, p.node, p.by
            )
        })
        .collect();
    list_section(out, "Preempted", &preempted);
    let removed: Vec<String> = r
        .removed
        .iter()
        .map(|p| format!("{}/{} ({})", p.namespace, p.pod, p.controller))
        .collect();
    list_section(
        out,
        "Removed by their controller (scale-down, in its order)",
        &removed,
    );
    let rollouts: Vec<String> = r
        .rollouts
        .iter()
        .map(|ro| {
            let mut line = format!(
                "deployment {} to replicaset {}: {} steps, {} pods created, {} deleted{}",
                ro.deployment,
                ro.new_replica_set,
                ro.steps.len(),
                ro.created.len(),
                ro.deleted.len(),
                match (&ro.stalled, ro.complete) {
                    (_, true) => String::new(),
                    (Some(s), false) => format!(" (stalled: {})", s.reason),
                    (None, false) => " (not complete: new pods not available)".to_string(),
                }
            );
            for e in &ro.end_skew {
                line.push_str(&format!(
                    "; end skew {} over {} interleaving(s): {} to {}",
                    e.constraint,
                    ro.interleavings.len(),
                    e.min,
                    e.max
                ));
            }
            if let Some(w) = &ro.warning {
                line.push_str(&format!("; warning: {w}"));
            }
            line
        })
        .collect();
    list_section(out, "Rollouts (-o json lists every step)", &rollouts);
    let refused: Vec<String> = r
        .refused
        .iter()
        .map(|p| format!("{}/{} ({}): {}", p.namespace, p.pod, p.file, p.message))
        .collect();
    list_section(out, "Refused by admission (never created)", &refused);
    list_section(
        out,
        "Refused by the API server (not created)",
        &r.refused_objects,
    );
    list_section(out, "Notes", &r.notes);
    placements(&mut page, r);
    page.finish()
}

/// For a constraint with more domains than bars can show, each domain's zone (the
/// zone of the nodes carrying it); `None` when it has few domains, is a zone
/// constraint itself, or no node has a zone.
fn zones_of(cluster: &Snapshot, c: &ConstraintReport) -> Option<BTreeMap<String, String>> {
    if c.after.len().max(c.before.len()) <= chart::MAX_BARS
        || ZONE_KEYS.contains(&c.topology_key.as_str())
    {
        return None;
    }
    let symbols = cluster.symbols();
    let key = symbols.get(&c.topology_key)?;
    let zone_key = ZONE_KEYS.iter().find_map(|k| symbols.get(k))?;
    let zones: BTreeMap<String, String> = cluster
        .nodes()
        .iter()
        .filter_map(|n| {
            let domain = n.node.labels.get(key)?;
            let zone = n.node.labels.get(zone_key)?;
            Some((
                symbols.resolve(domain).to_string(),
                symbols.resolve(zone).to_string(),
            ))
        })
        .collect();
    (!zones.is_empty()).then_some(zones)
}

/// One constraint: its counts before and after, side by side.
fn constraint(out: &mut String, c: &ConstraintReport, zones: Option<&BTreeMap<String, String>>) {
    let _ = write!(
        out,
        "<h3>{} maxSkew={} {} <span class=\"muted mono\">{}</span></h3><div class=\"pair\">",
        Esc(&c.topology_key),
        c.max_skew,
        Esc(&c.when_unsatisfiable),
        Esc(&c.selector)
    );
    for (when, domains, skew, max) in [
        ("before", &c.before, c.skew_before, c.summary_before.max),
        ("after", &c.after, c.skew_after, c.summary_after.max),
    ] {
        // The skew is measured from the global minimum (minDomains applied): the
        // report's skew gives it back without counting again.
        let min = i64::from(max) - i64::from(skew);
        chart::counts_figure(
            out,
            &Counts {
                caption: &format!("{when}: skew {skew}"),
                counts: counts(domains),
                min: (!domains.is_empty()).then_some(min),
                max_skew: Some(i64::from(c.max_skew)),
                groups: zones,
            },
        );
    }
    out.push_str("</div>\n");
}

fn counts(m: &BTreeMap<String, u32>) -> Vec<(&str, i64)> {
    m.iter().map(|(d, n)| (d.as_str(), i64::from(*n))).collect()
}

/// The pods left Pending, each with the scheduler's message.
fn pending(out: &mut String, r: &SimulationReport) {
    let pending: Vec<_> = r.pods.iter().filter(|p| p.node.is_none()).collect();
    if pending.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<section><h2 class=\"bad\">Pending: {} pod(s)</h2><p class=\"muted\">topospread explain NAMESPACE/POD shows each node's verdicts.</p><table><thead><tr><th>Pod</th><th>Why</th></tr></thead><tbody>",
        pending.len()
    );
    for p in pending {
        let _ = writeln!(
            out,
            "<tr><td class=\"mono\">{}/{}</td><td>{}</td></tr>",
            Esc(&p.namespace),
            Esc(&p.pod),
            Esc(p.message.as_deref().unwrap_or(""))
        );
    }
    out.push_str("</tbody></table></section>\n");
}

/// Every pod of the run and where it landed, sortable.
fn placements(page: &mut Page, r: &SimulationReport) {
    if r.pods.is_empty() {
        return;
    }
    page.html().push_str("<section><h2>Placements</h2>");
    page.sortable_table(
        "placements",
        &[
            ("Namespace", false),
            ("Pod", false),
            ("Node", false),
            ("Zone", false),
        ],
    );
    let out = page.html();
    for p in &r.pods {
        let node = match &p.node {
            Some(n) => Esc(n).to_string(),
            None => "<span class=\"bad\">&lt;pending&gt;</span>".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"mono\">{}</td><td class=\"mono\">{node}</td><td>{}</td></tr>",
            Esc(&p.namespace),
            Esc(&p.pod),
            Esc(p.zone.as_deref().unwrap_or("-"))
        );
    }
    out.push_str("</tbody></table></section>\n");
}
