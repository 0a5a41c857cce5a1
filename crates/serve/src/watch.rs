//! Watchers: one kube-runtime `watcher` per watched kind, each sending its events to the
//! scheduling loop, which alone owns the cache, through one bounded channel: when the
//! loop falls behind (a big relist), the watchers wait instead of piling events up in
//! memory. Streams retry with kube-runtime's default backoff; a 410 or a dropped stream
//! becomes a relist (`Init` .. `InitDone`).

use std::fmt::Debug;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, ReplicationController, Service,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc::Sender;
use tokio::task::JoinHandle;
use tracing::warn;

use crate::cache::{Kind, Update};
use topospread_kubeclient::lean::{self, Lean};

/// Pods the scheduler cares about, as kube-scheduler's informer selects them: every pod
/// not finished; the loop splits assigned (counted on nodes) from unassigned (queued
/// when one of the profiles serves it).
pub const POD_FIELD_SELECTOR: &str = "status.phase!=Succeeded,status.phase!=Failed";

/// Watch events waiting for the loop, across every kind; past that, watchers wait.
pub(crate) const WATCH_BUFFER: usize = 1024;

/// Starts one watcher per kind; each ends when the loop's receiver is gone.
pub(crate) fn spawn_all(client: &kube::Client, tx: &Sender<Update>) -> Vec<JoinHandle<()>> {
    let pods = watcher::Config::default().fields(POD_FIELD_SELECTOR);
    vec![
        spawn::<Pod>(Api::all(client.clone()), pods, Kind::Pod, tx, Update::Pod),
        spawn::<Node>(
            Api::all(client.clone()),
            Default::default(),
            Kind::Node,
            tx,
            Update::Node,
        ),
        spawn::<Service>(
            Api::all(client.clone()),
            Default::default(),
            Kind::Service,
            tx,
            Update::Service,
        ),
        spawn::<ReplicationController>(
            Api::all(client.clone()),
            Default::default(),
            Kind::ReplicationController,
            tx,
            Update::ReplicationController,
        ),
        spawn::<ReplicaSet>(
            Api::all(client.clone()),
            Default::default(),
            Kind::ReplicaSet,
            tx,
            Update::ReplicaSet,
        ),
        spawn::<StatefulSet>(
            Api::all(client.clone()),
            Default::default(),
            Kind::StatefulSet,
            tx,
            Update::StatefulSet,
        ),
        spawn::<PodDisruptionBudget>(
            Api::all(client.clone()),
            Default::default(),
            Kind::PodDisruptionBudget,
            tx,
            Update::PodDisruptionBudget,
        ),
        spawn::<PriorityClass>(
            Api::all(client.clone()),
            Default::default(),
            Kind::PriorityClass,
            tx,
            Update::PriorityClass,
        ),
        spawn::<Namespace>(
            Api::all(client.clone()),
            Default::default(),
            Kind::Namespace,
            tx,
            Update::Namespace,
        ),
        // The storage objects the volume plugins read, as kube-scheduler's informers
        // (CSIDriver is not modelled: nothing here reads it).
        spawn::<PersistentVolumeClaim>(
            Api::all(client.clone()),
            Default::default(),
            Kind::PersistentVolumeClaim,
            tx,
            Update::PersistentVolumeClaim,
        ),
        spawn::<PersistentVolume>(
            Api::all(client.clone()),
            Default::default(),
            Kind::PersistentVolume,
            tx,
            Update::PersistentVolume,
        ),
        spawn::<StorageClass>(
            Api::all(client.clone()),
            Default::default(),
            Kind::StorageClass,
            tx,
            Update::StorageClass,
        ),
        spawn::<CSINode>(
            Api::all(client.clone()),
            Default::default(),
            Kind::CsiNode,
            tx,
            Update::CsiNode,
        ),
    ]
}

fn spawn<K>(
    api: Api<Lean<K>>,
    config: watcher::Config,
    kind: Kind,
    tx: &Sender<Update>,
    wrap: fn(Event<K>) -> Update,
) -> JoinHandle<()>
where
    K: kube::Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    K::DynamicType: Default,
{
    let tx = tx.clone();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(watcher::watcher(api, config).default_backoff());
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => {
                    if tx.send(wrap(lean::event(event))).await.is_err() {
                        return;
                    }
                }
                Err(e) => {
                    warn!(?kind, error = %crate::describe_watch(&e), "watch failed; retrying with backoff")
                }
            }
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::Duration;
    use topospread_fakeapi::FakeApi;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_watcher_waits_when_the_loop_falls_behind() {
        let fake = FakeApi::new();
        for i in 0..200 {
            fake.insert(serde_json::json!({"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": format!("n{i}")}}))
                .unwrap();
        }
        let client = kube::Client::new(fake.router(), "default");
        let (tx, mut rx) = tokio::sync::mpsc::channel(16);
        let task = spawn::<Node>(
            Api::all(client),
            Default::default(),
            Kind::Node,
            &tx,
            Update::Node,
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        // Full, and nothing more was taken from the stream meanwhile.
        assert_eq!(rx.len(), 16);
        let mut applied = 0;
        while applied < 200 {
            if let Update::Node(Event::InitApply(_)) = rx.recv().await.unwrap() {
                applied += 1;
            }
        }
        task.abort();
    }
}
