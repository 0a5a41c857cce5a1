//! The API server's validation of the objects admission plugins read: LimitRange
//! (`pkg/apis/core/validation` `ValidateLimitRange`, on the items as defaulted by
//! `SetDefaults_LimitRangeItem`), RuntimeClass (`pkg/apis/node/validation`
//! `ValidateRuntimeClass`) and ResourceQuota (`ValidateResourceQuota`). RULES.md §6. An
//! object refused here is left out by itself.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{LimitRange, ResourceQuota, ScopeSelector};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use topospread::api::quantity::Quantity;
use topospread::validation::{
    ErrorType, FieldError, FieldPath, go_quote, is_qualified_name, validate_labels,
};

use crate::admission::limit_range::{canonical, defaulted_items};
use crate::load::Object;

/// Every error of a LimitRange, RuntimeClass or ResourceQuota (empty for other kinds).
pub(crate) fn validate_policy_object(object: &Object) -> Vec<FieldError> {
    match object {
        Object::LimitRange(lr) => validate_limit_range(lr),
        Object::RuntimeClass(rc) => validate_runtime_class(rc),
        Object::ResourceQuota(rq) => validate_resource_quota(rq),
        _ => Vec::new(),
    }
}

/// A quantity rendered as the API server prints one in an error (its `String()`), here
/// as written.
fn value(path: &FieldPath, q: &K8sQuantity, detail: String) -> FieldError {
    FieldError {
        field: path.to_string(),
        kind: ErrorType::Invalid,
        bad_value: Some(canonical(&q.0)),
        detail,
        origin: None,
    }
}

/// Resources that may not be overcommitted (`helper.IsOvercommitAllowed` is false):
/// hugepages and extended resources (a domain-prefixed name outside kubernetes.io).
fn overcommit_allowed(name: &str) -> bool {
    if name.starts_with("hugepages-") {
        return false;
    }
    match name.split_once('/') {
        None => true,
        Some((prefix, _)) => prefix == "kubernetes.io" || prefix.ends_with(".kubernetes.io"),
    }
}

/// A resource's quantity as written and parsed (one that does not parse is left out:
/// the quantity checks refuse it).
fn parse<'a>(m: &'a BTreeMap<String, K8sQuantity>, k: &str) -> Option<(&'a K8sQuantity, Quantity)> {
    m.get(k)
        .and_then(|q| Some((q, Quantity::parse(&q.0).ok()?)))
}

fn validate_limit_range(lr: &LimitRange) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let limits = FieldPath::new("spec").child("limits");
    let items = defaulted_items(lr);
    let mut types = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let at = limits.index(i);
        if !types.insert(item.type_.clone()) {
            errs.push(FieldError::duplicate(
                &at.child("type"),
                item.type_.as_str(),
            ));
        }
        let get = |m: &Option<BTreeMap<String, K8sQuantity>>| m.clone().unwrap_or_default();
        let (min, max) = (get(&item.min), get(&item.max));
        let ratio = get(&item.max_limit_request_ratio);
        let (mut default, mut default_request) = (get(&item.default), get(&item.default_request));
        if item.type_ == "Pod" {
            if !default.is_empty() {
                errs.push(FieldError::forbidden(
                    &at.child("default"),
                    "may not be specified when `type` is 'Pod'",
                ));
            }
            if !default_request.is_empty() {
                errs.push(FieldError::forbidden(
                    &at.child("defaultRequest"),
                    "may not be specified when `type` is 'Pod'",
                ));
            }
            default.clear();
            default_request.clear();
        }
        let keys: BTreeSet<&String> = min
            .keys()
            .chain(max.keys())
            .chain(default.keys())
            .chain(default_request.keys())
            .chain(ratio.keys())
            .collect();
        for k in keys {
            let limits = KeyLimits {
                min: parse(&min, k),
                max: parse(&max, k),
                default: parse(&default, k),
                default_request: parse(&default_request, k),
                ratio: parse(&ratio, k),
            };
            validate_limit_range_key(&mut errs, &at, k, &item.type_, limits);
        }
    }
    errs
}

/// The orderings min <= defaultRequest <= default <= max a LimitRange item's quantities
/// keep, in the API server's order: (the smaller, its name, the larger, its name, the
/// field reported, whether the smaller's quantity is the value reported), the quantities
/// indexed as min 0, defaultRequest 1, default 2, max 3.
const LIMIT_ORDERINGS: [(usize, &str, usize, &str, &str, bool); 6] = [
    (0, "min value", 3, "max value", "min", true),
    (
        0,
        "min value",
        1,
        "default request value",
        "defaultRequest",
        false,
    ),
    (
        1,
        "default request value",
        3,
        "max value",
        "defaultRequest",
        true,
    ),
    (
        1,
        "default request value",
        2,
        "default limit value",
        "defaultRequest",
        true,
    ),
    (0, "min value", 2, "default value", "default", true),
    (2, "default value", 3, "max value", "default", false),
];

/// One resource's quantities in one LimitRange item, each as written and parsed.
#[derive(Clone, Copy)]
struct KeyLimits<'a> {
    min: Option<(&'a K8sQuantity, Quantity)>,
    max: Option<(&'a K8sQuantity, Quantity)>,
    default: Option<(&'a K8sQuantity, Quantity)>,
    default_request: Option<(&'a K8sQuantity, Quantity)>,
    ratio: Option<(&'a K8sQuantity, Quantity)>,
}

/// The API server's checks on resource `k` of the LimitRange item at `at` (of type
/// `type_`): min <= defaultRequest <= default <= max, maxLimitRequestRatio at least 1 and
/// within max/min, and default equal to defaultRequest where overcommit is not allowed.
fn validate_limit_range_key(
    errs: &mut Vec<FieldError>,
    at: &FieldPath,
    k: &str,
    type_: &str,
    limits: KeyLimits<'_>,
) {
    let KeyLimits {
        min: mn,
        max: mx,
        default: df,
        default_request: dr,
        ratio: r,
    } = limits;
    let quantities = [mn, dr, df, mx];
    for &(small, small_name, large, large_name, field, show_small) in &LIMIT_ORDERINGS {
        let (small, large) = (quantities[small], quantities[large]);
        if let (Some((st, s)), Some((lt, l))) = (small, large)
            && s > l
        {
            errs.push(value(
                &at.child(field).key(k),
                if show_small { st } else { lt },
                format!(
                    "{small_name} {} is greater than {large_name} {}",
                    canonical(&st.0),
                    canonical(&lt.0)
                ),
            ));
        }
    }
    if let Some((rt, rq)) = r
        && rq < Quantity::from_value(1)
    {
        errs.push(value(
            &at.child("maxLimitRequestRatio").key(k),
            rt,
            format!("ratio {} is less than 1", canonical(&rt.0)),
        ));
    }
    if let (Some((rt, rq)), Some((_, m)), Some((_, x))) = (r, mn, mx) {
        #[allow(clippy::cast_precision_loss)] // upstream divides float64s
        let (limit, ratio) = if m.milli_value() > 0 {
            (
                x.milli_value() as f64 / m.milli_value() as f64,
                rq.milli_value() as f64 / 1000.0,
            )
        } else {
            (f64::INFINITY, 0.0)
        };
        if ratio > limit {
            errs.push(value(
                &at.child("maxLimitRequestRatio").key(k),
                rt,
                format!(
                    "ratio {} is greater than max/min = {limit:.6}",
                    canonical(&rt.0)
                ),
            ));
        }
    }
    if !overcommit_allowed(k)
        && let (Some((dt, d)), Some((rt, rq))) = (df, dr)
        && d != rq
    {
        errs.push(value(
            &at.child("defaultRequest").key(k),
            rt,
            format!(
                "default value {} must equal to defaultRequest value {} in {}",
                canonical(&dt.0),
                canonical(&rt.0),
                type_
            ),
        ));
    }
}

fn validate_runtime_class(rc: &RuntimeClass) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let handler = FieldPath::new("handler");
    if rc.handler.is_empty() {
        errs.push(FieldError::required(&handler, ""));
    } else {
        let ok = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        let b = rc.handler.as_bytes();
        if rc.handler.len() > 63
            || !b.first().copied().is_some_and(ok)
            || !b.last().copied().is_some_and(ok)
            || !b.iter().all(|&c| ok(c) || c == b'-')
        {
            errs.push(FieldError::invalid(
                &handler,
                rc.handler.as_str(),
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ));
        }
    }
    let fixed = FieldPath::new("overhead").child("podFixed");
    for (k, q) in rc
        .overhead
        .iter()
        .filter_map(|o| o.pod_fixed.as_ref())
        .flatten()
    {
        match Quantity::parse(&q.0) {
            Ok(v) if v.signum() < 0 => errs.push(value(
                &fixed.key(k),
                q,
                "must be greater than or equal to 0".into(),
            )),
            Ok(_) => {}
            Err(e) => errs.push(value(&fixed.key(k), q, e.to_string())),
        }
    }
    if let Some(selector) = rc
        .scheduling
        .as_ref()
        .and_then(|s| s.node_selector.as_ref())
    {
        errs.extend(validate_labels(
            selector,
            &FieldPath::new("scheduling").child("nodeSelector"),
        ));
    }
    errs
}

/// `standardResources` (`helper.IsStandardResourceName`, hugepages aside).
const STANDARD_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// `standardQuotaResources` (`helper.IsStandardQuotaResourceName`, hugepages aside).
const STANDARD_QUOTA_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

/// `integerResources`: object counts, which cannot be fractional.
const INTEGER_RESOURCES: &[&str] = &[
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// The scopes a quota may name (`IsStandardResourceQuotaScope`).
const QUOTA_SCOPES: &[&str] = &[
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
];

/// `helper.IsExtendedResourceName`: outside the `kubernetes.io` domains, not a
/// `requests.` quota name, and a qualified name once prefixed with `requests.`.
fn is_extended_resource(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    !native
        && !name.starts_with("requests.")
        && is_qualified_name(&format!("requests.{name}")).is_empty()
}

fn is_quota_hugepages(name: &str) -> bool {
    name.starts_with("hugepages-") || name.starts_with("requests.hugepages-")
}

fn is_standard_quota_resource(name: &str) -> bool {
    STANDARD_QUOTA_RESOURCES.contains(&name) || is_quota_hugepages(name)
}

/// One error per standard resource of `hard` that `scope` may not limit (the loop over
/// `spec.hard` in `ValidateResourceQuotaSpec`, for scopes and scope selectors alike).
fn scope_misapplied<'a>(
    scope: &'a str,
    hard: impl Iterator<Item = &'a String> + 'a,
    path: &'a FieldPath,
    shown: &'a str,
) -> impl Iterator<Item = FieldError> + 'a {
    hard.filter(move |k| is_standard_quota_resource(k) && !scope_valid_for(scope, k))
        .map(move |_| {
            raw(
                ErrorType::Invalid,
                path,
                shown.to_string(),
                "unsupported scope applied to resource",
            )
        })
}

/// `IsResourceQuotaScopeValidForResource`: which resources a scope may limit.
fn scope_valid_for(scope: &str, resource: &str) -> bool {
    const COMPUTE: &[&str] = &[
        "cpu",
        "memory",
        "limits.cpu",
        "limits.memory",
        "requests.cpu",
        "requests.memory",
    ];
    match scope {
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => resource == "pods" || COMPUTE.contains(&resource),
        "BestEffort" => resource == "pods",
        _ => true,
    }
}

/// An error whose value Go prints with `%#v` or a `String()` method: as given, unquoted.
fn raw(kind: ErrorType, path: &FieldPath, value: String, detail: &str) -> FieldError {
    FieldError {
        field: path.to_string(),
        kind,
        bad_value: Some(value),
        detail: detail.to_string(),
        origin: None,
    }
}

/// Go's `%#v` of a `[]string` (or of a slice of a string type, named `ty`).
fn go_slice(ty: &str, values: Option<&Vec<String>>) -> String {
    match values {
        None => format!("{ty}(nil)"),
        Some(v) => {
            let quoted: Vec<String> = v.iter().map(|s| go_quote(s)).collect();
            format!("{ty}{{{}}}", quoted.join(", "))
        }
    }
}

/// Go's `%#v` of a `core.ScopeSelector`, as an error prints the selector.
fn go_scope_selector(s: &ScopeSelector) -> String {
    let items: Vec<String> = s
        .match_expressions
        .iter()
        .flatten()
        .map(|e| {
            format!(
                "core.ScopedResourceSelectorRequirement{{ScopeName:{}, Operator:{}, Values:{}}}",
                go_quote(&e.scope_name),
                go_quote(&e.operator),
                go_slice("[]string", e.values.as_ref())
            )
        })
        .collect();
    let list = match &s.match_expressions {
        None => "[]core.ScopedResourceSelectorRequirement(nil)".to_string(),
        Some(_) => format!(
            "[]core.ScopedResourceSelectorRequirement{{{}}}",
            items.join(", ")
        ),
    };
    format!("core.ScopeSelector{{MatchExpressions:{list}}}")
}

/// `ValidateResourceQuotaResourceName` and `ValidateResourceQuantityValue` on one
/// entry of `hard` or `used`.
fn validate_quota_entry(path: &FieldPath, name: &str, q: &K8sQuantity) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = is_qualified_name(name)
        .into_iter()
        .map(|m| raw(ErrorType::Invalid, path, name.to_string(), &m))
        .collect();
    let unprefixed = !name.contains('/');
    if errs.is_empty()
        && unprefixed
        && !(STANDARD_RESOURCES.contains(&name) || is_quota_hugepages(name))
    {
        errs.push(raw(
            ErrorType::Invalid,
            path,
            name.to_string(),
            "must be a standard resource type or fully qualified",
        ));
    }
    if unprefixed && !is_standard_quota_resource(name) {
        errs.push(raw(
            ErrorType::Invalid,
            path,
            name.to_string(),
            "must be a standard resource for quota",
        ));
    }
    if let Ok(v) = Quantity::parse(&q.0) {
        if v.signum() < 0 {
            errs.push(FieldError::invalid(
                path,
                canonical(&q.0),
                "must be greater than or equal to 0",
            ));
        }
        let integer = INTEGER_RESOURCES.contains(&name) || is_extended_resource(name);
        if integer && v.milli_value() % 1000 != 0 {
            errs.push(value(path, q, "must be an integer".into()));
        }
    }
    errs
}

/// `ValidateResourceQuota` (after the metadata): `spec.hard`, `spec.scopes`,
/// `spec.scopeSelector`, then `status.hard` and `status.used`.
fn validate_resource_quota(rq: &ResourceQuota) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec_path = FieldPath::new("spec");
    let spec = rq.spec.clone().unwrap_or_default();
    let hard = spec.hard.clone().unwrap_or_default();
    for (k, q) in &hard {
        errs.extend(validate_quota_entry(&spec_path.child("hard").key(k), k, q));
    }
    let conflicting = |set: &BTreeSet<&str>| {
        [
            ("BestEffort", "NotBestEffort"),
            ("Terminating", "NotTerminating"),
        ]
        .iter()
        .filter(|(a, b)| set.contains(a) && set.contains(b))
        .count()
    };
    if let Some(scopes) = spec.scopes.as_ref().filter(|s| !s.is_empty()) {
        let path = spec_path.child("scopes");
        let shown = go_slice("[]core.ResourceQuotaScope", Some(scopes));
        let mut set = BTreeSet::new();
        for scope in scopes {
            if !QUOTA_SCOPES.contains(&scope.as_str()) {
                errs.push(raw(
                    ErrorType::Invalid,
                    &path,
                    shown.clone(),
                    "unsupported scope",
                ));
            }
            errs.extend(scope_misapplied(scope, hard.keys(), &path, shown.as_str()));
            set.insert(scope.as_str());
        }
        for _ in 0..conflicting(&set) {
            errs.push(raw(
                ErrorType::Invalid,
                &path,
                shown.clone(),
                "conflicting scopes",
            ));
        }
    }
    if let Some(selector) = spec.scope_selector.as_ref() {
        let path = spec_path.child("scopeSelector").child("matchExpressions");
        let shown = go_scope_selector(selector);
        let mut set = BTreeSet::new();
        for req in selector.match_expressions.iter().flatten() {
            let scope = req.scope_name.as_str();
            if !QUOTA_SCOPES.contains(&scope) {
                errs.push(FieldError::invalid(
                    &path.child("scopeName"),
                    scope,
                    "unsupported scope",
                ));
            }
            errs.extend(scope_misapplied(scope, hard.keys(), &path, shown.as_str()));
            let exists_only = matches!(
                scope,
                "BestEffort"
                    | "NotBestEffort"
                    | "Terminating"
                    | "NotTerminating"
                    | "CrossNamespacePodAffinity"
            );
            if exists_only && req.operator != "Exists" {
                errs.push(FieldError::invalid(
                    &path.child("operator"),
                    req.operator.as_str(),
                    "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
                ));
            }
            let values = req.values.as_ref().filter(|v| !v.is_empty());
            match req.operator.as_str() {
                "In" | "NotIn" if values.is_none() => errs.push(FieldError::required(
                    &path.child("values"),
                    "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                )),
                "Exists" | "DoesNotExist" if values.is_some() => errs.push(raw(
                    ErrorType::Invalid,
                    &path.child("values"),
                    go_slice("[]string", req.values.as_ref()),
                    "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
                )),
                "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
                _ => errs.push(FieldError::invalid(
                    &path.child("operator"),
                    req.operator.as_str(),
                    "not a valid selector operator",
                )),
            }
            set.insert(scope);
        }
        for _ in 0..conflicting(&set) {
            errs.push(raw(
                ErrorType::Invalid,
                &path,
                shown.clone(),
                "conflicting scopes",
            ));
        }
    }
    let status_path = FieldPath::new("status");
    if let Some(status) = rq.status.as_ref() {
        for (field, list) in [("hard", &status.hard), ("used", &status.used)] {
            for (k, q) in list.iter().flatten() {
                errs.extend(validate_quota_entry(&status_path.child(field).key(k), k, q));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_manifests;

    fn errors(text: &str) -> Vec<String> {
        let m = parse_manifests(text, "p.yaml").expect("parses");
        m.objects
            .iter()
            .flat_map(|l| validate_policy_object(&l.object))
            .map(|e| e.to_string())
            .collect()
    }

    #[test]
    fn limit_range_bounds_must_be_ordered() {
        let got = errors(
            "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits:\n  - {type: Container, min: {cpu: '2'}, max: {cpu: '1'}}\n  - {type: Pod, default: {cpu: '1'}}\n  - {type: Container, max: {memory: 1Gi}}\n",
        );
        assert_eq!(
            got,
            [
                "spec.limits[0].min[cpu]: Invalid value: 2: min value 2 is greater than max value 1",
                "spec.limits[0].defaultRequest[cpu]: Invalid value: 1: min value 2 is greater than default request value 1",
                "spec.limits[0].default[cpu]: Invalid value: 2: min value 2 is greater than default value 1",
                "spec.limits[1].default: Forbidden: may not be specified when `type` is 'Pod'",
                "spec.limits[2].type: Duplicate value: \"Container\"",
            ]
        );
    }

    #[test]
    fn resource_quota_names_values_and_scopes() {
        let got = errors(
            "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {limits.pods: '2', pods: 1500m, requests.cpu: '-1', count/pods: '3'}\n  scopes: [BestEffort, NotBestEffort]\n",
        );
        assert_eq!(
            got,
            [
                "spec.hard[limits.pods]: Invalid value: limits.pods: must be a standard resource type or fully qualified",
                "spec.hard[limits.pods]: Invalid value: limits.pods: must be a standard resource for quota",
                "spec.hard[pods]: Invalid value: 1500m: must be an integer",
                "spec.hard[requests.cpu]: Invalid value: \"-1\": must be greater than or equal to 0",
                "spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\", \"NotBestEffort\"}: unsupported scope applied to resource",
                "spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\", \"NotBestEffort\"}: conflicting scopes",
            ]
        );
        let got = errors(
            "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {pods: '2'}\n  scopeSelector:\n    matchExpressions:\n    - {scopeName: Terminating, operator: In, values: [x]}\n    - {scopeName: PriorityClass, operator: In}\n    - {scopeName: Nope, operator: Exists}\n",
        );
        assert_eq!(
            got,
            [
                "spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
                "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                "spec.scopeSelector.matchExpressions.scopeName: Invalid value: \"Nope\": unsupported scope",
            ]
        );
        assert!(
            errors("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {pods: '10', requests.nvidia.com/gpu: '4', limits.memory: 2Gi}\n  scopeSelector:\n    matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]\n")
                .is_empty()
        );
    }

    #[test]
    fn runtime_class_needs_a_handler_and_sane_overhead() {
        let got = errors(
            "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: Kata_1\noverhead: {podFixed: {cpu: '-1'}}\n",
        );
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].starts_with("handler: Invalid value: \"Kata_1\""));
        assert_eq!(
            got[1],
            "overhead.podFixed[cpu]: Invalid value: -1: must be greater than or equal to 0"
        );
    }
}
