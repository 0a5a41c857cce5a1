//! Leases: what leader election needs, create/get/update with resourceVersion
//! preconditions.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, PostParams};

use crate::support::{api_error, setup};

#[tokio::test]
async fn conflicting_lease_updates() {
    let (_fake, client) = setup();
    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-system");
    let lease = Lease {
        metadata: ObjectMeta {
            name: Some("topospread".into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some("a".into()),
            lease_duration_seconds: Some(15),
            ..LeaseSpec::default()
        }),
    };
    leases.create(&PostParams::default(), &lease).await.unwrap();
    let err = leases
        .create(&PostParams::default(), &lease)
        .await
        .unwrap_err();
    assert_eq!(api_error(&err).1, "AlreadyExists");

    // Two candidates read the same version; the first write wins.
    let mut seen_by_a = leases.get("topospread").await.unwrap();
    let mut seen_by_b = seen_by_a.clone();
    seen_by_a.spec.as_mut().unwrap().lease_transitions = Some(1);
    let won = leases
        .replace("topospread", &PostParams::default(), &seen_by_a)
        .await
        .unwrap();
    assert_ne!(
        won.metadata.resource_version,
        seen_by_b.metadata.resource_version
    );
    seen_by_b.spec.as_mut().unwrap().holder_identity = Some("b".into());
    let err = leases
        .replace("topospread", &PostParams::default(), &seen_by_b)
        .await
        .unwrap_err();
    let (code, reason, message) = api_error(&err);
    assert_eq!((code, reason.as_str()), (409, "Conflict"));
    assert!(
        message.starts_with(
            "Operation cannot be fulfilled on leases.coordination.k8s.io \"topospread\""
        )
    );

    // Leases refuse unconditional updates, as upstream.
    seen_by_b.metadata.resource_version = None;
    let err = leases
        .replace("topospread", &PostParams::default(), &seen_by_b)
        .await
        .unwrap_err();
    let (code, _, message) = api_error(&err);
    assert_eq!(code, 422);
    assert!(
        message.contains("must be specified for an update"),
        "{message}"
    );

    let current = leases.get("topospread").await.unwrap();
    assert_eq!(current.spec.unwrap().holder_identity.as_deref(), Some("a"));
}
