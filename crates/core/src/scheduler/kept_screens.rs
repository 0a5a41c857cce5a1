//! The verdicts of the screening Filters that read only the pod and the node
//! ([`Screening::RejectsByNode`](crate::framework::Screening::RejectsByNode)), kept
//! across the cycles of identical pods: a template's replicas walk the same nodes cycle
//! after cycle while one node changes per binding, so each node's verdict is kept with
//! its stamp ([`Snapshot::node_stamps`]) and worked out again only when the stamp moves.
//!
//! Upstream has no such cache (it filters every node every cycle); a kept verdict is
//! exactly the one the checks would give, so the cycle decides alike:
//! - the verdicts belong to one snapshot ([`Snapshot::instance`]), one profile, one
//!   number of by-node checks and one class of identical pods (every field but the UID and the name, as the failure cache
//!   compares them); another pod, profile or snapshot starts afresh;
//! - a check that reads only the pod and the node gives, for a pod of the class, the
//!   same verdict on a node whose stamp has not moved.

use super::failure_cache::same_class;
use crate::api::Pod;
use crate::snapshot::{KeptByNode, NodeId, Snapshot};

/// The kept verdicts (see the module docs): their key, and whether the checks reject
/// each node.
#[derive(Clone, Debug, Default)]
pub(super) struct KeptScreens {
    /// The profile the cycle ran.
    profile: usize,
    /// How many by-node checks the verdicts combine.
    checks: usize,
    /// The pod whose class the verdicts are for.
    pod: Option<Pod>,
    /// Per node: whether the checks reject it.
    rejected: KeptByNode<bool>,
}

impl KeptScreens {
    /// Makes the kept verdicts those of `pod`'s class on `snapshot` under `profile`, of
    /// `checks` by-node checks, dropping them if they were another's; false (keep
    /// nothing) when the snapshot keeps nothing across cycles.
    pub(super) fn start(
        &mut self,
        snapshot: &Snapshot,
        profile: usize,
        checks: usize,
        pod: &Pod,
    ) -> bool {
        let same = self.profile == profile
            && self.checks == checks
            && self.pod.as_ref().is_some_and(|p| same_class(p, pod));
        if !self.rejected.start(snapshot, same) {
            return false;
        }
        if !same {
            self.profile = profile;
            self.checks = checks;
            self.pod = Some(pod.clone());
        }
        true
    }

    /// Whether the checks reject `node`: the kept verdict if the node is unchanged since
    /// it was kept, else `rejects`' (then kept).
    #[inline]
    pub(super) fn rejects(
        &mut self,
        stamps: &[u64],
        node: NodeId,
        rejects: impl FnOnce() -> bool,
    ) -> bool {
        self.rejected.get_or(stamps, node, rejects)
    }
}
