//! Client limits as kube-scheduler's: one token bucket for every request, and 429 with
//! `Retry-After` ridden out.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams};
use topospread_fakeapi::Faults;
use topospread_serve::{ClientLimits, Clients, client_over};

use crate::support::*;

/// `n` node lists at once through `client`; how long they took.
async fn lists(client: &kube::Client, n: usize) -> Duration {
    let started = Instant::now();
    let all = (0..n).map(|_| {
        let api: Api<Node> = Api::all(client.clone());
        async move { api.list(&ListParams::default()).await.unwrap() }
    });
    futures::future::join_all(all).await;
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_waits_on_one_token_bucket() {
    let fake = cluster(1);
    let limited = client_over(
        fake.router(),
        ClientLimits {
            qps: 20.0,
            burst: 1,
        },
        "default",
    );
    // One token at once, then 20 a second: 21 requests take a second, shared by clones.
    let took = lists(&limited, 21).await;
    assert!(took >= Duration::from_millis(950), "{took:?}");
    let unlimited = client_over(fake.router(), ClientLimits::UNLIMITED, "default");
    let took = lists(&unlimited, 21).await;
    assert!(took < Duration::from_millis(500), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_storm_is_ridden_out_with_no_pod_lost_or_bound_twice() {
    let fake = cluster(6);
    for i in 0..30 {
        fake.insert(spread_pod(&format!("p-{i:02}"), ["a", "b", "c"][i % 3]))
            .unwrap();
    }
    // A third of every request (lists, watches, binds, events, status patches) is
    // answered 429 with Retry-After: 1.
    fake.set_faults(Faults::seeded(5).throttle(None, None, 0.3, Duration::from_secs(1)));
    let client = client_over(fake.router(), ClientLimits::default(), "default");
    let started = Instant::now();
    let running = topospread_serve::start(client, options(false, "a")).unwrap();
    eventually(
        Duration::from_secs(60),
        "every pod bound through the storm",
        || async { all_bound(&fake) },
    )
    .await;
    // Retries waited out the server's Retry-After.
    assert!(started.elapsed() >= Duration::from_secs(1));
    eventually(
        Duration::from_secs(20),
        "cache follows the server",
        || async {
            let view = running.handle().cache_view().await.unwrap();
            view.pods == placements(&fake)
        },
    )
    .await;
    running.shutdown().await.unwrap();
    fake.clear_faults();
    let throttled = fake.requests().iter().filter(|r| r.status == 429).count();
    assert!(throttled > 0, "no 429 was answered");
    assert_bound_once(&fake);
    assert_zone_skew(&fake);
}

/// Three clients over the fake, each with its own bucket of `limits`.
fn own_buckets(fake: &topospread_fakeapi::FakeApi, limits: ClientLimits) -> Clients {
    Clients {
        scheduler: client_over(fake.router(), limits, "default"),
        events: client_over(fake.router(), limits, "default"),
        leader_election: client_over(fake.router(), limits, "default"),
    }
}

/// 24 pending pods over six nodes: 24 binds at 5 requests a second queue for ~5 s,
/// more than twice the renew deadline (2 s).
fn backlogged_cluster() -> topospread_fakeapi::FakeApi {
    let fake = cluster(6);
    for i in 0..24 {
        fake.insert(spread_pod(&format!("p-{i:02}"), ["a", "b", "c"][i % 3]))
            .unwrap();
    }
    fake
}

/// 5 requests a second with no burst: the binds queue in the scheduler's bucket.
const SLOW: ClientLimits = ClientLimits { qps: 5.0, burst: 1 };

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bind_backlog_does_not_starve_the_lease() {
    let fake = backlogged_cluster();
    let running = topospread_serve::start(own_buckets(&fake, SLOW), options(true, "a")).unwrap();
    eventually(Duration::from_secs(40), "every pod bound", || async {
        all_bound(&fake)
    })
    .await;
    // The Lease was renewed through its own bucket all along.
    running.shutdown().await.unwrap();
    assert_bound_once(&fake);
}

/// The same backlog with one bucket for everything: renewals wait behind the binds and
/// the Lease is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bind_backlog_in_a_shared_bucket_starves_the_lease() {
    let fake = backlogged_cluster();
    let shared = client_over(fake.router(), SLOW, "default");
    let running = topospread_serve::start(shared, options(true, "a")).unwrap();
    let stopped = tokio::time::timeout(Duration::from_secs(40), running.wait())
        .await
        .unwrap();
    assert!(
        matches!(stopped, Err(topospread_serve::Error::LeaseLost { .. })),
        "{stopped:?}"
    );
}
