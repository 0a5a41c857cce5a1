//! Human-facing renderings of a snapshot and of scheduling results. Pure: functions
//! return `String`s; the CLI prints them.

mod cluster;
mod explain;
mod selector;
mod summary;

pub use cluster::{
    Highlight, ShowOptions, counts_line, default_topology_keys, domain_counts, render_cluster, skew,
};
pub use explain::{
    ConstraintCounts, ExplainLayout, ExplainView, FilterVerdict, NodeExplanation, PreemptionView,
    ScoreView, VerdictGroup, VictimView, ranked_nodes, render_explanation, score_plugins,
    thousands, verdict_groups,
};
pub use selector::{SelectorParseError, parse_selector};
pub use summary::{Bucket, CountSummary, EXTREMES, HISTOGRAM_BUCKETS, every_domain, summarize};
