//! `topospread explain POD`: one pending pod's scheduling cycle, node by node.

use crate::cli::{ExplainArgs, ExplainFormat};
use anyhow::{Result, bail};
use std::io::Write;
use std::process::ExitCode;
use topospread::simulation::SimEvent;
use topospread_jobs::runtime::{Placement, Runtime};
use topospread_jobs::simulate::schedule_all;
use topospread_jobs::{Context, config, input};
use topospread_report::render_explanation;

pub(crate) fn run(ctx: &Context, args: &ExplainArgs) -> Result<ExitCode> {
    let input = input::load_admitted(
        ctx,
        &args.files,
        args.live.objects()?,
        args.seed,
        input::PodForm::Compact,
    )?;
    let setup = config::load(ctx, args.config.as_deref(), &input)?;
    let mut world = input::build(ctx, &input, args.seed, &args.scale)?;
    let next;
    let (ns, name) = match workload_ref(&args.pod) {
        Some((kind, ns, name)) => {
            next = next_pod_of(&world, kind, ns, name)?;
            (ns, next.as_str())
        }
        None => input::split_pod_ref(&args.pod),
    };
    if let Some(r) = world
        .refused
        .iter()
        .find(|r| r.namespace == ns && r.name == name)
    {
        bail!(
            "pod {ns}/{name}: refused by admission, never created: {}",
            r.error
        );
    }
    let Some(id) = world.snapshot.pod_id(ns, name) else {
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
        bail!(
            "pod {ns}/{name}: not found in the files or among the pods their workloads make; pending pods: {}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
    };
    if let Some(node) = world.snapshot.pod_node(id) {
        bail!(
            "pod {ns}/{name}: already bound to node {} (spec.nodeName); explain takes a pending pod",
            world.snapshot.node(node).node.name
        );
    }
    let mut runtime = Runtime::new(&setup, &mut world.snapshot, args.seed)?;
    runtime.explain_pod(id);
    let (results, _) = schedule_all(&mut runtime, &mut world, &mut ())?;
    let Some(pod) = world.snapshot.pod(id).cloned() else {
        bail!("pod {ns}/{name}: preempted by a higher-priority pod before it was bound");
    };
    let Some(mut view) = runtime.explanation(&world.snapshot, &pod) else {
        let why = match results.iter().find(|(p, _)| *p == id) {
            Some((_, Placement::Unschedulable(m))) => m.clone(),
            _ => "it never got a scheduling cycle".to_string(),
        };
        bail!("pod {ns}/{name}: no scheduling cycle to explain: {why}");
    };
    let bound = |e: &SimEvent| matches!(e, SimEvent::Bound { pod, .. } if *pod == id);
    let events = runtime.events();
    let others = |n: usize| {
        events[..n]
            .iter()
            .filter(|e| matches!(e, SimEvent::Bound { .. }))
            .count()
    };
    match events.iter().position(bound) {
        Some(at) if others(at) > 0 => view.context.push(format!(
            "scheduled after {} other pod(s) were bound, as simulate schedules them",
            others(at)
        )),
        None if others(events.len()) > 0 => view.context.push(format!(
            "its last cycle is shown; {} other pod(s) were bound in the simulation",
            others(events.len())
        )),
        _ => {}
    }
    if let Some(node) = pod.nominated_node_name.as_deref()
        && world.snapshot.node_id(node).is_none()
    {
        view.context.push(format!(
            "status.nominatedNodeName names node {node:?}, which is not in the cluster: ignored"
        ));
    }
    let text = match args.output {
        ExplainFormat::Text => render_explanation(&view),
        ExplainFormat::Json => serde_json::to_string_pretty(&view)? + "\n",
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(if view.outcome.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
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

/// The workload's next pod: the first of its pods still pending, in queue order.
fn next_pod_of(world: &input::World, kind: &str, ns: &str, name: &str) -> Result<String> {
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
        bail!(
            "{what}: not found in the files (workloads: {})",
            known.join(", ")
        );
    };
    let snapshot = &world.snapshot;
    let symbols = snapshot.symbols();
    let next = world.queue.iter().find_map(|id| {
        let pod = snapshot.pod(*id)?;
        (symbols.resolve(pod.namespace) == ns && workload.pods.iter().any(|p| **p == *pod.name))
            .then(|| pod.name.to_string())
    });
    match next {
        Some(pod) => Ok(pod),
        None if world
            .expansion
            .rollouts
            .iter()
            .any(|r| r.namespace == ns && r.deployment == name) =>
        {
            bail!(
                "{what}: every pod exists already; its rollout's new pods are made step by step by `simulate`, which reports where each lands"
            )
        }
        None if matches!(
            kind,
            "Deployment" | "ReplicaSet" | "ReplicationController" | "StatefulSet"
        ) =>
        {
            bail!(
                "{what}: no pending pod ({} pod(s), every one bound); --scale {}/{ns}/{name}={} shows where the next would go",
                workload.pods.len(),
                kind.to_ascii_lowercase(),
                workload.pods.len() + 1
            )
        }
        None => bail!(
            "{what}: no pending pod ({} pod(s), every one bound)",
            workload.pods.len()
        ),
    }
}
