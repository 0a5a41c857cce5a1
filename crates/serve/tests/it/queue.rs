//! The live queue on a paused tokio clock: an event a rejecting plugin registered moves
//! the pod to backoffQ (its backoff from the configuration's `podInitialBackoffSeconds`),
//! from which it is popped at once when activeQ is empty (`SchedulerPopFromBackoffQ`, on
//! since 1.33); without such an event it stays among the unschedulable pods.

use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;
use topospread_serve::Options;

use crate::support::*;

fn options_with_backoff(initial: u64, max: u64) -> Options {
    let doc = json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "podInitialBackoffSeconds": initial,
        "podMaxBackoffSeconds": max,
        "leaderElection": {"leaderElect": false},
        "profiles": [{"schedulerName": SCHEDULER}],
    });
    let mut o = Options::new(
        topospread::check_configuration(&doc, topospread::Features::default()).unwrap(),
    );
    o.identity = "a".into();
    o.seed = 7;
    o
}

/// Waits (in the paused clock's time) until `check` holds; the instant it was first seen.
async fn until(what: &str, timeout: Duration, mut check: impl FnMut() -> bool) -> Instant {
    let deadline = Instant::now() + timeout;
    loop {
        if check() {
            return Instant::now();
        }
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn unschedulable(fake: &topospread_fakeapi::FakeApi, name: &str) -> bool {
    let pod = fake.get("pods", "default", name).unwrap().unwrap();
    pod["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "PodScheduled" && c["reason"] == "Unschedulable")
    })
}

fn bound(fake: &topospread_fakeapi::FakeApi, name: &str) -> bool {
    fake.get("pods", "default", name).unwrap().unwrap()["spec"]["nodeName"].is_string()
}

#[tokio::test(start_paused = true)]
async fn a_moved_pod_is_popped_from_backoff_when_nothing_else_is_active() {
    let fake = cluster(3);
    let mut pod = spread_pod("stuck", "stuck");
    pod["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    fake.insert(pod).unwrap();
    let running = start(&fake, options_with_backoff(4, 10));
    let failed = until("the first failure", Duration::from_secs(30), || {
        unschedulable(&fake, "stuck")
    })
    .await;
    // A node that fits arrives at once: the pod moves to backoffQ (4 s from its
    // failure), and activeQ being empty, it is popped from there without waiting.
    let mut n = node("ssd-1", "a", "8");
    n["metadata"]["labels"]["disk"] = json!("ssd");
    fake.insert(n).unwrap();
    let bound_at = until("the bind", Duration::from_secs(60), || {
        bound(&fake, "stuck")
    })
    .await;
    let waited = bound_at - failed;
    assert!(
        waited < Duration::from_secs(1),
        "activeQ was empty: the pod should not wait out its 4 s backoff, it waited {waited:?}"
    );
    let metrics = running.handle().metrics().encode();
    assert!(
        metrics.contains(
            "scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"topospread\"} 1"
        ),
        "{metrics}"
    );
    running.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn without_an_event_that_helps_a_pod_stays_unschedulable() {
    let fake = cluster(3);
    let mut pod = spread_pod("stuck", "stuck");
    pod["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    fake.insert(pod).unwrap();
    let running = start(&fake, options_with_backoff(1, 1));
    until("the first failure", Duration::from_secs(30), || {
        unschedulable(&fake, "stuck")
    })
    .await;
    // A node that does not match: NodeAffinity registered Node/Add, so the pod is tried
    // again (after its backoff) and fails again; nothing else retries it for a minute.
    fake.insert(node("plain", "b", "8")).unwrap();
    tokio::time::sleep(Duration::from_secs(50)).await;
    assert!(!bound(&fake, "stuck"));
    let metrics = running.handle().metrics().encode();
    assert!(
        metrics.contains(
            "scheduler_schedule_attempts_total{result=\"unschedulable\",profile=\"topospread\"} 2"
        ),
        "one retry for the node event, none from the clock: {metrics}"
    );
    running.shutdown().await.unwrap();
}
