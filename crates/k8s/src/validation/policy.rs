//! The API server's validation of the objects admission plugins read: LimitRange
//! (`pkg/apis/core/validation` `ValidateLimitRange`, on the items as defaulted by
//! `SetDefaults_LimitRangeItem`) and RuntimeClass (`pkg/apis/node/validation`
//! `ValidateRuntimeClass`). RULES.md §6. An object refused here is left out by itself.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::LimitRange;
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use topospread::api::quantity::Quantity;
use topospread::validation::{ErrorType, FieldError, FieldPath, validate_labels};

use crate::admission::limit_range::{canonical, defaulted_items};
use crate::load::Object;

/// Every error of a LimitRange or RuntimeClass (empty for other kinds).
pub(crate) fn validate_policy_object(object: &Object) -> Vec<FieldError> {
    match object {
        Object::LimitRange(lr) => validate_limit_range(lr),
        Object::RuntimeClass(rc) => validate_runtime_class(rc),
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
            let (mn, mx) = (parse(&min, k), parse(&max, k));
            let (df, dr) = (parse(&default, k), parse(&default_request, k));
            let r = parse(&ratio, k);
            if let (Some((mt, m)), Some((xt, x))) = (mn, mx)
                && m > x
            {
                errs.push(value(
                    &at.child("min").key(k),
                    mt,
                    format!(
                        "min value {} is greater than max value {}",
                        canonical(&mt.0),
                        canonical(&xt.0)
                    ),
                ));
            }
            if let (Some((dt, d)), Some((mt, m))) = (dr, mn)
                && m > d
            {
                errs.push(value(
                    &at.child("defaultRequest").key(k),
                    dt,
                    format!(
                        "min value {} is greater than default request value {}",
                        canonical(&mt.0),
                        canonical(&dt.0)
                    ),
                ));
            }
            if let (Some((dt, d)), Some((xt, x))) = (dr, mx)
                && d > x
            {
                errs.push(value(
                    &at.child("defaultRequest").key(k),
                    dt,
                    format!(
                        "default request value {} is greater than max value {}",
                        canonical(&dt.0),
                        canonical(&xt.0)
                    ),
                ));
            }
            if let (Some((rt, rq)), Some((dt, d))) = (dr, df)
                && rq > d
            {
                errs.push(value(
                    &at.child("defaultRequest").key(k),
                    rt,
                    format!(
                        "default request value {} is greater than default limit value {}",
                        canonical(&rt.0),
                        canonical(&dt.0)
                    ),
                ));
            }
            if let (Some((dt, d)), Some((mt, m))) = (df, mn)
                && m > d
            {
                errs.push(value(
                    &at.child("default").key(k),
                    mt,
                    format!(
                        "min value {} is greater than default value {}",
                        canonical(&mt.0),
                        canonical(&dt.0)
                    ),
                ));
            }
            if let (Some((dt, d)), Some((xt, x))) = (df, mx)
                && d > x
            {
                errs.push(value(
                    &at.child("default").key(k),
                    xt,
                    format!(
                        "default value {} is greater than max value {}",
                        canonical(&dt.0),
                        canonical(&xt.0)
                    ),
                ));
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
                        item.type_
                    ),
                ));
            }
        }
    }
    errs
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
