//! Fault injection and the request log.

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams, PostParams};
use kube::runtime::watcher::{self, Event, watcher};
use serde_json::{Value, json};
use topospread_fakeapi::{FakeApi, Faults};

use crate::support::{add_pod, api_error, next, setup};

fn binding(pod: &str, node: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod},
           "target": {"kind": "Node", "name": node}})
}

async fn bind(pods: &Api<Pod>, pod: &str) -> Result<Value, kube::Error> {
    pods.create_subresource("binding", pod, &PostParams::default(), &binding(pod, "n1"))
        .await
}

#[tokio::test]
async fn failed_requests_by_verb_and_resource() {
    let (fake, client) = setup();
    fake.set_faults(Faults::seeded(1).fail_requests(Some("list"), Some("pods"), 1.0));
    let pods: Api<Pod> = Api::all(client.clone());
    let (code, reason, _) = api_error(&pods.list(&ListParams::default()).await.unwrap_err());
    assert_eq!((code, reason.as_str()), (500, "InternalError"));
    let nodes: Api<Node> = Api::all(client);
    nodes.list(&ListParams::default()).await.unwrap();
    fake.clear_faults();
    pods.list(&ListParams::default()).await.unwrap();
    let statuses: Vec<u16> = fake.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [500, 200, 200]);
}

/// Binds every pod, retrying transient conflicts; returns each attempt's code.
async fn bind_all(fake: &FakeApi, client: kube::Client, n: usize) -> Vec<u16> {
    let pods: Api<Pod> = Api::default_namespaced(client);
    let mut codes = Vec::new();
    for i in 0..n {
        let name = format!("p{i}");
        loop {
            match bind(&pods, &name).await {
                Ok(_) => {
                    codes.push(201);
                    break;
                }
                Err(e) => {
                    let (code, _, message) = api_error(&e);
                    assert_eq!(code, 409);
                    assert!(
                        message.contains("the object has been modified"),
                        "{message}"
                    );
                    let unbound = fake.get("pods", "default", &name).unwrap().unwrap();
                    assert!(
                        unbound["spec"].get("nodeName").is_none(),
                        "a failed bind leaves the pod"
                    );
                    codes.push(code);
                }
            }
        }
    }
    codes
}

#[tokio::test]
async fn transient_bind_conflicts_are_deterministic() {
    let run = || async {
        let (fake, client) = setup();
        for i in 0..20 {
            add_pod(&fake, &format!("p{i}"));
        }
        fake.set_faults(Faults::seeded(42).bind_conflicts(0.4));
        let codes = bind_all(&fake, client, 20).await;
        for i in 0..20 {
            assert_eq!(
                fake.bindings("default", &format!("p{i}")),
                1,
                "bound exactly once"
            );
        }
        codes
    };
    let first = run().await;
    assert!(first.contains(&409), "some binds failed: {first:?}");
    assert_eq!(first, run().await, "same seed, same faults");
}

#[tokio::test]
async fn latency_delays_requests() {
    let (fake, client) = setup();
    add_pod(&fake, "p");
    fake.set_faults(Faults::seeded(0).latency(Duration::from_millis(60)));
    let pods: Api<Pod> = Api::default_namespaced(client);
    let start = Instant::now();
    pods.get("p").await.unwrap();
    assert!(start.elapsed() >= Duration::from_millis(60));
}

#[tokio::test]
async fn watches_dropped_every_few_hundred_ms_lose_nothing() {
    let (fake, client) = setup();
    fake.set_faults(Faults::seeded(0).drop_watches_after(Duration::from_millis(150)));
    let pods: Api<Pod> = Api::default_namespaced(client);
    let mut stream = watcher(pods, watcher::Config::default()).boxed();
    loop {
        if matches!(next(&mut stream).await.unwrap(), Event::InitDone) {
            break;
        }
    }
    let writer = {
        let fake = fake.clone();
        tokio::spawn(async move {
            for i in 0..8 {
                add_pod(&fake, &format!("p{i}"));
                tokio::time::sleep(Duration::from_millis(70)).await;
            }
        })
    };
    let mut seen = Vec::new();
    while seen.len() < 8 {
        match next(&mut stream).await.unwrap() {
            Event::Apply(p) => seen.push(p.metadata.name.unwrap()),
            other => panic!("{other:?}"),
        }
    }
    writer.await.unwrap();
    let expected: Vec<String> = (0..8).map(|i| format!("p{i}")).collect();
    assert_eq!(seen, expected);
    let watches = fake.requests().iter().filter(|r| r.verb == "watch").count();
    assert!(watches >= 3, "{watches} watch requests");
}

/// verb, resource[/subresource], namespace, name, status.
type Seen = (String, Option<String>, Option<String>, Option<String>, u16);

#[tokio::test]
async fn request_log_speaks_kubernetes() {
    let (fake, client) = setup();
    add_pod(&fake, "p");
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    pods.list(&ListParams::default()).await.unwrap();
    bind(&pods, "p").await.unwrap();
    pods.patch_status(
        "p",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"status": {"phase": "Running"}})),
    )
    .await
    .unwrap();
    let nodes: Api<Node> = Api::all(client.clone());
    let _ = nodes.get("missing").await;
    client.apiserver_version().await.unwrap();
    let seen: Vec<Seen> = fake
        .requests()
        .into_iter()
        .map(|r| {
            (
                r.verb.clone(),
                r.rbac_resource(),
                r.namespace.clone(),
                r.name.clone(),
                r.status,
            )
        })
        .collect();
    let s = |x: &str| Some(x.to_owned());
    assert_eq!(
        seen,
        [
            ("list".into(), s("pods"), s("default"), None, 200),
            (
                "create".into(),
                s("pods/binding"),
                s("default"),
                s("p"),
                201
            ),
            ("patch".into(), s("pods/status"), s("default"), s("p"), 200),
            ("get".into(), s("nodes"), None, s("missing"), 404),
            ("get".into(), None, None, None, 200),
        ]
    );
    assert_eq!(fake.requests()[4].path, "/version");
}
