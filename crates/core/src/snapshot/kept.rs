//! Per-node values kept across scheduling cycles by the nodes' stamps
//! ([`Snapshot::node_stamps`]): what a cycle worked out for a node from the pod and that
//! node alone holds for the next cycle of an identical pod until the node changes. The
//! scheduler keeps screening verdicts this way, and Score plugins raw scores.

use super::{NodeId, Snapshot};

/// Values per node, for one key (the caller's) on one snapshot.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeptByNode<V> {
    /// [`Snapshot::instance`] of the snapshot the values were worked out on.
    instance: u64,
    /// Per node index: the node's stamp when its value was worked out (0: none kept;
    /// stamps start at 1), and the value.
    kept: Vec<(u64, V)>,
}

impl<V: Copy + Default> KeptByNode<V> {
    /// Readies the values for a cycle on `snapshot`, dropping them when they were
    /// another snapshot's or not `same_key`'s; false (keep nothing) when the snapshot
    /// keeps nothing across cycles.
    pub(crate) fn start(&mut self, snapshot: &Snapshot, same_key: bool) -> bool {
        if !snapshot.keeps_across_cycles() {
            return false;
        }
        if !same_key || self.instance != snapshot.instance() {
            self.instance = snapshot.instance();
            self.kept.clear();
        }
        self.kept
            .resize(snapshot.node_stamps().len(), (0, V::default()));
        true
    }

    /// The node's value: the kept one if the node is unchanged since it was kept, else
    /// `work_out`'s (then kept). `stamps` are the snapshot's [`Snapshot::node_stamps`].
    #[inline]
    pub(crate) fn get_or(
        &mut self,
        stamps: &[u64],
        node: NodeId,
        work_out: impl FnOnce() -> V,
    ) -> V {
        match (stamps.get(node.index()), self.kept.get_mut(node.index())) {
            (Some(&now), Some((then, value))) => {
                if now != *then {
                    *value = work_out();
                    *then = now;
                }
                *value
            }
            _ => work_out(),
        }
    }
}
