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

fn holder(fake: &FakeApi) -> String {
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
