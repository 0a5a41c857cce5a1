//! Create, get, replace, delete: metadata stamping, optimistic concurrency,
//! preconditions, errors as `Status`, events and discovery.

use axum::http::Request;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::api::events::v1::Event as EventV1;
use kube::api::{Api, DeleteParams, ListParams, PostParams, Preconditions};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use serde_json::{Value, json};

use crate::support::{api_error, pod, setup};

#[tokio::test]
async fn create_stamps_metadata_and_refuses_duplicates() {
    let (fake, client) = setup();
    let pods: Api<Pod> = Api::default_namespaced(client);
    let p: Pod = serde_json::from_value(pod("web", json!({"app": "web"}), None)).unwrap();
    let created = pods.create(&PostParams::default(), &p).await.unwrap();
    let meta = &created.metadata;
    assert!(meta.uid.as_deref().is_some_and(|u| u.len() == 36));
    assert!(meta.creation_timestamp.is_some());
    let rv: u64 = meta.resource_version.as_deref().unwrap().parse().unwrap();
    assert_eq!(rv, fake.resource_version());
    let status = created.status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Pending"));
    assert_eq!(created.spec.unwrap().priority, Some(0));

    let err = pods.create(&PostParams::default(), &p).await.unwrap_err();
    let (code, reason, message) = api_error(&err);
    assert_eq!(
        (code, reason.as_str(), message.as_str()),
        (409, "AlreadyExists", "pods \"web\" already exists")
    );

    let err = pods.get("nope").await.unwrap_err();
    let (code, reason, message) = api_error(&err);
    assert_eq!(
        (code, reason.as_str(), message.as_str()),
        (404, "NotFound", "pods \"nope\" not found")
    );

    // generateName gives a random suffix.
    let mut g = p.clone();
    g.metadata.name = None;
    g.metadata.generate_name = Some("web-".into());
    let a = pods.create(&PostParams::default(), &g).await.unwrap();
    let b = pods.create(&PostParams::default(), &g).await.unwrap();
    let (a, b) = (a.metadata.name.unwrap(), b.metadata.name.unwrap());
    assert!(a.starts_with("web-") && a.len() == 9 && a != b, "{a} {b}");
}

#[tokio::test]
async fn replace_checks_resource_version_and_bumps_generation() {
    let (_fake, client) = setup();
    let deployments: Api<Deployment> = Api::default_namespaced(client);
    let d: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                 "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}}},
        "status": {"replicas": 7},
    }))
    .unwrap();
    let created = deployments
        .create(&PostParams::default(), &d)
        .await
        .unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    let mut fresh = created.clone();
    fresh.spec.replicas = Some(3);
    fresh.status = None;
    let updated = deployments
        .replace("d", &PostParams::default(), &fresh)
        .await
        .unwrap();
    assert_eq!(updated.metadata.generation, Some(2));
    assert_eq!(updated.metadata.uid, created.metadata.uid);
    assert_eq!(
        updated.status.unwrap().replicas,
        Some(7),
        "main resource keeps status"
    );

    // The same stale object again: 409 Conflict.
    let err = deployments
        .replace("d", &PostParams::default(), &fresh)
        .await
        .unwrap_err();
    let (code, reason, message) = api_error(&err);
    assert_eq!((code, reason.as_str()), (409, "Conflict"));
    assert_eq!(
        message,
        "Operation cannot be fulfilled on deployments.apps \"d\": the object has been modified; \
         please apply your changes to the latest version and try again"
    );
}

#[tokio::test]
async fn delete_honours_preconditions() {
    let (fake, client) = setup();
    let created = fake.insert(pod("p", json!({}), None)).unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client);
    let wrong = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("not-the-uid".into()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    let err = pods.delete("p", &wrong).await.unwrap_err();
    let (code, _, message) = api_error(&err);
    assert_eq!(code, 409);
    assert!(
        message.contains("Precondition failed: UID in precondition: not-the-uid"),
        "{message}"
    );
    let right = DeleteParams {
        preconditions: Some(Preconditions {
            uid: created["metadata"]["uid"].as_str().map(str::to_owned),
            resource_version: None,
        }),
        grace_period_seconds: Some(30),
        ..DeleteParams::default()
    };
    let gone = pods.delete("p", &right).await.unwrap();
    assert!(gone.left().is_some());
    assert!(fake.get("pods", "default", "p").unwrap().is_none());
    assert_eq!(
        api_error(
            &pods
                .delete("p", &DeleteParams::default())
                .await
                .unwrap_err()
        )
        .0,
        404
    );
}

#[tokio::test]
async fn bad_requests_get_a_status() {
    let (_fake, client) = setup();
    let req = Request::post("/api/v1/namespaces/default/pods")
        .header("content-type", "application/json")
        .body(b"{not json".to_vec())
        .unwrap();
    let err = client.request::<Value>(req).await.unwrap_err();
    let (code, reason, message) = api_error(&err);
    assert_eq!((code, reason.as_str()), (400, "BadRequest"));
    assert!(message.contains("not valid JSON"), "{message}");

    let req = Request::post("/api/v1/namespaces/default/pods")
        .body(br#"{"apiVersion":"apps/v1","kind":"Pod","metadata":{"name":"x"}}"#.to_vec())
        .unwrap();
    assert_eq!(
        api_error(&client.request::<Value>(req).await.unwrap_err()).0,
        400
    );

    let req = Request::get("/api/v1/widgets").body(vec![]).unwrap();
    assert_eq!(
        api_error(&client.request::<Value>(req).await.unwrap_err()).0,
        404
    );

    let req = Request::post("/api/v1/namespaces/default/pods/x/status")
        .body(b"{}".to_vec())
        .unwrap();
    assert_eq!(
        api_error(&client.request::<Value>(req).await.unwrap_err()).0,
        405
    );

    // A PriorityClass that does not exist is refused by admission.
    let mut p = pod("prio", json!({}), None);
    p["spec"]["priorityClassName"] = json!("missing");
    let p: Pod = serde_json::from_value(p).unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client);
    let (code, reason, _) = api_error(&pods.create(&PostParams::default(), &p).await.unwrap_err());
    assert_eq!((code, reason.as_str()), (403, "Forbidden"));
}

#[tokio::test]
async fn events_recorder_publishes_and_lists() {
    let (fake, client) = setup();
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: "topospread".into(),
            instance: None,
        },
    );
    let reference = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        name: Some("web-0".into()),
        namespace: Some("default".into()),
        ..ObjectReference::default()
    };
    let event = Event {
        type_: EventType::Normal,
        reason: "Scheduled".into(),
        note: Some("Successfully assigned default/web-0 to n1".into()),
        action: "Binding".into(),
        secondary: None,
    };
    recorder.publish(&event, &reference).await.unwrap();
    recorder.publish(&event, &reference).await.unwrap();
    let events: Api<EventV1> = Api::default_namespaced(client);
    let listed = events.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1, "the repeat became a series");
    assert_eq!(listed.items[0].reason.as_deref(), Some("Scheduled"));
    assert_eq!(listed.items[0].series.as_ref().map(|s| s.count), Some(2));
    let log = fake.requests();
    assert!(
        log.iter()
            .any(|r| r.verb == "create" && r.group.as_deref() == Some("events.k8s.io"))
    );
    assert!(
        log.iter()
            .any(|r| r.verb == "patch" && r.resource.as_deref() == Some("events"))
    );
}

#[tokio::test]
async fn discovery_documents_parse() {
    let (_fake, client) = setup();
    let version = client.apiserver_version().await.unwrap();
    assert_eq!(version.major, "1");
    let discovery = kube::Discovery::new(client).run().await.unwrap();
    let core = discovery.get("").unwrap();
    let (pods, caps) = core
        .recommended_resources()
        .into_iter()
        .find(|(r, _)| r.plural == "pods")
        .unwrap();
    assert_eq!(pods.kind, "Pod");
    assert!(
        caps.subresources
            .iter()
            .any(|(s, _)| s.plural == "pods/binding" || s.plural == "binding")
    );
    for group in [
        "apps",
        "policy",
        "coordination.k8s.io",
        "scheduling.k8s.io",
        "events.k8s.io",
    ] {
        assert!(discovery.has_group(group), "{group}");
    }
}

#[tokio::test]
async fn loopback_client_from_the_served_kubeconfig() {
    let (fake, _) = setup();
    fake.insert(pod("p", json!({}), None)).unwrap();
    let served = fake.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&served.kubeconfig()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client);
    assert_eq!(
        pods.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
    served.shutdown().await;
}
