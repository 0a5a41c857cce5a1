//! Picking a pod in `topospread ui`: the server's first explain of a pod (its report
//! computed and serialized, none kept yet) on the 5,000-node dump with 50,000 bound
//! pods and a Deployment of 300 replicas, as the browser test loads it. Issue 26 asks
//! for at most 1 s from picking a pod to its full table (release, 2-core machine); the
//! page's share (parsing the report, drawing the visible rows) is the browser test's.
//!
//! `cargo bench -p topospread-ui --bench pick`; `TOPOSPREAD_UI_PODS` sets the bound
//! pods.

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};
use topospread_jobs::{Context, InputOptions};
use topospread_ui::{Options, Session};

#[path = "../tests/it/dump.rs"]
mod dump;

fn first_pick(c: &mut Criterion) {
    let pods = std::env::var("TOPOSPREAD_UI_PODS")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(50_000);
    let dir = std::env::temp_dir().join(format!("topospread-ui-bench-{}", std::process::id()));
    let files = dump::write_dump(&dir, pods);
    let ctx = Context::new().with_input(InputOptions::new(u64::MAX, usize::MAX, false));
    let started = Instant::now();
    let session = Session::load(&ctx, Options::new(files)).expect("load the dump");
    eprintln!(
        "loaded {} nodes, {pods} pods in {:.1} s",
        dump::NODES,
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
    // Each pick names a pod not picked for the last 300 picks, so the session (which
    // keeps 64 reports) never answers from what it kept.
    let pending: Vec<String> = session
        .simulation()
        .pods
        .iter()
        .map(|p| format!("{}/{}", p.namespace, p.pod))
        .collect();
    assert!(pending.len() >= 300, "{} pods to pick", pending.len());
    let mut next = 0;
    let mut group = c.benchmark_group("ui");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(5));
    group.bench_function(
        format!("first pick, {} nodes, {pods} pods", dump::NODES),
        |b| {
            b.iter_custom(|iters| {
                let mut took = Duration::ZERO;
                for _ in 0..iters {
                    let pod = &pending[next % pending.len()];
                    next += 1;
                    let started = Instant::now();
                    black_box(session.explain(pod).expect("explain"));
                    took += started.elapsed();
                }
                took
            });
        },
    );
    group.finish();
}

criterion_group!(benches, first_pick);
criterion_main!(benches);
