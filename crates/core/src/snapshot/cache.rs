//! The snapshot as a live cache, in the manner of kube-scheduler's scheduler cache:
//! pods move Pending -> Assumed (the scheduler picked a node and counts the pod there
//! before the bind lands) -> Added (an informer Add or Update confirmed it), or back
//! from Assumed to Pending when the bind fails ([`Snapshot::forget_pod`]). Nodes,
//! workload objects and namespaces are added, updated and removed by name, and every
//! index (per-node aggregates, topology domains, match counts, domain sums) follows.
//!
//! Costs: pod events are O(groups) (each tracked group checks whether the pod counts);
//! a node update is O(1) unless its labels or taints change, in which case the topology
//! index is rebuilt (O(nodes × labels)) and the cached domain sums are dropped (rebuilt
//! lazily on the next read). A node removal compacts the node list so [`NodeId`]s stay
//! dense and `nodes()` keeps its meaning: the nodes after it move down one slot, which
//! costs O(nodes × labels + bound pods + groups × nodes). Node removals are rare next to
//! pod events, so that trade keeps every per-pod path a plain slice index.

use super::objects::WorkloadKind;
use super::topology::TopologyIndex;
use super::{NodeId, PodId, Snapshot, SnapshotError};
use crate::api::{Node, Pod};

/// Where a stored pod is in the cache's life cycle.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PodState {
    /// Not on a node: waiting to be scheduled.
    Pending,
    /// The scheduler assumed it onto a node: it counts there, but no informer event has
    /// confirmed the binding yet.
    Assumed {
        /// [`Snapshot::finish_binding`] was called: the bind request completed.
        binding_finished: bool,
    },
    /// Bound to a node, as an informer reported it (or bound directly with
    /// [`Snapshot::bind`]).
    Added,
}

/// How a cache operation names a stored pod: by [`PodId`] or by UID.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PodKey<'a> {
    /// The pod's slot.
    Id(PodId),
    /// The pod's `metadata.uid`.
    Uid(&'a str),
}

impl From<PodId> for PodKey<'_> {
    fn from(id: PodId) -> Self {
        Self::Id(id)
    }
}

impl<'a> From<&'a str> for PodKey<'a> {
    fn from(uid: &'a str) -> Self {
        Self::Uid(uid)
    }
}

/// Why a cache operation was refused; each names the object. The snapshot is left
/// unchanged when one is returned.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheError {
    /// No stored pod has this UID.
    #[error("pod with uid {uid}: not in the cache")]
    UnknownUid {
        /// The UID asked for.
        uid: String,
    },
    /// No stored pod has this id.
    #[error("pod #{id}: not in the cache")]
    UnknownPodId {
        /// The id asked for.
        id: u32,
    },
    /// An update for a pod the cache does not hold.
    #[error("pod {pod:?} (uid {uid}): not in the cache")]
    PodNotFound {
        /// `namespace/name`.
        pod: String,
        /// The UID.
        uid: String,
    },
    /// An update whose object carries another UID than the one it is applied to.
    #[error("pod {pod:?} (uid {uid}): the update carries uid {new_uid}")]
    UidMismatch {
        /// `namespace/name`.
        pod: String,
        /// The UID updated.
        uid: String,
        /// The UID in the new object.
        new_uid: String,
    },
    /// An update renames a pod onto the name another stored pod holds.
    #[error("pod {pod:?} (uid {uid}): another pod with this name is in the cache")]
    DuplicatePod {
        /// `namespace/name`.
        pod: String,
        /// The UID.
        uid: String,
    },
    /// A pod names a node the cache does not hold.
    #[error("pod {pod:?} (uid {uid}): spec.nodeName: node {node:?} not in the cache")]
    PodNodeNotFound {
        /// `namespace/name`.
        pod: String,
        /// The UID.
        uid: String,
        /// The missing node.
        node: String,
    },
    /// Assume for a pod already assumed.
    #[error("pod {pod:?} (uid {uid}): already assumed on node {node:?}")]
    AlreadyAssumed {
        /// `namespace/name`.
        pod: String,
        /// The UID.
        uid: String,
        /// The node it is assumed on.
        node: String,
    },
    /// Assume for a pod already bound (Added), or bound to a node that is gone.
    #[error("pod {pod:?} (uid {uid}): bound to node {node:?}, so it cannot be assumed")]
    AlreadyBound {
        /// `namespace/name`.
        pod: String,
        /// The UID.
        uid: String,
        /// The node it is bound to.
        node: String,
    },
    /// Forget or finish-binding for a pod that is not assumed.
    #[error("pod {pod:?} (uid {uid}): not assumed, so it cannot be {operation}")]
    NotAssumed {
        /// `namespace/name`.
        pod: String,
        /// The UID.
        uid: String,
        /// What was asked: `forgotten` or `finish binding`.
        operation: &'static str,
    },
    /// No node has this name.
    #[error("node {node:?}: not in the cache")]
    NodeNotFound {
        /// The node name.
        node: String,
    },
    /// No node has this id.
    #[error("node #{id}: not in the cache")]
    UnknownNodeId {
        /// The id asked for.
        id: u32,
    },
    /// A node update whose object carries another name.
    #[error("node {node:?}: the update renames it to {new_name:?}")]
    NodeRenamed {
        /// The node updated.
        node: String,
        /// The name in the new object.
        new_name: String,
    },
    /// No workload object of this kind has this namespace and name.
    #[error("{kind} {namespace}/{name}: not in the cache")]
    WorkloadNotFound {
        /// The kind.
        kind: WorkloadKind,
        /// The namespace.
        namespace: String,
        /// The name.
        name: String,
    },
    /// The namespace is not known.
    #[error("namespace {namespace:?}: not in the cache")]
    NamespaceNotFound {
        /// The namespace.
        namespace: String,
    },
}

impl Snapshot {
    /// `namespace/name` of a pod, for errors.
    fn pod_text(&self, pod: &Pod) -> String {
        format!("{}/{}", self.symbols.resolve(pod.namespace), pod.name)
    }

    /// The stored pod with this UID.
    pub fn pod_by_uid(&self, uid: &str) -> Option<PodId> {
        self.pod_uids.get(uid).copied()
    }

    /// A stored pod's life-cycle state.
    pub fn pod_state(&self, id: PodId) -> Option<PodState> {
        self.pods.get(id.index())?.as_ref().map(|e| e.state)
    }

    /// Pods assumed and not yet confirmed, with their node.
    pub fn assumed_pods(&self) -> impl Iterator<Item = (PodId, Option<NodeId>)> + '_ {
        self.pods.iter().enumerate().filter_map(|(i, e)| {
            let e = e.as_ref()?;
            matches!(e.state, PodState::Assumed { .. })
                .then(|| (PodId(u32::try_from(i).unwrap_or(u32::MAX)), e.node))
        })
    }

    /// The id of the pod a key names, or the error naming the key.
    fn resolve_pod(&self, key: PodKey<'_>) -> Result<PodId, CacheError> {
        match key {
            PodKey::Id(id) => match self.pods.get(id.index()) {
                Some(Some(_)) => Ok(id),
                _ => Err(CacheError::UnknownPodId { id: id.0 }),
            },
            PodKey::Uid(uid) => self
                .pod_by_uid(uid)
                .ok_or_else(|| CacheError::UnknownUid { uid: uid.into() }),
        }
    }

    /// Applies an informer Update (or the Add confirming an assumed pod): the pod's
    /// labels, spec and node may all change, and every count moves with it. An assumed
    /// pod is confirmed (Assumed -> Added) on the node the new object names, moved
    /// there if it is not the assumed one; an update without a node keeps an assumed
    /// pod assumed where it is. A pod whose node was removed may be updated in place.
    pub fn update_pod(&mut self, uid: &str, mut pod: Pod) -> Result<PodId, CacheError> {
        self.touch();
        let Some(id) = self.pod_by_uid(uid) else {
            return Err(CacheError::PodNotFound {
                pod: self.pod_text(&pod),
                uid: uid.into(),
            });
        };
        if &*pod.uid != uid {
            return Err(CacheError::UidMismatch {
                pod: self.pod_text(&pod),
                uid: uid.into(),
                new_uid: pod.uid.to_string(),
            });
        }
        let key = (pod.namespace, pod.name.clone());
        if self.pod_ids.get(&key).is_some_and(|other| *other != id) {
            return Err(CacheError::DuplicatePod {
                pod: self.pod_text(&pod),
                uid: uid.into(),
            });
        }
        let Some(Some(old)) = self.pods.get(id.index()) else {
            return Err(CacheError::UnknownUid { uid: uid.into() });
        };
        let (old_key, old_node_name, old_state) = (
            (old.pod.namespace, old.pod.name.clone()),
            old.pod.node_name.clone(),
            old.state,
        );
        let mut state = PodState::Added;
        if pod.node_name.is_none()
            && let PodState::Assumed { .. } = old_state
        {
            pod.node_name.clone_from(&old_node_name);
            state = old_state;
        }
        let target = match pod.node_name.as_deref() {
            None => {
                state = PodState::Pending;
                None
            }
            Some(n) => match self.node_id(n) {
                Some(node) => Some(node),
                None if old_node_name.as_deref() == Some(n) => None,
                None => {
                    return Err(CacheError::PodNodeNotFound {
                        pod: self.pod_text(&pod),
                        uid: uid.into(),
                        node: n.into(),
                    });
                }
            },
        };
        self.detach(id);
        self.undetach(id, old_node_name.as_deref());
        if old_key != key {
            self.pod_ids.remove(&old_key);
            self.pod_ids.insert(key, id);
        }
        self.ensure_namespace(pod.namespace);
        let node_name = pod.node_name.clone();
        if let Some(Some(entry)) = self.pods.get_mut(id.index()) {
            *entry.pod = pod;
            entry.state = state;
        }
        match (target, node_name) {
            (Some(node), _) => self.attach(id, node),
            (None, Some(name)) => self.detached.entry(name).or_default().push(id),
            (None, None) => {}
        }
        Ok(id)
    }

    /// Takes a pod off the list of pods waiting for node `name` to come back.
    pub(super) fn undetach(&mut self, id: PodId, name: Option<&str>) {
        if let Some(name) = name
            && let Some(list) = self.detached.get_mut(name)
        {
            list.retain(|p| *p != id);
            if list.is_empty() {
                self.detached.remove(name);
            }
        }
    }

    /// An informer Add for a pod the cache assumed: [`Self::update_pod`], with its
    /// errors in [`add_pod`](Self::add_pod)'s terms.
    pub(super) fn confirm(&mut self, id: PodId, pod: Pod) -> Result<PodId, SnapshotError> {
        let uid = pod.uid.clone();
        let (namespace, name) = (
            self.symbols.resolve(pod.namespace).to_string(),
            pod.name.to_string(),
        );
        match self.update_pod(&uid, pod) {
            Ok(_) => Ok(id),
            Err(CacheError::PodNodeNotFound { node, .. }) => Err(SnapshotError::UnknownNode {
                namespace,
                name,
                node,
            }),
            Err(_) => Err(SnapshotError::DuplicatePod { namespace, name }),
        }
    }

    /// Removes the pod with this UID (an informer Delete), in whatever state it is.
    pub fn remove_pod_by_uid(&mut self, uid: &str) -> Result<Pod, CacheError> {
        let id = self.resolve_pod(PodKey::Uid(uid))?;
        self.remove_pod(id)
            .ok_or_else(|| CacheError::UnknownUid { uid: uid.into() })
    }

    /// Assumes a pending pod onto `node` (`AssumePod`): from now it counts there, in the
    /// node's resources and ports, in every spread count and in the affinity lists, as
    /// if bound. [`Self::forget_pod`] undoes it; an informer Add or Update confirms it.
    pub fn assume_pod<'a>(
        &mut self,
        pod: impl Into<PodKey<'a>>,
        node: NodeId,
    ) -> Result<(), CacheError> {
        self.touch();
        let id = self.resolve_pod(pod.into())?;
        let Some(info) = self.nodes.get(node.index()) else {
            return Err(CacheError::UnknownNodeId { id: node.0 });
        };
        let node_name = info.node.name.clone();
        let Some(Some(entry)) = self.pods.get(id.index()) else {
            return Err(CacheError::UnknownPodId { id: id.0 });
        };
        let (pod_text, uid) = (self.pod_text(&entry.pod), entry.pod.uid.to_string());
        let bound_to = entry.pod.node_name.as_deref().unwrap_or("").to_string();
        match entry.state {
            PodState::Assumed { .. } => {
                return Err(CacheError::AlreadyAssumed {
                    pod: pod_text,
                    uid,
                    node: bound_to,
                });
            }
            PodState::Added => {
                return Err(CacheError::AlreadyBound {
                    pod: pod_text,
                    uid,
                    node: bound_to,
                });
            }
            PodState::Pending => {}
        }
        if let Some(Some(entry)) = self.pods.get_mut(id.index()) {
            entry.pod.node_name = Some(node_name);
            entry.state = PodState::Assumed {
                binding_finished: false,
            };
        }
        self.attach(id, node);
        Ok(())
    }

    /// The assumed pod a key names, or why it is not one.
    fn assumed(&self, key: PodKey<'_>, operation: &'static str) -> Result<PodId, CacheError> {
        let id = self.resolve_pod(key)?;
        match self.pods.get(id.index()) {
            Some(Some(e)) if matches!(e.state, PodState::Assumed { .. }) => Ok(id),
            Some(Some(e)) => Err(CacheError::NotAssumed {
                pod: self.pod_text(&e.pod),
                uid: e.pod.uid.to_string(),
                operation,
            }),
            _ => Err(CacheError::UnknownPodId { id: id.0 }),
        }
    }

    /// Undoes [`Self::assume_pod`] after a failed bind (`ForgetPod`): the pod stops
    /// counting on its node and is pending again.
    pub fn forget_pod<'a>(&mut self, pod: impl Into<PodKey<'a>>) -> Result<(), CacheError> {
        self.touch();
        let id = self.assumed(pod.into(), "forgotten")?;
        self.detach(id);
        let name = self.pods.get_mut(id.index()).and_then(|e| {
            let e = e.as_mut()?;
            e.state = PodState::Pending;
            e.pod.node_name.take()
        });
        self.undetach(id, name.as_deref());
        Ok(())
    }

    /// Records that the bind request for an assumed pod completed (`FinishBinding`);
    /// the pod stays assumed until an informer event confirms it.
    pub fn finish_binding<'a>(&mut self, pod: impl Into<PodKey<'a>>) -> Result<(), CacheError> {
        self.touch();
        let id = self.assumed(pod.into(), "finish binding")?;
        if let Some(Some(e)) = self.pods.get_mut(id.index()) {
            e.state = PodState::Assumed {
                binding_finished: true,
            };
        }
        Ok(())
    }

    /// Adds (`delta` = 1) or drops (-1) a node's images in the cluster's image states.
    pub(super) fn count_images(&mut self, node: &Node, delta: i32) {
        let mut seen = std::collections::HashSet::new();
        for image in &node.images {
            for name in &image.names {
                if !seen.insert(name) {
                    continue;
                }
                if delta > 0 {
                    self.image_states
                        .entry(name.clone())
                        .or_insert(super::ImageStateSummary {
                            size: image.size,
                            num_nodes: 0,
                        })
                        .num_nodes += 1;
                } else if let Some(s) = self.image_states.get_mut(name) {
                    s.num_nodes = s.num_nodes.saturating_sub(1);
                    if s.num_nodes == 0 {
                        self.image_states.remove(name);
                    }
                }
            }
        }
    }

    /// Replaces a node's object (an informer Update): labels, taints, allocatable and
    /// images may all change. Changed labels rebuild the topology index; changed labels
    /// or taints drop the cached domain sums, rebuilt on the next read.
    pub fn update_node(&mut self, name: &str, node: Node) -> Result<NodeId, CacheError> {
        self.touch();
        let id = self
            .node_id(name)
            .ok_or_else(|| CacheError::NodeNotFound { node: name.into() })?;
        if &*node.name != name {
            return Err(CacheError::NodeRenamed {
                node: name.into(),
                new_name: node.name.to_string(),
            });
        }
        let old = std::mem::replace(&mut self.nodes[id.index()].node, node.clone());
        self.stamp(id);
        self.count_images(&old, -1);
        self.count_images(&node, 1);
        let labels_changed = old.labels != node.labels;
        if labels_changed {
            self.rebuild_topology();
        }
        if labels_changed || old.taints != node.taints {
            self.counts
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .clear_sums();
        }
        Ok(id)
    }

    fn rebuild_topology(&mut self) {
        self.topology = TopologyIndex::rebuild(self.nodes.iter().map(|n| &n.node.labels));
    }

    /// Removes a node (an informer Delete), returning it. Its pods stay known (still
    /// naming the node) but count nowhere until a node of that name is added again.
    /// The nodes after it move down one [`NodeId`] (see the module's cost notes).
    pub fn remove_node(&mut self, name: &str) -> Result<Node, CacheError> {
        self.touch();
        let id = self
            .node_ids
            .remove(name)
            .ok_or_else(|| CacheError::NodeNotFound { node: name.into() })?;
        let info = self.nodes.remove(id.index());
        self.node_stamps.remove(id.index());
        for &p in info.pods() {
            if let Some(Some(e)) = self.pods.get_mut(p.index()) {
                e.node = None;
            }
        }
        if !info.pods().is_empty() {
            self.detached
                .entry(info.node.name.clone())
                .or_default()
                .extend_from_slice(info.pods());
        }
        // The nodes that move down take a new stamp: their index now names another node.
        self.touch();
        for s in self.node_stamps.iter_mut().skip(id.index()) {
            *s = self.generation;
        }
        for (i, n) in self.nodes.iter_mut().enumerate().skip(id.index()) {
            n.id = NodeId(u32::try_from(i).unwrap_or(u32::MAX));
            self.node_ids.insert(n.node.name.clone(), n.id);
            for &p in n.pods() {
                if let Some(Some(e)) = self.pods.get_mut(p.index()) {
                    e.node = Some(n.id);
                }
            }
        }
        self.rebuild_topology();
        self.counts
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .remove_node(id.index());
        self.affinity_nodes.clear();
        self.anti_affinity_nodes.clear();
        for i in 0..self.nodes.len() {
            self.index_affinity(NodeId(u32::try_from(i).unwrap_or(u32::MAX)));
        }
        self.count_images(&info.node, -1);
        Ok(info.node)
    }

    /// Drops the counting groups (per namespace and selector) and per-domain sums no
    /// cycle read since the previous call, and starts a new generation; returns how many
    /// groups were dropped. Call it once per pass over the pending pods (e.g. when the
    /// active queue drains, or every few hundred cycles): what the remaining pods use
    /// stays cached, what nobody asks for any more is freed.
    pub(crate) fn prune_groups(&mut self) -> usize {
        self.counts
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .prune()
    }

    /// How many per-domain sums are cached over all groups (for diagnostics).
    pub fn tracked_sums(&self) -> usize {
        self.lock_counts().sums_len()
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
