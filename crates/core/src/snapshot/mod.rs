//! The cluster as the scheduler sees it: nodes, the pods bound to them, and the objects
//! default spreading reads, with indices kept current as pods are bound and removed.

mod cache;
mod counts;
mod domain_counts;
mod kept;
mod node_info;
mod objects;
mod topology;
mod types;
mod volumes;

use crate::api::{Labels, Node, Pod, Selector, Sym, Symbols, Workloads};
use counts::MatchCounts;
pub(crate) use domain_counts::DomainSums;
pub use domain_counts::{DomainCounts, NodeFilter};
pub(crate) use kept::KeptByNode;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
pub use types::{HostPortInfo, ImageStateSummary};

pub use cache::{CacheError, PodKey, PodState};
pub use node_info::NodeInfo;
pub use objects::WorkloadKind;
pub use topology::{KeyDomains, NO_DOMAIN, TopologyIndex};

/// A number drawn once per snapshot value from a process-wide counter (see
/// [`Snapshot::instance`]).
#[derive(Debug)]
struct Instance(u64);

impl Default for Instance {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// A node's index in the snapshot.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The index as `usize`.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A pod's index in the snapshot.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PodId(pub u32);

impl PodId {
    /// The index as `usize`.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Errors building a snapshot; each names the object.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// Two nodes share a name.
    #[error("node {name:?}: metadata.name: Duplicate value: a node with this name already exists")]
    DuplicateNode {
        /// The node name.
        name: String,
    },
    /// Two pods share a namespace and name.
    #[error(
        "pod {namespace}/{name}: metadata.name: Duplicate value: a pod with this name already exists in the namespace"
    )]
    DuplicatePod {
        /// The namespace.
        namespace: String,
        /// The pod name.
        name: String,
    },
    /// A pod is bound to a node the snapshot does not have.
    #[error(
        "pod {namespace}/{name}: spec.nodeName: Not found: {node:?} (no such node in the snapshot)"
    )]
    UnknownNode {
        /// The namespace.
        namespace: String,
        /// The pod name.
        name: String,
        /// The missing node.
        node: String,
    },
}

#[derive(Clone, Debug)]
struct PodEntry {
    /// Boxed: the store of a dump's tens of thousands of pods then grows by pointers,
    /// not by copies of ~700-byte pods held twice at the peak.
    pod: Box<Pod>,
    /// The node the pod counts on: `None` while pending, or while its node is gone.
    node: Option<NodeId>,
    /// Where the pod is in the cache's life cycle.
    state: PodState,
}

/// The cluster state: nodes, pods, and the indices the plugins read.
#[derive(Debug, Default)]
pub struct Snapshot {
    symbols: Symbols,
    nodes: Vec<NodeInfo>,
    node_ids: HashMap<Box<str>, NodeId>,
    pods: Vec<Option<PodEntry>>,
    pod_ids: HashMap<(Sym, Box<str>), PodId>,
    /// Pods by UID.
    pod_uids: HashMap<Box<str>, PodId>,
    /// Freed pod slots, reused by the next pod added.
    free_pods: Vec<PodId>,
    /// Pods bound to a node the snapshot no longer has, by node name: known but not
    /// counted until the node comes back.
    detached: HashMap<Box<str>, Vec<PodId>>,
    workloads: Workloads,
    topology: TopologyIndex,
    counts: Mutex<MatchCounts>,
    incremental: bool,
    image_states: HashMap<Box<str>, ImageStateSummary>,
    namespaces: HashMap<Sym, Labels>,
    /// Nodes with a bound pod that has pod affinity or anti-affinity
    /// (`HavePodsWithAffinityList`).
    affinity_nodes: BTreeSet<NodeId>,
    /// Nodes with a bound pod that has required anti-affinity
    /// (`HavePodsWithRequiredAntiAffinityList`).
    anti_affinity_nodes: BTreeSet<NodeId>,
    /// Bumped by every change a scheduling cycle could see (see [`Self::generation`]).
    generation: u64,
    /// Per node, the generation its [`NodeInfo`] last changed in (see
    /// [`Self::node_stamps`]).
    node_stamps: Vec<u64>,
    /// Tells this snapshot from every other, clones included (see [`Self::instance`]).
    instance: Instance,
    /// The gates pods added from manifests are converted under (`PodLevelResources`...).
    request_options: crate::api::resources::RequestOptions,
    /// Claims, volumes, classes and CSINodes, for the volume plugins.
    volume_objects: volumes::VolumeObjects,
}

impl Clone for Snapshot {
    fn clone(&self) -> Self {
        Self {
            symbols: self.symbols.clone(),
            nodes: self.nodes.clone(),
            node_ids: self.node_ids.clone(),
            pods: self.pods.clone(),
            pod_ids: self.pod_ids.clone(),
            pod_uids: self.pod_uids.clone(),
            free_pods: self.free_pods.clone(),
            detached: self.detached.clone(),
            workloads: self.workloads.clone(),
            topology: self.topology.clone(),
            counts: Mutex::new(self.lock_counts().clone()),
            incremental: self.incremental,
            image_states: self.image_states.clone(),
            namespaces: self.namespaces.clone(),
            affinity_nodes: self.affinity_nodes.clone(),
            anti_affinity_nodes: self.anti_affinity_nodes.clone(),
            generation: self.generation,
            node_stamps: self.node_stamps.clone(),
            instance: Instance::default(),
            request_options: self.request_options,
            volume_objects: self.volume_objects.clone(),
        }
    }
}

impl Snapshot {
    /// The gates that change how a pod's requests are computed, for callers converting
    /// manifests into this snapshot.
    pub fn request_options(&self) -> crate::api::resources::RequestOptions {
        self.request_options
    }

    /// Sets [`Self::request_options`] (a `--kubernetes-version` or `--feature-gates`).
    pub fn set_request_options(&mut self, options: crate::api::resources::RequestOptions) {
        self.request_options = options;
    }

    /// An empty snapshot with incremental counting on.
    pub fn new() -> Self {
        Self {
            incremental: true,
            ..Self::default()
        }
    }

    /// Turns incremental counting on or off. Off, every count is rebuilt from the pods on
    /// each request, and no Filter verdict or score is kept from one cycle to the next
    /// (by the nodes' stamps): slow, but the reference the incremental path is tested
    /// against.
    pub fn set_incremental(&mut self, on: bool) {
        self.touch();
        self.incremental = on;
        *self.counts.get_mut().unwrap_or_else(|e| e.into_inner()) = MatchCounts::default();
    }

    /// The cluster's generation: a number that changes with every change a scheduling
    /// cycle could see (nodes, pods added, bound, assumed, forgotten or removed, workload
    /// objects, namespaces, the counting mode) and with nothing else. Two cycles of
    /// identical pods at one generation decide alike, which lets the scheduler reuse a
    /// failed cycle's verdict for the replicas that follow.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Which snapshot this is: a number no other snapshot of the process has, a clone
    /// included, so state kept across cycles ([`Self::node_stamps`]) is never read
    /// against another snapshot.
    pub(crate) fn instance(&self) -> u64 {
        self.instance.0
    }

    /// Per node (by [`NodeId`]), a stamp that changes whenever anything of its
    /// [`NodeInfo`] changes (the node object, its pods, their sums) or the node moves to
    /// another index; two stamps of one index in one [`Self::instance`] are equal only if
    /// the node is the same and unchanged. A Score plugin whose score reads the node
    /// alone keeps it across cycles by this stamp.
    pub(crate) fn node_stamps(&self) -> &[u64] {
        &self.node_stamps
    }

    /// Whether cycles may keep per-node verdicts and scores for the next cycles (by
    /// [`Self::node_stamps`]): off with incremental counting, so that mode is the
    /// reference for both.
    pub(crate) fn keeps_across_cycles(&self) -> bool {
        self.incremental
    }

    /// Marks a node changed, in a new generation (so its stamp is one no cycle has read).
    fn stamp(&mut self, node: NodeId) {
        self.touch();
        if let Some(s) = self.node_stamps.get_mut(node.index()) {
            *s = self.generation;
        }
    }

    /// Starts a new generation.
    fn touch(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    fn lock_counts(&self) -> std::sync::MutexGuard<'_, MatchCounts> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The string table.
    pub fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    /// The string table, for interning objects about to be added.
    pub fn symbols_mut(&mut self) -> &mut Symbols {
        &mut self.symbols
    }

    /// Makes room for `additional` more pods at once, so a dump's tens of thousands of
    /// pods are not copied over and over (and held twice at the peak) as the store grows.
    pub fn reserve_pods(&mut self, additional: usize) {
        self.pods.reserve(additional);
        self.pod_ids.reserve(additional);
        self.pod_uids.reserve(additional);
    }

    /// Adds a node.
    pub fn add_node(&mut self, node: Node) -> Result<NodeId, SnapshotError> {
        self.touch();
        if self.node_ids.contains_key(&node.name) {
            return Err(SnapshotError::DuplicateNode {
                name: node.name.to_string(),
            });
        }
        let id = NodeId(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        self.topology.add_node(id.index(), &node.labels);
        self.node_ids.insert(node.name.clone(), id);
        self.count_images(&node, 1);
        let name = node.name.clone();
        self.nodes.push(NodeInfo::new(id, node));
        self.node_stamps.push(self.generation);
        self.counts
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .add_node(self.nodes.len());
        for pod in self.detached.remove(&name).unwrap_or_default() {
            self.attach(pod, id);
        }
        Ok(id)
    }

    /// Adds a pod; one with `spec.nodeName` is bound to that node at once. An add for a
    /// pod the cache assumed (same UID) confirms it instead: Assumed -> Added, moved to
    /// the node it landed on if that is not the assumed one (the informer's Add).
    pub fn add_pod(&mut self, pod: Pod) -> Result<PodId, SnapshotError> {
        self.touch();
        if let Some(&id) = self.pod_uids.get(&pod.uid)
            && matches!(self.pod_state(id), Some(PodState::Assumed { .. }))
        {
            return self.confirm(id, pod);
        }
        let key = (pod.namespace, pod.name.clone());
        if self.pod_ids.contains_key(&key) || self.pod_uids.contains_key(&pod.uid) {
            return Err(SnapshotError::DuplicatePod {
                namespace: self.symbols.resolve(pod.namespace).to_string(),
                name: pod.name.to_string(),
            });
        }
        let node = match &pod.node_name {
            None => None,
            Some(n) => Some(self.node_id(n).ok_or_else(|| SnapshotError::UnknownNode {
                namespace: self.symbols.resolve(pod.namespace).to_string(),
                name: pod.name.to_string(),
                node: n.to_string(),
            })?),
        };
        self.ensure_namespace(pod.namespace);
        let uid = pod.uid.clone();
        let entry = PodEntry {
            pod: Box::new(pod),
            node: None,
            state: PodState::Pending,
        };
        let id = match self.free_pods.pop() {
            Some(id) => {
                self.pods[id.index()] = Some(entry);
                id
            }
            None => {
                self.pods.push(Some(entry));
                PodId(u32::try_from(self.pods.len() - 1).unwrap_or(u32::MAX))
            }
        };
        self.pod_uids.insert(uid, id);
        self.pod_ids.insert(key, id);
        if let Some(node) = node {
            self.bind(id, node);
        }
        Ok(id)
    }

    /// Binds a stored pod to a node, updating the node's pods and every count (the pod
    /// is then Added; see [`Self::assume_pod`] for the optimistic bind).
    pub fn bind(&mut self, id: PodId, node: NodeId) {
        self.touch();
        let Some(Some(entry)) = self.pods.get_mut(id.index()) else {
            return;
        };
        if entry.node.is_some() || node.index() >= self.nodes.len() {
            return;
        }
        let waiting_on = entry
            .pod
            .node_name
            .replace(self.nodes[node.index()].node.name.clone());
        entry.state = PodState::Added;
        self.undetach(id, waiting_on.as_deref());
        self.attach(id, node);
    }

    /// Counts a stored pod, not counted now, on `node`: its aggregates, every group's
    /// counts and the affinity node lists.
    fn attach(&mut self, id: PodId, node: NodeId) {
        self.stamp(node);
        let Some(Some(entry)) = self.pods.get_mut(id.index()) else {
            return;
        };
        let Some(info) = self.nodes.get_mut(node.index()) else {
            return;
        };
        entry.node = Some(node);
        info.add_pod(id, &entry.pod);
        let counts = self.counts.get_mut().unwrap_or_else(|e| e.into_inner());
        counts.apply(&entry.pod, node.index(), 1, &self.symbols);
        self.index_affinity(node);
    }

    /// Stops counting a stored pod on its node (the reverse of [`Self::attach`]); the
    /// pod's `node_name` is left as it is.
    fn detach(&mut self, id: PodId) {
        let Some(Some(entry)) = self.pods.get_mut(id.index()) else {
            return;
        };
        let Some(node) = entry.node.take() else {
            return;
        };
        self.nodes[node.index()].remove_pod(id, &entry.pod);
        let counts = self.counts.get_mut().unwrap_or_else(|e| e.into_inner());
        counts.apply(&entry.pod, node.index(), -1, &self.symbols);
        self.index_affinity(node);
        self.stamp(node);
    }

    /// Keeps the affinity node lists in step with a node's pods.
    fn index_affinity(&mut self, node: NodeId) {
        let info = &self.nodes[node.index()];
        for (set, has) in [
            (
                &mut self.affinity_nodes,
                !info.pods_with_affinity().is_empty(),
            ),
            (
                &mut self.anti_affinity_nodes,
                !info.pods_with_required_anti_affinity().is_empty(),
            ),
        ] {
            if has {
                set.insert(node);
            } else {
                set.remove(&node);
            }
        }
    }

    /// Nodes with a bound pod that has pod affinity or anti-affinity, in index order.
    pub(crate) fn nodes_with_pod_affinity(&self) -> impl Iterator<Item = &NodeInfo> {
        self.affinity_nodes.iter().map(|&id| self.node(id))
    }

    /// Nodes with a bound pod that has required pod anti-affinity, in index order.
    pub(crate) fn nodes_with_required_anti_affinity(&self) -> impl Iterator<Item = &NodeInfo> {
        self.anti_affinity_nodes.iter().map(|&id| self.node(id))
    }

    /// Removes a pod (bound or not), returning it; its slot is reused by a later pod.
    pub fn remove_pod(&mut self, id: PodId) -> Option<Pod> {
        self.touch();
        self.pods.get(id.index())?.as_ref()?;
        self.detach(id);
        let entry = self.pods.get_mut(id.index())?.take()?;
        self.pod_ids
            .remove(&(entry.pod.namespace, entry.pod.name.clone()));
        self.pod_uids.remove(&entry.pod.uid);
        self.undetach(id, entry.pod.node_name.as_deref());
        self.free_pods.push(id);
        Some(*entry.pod)
    }

    /// Every node, indexed by [`NodeId`].
    pub fn nodes(&self) -> &[NodeInfo] {
        &self.nodes
    }

    /// One node.
    pub fn node(&self, id: NodeId) -> &NodeInfo {
        &self.nodes[id.index()]
    }

    /// The node with this name.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.node_ids.get(name).copied()
    }

    /// A stored pod.
    pub fn pod(&self, id: PodId) -> Option<&Pod> {
        self.pods.get(id.index())?.as_ref().map(|e| &*e.pod)
    }

    /// The node a stored pod is bound to.
    pub fn pod_node(&self, id: PodId) -> Option<NodeId> {
        self.pods.get(id.index())?.as_ref()?.node
    }

    /// The pod with this namespace and name.
    pub fn pod_id(&self, namespace: &str, name: &str) -> Option<PodId> {
        let ns = self.symbols.get(namespace)?;
        self.pod_ids.get(&(ns, Box::from(name))).copied()
    }

    /// Every stored pod with its id, in slot order (insertion order until a removed
    /// pod's slot is reused).
    pub fn pods(&self) -> impl Iterator<Item = (PodId, &Pod)> {
        self.pods.iter().enumerate().filter_map(|(i, e)| {
            e.as_ref()
                .map(|e| (PodId(u32::try_from(i).unwrap_or(u32::MAX)), &*e.pod))
        })
    }

    /// The objects default spreading derives selectors from.
    pub fn workloads(&self) -> &Workloads {
        &self.workloads
    }

    /// Replaces the workload objects.
    pub fn workloads_mut(&mut self) -> &mut Workloads {
        self.touch();
        &mut self.workloads
    }

    /// The domains of a topology key, if any node carries it.
    #[inline]
    pub fn domains(&self, key: Sym) -> Option<&KeyDomains> {
        self.topology.key(key)
    }

    /// Counts the pods on one node that `selector` matches in `namespace`, skipping
    /// terminating pods (`countPodsMatchSelector` upstream).
    pub fn count_on_node(&self, node: NodeId, namespace: Sym, selector: &Selector) -> u32 {
        let count = self.nodes[node.index()]
            .pods()
            .iter()
            .filter_map(|p| self.pod(*p))
            .filter(|p| counts::counts_for(p, namespace, selector, &self.symbols))
            .count();
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    /// Starts tracking the counts of every `(namespace, selector)` of `wanted` in one
    /// pass over the bound pods (see [`Snapshot::match_counts`]); without incremental
    /// counting there is nothing to keep, so nothing is done.
    pub fn prepare_counts(&self, wanted: impl IntoIterator<Item = (Sym, Selector)>) {
        if self.incremental {
            self.lock_counts()
                .prepare(wanted, self.nodes.len(), self.bound_pods(), &self.symbols);
        }
    }

    /// The per-node counts of pods `selector` matches in `namespace`, indexed by node.
    /// Incremental, these are kept current across binds; otherwise rebuilt now.
    pub fn match_counts(&self, namespace: Sym, selector: &Selector) -> Arc<Vec<u32>> {
        let bound = self.bound_pods();
        if self.incremental {
            self.lock_counts().get_or_build(
                namespace,
                selector,
                self.nodes.len(),
                bound,
                &self.symbols,
            )
        } else {
            MatchCounts::default().get_or_build(
                namespace,
                selector,
                self.nodes.len(),
                bound,
                &self.symbols,
            )
        }
    }

    /// The counts of pods `selector` matches in `namespace`, summed per domain of `key`
    /// over the nodes `filter` admits (admitted nodes without the key count in
    /// [`DomainSums::missing_slot`]). Incremental, the sums are kept current across
    /// binds and shared; otherwise rebuilt now.
    pub(crate) fn domain_counts(
        &self,
        namespace: Sym,
        selector: &Selector,
        key: Sym,
        filter: &NodeFilter,
    ) -> Arc<DomainCounts> {
        let domains = self.topology.key(key);
        if self.incremental {
            self.lock_counts().domain_counts(
                namespace,
                selector,
                key,
                filter,
                &self.nodes,
                domains,
                self.bound_pods(),
                &self.symbols,
            )
        } else {
            let per_node = self.match_counts(namespace, selector);
            DomainSums::build(
                key,
                filter.clone(),
                &self.nodes,
                domains,
                &per_node,
                &self.symbols,
            )
            .counts
        }
    }

    /// The slot of [`Self::domain_counts`]' sums of `key` over `filter` that pods on
    /// `node` count in, or `None` when `filter` leaves the node out.
    pub(crate) fn domain_slot(&self, key: Sym, filter: &NodeFilter, node: NodeId) -> Option<usize> {
        let domains = self.topology.key(key);
        let missing = DomainSums::missing_slot(domains, self.symbols.get(""));
        let info = self.nodes.get(node.index())?;
        DomainSums::slot(filter, info, domains, missing, &self.symbols)
    }

    /// Whether `pod` counts in the sums of `selector` in `namespace` (as binds and
    /// removals update them: not terminating, same namespace, selected).
    pub(crate) fn counts_for(&self, pod: &Pod, namespace: Sym, selector: &Selector) -> bool {
        counts::counts_for(pod, namespace, selector, &self.symbols)
    }

    /// Every bound pod with its node's index.
    fn bound_pods(&self) -> impl Iterator<Item = (usize, &Pod)> {
        self.nodes.iter().flat_map(|n| {
            n.pods()
                .iter()
                .filter_map(|p| self.pod(*p))
                .map(move |p| (n.id.index(), p))
        })
    }

    /// How many topology groups are tracked (for diagnostics and benchmarks).
    pub fn tracked_groups(&self) -> usize {
        self.lock_counts().len()
    }

    /// Whether any node reports an image (`status.images`): with none, ImageLocality
    /// scores every node alike.
    pub(crate) fn has_images(&self) -> bool {
        !self.image_states.is_empty()
    }

    /// The cluster's image states by image name (`ImageStateSummary`): the size the first
    /// node reported and how many nodes hold it.
    pub(crate) fn image_state(&self, name: &str) -> Option<ImageStateSummary> {
        self.image_states.get(name).copied()
    }

    /// A namespace's labels; every namespace a pod lives in exists, labelled
    /// `kubernetes.io/metadata.name` as the API server labels namespaces.
    pub fn namespace_labels(&self, namespace: Sym) -> Option<&Labels> {
        self.namespaces.get(&namespace)
    }

    /// Every known namespace and its labels.
    pub fn namespaces(&self) -> impl Iterator<Item = (Sym, &Labels)> {
        self.namespaces.iter().map(|(k, v)| (*k, v))
    }

    /// Records a namespace with its labels (`kubernetes.io/metadata.name` is added).
    pub fn set_namespace(&mut self, namespace: Sym, labels: &Labels) {
        self.touch();
        let key = self.symbols.intern("kubernetes.io/metadata.name");
        let labels = Labels::from_pairs(labels.iter().chain([(key, namespace)]));
        self.namespaces.insert(namespace, labels);
    }

    fn ensure_namespace(&mut self, namespace: Sym) {
        if !self.namespaces.contains_key(&namespace) {
            self.set_namespace(namespace, &Labels::default());
        }
    }
}

#[cfg(test)]
mod cache_proptests;
#[cfg(test)]
mod proptests;
