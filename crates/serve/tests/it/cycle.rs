//! The scheduling cycle: binds, conditions, events, preemption, simulate's placements.

use std::time::Duration;

use serde_json::json;
use topospread_fakeapi::Faults;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binds_every_pending_pod_once_with_spread_holding() {
    let fake = cluster(9);
    for i in 0..60 {
        fake.insert(spread_pod(
            &format!("web-{i:02}"),
            if i % 2 == 0 { "web" } else { "api" },
        ))
        .unwrap();
    }
    let running = start(&fake, options(false, "a"));
    eventually(Duration::from_secs(20), "every pod bound", || async {
        all_bound(&fake)
    })
    .await;
    // Pods created after the initial list are scheduled too.
    for i in 0..12 {
        fake.insert(spread_pod(&format!("late-{i:02}"), "late"))
            .unwrap();
    }
    eventually(Duration::from_secs(20), "late pods bound", || async {
        all_bound(&fake)
    })
    .await;
    assert!(running.handle().ready());
    // The server has every binding; the loop counts each once its bind task reports.
    let scheduled =
        "scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"topospread\"} 72";
    eventually(Duration::from_secs(5), "72 binds counted", || async {
        running.handle().metrics().encode().contains(scheduled)
    })
    .await;
    running.shutdown().await.unwrap();
    assert_bound_once(&fake);
    assert_zone_skew(&fake);
    // A Scheduled event per pod, from the topospread reporting controller.
    let events = fake.list("events.events.k8s.io", Some("default")).unwrap();
    let scheduled = events.iter().filter(|e| e["reason"] == "Scheduled").count();
    assert!(scheduled > 0, "no Scheduled events");
    assert!(
        events
            .iter()
            .all(|e| e["reportingController"] == "topospread")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_faults_every_pod_is_bound_exactly_once() {
    let fake = cluster(9);
    for i in 0..90 {
        fake.insert(spread_pod(&format!("p-{i:02}"), ["a", "b", "c"][i % 3]))
            .unwrap();
    }
    fake.set_faults(
        Faults::seeded(3)
            .bind_conflicts(0.05)
            .fail_requests(Some("create"), Some("pods/binding"), 0.05)
            .drop_watches_after(Duration::from_millis(300)),
    );
    let running = start(&fake, options(false, "a"));
    eventually(
        Duration::from_secs(30),
        "every pod bound under faults",
        || async { all_bound(&fake) },
    )
    .await;
    fake.drop_watches();
    // Let the cache settle, then check it agrees with the server.
    eventually(
        Duration::from_secs(10),
        "cache follows the server",
        || async {
            let view = running.handle().cache_view().await.unwrap();
            view.pods == placements(&fake)
        },
    )
    .await;
    running.shutdown().await.unwrap();
    fake.clear_faults();
    assert_bound_once(&fake);
    assert_zone_skew(&fake);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unschedulable_pod_gets_condition_and_event() {
    let fake = cluster(3);
    let mut pod = spread_pod("stuck", "stuck");
    pod["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    fake.insert(pod).unwrap();
    let running = start(&fake, options(false, "a"));
    eventually(Duration::from_secs(10), "PodScheduled=False", || async {
        let pod = fake.get("pods", "default", "stuck").unwrap().unwrap();
        pod["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter().any(|c| {
                c["type"] == "PodScheduled"
                    && c["status"] == "False"
                    && c["reason"] == "Unschedulable"
                    && c["message"]
                        .as_str()
                        .is_some_and(|m| m.starts_with("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."))
            })
        })
    })
    .await;
    eventually(
        Duration::from_secs(10),
        "FailedScheduling event",
        || async {
            fake.list("events.events.k8s.io", Some("default"))
                .unwrap()
                .iter()
                .any(|e| {
                    e["reason"] == "FailedScheduling"
                        && e["regarding"]["name"] == "stuck"
                        && e["type"] == "Warning"
                })
        },
    )
    .await;
    // The pod is not retried because of its own status patch.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let attempts = running.handle().metrics().encode();
    assert!(
        attempts.contains(
            "scheduler_schedule_attempts_total{result=\"unschedulable\",profile=\"topospread\"} 1"
        ),
        "{attempts}"
    );
    // A node that matches arrives: the pod is scheduled there.
    let mut n = node("ssd-1", "a", "8");
    n["metadata"]["labels"]["disk"] = json!("ssd");
    fake.insert(n).unwrap();
    eventually(
        Duration::from_secs(10),
        "bound after the node event",
        || async {
            fake.get("pods", "default", "stuck").unwrap().unwrap()["spec"]["nodeName"] == "ssd-1"
        },
    )
    .await;
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preemption_nominates_and_deletes_victims() {
    let fake = topospread_fakeapi::FakeApi::new();
    fake.insert(
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "high"}, "value": 1000}),
    )
    .unwrap();
    fake.insert(node("n0", "a", "1")).unwrap();
    fake.insert(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "low", "namespace": "default"},
        "spec": {"nodeName": "n0", "containers": [{"name": "c", "image": "x",
            "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Running"}}))
        .unwrap();
    fake.insert(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "high", "namespace": "default"},
        "spec": {"schedulerName": SCHEDULER, "priorityClassName": "high",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}))
        .unwrap();
    let running = start(&fake, options(false, "a"));
    eventually(
        Duration::from_secs(15),
        "the preemptor bound in the victim's place",
        || async {
            fake.get("pods", "default", "low").unwrap().is_none()
                && fake.get("pods", "default", "high").unwrap().unwrap()["spec"]["nodeName"] == "n0"
        },
    )
    .await;
    eventually(Duration::from_secs(5), "nominatedNodeName set", || async {
        fake.get("pods", "default", "high").unwrap().unwrap()["status"]["nominatedNodeName"] == "n0"
    })
    .await;
    let metrics = running.handle().metrics().encode();
    let attempts: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("scheduler_preemption_attempts_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    assert!(attempts >= 1, "{metrics}");
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_placements_equal_simulate() {
    let fake = cluster(12);
    let mut objects = Vec::new();
    for n in fake.list("nodes", None).unwrap() {
        objects.push(n);
    }
    for i in 0..30 {
        let pod = fake
            .insert(spread_pod(&format!("p{i:02}"), ["x", "y"][i % 2]))
            .unwrap();
        objects.push(pod);
    }
    // simulate over the same objects, with the same configuration and seed.
    let text = objects
        .iter()
        .map(|o| serde_json::to_string(o).unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let loaded = topospread_k8s::load::parse_manifests(&text, "cluster").unwrap();
    let mut snapshot = topospread_k8s::build::build_snapshot(&loaded.objects).unwrap();
    let mut scheduler =
        topospread::Scheduler::new(&config(false), Default::default(), &mut snapshot).unwrap();
    scheduler.set_seed(7);
    let mut sim = topospread::Simulation::new(scheduler);
    sim.enqueue_pending(&snapshot);
    sim.run(&mut snapshot, |_, _| {}).unwrap();
    let expected: std::collections::BTreeMap<String, Option<String>> = snapshot
        .pods()
        .map(|(id, p)| {
            (
                format!("default/{}", p.name),
                snapshot
                    .pod_node(id)
                    .map(|n| snapshot.node(n).node.name.to_string()),
            )
        })
        .collect();

    let running = start(&fake, options(false, "a"));
    eventually(Duration::from_secs(20), "every pod bound", || async {
        all_bound(&fake)
    })
    .await;
    running.shutdown().await.unwrap();
    assert_eq!(placements(&fake), expected);
}
