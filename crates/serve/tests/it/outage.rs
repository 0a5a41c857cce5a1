//! API server outages, as client-go's leader election rides them: one shorter than
//! `renewDeadline` is ridden out (the lease is kept, watches resume, pods created
//! meanwhile are scheduled); a longer one ends leadership and stops the scheduler.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::json;
use topospread_fakeapi::{FakeApi, Served};
use topospread_serve::{Options, Running};

use crate::support::*;

/// Leader election that rides out a shorter outage: the leader renews every 500 ms and
/// gives up `renew_deadline` seconds after its last successful renewal (the lease lasts
/// 5 s longer).
fn options_with_lease(renew_deadline: u64) -> Options {
    let (lease, renew) = (
        format!("{}s", renew_deadline + 5),
        format!("{renew_deadline}s"),
    );
    let doc = json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 1,
        "leaderElection": {"leaderElect": true, "resourceNamespace": "topospread-system",
            "resourceName": "topospread", "leaseDuration": lease, "renewDeadline": renew,
            "retryPeriod": "500ms"},
        "profiles": [{"schedulerName": SCHEDULER}],
    });
    let config = topospread::check_configuration(&doc, topospread::Features::default()).unwrap();
    let mut o = Options::new(config);
    o.identity = "leader".into();
    o.seed = 7;
    o
}

/// Serves `fake` over TCP and starts the scheduler against it through a real client,
/// giving up leadership `renew_deadline` seconds after its last renewal.
async fn start_over_tcp(fake: &FakeApi, renew_deadline: u64) -> (Served, Running) {
    let served = fake.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&served.kubeconfig()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let client = topospread_serve::client_from_config(config, "serve", Default::default()).unwrap();
    let running = topospread_serve::start(client, options_with_lease(renew_deadline)).unwrap();
    (served, running)
}

/// Takes the server down: open watches end, connections close, the port refuses.
async fn outage(served: Served) -> SocketAddr {
    let addr = served.addr();
    served.shutdown().await;
    addr
}

async fn first_batch_bound(fake: &FakeApi) {
    for i in 0..9 {
        fake.insert(spread_pod(&format!("a-{i}"), "a")).unwrap();
    }
    eventually(Duration::from_secs(20), "the first batch bound", || async {
        all_bound(fake)
    })
    .await;
    assert_eq!(holder(fake), "leader");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_shorter_than_the_renew_deadline_is_ridden_out() {
    let fake = cluster(6);
    // A 3 s outage against a 10 s renew deadline.
    let (served, running) = start_over_tcp(&fake, 10).await;
    first_batch_bound(&fake).await;

    let down = std::time::Instant::now();
    let addr = outage(served).await;
    // Pods created while the scheduler cannot see them (as the server's own
    // controllers would go on creating them).
    for i in 0..9 {
        fake.insert(spread_pod(&format!("b-{i}"), "b")).unwrap();
    }
    tokio::time::sleep(Duration::from_secs(3).saturating_sub(down.elapsed())).await;
    assert!(
        running.handle().leadership().is_valid(),
        "still leading {:?} into the outage",
        down.elapsed()
    );
    let served = fake.serve(addr).await.expect("the same port again");

    eventually(
        Duration::from_secs(30),
        "pods created during the outage bound",
        || async { all_bound(&fake) },
    )
    .await;
    assert_eq!(holder(&fake), "leader", "the lease never changed hands");
    assert!(running.handle().leadership().is_valid());
    running.shutdown().await.unwrap();
    served.shutdown().await;
    assert_bound_once(&fake);
    assert_zone_skew(&fake);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_longer_than_the_renew_deadline_ends_leadership() {
    let fake = cluster(6);
    // An outage that does not end, against a 3 s renew deadline.
    let (served, running) = start_over_tcp(&fake, 3).await;
    first_batch_bound(&fake).await;

    let _addr = outage(served).await;
    let stopped = tokio::time::timeout(Duration::from_secs(25), running.wait())
        .await
        .expect("the scheduler stops once renewDeadline passes without a renewal");
    assert!(
        matches!(stopped, Err(topospread_serve::Error::LeaseLost { .. })),
        "{stopped:?}"
    );
}
