//! NodeAffinity: Filter by `spec.nodeSelector` and required node affinity (with a
//! `PreFilterResult` for `matchFields` on `metadata.name`); Score by preferred terms.

use super::helper::default_normalize_score;
use crate::api::{
    NodeSelectorMatcher, NodeSelectorTermMatcher, Pod, PreferredNodeAffinity, Symbols,
};
use crate::config::NodeAffinityArgs;
use crate::framework::{ActionType as A, ClusterEvent, EventResource as R};
use crate::framework::{
    Code, CycleState, FilterPlugin, NodeScore, Plugin, PreFilterPlugin, PreFilterResult,
    PreScorePlugin, ScorePlugin, Status,
};
use crate::snapshot::{NodeId, NodeInfo, Snapshot};

/// The plugin's registry name.
pub const NAME: &str = "NodeAffinity";
/// Filter's reason (`ErrReasonPod`).
pub(crate) const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";
/// PreFilter's reason when the terms pin the pod to no node name (`errReasonConflict`).
pub(crate) const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";
/// Filter's reason when a node fails the profile's `addedAffinity` (`errReasonEnforced`).
pub(crate) const ERR_REASON_ENFORCED: &str =
    "node(s) didn't match scheduler-enforced node affinity";

/// The NodeAffinity plugin, with the profile's `addedAffinity` if any.
#[derive(Clone, Debug, Default)]
pub struct NodeAffinity {
    /// `addedAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    added_required: Option<NodeSelectorMatcher>,
    /// `addedAffinity.preferredDuringSchedulingIgnoredDuringExecution`, when non-empty.
    added_preferred: Option<PreferredNodeAffinity>,
}

impl NodeAffinity {
    /// Builds the plugin; `addedAffinity` terms must all parse (upstream parses them
    /// strictly here). On error: the field inside the args and the message.
    pub fn new(
        args: &NodeAffinityArgs,
        symbols: &mut Symbols,
    ) -> Result<Self, crate::config::FieldProblem> {
        let Some(added) = &args.added_affinity else {
            return Ok(Self::default());
        };
        let mut plugin = Self::default();
        if let Some(ns) = &added.required_during_scheduling_ignored_during_execution {
            let matcher = NodeSelectorMatcher::parse(ns, symbols);
            if let Some((i, e)) = matcher.terms.iter().enumerate().find_map(|(i, t)| match t {
                NodeSelectorTermMatcher::Invalid(e) => Some((i, e)),
                NodeSelectorTermMatcher::Valid { .. } => None,
            }) {
                return Err(crate::config::FieldProblem::new(
                    format!(
                        "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]"
                    ),
                    format!("Invalid value: {e}"),
                ));
            }
            plugin.added_required = Some(matcher);
        }
        if let Some(terms) = added
            .preferred_during_scheduling_ignored_during_execution
            .as_deref()
            .filter(|t| !t.is_empty())
        {
            let preferred = PreferredNodeAffinity::parse(terms, symbols);
            if let Some(e) = &preferred.error {
                return Err(crate::config::FieldProblem::new(
                    "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution",
                    format!("Invalid value: {e}"),
                ));
            }
            plugin.added_preferred = Some(preferred);
        }
        Ok(plugin)
    }
}

impl Plugin for NodeAffinity {
    fn name(&self) -> &'static str {
        NAME
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::new(R::Node, A::ADD | A::UPDATE_NODE_LABEL)]
    }
}

impl PreFilterPlugin for NodeAffinity {
    fn pre_filter(&self, state: &mut CycleState, pod: &Pod, snapshot: &Snapshot) -> Status {
        self.pre_filter_with_result(state, pod, snapshot).0
    }

    fn pre_filter_with_result(
        &self,
        _: &mut CycleState,
        pod: &Pod,
        _: &Snapshot,
    ) -> (Status, Option<PreFilterResult>) {
        if pod.required_node_affinity.is_empty() && self.added_required.is_none() {
            return (Status::skip(), None);
        }
        match &pod.required_node_names {
            None => (Status::success(), None),
            Some(names) if names.is_empty() => (
                Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_CONFLICT),
                None,
            ),
            Some(names) => (
                Status::success(),
                Some(PreFilterResult {
                    node_names: names.clone(),
                }),
            ),
        }
    }
}

impl FilterPlugin for NodeAffinity {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo, snapshot: &Snapshot) -> Status {
        if let Some(added) = &self.added_required
            && !added.matches(&node.node.labels, &node.node.name, snapshot.symbols())
        {
            return Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_ENFORCED);
        }
        if pod.required_node_affinity.matches(
            &node.node.labels,
            &node.node.name,
            snapshot.symbols(),
        ) {
            Status::success()
        } else {
            Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_POD)
        }
    }
}

impl PreScorePlugin for NodeAffinity {
    fn pre_score(&self, _: &mut CycleState, pod: &Pod, _: &[NodeId], _: &Snapshot) -> Status {
        match &pod.preferred_node_affinity {
            None if self.added_preferred.is_none() => Status::skip(),
            None => Status::success(),
            Some(p) => match &p.error {
                Some(e) => Status::error(e.clone()),
                None => Status::success(),
            },
        }
    }
}

impl ScorePlugin for NodeAffinity {
    fn score(
        &self,
        _: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        snapshot: &Snapshot,
    ) -> Result<i64, Status> {
        let (labels, name, symbols) = (&node.node.labels, &node.node.name, snapshot.symbols());
        let score =
            |p: Option<&PreferredNodeAffinity>| p.map_or(0, |p| p.score(labels, name, symbols));
        Ok(score(self.added_preferred.as_ref()) + score(pod.preferred_node_affinity.as_deref()))
    }

    fn normalize_score(&self, _: &CycleState, _: &Pod, scores: &mut [NodeScore]) -> Status {
        default_normalize_score(false, scores);
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::testutil::{filter_all, pod, scores, snapshot};
    use serde_json::{Value, json};

    fn node(name: &str, labels: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}})
    }

    fn with_spec(spec: Value) -> Value {
        let mut spec = spec;
        spec["containers"] = json!([]);
        json!({"metadata": {"name": "p"}, "spec": spec})
    }

    fn required(terms: Value) -> Value {
        json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}})
    }

    fn codes(s: &Snapshot, p: &Pod) -> Vec<Code> {
        filter_all(&NodeAffinity::default(), s, p)
            .into_iter()
            .map(|(c, _)| c)
            .collect()
    }

    const OK: Code = Code::Success;
    const NO: Code = Code::UnschedulableAndUnresolvable;

    // A selection of upstream's TestNodeAffinity cases (node labels {foo: bar}).
    #[test]
    fn filter_table() {
        let cases: Vec<(&str, Value, Code)> = vec![
            ("no selector", json!({}), OK),
            (
                "missing labels",
                json!({"nodeSelector": {"foo": "bar"}}),
                NO,
            ),
            ("same labels", json!({"nodeSelector": {"foo": "bar"}}), OK),
            (
                "matchExpressions In",
                required(
                    json!([{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["value1", "bar"]}]}]),
                ),
                OK,
            ),
            (
                "matchExpressions Gt",
                required(
                    json!([{"matchExpressions": [{"key": "kernel-version", "operator": "Gt", "values": ["0204"]}]}]),
                ),
                OK,
            ),
            (
                "matchExpressions NotIn",
                required(
                    json!([{"matchExpressions": [{"key": "mem-type", "operator": "NotIn", "values": ["DDR", "DDR2"]}]}]),
                ),
                OK,
            ),
            (
                "matchExpressions Exists on a missing key",
                required(json!([{"matchExpressions": [{"key": "GPU", "operator": "Exists"}]}])),
                NO,
            ),
            (
                "invalid operator: term never matches",
                required(
                    json!([{"matchExpressions": [{"key": "foo", "operator": "In", "values": []}]}]),
                ),
                NO,
            ),
            ("empty nodeSelectorTerms", required(json!([])), NO),
            ("empty term", required(json!([{}])), NO),
            (
                "terms are ORed",
                required(json!([
                    {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["nope"]}]},
                    {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
                ])),
                OK,
            ),
            (
                "nodeSelector and affinity are ANDed",
                {
                    let mut v = required(
                        json!([{"matchExpressions": [{"key": "foo", "operator": "Exists"}]}]),
                    );
                    v["nodeSelector"] = json!({"foo": "other"});
                    v
                },
                NO,
            ),
        ];
        for (name, spec, want) in cases {
            let labels = if name == "missing labels" {
                json!({})
            } else {
                json!({"foo": "bar", "kernel-version": "0206", "mem-type": "DDR3"})
            };
            let mut s = snapshot(&[node("n", labels)], &[]);
            let p = pod(&mut s, with_spec(spec));
            assert_eq!(codes(&s, &p), vec![want], "{name}");
        }
    }

    #[test]
    fn match_fields_give_a_pre_filter_result() {
        let mut s = snapshot(&[node("n1", json!({})), node("n2", json!({}))], &[]);
        let p = pod(
            &mut s,
            with_spec(required(json!([
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
            ]))),
        );
        let (st, r) =
            NodeAffinity::default().pre_filter_with_result(&mut CycleState::new(), &p, &s);
        assert!(st.is_success());
        assert_eq!(
            r.map(|r| r.node_names.into_iter().collect::<Vec<_>>()),
            Some(vec![Box::from("n1")])
        );
        assert_eq!(codes(&s, &p), vec![OK, NO]);

        let p = pod(
            &mut s,
            with_spec(required(json!([
                {"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["n1"]},
                    {"key": "metadata.name", "operator": "In", "values": ["n2"]}
                ]}
            ]))),
        );
        let (st, _) =
            NodeAffinity::default().pre_filter_with_result(&mut CycleState::new(), &p, &s);
        assert_eq!(st.code(), NO);
        assert_eq!(st.reasons()[0], ERR_REASON_CONFLICT);

        let p = pod(&mut s, with_spec(json!({})));
        assert!(
            NodeAffinity::default()
                .pre_filter(&mut CycleState::new(), &p, &s)
                .is_skip()
        );
    }

    // Upstream's TestNodeAffinityPriority.
    #[test]
    fn score_table() {
        let preferred = |terms: Value| {
            with_spec(
                json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}}),
            )
        };
        let affinity1 = preferred(json!([
            {"weight": 2, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}}
        ]));
        let affinity2 = preferred(json!([
            {"weight": 2, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}},
            {"weight": 4, "preference": {"matchExpressions": [{"key": "key", "operator": "In", "values": ["value"]}]}},
            {"weight": 5, "preference": {"matchExpressions": [
                {"key": "foo", "operator": "In", "values": ["bar"]},
                {"key": "key", "operator": "In", "values": ["value"]},
                {"key": "az", "operator": "In", "values": ["az1"]}
            ]}}
        ]));
        let label1 = json!({"foo": "bar"});
        let label2 = json!({"key": "value"});
        let label3 = json!({"az": "az1"});
        let label4 = json!({"abc": "az11", "def": "az22"});
        let label5 = json!({"foo": "bar", "key": "value", "az": "az1"});

        let nodes = [
            node("1", label1.clone()),
            node("2", label2.clone()),
            node("3", label3.clone()),
        ];
        let mut s = snapshot(&nodes, &[]);
        let p = pod(&mut s, with_spec(json!({})));
        assert_eq!(
            scores(&NodeAffinity::default(), &s, &p),
            None,
            "no affinity: PreScore skips"
        );

        let nodes = [
            node("1", label4),
            node("2", label2.clone()),
            node("3", label3.clone()),
        ];
        let mut s = snapshot(&nodes, &[]);
        let p = pod(&mut s, affinity1.clone());
        assert_eq!(
            scores(&NodeAffinity::default(), &s, &p),
            Some(vec![0, 0, 0])
        );

        let nodes = [
            node("1", label1.clone()),
            node("2", label2.clone()),
            node("3", label3),
        ];
        let mut s = snapshot(&nodes, &[]);
        let p = pod(&mut s, affinity1);
        assert_eq!(
            scores(&NodeAffinity::default(), &s, &p),
            Some(vec![100, 0, 0])
        );

        let nodes = [node("1", label1), node("5", label5), node("2", label2)];
        let mut s = snapshot(&nodes, &[]);
        let p = pod(&mut s, affinity2);
        assert_eq!(
            scores(&NodeAffinity::default(), &s, &p),
            Some(vec![18, 100, 36])
        );
    }

    fn added(s: &mut Snapshot, added: Value) -> NodeAffinity {
        let args: NodeAffinityArgs = serde_json::from_value(json!({ "addedAffinity": added }))
            .expect("the test object deserializes");
        NodeAffinity::new(&args, s.symbols_mut())
            .expect("the plugin builds from the test arguments")
    }

    fn zones() -> Snapshot {
        snapshot(
            &[
                node("n1", json!({"zone": "a"})),
                node("n2", json!({"zone": "b"})),
            ],
            &[],
        )
    }

    #[test]
    fn added_required_affinity_filters_before_the_pods_own() {
        let mut s = zones();
        let pl = added(
            &mut s,
            json!({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}),
        );
        let plain = pod(&mut s, with_spec(json!({})));
        assert_eq!(
            filter_all(&pl, &s, &plain),
            vec![(OK, String::new()), (NO, ERR_REASON_ENFORCED.to_string())]
        );
        let on_b = pod(&mut s, with_spec(json!({"nodeSelector": {"zone": "b"}})));
        assert_eq!(
            filter_all(&pl, &s, &on_b),
            vec![
                (NO, ERR_REASON_POD.to_string()),
                (NO, ERR_REASON_ENFORCED.to_string())
            ]
        );
    }

    #[test]
    fn added_preferred_affinity_adds_to_the_score() {
        let mut s = zones();
        let pl = added(
            &mut s,
            json!({"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 3, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}}]}),
        );
        // No preference of its own: PreScore still runs for the added terms.
        let plain = pod(&mut s, with_spec(json!({})));
        assert_eq!(scores(&pl, &s, &plain), Some(vec![100, 0]));
        let prefers_b = pod(
            &mut s,
            with_spec(
                json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 2, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}}]}}}),
            ),
        );
        // 3 against 2, normalized to the maximum.
        assert_eq!(scores(&pl, &s, &prefers_b), Some(vec![100, 66]));
        // Without added terms a pod with no preference is skipped.
        assert_eq!(scores(&NodeAffinity::default(), &s, &plain), None);
    }

    #[test]
    fn invalid_added_affinity_is_refused_with_its_path() {
        let mut s = zones();
        let args: NodeAffinityArgs = serde_json::from_value(json!({"addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                {"matchExpressions": [{"key": "zone", "operator": "Bad"}]}]}}}))
        .expect("the arguments deserialize");
        let err = NodeAffinity::new(&args, s.symbols_mut()).err();
        let crate::config::FieldProblem {
            field: path,
            message: msg,
        } = err.unwrap_or_default();
        assert_eq!(
            path,
            "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1]"
        );
        assert!(
            msg.contains("\"Bad\" is not a valid node selector operator"),
            "{msg}"
        );
    }
}
