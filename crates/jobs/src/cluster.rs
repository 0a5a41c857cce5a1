//! What the jobs that read a cluster share in their requests: where its objects come
//! from ([`ClusterSource`]: `-f` files, a live cluster's objects) and what shapes the
//! scheduler's run over it ([`Cluster`]: the source, `--seed`, `--config`). The
//! Kubernetes release and its gates are the [`Context`]'s, common to every job.

use crate::config::{self, SchedulerSetup};
use crate::context::Context;
use crate::error::Result;
use crate::input::{self, Input, PodForm};
use std::path::PathBuf;
use topospread_k8s::load::Loaded;

/// Where a job's objects come from: a live cluster's objects, then manifest files on
/// top of them; neither: the Kubernetes docs' example.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ClusterSource {
    /// `-f`: files, folders, `-` for stdin (the docs' example when empty and no live
    /// cluster is given).
    pub files: Vec<PathBuf>,
    /// A live cluster's objects, listed by the caller, under the files.
    pub live: Option<Vec<Loaded>>,
    /// `-n`: the namespace of the files' namespaced objects that name none (one that
    /// names another is refused, as kubectl refuses it).
    pub namespace: Option<String>,
    /// `--provision-zone`: the zone Immediate claims' volumes are provisioned in (none:
    /// the provisioner's own choice).
    pub provision_zone: Option<String>,
}

impl ClusterSource {
    /// The objects in `files` (the docs' example when there are none).
    pub fn new(files: Vec<PathBuf>) -> Self {
        Self {
            files,
            live: None,
            namespace: None,
            provision_zone: None,
        }
    }

    /// Objects already read (a live cluster's, or a loaded session's), no files.
    pub fn objects(objects: Vec<Loaded>) -> Self {
        Self {
            files: Vec::new(),
            live: Some(objects),
            namespace: None,
            provision_zone: None,
        }
    }

    /// Reads the objects, generated names fixed by `seed`, pods kept in `form`.
    pub(crate) fn load(self, ctx: &Context, seed: u64, form: PodForm) -> Result<Input> {
        let ns = self.namespace.as_deref();
        let mut input = input::load(ctx, &self.files, self.live, seed, form, ns)?;
        input.provision_zone = self.provision_zone;
        Ok(input)
    }

    /// [`ClusterSource::load`], then the API server's admission
    /// ([`input::load_admitted`]).
    pub(crate) fn load_admitted(self, ctx: &Context, seed: u64, form: PodForm) -> Result<Input> {
        let ns = self.namespace.as_deref();
        let mut input = input::load_admitted(ctx, &self.files, self.live, seed, form, ns)?;
        input.provision_zone = self.provision_zone;
        Ok(input)
    }
}

impl From<Vec<PathBuf>> for ClusterSource {
    fn from(files: Vec<PathBuf>) -> Self {
        Self::new(files)
    }
}

/// The cluster a job runs the scheduler over: its objects, the seed that fixes
/// generated names and tie-breaking, and the KubeSchedulerConfiguration.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Cluster {
    /// Where the objects come from.
    pub source: ClusterSource,
    /// `--seed`: fixes generated pod names and tie-breaking between equally scored
    /// nodes.
    pub seed: u64,
    /// `--config`: a KubeSchedulerConfiguration file (default: one among the files,
    /// else the default profile).
    pub config: Option<PathBuf>,
}

impl Cluster {
    /// The objects of `source`, seed 0, the default configuration.
    pub fn new(source: impl Into<ClusterSource>) -> Self {
        Self {
            source: source.into(),
            ..Self::default()
        }
    }

    /// With this seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// With this KubeSchedulerConfiguration file.
    pub fn with_config(mut self, config: impl Into<PathBuf>) -> Self {
        self.config = Some(config.into());
        self
    }

    /// The objects read and admitted (pods kept in `form`) and the scheduler's setup
    /// from `--config` or a configuration among the files.
    pub(crate) fn load(self, ctx: &Context, form: PodForm) -> Result<(Input, SchedulerSetup)> {
        let input = self.source.load_admitted(ctx, self.seed, form)?;
        let setup = config::load(ctx, self.config.as_deref(), &input)?;
        Ok((input, setup))
    }
}

impl From<ClusterSource> for Cluster {
    fn from(source: ClusterSource) -> Self {
        Self::new(source)
    }
}

impl From<Vec<PathBuf>> for Cluster {
    fn from(files: Vec<PathBuf>) -> Self {
        Self::new(files)
    }
}

#[cfg(test)]
mod tests {
    use super::{Cluster, ClusterSource};
    use crate::Context;
    use crate::explain::{ExplainRequest, explain};
    use crate::rebalance::{RebalanceRequest, ScaleDownRequest, rebalance, scale_down};
    use crate::show::{ShowRequest, show};
    use crate::simulate::{SimulateRequest, simulate};
    use crate::validate::{ValidateRequest, validate};

    /// One `Cluster` carries the seed to every job: the pod `simulate` names under a seed
    /// is the pod `explain` finds under that seed, and another seed names other pods.
    #[test]
    fn the_seed_reaches_simulate_and_explain_alike() {
        let ctx = Context::new();
        let cluster = Cluster::default().with_seed(7);
        let run = simulate(&ctx, SimulateRequest::new(cluster.clone()), &mut ()).unwrap();
        let first = &run.report.pods[0];
        let pod = format!("{}/{}", first.namespace, first.pod);
        let found = explain(&ctx, ExplainRequest::new(cluster, pod.clone())).unwrap();
        assert!(found.scheduled());
        let other = explain(&ctx, ExplainRequest::new(Cluster::default(), pod.clone()));
        let err = other.expect_err("seed 0 names the replicas otherwise");
        assert!(err.to_string().contains("not found"), "{pod}: {err}");
    }

    /// The configuration file of one `Cluster` is read by every job that schedules:
    /// one that cannot be read is each job's error, naming it.
    #[test]
    fn the_config_reaches_every_scheduling_job() {
        let ctx = Context::new();
        let missing = "/nonexistent/kube-scheduler-config.yaml";
        let cluster = Cluster::default().with_config(missing);
        let errors = [
            simulate(&ctx, SimulateRequest::new(cluster.clone()), &mut ()).err(),
            explain(
                &ctx,
                ExplainRequest::new(cluster.clone(), "deployment/mypod"),
            )
            .err(),
            rebalance(&ctx, RebalanceRequest::new(cluster.clone())).err(),
            scale_down(&ctx, ScaleDownRequest::new(cluster, "deployment/mypod=3")).err(),
        ];
        for e in errors {
            let e = e.expect("the configuration cannot be read");
            assert!(e.to_string().contains(missing), "{e}");
        }
    }

    /// Objects already read (a live cluster's) are the whole cluster when no file is
    /// given: the docs' example is not added under them.
    #[test]
    fn objects_without_files_replace_the_docs_example() {
        let ctx = Context::new();
        let docs = show(&ctx, ShowRequest::new(ClusterSource::default())).unwrap();
        let nodes = docs.snapshot.nodes().len();
        assert_eq!(nodes, 4, "the docs' example");
        let none = validate(
            &ctx,
            ValidateRequest::new(ClusterSource::objects(Vec::new())),
        );
        assert_eq!(none.unwrap().summary.objects, 0);
        let empty = show(&ctx, ShowRequest::new(ClusterSource::objects(Vec::new()))).unwrap();
        assert!(empty.snapshot.nodes().is_empty());
    }
}
