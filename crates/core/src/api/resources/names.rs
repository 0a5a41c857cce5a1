//! Resource-name classes, as upstream's `v1helper` defines them.

/// `kubernetes.io/`: names containing it are native resources.
const DEFAULT_NAMESPACE_PREFIX: &str = "kubernetes.io/";
/// `hugepages-`.
const HUGEPAGES_PREFIX: &str = "hugepages-";
/// `attachable-volumes-`.
const ATTACHABLE_VOLUMES_PREFIX: &str = "attachable-volumes-";
/// `requests.`: the quota prefix an extended resource name must fit behind.
const REQUESTS_PREFIX: &str = "requests.";

/// Whether `name` is tracked as a scalar resource by the scheduler: an extended,
/// hugepages, prefixed-native or attachable-volumes resource (`IsScalarResourceName`).
pub fn is_scalar_resource_name(name: &str) -> bool {
    is_extended_resource_name(name)
        || is_hugepage_resource_name(name)
        || is_prefixed_native_resource(name)
        || name.starts_with(ATTACHABLE_VOLUMES_PREFIX)
}

/// Whether `name` starts with `hugepages-`.
pub fn is_hugepage_resource_name(name: &str) -> bool {
    name.starts_with(HUGEPAGES_PREFIX)
}

/// Whether `name` contains `kubernetes.io/`.
pub fn is_prefixed_native_resource(name: &str) -> bool {
    name.contains(DEFAULT_NAMESPACE_PREFIX)
}

/// Whether `name` is in the `kubernetes.io` namespace: unprefixed (no `/`) or
/// containing `kubernetes.io/`.
pub fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || is_prefixed_native_resource(name)
}

/// Whether `name` is an extended resource: not native, not `requests.`-prefixed, and a
/// qualified name once `requests.` is put in front (`IsExtendedResourceName`).
pub fn is_extended_resource_name(name: &str) -> bool {
    if is_native_resource(name) || name.starts_with(REQUESTS_PREFIX) {
        return false;
    }
    is_qualified_name(&format!("{REQUESTS_PREFIX}{name}"))
}

/// apimachinery's `IsQualifiedName`: an optional DNS-1123 subdomain prefix and `/`,
/// then a name of at most 63 characters matching `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_qualified_name(value: &str) -> bool {
    let mut parts = value.split('/');
    let (prefix, name) = match (parts.next(), parts.next(), parts.next()) {
        (Some(name), None, _) => (None, name),
        (Some(prefix), Some(name), None) => (Some(prefix), name),
        _ => return false,
    };
    if let Some(prefix) = prefix
        && !is_dns1123_subdomain(prefix)
    {
        return false;
    }
    let bytes = name.as_bytes();
    let alnum = |b: &u8| b.is_ascii_alphanumeric();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            bytes.len() <= 63
                && alnum(first)
                && alnum(last)
                && bytes
                    .iter()
                    .all(|b| alnum(b) || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `IsDNS1123Subdomain`: at most 253 characters of dot-separated labels, each
/// lowercase alphanumerics and `-`, starting and ending alphanumeric.
fn is_dns1123_subdomain(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 253
        && value.split('.').all(|label| {
            let bytes = label.as_bytes();
            let edge = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
            match (bytes.first(), bytes.last()) {
                (Some(first), Some(last)) => {
                    edge(first) && edge(last) && bytes.iter().all(|b| edge(b) || *b == b'-')
                }
                _ => false,
            }
        })
}
