//! Helpers shared by the tests: a fake with a client, pod fixtures, and reading
//! the next watch event with a deadline.

use std::time::Duration;

use futures::{Stream, StreamExt};
use serde_json::{Value, json};
use topospread_fakeapi::FakeApi;

/// A fresh fake and an in-process kube client on it (default namespace
/// `default`).
pub(crate) fn setup() -> (FakeApi, kube::Client) {
    let fake = FakeApi::builder()
        .bookmark_interval(Duration::from_millis(200))
        .build();
    let client = kube::Client::new(fake.router(), "default");
    (fake, client)
}

/// A minimal pod in `default`, optionally labelled and bound.
pub(crate) fn pod(name: &str, labels: Value, node: Option<&str>) -> Value {
    let mut p = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {"schedulerName": "topospread", "containers": [{"name": "c", "image": "nginx"}]},
    });
    if let Some(n) = node {
        p["spec"]["nodeName"] = json!(n);
    }
    p
}

/// Inserts an unbound, unlabelled pod.
pub(crate) fn add_pod(fake: &FakeApi, name: &str) -> Value {
    fake.insert(pod(name, json!({}), None)).unwrap()
}

/// The next item of a stream, failing the test after 5 s.
pub(crate) async fn next<S: Stream + Unpin>(s: &mut S) -> S::Item {
    tokio::time::timeout(Duration::from_secs(5), s.next())
        .await
        .expect("no event within 5 s")
        .expect("stream ended")
}

/// The HTTP code, reason and message of a kube API error.
pub(crate) fn api_error(e: &kube::Error) -> (u16, String, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason.clone(), s.message.clone()),
        other => panic!("not an API error: {other:?}"),
    }
}

/// `metadata.resourceVersion` of a stored object.
pub(crate) fn rv(obj: &Value) -> String {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned()
}
