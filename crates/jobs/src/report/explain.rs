//! One pod's scheduling cycle as `explain -o json` writes it and the renderers draw it:
//! each node's verdict per Filter plugin, each feasible node's score per Score plugin,
//! the domain counts each constraint saw, the outcome and what preemption decided.

use schemars::JsonSchema;
use serde::Serialize;
use topospread::spread::ConstraintRef;

/// One Filter plugin's verdict on one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FilterVerdict {
    /// The plugin.
    pub plugin: String,
    /// `Success`, `Unschedulable`, `UnschedulableAndUnresolvable`, `Skip`, ...
    pub code: String,
    /// Why, when not Success.
    pub reasons: Vec<String>,
}

/// One Score plugin's score for one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ConstraintCounts {
    /// The constraint, e.g. `zone maxSkew=1 DoNotSchedule app=web`.
    pub constraint: String,
    /// Its topology key.
    pub topology_key: String,
    /// Its maxSkew.
    pub max_skew: i32,
    /// `DoNotSchedule` or `ScheduleAnyway`.
    pub when_unsatisfiable: String,
    /// Its selector as counted (matchLabelKeys merged), as kubectl prints selectors.
    pub selector: String,
    /// Domain and count.
    pub counts: Vec<(String, i64)>,
    /// The skew PodTopologySpread measures (max minus the global minimum, minDomains
    /// applied); `None` for Score's per-node view.
    pub skew: Option<i64>,
}

impl ConstraintCounts {
    /// `constraint`'s counts (domain, matching pods) and the skew measured, if any.
    pub fn new(constraint: &ConstraintRef, counts: Vec<(String, i64)>, skew: Option<i64>) -> Self {
        Self {
            constraint: constraint.to_string(),
            topology_key: constraint.topology_key.clone(),
            max_skew: constraint.max_skew,
            when_unsatisfiable: constraint.when_unsatisfiable.as_str().to_string(),
            selector: constraint.selector.clone(),
            counts,
            skew,
        }
    }
}

/// A pod preemption evicts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VictimView {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// Its priority.
    pub priority: i32,
}

/// What DefaultPreemption decided after a cycle in which no node fit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PreemptionView {
    /// The node chosen, where the pod is nominated (`status.nominatedNodeName`).
    pub node: String,
    /// The pods evicted from it, most important first.
    pub victims: Vec<VictimView>,
}

/// A scheduling cycle, explained.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
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

impl JsonSchema for OutcomeSchema {
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
