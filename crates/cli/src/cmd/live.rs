//! Reading a live cluster (crate `topospread-kubeclient`): the release it runs, and every
//! object the scheduler reads, listed page by page into the same objects the files give.

use anyhow::{Context, Result};
use kube::Client;
use std::time::Duration;
use topospread_k8s::load::Loaded;

use crate::cli::LiveArgs;
use topospread_jobs::Context as JobContext;

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
        let release = topospread_kubeclient::server_release(&client, &server).await?;
        topospread_kubeclient::choose_release(
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
async fn connect(args: &LiveArgs) -> Result<(Client, String), topospread_kubeclient::Error> {
    topospread_kubeclient::client(&topospread_kubeclient::ClientOptions {
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
/// and what admission reads for the pods the files add (LimitRanges, ResourceQuotas,
/// RuntimeClasses). A list of the kinds that only refine the answer that the server
/// refuses (403) or does not serve (404) is a note on stderr, and the run goes on.
pub(crate) fn list_cluster(args: &LiveArgs) -> Result<Vec<Loaded>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the client runtime")?;
    let (objects, notes) = runtime.block_on(async {
        let (client, server) = connect(args).await?;
        topospread_kubeclient::list_cluster(&client, &server).await
    })?;
    for n in notes {
        stderr!("note: {n}");
    }
    Ok(objects)
}
