//! `topospread guard`: the pod-deletion-cost annotations that make every ReplicaSet
//! scale-in remove pods from the most crowded domains first, and the skew predicted
//! after a scale-in by one and by half, from a dump; with `--live`, the guard itself,
//! keeping a cluster's costs up to date.

use crate::cli::{GuardArgs, OutputFormat};
use anyhow::Result;
use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;
use topospread_jobs::Context;
use topospread_jobs::guard::GuardRequest;
use topospread_jobs::report::guard::{GuardPlan, ScaleInSkew};
use topospread_planning::controller::DELETION_COST_ANNOTATION;
use topospread_planning::guard::{GuardOptions, MANAGED_ANNOTATION};

/// Exit 0 when every predicted scale-in keeps the DoNotSchedule constraints within
/// maxSkew, 1 when one does not (as `rebalance` exits 1 on what it cannot repair),
/// 2 on bad input.
pub(crate) fn run(ctx: &Context, args: &GuardArgs) -> Result<ExitCode> {
    if args.live {
        return live(ctx, args);
    }
    let mut request = GuardRequest::new(args.files.clone());
    request.config = args.config.clone();
    request.options = GuardOptions {
        override_user_costs: args.override_user_costs,
        ..GuardOptions::default()
    };
    let report = topospread_jobs::guard::plan(ctx, &request)?;
    let plan = &report.plan;
    // Timing goes to stderr so stdout stays reproducible (as `rebalance` does).
    stderr!(
        "planned {} patches over {} replicasets in {} ms",
        plan.patches().count(),
        plan.replica_sets.len(),
        report.planned_in.as_millis()
    );
    let text = match args.output {
        OutputFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
        OutputFormat::Yaml => patch_documents(plan)?,
        OutputFormat::Table => table(plan),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    if args.output == OutputFormat::Yaml {
        for n in &plan.notes {
            stderr!("note: {n}");
        }
    }
    Ok(if report.violated_after_scale_in() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// One merge-patch document per pod, each applicable with
/// `kubectl patch pod NAME -n NAMESPACE --type merge --patch-file FILE` (strings
/// written as JSON strings, which YAML reads as the same strings).
fn patch_documents(plan: &GuardPlan) -> Result<String> {
    let q = |s: &str| serde_json::to_string(s);
    let mut out = String::new();
    for p in plan.patches() {
        let cost = q(&p.to.to_string())?;
        // The planned-from version as the patch's precondition: a pod changed since
        // the dump makes the API server refuse the patch (409 Conflict).
        let precondition = match &p.resource_version {
            Some(rv) => format!("  resourceVersion: {}\n", q(rv)?),
            None => String::new(),
        };
        let _ = write!(
            out,
            "---\n# kubectl patch pod {pod} -n {ns} --type merge --patch-file FILE\n\
             apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: {namespace}\n\
             {precondition}  \
             annotations:\n    {DELETION_COST_ANNOTATION}: {cost}\n    {MANAGED_ANNOTATION}: {cost}\n",
            pod = p.pod,
            ns = p.namespace,
            name = q(&p.pod)?,
            namespace = q(&p.namespace)?,
        );
    }
    Ok(out)
}

fn skew_text(s: Option<i64>) -> String {
    s.map_or_else(|| "-".to_string(), |s| s.to_string())
}

/// Per ReplicaSet: the patches, then each constraint's skew now and after scale-ins.
fn table(plan: &GuardPlan) -> String {
    let mut out = String::new();
    for rs in &plan.replica_sets {
        let _ = writeln!(
            out,
            "ReplicaSet {}/{}: {} pods, {} patches",
            rs.namespace,
            rs.name,
            rs.pods,
            rs.patches.len()
        );
        if !rs.patches.is_empty() {
            let wp = rs
                .patches
                .iter()
                .map(|p| p.pod.len())
                .max()
                .unwrap_or(0)
                .max(3);
            let wn = rs
                .patches
                .iter()
                .map(|p| p.node.len())
                .max()
                .unwrap_or(0)
                .max(4);
            let _ = writeln!(
                out,
                "  {:<wp$}  {:<wn$}  {:>6}  {:>6}",
                "POD", "NODE", "COST", "NEW"
            );
            for p in &rs.patches {
                let _ = writeln!(
                    out,
                    "  {:<wp$}  {:<wn$}  {:>6}  {:>6}",
                    p.pod,
                    p.node,
                    p.from.as_deref().unwrap_or("-"),
                    p.to
                );
            }
        }
        if !rs.user_costs.is_empty() {
            let _ = writeln!(
                out,
                "  left alone (costs set by hand): {}",
                rs.user_costs.join(", ")
            );
        }
        for c in &rs.constraints {
            constraint_lines(&mut out, c, rs.half);
        }
        let _ = writeln!(out);
    }
    if plan.replica_sets.is_empty() {
        let _ = writeln!(
            out,
            "No ReplicaSet's pods carry topology spread constraints."
        );
    }
    for n in &plan.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// A constraint's skew now and after scale-ins by 1 and by half (when half is more
/// than one pod: by 0 or by 1 again says nothing).
fn constraint_lines(out: &mut String, c: &ScaleInSkew, half: usize) {
    let by_half = if half > 1 {
        format!(
            "; by {half}: {} (without the costs {})",
            skew_text(c.after_half),
            skew_text(c.unguarded_after_half)
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  {}\n    skew now {}; after scale-in by 1: {} (without the costs {}){by_half}",
        c.constraint,
        c.skew_now,
        skew_text(c.after_one),
        skew_text(c.unguarded_after_one),
    );
}

/// Why a live guard ended.
#[cfg(feature = "daemon")]
enum Ended {
    /// SIGTERM or SIGINT: exit 0.
    Signal,
    /// Another replica holds the Lease now.
    LeaseLost,
    /// The metrics and health server died, with why.
    ServerDied(String),
}

/// Waits until the server task ends (never, when nothing is served).
#[cfg(feature = "daemon")]
async fn died(server: Option<&mut tokio::task::JoinHandle<String>>) -> String {
    match server {
        Some(task) => task.await.unwrap_or_else(|e| e.to_string()),
        None => std::future::pending().await,
    }
}

/// `--live`: runs the guard until SIGTERM/SIGINT (exit 0) or until its Lease is lost
/// (exit 1, so the pod restarts).
#[cfg(feature = "daemon")]
fn live(ctx: &Context, args: &GuardArgs) -> Result<ExitCode> {
    use crate::cmd::daemon::{self, GUARD_PORT, guard_lease};
    use std::sync::Arc;
    crate::cmd::logs::init(args.log_format);
    let setup = topospread_jobs::config::load(
        ctx,
        args.config.as_deref(),
        &topospread_jobs::input::Input::default(),
    )?;
    // A certificate that does not parse ends it here, before any request.
    let tls = daemon::serving_tls(&args.serving, GUARD_PORT)?;
    daemon::runtime()?.block_on(async {
        let (client, _server) = topospread_serve::client(&topospread_serve::ClientOptions {
            kubeconfig: args.kubeconfig.clone(),
            context: args.context.clone(),
            command: "guard",
            ..Default::default()
        })
        .await?;
        let mut options = topospread_serve::GuardOptions::new(setup.config);
        options.features = setup.features;
        options.dry_run = args.dry_run;
        options.override_user_costs = args.override_user_costs;
        options.limits = topospread_serve::ClientLimits {
            qps: args.qps,
            burst: 10,
        };
        let lease = (!args.no_leader_elect).then(|| {
            guard_lease(
                options.identity.clone(),
                &topospread_serve::running_namespace(),
            )
        });
        let metrics = Arc::new(topospread_serve::Metrics::new());
        let mut running = topospread_serve::start_guard(client, options, lease, metrics.clone());
        let mut server = match daemon::listen_address(&args.serving, GUARD_PORT) {
            Some(addr) => {
                let serving = daemon::serving(
                    &args.serving,
                    tls,
                    args.kubeconfig.clone(),
                    args.context.clone(),
                    "guard",
                )
                .await?;
                Some(
                    topospread_serve::guard::serve_endpoints(
                        addr,
                        metrics,
                        running.leadership().clone(),
                        serving,
                    )
                    .await?,
                )
            }
            None => None,
        };
        let ended = tokio::select! {
            () = daemon::wait_for_signal() => Ended::Signal,
            () = running.wait() => Ended::LeaseLost,
            why = died(server.as_mut()) => Ended::ServerDied(why),
        };
        if let Some(task) = &server {
            task.abort();
        }
        match ended {
            Ended::Signal => {
                tracing::info!("signal received: stopping");
                running.shutdown().await;
                Ok(ExitCode::SUCCESS)
            }
            Ended::LeaseLost => {
                stderr!("error: the guard stopped: its Lease was lost");
                Ok(ExitCode::from(1))
            }
            Ended::ServerDied(why) => {
                // The Lease is released before the process ends (the kubelet restarts it).
                running.shutdown().await;
                stderr!("error: the metrics and health server stopped: {why}");
                Ok(ExitCode::from(1))
            }
        }
    })
}

#[cfg(not(feature = "daemon"))]
fn live(_: &Context, _: &GuardArgs) -> Result<ExitCode> {
    anyhow::bail!("guard --live: this build has no live cluster support (feature `live`)")
}
