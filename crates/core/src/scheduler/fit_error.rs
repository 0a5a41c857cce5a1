//! The message of an unschedulable pod (`FitError.Error()`): `0/6 nodes are available:
//! 2 node(s) didn't match ..., 4 Insufficient cpu.`

use crate::framework::{Code, Status};
use crate::version::{KubernetesVersion, PreFilterLayout};
use std::collections::BTreeMap;

/// Why filtering found no node, as upstream's `Diagnosis` records it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Diagnosis {
    /// The status of each node Filter rejected.
    pub(crate) explicit: Vec<Status>,
    /// The status of every other node (a PreFilter rejection or a PreFilterResult
    /// restriction); `None` = no reason recorded.
    pub(crate) absent: Option<Status>,
    /// The PreFilter rejection's message, if PreFilter rejected the pod.
    pub(crate) pre_filter_msg: Option<String>,
}

/// Formats the message for `num_all_nodes` nodes as `release` writes it.
pub(crate) fn fit_error_message(
    num_all_nodes: usize,
    d: &Diagnosis,
    release: KubernetesVersion,
) -> String {
    let mut msg = format!("0/{num_all_nodes} nodes are available:");
    if let Some(pre) = &d.pre_filter_msg {
        match release.pre_filter_rejection_layout() {
            PreFilterLayout::MessageOnly => {
                msg.push_str(&format!(" {pre}."));
                return msg;
            }
            PreFilterLayout::MessageAndHistogram => msg.push_str(&format!(" {pre}.")),
            PreFilterLayout::HistogramOnly => {}
        }
    }
    push_histogram(&mut msg, num_all_nodes, d);
    msg
}

/// The message of a Diagnosis without a PreFilter rejection (preemption's own
/// FitError), the same in every release.
pub(crate) fn filter_histogram_message(num_all_nodes: usize, d: &Diagnosis) -> String {
    let mut msg = format!("0/{num_all_nodes} nodes are available:");
    push_histogram(&mut msg, num_all_nodes, d);
    msg
}

/// Appends ` COUNT REASON, ....`: every node's reasons counted, sorted as rendered.
fn push_histogram(msg: &mut String, num_all_nodes: usize, d: &Diagnosis) {
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for s in &d.explicit {
        for r in s.reasons() {
            *reasons.entry(r.to_string()).or_default() += 1;
        }
    }
    let absent = num_all_nodes.saturating_sub(d.explicit.len());
    if absent > 0
        && let Some(s) = &d.absent
    {
        for r in s.reasons() {
            *reasons.entry(r.to_string()).or_default() += absent;
        }
    }
    let mut parts: Vec<String> = reasons
        .into_iter()
        .map(|(reason, count)| format!("{count} {reason}"))
        .collect();
    // Upstream sorts the rendered "count reason" strings.
    parts.sort();
    if !parts.is_empty() {
        msg.push_str(&format!(" {}.", parts.join(", ")));
    }
}

/// Appends PostFilter's message (`preemption: ...`) to a FitError message as
/// `FitError.Error()` of `release` does: after a space, closed by a period of its own
/// from 1.26 to 1.28 (so `..` after a message that already ends in one), as written in
/// 1.25 and from 1.29 (kubernetes PR 117588). An empty message adds nothing.
pub(crate) fn append_post_filter(
    message: &mut String,
    post_filter: &str,
    release: KubernetesVersion,
) {
    if post_filter.is_empty() {
        return;
    }
    message.push(' ');
    message.push_str(post_filter);
    if !release.post_filter_message_unterminated() {
        message.push('.');
    }
}

/// The status of the nodes a PreFilterResult leaves out, as `release` records it:
/// - until 1.26, each gets `node is filtered out by the prefilter result` (kubernetes
///   PR 119779, cherry-picked to every release then supported);
/// - 1.27 to 1.31 record none (PR 125197 and its cherry-picks: an absent node is
///   UnschedulableAndUnresolvable), so the message leaves them out of its counts;
/// - from 1.32 they share `node(s) didn't satisfy plugin(s) [NodeAffinity]` (PR 126022,
///   in the 1.32.0-alpha.1 changelog).
///
/// Every release keeps them out of preemption.
pub(crate) fn outside_pre_filter_result(plugins: &[&str], release: KubernetesVersion) -> Status {
    let code = Code::UnschedulableAndUnresolvable;
    match release.minor {
        ..=26 => Status::new(code, "node is filtered out by the prefilter result"),
        27..=31 => Status::code_only(code),
        _ => Status::new(
            code,
            format!("node(s) didn't satisfy plugin(s) [{}]", plugins.join(" ")),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Code;

    #[test]
    fn histogram_sorted_as_strings() {
        let d = Diagnosis {
            explicit: vec![
                Status::new(Code::Unschedulable, "Insufficient cpu"),
                Status::new(
                    Code::UnschedulableAndUnresolvable,
                    "node(s) didn't match Pod's node affinity/selector",
                ),
                Status::new(Code::Unschedulable, "Insufficient cpu")
                    .with_reason("Insufficient memory"),
            ],
            ..Diagnosis::default()
        };
        assert_eq!(
            filter_histogram_message(3, &d),
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu."
        );
    }

    #[test]
    fn pre_filter_message_replaces_the_histogram() {
        let d = Diagnosis {
            pre_filter_msg: Some("pod affinity terms conflict".into()),
            ..Diagnosis::default()
        };
        assert_eq!(
            fit_error_message(2, &d, KubernetesVersion::NEWEST),
            "0/2 nodes are available: pod affinity terms conflict."
        );
        // Before 1.28 every node's copy of the rejection is counted too; 1.25 has no
        // PreFilter part at all.
        let d = Diagnosis {
            absent: Some(Status::new(
                Code::Unschedulable,
                "pod affinity terms conflict",
            )),
            ..d
        };
        assert_eq!(
            fit_error_message(2, &d, v(27)),
            "0/2 nodes are available: pod affinity terms conflict. 2 pod affinity terms conflict."
        );
        assert_eq!(
            fit_error_message(2, &d, v(25)),
            "0/2 nodes are available: 2 pod affinity terms conflict."
        );
        assert_eq!(
            fit_error_message(2, &d, v(28)),
            "0/2 nodes are available: pod affinity terms conflict."
        );
    }

    #[test]
    fn absent_nodes_count_with_their_status() {
        let d = Diagnosis {
            explicit: vec![Status::new(Code::Unschedulable, "x")],
            absent: Some(Status::new(
                Code::UnschedulableAndUnresolvable,
                "node(s) didn't satisfy plugin(s) [NodeAffinity]",
            )),
            pre_filter_msg: None,
        };
        assert_eq!(
            filter_histogram_message(4, &d),
            "0/4 nodes are available: 1 x, 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
        );
    }

    fn v(minor: u32) -> KubernetesVersion {
        KubernetesVersion { minor }
    }

    #[test]
    fn post_filter_message_is_closed_per_release() {
        let base = "0/3 nodes are available: 3 Insufficient cpu.";
        let post =
            "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
        for (minor, want) in [
            (25, format!("{base} {post}")),
            (26, format!("{base} {post}.")),
            (28, format!("{base} {post}.")),
            (29, format!("{base} {post}")),
            (38, format!("{base} {post}")),
        ] {
            let mut message = base.to_string();
            append_post_filter(&mut message, post, v(minor));
            assert_eq!(message, want, "1.{minor}");
        }
        let mut message = base.to_string();
        append_post_filter(&mut message, "", v(25));
        assert_eq!(message, base);
    }
}
