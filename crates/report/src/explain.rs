//! One pod's scheduling cycle, rendered for a person: each node's verdict per Filter
//! plugin, each feasible node's score per Score plugin with the weighted total, the
//! domain counts each constraint saw, and the outcome.

use serde::Serialize;
use std::fmt::Write as _;

/// One Filter plugin's verdict on one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FilterVerdict {
    /// The plugin.
    pub plugin: String,
    /// `Success`, `Unschedulable`, `UnschedulableAndUnresolvable`, `Skip`, ...
    pub code: String,
    /// Why, when not Success.
    pub reasons: Vec<String>,
}

/// One Score plugin's score for one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ScoreView {
    /// The plugin.
    pub plugin: String,
    /// What Score returned.
    pub raw: i64,
    /// After NormalizeScore (0..=100).
    pub normalized: i64,
    /// `normalized × weight`.
    pub weighted: i64,
}

/// Everything about one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct NodeExplanation {
    /// The node.
    pub node: String,
    /// Filter verdicts, in the order the plugins ran (the first rejection stops the rest).
    pub filters: Vec<FilterVerdict>,
    /// Scores, when the node was feasible and scoring ran.
    pub scores: Vec<ScoreView>,
    /// Sum of score × weight, when scored.
    pub total: Option<i64>,
    /// Pending pods nominated to the node that Filter counted there (`namespace/name`,
    /// equal or higher priority than the pod).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nominated: Vec<String>,
}

/// The matching-pod counts one topology spread constraint saw, per eligible domain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ConstraintCounts {
    /// The constraint, e.g. `zone maxSkew=1 DoNotSchedule app=web`.
    pub constraint: String,
    /// Domain and count.
    pub counts: Vec<(String, i64)>,
    /// The skew PodTopologySpread measures (max minus the global minimum, minDomains
    /// applied); `None` for Score's per-node view.
    pub skew: Option<i64>,
}

/// A pod preemption evicts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct VictimView {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// Its priority.
    pub priority: i32,
}

/// What DefaultPreemption decided after a cycle in which no node fit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PreemptionView {
    /// The node chosen, where the pod is nominated (`status.nominatedNodeName`).
    pub node: String,
    /// The pods evicted from it, most important first.
    pub victims: Vec<VictimView>,
}

/// A scheduling cycle, explained.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ExplainView {
    /// `namespace/name`.
    pub pod: String,
    /// Lines of context printed first (what was scheduled before this pod).
    pub context: Vec<String>,
    /// Per node.
    pub nodes: Vec<NodeExplanation>,
    /// Per constraint (hard, then soft), as PodTopologySpread counts when the cycle
    /// starts: the same count as every spread report.
    pub spread: Vec<ConstraintCounts>,
    /// The constraints are the cluster's default constraints (the pod has none).
    pub spread_from_defaults: bool,
    /// Per soft constraint: the counts Score saw over the feasible nodes' domains.
    pub score_counts: Vec<ConstraintCounts>,
    /// The chosen node, or the scheduler's failure message (with PostFilter's words).
    #[serde(serialize_with = "outcome")]
    #[schemars(with = "OutcomeSchema")]
    pub outcome: Result<String, String>,
    /// What preemption decided when this cycle found no node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemption: Option<PreemptionView>,
    /// The failed cycle whose preemption made room for this one, shown before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preempting_cycle: Option<Box<ExplainView>>,
}

/// The schema of [`ExplainView::outcome`] as [`outcome`] writes it.
struct OutcomeSchema;

impl schemars::JsonSchema for OutcomeSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Outcome".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`{\"scheduled\": NODE}` or `{\"pending\": MESSAGE}`.",
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"scheduled": {"type": "string"}},
                    "required": ["scheduled"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {"pending": {"type": "string"}},
                    "required": ["pending"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

/// The outcome as `{"scheduled": NODE}` or `{"pending": MESSAGE}`.
fn outcome<S: serde::Serializer>(
    outcome: &Result<String, String>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = serializer.serialize_map(Some(1))?;
    match outcome {
        Ok(node) => map.serialize_entry("scheduled", node)?,
        Err(message) => map.serialize_entry("pending", message)?,
    }
    map.end()
}

/// Beyond this many domains a constraint's counts are summarised.
const LISTED_DOMAINS: usize = 12;

fn counts_text(c: &ConstraintCounts) -> String {
    if c.counts.is_empty() {
        return format!("  {}: no eligible domain", c.constraint);
    }
    let min = c.counts.iter().map(|x| x.1).min().unwrap_or(0);
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
    let summary = crate::summary::summarize(&counts);
    format!(
        "  {}: {tail}\n{}",
        c.constraint,
        summary.lines("    ").trim_end()
    )
}

/// Renders the explanation as plain text: a pod that preempted gets its failed cycle,
/// the preemption (node, victims, nomination), then the cycle after the eviction.
pub fn render_explanation(v: &ExplainView) -> String {
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
        render_cycle(&mut out, failed);
        let _ = writeln!(out, "\n== Cycle after the eviction");
    }
    render_cycle(&mut out, v);
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

fn render_cycle(out: &mut String, v: &ExplainView) {
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
    let _ = writeln!(out, "\nFilter");
    let name_w = v
        .nodes
        .iter()
        .map(|n| n.node.len())
        .max()
        .unwrap_or(4)
        .max(4);
    for n in &v.nodes {
        let rejected = n
            .filters
            .iter()
            .find(|f| f.code != "Success" && f.code != "Skip");
        let verdict = match rejected {
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
    let _ = match &v.outcome {
        Ok(node) => writeln!(out, "\nResult: scheduled to {node}"),
        Err(message) => writeln!(out, "\nResult: Pending: {message}"),
    };
    if let Some(p) = &v.preemption {
        render_preemption(out, p);
    }
}
