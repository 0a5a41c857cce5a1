//! Built-in kinds' apiVersions that some simulated release does not serve: which releases
//! serve each ([`api_serving`]), and the object read in their place ([`Unserved`]).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// A built-in kind written in an apiVersion some simulated release does not serve.
#[derive(Clone, Debug)]
pub struct Unserved {
    /// The kind, as the loader names it.
    pub kind: &'static str,
    /// `apiVersion` as written.
    pub api_version: String,
    /// The releases that serve it, and the apiVersion to use outside them.
    pub served: ServedApi,
    /// Its metadata (what of it reads).
    pub metadata: ObjectMeta,
}

/// Which releases serve an apiVersion of a kind by default, and what to use outside them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServedApi {
    /// The first minor release (1.x) that serves it; 0 when every simulated one does.
    pub introduced_in: u32,
    /// The minor release that stopped serving it, if one did.
    pub removed_in: Option<u32>,
    /// The apiVersion to use instead (empty when no other is served by default).
    pub replacement: &'static str,
}

impl ServedApi {
    /// Whether release 1.`minor` serves it.
    pub fn served_in(&self, minor: u32) -> bool {
        minor >= self.introduced_in && self.removed_in.is_none_or(|r| minor < r)
    }

    /// Whether some release topospread simulates serves it.
    pub fn ever_served(&self) -> bool {
        (topospread::version::OLDEST_MINOR..=topospread::version::NEWEST_MINOR)
            .any(|m| self.served_in(m))
    }
}

/// Built-in kinds' apiVersions that some release topospread simulates (1.25 to 1.38) does
/// not serve by default: (apiVersion, kind, first release serving it (0: before 1.25),
/// release that stopped serving it, what to use outside those). Removals follow the
/// deprecated API migration guide (kubernetes.io/docs/reference/using-api/deprecation-guide);
/// introductions its "available since", or the release whose OpenAPI specification first
/// holds the GA version (k8s-openapi's `v1_34` holds `resource.k8s.io/v1` and
/// `storage.k8s.io/v1` VolumeAttributesClass, its `v1_33` neither).
const VERSIONED_APIS: &[(&str, &str, u32, Option<u32>, &str)] = &[
    ("extensions/v1beta1", "Deployment", 0, Some(16), "apps/v1"),
    ("extensions/v1beta1", "DaemonSet", 0, Some(16), "apps/v1"),
    ("extensions/v1beta1", "ReplicaSet", 0, Some(16), "apps/v1"),
    (
        "extensions/v1beta1",
        "NetworkPolicy",
        0,
        Some(16),
        "networking.k8s.io/v1",
    ),
    (
        "extensions/v1beta1",
        "PodSecurityPolicy",
        0,
        Some(16),
        "policy/v1beta1",
    ),
    ("apps/v1beta1", "Deployment", 0, Some(16), "apps/v1"),
    ("apps/v1beta1", "StatefulSet", 0, Some(16), "apps/v1"),
    ("apps/v1beta2", "Deployment", 0, Some(16), "apps/v1"),
    ("apps/v1beta2", "DaemonSet", 0, Some(16), "apps/v1"),
    ("apps/v1beta2", "ReplicaSet", 0, Some(16), "apps/v1"),
    ("apps/v1beta2", "StatefulSet", 0, Some(16), "apps/v1"),
    (
        "extensions/v1beta1",
        "Ingress",
        0,
        Some(22),
        "networking.k8s.io/v1",
    ),
    (
        "networking.k8s.io/v1beta1",
        "Ingress",
        0,
        Some(22),
        "networking.k8s.io/v1",
    ),
    (
        "networking.k8s.io/v1beta1",
        "IngressClass",
        0,
        Some(22),
        "networking.k8s.io/v1",
    ),
    (
        "scheduling.k8s.io/v1beta1",
        "PriorityClass",
        0,
        Some(22),
        "scheduling.k8s.io/v1",
    ),
    (
        "scheduling.k8s.io/v1alpha1",
        "PriorityClass",
        0,
        Some(22),
        "scheduling.k8s.io/v1",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "ClusterRole",
        0,
        Some(22),
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "ClusterRoleBinding",
        0,
        Some(22),
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "Role",
        0,
        Some(22),
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "RoleBinding",
        0,
        Some(22),
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "apiextensions.k8s.io/v1beta1",
        "CustomResourceDefinition",
        0,
        Some(22),
        "apiextensions.k8s.io/v1",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration",
        0,
        Some(22),
        "admissionregistration.k8s.io/v1",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "ValidatingWebhookConfiguration",
        0,
        Some(22),
        "admissionregistration.k8s.io/v1",
    ),
    (
        "apiregistration.k8s.io/v1beta1",
        "APIService",
        0,
        Some(22),
        "apiregistration.k8s.io/v1",
    ),
    (
        "coordination.k8s.io/v1beta1",
        "Lease",
        0,
        Some(22),
        "coordination.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "CSIDriver",
        0,
        Some(22),
        "storage.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "CSINode",
        0,
        Some(22),
        "storage.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "StorageClass",
        0,
        Some(22),
        "storage.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "VolumeAttachment",
        0,
        Some(22),
        "storage.k8s.io/v1",
    ),
    ("batch/v1beta1", "CronJob", 0, Some(25), "batch/v1"),
    (
        "discovery.k8s.io/v1beta1",
        "EndpointSlice",
        0,
        Some(25),
        "discovery.k8s.io/v1",
    ),
    (
        "events.k8s.io/v1beta1",
        "Event",
        0,
        Some(25),
        "events.k8s.io/v1",
    ),
    (
        "autoscaling/v2beta1",
        "HorizontalPodAutoscaler",
        0,
        Some(25),
        "autoscaling/v2",
    ),
    (
        "policy/v1beta1",
        "PodDisruptionBudget",
        0,
        Some(25),
        "policy/v1",
    ),
    (
        "policy/v1beta1",
        "PodSecurityPolicy",
        0,
        Some(25),
        "(none: removed)",
    ),
    (
        "node.k8s.io/v1beta1",
        "RuntimeClass",
        0,
        Some(25),
        "node.k8s.io/v1",
    ),
    // Removed after 1.25: served by the releases before (deprecation guide, "v1.26",
    // "v1.27", "v1.29", "v1.32").
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "FlowSchema",
        0,
        Some(26),
        "flowcontrol.apiserver.k8s.io/v1beta3",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "PriorityLevelConfiguration",
        0,
        Some(26),
        "flowcontrol.apiserver.k8s.io/v1beta3",
    ),
    (
        "autoscaling/v2beta2",
        "HorizontalPodAutoscaler",
        0,
        Some(26),
        "autoscaling/v2",
    ),
    (
        "storage.k8s.io/v1beta1",
        "CSIStorageCapacity",
        0,
        Some(27),
        "storage.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "FlowSchema",
        0,
        Some(29),
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "PriorityLevelConfiguration",
        0,
        Some(29),
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    // Introduced after 1.25 (the guide's "available since"; for the others, the first
    // release whose OpenAPI specification holds the GA version), then removed or not.
    (
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "FlowSchema",
        26,
        Some(32),
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "PriorityLevelConfiguration",
        26,
        Some(32),
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1",
        "FlowSchema",
        29,
        None,
        "flowcontrol.apiserver.k8s.io/v1beta2",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1",
        "PriorityLevelConfiguration",
        29,
        None,
        "flowcontrol.apiserver.k8s.io/v1beta2",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicy",
        30,
        None,
        "",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicyBinding",
        30,
        None,
        "",
    ),
    ("networking.k8s.io/v1", "ServiceCIDR", 33, None, ""),
    ("networking.k8s.io/v1", "IPAddress", 33, None, ""),
    ("resource.k8s.io/v1", "DeviceClass", 34, None, ""),
    ("resource.k8s.io/v1", "ResourceClaim", 34, None, ""),
    ("resource.k8s.io/v1", "ResourceClaimTemplate", 34, None, ""),
    ("resource.k8s.io/v1", "ResourceSlice", 34, None, ""),
    ("storage.k8s.io/v1", "VolumeAttributesClass", 34, None, ""),
];

/// Which releases serve `kind` in `api_version`, when not every simulated release does.
pub fn api_serving(kind: &str, api_version: &str) -> Option<(&'static str, ServedApi)> {
    VERSIONED_APIS
        .iter()
        .find(|(v, k, _, _, _)| *v == api_version && *k == kind)
        .map(|&(_, k, introduced_in, removed_in, replacement)| {
            (
                k,
                ServedApi {
                    introduced_in,
                    removed_in,
                    replacement,
                },
            )
        })
}
