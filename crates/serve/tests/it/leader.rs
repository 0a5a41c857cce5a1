//! Leader election: the elector against the fake, and two replicas with leader changes.

use std::time::Duration;

use topospread_fakeapi::{FakeApi, Faults};
use topospread_serve::{Elector, LeaseConfig};

use crate::support::*;

fn lease(identity: &str) -> LeaseConfig {
    LeaseConfig {
        namespace: "topospread-system".into(),
        name: "topospread".into(),
        identity: identity.into(),
        lease_duration: Duration::from_secs(15),
        renew_deadline: Duration::from_secs(10),
        retry_period: Duration::from_secs(2),
    }
}

#[tokio::test(start_paused = true)]
async fn a_lease_changes_hands_only_after_it_expires() {
    let fake = FakeApi::new();
    let client = kube::Client::new(fake.router(), "default");
    let mut a = Elector::new(client.clone(), lease("a"));
    let mut b = Elector::new(client, lease("b"));
    assert!(a.try_acquire_or_renew().await.unwrap());
    assert!(!b.try_acquire_or_renew().await.unwrap());
    assert_eq!(holder(&fake), "a");
    // a renews within the lease: b keeps seeing a changing record and waits.
    tokio::time::advance(Duration::from_secs(10)).await;
    assert!(a.try_acquire_or_renew().await.unwrap());
    assert!(!b.try_acquire_or_renew().await.unwrap());
    tokio::time::advance(Duration::from_secs(10)).await;
    assert!(
        !b.try_acquire_or_renew().await.unwrap(),
        "b saw a renew only 10s ago"
    );
    // a stops renewing: after a full lease duration since b saw the last change, b takes it.
    tokio::time::advance(Duration::from_secs(16)).await;
    assert!(b.try_acquire_or_renew().await.unwrap());
    assert_eq!(holder(&fake), "b");
    let l = fake
        .get(
            "leases.coordination.k8s.io",
            "topospread-system",
            "topospread",
        )
        .unwrap()
        .unwrap();
    assert_eq!(l["spec"]["leaseTransitions"], 1);
    // a comes back: the record changed under it, so it waits instead of taking it back.
    assert!(!a.try_acquire_or_renew().await.unwrap());
    // A released lease is free at once.
    b.release().await;
    assert_eq!(holder(&fake), "");
    assert!(a.try_acquire_or_renew().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_with_leader_changes_never_bind_twice() {
    let fake = cluster(6);
    for i in 0..30 {
        fake.insert(spread_pod(&format!("a-{i:02}"), "a")).unwrap();
    }
    let first = start(&fake, options(true, "first"));
    eventually(Duration::from_secs(10), "first leads", || async {
        holder(&fake) == "first"
    })
    .await;
    let second = start(&fake, options(true, "second"));
    eventually(Duration::from_secs(20), "batch 1 bound", || async {
        all_bound(&fake)
    })
    .await;
    assert_eq!(holder(&fake), "first");

    // A graceful handover: first releases the lease, second takes it at once.
    first.shutdown().await.unwrap();
    for i in 0..30 {
        fake.insert(spread_pod(&format!("b-{i:02}"), "b")).unwrap();
    }
    eventually(Duration::from_secs(10), "second leads", || async {
        holder(&fake) == "second"
    })
    .await;
    eventually(Duration::from_secs(20), "batch 2 bound", || async {
        all_bound(&fake)
    })
    .await;

    // A hard loss: the leader cannot renew; it must stop (non-zero) before a third
    // replica takes over, and nothing is bound twice.
    let third = start(&fake, options(true, "third"));
    fake.set_faults(Faults::seeded(1).fail_requests(Some("update"), Some("leases"), 1.0));
    let lost = tokio::time::timeout(Duration::from_secs(10), second.wait())
        .await
        .expect("second stops when it cannot renew");
    assert!(
        matches!(lost, Err(topospread_serve::Error::LeaseLost { .. })),
        "{lost:?}"
    );
    fake.clear_faults();
    for i in 0..30 {
        fake.insert(spread_pod(&format!("c-{i:02}"), "c")).unwrap();
    }
    eventually(Duration::from_secs(15), "third leads", || async {
        holder(&fake) == "third"
    })
    .await;
    eventually(Duration::from_secs(20), "batch 3 bound", || async {
        all_bound(&fake)
    })
    .await;
    third.shutdown().await.unwrap();
    assert_bound_once(&fake);
    assert_zone_skew(&fake);
}

fn leader_election(le: serde_json::Value) -> topospread::config::LeaderElection {
    serde_json::from_value(le).unwrap()
}

#[test]
fn without_a_resource_name_the_lease_is_topospread_in_the_running_namespace() {
    let le = leader_election(serde_json::json!({"leaderElect": true}));
    let c = LeaseConfig::from_config(&le, "me".into(), "team-a", false).unwrap();
    assert_eq!(
        (c.namespace.as_str(), c.name.as_str()),
        ("team-a", "topospread")
    );
    // An explicit namespace wins; an explicit name of its own is kept.
    let le = leader_election(
        serde_json::json!({"resourceNamespace": "ops", "resourceName": "spread-lock"}),
    );
    let c = LeaseConfig::from_config(&le, "me".into(), "team-a", false).unwrap();
    assert_eq!(
        (c.namespace.as_str(), c.name.as_str()),
        ("ops", "spread-lock")
    );
    // POD_NAMESPACE, then the service account's file, then kube-system.
    let ns = topospread_serve::namespace_from;
    assert_eq!(ns(Some("a".into()), Some("b\n".into())), "a");
    assert_eq!(ns(Some(String::new()), Some("b\n".into())), "b");
    assert_eq!(ns(None, None), "kube-system");
}

#[tokio::test]
async fn kube_schedulers_own_lease_is_refused_unless_allowed() {
    let le = leader_election(serde_json::json!({"resourceName": "kube-scheduler"}));
    let e = LeaseConfig::from_config(&le, "me".into(), "kube-system", false)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("configuration: leaderElection.resourceName: \"kube-scheduler\"")
            && e.contains("--allow-kube-scheduler-lease")
            && !e.contains('\n'),
        "{e}"
    );
    let c = LeaseConfig::from_config(&le, "me".into(), "kube-system", true).unwrap();
    assert_eq!(c.name, "kube-scheduler");
    // start() refuses it before any request reaches the server.
    let fake = FakeApi::new();
    let mut o = options(true, "me");
    o.config.leader_election = Some(leader_election(serde_json::json!({
        "leaderElect": true, "resourceName": "kube-scheduler"})));
    let client = kube::Client::new(fake.router(), "default");
    let r = topospread_serve::start(client, o).map(|_| ());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        matches!(r, Err(topospread_serve::Error::Config { .. })),
        "{r:?}"
    );
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

/// Another holder renews `ns/topospread` every 500 ms until `stop`.
fn keep_renewing(fake: &FakeApi, ns: &str, holder: &str) -> tokio::task::JoinHandle<()> {
    fake.insert(serde_json::json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "topospread", "namespace": ns},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 3,
                 "renewTime": "2026-01-01T00:00:00.000000Z"}}))
        .unwrap();
    let (fake, ns) = (fake.clone(), ns.to_string());
    tokio::spawn(async move {
        for i in 0u64.. {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let _ = fake.modify("leases.coordination.k8s.io", &ns, "topospread", |l| {
                l["spec"]["renewTime"] = format!("2026-01-01T00:00:{:02}.000000Z", i % 60).into();
            });
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_kept_from_its_lease_is_not_ready_and_says_who_holds_it() {
    let fake = cluster(3);
    let renewer = keep_renewing(&fake, "team-a", "someone-else");
    let mut o = options(true, "me");
    o.config.leader_election = Some(leader_election(serde_json::json!({
        "leaderElect": true, "leaseDuration": "3s", "renewDeadline": "2s",
        "retryPeriod": "250ms"})));
    o.lease_namespace = "team-a".into();
    let running = start(&fake, o);
    eventually(Duration::from_secs(5), "caches synced", || async {
        running
            .handle()
            .cache_view()
            .await
            .is_some_and(|v| v.synced)
    })
    .await;
    // Synced, within one lease duration of waiting: ready.
    assert!(running.handle().ready());
    eventually(
        Duration::from_secs(6),
        "not ready after a lease duration",
        || async { !running.handle().ready() },
    )
    .await;
    let blocked = running.handle().leadership().blocked().unwrap();
    assert_eq!(
        (blocked.lease.as_str(), blocked.holder.as_str()),
        ("team-a/topospread", "someone-else")
    );
    // kube-scheduler's Lease was never touched.
    assert!(
        fake.requests()
            .iter()
            .filter(|r| r.resource.as_deref() == Some("leases"))
            .all(|r| r.name.as_deref() == Some("topospread")
                && r.namespace.as_deref() == Some("team-a"))
    );
    // The holder goes away and releases: this replica takes the Lease and is ready.
    renewer.abort();
    fake.modify("leases.coordination.k8s.io", "team-a", "topospread", |l| {
        l["spec"]["holderIdentity"] = "".into();
    })
    .unwrap();
    eventually(Duration::from_secs(10), "ready once it leads", || async {
        running.handle().ready()
    })
    .await;
    assert!(running.handle().leadership().is_valid());
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_metrics_server_stops_the_scheduler_with_an_error() {
    let fake = cluster(1);
    let mut o = options(false, "me");
    o.listen = Some("127.0.0.1:0".parse().unwrap());
    let running = start(&fake, o);
    eventually(Duration::from_secs(5), "caches synced", || async {
        running.handle().ready()
    })
    .await;
    running.handle().abort_server();
    let r = tokio::time::timeout(Duration::from_secs(5), running.wait())
        .await
        .expect("the scheduler stops");
    assert!(
        matches!(
            &r,
            Err(topospread_serve::Error::TaskStopped { task, .. }) if *task == "the metrics and health server"
        ),
        "{r:?}"
    );
}
