//! The resources the fake serves: one static table, the source for routing,
//! discovery and the request log alike.

use crate::error::GroupResource;

/// One served resource (group, version, plural, kind, scope, subresources).
#[derive(Debug)]
pub(crate) struct ResourceDef {
    pub(crate) group: &'static str,
    pub(crate) version: &'static str,
    pub(crate) plural: &'static str,
    pub(crate) singular: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) namespaced: bool,
    pub(crate) short_names: &'static [&'static str],
    pub(crate) categories: &'static [&'static str],
    pub(crate) subresources: &'static [Subresource],
    /// Whether writes to the main resource keep the stored `status` (upstream's
    /// status strategies), so only `/status` changes it.
    pub(crate) has_status: bool,
    /// Field selector labels beyond `metadata.name`/`metadata.namespace`; `None`
    /// accepts any path (events, whose conversions upstream allows widely).
    pub(crate) fields: Option<&'static [&'static str]>,
}

/// A subresource and the kind its verb takes and returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subresource {
    /// `/status`: get, update, patch of the status only.
    Status,
    /// `pods/binding`: create a Binding.
    Binding,
    /// `pods/eviction`: create an Eviction.
    Eviction,
}

impl Subresource {
    /// The path segment.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Subresource::Status => "status",
            Subresource::Binding => "binding",
            Subresource::Eviction => "eviction",
        }
    }

    /// Parses a path segment among those a resource declares.
    pub(crate) fn parse(def: &ResourceDef, s: &str) -> Option<Self> {
        def.subresources.iter().copied().find(|sub| sub.name() == s)
    }
}

/// The verbs of a collection resource, as discovery lists them.
pub(crate) const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

const STATUS: &[Subresource] = &[Subresource::Status];
const NONE: &[Subresource] = &[];
const WORKLOAD: &[&str] = &["all"];

const POD_FIELDS: &[&str] = &[
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.podIPs",
    "status.nominatedNodeName",
];

macro_rules! res {
    ($group:expr, $version:expr, $plural:expr, $singular:expr, $kind:expr, $ns:expr,
     $short:expr, $cat:expr, $subs:expr, $status:expr, $fields:expr) => {
        ResourceDef {
            group: $group,
            version: $version,
            plural: $plural,
            singular: $singular,
            kind: $kind,
            namespaced: $ns,
            short_names: $short,
            categories: $cat,
            subresources: $subs,
            has_status: $status,
            fields: $fields,
        }
    };
}

/// Every resource served. The index into this table identifies a resource in the
/// store.
pub(crate) static RESOURCES: &[ResourceDef] = &[
    res!(
        "",
        "v1",
        "pods",
        "pod",
        "Pod",
        true,
        &["po"],
        WORKLOAD,
        &[
            Subresource::Status,
            Subresource::Binding,
            Subresource::Eviction
        ],
        true,
        Some(POD_FIELDS)
    ),
    res!(
        "",
        "v1",
        "nodes",
        "node",
        "Node",
        false,
        &["no"],
        &[],
        STATUS,
        true,
        Some(&["spec.unschedulable"])
    ),
    res!(
        "",
        "v1",
        "namespaces",
        "namespace",
        "Namespace",
        false,
        &["ns"],
        &[],
        STATUS,
        true,
        Some(&["status.phase"])
    ),
    res!(
        "",
        "v1",
        "services",
        "service",
        "Service",
        true,
        &["svc"],
        WORKLOAD,
        STATUS,
        true,
        Some(&[])
    ),
    res!(
        "",
        "v1",
        "replicationcontrollers",
        "replicationcontroller",
        "ReplicationController",
        true,
        &["rc"],
        WORKLOAD,
        STATUS,
        true,
        Some(&["status.replicas"])
    ),
    res!(
        "",
        "v1",
        "events",
        "event",
        "Event",
        true,
        &["ev"],
        &[],
        NONE,
        false,
        None
    ),
    res!(
        "events.k8s.io",
        "v1",
        "events",
        "event",
        "Event",
        true,
        &["ev"],
        &[],
        NONE,
        false,
        None
    ),
    res!(
        "apps",
        "v1",
        "replicasets",
        "replicaset",
        "ReplicaSet",
        true,
        &["rs"],
        WORKLOAD,
        STATUS,
        true,
        Some(&["status.replicas"])
    ),
    res!(
        "apps",
        "v1",
        "statefulsets",
        "statefulset",
        "StatefulSet",
        true,
        &["sts"],
        WORKLOAD,
        STATUS,
        true,
        Some(&[])
    ),
    res!(
        "apps",
        "v1",
        "deployments",
        "deployment",
        "Deployment",
        true,
        &["deploy"],
        WORKLOAD,
        STATUS,
        true,
        Some(&[])
    ),
    res!(
        "apps",
        "v1",
        "daemonsets",
        "daemonset",
        "DaemonSet",
        true,
        &["ds"],
        WORKLOAD,
        STATUS,
        true,
        Some(&[])
    ),
    res!(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        true,
        &["pdb"],
        &[],
        STATUS,
        true,
        Some(&[])
    ),
    res!(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "priorityclass",
        "PriorityClass",
        false,
        &["pc"],
        &[],
        NONE,
        false,
        Some(&[])
    ),
    res!(
        "",
        "v1",
        "persistentvolumeclaims",
        "persistentvolumeclaim",
        "PersistentVolumeClaim",
        true,
        &["pvc"],
        &[],
        STATUS,
        true,
        Some(&[])
    ),
    res!(
        "",
        "v1",
        "persistentvolumes",
        "persistentvolume",
        "PersistentVolume",
        false,
        &["pv"],
        &[],
        STATUS,
        true,
        Some(&[])
    ),
    res!(
        "",
        "v1",
        "limitranges",
        "limitrange",
        "LimitRange",
        true,
        &["limits"],
        &[],
        NONE,
        false,
        Some(&[])
    ),
    res!(
        "",
        "v1",
        "resourcequotas",
        "resourcequota",
        "ResourceQuota",
        true,
        &["quota"],
        &[],
        STATUS,
        true,
        Some(&[])
    ),
    res!(
        "storage.k8s.io",
        "v1",
        "storageclasses",
        "storageclass",
        "StorageClass",
        false,
        &["sc"],
        &[],
        NONE,
        false,
        Some(&[])
    ),
    res!(
        "storage.k8s.io",
        "v1",
        "csinodes",
        "csinode",
        "CSINode",
        false,
        &[],
        &[],
        NONE,
        false,
        Some(&[])
    ),
    res!(
        "storage.k8s.io",
        "v1",
        "csidrivers",
        "csidriver",
        "CSIDriver",
        false,
        &[],
        &[],
        NONE,
        false,
        Some(&[])
    ),
    res!(
        "node.k8s.io",
        "v1",
        "runtimeclasses",
        "runtimeclass",
        "RuntimeClass",
        false,
        &[],
        &[],
        NONE,
        false,
        Some(&[])
    ),
    res!(
        "coordination.k8s.io",
        "v1",
        "leases",
        "lease",
        "Lease",
        true,
        &[],
        &[],
        NONE,
        false,
        Some(&[])
    ),
    // What a deployment's manifests create beside the workload (stored, not enforced).
    res!(
        "",
        "v1",
        "serviceaccounts",
        "serviceaccount",
        "ServiceAccount",
        true,
        &["sa"],
        &[],
        NONE,
        false,
        Some(&[])
    ),
    res!(
        "",
        "v1",
        "configmaps",
        "configmap",
        "ConfigMap",
        true,
        &["cm"],
        &[],
        NONE,
        false,
        Some(&[])
    ),
    res!(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterroles",
        "clusterrole",
        "ClusterRole",
        false,
        &[],
        &[],
        NONE,
        false,
        Some(&[])
    ),
    res!(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "clusterrolebinding",
        "ClusterRoleBinding",
        false,
        &[],
        &[],
        NONE,
        false,
        Some(&[])
    ),
    res!(
        "rbac.authorization.k8s.io",
        "v1",
        "roles",
        "role",
        "Role",
        true,
        &[],
        &[],
        NONE,
        false,
        Some(&[])
    ),
    res!(
        "rbac.authorization.k8s.io",
        "v1",
        "rolebindings",
        "rolebinding",
        "RoleBinding",
        true,
        &[],
        &[],
        NONE,
        false,
        Some(&[])
    ),
];

/// Index of `pods` in [`RESOURCES`].
pub(crate) const PODS: usize = 0;
/// Index of `namespaces` in [`RESOURCES`].
pub(crate) const NAMESPACES: usize = 2;
/// Index of `poddisruptionbudgets` in [`RESOURCES`].
pub(crate) const PDBS: usize = 11;

impl ResourceDef {
    /// `v1` or `apps/v1`.
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The group and plural, as errors name them.
    pub(crate) fn group_resource(&self) -> GroupResource {
        GroupResource {
            group: self.group,
            resource: self.plural.to_owned(),
        }
    }

    /// The group and `plural/subresource`, as binding conflicts name them.
    pub(crate) fn group_subresource(&self, sub: Subresource) -> GroupResource {
        GroupResource {
            group: self.group,
            resource: format!("{}/{}", self.plural, sub.name()),
        }
    }

    /// Whether a field selector may name `field` for this resource.
    pub(crate) fn allows_field(&self, field: &str) -> bool {
        field == "metadata.name"
            || field == "metadata.namespace"
            || self.fields.is_none_or(|f| f.contains(&field))
    }
}

/// The resource at a URL's group, version and plural.
pub(crate) fn by_path(group: &str, version: &str, plural: &str) -> Option<usize> {
    RESOURCES
        .iter()
        .position(|r| r.group == group && r.version == version && r.plural == plural)
}

/// The resource of an object's `apiVersion` and `kind`.
pub(crate) fn by_kind(api_version: &str, kind: &str) -> Option<usize> {
    RESOURCES
        .iter()
        .position(|r| r.api_version() == api_version && r.kind == kind)
}

/// A resource by the name a test gives: `plural` (core first) or `plural.group`,
/// the `GroupResource` string form (`deployments.apps`, `leases.coordination.k8s.io`).
pub(crate) fn by_name(name: &str) -> Option<usize> {
    RESOURCES
        .iter()
        .position(|r| r.group_resource().to_string() == name)
        .or_else(|| RESOURCES.iter().position(|r| r.plural == name))
}

/// The API groups other than core, in discovery order, each with its version (the
/// review groups, which serve no stored resource, last).
pub(crate) fn groups() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    let reviews = crate::reviews::REVIEWS.iter().map(|(g, v, _, _)| (*g, *v));
    for (group, version) in RESOURCES
        .iter()
        .filter(|r| !r.group.is_empty())
        .map(|r| (r.group, r.version))
        .chain(reviews)
    {
        if !out.iter().any(|(g, _)| *g == group) {
            out.push((group, version));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn constants_point_at_their_rows() {
        assert_eq!(RESOURCES[PODS].plural, "pods");
        assert_eq!(RESOURCES[NAMESPACES].plural, "namespaces");
        assert_eq!(RESOURCES[PDBS].plural, "poddisruptionbudgets");
    }

    #[test]
    fn the_storage_and_admission_kinds_are_served() {
        for (api_version, kind, name, namespaced) in [
            (
                "v1",
                "PersistentVolumeClaim",
                "persistentvolumeclaims",
                true,
            ),
            ("v1", "PersistentVolume", "persistentvolumes", false),
            ("v1", "LimitRange", "limitranges", true),
            ("v1", "ResourceQuota", "resourcequotas", true),
            (
                "storage.k8s.io/v1",
                "StorageClass",
                "storageclasses.storage.k8s.io",
                false,
            ),
            (
                "storage.k8s.io/v1",
                "CSINode",
                "csinodes.storage.k8s.io",
                false,
            ),
            (
                "storage.k8s.io/v1",
                "CSIDriver",
                "csidrivers.storage.k8s.io",
                false,
            ),
            (
                "node.k8s.io/v1",
                "RuntimeClass",
                "runtimeclasses.node.k8s.io",
                false,
            ),
        ] {
            let i = by_kind(api_version, kind).unwrap();
            assert_eq!(by_name(name), Some(i), "{kind}");
            assert_eq!(RESOURCES[i].namespaced, namespaced, "{kind}");
        }
        let groups = groups();
        assert!(groups.contains(&("storage.k8s.io", "v1")), "{groups:?}");
        assert!(groups.contains(&("node.k8s.io", "v1")), "{groups:?}");
    }

    #[test]
    fn names_resolve_core_first() {
        assert_eq!(by_name("events").map(|i| RESOURCES[i].group), Some(""));
        assert_eq!(
            by_name("events.events.k8s.io").map(|i| RESOURCES[i].group),
            Some("events.k8s.io")
        );
        assert_eq!(by_name("deployments.apps"), by_name("deployments"));
        assert_eq!(
            by_kind("coordination.k8s.io/v1", "Lease"),
            by_name("leases")
        );
    }
}
