//! Every request carries topospread's User-Agent, as kube-scheduler's carry its own.

use std::time::Duration;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_names_topospread_and_the_command() {
    let fake = cluster(3);
    for i in 0..6 {
        fake.insert(spread_pod(&format!("p-{i}"), "p")).unwrap();
    }
    let served = fake.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&served.kubeconfig()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let client = topospread_serve::client_from_config(config, "serve", Default::default()).unwrap();
    let running = topospread_serve::start(client, options(true, "agent")).unwrap();
    eventually(Duration::from_secs(20), "every pod bound", || async {
        all_bound(&fake)
    })
    .await;
    running.shutdown().await.unwrap();
    served.shutdown().await;
    let expected = format!("topospread/{} (serve)", env!("CARGO_PKG_VERSION"));
    assert_eq!(topospread_serve::user_agent("serve"), expected);
    let requests = fake.requests();
    // Lists, watches, the Lease, binds and events all went out.
    for verb in ["list", "watch", "create", "update"] {
        assert!(requests.iter().any(|r| r.verb == verb), "no {verb}");
    }
    let without: Vec<_> = requests
        .iter()
        .filter(|r| r.user_agent.as_deref() != Some(expected.as_str()))
        .collect();
    assert!(
        without.is_empty(),
        "{} requests without it: {:?}",
        without.len(),
        &without[..without.len().min(3)]
    );
}
