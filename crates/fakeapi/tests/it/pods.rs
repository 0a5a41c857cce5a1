//! The pod subresources: binding, status patches, eviction.

use k8s_openapi::api::core::v1::{Binding, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, EvictParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::support::{add_pod, api_error, pod, setup};

fn binding(pod: &str, uid: Option<&str>, node: &str) -> Binding {
    Binding {
        metadata: ObjectMeta {
            name: Some(pod.into()),
            namespace: Some("default".into()),
            uid: uid.map(str::to_owned),
            ..ObjectMeta::default()
        },
        target: ObjectReference {
            kind: Some("Node".into()),
            name: Some(node.into()),
            ..ObjectReference::default()
        },
    }
}

async fn bind(
    pods: &Api<Pod>,
    pod: &str,
    uid: Option<&str>,
    node: &str,
) -> Result<Value, kube::Error> {
    pods.create_subresource::<Binding, Value>(
        "binding",
        pod,
        &PostParams::default(),
        &binding(pod, uid, node),
    )
    .await
}

#[tokio::test]
async fn binding_assigns_once() {
    let (fake, client) = setup();
    let created = add_pod(&fake, "p");
    let uid = created["metadata"]["uid"].as_str().unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client);

    // A wrong UID is a precondition failure and leaves the pod alone.
    let err = bind(
        &pods,
        "p",
        Some("00000000-0000-4000-8000-000000000000"),
        "n1",
    )
    .await
    .unwrap_err();
    let (code, reason, message) = api_error(&err);
    assert_eq!((code, reason.as_str()), (409, "Conflict"));
    assert!(
        message.contains("Precondition failed: UID in precondition"),
        "{message}"
    );
    assert_eq!(fake.bindings("default", "p"), 0);

    let ok = bind(&pods, "p", Some(uid), "n1").await.unwrap();
    assert_eq!(
        (ok["kind"].as_str(), ok["status"].as_str()),
        (Some("Status"), Some("Success"))
    );
    let bound = pods.get("p").await.unwrap();
    assert_eq!(bound.spec.unwrap().node_name.as_deref(), Some("n1"));
    let conditions = bound.status.unwrap().conditions.unwrap();
    let scheduled = conditions
        .iter()
        .find(|c| c.type_ == "PodScheduled")
        .unwrap();
    assert_eq!(scheduled.status, "True");

    let err = bind(&pods, "p", Some(uid), "n2").await.unwrap_err();
    let (code, reason, message) = api_error(&err);
    assert_eq!((code, reason.as_str()), (409, "Conflict"));
    assert_eq!(
        message,
        "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\""
    );
    assert_eq!(fake.bindings("default", "p"), 1);

    let err = bind(&pods, "ghost", None, "n1").await.unwrap_err();
    assert_eq!(api_error(&err).0, 404);

    // Only a binding moves a pod.
    let mut moved = pods.get("p").await.unwrap();
    moved.spec.as_mut().unwrap().node_name = Some("n9".into());
    let err = pods
        .replace("p", &PostParams::default(), &moved)
        .await
        .unwrap_err();
    assert_eq!(api_error(&err).0, 422);
}

#[tokio::test]
async fn status_patches_merge_conditions() {
    let (fake, client) = setup();
    let mut p = pod("p", json!({}), None);
    p["status"] = json!({"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}]});
    fake.insert(p).unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client);
    let unschedulable = json!({"status": {"conditions": [{
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints."}]}});

    // Strategic merge: conditions merge by type, Ready stays.
    let patched = pods
        .patch_status(
            "p",
            &PatchParams::default(),
            &Patch::Strategic(&unschedulable),
        )
        .await
        .unwrap();
    let conditions = patched.status.as_ref().unwrap().conditions.clone().unwrap();
    assert_eq!(conditions.len(), 2);
    assert!(
        conditions
            .iter()
            .any(|c| c.type_ == "PodScheduled" && c.reason.as_deref() == Some("Unschedulable"))
    );
    let patched = pods
        .patch_status(
            "p",
            &PatchParams::default(),
            &Patch::Strategic(json!({"status": {"nominatedNodeName": "n2"}})),
        )
        .await
        .unwrap();
    assert_eq!(
        patched.status.unwrap().nominated_node_name.as_deref(),
        Some("n2")
    );

    // Merge patch: the list is replaced.
    let patched = pods
        .patch_status("p", &PatchParams::default(), &Patch::Merge(&unschedulable))
        .await
        .unwrap();
    assert_eq!(
        patched
            .status
            .as_ref()
            .unwrap()
            .conditions
            .as_ref()
            .unwrap()
            .len(),
        1
    );

    // Server-side apply, as `Patch::Apply` sends it.
    let apply = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "status": {"conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]}});
    let patched = pods
        .patch_status(
            "p",
            &PatchParams::apply("topospread").force(),
            &Patch::Apply(&apply),
        )
        .await
        .unwrap();
    assert_eq!(
        patched
            .status
            .as_ref()
            .unwrap()
            .conditions
            .as_ref()
            .unwrap()
            .len(),
        2
    );

    // A status patch cannot touch the spec; a main patch cannot touch status.
    let patched = pods
        .patch_status(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"nodeName": "x"}, "status": {"phase": "Running"}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.spec.unwrap().node_name, None);
    assert_eq!(patched.status.unwrap().phase.as_deref(), Some("Running"));
    let patched = pods
        .patch(
            "p",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"labels": {"a": "b"}}, "status": {"phase": "Failed"}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(patched.status.unwrap().phase.as_deref(), Some("Running"));

    // Patches with a stale resourceVersion conflict.
    let stale = json!({"metadata": {"resourceVersion": "1"}, "status": {"phase": "Failed"}});
    let err = pods
        .patch_status("p", &PatchParams::default(), &Patch::Merge(stale))
        .await
        .unwrap_err();
    assert_eq!(api_error(&err).0, 409);

    let log = fake.requests();
    assert!(
        log.iter()
            .any(|r| r.verb == "patch" && r.rbac_resource().as_deref() == Some("pods/status"))
    );
}

/// kube's `Patch::Json` needs its `jsonpatch` feature; send the request raw.
#[tokio::test]
async fn json_patch_over_http() {
    let (fake, client) = setup();
    add_pod(&fake, "p");
    let req = axum::http::Request::patch("/api/v1/namespaces/default/pods/p/status")
        .header("content-type", "application/json-patch+json")
        .body(br#"[{"op":"add","path":"/status/nominatedNodeName","value":"n3"}]"#.to_vec())
        .unwrap();
    let pod: Pod = client.request(req).await.unwrap();
    assert_eq!(
        pod.status.unwrap().nominated_node_name.as_deref(),
        Some("n3")
    );
}

#[tokio::test]
async fn eviction_respects_disruption_budgets() {
    let (fake, client) = setup();
    for name in ["a", "b"] {
        let mut p = pod(name, json!({"app": "web"}), Some("n1"));
        p["status"] = json!({"phase": "Running"});
        fake.insert(p).unwrap();
    }
    fake.insert(json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1,
                   "expectedPods": 2, "observedGeneration": 1},
    }))
    .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client);
    let status = pods.evict("a", &EvictParams::default()).await.unwrap();
    assert_eq!(status.code, 201);
    assert!(fake.get("pods", "default", "a").unwrap().is_none());
    let pdb = fake
        .get("poddisruptionbudgets", "default", "web")
        .unwrap()
        .unwrap();
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0);

    let err = pods.evict("b", &EvictParams::default()).await.unwrap_err();
    let (code, reason, message) = api_error(&err);
    assert_eq!((code, reason.as_str()), (429, "TooManyRequests"));
    assert_eq!(
        message,
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert!(fake.get("pods", "default", "b").unwrap().is_some());
    assert_eq!(
        api_error(&pods.evict("a", &EvictParams::default()).await.unwrap_err()).0,
        404
    );
}
