//! Against a real cluster: a pod with `schedulerName: topospread` in a fresh namespace is
//! bound by the scheduler. Ignored unless asked for: `TOPOSPREAD_E2E_KUBECONFIG=PATH
//! cargo test -p topospread-serve --test it -- --ignored e2e` (`.ci/run` does so when the
//! variable is set).

use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, DeleteParams, PostParams};

use crate::support::*;

#[tokio::test]
#[ignore = "needs a real cluster: TOPOSPREAD_E2E_KUBECONFIG names its kubeconfig"]
async fn e2e_schedules_a_pod_on_a_real_cluster() {
    let path = std::env::var("TOPOSPREAD_E2E_KUBECONFIG")
        .expect("TOPOSPREAD_E2E_KUBECONFIG names the real cluster's kubeconfig");
    let kubeconfig = kube::config::Kubeconfig::read_from(&path).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let ns_name = format!("topospread-e2e-{}", std::process::id());
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": ns_name}})).unwrap();
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let running = topospread_serve::start(client.clone(), options(false, "e2e")).unwrap();
    let pods: Api<Pod> = Api::namespaced(client, &ns_name);
    let mut pod = spread_pod("e2e", "e2e");
    pod["metadata"]["namespace"] = serde_json::json!(ns_name);
    let pod: Pod = serde_json::from_value(pod).unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let result = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let p = pods.get("e2e").await.unwrap();
            if let Some(node) = p.spec.and_then(|s| s.node_name) {
                return node;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
    .await;
    running.shutdown().await.unwrap();
    let _ = namespaces.delete(&ns_name, &DeleteParams::default()).await;
    assert!(result.is_ok(), "the pod was not bound within 60 s");
}
