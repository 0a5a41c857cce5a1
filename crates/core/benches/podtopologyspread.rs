//! The PodTopologySpread plugin alone, in upstream's benchmark shape: 1,000 nodes in
//! 10 zones with 10,000 matching pods; constraints on zone, on hostname, and on both.
//! Filter = PreFilter plus Filter on every node; Score = PreScore plus Score and
//! NormalizeScore on 500 feasible nodes.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use topospread::Features;
use topospread::builders::{NodeBuilder, PodBuilder};
use topospread::config::PodTopologySpreadArgs;
use topospread::convert;
use topospread::framework::{
    CycleState, FilterPlugin, NodeScore, PreFilterPlugin, PreScorePlugin, ScorePlugin,
};
use topospread::plugins::podtopologyspread::PodTopologySpread;
use topospread::snapshot::{NodeId, Snapshot};

const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

fn cluster(nodes: usize, pods: usize, zones: usize) -> Snapshot {
    let mut s = Snapshot::new();
    for i in 0..nodes {
        let name = format!("node-{i}");
        let n = NodeBuilder::new(&name)
            .label(ZONE, &format!("zone-{}", i % zones))
            .label(HOST, &name)
            .build();
        let n = convert::node(&n, s.symbols_mut()).expect("valid node");
        s.add_node(n).expect("unique node");
    }
    // A fixed stride spreads pods unevenly but deterministically.
    for j in 0..pods {
        let node = (j * 7919 + j / 3) % nodes;
        let p = PodBuilder::new(&format!("p-{j}"))
            .label("foo", "")
            .node(&format!("node-{node}"))
            .build();
        let p = convert::pod(&p, s.symbols_mut()).expect("valid pod");
        s.add_pod(p).expect("unique pod");
    }
    s
}

fn incoming(s: &mut Snapshot, keys: &[&str], when: &str) -> topospread::api::Pod {
    let mut b = PodBuilder::new("incoming").label("foo", "");
    for key in keys {
        b = b.spread(1, key, when, &[("foo", "")]);
    }
    convert::pod(&b.build(), s.symbols_mut()).expect("valid pod")
}

fn plugin(s: &mut Snapshot) -> PodTopologySpread {
    let args = PodTopologySpreadArgs {
        defaulting_type: Some("List".into()),
        ..Default::default()
    };
    PodTopologySpread::new(&args, Features::default(), s.symbols_mut()).expect("valid args")
}

fn benches(c: &mut Criterion) {
    let sets: [(&str, &[&str]); 3] = [
        ("zone", &[ZONE]),
        ("hostname", &[HOST]),
        ("both", &[ZONE, HOST]),
    ];
    let mut filter = c.benchmark_group("filter/1000nodes-10000pods");
    for (label, keys) in sets {
        let mut s = cluster(1000, 10_000, 10);
        let pl = plugin(&mut s);
        let pod = incoming(&mut s, keys, "DoNotSchedule");
        filter.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| {
                let mut state = CycleState::new();
                pl.pre_filter(&mut state, &pod, &s);
                let mut feasible = 0;
                for n in s.nodes() {
                    feasible += usize::from(pl.filter(&state, &pod, n, &s).is_success());
                }
                black_box(feasible)
            })
        });
    }
    filter.finish();

    let mut score = c.benchmark_group("score/1000nodes-10000pods-500feasible");
    for (label, keys) in sets {
        let mut s = cluster(1000, 10_000, 10);
        let pl = plugin(&mut s);
        let pod = incoming(&mut s, keys, "ScheduleAnyway");
        let feasible: Vec<NodeId> = s.nodes().iter().take(500).map(|n| n.id).collect();
        score.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| {
                let mut state = CycleState::new();
                pl.pre_score(&mut state, &pod, &feasible, &s);
                let mut scores: Vec<NodeScore> = feasible
                    .iter()
                    .map(|&id| NodeScore {
                        node: id,
                        score: pl.score(&state, &pod, s.node(id), &s).unwrap_or(0),
                    })
                    .collect();
                pl.normalize_score(&state, &pod, &mut scores);
                black_box(scores)
            })
        });
    }
    score.finish();
}

criterion_group!(pts, benches);
criterion_main!(pts);
