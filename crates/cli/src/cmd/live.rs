//! Reading a live cluster: every object the scheduler reads, listed page by page through
//! the API server, into the same objects the files give.

use anyhow::{Context, Result, anyhow};
use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    LimitRange, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod,
    ReplicationController, Service,
};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use kube::Client;
use kube::api::{Api, ListParams};
use serde::de::DeserializeOwned;
use std::fmt::Debug;
use std::time::Duration;
use topospread_k8s::load::{Loaded, Object, Source};
use topospread_serve::Lean;

use crate::cli::LiveArgs;
use topospread_jobs::Context as JobContext;

/// Objects per list request, as kubectl's default chunk size.
const PAGE: u32 = 500;

/// The context a live command runs under: the cluster's release (its `/version`) with
/// the `--feature-gates` given, unless `--kubernetes-version` chose one. The choice is
/// noted on stderr; a release topospread does not model is refused unless
/// `--allow-unsupported-kubernetes-version`.
pub(crate) fn cluster_context(ctx: &JobContext, args: &LiveArgs) -> Result<JobContext> {
    if ctx.version_given() {
        return Ok(ctx.clone());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the client runtime")?;
    let choice = runtime.block_on(async {
        let (client, server) = connect(args).await?;
        let release = topospread_serve::server_release(&client, &server).await?;
        topospread_serve::choose_release(
            Some(release),
            None,
            args.allow_unsupported_kubernetes_version,
            &server,
        )
    })?;
    let gates = ctx.gates().for_release(choice.version)?;
    stderr!("note: {choice}");
    Ok(ctx.clone().with_gates(gates, false))
}

/// A client for the cluster `args` name, and its URL.
async fn connect(args: &LiveArgs) -> Result<(Client, String), topospread_serve::Error> {
    topospread_serve::client(&topospread_serve::ClientOptions {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
        connect_timeout: Some(Duration::from_secs(10)),
        read_timeout: Some(Duration::from_secs(60)),
        command: args.command,
        ..Default::default()
    })
    .await
}

/// Lists the cluster's nodes, pods (without Succeeded or Failed ones, as kube-scheduler's
/// informer), Services, ReplicaSets, StatefulSets, ReplicationControllers,
/// PodDisruptionBudgets, PriorityClasses and Namespaces; the storage objects the volume
/// plugins read (PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes);
/// and what admission reads for the pods the files add (LimitRanges, RuntimeClasses).
pub(crate) fn list_cluster(args: &LiveArgs) -> Result<Vec<Loaded>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the client runtime")?;
    runtime.block_on(list_all(args))
}

async fn list_all(args: &LiveArgs) -> Result<Vec<Loaded>> {
    let (client, server) = connect(args).await?;
    let mut out = Vec::new();
    let all = ListParams::default();
    let running = ListParams::default().fields("status.phase!=Succeeded,status.phase!=Failed");
    list::<Node>(&client, &server, &all, &mut out, Object::Node).await?;
    list::<Pod>(&client, &server, &running, &mut out, Object::Pod).await?;
    list::<Service>(&client, &server, &all, &mut out, Object::Service).await?;
    list::<ReplicaSet>(&client, &server, &all, &mut out, Object::ReplicaSet).await?;
    list::<StatefulSet>(&client, &server, &all, &mut out, Object::StatefulSet).await?;
    list::<ReplicationController>(
        &client,
        &server,
        &all,
        &mut out,
        Object::ReplicationController,
    )
    .await?;
    list::<PodDisruptionBudget>(
        &client,
        &server,
        &all,
        &mut out,
        Object::PodDisruptionBudget,
    )
    .await?;
    list::<PriorityClass>(&client, &server, &all, &mut out, Object::PriorityClass).await?;
    list::<Namespace>(&client, &server, &all, &mut out, Object::Namespace).await?;
    list::<PersistentVolumeClaim>(
        &client,
        &server,
        &all,
        &mut out,
        Object::PersistentVolumeClaim,
    )
    .await?;
    list::<PersistentVolume>(&client, &server, &all, &mut out, Object::PersistentVolume).await?;
    list::<StorageClass>(&client, &server, &all, &mut out, Object::StorageClass).await?;
    list::<CSINode>(&client, &server, &all, &mut out, Object::CsiNode).await?;
    list::<LimitRange>(&client, &server, &all, &mut out, Object::LimitRange).await?;
    list::<RuntimeClass>(&client, &server, &all, &mut out, Object::RuntimeClass).await?;
    Ok(out)
}

/// Lists every object of one kind across namespaces, following `continue` tokens.
async fn list<K>(
    client: &Client,
    server: &str,
    params: &ListParams,
    out: &mut Vec<Loaded>,
    wrap: fn(Box<K>) -> Object,
) -> Result<()>
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    // The items typed without their managedFields (see `Lean`).
    let api: Api<Lean<K>> = Api::all(client.clone());
    let kind = K::kind(&());
    let mut params = params.clone().limit(PAGE);
    let mut page = 0;
    loop {
        let list = api.list(&params).await.map_err(|e| {
            anyhow!(
                "cluster {server}: listing {kind}s: {}",
                topospread_serve::describe(&e)
            )
        })?;
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
