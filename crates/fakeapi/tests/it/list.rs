//! Lists: pagination with limit/continue, selectors, versions, expiry.

use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kube::api::{Api, ListParams};
use serde_json::json;

use crate::support::{api_error, pod, setup};

#[tokio::test]
async fn pages_with_limit_and_continue() {
    let (fake, client) = setup();
    for i in 0..25 {
        let ns = if i % 2 == 0 { "default" } else { "other" };
        let mut p = pod(&format!("p{i:02}"), json!({"i": i.to_string()}), None);
        p["metadata"]["namespace"] = json!(ns);
        fake.insert(p).unwrap();
    }
    let pods: Api<Pod> = Api::all(client.clone());
    let mut names = Vec::new();
    let mut token: Option<String> = None;
    let mut versions = Vec::new();
    loop {
        let mut lp = ListParams::default().limit(10);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = pods.list(&lp).await.unwrap();
        assert!(page.items.len() <= 10);
        versions.push(page.metadata.resource_version.clone().unwrap());
        names.extend(page.items.iter().map(|p| p.metadata.name.clone().unwrap()));
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
        assert!(page.metadata.remaining_item_count.unwrap() > 0);
    }
    assert_eq!(names.len(), 25);
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 25, "no duplicates across pages");
    assert!(
        versions.windows(2).all(|w| w[0] == w[1]),
        "pages share a version"
    );

    // Namespaced list, and the kinds on items kubectl relies on.
    let in_default: Api<Pod> = Api::namespaced(client.clone(), "default");
    assert_eq!(
        in_default
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        13
    );
    let raw = fake.list("pods", Some("other")).unwrap();
    assert_eq!(raw.len(), 12);
    assert_eq!(raw[0]["kind"], "Pod");
    assert_eq!(raw[0]["apiVersion"], "v1");

    // Namespaces appear implicitly.
    let namespaces: Api<Namespace> = Api::all(client);
    let ns = namespaces.list(&ListParams::default()).await.unwrap();
    let ns: Vec<_> = ns
        .items
        .iter()
        .map(|n| n.metadata.name.clone().unwrap())
        .collect();
    assert!(ns.contains(&"other".to_owned()) && ns.contains(&"kube-system".to_owned()));
}

#[tokio::test]
async fn selectors_filter_lists() {
    let (fake, client) = setup();
    fake.insert(pod("a", json!({"app": "web", "tier": "fe"}), None))
        .unwrap();
    fake.insert(pod("b", json!({"app": "web"}), Some("n1")))
        .unwrap();
    fake.insert(pod("c", json!({"app": "db"}), Some("n2")))
        .unwrap();
    fake.modify("pods", "default", "c", |p| {
        p["status"]["phase"] = json!("Succeeded")
    })
    .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client);
    let names = |lp: ListParams| {
        let pods = pods.clone();
        async move {
            let mut n: Vec<String> = pods
                .list(&lp)
                .await
                .unwrap()
                .items
                .into_iter()
                .map(|p| p.metadata.name.unwrap())
                .collect();
            n.sort();
            n
        }
    };
    assert_eq!(
        names(ListParams::default().labels("app=web")).await,
        ["a", "b"]
    );
    assert_eq!(
        names(ListParams::default().labels("app in (db),!tier")).await,
        ["c"]
    );
    assert_eq!(names(ListParams::default().labels("tier")).await, ["a"]);
    assert_eq!(
        names(ListParams::default().labels("app notin (web)")).await,
        ["c"]
    );
    assert_eq!(
        names(ListParams::default().fields("spec.nodeName=")).await,
        ["a"]
    );
    assert_eq!(
        names(ListParams::default().fields("spec.nodeName!=")).await,
        ["b", "c"]
    );
    assert_eq!(
        names(
            ListParams::default()
                .fields("status.phase!=Succeeded,status.phase!=Failed,spec.nodeName!=")
        )
        .await,
        ["b"]
    );
    assert_eq!(
        names(ListParams::default().fields("spec.schedulerName==topospread,metadata.name=a")).await,
        ["a"]
    );

    let err = pods
        .list(&ListParams::default().fields("spec.bogus=1"))
        .await
        .unwrap_err();
    let (code, reason, message) = api_error(&err);
    assert_eq!((code, reason.as_str()), (400, "BadRequest"));
    assert!(
        message.contains("field label not supported: spec.bogus"),
        "{message}"
    );
}

#[tokio::test]
async fn continue_tokens_expire_with_compaction() {
    let (fake, client) = setup();
    for i in 0..5 {
        fake.insert(
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("n{i}")}}),
        )
        .unwrap();
    }
    let nodes: Api<Node> = Api::all(client);
    let page = nodes.list(&ListParams::default().limit(2)).await.unwrap();
    let token = page.metadata.continue_.unwrap();
    fake.insert(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "late"}}))
        .unwrap();
    fake.compact();
    let err = nodes
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap_err();
    assert_eq!(api_error(&err).0, 410);
    assert_eq!(api_error(&err).1, "Expired");
    let err = nodes
        .list(&ListParams::default().continue_token("zz"))
        .await
        .unwrap_err();
    assert_eq!(api_error(&err).0, 400);
}
