//! The pods, ReplicaSets, Deployments and DaemonSet placements that already exist in the
//! input, by the controller that owns them: what each controller adopts before it makes
//! pods of its own.

use super::{REVISION_LABEL, controller_of, daemonset, ns_of, scale};
use crate::load::{Loaded, Object};
use std::collections::{BTreeSet, HashMap};
use topospread_planning::controller::DeletionCandidate;

/// What [`Existing`] reads of one pod, whole or compact.
struct ExistingPod<'a> {
    namespace: String,
    name: String,
    /// The controlling owner's kind and name.
    controller: Option<(&'a str, &'a str)>,
    phase: Option<&'a str>,
    terminating: bool,
    finished: bool,
    /// Read only for pods a controller owns.
    candidate: &'a dyn Fn() -> DeletionCandidate,
    daemon_node: &'a dyn Fn() -> Option<String>,
    /// `controller-revision-hash` (read for StatefulSet pods).
    revision: Option<&'a str>,
}

/// Pods that already exist, by the controller that owns them.
#[derive(Default)]
pub(super) struct Existing {
    /// (namespace, controller kind, controller name) -> active pod names (not finished,
    /// not terminating: what `controller.FilterActivePods` keeps).
    pub(super) owned: HashMap<(String, String, String), Vec<String>>,
    /// (namespace, Job name) -> its pods in phase Succeeded (they count toward
    /// `spec.completions`).
    pub(super) succeeded: HashMap<(String, String), i32>,
    /// (namespace, pod name).
    pub(super) names: BTreeSet<(String, String)>,
    /// (namespace, name) of input ReplicaSets.
    pub(super) replica_sets: BTreeSet<(String, String)>,
    /// (namespace, name) of input Deployments.
    pub(super) deployments: BTreeSet<(String, String)>,
    /// (namespace, DaemonSet name) -> the nodes its existing pods are on or pinned to.
    pub(super) daemon_nodes: HashMap<(String, String), BTreeSet<String>>,
    /// (namespace, pod name) -> what the deletion order reads of each active pod.
    pub(super) candidates: HashMap<(String, String), DeletionCandidate>,
    /// (namespace, pod name) -> the `controller-revision-hash` of each active pod a
    /// StatefulSet controls.
    pub(super) revisions: HashMap<(String, String), Option<String>>,
}

impl Existing {
    pub(super) fn scan(objects: &[Loaded]) -> Self {
        let mut e = Existing::default();
        for l in objects {
            match &l.object {
                Object::Pod(p) => {
                    let controller = controller_of(&p.metadata);
                    e.add_pod(ExistingPod {
                        namespace: ns_of(&p.metadata),
                        name: p.metadata.name.clone().unwrap_or_default(),
                        controller: controller.map(|o| (o.kind.as_str(), o.name.as_str())),
                        phase: p.status.as_ref().and_then(|s| s.phase.as_deref()),
                        terminating: p.metadata.deletion_timestamp.is_some(),
                        finished: crate::build::is_finished(p),
                        candidate: &|| scale::candidate(p),
                        daemon_node: &|| daemonset::pod_node(p),
                        revision: p
                            .metadata
                            .labels
                            .as_ref()
                            .and_then(|l| l.get(REVISION_LABEL))
                            .map(String::as_str),
                    });
                }
                Object::CompactPod(p) => e.add_pod(ExistingPod {
                    namespace: p.namespace.clone(),
                    name: p.name.clone(),
                    controller: p.controller.as_ref().map(|(k, n)| (k.as_str(), n.as_str())),
                    phase: p.phase.as_deref(),
                    terminating: p.terminating,
                    finished: p.is_finished(),
                    candidate: &|| p.candidate.clone(),
                    daemon_node: &|| p.daemon_node.clone(),
                    revision: p.revision.as_deref(),
                }),
                Object::ReplicaSet(rs) => {
                    let name = rs.metadata.name.clone().unwrap_or_default();
                    e.replica_sets.insert((ns_of(&rs.metadata), name));
                }
                Object::Deployment(d) => {
                    let name = d.metadata.name.clone().unwrap_or_default();
                    e.deployments.insert((ns_of(&d.metadata), name));
                }
                _ => {}
            }
        }
        e
    }

    /// Records one existing pod: as its controller counts it, and its name.
    fn add_pod(&mut self, p: ExistingPod<'_>) {
        let ExistingPod {
            namespace: ns,
            name,
            controller,
            ..
        } = p;
        if let Some((kind, owner)) = controller
            && kind == "Job"
            && p.phase == Some("Succeeded")
        {
            *self
                .succeeded
                .entry((ns.clone(), owner.to_string()))
                .or_default() += 1;
        }
        if let Some((kind, owner)) = controller
            && !p.terminating
            && !p.finished
        {
            self.owned
                .entry((ns.clone(), kind.to_string(), owner.to_string()))
                .or_default()
                .push(name.clone());
            self.candidates
                .insert((ns.clone(), name.clone()), (p.candidate)());
            if kind == "StatefulSet" {
                self.revisions
                    .insert((ns.clone(), name.clone()), p.revision.map(str::to_string));
            }
            if kind == "DaemonSet"
                && let Some(node) = (p.daemon_node)()
            {
                self.daemon_nodes
                    .entry((ns.clone(), owner.to_string()))
                    .or_default()
                    .insert(node);
            }
        }
        // A finished StatefulSet pod is deleted and recreated under its name.
        if !p.finished {
            self.names.insert((ns, name));
        }
    }

    pub(super) fn owned(&self, ns: &str, kind: &str, name: &str) -> &[String] {
        self.owned
            .get(&(ns.to_string(), kind.to_string(), name.to_string()))
            .map_or(&[], Vec::as_slice)
    }
}
