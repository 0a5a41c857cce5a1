//! Peak RSS of the live scheduler alone and of a simulation of the same cluster, for
//! the README's memory comparison. The cluster is a file of objects (a YAML stream of
//! JSON documents) that the fake API server example serves in a process of its own:
//!
//! `rss serve KUBECONFIG PODS`: runs the scheduler against that server until PODS binds
//! succeeded, then prints its peak RSS.
//! `rss simulate FILE`: loads FILE, builds the snapshot and runs the simulation as
//! `topospread simulate` does, then prints its peak RSS.

mod common;
use common::peak_rss_mib;
use std::time::{Duration, Instant};

use serde_json::json;

const SCHEDULER: &str = "topospread";

fn config() -> Result<topospread::SchedulerConfig, Box<dyn std::error::Error>> {
    let doc = json!({"apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration", "leaderElection": {"leaderElect": false},
        "profiles": [{"schedulerName": SCHEDULER}]});
    Ok(topospread::check_configuration(
        &doc,
        topospread::Features::default(),
    )?)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => {
            let kubeconfig = args.get(1).ok_or("rss serve KUBECONFIG PODS")?;
            let pods: u64 = args.get(2).ok_or("rss serve KUBECONFIG PODS")?.parse()?;
            let (client, server) = topospread_serve::client(&topospread_serve::ClientOptions {
                kubeconfig: Some(kubeconfig.into()),
                command: "serve",
                ..Default::default()
            })
            .await?;
            let started = Instant::now();
            let running =
                topospread_serve::start(client, topospread_serve::Options::new(config()?))?;
            let handle = running.handle().clone();
            loop {
                let view = handle.cache_view().await.ok_or("the scheduler stopped")?;
                if view.binds >= pods || started.elapsed() > Duration::from_secs(600) {
                    println!("serve against {server}: {} binds", view.binds);
                    break;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            running.shutdown().await?;
            println!("peak RSS (serve alone): {:.0} MiB", peak_rss_mib());
        }
        Some("simulate") => {
            let file = args.get(1).ok_or("rss simulate FILE")?;
            let text = std::fs::read_to_string(file)?;
            let loaded = topospread_k8s::load::parse_manifests(&text, file)?;
            let mut snapshot = topospread_k8s::build::build_snapshot(&loaded.objects)?;
            let scheduler =
                topospread::Scheduler::new(&config()?, Default::default(), &mut snapshot)?;
            let mut sim = topospread::Simulation::new(scheduler);
            sim.enqueue_pending(&snapshot);
            sim.run(&mut snapshot, |_, _| {})?;
            let bound = snapshot
                .pods()
                .filter(|(id, _)| snapshot.pod_node(*id).is_some())
                .count();
            println!("simulate {file}: {bound} pods bound");
            println!("peak RSS (simulate): {:.0} MiB", peak_rss_mib());
        }
        _ => return Err("rss serve KUBECONFIG PODS | rss simulate FILE".into()),
    }
    Ok(())
}
