//! Which kinds the loader reads, skips with a note, or refuses as unrendered kustomize
//! input: the kind tables and their questions.

/// Built-in kinds that carry nothing the scheduler reads: skipped with a note saying so.
/// Any other kind the loader does not read (a custom resource) is skipped as well.
pub(super) const SKIPPED_KINDS: &[&str] = &[
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "Endpoints",
    "EndpointSlice",
    "Event",
    "HorizontalPodAutoscaler",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
    "Ingress",
    "IngressClass",
    "NetworkPolicy",
    "ControllerRevision",
    "Lease",
    "CustomResourceDefinition",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "APIService",
];

/// Kinds the default profile's plugins read that topospread does not model: each is
/// skipped with a note saying so (never "does not affect scheduling"), by API group.
const UNMODELLED_KINDS: &[(&str, &str, &str)] = &[
    (
        "CSIDriver",
        "storage.k8s.io",
        "read by the scheduler's volume plugins (VolumeBinding reads spec.storageCapacity) but not modelled",
    ),
    (
        "CSIStorageCapacity",
        "storage.k8s.io",
        "read by the scheduler (VolumeBinding's storage capacity check for WaitForFirstConsumer claims) but not modelled: claims are provisioned as if every node had room, so \"node(s) did not have enough free storage\" never appears",
    ),
    (
        "VolumeAttachment",
        "storage.k8s.io",
        "not modelled: a node's attached CSI volumes are counted from the pods bound to it",
    ),
    (
        "ResourceClaim",
        "resource.k8s.io",
        "read by the scheduler (DynamicResources) but not modelled: no device is allocated",
    ),
    (
        "ResourceClaimTemplate",
        "resource.k8s.io",
        "read by the scheduler (DynamicResources) but not modelled: no device is allocated",
    ),
    (
        "ResourceSlice",
        "resource.k8s.io",
        "read by the scheduler (DynamicResources) but not modelled: no device is allocated",
    ),
    (
        "DeviceClass",
        "resource.k8s.io",
        "read by the scheduler (DynamicResources, and NodeResourcesFit for the extended resource a class names in spec.extendedResourceName) but not modelled: no device is allocated",
    ),
    (
        "DeviceTaintRule",
        "resource.k8s.io",
        "read by the scheduler (DynamicResources) but not modelled: no device is allocated",
    ),
    (
        "Workload",
        "scheduling.k8s.io",
        "read by the scheduler (gang scheduling of the pods that name it) but not modelled: each pod is scheduled on its own",
    ),
    (
        "PodGroup",
        "scheduling.k8s.io",
        "read by the scheduler (gang scheduling of the pods that name it) but not modelled: each pod is scheduled on its own",
    ),
];

/// The note for a kind the scheduler reads and topospread does not model, if `kind`
/// (of `api_version`'s group) is one.
pub(super) fn unmodelled_kind(kind: &str, api_version: &str) -> Option<&'static str> {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    UNMODELLED_KINDS
        .iter()
        .find(|(k, g, _)| *k == kind && *g == group)
        .map(|(_, _, message)| *message)
}

/// Whether an object is kustomize's own (`Kustomization`, `Component`), which only
/// `kubectl kustomize` reads.
pub(super) fn is_kustomization(kind: &str, api_version: &str) -> bool {
    let kustomize = api_version.starts_with("kustomize.config.k8s.io/");
    (kind == "Kustomization" && (kustomize || api_version.is_empty()))
        || (kind == "Component" && kustomize)
}

/// The folder `kubectl kustomize` renders for a kustomization read from `file` (`DIR`
/// for stdin).
pub fn kustomize_dir(file: &str) -> String {
    if file == "<stdin>" {
        return "DIR".to_string();
    }
    match std::path::Path::new(file).parent() {
        Some(p) if !p.as_os_str().is_empty() => p.display().to_string(),
        _ => ".".to_string(),
    }
}

/// Whether `kind` in `api_version` is the built-in kind the loader reads (a `Job` of
/// another group, say Volcano's `batch.volcano.sh`, is a custom resource and is not). An
/// object with no apiVersion is taken as the built-in kind.
pub(super) fn builtin(kind: &str, api_version: &str) -> bool {
    let group = match api_version.rsplit_once('/') {
        Some((group, _)) => group,
        None if api_version.is_empty() => return true,
        None => "",
    };
    match kind {
        "Node"
        | "Pod"
        | "Service"
        | "ReplicationController"
        | "Namespace"
        | "PersistentVolumeClaim"
        | "PersistentVolume"
        | "LimitRange"
        | "ResourceQuota" => group.is_empty(),
        "StorageClass" | "CSINode" => group == "storage.k8s.io",
        "RuntimeClass" => group == "node.k8s.io",
        "ReplicaSet" | "StatefulSet" | "Deployment" | "DaemonSet" => {
            matches!(group, "apps" | "extensions")
        }
        "Job" | "CronJob" => group == "batch",
        "PriorityClass" => group == "scheduling.k8s.io",
        "PodDisruptionBudget" => group == "policy",
        "KubeSchedulerConfiguration" => group == "kubescheduler.config.k8s.io",
        // Skipped either way; the note says which.
        _ => true,
    }
}
