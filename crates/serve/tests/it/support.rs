//! Helpers: a fake cluster, a configuration, waiting with a deadline.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use serde_json::{Value, json};
use topospread::SchedulerConfig;
use topospread_fakeapi::FakeApi;
use topospread_serve::{Options, Running};

pub const SCHEDULER: &str = "topospread";

/// A configuration with one `topospread` profile, short backoffs and, when asked,
/// leader election with short (but well-ordered) timings.
pub fn config(leader: bool) -> SchedulerConfig {
    let le = if leader {
        json!({"leaderElect": true, "resourceNamespace": "topospread-system", "resourceName": "topospread",
               "leaseDuration": "3s", "renewDeadline": "2s", "retryPeriod": "250ms"})
    } else {
        json!({"leaderElect": false})
    };
    let doc = json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 1,
        "leaderElection": le,
        "profiles": [{"schedulerName": SCHEDULER}],
    });
    topospread::check_configuration(&doc, topospread::Features::default()).unwrap()
}

pub fn options(leader: bool, identity: &str) -> Options {
    let mut o = Options::new(config(leader));
    o.identity = identity.to_string();
    o.seed = 7;
    o
}

pub fn start(fake: &FakeApi, options: Options) -> Running {
    let client = kube::Client::new(fake.router(), "default");
    topospread_serve::start(client, options).unwrap()
}

pub fn node(name: &str, zone: &str, cpu: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
        "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"},
                   "capacity": {"cpu": cpu, "memory": "64Gi", "pods": "110"}}})
}

/// A pending pod of `app` spread over zones (maxSkew 1, DoNotSchedule) and hostnames
/// (maxSkew 1, ScheduleAnyway).
pub fn spread_pod(name: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
        "spec": {"schedulerName": SCHEDULER,
            "containers": [{"name": "c", "image": "nginx",
                "resources": {"requests": {"cpu": "100m"}}}],
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                 "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": app}}},
                {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                 "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": app}}}]}})
}

/// A fake with `nodes` nodes over three zones.
pub fn cluster(nodes: usize) -> FakeApi {
    let fake = FakeApi::new();
    for i in 0..nodes {
        let zone = ["a", "b", "c"][i % 3];
        fake.insert(node(&format!("n{i:02}"), zone, "8")).unwrap();
    }
    fake
}

/// Polls `check` every 20 ms until it holds or `timeout` passes.
pub async fn eventually<F, Fut>(timeout: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if check().await {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {timeout:?} waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `name -> spec.nodeName` of every pod on the server.
pub fn placements(fake: &FakeApi) -> BTreeMap<String, Option<String>> {
    fake.list("pods", None)
        .unwrap()
        .iter()
        .map(|p| {
            (
                format!(
                    "{}/{}",
                    p["metadata"]["namespace"].as_str().unwrap_or(""),
                    p["metadata"]["name"].as_str().unwrap_or("")
                ),
                p["spec"]["nodeName"].as_str().map(str::to_string),
            )
        })
        .collect()
}

pub fn all_bound(fake: &FakeApi) -> bool {
    placements(fake).values().all(Option::is_some)
}

/// Checks zone spread: per app, max - min pods over the three zones is at most 1.
pub fn assert_zone_skew(fake: &FakeApi) {
    let nodes: BTreeMap<String, String> = fake
        .list("nodes", None)
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["metadata"]["name"].as_str().unwrap().to_string(),
                n["metadata"]["labels"]["topology.kubernetes.io/zone"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    let mut counts: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    for p in fake.list("pods", None).unwrap() {
        let app = p["metadata"]["labels"]["app"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let Some(node) = p["spec"]["nodeName"].as_str() else {
            continue;
        };
        let zones = counts
            .entry(app)
            .or_insert_with(|| ["a", "b", "c"].iter().map(|z| (z.to_string(), 0)).collect());
        *zones.get_mut(&nodes[node]).unwrap() += 1;
    }
    for (app, zones) in counts {
        let max = zones.values().max().unwrap();
        let min = zones.values().min().unwrap();
        assert!(max - min <= 1, "app {app}: zone counts {zones:?}");
    }
}

/// Every pod was bound exactly once.
pub fn assert_bound_once(fake: &FakeApi) {
    let counts = fake.binding_counts();
    for (pod, node) in placements(fake) {
        assert!(node.is_some(), "{pod} is not bound");
        let (ns, name) = pod.split_once('/').unwrap();
        let n = counts
            .get(&(ns.to_string(), name.to_string()))
            .copied()
            .unwrap_or(0);
        assert_eq!(n, 1, "{pod} was bound {n} times");
    }
}

/// The holder of the scheduler's Lease `topospread-system/topospread` (empty: none).
pub fn holder(fake: &FakeApi) -> String {
    fake.get(
        "leases.coordination.k8s.io",
        "topospread-system",
        "topospread",
    )
    .unwrap()
    .map(|l| {
        l["spec"]["holderIdentity"]
            .as_str()
            .unwrap_or("")
            .to_string()
    })
    .unwrap_or_default()
}
