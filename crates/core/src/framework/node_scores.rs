//! Raw scores kept across scheduling cycles for a Score plugin whose score of a node is
//! a function of the pod's inputs (a key) and that node's [`NodeInfo`] alone. The
//! replicas of one template score the same nodes over and over while one node changes
//! per binding; this keeps each node's last score with the node's stamp
//! ([`Snapshot::node_stamps`]) and recomputes only the nodes whose stamp moved.
//!
//! Upstream has no such cache (it scores every node every cycle); the scores read are
//! exactly those the plugin would compute, so the results are the same.

use super::NodeScore;
use crate::snapshot::{KeptByNode, NodeId, NodeInfo, Snapshot};
use std::sync::Mutex;

/// One plugin's kept scores (see the module docs): the key they were computed for, and
/// the scores. Clones start empty.
#[derive(Default)]
pub(crate) struct NodeScoreCache<K> {
    kept: Mutex<(Option<K>, KeptByNode<i64>)>,
}

impl<K> Clone for NodeScoreCache<K> {
    fn clone(&self) -> Self {
        Self {
            kept: Mutex::new((None, KeptByNode::default())),
        }
    }
}

impl<K> std::fmt::Debug for NodeScoreCache<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeScoreCache").finish_non_exhaustive()
    }
}

impl<K: PartialEq + Clone> NodeScoreCache<K> {
    /// Scores every node of `nodes` in order into `out`: a node unchanged since it was
    /// last scored for `key` on this snapshot gets the kept score, any other node
    /// `score`'s (then kept). `score` must read only `key`'s inputs and the node. When
    /// another thread holds the cache (profiles shared between schedulers), or the
    /// snapshot keeps nothing across cycles, every node is scored afresh.
    pub(crate) fn score_nodes(
        &self,
        snapshot: &Snapshot,
        key: &K,
        nodes: &[NodeId],
        out: &mut Vec<NodeScore>,
        mut score: impl FnMut(&NodeInfo) -> i64,
    ) {
        out.reserve(nodes.len());
        if let Ok(mut guard) = self.kept.try_lock() {
            let (kept_key, kept) = &mut *guard;
            let same = kept_key.as_ref() == Some(key);
            if kept.start(snapshot, same) {
                if !same {
                    *kept_key = Some(key.clone());
                }
                let stamps = snapshot.node_stamps();
                out.extend(nodes.iter().map(|&node| NodeScore {
                    node,
                    score: kept.get_or(stamps, node, || score(snapshot.node(node))),
                }));
                return;
            }
        }
        out.extend(nodes.iter().map(|&node| NodeScore {
            node,
            score: score(snapshot.node(node)),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::testutil::{pod, snapshot};
    use serde_json::json;

    /// Scores each node by its pod count plus the key, counting the calls.
    fn run(
        cache: &NodeScoreCache<i64>,
        s: &Snapshot,
        key: i64,
        calls: &mut usize,
    ) -> Vec<(u32, i64)> {
        let nodes: Vec<NodeId> = s.nodes().iter().map(|n| n.id).collect();
        let mut out = Vec::new();
        cache.score_nodes(s, &key, &nodes, &mut out, |n| {
            *calls += 1;
            i64::try_from(n.pods().len()).unwrap_or(0) * 10 + key
        });
        out.iter().map(|x| (x.node.0, x.score)).collect()
    }

    #[test]
    fn only_changed_nodes_are_scored_again() {
        let node = |n: &str| json!({"metadata": {"name": n}});
        let mut s = snapshot(&[node("a"), node("b"), node("c")], &[]);
        let cache = NodeScoreCache::default();
        let mut calls = 0;
        assert_eq!(run(&cache, &s, 1, &mut calls), [(0, 1), (1, 1), (2, 1)]);
        assert_eq!(calls, 3);
        assert_eq!(run(&cache, &s, 1, &mut calls), [(0, 1), (1, 1), (2, 1)]);
        assert_eq!(calls, 3, "nothing changed");

        let p = pod(
            &mut s,
            json!({"metadata": {"name": "p"}, "spec": {"containers": []}}),
        );
        let id = s.add_pod(p).expect("adds");
        s.bind(id, NodeId(1));
        assert_eq!(run(&cache, &s, 1, &mut calls), [(0, 1), (1, 11), (2, 1)]);
        assert_eq!(calls, 4, "only b");

        assert_eq!(run(&cache, &s, 2, &mut calls), [(0, 2), (1, 12), (2, 2)]);
        assert_eq!(calls, 7, "another key scores every node");

        s.remove_node("a").expect("a exists");
        assert_eq!(run(&cache, &s, 2, &mut calls), [(0, 12), (1, 2)]);
        assert_eq!(calls, 9, "the nodes that moved down");

        let copy = s.clone();
        assert_eq!(run(&cache, &copy, 2, &mut calls), [(0, 12), (1, 2)]);
        assert_eq!(calls, 11, "a clone is another snapshot");
    }
}
