//! `topospread rebalance`: a plan of moves that restores topology spread, checked with
//! the scheduler (or the descheduler's strategy replayed for comparison), and with
//! `--scale` the pod-deletion-cost annotations that keep a scale-down spread.

use crate::cli::{OutputFormat, RebalanceArgs, StrategyArg};
use anyhow::{Context as _, Result, anyhow, bail};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;
use topospread::rebalance::{
    self, DELETION_COST_ANNOTATION, NotEvictable, Plan, RebalanceOptions, ScalePlan, Strategy,
    WorkloadSpread,
};
use topospread_jobs::runtime::Runtime;
use topospread_jobs::{Context, config, input, simulate};
use topospread_k8s::load::Object;
use topospread_report::parse_selector;

/// Past this many domains a constraint's counts are summarised, not listed.
const MAX_LISTED_DOMAINS: usize = 12;

pub(crate) fn run(ctx: &Context, args: &RebalanceArgs) -> Result<ExitCode> {
    let input = input::load_admitted(
        ctx,
        &args.files,
        args.live.objects()?,
        args.seed,
        input::PodForm::Whole,
    )?;
    let setup = config::load(ctx, args.config.as_deref(), &input)?;
    let mut world = input::build(ctx, &input, args.seed, &[])?;
    let mut notes = world.notes.clone();
    if !world.queue.is_empty() {
        // Workloads in the files that have no pods yet are scheduled first, as
        // `simulate` would: the plan starts from where they land.
        let mut runtime = Runtime::new(&setup, &mut world.snapshot, args.seed)?;
        let n = world.queue.len();
        simulate::schedule_all(&mut runtime, &mut world, &mut ())?;
        notes.push(format!(
            "{n} pending pods were scheduled first (as simulate does)"
        ));
    }
    let mut blockers: BTreeMap<(String, String), NotEvictable> = BTreeMap::new();
    let manifests = input
        .objects
        .iter()
        .filter_map(|l| match &l.object {
            Object::Pod(p) => Some(&**p),
            _ => None,
        })
        .chain(world.expansion.pods.iter().map(|p| &p.pod));
    let blocker = match args.strategy {
        StrategyArg::Topospread => rebalance::eviction_blocker,
        StrategyArg::Descheduler => rebalance::descheduler_eviction_blocker,
    };
    for pod in manifests {
        if let Some(b) = blocker(pod) {
            let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
            let name = pod.metadata.name.clone().unwrap_or_default();
            blockers.insert((ns.to_string(), name), b);
        }
    }
    if let Some(scale) = &args.scale {
        return scale_down(args, scale, &input, &world, &setup);
    }
    let selector = match &args.selector {
        None => None,
        Some(s) => Some(parse_selector(s).with_context(|| format!("-l {s:?}"))?),
    };
    let mut options = RebalanceOptions::default();
    options.namespace = args.namespace.clone();
    options.selector = selector;
    options.max_moves = args.max_moves;
    options.strategy = match args.strategy {
        StrategyArg::Topospread => Strategy::Topospread,
        StrategyArg::Descheduler => Strategy::Descheduler,
    };
    options.blockers = blockers;
    options.descheduler_soft = args.include_schedule_anyway;
    options.topology_balance_node_fit = !args.no_topology_balance_node_fit;
    options.descheduler_node_fit = args.node_fit;
    options.exclude_namespaces = args.exclude_namespace.clone();
    options.seed = args.seed;
    let started = std::time::Instant::now();
    let plan = rebalance::plan(&world.snapshot, &setup.config, setup.features, &options)?;
    // Timing goes to stderr so stdout stays reproducible.
    eprintln!(
        "planned {} moves in {} ms",
        plan.moves.len(),
        started.elapsed().as_millis()
    );
    let text = match args.output {
        OutputFormat::Json => serde_json::to_string_pretty(&plan)? + "\n",
        OutputFormat::Yaml => {
            world.snapshot = plan.snapshot.clone();
            simulate::cluster_yaml(&input.objects, &world, None, &[])?
        }
        OutputFormat::Table => table(&plan, &notes),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    if args.output != OutputFormat::Table {
        for n in &notes {
            eprintln!("note: {n}");
        }
    }
    Ok(if plan.final_violations == 0 && plan.pending == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--scale KIND/NAME=N`: which pods go, as `kubectl annotate` lines or JSON.
fn scale_down(
    args: &RebalanceArgs,
    scale: &str,
    input: &input::Input,
    world: &input::World,
    setup: &config::SchedulerSetup,
) -> Result<ExitCode> {
    let (target, replicas) = scale
        .split_once('=')
        .ok_or_else(|| anyhow!("--scale {scale:?}: expected KIND/NAME=N"))?;
    let replicas: usize = replicas
        .parse()
        .map_err(|_| anyhow!("--scale {scale:?}: {replicas:?} is not a replica count"))?;
    let (kind, name) = target
        .split_once('/')
        .ok_or_else(|| anyhow!("--scale {scale:?}: expected KIND/NAME=N"))?;
    let namespace = args.namespace.as_deref().unwrap_or("default");
    let controller = match kind.to_ascii_lowercase().as_str() {
        "deployment" | "deployments" | "deploy" => deployment_replica_set(input, world, namespace, name)
            .ok_or_else(|| {
                anyhow!("--scale {scale:?}: deployment {name:?} in namespace {namespace}: no such workload with a ReplicaSet in the input")
            })?,
        "replicaset" | "replicasets" | "rs" | "replicationcontroller" | "rc" => name.to_string(),
        "statefulset" | "sts" => bail!(
            "--scale {scale:?}: a StatefulSet removes its highest ordinals first; pod-deletion-cost does not apply"
        ),
        other => bail!(
            "--scale {scale:?}: unknown kind {other:?} (deployment, replicaset or replicationcontroller)"
        ),
    };
    let plan = rebalance::plan_scale_down(
        &world.snapshot,
        &setup.config,
        setup.features,
        namespace,
        &controller,
        &format!("{}/{name}", kind.to_ascii_lowercase()),
        replicas,
    )
    .with_context(|| format!("--scale {scale:?}"))?;
    let text = match args.output {
        OutputFormat::Json => serde_json::to_string_pretty(&plan)? + "\n",
        OutputFormat::Table | OutputFormat::Yaml => scale_table(&plan),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The ReplicaSet a Deployment owns in the input (the one with the most pods when
/// several do), by its owner reference.
fn deployment_replica_set(
    input: &input::Input,
    world: &input::World,
    namespace: &str,
    name: &str,
) -> Option<String> {
    let owned = input
        .objects
        .iter()
        .chain(&world.expansion.replica_sets)
        .filter_map(|l| match &l.object {
            Object::ReplicaSet(rs) => Some(rs),
            _ => None,
        })
        .filter(|rs| rs.metadata.namespace.as_deref().unwrap_or("default") == namespace)
        .filter(|rs| {
            rs.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && o.kind == "Deployment" && o.name == name)
        })
        .filter_map(|rs| rs.metadata.name.clone());
    let snapshot = &world.snapshot;
    owned.max_by_key(|rs| {
        snapshot
            .pods()
            .filter(|(id, p)| {
                snapshot.pod_node(*id).is_some()
                    && p.controller.as_ref().is_some_and(|c| &*c.name == rs)
            })
            .count()
    })
}

fn scale_table(p: &ScalePlan) -> String {
    let mut out = String::new();
    let deleted = p.pods.iter().filter(|d| d.delete).count();
    let _ = writeln!(
        out,
        "# {}: scale {} -> {} removes {deleted} pods; lower pod-deletion-cost goes first",
        p.workload, p.from, p.to
    );
    for d in &p.pods {
        let _ = writeln!(
            out,
            "kubectl annotate pod -n {} {} {DELETION_COST_ANNOTATION}={} --overwrite  # {} on {}",
            d.namespace,
            d.pod,
            d.cost,
            if d.delete { "remove" } else { "keep" },
            d.node
        );
    }
    let _ = writeln!(out);
    spread_section(&mut out, &p.before, &p.after);
    out
}

/// The plan for people: moves, spread before and after, what is left.
fn table(p: &Plan, notes: &[String]) -> String {
    let mut out = String::new();
    let strategy = match p.strategy {
        Strategy::Topospread => "topospread",
        Strategy::Descheduler => "descheduler",
    };
    let _ = writeln!(
        out,
        "Plan ({strategy}): {} moves, {} rounds",
        p.moves.len(),
        p.rounds
    );
    if !p.moves.is_empty() {
        let w = |f: fn(&rebalance::Move) -> usize, min: usize| {
            p.moves.iter().map(f).max().unwrap_or(0).max(min)
        };
        let (wp, wf, wt) = (
            w(|m| m.namespace.len() + m.pod.len() + 1, 3),
            w(|m| m.from.len(), 4),
            w(|m| m.to.len(), 2),
        );
        let _ = writeln!(
            out,
            "  #  {:<wp$}  {:<wf$}  {:<wt$}  REASON",
            "POD", "FROM", "TO"
        );
        for (i, m) in p.moves.iter().enumerate() {
            let pod = format!("{}/{}", m.namespace, m.pod);
            let _ = writeln!(
                out,
                "{:>3}  {pod:<wp$}  {:<wf$}  {:<wt$}  {}",
                i + 1,
                m.from,
                m.to,
                m.reason
            );
        }
    }
    let _ = writeln!(out);
    spread_section(&mut out, &p.before, &p.after);
    if !p.unresolved.is_empty() {
        let _ = writeln!(out, "Unresolved");
        for u in &p.unresolved {
            let _ = writeln!(out, "  {}: {}\n    {}", u.workload, u.constraint, u.why);
        }
        let _ = writeln!(out);
    }
    for n in notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = write!(
        out,
        "excess skew: DoNotSchedule {} -> {}, ScheduleAnyway {} -> {}; {} DoNotSchedule constraints violated",
        p.violation_before.hard,
        p.violation_after.hard,
        p.violation_before.soft,
        p.violation_after.soft,
        p.final_violations
    );
    if p.pending > 0 {
        let _ = write!(out, "; {} replacements Pending", p.pending);
    }
    out.push('\n');
    out
}

/// Per workload and constraint: counts and skew before and after.
fn spread_section(out: &mut String, before: &[WorkloadSpread], after: &[WorkloadSpread]) {
    for (b, a) in before.iter().zip(after) {
        let _ = writeln!(out, "{}/{}", b.namespace, b.workload);
        for (cb, ca) in b.constraints.iter().zip(&a.constraints) {
            let _ = writeln!(
                out,
                "  {}\n    before: {}  skew {}\n    after:  {}  skew {}",
                cb.constraint,
                counts_text(&cb.counts),
                cb.skew,
                counts_text(&ca.counts),
                ca.skew
            );
        }
    }
    let _ = writeln!(out);
}

fn counts_text(m: &BTreeMap<String, i64>) -> String {
    if m.len() > MAX_LISTED_DOMAINS {
        let max = m.values().max().copied().unwrap_or(0);
        let min = m.values().min().copied().unwrap_or(0);
        return format!("{} domains, {min}..{max} pods", m.len());
    }
    m.iter()
        .map(|(d, n)| format!("{d}={n}"))
        .collect::<Vec<_>>()
        .join(" ")
}
