//! Pods in the live cache: added, updated and deleted; bound pods parked until their node
//! arrives; overcommits by others' bindings; preemption victims; stale nominations.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use topospread::convert::{self};
use topospread::snapshot::{CacheError, PodId, PodState, SnapshotError};
use tracing::{debug, warn};

use crate::actions::PodRef;

use super::kinds::{fingerprint, key};
use super::{LiveCache, Overcommit};

impl LiveCache {
    /// What `id`'s arrival took its node beyond: each of cpu, memory and the pod count
    /// (the resources every node lists) that it took from within its allocatable to
    /// above it. A node already over stays counted once, at the pod that crossed.
    pub(super) fn over_allocatable(&self, id: PodId) -> Vec<String> {
        let (Some(node), Some(pod)) = (self.snapshot.pod_node(id), self.snapshot.pod(id)) else {
            return Vec::new();
        };
        let info = self.snapshot.node(node);
        let (requested, allocatable) = (info.requested(), &info.node.allocatable);
        let added = &pod.requests.requested;
        let crossed = |now: i64, by: i64, limit: i64| now > limit && now - by <= limit;
        let mut over = Vec::new();
        if crossed(requested.milli_cpu, added.milli_cpu, allocatable.milli_cpu) {
            over.push(format!(
                "cpu: {}m requested of {}m allocatable",
                requested.milli_cpu, allocatable.milli_cpu
            ));
        }
        if crossed(requested.memory, added.memory, allocatable.memory) {
            over.push(format!(
                "memory: {} requested of {} allocatable",
                requested.memory, allocatable.memory
            ));
        }
        let pods = i64::try_from(info.pods().len()).unwrap_or(i64::MAX);
        if crossed(pods, 1, allocatable.allowed_pod_number) {
            over.push(format!(
                "pods: {pods} bound of {} allocatable",
                allocatable.allowed_pod_number
            ));
        }
        over
    }

    /// Marks preemption victims whose deletion this replica is sending as terminating
    /// by preemption (see `preempting`). An assumed victim keeps its state; its next
    /// event carries the mark.
    pub fn mark_preempting(&mut self, victims: &[PodId]) {
        for &id in victims {
            let Some(p) = self.snapshot.pod(id) else {
                continue;
            };
            let uid = p.uid.to_string();
            if !p.terminating_by_preemption && self.snapshot.pod_state(id) == Some(PodState::Added)
            {
                let mut marked = p.clone();
                marked.terminating_by_preemption = true;
                let _ = self.snapshot.update_pod(&uid, marked);
            }
            self.preempting.insert(uid);
        }
    }

    /// A victim's deletion failed: it no longer counts as terminating.
    pub fn preemption_failed(&mut self, uid: &str) {
        if !self.preempting.remove(uid) {
            return;
        }
        if let Some(id) = self.snapshot.pod_by_uid(uid)
            && self.snapshot.pod_state(id) == Some(PodState::Added)
            && let Some(p) = self.snapshot.pod(id)
        {
            let mut unmarked = p.clone();
            unmarked.terminating_by_preemption = false;
            let _ = self.snapshot.update_pod(uid, unmarked);
        }
    }

    /// Pending pods (all, or the one with `only` as UID) whose `status.nominatedNodeName`
    /// names a node the synced cache does not hold, each reported once: the caller
    /// clears the field, so no pod stays nominated to a node that no longer exists.
    pub fn stale_nominations(&mut self, only: Option<&str>) -> Vec<PodRef> {
        if !self.synced() {
            return Vec::new();
        }
        let s = &self.snapshot;
        let ids: Vec<PodId> = match only {
            Some(uid) => s.pod_by_uid(uid).into_iter().collect(),
            None => s.pods().map(|(id, _)| id).collect(),
        };
        let mut out = Vec::new();
        for id in ids {
            let Some(p) = s.pod(id) else { continue };
            let stale = s.pod_node(id).is_none()
                && p.nominated_node_name
                    .as_deref()
                    .is_some_and(|n| s.node_id(n).is_none());
            if stale && self.stale_reported.insert(p.uid.to_string()) {
                out.push(PodRef {
                    namespace: s.symbols().resolve(p.namespace).to_string(),
                    name: p.name.to_string(),
                    uid: p.uid.to_string(),
                });
            }
        }
        out
    }

    /// A pod was added or changed.
    pub(super) fn apply_pod(&mut self, p: &Pod, now: Duration) {
        let Some(uid) = p.metadata.uid.as_deref().filter(|u| !u.is_empty()) else {
            warn!(
                pod = key(&p.metadata),
                "skipping a pod without metadata.uid"
            );
            return;
        };
        let existing = self.snapshot.pod_by_uid(uid);
        let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
        if matches!(phase, Some("Succeeded" | "Failed")) {
            self.forget_uid(uid, now);
            return;
        }
        let fp = fingerprint(p);
        if existing.is_some() && self.fingerprints.get(uid) == Some(&fp) {
            return;
        }
        let spec = p.spec.as_ref();
        let node_name = spec
            .and_then(|s| s.node_name.as_deref())
            .filter(|n| !n.is_empty());
        if node_name.is_none() {
            let scheduler = spec
                .and_then(|s| s.scheduler_name.as_deref())
                .unwrap_or("default-scheduler");
            let ours = self.scheduler.profile_index(scheduler).is_some();
            if !ours || p.metadata.deletion_timestamp.is_some() {
                // Not ours to schedule, or being deleted (`skipPodSchedule`): a pending
                // copy is dropped; an assumed one waits for its deletion event.
                if let Some(id) = existing
                    && self.snapshot.pod_state(id) == Some(PodState::Pending)
                {
                    self.scheduler.delete_pod(&mut self.snapshot, id, now);
                    self.fingerprints.remove(uid);
                }
                return;
            }
        }
        let mut object = p.clone();
        if object.spec.as_ref().is_some_and(|s| s.priority.is_none()) {
            // A real API server resolved it at admission; resolve it the same way when
            // it did not (the fake, or a pod created before its class).
            let _ = topospread::admission::resolve_priority(
                &mut object,
                &self.snapshot.workloads().priority_classes,
            );
        }
        let options = self.snapshot.request_options();
        let mut pod = match convert::pod_with(&object, self.snapshot.symbols_mut(), options) {
            Ok(pod) => pod,
            Err(e) => {
                warn!(pod = key(&p.metadata), error = %e, "skipping a pod that does not convert");
                return;
            }
        };
        if self.preempting.contains(uid) {
            pod.terminating_by_preemption = true;
        }
        if pod.nominated_node_name.is_none() {
            self.stale_reported.remove(uid);
        }
        let result = match existing {
            Some(id) => match self.scheduler.update_pod(&mut self.snapshot, pod, now) {
                Ok(_) => Ok(()),
                Err(CacheError::PodNodeNotFound { node, .. }) => {
                    self.scheduler.delete_pod(&mut self.snapshot, id, now);
                    self.fingerprints.remove(uid);
                    self.park(node, uid, p);
                    return;
                }
                Err(e) => Err(e.to_string()),
            },
            None => match self.scheduler.add_pod(&mut self.snapshot, pod, now) {
                Ok(Ok(id)) => {
                    // New to the cache and bound: this replica did not place it (its own
                    // binds are assumed first).
                    if node_name.is_some() {
                        self.note_overcommit(id, p);
                    }
                    Ok(())
                }
                Ok(Err(e)) => Err(e.to_string()),
                Err(SnapshotError::UnknownNode { node, .. }) => {
                    self.park(node, uid, p);
                    return;
                }
                Err(e) => Err(e.to_string()),
            },
        };
        match result {
            Ok(()) => {
                self.fingerprints.insert(uid.to_string(), fp);
            }
            Err(e) => {
                // In the cache if it got that far; remember it so the same object is not
                // retried on every resync.
                if self.snapshot.pod_by_uid(uid).is_some() {
                    self.fingerprints.insert(uid.to_string(), fp);
                }
                warn!(pod = key(&p.metadata), error = %e, "pod event not applied");
            }
        }
    }

    /// Records and logs it when `id` (bound by someone else) left its node overcommitted.
    pub(super) fn note_overcommit(&mut self, id: PodId, p: &Pod) {
        let over = self.over_allocatable(id);
        if over.is_empty() {
            return;
        }
        let node = p
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        let pod = key(&p.metadata);
        warn!(
            node = %node,
            pod = %pod,
            over = %over.join("; "),
            "a pod bound by another scheduler left the node requesting more than its allocatable: two schedulers raced for the same room, and the kubelet will reject a pod"
        );
        self.overcommits.push(Overcommit { node, pod, over });
    }

    /// Keeps a bound pod until its node arrives.
    pub(super) fn park(&mut self, node: String, uid: &str, p: &Pod) {
        debug!(pod = key(&p.metadata), node, "pod waits for its node");
        self.unpark(uid);
        self.parked
            .entry(node)
            .or_default()
            .insert(uid.to_string(), p.clone());
    }

    /// Drops a parked pod, wherever it is parked.
    pub(super) fn unpark(&mut self, uid: &str) {
        self.parked.retain(|_, pods| {
            pods.remove(uid);
            !pods.is_empty()
        });
    }

    /// Removes a pod from the cache and the queue (and its nomination: a preemptor
    /// deleted while its victims go frees the room it was promised).
    pub(super) fn forget_uid(&mut self, uid: &str, now: Duration) {
        if let Some(id) = self.snapshot.pod_by_uid(uid) {
            if let Some(node) = self.scheduler.nominated_node(id) {
                debug!(
                    uid,
                    node = %self.snapshot.node(node).node.name,
                    "a nominated pod is gone; its nomination is dropped"
                );
            }
            self.scheduler.delete_pod(&mut self.snapshot, id, now);
        }
        self.fingerprints.remove(uid);
        self.preempting.remove(uid);
        self.stale_reported.remove(uid);
        self.unpark(uid);
    }

    pub(super) fn delete_pod(&mut self, p: &Pod, now: Duration) {
        if let Some(uid) = p.metadata.uid.as_deref() {
            self.forget_uid(uid, now);
        }
    }
}
