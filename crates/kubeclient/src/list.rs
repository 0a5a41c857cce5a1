//! Every object the scheduler reads, listed page by page through the API server into the
//! same objects the files give ([`list_cluster`]).

use crate::error::{Error, Result, describe};
use crate::lean::Lean;
use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    LimitRange, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod,
    ReplicationController, ResourceQuota, Service,
};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use kube::Client;
use kube::api::{Api, ListParams};
use serde::de::DeserializeOwned;
use std::fmt::Debug;
use topospread_k8s::load::{Loaded, Object, Source};

/// Objects per list request, as kubectl's default chunk size.
pub const PAGE: u32 = 500;

/// The listing under way: the objects so far and the notes on what could not be read.
struct Listing<'a> {
    client: &'a Client,
    server: &'a str,
    out: Vec<Loaded>,
    notes: Vec<String>,
}

impl Listing<'_> {
    /// A kind the answer needs: any failure ends the read.
    async fn required<K>(&mut self, params: &ListParams, wrap: fn(Box<K>) -> Object) -> Result<()>
    where
        K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
    {
        let kind = K::kind(&());
        let server = self.server;
        list(self.client, server, params, &mut self.out, wrap)
            .await
            .map_err(|e| Error::List {
                server: server.to_string(),
                kinds: kinds(&kind),
                message: describe(&e),
            })
    }

    /// A kind that only refines the answer: refused (403) or not served (404), it is a
    /// note naming the kind, the permission and `without` (what is then not modelled);
    /// any other failure ends the read.
    async fn optional<K>(&mut self, wrap: fn(Box<K>) -> Object, without: &str) -> Result<()>
    where
        K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
    {
        let before = self.out.len();
        let params = ListParams::default();
        let Err(e) = list(self.client, self.server, &params, &mut self.out, wrap).await else {
            return Ok(());
        };
        let why = match &e {
            kube::Error::Api(s) if s.code == 403 => "forbidden",
            kube::Error::Api(s) if s.code == 404 => "not served by this API server",
            _ => {
                return Err(Error::List {
                    server: self.server.to_string(),
                    kinds: kinds(&K::kind(&())),
                    message: describe(&e),
                });
            }
        };
        // A list refused past its first page leaves no half of a kind behind.
        self.out.truncate(before);
        let group = K::group(&());
        let resource = if group.is_empty() {
            K::plural(&()).into_owned()
        } else {
            format!("{}.{group}", K::plural(&()))
        };
        self.notes.push(format!(
            "cluster {}: {} not read (`list {resource}` {why}): {without}",
            self.server,
            kinds(&K::kind(&()))
        ));
        Ok(())
    }
}

/// Lists the cluster's nodes, pods (without Succeeded or Failed ones, as kube-scheduler's
/// informer), Services, ReplicaSets, StatefulSets, ReplicationControllers,
/// PodDisruptionBudgets, PriorityClasses and Namespaces; the storage objects the volume
/// plugins read (PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes);
/// and what admission reads for the pods the files add (LimitRanges, ResourceQuotas,
/// RuntimeClasses), as the loader's objects (`server` names the cluster in their
/// sources and in errors). A list of the kinds that only refine the answer that the
/// server refuses (403) or does not serve (404) is a note in the second vector, and the
/// read goes on.
pub async fn list_cluster(client: &Client, server: &str) -> Result<(Vec<Loaded>, Vec<String>)> {
    let mut l = Listing {
        client,
        server,
        out: Vec::new(),
        notes: Vec::new(),
    };
    let all = ListParams::default();
    let running = ListParams::default().fields("status.phase!=Succeeded,status.phase!=Failed");
    l.required::<Node>(&all, Object::Node).await?;
    l.required::<Pod>(&running, Object::Pod).await?;
    l.required::<Service>(&all, Object::Service).await?;
    l.required::<ReplicaSet>(&all, Object::ReplicaSet).await?;
    l.required::<StatefulSet>(&all, Object::StatefulSet).await?;
    l.required::<ReplicationController>(&all, Object::ReplicationController)
        .await?;
    l.required::<PodDisruptionBudget>(&all, Object::PodDisruptionBudget)
        .await?;
    l.optional::<PriorityClass>(
        Object::PriorityClass,
        "the files' pods' priorityClassName cannot be resolved (admission refuses a pod naming one), and preemption reads only the priorities the cluster's pods carry",
    )
    .await?;
    l.required::<Namespace>(&all, Object::Namespace).await?;
    let volumes = "pods with PersistentVolumeClaims are judged without the volume objects (the volume plugins find the claims missing), and CSI attach limits are not counted";
    l.optional::<PersistentVolumeClaim>(Object::PersistentVolumeClaim, volumes)
        .await?;
    l.optional::<PersistentVolume>(Object::PersistentVolume, volumes)
        .await?;
    l.optional::<StorageClass>(Object::StorageClass, volumes)
        .await?;
    l.optional::<CSINode>(Object::CsiNode, volumes).await?;
    l.optional::<LimitRange>(
        Object::LimitRange,
        "the files' pods get no LimitRange defaults or limits",
    )
    .await?;
    l.optional::<RuntimeClass>(
        Object::RuntimeClass,
        "the files' pods get no RuntimeClass overhead or node selector (a pod naming one is refused)",
    )
    .await?;
    l.optional::<ResourceQuota>(
        Object::ResourceQuota,
        "the files' pods are not checked against ResourceQuotas",
    )
    .await?;
    Ok((l.out, l.notes))
}

/// A kind's plural as prose names it: `LimitRanges`, `PriorityClasses`.
fn kinds(kind: &str) -> String {
    if kind.ends_with('s') {
        format!("{kind}es")
    } else {
        format!("{kind}s")
    }
}

/// Lists every object of one kind across namespaces, following `continue` tokens.
async fn list<K>(
    client: &Client,
    server: &str,
    params: &ListParams,
    out: &mut Vec<Loaded>,
    wrap: fn(Box<K>) -> Object,
) -> Result<(), kube::Error>
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    // The items typed without their managedFields (see `Lean`).
    let api: Api<Lean<K>> = Api::all(client.clone());
    let kind = K::kind(&());
    let mut params = params.clone().limit(PAGE);
    let mut page = 0;
    loop {
        let list = api.list(&params).await?;
        let next = list.metadata.continue_.clone().filter(|c| !c.is_empty());
        for (i, Lean(item)) in list.items.into_iter().enumerate() {
            let mut object = wrap(Box::new(item));
            object.drop_unread();
            out.push(Loaded {
                source: Source {
                    file: format!("cluster {server} ({kind} list)"),
                    document: page + 1,
                    item: Some(i),
                },
                object,
            });
        }
        match next {
            Some(token) => {
                params = params.continue_token(&token);
                page += 1;
            }
            None => return Ok(()),
        }
    }
}
