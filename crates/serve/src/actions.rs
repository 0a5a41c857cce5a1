//! What the scheduler writes to the API server: bindings (`pods/binding`), the
//! `PodScheduled` condition and `nominatedNodeName` (`pods/status`), preemption's
//! `DisruptionTarget` condition and victim deletions, and events (`events.k8s.io`).

use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::runtime::events::{Event, EventType, Recorder};
use serde_json::json;
use tracing::{debug, warn};

/// A pod as the writers name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodRef {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
}

impl PodRef {
    fn object_reference(&self) -> ObjectReference {
        ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            namespace: Some(self.namespace.clone()),
            name: Some(self.name.clone()),
            uid: Some(self.uid.clone()),
            ..ObjectReference::default()
        }
    }
}

impl std::fmt::Display for PodRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// How a bind request ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindOutcome {
    /// Bound.
    Bound,
    /// The pod is gone or already on a node (404, 409 "already assigned"): dropped
    /// without a retry; its watch event tells the cache where it is.
    Gone(String),
    /// Anything else (5xx, a transient conflict, a timeout): retried after backoff.
    Failed(String),
    /// Not attempted: this replica no longer holds the lease.
    NotLeader,
}

/// Classifies a bind error as kube-scheduler's binder and its callers do.
pub fn classify_bind_error(e: &kube::Error) -> BindOutcome {
    match e {
        kube::Error::Api(s) if s.code == 404 => BindOutcome::Gone(s.message.clone()),
        kube::Error::Api(s) if s.code == 409 && s.message.contains("already assigned") => {
            BindOutcome::Gone(s.message.clone())
        }
        e => BindOutcome::Failed(crate::describe(e)),
    }
}

/// Event recorders, each with its own series cache. kube-runtime's `Recorder` scans its
/// whole cache on every publish, so one recorder costs O(events) per event; a pod's
/// events always go through the same shard (by UID), so its repeated events still
/// become one series.
const RECORDER_SHARDS: usize = 64;

/// The API writers, cloneable into tasks.
#[derive(Clone)]
pub(crate) struct Writer {
    client: kube::Client,
    recorders: std::sync::Arc<[Recorder]>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

impl Writer {
    /// Writers over `client`, recording events through `events` as `reporter`
    /// (controller `topospread`, instance the replica's identity).
    pub(crate) fn new(client: kube::Client, events: kube::Client, instance: String) -> Self {
        let reporter = kube::runtime::events::Reporter {
            controller: crate::REPORTING_CONTROLLER.into(),
            instance: Some(instance),
        };
        Self {
            recorders: (0..RECORDER_SHARDS)
                .map(|_| Recorder::new(events.clone(), reporter.clone()))
                .collect(),
            client,
        }
    }

    fn pods(&self, namespace: &str) -> Api<Pod> {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// `POST pods/binding` with the pod's UID, as kube-scheduler's DefaultBinder does.
    pub(crate) async fn bind(&self, pod: &PodRef, node: &str) -> BindOutcome {
        let binding = json!({
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        });
        match self
            .pods(&pod.namespace)
            .create_subresource::<_, serde_json::Value>(
                "binding",
                &pod.name,
                &PostParams::default(),
                &binding,
            )
            .await
        {
            Ok(_) => BindOutcome::Bound,
            Err(e) => classify_bind_error(&e),
        }
    }

    /// Sets `PodScheduled=False` (reason `Unschedulable`, the fit error as message) and,
    /// when preemption nominated a node, `status.nominatedNodeName`, in one strategic
    /// merge patch of `pods/status` (upstream's `updatePod`).
    pub(crate) async fn mark_unschedulable(
        &self,
        pod: &PodRef,
        message: &str,
        nominated: Option<&str>,
    ) {
        let now = k8s_openapi::jiff::Timestamp::now().to_string();
        let mut status = json!({
            "conditions": [{
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
                "lastProbeTime": null,
                "lastTransitionTime": now,
            }],
        });
        if let Some(node) = nominated {
            status["nominatedNodeName"] = json!(node);
        }
        let patch = json!({"metadata": {"uid": pod.uid}, "status": status});
        if let Err(e) = self
            .pods(&pod.namespace)
            .patch_status(&pod.name, &PatchParams::default(), &Patch::Strategic(patch))
            .await
        {
            debug!(pod = %pod, error = %crate::describe(&e), "updating the PodScheduled condition failed");
        }
    }

    /// Clears a pod's `status.nominatedNodeName` (upstream's `clearNominatedNodeName`):
    /// its node's room went to a higher-priority preemptor, or the node is gone.
    pub(crate) async fn clear_nomination(&self, pod: &PodRef) {
        let patch = json!({"metadata": {"uid": pod.uid}, "status": {"nominatedNodeName": null}});
        if let Err(e) = self
            .pods(&pod.namespace)
            .patch_status(&pod.name, &PatchParams::default(), &Patch::Strategic(patch))
            .await
        {
            debug!(pod = %pod, error = %crate::describe(&e), "clearing nominatedNodeName failed");
        }
    }

    /// Evicts a preemption victim as upstream's `PreemptPod` does: adds the
    /// `DisruptionTarget` condition (reason `PreemptionByScheduler`), then deletes the
    /// pod (with its UID as precondition, so a same-named successor is never hit), then
    /// records `Preempted` on the victim, related to the preemptor. Whether the victim
    /// is gone (deleted now, or already).
    pub(crate) async fn preempt(
        &self,
        victim: &PodRef,
        scheduler_name: &str,
        preemptor: &PodRef,
        node: &str,
    ) -> bool {
        let now = k8s_openapi::jiff::Timestamp::now().to_string();
        let patch = json!({"metadata": {"uid": victim.uid}, "status": {"conditions": [{
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": format!("{scheduler_name}: preempting to accommodate a higher priority pod"),
            "lastTransitionTime": now,
        }]}});
        let api = self.pods(&victim.namespace);
        if let Err(e) = api
            .patch_status(
                &victim.name,
                &PatchParams::default(),
                &Patch::Strategic(patch),
            )
            .await
        {
            if matches!(&e, kube::Error::Api(s) if s.code == 404) {
                debug!(victim = %victim, "the victim is already deleted");
                return true;
            }
            warn!(victim = %victim, error = %crate::describe(&e), "adding the DisruptionTarget condition failed");
            return false;
        }
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(victim.uid.clone()),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match api.delete(&victim.name, &params).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {
                debug!(victim = %victim, "the victim is already deleted");
                return true;
            }
            Err(e) => {
                warn!(victim = %victim, error = %crate::describe(&e), "deleting a preemption victim failed");
                return false;
            }
        }
        self.event_related(
            victim,
            Some(preemptor),
            EventType::Normal,
            "Preempted",
            "Preempting",
            format!("Preempted by pod {} on node {node}", preemptor.uid),
        )
        .await;
        true
    }

    /// Records an event about `pod` through kube-runtime's recorder.
    pub(crate) async fn event(
        &self,
        pod: &PodRef,
        type_: EventType,
        reason: &str,
        action: &str,
        note: String,
    ) {
        self.event_related(pod, None, type_, reason, action, note)
            .await;
    }

    /// Records an event about `pod`, with `related` as the event's related object.
    pub(crate) async fn event_related(
        &self,
        pod: &PodRef,
        related: Option<&PodRef>,
        type_: EventType,
        reason: &str,
        action: &str,
        note: String,
    ) {
        let ev = Event {
            type_,
            reason: reason.into(),
            note: Some(note),
            action: action.into(),
            secondary: related.map(PodRef::object_reference),
        };
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(&pod.uid, &mut h);
        let shard = usize::try_from(std::hash::Hasher::finish(&h) % RECORDER_SHARDS as u64)
            .unwrap_or_default();
        let recorder = &self.recorders[shard];
        if let Err(e) = recorder.publish(&ev, &pod.object_reference()).await {
            debug!(pod = %pod, reason, error = %crate::describe(&e), "recording an event failed");
        }
    }
}
