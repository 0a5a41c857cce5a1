//! One module per subcommand: each parses its flags into a job's request (crate
//! `topospread-jobs`), calls it and renders what it returns.

pub(crate) mod bench;
pub(crate) mod bench_guard;
pub(crate) mod bench_load;
pub(crate) mod capacity;
#[cfg(feature = "daemon")]
pub(crate) mod daemon;
pub(crate) mod explain;
pub(crate) mod guard;
#[cfg(feature = "cluster")]
pub(crate) mod live;
#[cfg(not(feature = "cluster"))]
#[path = "offline.rs"]
pub(crate) mod live;
#[cfg(feature = "daemon")]
pub(crate) mod logs;
pub(crate) mod rebalance;
#[cfg(feature = "daemon")]
pub(crate) mod serve;
#[cfg(not(feature = "daemon"))]
#[path = "offline_serve.rs"]
pub(crate) mod serve;
pub(crate) mod show;
pub(crate) mod simulate;
pub(crate) mod term;
pub(crate) mod test;
pub(crate) mod ui;
pub(crate) mod validate;
pub(crate) mod whatif;

use crate::cli::{ClusterArgs, LiveArgs, SourceArgs};
use topospread_jobs::{Cluster, ClusterSource};
use topospread_k8s::load::Loaded;

impl SourceArgs {
    /// The job's objects: the files, and the live cluster's when one is asked for.
    pub(crate) fn source(&self) -> anyhow::Result<ClusterSource> {
        let mut source = ClusterSource::new(self.files.clone());
        source.live = self.live.objects()?;
        Ok(source)
    }
}

impl ClusterArgs {
    /// The job's cluster: its objects, `--seed` and `--config`.
    pub(crate) fn cluster(&self) -> anyhow::Result<Cluster> {
        let mut cluster = Cluster::new(self.source.source()?).with_seed(self.seed);
        cluster.config.clone_from(&self.config);
        cluster
            .source
            .provision_zone
            .clone_from(&self.provision_zone);
        Ok(cluster)
    }
}

impl crate::cli::NamespaceArgs {
    /// `cluster` with `-n` applied to its files.
    pub(crate) fn apply(&self, mut cluster: Cluster) -> Cluster {
        cluster.source.namespace.clone_from(&self.namespace);
        cluster
    }
}

impl LiveArgs {
    /// Whether a live cluster was asked for.
    pub(crate) fn wanted(&self) -> bool {
        self.live || self.kubeconfig.is_some() || self.context.is_some()
    }

    /// The live cluster's objects when one is asked for (in a build without the `live`
    /// feature, the refusal that says how to get one).
    pub(crate) fn objects(&self) -> anyhow::Result<Option<Vec<Loaded>>> {
        if self.wanted() {
            live::list_cluster(self).map(Some)
        } else {
            Ok(None)
        }
    }
}
