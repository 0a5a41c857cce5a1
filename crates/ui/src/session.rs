//! The cluster loaded once, and each view computed over it.

use crate::views::{
    CapacityFigureView, CapacityView, ClusterView, DomainGroup, DomainMove, MovesView, NodeCell,
    SpreadView, WhatIfRequest, WhatIfView,
};
use crate::{Error, edit};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use topospread_jobs::capacity::{CapacityRequest, capacity};
use topospread_jobs::explain::{ExplainRequest, Explainer};
use topospread_jobs::input::{self, PodForm};
use topospread_jobs::rebalance::{RebalanceRequest, rebalance};
use topospread_jobs::show::{ShowRequest, show};
use topospread_jobs::simulate::{SimulateRequest, SimulationReport, simulate};
use topospread_jobs::{Cluster, ClusterSource, Context};
use topospread_k8s::load::{Loaded, Object};
use topospread_k8s::notes::summarize;
use topospread_k8s::workloads::Scale;
use topospread_planning::rebalance::Strategy;

/// Explain reports kept, by pod: picking a pod again answers at once.
const EXPLAINED_KEPT: usize = 64;

/// The inputs, as `simulate` takes them.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Options {
    /// The cluster, seed and configuration.
    pub cluster: Cluster,
    /// `--scale`: replica counts replacing the manifests'.
    pub scale: Vec<Scale>,
    /// `--node-template`: the files the Capacity view plans with (none: the view says
    /// so).
    pub templates: Vec<PathBuf>,
    /// `--instance-type`: the shapes of the NodePools' instance types.
    pub instance_types: Vec<String>,
}

impl Options {
    /// Options for `cluster`, the rest as the CLI's defaults.
    pub fn new(cluster: impl Into<Cluster>) -> Self {
        Self {
            cluster: cluster.into(),
            ..Self::default()
        }
    }
}

/// A cluster loaded once, with the views that do not change cached.
pub struct Session {
    ctx: Context,
    objects: Vec<Loaded>,
    /// The seed and configuration every job runs with; its source is left empty (the
    /// objects are read once, above).
    settings: Cluster,
    scale: Vec<Scale>,
    baseline: SimulationReport,
    cluster: ClusterView,
    /// The cluster admitted and built once: a pod's first explain schedules a copy of
    /// it instead of reading and admitting every object again.
    explainer: Explainer,
    explained: Mutex<HashMap<String, Arc<String>>>,
    /// Rebalancing plans made, by strategy; the lock is held while one is made, so a
    /// second request for it waits and takes the kept plan.
    planned: Mutex<HashMap<&'static str, Arc<Planned>>>,
    /// `--node-template` and `--instance-type`.
    templates: Vec<PathBuf>,
    instance_types: Vec<String>,
    /// The capacity plan's JSON, made on first use (the lock held meanwhile).
    capacity: Mutex<Option<Arc<String>>>,
}

/// A rebalancing plan as the app serves it: the jobs crate's report and its moves
/// between domains, each as JSON.
struct Planned {
    report: Arc<String>,
    moves: Arc<String>,
}

/// The `--strategy` of `rebalance`, by its CLI name (`topospread` when empty).
fn strategy(name: &str) -> Result<(&'static str, Strategy), Error> {
    match name {
        "" | "topospread" => Ok(("topospread", Strategy::Topospread)),
        "descheduler" => Ok(("descheduler", Strategy::Descheduler)),
        other => Err(Error::Request(format!(
            "rebalance: strategy {other:?}: want topospread or descheduler"
        ))),
    }
}

/// `value` as JSON, a serialization failure as the job's render error.
fn to_json<T: serde::Serialize>(value: &T) -> Result<Arc<String>, Error> {
    serde_json::to_string(value)
        .map(Arc::new)
        .map_err(|e| Error::Job(topospread_jobs::Error::Render(e.to_string())))
}

/// A cache's map; a poisoned lock (a panicking request) only lost a cache entry.
fn unpoisoned<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What every job run over the loaded objects shares.
struct Jobs<'a> {
    ctx: &'a Context,
    settings: &'a Cluster,
    scale: &'a [Scale],
}

impl Jobs<'_> {
    /// The cluster of `objects`, with the session's seed and configuration.
    fn over(&self, objects: Vec<Loaded>) -> Cluster {
        let mut cluster = self.settings.clone();
        cluster.source = ClusterSource::objects(objects);
        cluster
    }

    /// `simulate` over `objects`, with the session's `--scale` and then `scale`.
    fn simulate(
        &self,
        objects: Vec<Loaded>,
        scale: Vec<Scale>,
        drain: Vec<String>,
        lose: Vec<String>,
    ) -> Result<SimulationReport, Error> {
        let mut request = SimulateRequest::new(self.over(objects));
        request.scale = merge_scale(self.scale, scale);
        request.drain = drain;
        request.lose = lose;
        Ok(simulate(self.ctx, request, &mut ())?.report)
    }

    /// `show` over `objects`, marking `selector` (default: the first constraint's),
    /// with the nodes grouped by the outermost key.
    fn cluster(&self, objects: &[Loaded], selector: Option<&str>) -> Result<ClusterView, Error> {
        let mut request = ShowRequest::new(ClusterSource::objects(objects.to_vec()));
        request.selector = selector.map(str::to_string);
        let shown = show(self.ctx, request)?;
        let keys = shown.topology_keys;
        let group_key = keys.first().cloned();
        let node_key = keys.last().cloned();
        let counts = |key: &Option<String>, value: &str| {
            let key = key.as_deref()?;
            shown
                .report
                .domains
                .iter()
                .find(|d| d.topology_key == key)?
                .counts
                .get(value)
                .copied()
        };
        let mut groups: BTreeMap<Option<String>, Vec<NodeCell>> = BTreeMap::new();
        for l in objects {
            let Object::Node(n) = &l.object else {
                continue;
            };
            let labels = n.metadata.labels.as_ref();
            let label = |key: &Option<String>| {
                key.as_deref()
                    .and_then(|k| labels.and_then(|l| l.get(k)))
                    .cloned()
            };
            let name = n.metadata.name.clone().unwrap_or_default();
            let count = label(&node_key).and_then(|v| counts(&node_key, &v));
            groups
                .entry(label(&group_key))
                .or_default()
                .push(NodeCell { name, count });
        }
        // `None` sorts first in a BTreeMap; nodes lacking the key go last.
        let mut groups: Vec<DomainGroup> = groups
            .into_iter()
            .map(|(domain, mut nodes)| {
                nodes.sort_by(|a, b| a.name.cmp(&b.name));
                let count = domain.as_deref().and_then(|d| counts(&group_key, d));
                DomainGroup {
                    domain: domain.unwrap_or_else(|| match &group_key {
                        Some(k) => format!("(no {k})"),
                        None => "(all nodes)".to_string(),
                    }),
                    count,
                    nodes,
                }
            })
            .collect();
        if groups.first().is_some_and(|g| g.domain.starts_with('(')) && groups.len() > 1 {
            groups.rotate_left(1);
        }
        Ok(ClusterView {
            show: shown.report,
            group_key,
            node_key,
            groups,
        })
    }
}

/// The session's `--scale` with the what-if's on top: a workload named by both takes
/// the what-if's count.
fn merge_scale(base: &[Scale], extra: Vec<Scale>) -> Vec<Scale> {
    let mut out: Vec<Scale> = base
        .iter()
        .filter(|b| {
            !extra
                .iter()
                .any(|e| e.kind == b.kind && e.namespace == b.namespace && e.name == b.name)
        })
        .cloned()
        .collect();
    out.extend(extra);
    out
}

impl Session {
    /// Reads the inputs once, simulates them and counts the domains; bad input is the
    /// job's error, as `simulate` reports it.
    pub fn load(ctx: &Context, options: Options) -> Result<Self, Error> {
        let Options {
            cluster: mut settings,
            scale,
            templates,
            instance_types,
        } = options;
        let source = std::mem::take(&mut settings.source);
        let input = input::load(
            ctx,
            &source.files,
            source.live,
            settings.seed,
            PodForm::Whole,
            source.namespace.as_deref(),
        )?;
        let notes = summarize(&input.notes);
        let objects = input.objects;
        let jobs = Jobs {
            ctx,
            settings: &settings,
            scale: &scale,
        };
        let mut request = ExplainRequest::new(jobs.over(objects.clone()), "");
        request.scale.clone_from(&scale);
        // The explain cluster is admitted and built on a second thread while the
        // baseline is simulated: the two jobs share nothing but the objects' copy.
        let (explainer, loaded) = std::thread::scope(|s| {
            let explainer = s.spawn(|| Explainer::prepare(ctx, request));
            let loaded = jobs
                .simulate(objects.clone(), Vec::new(), Vec::new(), Vec::new())
                .and_then(|baseline| Ok((baseline, jobs.cluster(&objects, None)?)));
            let explainer = explainer
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (explainer, loaded)
        });
        let (mut baseline, cluster) = loaded?;
        let explainer = explainer?;
        baseline.notes.splice(0..0, notes);
        Ok(Self {
            ctx: ctx.clone(),
            objects,
            settings,
            scale,
            baseline,
            cluster,
            explainer,
            explained: Mutex::new(HashMap::new()),
            planned: Mutex::new(HashMap::new()),
            templates,
            instance_types,
            capacity: Mutex::new(None),
        })
    }

    fn jobs(&self) -> Jobs<'_> {
        Jobs {
            ctx: &self.ctx,
            settings: &self.settings,
            scale: &self.scale,
        }
    }

    /// The simulation of the cluster as loaded (every pending pod, where it went or
    /// why it stays Pending).
    pub fn simulation(&self) -> &SimulationReport {
        &self.baseline
    }

    /// The cluster as domains, marking `selector` (`app=web`); `None`: the first
    /// constraint's selector (computed at load).
    pub fn cluster(&self, selector: Option<&str>) -> Result<ClusterView, Error> {
        match selector {
            None => Ok(self.cluster.clone()),
            Some(s) => self.jobs().cluster(&self.objects, Some(s)),
        }
    }

    /// `explain POD` (or `KIND/NAME`: its next pending pod) as the ExplainReport's JSON:
    /// the prepared cluster scheduled again up to the pod's last cycle, the same report
    /// `topospread explain` prints.
    pub fn explain(&self, pod: &str) -> Result<Arc<String>, Error> {
        if let Some(done) = unpoisoned(&self.explained).get(pod) {
            return Ok(Arc::clone(done));
        }
        let json = to_json(&self.explainer.explain(pod)?)?;
        let mut kept = unpoisoned(&self.explained);
        if kept.len() >= EXPLAINED_KEPT {
            kept.clear();
        }
        kept.insert(pod.to_string(), Arc::clone(&json));
        Ok(json)
    }

    /// `rebalance --strategy STRATEGY` (`topospread` when empty, or `descheduler`) over
    /// the cluster as loaded: the RebalanceReport's JSON, planned once per strategy.
    pub fn rebalance(&self, strategy: &str) -> Result<Arc<String>, Error> {
        Ok(Arc::clone(&self.planned(strategy)?.report))
    }

    /// The same plan's moves between domains, one [`MovesView`] per topology key, as
    /// JSON.
    pub fn rebalance_moves(&self, strategy: &str) -> Result<Arc<String>, Error> {
        Ok(Arc::clone(&self.planned(strategy)?.moves))
    }

    /// The plan for `strategy`, made on first use. The session's `--scale` is not
    /// applied: a plan moves the pods the cluster has.
    fn planned(&self, name: &str) -> Result<Arc<Planned>, Error> {
        let (name, strategy) = strategy(name)?;
        let mut planned = unpoisoned(&self.planned);
        if let Some(p) = planned.get(name) {
            return Ok(Arc::clone(p));
        }
        let mut request = RebalanceRequest::new(self.jobs().over(self.objects.clone()));
        request.strategy = strategy;
        let plan = rebalance(&self.ctx, request)?;
        let moves: Vec<MovesView> = topospread_html::moves_charts(&plan)
            .into_iter()
            .map(|c| MovesView {
                moves: c
                    .moves
                    .into_iter()
                    .zip(&plan.report.plan.moves)
                    .map(|((from, to), m)| DomainMove {
                        pod: format!("{}/{}", m.namespace, m.pod),
                        from,
                        to,
                    })
                    .collect(),
                topology_key: c.topology_key,
                svg: c.svg,
            })
            .collect();
        let p = Arc::new(Planned {
            report: to_json(&plan.report)?,
            moves: to_json(&moves)?,
        });
        planned.insert(name, Arc::clone(&p));
        Ok(p)
    }

    /// `capacity --node-template ...` over the cluster as loaded, with its pictures: a
    /// [`CapacityView`]'s JSON, planned once. Without templates, a request error.
    pub fn capacity(&self) -> Result<Arc<String>, Error> {
        if self.templates.is_empty() {
            return Err(Error::Request(
                "capacity: no node templates: start ui with --node-template FILE (Node manifests, Karpenter NodePools with --instance-type, or Cluster API node groups)".into(),
            ));
        }
        let mut kept = unpoisoned(&self.capacity);
        if let Some(json) = kept.as_ref() {
            return Ok(Arc::clone(json));
        }
        let mut request = CapacityRequest::new(
            self.jobs().over(self.objects.clone()),
            self.templates.clone(),
        );
        request.instance_types.clone_from(&self.instance_types);
        let report = capacity(&self.ctx, request)?;
        let figures = topospread_html::capacity_figures(&report)
            .into_iter()
            .map(|f| CapacityFigureView {
                title: f.title,
                caption: f.caption,
                svg: f.svg,
            })
            .collect();
        let json = to_json(&CapacityView { report, figures })?;
        *kept = Some(Arc::clone(&json));
        Ok(json)
    }

    /// Simulates the cluster again with the what-if's changes; the before side is the
    /// cluster as loaded. A change the API server would refuse (maxSkew 0) is
    /// [`topospread_jobs::Error::Refused`] with its reason.
    pub fn what_if(&self, request: &WhatIfRequest) -> Result<WhatIfView, Error> {
        if request.scale.is_empty()
            && request.drain.is_empty()
            && request.lose.is_empty()
            && request.constraints.is_empty()
        {
            return Err(Error::Request(
                "what-if: nothing to change (give scale, drain, lose or constraints)".into(),
            ));
        }
        let scale = request
            .scale
            .iter()
            .map(|s| {
                s.parse::<Scale>()
                    .map_err(|e| Error::Request(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut objects = self.objects.clone();
        for change in &request.constraints {
            edit::apply(&mut objects, change)?;
        }
        let report = self
            .jobs()
            .simulate(objects, scale, request.drain.clone(), request.lose.clone())
            .map_err(|e| match e {
                Error::Job(topospread_jobs::Error::Refused(m)) => Error::Job(
                    topospread_jobs::Error::Refused(format!("what-if refused: {m}")),
                ),
                other => other,
            })?;
        if let Some(line) = report
            .refused_objects
            .iter()
            .find(|l| !self.baseline.refused_objects.contains(l))
        {
            return Err(Error::Job(topospread_jobs::Error::Refused(format!(
                "what-if refused by the API server: {line}"
            ))));
        }
        Ok(WhatIfView {
            before: SpreadView::of(&self.baseline),
            after: SpreadView::of(&report),
            report,
        })
    }
}
