//! Human-facing renderings of a snapshot and of the jobs' reports (the types
//! `topospread-jobs` defines): the cluster drawing, explanations, count summaries. Pure:
//! functions return `String`s; the CLI prints them.

mod cluster;
mod explain;
mod summary;

pub use cluster::{ShowOptions, counts_line, render_cluster};
pub use explain::{
    ExplainLayout, VerdictGroup, ranked_nodes, render_explanation, score_plugins, thousands,
    verdict_groups,
};
pub use summary::{SummaryText, every_domain};
