//! The message of an unschedulable pod (`FitError.Error()`): `0/6 nodes are available:
//! 2 node(s) didn't match ..., 4 Insufficient cpu.`

use crate::framework::Status;
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

/// Formats the message for `num_all_nodes` nodes.
pub(crate) fn fit_error_message(num_all_nodes: usize, d: &Diagnosis) -> String {
    let mut msg = format!("0/{num_all_nodes} nodes are available:");
    if let Some(pre) = &d.pre_filter_msg {
        msg.push_str(&format!(" {pre}."));
        return msg;
    }
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
    msg
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
            fit_error_message(3, &d),
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
            fit_error_message(2, &d),
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
            fit_error_message(4, &d),
            "0/4 nodes are available: 1 x, 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
        );
    }
}
