//! Objects read from the API server without their `metadata.managedFields`: the field
//! managers' record is about half of what a server returns of an object, and nothing
//! here reads it. [`Lean`] types an object through [`topospread::convert::lean`], which
//! checks the field as k8s-openapi decodes it and never builds it; lists and watches of
//! `Lean<K>` ask for the same paths as `K`'s.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::watcher::Event;
use serde::de::DeserializeOwned;
use std::borrow::Cow;

/// A `K` typed with its `metadata.managedFields` left out.
#[derive(Clone, Debug)]
pub struct Lean<K>(pub K);

impl<'de, K: DeserializeOwned> serde::Deserialize<'de> for Lean<K> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        topospread::convert::lean::deserialize_lean(de).map(Lean)
    }
}

impl<K: kube::Resource> kube::Resource for Lean<K> {
    type DynamicType = K::DynamicType;
    type Scope = K::Scope;

    fn kind(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::version(dt)
    }

    fn api_version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::api_version(dt)
    }

    fn plural(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::plural(dt)
    }

    fn url_path(dt: &Self::DynamicType, namespace: Option<&str>) -> String {
        K::url_path(dt, namespace)
    }

    fn meta(&self) -> &ObjectMeta {
        self.0.meta()
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.0.meta_mut()
    }
}

/// A watch event of lean objects as one of the objects themselves.
pub fn event<K>(event: Event<Lean<K>>) -> Event<K> {
    match event {
        Event::Apply(Lean(o)) => Event::Apply(o),
        Event::Delete(Lean(o)) => Event::Delete(o),
        Event::Init => Event::Init,
        Event::InitApply(Lean(o)) => Event::InitApply(o),
        Event::InitDone => Event::InitDone,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::Lean;
    use k8s_openapi::api::apps::v1::ReplicaSet;
    use k8s_openapi::api::core::v1::{Node, Pod};
    use kube::Resource;

    #[test]
    fn a_lean_object_is_asked_for_where_the_object_is() {
        for ns in [None, Some("shop")] {
            assert_eq!(
                Lean::<Pod>::url_path(&(), ns),
                Pod::url_path(&(), ns),
                "{ns:?}"
            );
            assert_eq!(
                Lean::<ReplicaSet>::url_path(&(), ns),
                ReplicaSet::url_path(&(), ns)
            );
        }
        assert_eq!(Lean::<Node>::url_path(&(), None), "/api/v1/nodes");
        assert_eq!(Lean::<ReplicaSet>::api_version(&()), "apps/v1");
        assert_eq!(Lean::<Pod>::kind(&()), "Pod");
    }

    #[test]
    fn a_watch_event_types_its_object_without_managed_fields() {
        let line = r#"{"type": "MODIFIED", "object": {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "d", "resourceVersion": "7",
            "managedFields": [{"manager": "kubelet", "operation": "Update",
            "time": "2026-11-20T08:14:31Z", "fieldsV1": {"f:status": {"f:phase": {}}}}]},
            "spec": {"containers": [{"name": "c"}], "nodeName": "n"}}}"#;
        let event: kube::api::WatchEvent<Lean<Pod>> = serde_json::from_str(line).unwrap();
        let kube::api::WatchEvent::Modified(Lean(pod)) = event else {
            panic!("not a modification")
        };
        assert_eq!(pod.meta().name.as_deref(), Some("p"));
        assert_eq!(pod.meta().resource_version.as_deref(), Some("7"));
        assert_eq!(pod.metadata.managed_fields, None);
        let bad = line.replace("2026-11-20T08:14:31Z", "yesterday");
        assert!(serde_json::from_str::<kube::api::WatchEvent<Lean<Pod>>>(&bad).is_err());
    }
}
