//! `simulate --drain NODE`, `--remove-node NODE` and `--lose KEY=VALUE` in the table:
//! the nodes drained or removed and what became of their pods and workloads.

use std::fmt::Write as _;
use topospread_jobs::whatif::WhatIfReport;

/// The table section.
pub(crate) fn table(out: &mut String, r: &WhatIfReport) {
    if !r.cordoned.is_empty() {
        let _ = writeln!(
            out,
            "\nDrained {} node(s) as kubectl drain does (cordoned, kept): {}",
            r.cordoned.len(),
            r.cordoned.join(", ")
        );
        if !r.kept.is_empty() {
            let _ = writeln!(
                out,
                "  {} pod(s) stay on the cordoned node(s) (DaemonSet, mirror): {}",
                r.kept.len(),
                r.kept.join(", ")
            );
        }
        for p in &r.refused {
            let _ = writeln!(out, "  kubectl drain refuses {}: {}", p.pod, p.reason);
        }
        if !r.refused.is_empty() {
            let _ = writeln!(
                out,
                "  (without those flags kubectl evicts nothing; shown as if those pods stayed)"
            );
        }
        for b in &r.blocked {
            let _ = writeln!(
                out,
                "  PodDisruptionBudget {} blocks the eviction of {}: kubectl drain retries until its --timeout",
                b.budget, b.pod
            );
        }
    }
    if r.nodes.is_empty() {
        let _ = writeln!(
            out,
            "  {} replacement pod(s) rescheduled, {} pending",
            r.rescheduled, r.pending
        );
    } else {
        let _ = writeln!(
            out,
            "\nRemoved {} node(s): {}",
            r.nodes.len(),
            r.nodes.join(", ")
        );
        let _ = writeln!(
            out,
            "  {} replacement pod(s) rescheduled, {} pending; {} lost (no controller); {} DaemonSet pod(s) gone with their nodes",
            r.rescheduled,
            r.pending,
            r.lost.len(),
            r.daemon_pods.len()
        );
    }
    if !r.mirror_pods.is_empty() {
        let _ = writeln!(
            out,
            "  {} static pod(s) gone with their nodes: {}",
            r.mirror_pods.len(),
            r.mirror_pods.join(", ")
        );
    }
    for p in &r.lost {
        let _ = writeln!(out, "  lost: {p}");
    }
    for w in &r.workloads {
        let _ = writeln!(
            out,
            "  {} (namespace {}): {} replaced, {} rescheduled, {} pending",
            w.controller, w.namespace, w.replaced, w.rescheduled, w.pending
        );
        for c in &w.too_few_domains {
            let _ = writeln!(out, "    cannot satisfy: {c}");
        }
        if let Some(m) = &w.message {
            let _ = writeln!(out, "    pending: {m}");
        }
    }
}
