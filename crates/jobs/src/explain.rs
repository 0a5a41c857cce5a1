//! `explain`: one pending pod's scheduling cycle, node by node, as a versioned report
//! (`apiVersion`/`kind`) with a JSON Schema generated from its types
//! (`schema/explain-report.json`).

use crate::config::SchedulerSetup;
use crate::error::{Result, refuse};
use crate::input;
use crate::report::explain::ExplainView;
use crate::runtime::explanation;
use crate::{Cluster, Context};
use schemars::JsonSchema;
use serde::Serialize;
use topospread::SimEvent;
use topospread::snapshot::PodId;
use topospread_driver::{ClusterDriver, Placement, Runtime, World};
use topospread_k8s::workloads::Scale;

/// The report's `apiVersion`.
pub const API_VERSION: &str = crate::simulate::API_VERSION;
/// The report's `kind`.
pub const KIND: &str = "ExplainReport";

/// Which pod to explain, and in what cluster.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ExplainRequest {
    /// The cluster, seed (as in `simulate`) and configuration.
    pub cluster: Cluster,
    /// The pending pod (`name`, `namespace/name`), or a workload (`deployment/web`,
    /// `sts/prod/db`): its next pending pod.
    pub pod: String,
    /// `--scale`: replica counts replacing the manifests'.
    pub scale: Vec<Scale>,
}

impl ExplainRequest {
    /// A request for `pod` in `cluster`; the rest as the CLI's defaults.
    pub fn new(cluster: impl Into<Cluster>, pod: impl Into<String>) -> Self {
        Self {
            cluster: cluster.into(),
            pod: pod.into(),
            ..Self::default()
        }
    }
}

/// The contract of `topospread explain -o json`: the pod's last scheduling cycle (and
/// the failed cycle whose preemption made room for it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct ExplainReport {
    /// [`API_VERSION`].
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// [`KIND`].
    pub kind: String,
    /// The cycle.
    #[serde(flatten)]
    pub cycle: ExplainView,
}

impl ExplainReport {
    /// Whether the explained cycle bound the pod.
    pub fn scheduled(&self) -> bool {
        self.cycle.outcome.is_ok()
    }
}

/// The JSON Schema (draft 2020-12) of [`ExplainReport`] as it serializes.
pub fn schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    serde_json::to_value(generator.into_root_schema_for::<ExplainReport>()).unwrap_or_default()
}

/// Schedules the cluster as `simulate` does, recording the pod's cycles, and returns its
/// last one. A pod that does not exist, is already bound, was refused by admission or
/// never got a cycle is [`crate::Error::Refused`], naming it.
pub fn explain(ctx: &Context, mut request: ExplainRequest) -> Result<ExplainReport> {
    let pod = std::mem::take(&mut request.pod);
    let pod = in_namespace(&pod, request.cluster.source.namespace.as_deref());
    let Explainer { setup, world, seed } = Explainer::prepare(ctx, request)?;
    explain_in(&setup, world, seed, &pod)
}

/// A cluster read, admitted and built once, from which pods are explained one at a
/// time: each [`Explainer::explain`] schedules a copy of it exactly as [`explain`] does,
/// so a long-lived caller (`topospread ui`) does not read and admit the objects again
/// for every pod.
pub struct Explainer {
    setup: SchedulerSetup,
    /// The cluster before any pending pod is scheduled.
    world: World,
    seed: u64,
}

impl Explainer {
    /// Reads, admits and builds the request's cluster with its configuration, seed and
    /// `--scale` (its `pod` is not read); bad input is the error [`explain`] gives.
    pub fn prepare(ctx: &Context, request: ExplainRequest) -> Result<Self> {
        let seed = request.cluster.seed;
        let (input, setup) = request.cluster.load(ctx, input::PodForm::Compact)?;
        let world = input::build(ctx, &input, seed, &request.scale)?;
        Ok(Self { setup, world, seed })
    }

    /// `pod` explained as [`explain`] explains it in the prepared cluster: the same
    /// report, or the same refusal.
    pub fn explain(&self, pod: &str) -> Result<ExplainReport> {
        explain_in(&self.setup, self.world.clone(), self.seed, pod)
    }
}

/// Schedules `world` (the cluster before any pending pod is scheduled) once, recording
/// the cycles of `pod` (or of every pending pod of the workload it names, to pick one
/// from the same run), and returns the chosen pod's last cycle.
fn explain_in(setup: &SchedulerSetup, world: World, seed: u64, pod: &str) -> Result<ExplainReport> {
    let (ns, candidates) = match workload_ref(pod) {
        Some((kind, ns, name)) => (ns, pending_pods_of(&world, kind, ns, name)?),
        None => {
            let (ns, name) = input::split_pod_ref(pod);
            (ns, vec![name.to_string()])
        }
    };
    let mut driver = ClusterDriver::start(world, setup, seed)?;
    let mut held = Vec::new();
    let mut ids = Vec::new();
    for name in &candidates {
        match record(&mut driver, ns, name)? {
            Recording::Present(id) => ids.push((name.as_str(), id)),
            Recording::OnCreation => held.push(name.as_str()),
        }
    }
    let results = driver.schedule(&mut ())?;
    let (world, runtime) = driver.into_parts();
    let (name, chosen) = choose_pod(&world, &runtime, &results, &candidates);
    let id = match ids.iter().find(|(n, _)| *n == name) {
        Some((_, id)) => *id,
        None => match world.snapshot.pod_id(ns, name) {
            Some(id) if held.contains(&name) => id,
            _ => {
                let why = world
                    .expansion
                    .ordered
                    .iter()
                    .find(|o| o.namespace == ns && o.holds(name))
                    .and_then(|o| o.why_not_created(&world.snapshot))
                    .unwrap_or_else(|| "not created".into());
                refuse!("pod {ns}/{name}: never created, so never scheduled: {why}");
            }
        },
    };
    let Some(pod) = world.snapshot.pod(id).cloned() else {
        refuse!("pod {ns}/{name}: preempted by a higher-priority pod before it was bound");
    };
    let Some(mut cycle) = explanation(&runtime, &world.snapshot, id, &pod) else {
        let why = match results.iter().find(|(p, _)| *p == id) {
            Some((_, Placement::Unschedulable(m))) => m.clone(),
            Some(_) => "it never got a scheduling cycle".to_string(),
            None => match runtime.placement(&world.snapshot, id) {
                Placement::Unschedulable(m) if held.contains(&name) => m,
                _ => "it never got a scheduling cycle".to_string(),
            },
        };
        refuse!("pod {ns}/{name}: no scheduling cycle to explain: {why}");
    };
    cycle.context.extend(bound_before(runtime.events(), id));
    if let Some(why) = chosen {
        cycle.context.insert(0, why);
    }
    if let Some(node) = pod.nominated_node_name.as_deref()
        && world.snapshot.node_id(node).is_none()
    {
        cycle.context.push(format!(
            "status.nominatedNodeName names node {node:?}, which is not in the cluster: ignored"
        ));
    }
    Ok(ExplainReport {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        cycle,
    })
}

/// How a pod's cycles are recorded: it is in the cluster, or a controller creates it
/// during the run.
enum Recording {
    Present(PodId),
    OnCreation,
}

/// Asks the driver to record pod `ns/name`'s cycles; a pod refused by admission, not
/// found or already bound is refused, naming it.
fn record(driver: &mut ClusterDriver, ns: &str, name: &str) -> Result<Recording> {
    let world = driver.world();
    if let Some(r) = world
        .refused
        .iter()
        .find(|r| r.namespace == ns && r.name == name)
    {
        refuse!(
            "pod {ns}/{name}: refused by admission, never created: {}",
            r.error
        );
    }
    if world
        .expansion
        .ordered
        .iter()
        .any(|o| o.namespace == ns && o.holds(name))
    {
        // An OrderedReady StatefulSet's ordinal: explained if its controller creates it.
        driver.runtime_mut().explain_on_creation(ns, name);
        return Ok(Recording::OnCreation);
    }
    let Some(id) = world.snapshot.pod_id(ns, name) else {
        refuse!(
            "pod {ns}/{name}: not found in the files or among the pods their workloads make; pending pods: {}",
            pending_names(world)
        );
    };
    if let Some(node) = world.snapshot.pod_node(id) {
        refuse!(
            "pod {ns}/{name}: already bound to node {} (spec.nodeName); explain takes a pending pod",
            world.snapshot.node(node).node.name
        );
    }
    driver.runtime_mut().explain_pod(id);
    Ok(Recording::Present(id))
}

/// The line saying how many other pods were bound before pod `id` (or in the whole run,
/// when it was not bound), as `simulate` schedules them.
fn bound_before(events: &[SimEvent], id: PodId) -> Option<String> {
    let bound = |e: &SimEvent| matches!(e, SimEvent::Bound { pod, .. } if *pod == id);
    let others = |n: usize| {
        events[..n]
            .iter()
            .filter(|e| matches!(e, SimEvent::Bound { .. }))
            .count()
    };
    match events.iter().position(bound) {
        Some(at) if others(at) > 0 => Some(format!(
            "scheduled after {} other pod(s) were bound, as simulate schedules them",
            others(at)
        )),
        None if others(events.len()) > 0 => Some(format!(
            "its last cycle is shown; {} other pod(s) were bound in the simulation",
            others(events.len())
        )),
        _ => None,
    }
}

/// Up to ten pending pods as `namespace/name`, for an error naming what exists.
fn pending_names(world: &World) -> String {
    let mut names: Vec<String> = world
        .queue
        .iter()
        .filter_map(|id| world.snapshot.pod(*id))
        .map(|p| {
            format!(
                "{}/{}",
                world.snapshot.symbols().resolve(p.namespace),
                p.name
            )
        })
        .take(10)
        .collect();
    if world.queue.len() > names.len() {
        names.push("...".into());
    }
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// `pod` with `-n`'s namespace where it names none (`web-1`, `deployment/web`), as
/// kubectl looks names up in `-n`.
fn in_namespace(pod: &str, namespace: Option<&str>) -> String {
    let Some(ns) = namespace else {
        return pod.to_string();
    };
    match pod.split('/').collect::<Vec<_>>().as_slice() {
        [name] => format!("{ns}/{name}"),
        [kind, name] if workload_ref(pod).is_some() => format!("{kind}/{ns}/{name}"),
        _ => pod.to_string(),
    }
}

/// `KIND/NAME` or `KIND/NAMESPACE/NAME` as kubectl writes them (`deployment/web`,
/// `sts/prod/db`): the workload kind's canonical name, namespace and name; `None` for a
/// pod reference (`name`, `namespace/name`, `pod/name`).
fn workload_ref(text: &str) -> Option<(&'static str, &str, &str)> {
    let parts: Vec<&str> = text.split('/').collect();
    let (kind, ns, name) = match parts.as_slice() {
        [kind, name] => (*kind, topospread::convert::DEFAULT_NAMESPACE, *name),
        [kind, ns, name] => (*kind, *ns, *name),
        _ => return None,
    };
    let kind = match kind.to_ascii_lowercase().as_str() {
        "deployment" | "deployments" | "deploy" => "Deployment",
        "replicaset" | "replicasets" | "rs" => "ReplicaSet",
        "replicationcontroller" | "replicationcontrollers" | "rc" => "ReplicationController",
        "statefulset" | "statefulsets" | "sts" => "StatefulSet",
        "daemonset" | "daemonsets" | "ds" => "DaemonSet",
        "job" | "jobs" => "Job",
        _ => return None,
    };
    Some((kind, ns, name))
}

/// Which of the candidates to explain, read from the run that recorded them all: the
/// only one; else the first, in queue order, that stays Pending (a user asking about a
/// workload means the pods that do not schedule), else the last one scheduled; with a
/// line saying which.
fn choose_pod<'a>(
    world: &World,
    runtime: &Runtime,
    results: &[(PodId, Placement)],
    candidates: &'a [String],
) -> (&'a str, Option<String>) {
    let total = candidates.len();
    if total <= 1 {
        return (candidates.first().map_or("", String::as_str), None);
    }
    let name_of = |id: PodId| world.snapshot.pod(id).map(|p| p.name.to_string());
    let pending: Vec<String> = results
        .iter()
        .filter(|(_, placement)| matches!(placement, Placement::Unschedulable(_)))
        .filter_map(|(id, _)| name_of(*id))
        .filter(|n| candidates.contains(n))
        .collect();
    if let Some(pod) = candidates.iter().find(|p| pending.contains(p)) {
        let why = format!(
            "{} of {total} pending pod(s) of the workload stay Pending; explaining the first (`explain POD` for another)",
            pending.len()
        );
        return (pod.as_str(), Some(why));
    }
    let bound_order: Vec<String> = runtime
        .events()
        .iter()
        .filter_map(|e| match e {
            SimEvent::Bound { pod, .. } => name_of(*pod),
            _ => None,
        })
        .collect();
    let last = bound_order
        .iter()
        .rev()
        .find_map(|n| candidates.iter().find(|c| *c == n))
        .or(candidates.last())
        .map_or("", String::as_str);
    (
        last,
        Some(format!(
            "all {total} pending pod(s) of the workload schedule; explaining the last one scheduled"
        )),
    )
}

/// The workload's pending pods, in queue order: at least one, else the error saying why.
fn pending_pods_of(world: &World, kind: &str, ns: &str, name: &str) -> Result<Vec<String>> {
    let what = format!("{} {ns}/{name}", kind.to_ascii_lowercase());
    let Some(workload) = world
        .expansion
        .workloads
        .iter()
        .find(|w| w.kind == kind && w.namespace == ns && w.name == name)
    else {
        let mut known: Vec<String> = world
            .expansion
            .workloads
            .iter()
            .map(|w| format!("{}/{}/{}", w.kind.to_ascii_lowercase(), w.namespace, w.name))
            .take(10)
            .collect();
        if known.is_empty() {
            known.push("none".into());
        }
        refuse!(
            "{what}: not found in the files (workloads: {})",
            known.join(", ")
        );
    };
    let snapshot = &world.snapshot;
    let symbols = snapshot.symbols();
    let pending: Vec<String> = world
        .queue
        .iter()
        .filter_map(|id| snapshot.pod(*id))
        .filter(|pod| {
            symbols.resolve(pod.namespace) == ns && workload.pods.iter().any(|p| **p == *pod.name)
        })
        .map(|pod| pod.name.to_string())
        .collect();
    match pending.first() {
        Some(_) => Ok(pending),
        None if world
            .expansion
            .rollouts
            .iter()
            .any(|r| r.namespace == ns && r.deployment == name) =>
        {
            refuse!(
                "{what}: every pod exists already; its rollout's new pods are made step by step by `simulate`, which reports where each lands"
            )
        }
        None if matches!(
            kind,
            "Deployment" | "ReplicaSet" | "ReplicationController" | "StatefulSet"
        ) =>
        {
            refuse!(
                "{what}: no pending pod ({} pod(s), every one bound); --scale {}/{ns}/{name}={} shows where the next would go",
                workload.pods.len(),
                kind.to_ascii_lowercase(),
                workload.pods.len() + 1
            )
        }
        None => refuse!(
            "{what}: no pending pod ({} pod(s), every one bound)",
            workload.pods.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_without_a_namespace_take_the_flags() {
        let ns = Some("prod");
        assert_eq!(in_namespace("web-1", ns), "prod/web-1");
        assert_eq!(in_namespace("deploy/web", ns), "deploy/prod/web");
        assert_eq!(in_namespace("dev/web-1", ns), "dev/web-1");
        assert_eq!(in_namespace("sts/dev/db", ns), "sts/dev/db");
        assert_eq!(in_namespace("web-1", None), "web-1");
    }
    use std::path::PathBuf;

    fn fixture(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../cli/tests/fixtures/{name}"))
    }

    /// `explain`'s answer (report or refusal) as comparable text.
    fn answer(r: Result<ExplainReport>) -> String {
        match r {
            Ok(report) => serde_json::to_string(&report).unwrap_or_default(),
            Err(e) => format!("error: {e}"),
        }
    }

    /// Every pod asked of one prepared cluster, twice over (each explain schedules its
    /// own copy, so an earlier one changes nothing), answers as a fresh `explain` does.
    fn same_as_explain(file: &str, scale: &[&str], pods: &[&str]) {
        let request = |pod: &str| {
            let mut r = ExplainRequest::new(vec![fixture(file)], pod);
            r.cluster.seed = 7;
            r.scale = scale.iter().map(|s| s.parse().expect("scale")).collect();
            r
        };
        let ctx = Context::new();
        let prepared = Explainer::prepare(&ctx, request("")).expect("prepare");
        for pod in pods.iter().chain(pods) {
            let fresh = answer(explain(&ctx, request(pod)));
            assert!(!fresh.is_empty());
            assert_eq!(answer(prepared.explain(pod)), fresh, "{file}: {pod}");
        }
    }

    #[test]
    fn a_prepared_cluster_explains_a_preempting_pod_as_explain_does() {
        same_as_explain("preemption.yaml", &[], &["checkout", "default/checkout"]);
        let prepared = Explainer::prepare(
            &Context::new(),
            ExplainRequest::new(vec![fixture("preemption.yaml")], ""),
        )
        .expect("prepare");
        let report = prepared.explain("checkout").expect("explain");
        assert!(report.cycle.preempting_cycle.is_some(), "{report:?}");
    }

    #[test]
    fn a_prepared_cluster_explains_workloads_ordinals_and_refusals_as_explain_does() {
        same_as_explain(
            "workloads.yaml",
            &[],
            &["sts/data/db", "data/db-1", "data/db-2", "deployment/nope"],
        );
        same_as_explain("docs-conflict.yaml", &[], &["mypod", "nope"]);
        same_as_explain(
            "controllers/live-deployment.yaml",
            &["deployment/web=4"],
            &["deployment/web"],
        );
    }
}
