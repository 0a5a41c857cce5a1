//! The live scheduler against the fake API server served on loopback (HTTP, a real
//! kube client, real watches): N nodes over 10 zones, M pending pods in deployments of
//! 1,000 with zone and hostname DoNotSchedule constraints. Prints the time from the first
//! watch event to the last binding, pods/s, pod latency percentiles and peak RSS, checks
//! every pod is bound exactly once and every constraint holds.
//!
//! `cargo run --release -p topospread-serve --example bench -- [NODES] [PODS] [--faults]
//! [--qps Q] [--burst B]` (`--faults`: 5% of binds answer 409, 5% answer 500, watches end
//! every 5 s; `--qps`: the client's rate limit, kube-scheduler's default being 50 with
//! burst 100; without it, no limit).

mod common;
use common::peak_rss_mib;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use serde_json::json;
use topospread_fakeapi::{FakeApi, Faults};

const SCHEDULER: &str = "topospread";
const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let faults = args.iter().any(|a| a == "--faults");
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse::<f32>())
            .transpose()
    };
    let limits = match (flag("--qps")?, flag("--burst")?) {
        (Some(qps), burst) => topospread_serve::ClientLimits {
            qps,
            burst: burst.map_or(topospread_serve::limit::DEFAULT_BURST, |b| b as u32),
        },
        (None, _) => topospread_serve::ClientLimits::UNLIMITED,
    };
    let values: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || !matches!(args[i - 1].as_str(), "--qps" | "--burst"))
        .map(|(_, a)| a)
        .collect();
    let numbers: Vec<usize> = values.iter().filter_map(|a| a.parse().ok()).collect();
    let nodes = numbers.first().copied().unwrap_or(5_000);
    let pods = numbers.get(1).copied().unwrap_or(10_000);

    let fake = FakeApi::builder().log_requests(false).build();
    for i in 0..nodes {
        fake.insert(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": format!("node-{i:05}"), "labels": {
                HOST: format!("node-{i:05}"), ZONE: format!("zone-{}", i % 10)}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}))?;
    }
    for i in 0..pods {
        let app = format!("app-{}", i / 1_000);
        fake.insert(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("{app}-{i:05}"), "namespace": "default", "labels": {"app": app}},
            "spec": {"schedulerName": SCHEDULER,
                "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                     "labelSelector": {"matchLabels": {"app": app}}},
                    {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule",
                     "labelSelector": {"matchLabels": {"app": app}}}]}}))?;
    }
    if faults {
        fake.set_faults(
            Faults::seeded(42)
                .bind_conflicts(0.05)
                .fail_requests(Some("create"), Some("pods/binding"), 0.05)
                .drop_watches_after(Duration::from_secs(5)),
        );
    }
    let served = fake.serve("127.0.0.1:0".parse()?).await?;
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&served.kubeconfig())?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
    let clients = topospread_serve::Clients {
        scheduler: topospread_serve::client_from_config(config.clone(), "serve", limits)?,
        events: topospread_serve::client_from_config(config.clone(), "serve", limits)?,
        leader_election: topospread_serve::client_from_config(config, "serve", limits)?,
    };

    let doc = json!({"apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration", "leaderElection": {"leaderElect": false},
        "profiles": [{"schedulerName": SCHEDULER}]});
    let config = topospread::check_configuration(&doc, topospread::Features::default())?;
    let started = Instant::now();
    let running = topospread_serve::start(clients, topospread_serve::Options::new(config))?;
    let handle = running.handle().clone();
    let deadline = started + Duration::from_secs(600);
    loop {
        let bound = fake.bound_pods();
        if bound >= pods || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let the last bind results reach the loop.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let view = handle.cache_view().await.ok_or("the scheduler stopped")?;
    // Scheduled events are written after their binds, off the binding path: wait for
    // them (up to 30 s) and report when the last one landed.
    let events_deadline = Instant::now() + Duration::from_secs(30);
    while fake.count("events.events.k8s.io", Some("default"))? < pods
        && Instant::now() < events_deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let events_done = Instant::now();
    let scheduled = fake
        .list("events.events.k8s.io", Some("default"))?
        .iter()
        .filter(|e| e["reason"] == "Scheduled")
        .count();
    running.shutdown().await?;
    fake.clear_faults();

    let counts = fake.binding_counts();
    let twice = counts.values().filter(|n| **n > 1).count();
    let unbound = pods - counts.len();
    // Constraints: per app, skew over zones and over hostnames (nodes with no pod count 0).
    let node_zone: HashMap<String, String> = fake
        .list("nodes", None)?
        .iter()
        .map(|n| {
            (
                n["metadata"]["name"].as_str().unwrap_or("").to_string(),
                n["metadata"]["labels"][ZONE]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    let mut per_app: BTreeMap<String, ZoneAndHostCounts> = BTreeMap::new();
    for p in fake.list("pods", None)? {
        let Some(node) = p["spec"]["nodeName"].as_str() else {
            continue;
        };
        let app = p["metadata"]["labels"]["app"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let e = per_app.entry(app).or_default();
        *e.0.entry(node_zone[node].clone()).or_default() += 1;
        *e.1.entry(node.to_string()).or_default() += 1;
    }
    let mut worst_zone = 0;
    let mut worst_host = 0;
    for (zones, hosts) in per_app.values() {
        let zmax = zones.values().max().copied().unwrap_or(0);
        let zmin = if zones.len() < 10 {
            0
        } else {
            zones.values().min().copied().unwrap_or(0)
        };
        worst_zone = worst_zone.max(zmax - zmin);
        let hmax = hosts.values().max().copied().unwrap_or(0);
        let hmin = if hosts.len() < nodes {
            0
        } else {
            hosts.values().min().copied().unwrap_or(0)
        };
        worst_host = worst_host.max(hmax - hmin);
    }

    let span = match (view.first_event, view.last_bind) {
        (Some(a), Some(b)) => b.duration_since(a),
        _ => Duration::ZERO,
    };
    let mut lat = view.latencies.clone();
    lat.sort();
    let pct = |q: f64| {
        lat.get(((lat.len() as f64 * q).ceil() as usize).saturating_sub(1))
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    let limit = if limits.limited() {
        format!("qps {} burst {}", limits.qps, limits.burst)
    } else {
        "none".to_string()
    };
    println!("nodes {nodes}, pods {pods}, faults {faults}, client limit {limit}");
    println!(
        "first watch event -> last binding: {:.2} s, {:.0} pods/s",
        span.as_secs_f64(),
        view.binds as f64 / span.as_secs_f64().max(1e-9)
    );
    if let (Some(a), Some(s), Some(b)) = (view.first_event, view.synced_at, view.last_bind) {
        println!(
            "  of which initial lists (15,000+ objects decoded): {:.2} s; caches synced -> last binding: {:.2} s, {:.0} pods/s",
            s.duration_since(a).as_secs_f64(),
            b.duration_since(s).as_secs_f64(),
            view.binds as f64 / b.duration_since(s).as_secs_f64().max(1e-9)
        );
    }
    println!(
        "pod latency (first seen pending -> bound): p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        pct(0.50),
        pct(0.99),
        pct(1.0)
    );
    println!(
        "bound {} of {pods}, bound twice {twice}, unbound {unbound}; worst skew: zone {worst_zone}, hostname {worst_host}",
        counts.len()
    );
    if let Some(a) = view.first_event {
        println!(
            "Scheduled events: {scheduled} of {pods}, the last within {:.2} s of the first watch event",
            events_done.duration_since(a.into_std()).as_secs_f64()
        );
    }
    println!(
        "peak RSS (scheduler + in-process fake API server): {:.0} MiB",
        peak_rss_mib()
    );
    served.shutdown().await;
    if twice > 0 || unbound > 0 || worst_zone > 1 || worst_host > 1 || scheduled < pods {
        return Err("a check failed".into());
    }
    Ok(())
}

/// Pods per zone and per hostname, for one app.
type ZoneAndHostCounts = (HashMap<String, i64>, HashMap<String, i64>);
