//! Watches through kube's `Api::watch` and kube-runtime's `watcher`: event types,
//! selector exit, bookmarks, streaming lists, 410 Expired and relisting, dropped
//! streams.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, WatchEvent, WatchParams};
use kube::runtime::reflector::{self, reflector};
use kube::runtime::watcher::{self, Event, watcher};
use serde_json::json;

use crate::support::{add_pod, next, pod, rv, setup};

fn name(p: &Pod) -> &str {
    p.metadata.name.as_deref().unwrap_or("")
}

#[tokio::test]
async fn raw_watch_types_and_selector_exit() {
    let (fake, client) = setup();
    add_pod(&fake, "early");
    fake.insert(pod("bound", json!({}), Some("n1"))).unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let wp = WatchParams::default()
        .fields("spec.nodeName=")
        .disable_bookmarks();
    let mut events = pods.watch(&wp, "0").await.unwrap().boxed();

    // resourceVersion 0: the current state as ADDED.
    match next(&mut events).await.unwrap() {
        WatchEvent::Added(p) => assert_eq!(name(&p), "early"),
        other => panic!("{other:?}"),
    }
    add_pod(&fake, "late");
    match next(&mut events).await.unwrap() {
        WatchEvent::Added(p) => assert_eq!(name(&p), "late"),
        other => panic!("{other:?}"),
    }
    fake.modify("pods", "default", "late", |p| {
        p["metadata"]["labels"] = json!({"x": "y"})
    })
    .unwrap();
    assert!(matches!(
        next(&mut events).await.unwrap(),
        WatchEvent::Modified(_)
    ));

    // Binding takes the pod out of the selection: DELETED, with the new version.
    fake.modify("pods", "default", "early", |p| {
        p["spec"]["nodeName"] = json!("n2")
    })
    .unwrap();
    let now = rv(&fake.get("pods", "default", "early").unwrap().unwrap());
    match next(&mut events).await.unwrap() {
        WatchEvent::Deleted(p) => {
            assert_eq!(name(&p), "early");
            assert_eq!(p.metadata.resource_version.as_deref(), Some(now.as_str()));
        }
        other => panic!("{other:?}"),
    }
    fake.delete("pods", "default", "late").unwrap();
    assert!(matches!(
        next(&mut events).await.unwrap(),
        WatchEvent::Deleted(_)
    ));

    // A label selector: entering is ADDED, leaving is DELETED.
    let wp = WatchParams::default().labels("app=web").disable_bookmarks();
    let from = fake.resource_version().to_string();
    let mut labelled = pods.watch(&wp, &from).await.unwrap().boxed();
    add_pod(&fake, "plain");
    fake.modify("pods", "default", "plain", |p| {
        p["metadata"]["labels"] = json!({"app": "web"})
    })
    .unwrap();
    assert!(matches!(
        next(&mut labelled).await.unwrap(),
        WatchEvent::Added(_)
    ));
    fake.modify("pods", "default", "plain", |p| {
        p["metadata"]["labels"] = json!({"app": "db"})
    })
    .unwrap();
    assert!(matches!(
        next(&mut labelled).await.unwrap(),
        WatchEvent::Deleted(_)
    ));
}

#[tokio::test]
async fn bookmarks_and_timeouts() {
    let (fake, client) = setup();
    add_pod(&fake, "a");
    let pods: Api<Pod> = Api::default_namespaced(client);
    let from = fake.resource_version().to_string();
    let wp = WatchParams::default().timeout(1);
    let mut events = pods.watch(&wp, &from).await.unwrap().boxed();
    match next(&mut events).await.unwrap() {
        WatchEvent::Bookmark(b) => assert_eq!(b.metadata.resource_version, from),
        other => panic!("{other:?}"),
    }
    // timeoutSeconds=1 ends the stream.
    let rest = tokio::time::timeout(Duration::from_secs(3), events.collect::<Vec<_>>())
        .await
        .unwrap();
    assert!(
        rest.iter()
            .all(|e| matches!(e, Ok(WatchEvent::Bookmark(_))))
    );
}

#[tokio::test]
async fn watcher_sees_selector_exit_on_binding() {
    let (fake, client) = setup();
    add_pod(&fake, "p1");
    fake.insert(pod("elsewhere", json!({}), Some("n1")))
        .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let config = watcher::Config::default().fields("spec.schedulerName=topospread,spec.nodeName=");
    let mut stream = watcher(pods.clone(), config).boxed();
    assert!(matches!(next(&mut stream).await.unwrap(), Event::Init));
    match next(&mut stream).await.unwrap() {
        Event::InitApply(p) => assert_eq!(name(&p), "p1"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(next(&mut stream).await.unwrap(), Event::InitDone));

    add_pod(&fake, "p2");
    match next(&mut stream).await.unwrap() {
        Event::Apply(p) => assert_eq!(name(&p), "p2"),
        other => panic!("{other:?}"),
    }
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p1"},
                         "target": {"kind": "Node", "name": "n1"}});
    let _: serde_json::Value = pods
        .create_subresource("binding", "p1", &Default::default(), &binding)
        .await
        .unwrap();
    match next(&mut stream).await.unwrap() {
        Event::Delete(p) => assert_eq!(name(&p), "p1"),
        other => panic!("{other:?}"),
    }
    fake.delete("pods", "default", "p2").unwrap();
    match next(&mut stream).await.unwrap() {
        Event::Delete(p) => assert_eq!(name(&p), "p2"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn streaming_list_ends_with_initial_events_bookmark() {
    let (fake, client) = setup();
    add_pod(&fake, "a");
    add_pod(&fake, "b");
    let pods: Api<Pod> = Api::default_namespaced(client);
    let mut stream = watcher(pods, watcher::Config::default().streaming_lists()).boxed();
    assert!(matches!(next(&mut stream).await.unwrap(), Event::Init));
    assert!(matches!(
        next(&mut stream).await.unwrap(),
        Event::InitApply(_)
    ));
    assert!(matches!(
        next(&mut stream).await.unwrap(),
        Event::InitApply(_)
    ));
    assert!(matches!(next(&mut stream).await.unwrap(), Event::InitDone));
    add_pod(&fake, "c");
    assert!(matches!(next(&mut stream).await.unwrap(), Event::Apply(_)));
}

#[tokio::test]
async fn too_old_resource_version_is_gone() {
    let (fake, client) = setup();
    add_pod(&fake, "a");
    add_pod(&fake, "b");
    fake.compact();
    let pods: Api<Pod> = Api::default_namespaced(client);
    let mut events = pods
        .watch(&WatchParams::default(), "1")
        .await
        .unwrap()
        .boxed();
    match next(&mut events).await.unwrap() {
        WatchEvent::Error(e) => {
            assert_eq!((e.code, e.reason.as_str()), (410, "Expired"));
            assert!(
                e.message.starts_with("too old resource version: 1"),
                "{}",
                e.message
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn watcher_relists_after_expiry_and_cache_matches_server() {
    let (fake, client) = setup();
    for i in 0..3 {
        add_pod(&fake, &format!("p{i}"));
    }
    let pods: Api<Pod> = Api::default_namespaced(client);
    let (reader, writer) = reflector::store();
    let mut stream = reflector(writer, watcher(pods, watcher::Config::default())).boxed();
    loop {
        if matches!(next(&mut stream).await.unwrap(), Event::InitDone) {
            break;
        }
    }
    // Once the watch is open, throw the history away under it.
    add_pod(&fake, "p3");
    assert!(matches!(next(&mut stream).await.unwrap(), Event::Apply(_)));
    fake.expire_watches();
    fake.delete("pods", "default", "p0").unwrap();
    add_pod(&fake, "p9");
    fake.modify("pods", "default", "p1", |p| {
        p["metadata"]["labels"] = json!({"v": "2"})
    })
    .unwrap();
    let mut saw_gone = false;
    loop {
        let event = next(&mut stream).await;
        if let Err(watcher::Error::WatchError(e)) = &event
            && e.code == 410
        {
            saw_gone = true;
            continue;
        }
        let event = event.expect("the watch yields events, or 410 Gone");
        if saw_gone && matches!(event, Event::InitDone) {
            break;
        }
    }
    let mut cached: Vec<(String, String)> = reader
        .state()
        .iter()
        .map(|p| {
            (
                name(p).to_owned(),
                p.metadata.resource_version.clone().unwrap(),
            )
        })
        .collect();
    cached.sort();
    let mut server: Vec<(String, String)> = fake
        .list("pods", Some("default"))
        .unwrap()
        .iter()
        .map(|p| (p["metadata"]["name"].as_str().unwrap().to_owned(), rv(p)))
        .collect();
    server.sort();
    assert_eq!(cached, server);
}

#[tokio::test]
async fn dropped_watches_resume_without_relisting() {
    let (fake, client) = setup();
    add_pod(&fake, "a");
    let pods: Api<Pod> = Api::default_namespaced(client);
    let mut stream = watcher(pods, watcher::Config::default()).boxed();
    loop {
        if matches!(next(&mut stream).await.unwrap(), Event::InitDone) {
            break;
        }
    }
    // Let the watch start, then cut it.
    add_pod(&fake, "b");
    assert!(matches!(next(&mut stream).await.unwrap(), Event::Apply(_)));
    fake.drop_watches();
    add_pod(&fake, "c");
    match next(&mut stream).await.unwrap() {
        Event::Apply(p) => assert_eq!(name(&p), "c"),
        other => panic!("expected a resumed watch, got {other:?}"),
    }
    let count = |verb: &str| fake.requests().iter().filter(|r| r.verb == verb).count();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while count("watch") < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(count("watch") >= 2, "the watch was reopened");
    assert_eq!(count("list"), 1, "resumed from its version, no relist");
}

#[tokio::test]
async fn watch_requests_are_validated_like_upstream() {
    let (fake, client) = setup();
    add_pod(&fake, "a");
    let get = |url: String| axum::http::Request::get(url).body(Vec::new()).unwrap();
    let ahead = fake.resource_version() + 100;
    let err = client
        .request::<serde_json::Value>(get(format!("/api/v1/pods?watch=1&resourceVersion={ahead}")))
        .await
        .unwrap_err();
    let (code, reason, message) = crate::support::api_error(&err);
    assert_eq!((code, reason.as_str()), (504, "Timeout"));
    assert!(message.contains("Too large resource version"), "{message}");

    let err = client
        .request::<serde_json::Value>(get("/api/v1/pods?watch=1&sendInitialEvents=true".into()))
        .await
        .unwrap_err();
    assert_eq!(crate::support::api_error(&err).0, 422);

    let pods: Api<Pod> = Api::default_namespaced(client);
    let dry = kube::api::PostParams {
        dry_run: true,
        ..Default::default()
    };
    let p: Pod = serde_json::from_value(pod("dry", json!({}), None)).unwrap();
    assert_eq!(
        crate::support::api_error(&pods.create(&dry, &p).await.unwrap_err()).0,
        400
    );
    assert!(fake.get("pods", "default", "dry").unwrap().is_none());
}
