//! `topospread explain POD`: one pending pod's scheduling cycle, node by node.

use super::runtime::{Placement, Runtime};
use super::simulate::schedule_all;
use super::{config, input};
use crate::cli::ExplainArgs;
use anyhow::{Result, bail};
use std::io::Write;
use std::process::ExitCode;
use topospread::render::render_explanation;

pub(crate) fn run(args: &ExplainArgs) -> Result<ExitCode> {
    let input = input::load(&args.files)?;
    let setup = config::load(args.config.as_deref())?;
    let mut world = input::build(&input, args.seed)?;
    let (ns, name) = input::split_pod_ref(&args.pod);
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
    let Some(pos) = world.queue.iter().position(|q| *q == id) else {
        bail!("pod {ns}/{name}: not queued for the default scheduler (see spec.schedulerName)");
    };
    let mut runtime = Runtime::new(&setup, &mut world.snapshot, args.seed)?;
    let ahead = world.queue[..pos].to_vec();
    let results = schedule_all(&mut runtime, &mut world.snapshot, &ahead, false);
    let Some(pod) = world.snapshot.pod(id).cloned() else {
        bail!("pod {ns}/{name}: vanished from the snapshot");
    };
    let mut view = runtime.explain(&world.snapshot, &pod);
    if !ahead.is_empty() {
        let placed = results
            .iter()
            .filter(|(_, p)| matches!(p, Placement::Scheduled(_)))
            .count();
        view.context.push(format!(
            "queued after {} pod(s), scheduled first and bound as simulate would ({placed} placed, {} pending)",
            ahead.len(),
            ahead.len() - placed
        ));
    }
    let text = render_explanation(&view);
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(if view.outcome.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
