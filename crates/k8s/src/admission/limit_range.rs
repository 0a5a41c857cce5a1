//! The LimitRanger admission plugin (`plugin/pkg/admission/limitranger/admission.go`) on
//! a pod being created, with the LimitRanges of its namespace:
//! - mutation (`PodMutateLimitFunc`): each container and init container gets the
//!   `Container` items' `default` as limits and `defaultRequest` as requests for the
//!   resources it leaves out;
//! - validation (`PodValidateLimitFunc`): every container and init container within the
//!   `Container` items' `min`/`max`/`maxLimitRequestRatio`, the pod's aggregate requests
//!   and limits (containers summed, init containers as a floor, sidecars in both, no
//!   overhead; pod-level resources in their place) within the `Pod` items'.
//!
//! A LimitRange is stored with its items defaulted (`SetDefaults_LimitRangeItem`): a
//! `Container` item's `default` from its `max`, `defaultRequest` from its `default`, then
//! from its `min`. The refusal is the plugin's words joined as an aggregate is.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, LimitRange, LimitRangeItem, Pod, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use topospread::api::quantity::Quantity;

/// `resource.MaxMilliValue`: past it, values are compared in whole units.
const MAX_MILLI_VALUE: i64 = i64::MAX / 1000;

/// A LimitRange's items with the API server's defaults applied.
pub fn defaulted_items(lr: &LimitRange) -> Vec<LimitRangeItem> {
    let mut items: Vec<LimitRangeItem> = lr
        .spec
        .as_ref()
        .map(|s| s.limits.clone())
        .unwrap_or_default();
    for item in &mut items {
        if item.type_ != "Container" {
            continue;
        }
        let default = item.default.get_or_insert_with(BTreeMap::new);
        for (k, v) in item.max.iter().flatten() {
            default.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let default = default.clone();
        let request = item.default_request.get_or_insert_with(BTreeMap::new);
        for (k, v) in default.iter().chain(item.min.iter().flatten()) {
            request.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    items
}

/// `PodMutateLimitFunc` for one LimitRange's (defaulted) items.
pub fn mutate(pod: &mut Pod, items: &[LimitRangeItem]) {
    let mut limits = BTreeMap::new();
    let mut requests = BTreeMap::new();
    for item in items.iter().filter(|i| i.type_ == "Container") {
        for (k, v) in item.default.iter().flatten() {
            limits.insert(k.clone(), v.clone());
        }
        for (k, v) in item.default_request.iter().flatten() {
            requests.insert(k.clone(), v.clone());
        }
    }
    let Some(spec) = pod.spec.as_mut() else {
        return;
    };
    let init = spec.init_containers.iter_mut().flatten();
    for c in spec.containers.iter_mut().chain(init) {
        let r = c
            .resources
            .get_or_insert_with(ResourceRequirements::default);
        let have = r.limits.get_or_insert_with(BTreeMap::new);
        for (k, v) in &limits {
            have.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let have = r.requests.get_or_insert_with(BTreeMap::new);
        for (k, v) in &requests {
            have.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

/// `PodValidateLimitFunc` for one LimitRange's items: every violation, in the plugin's
/// words. `pod_level_resources`: the `PodLevelResources` gate.
pub fn validate(pod: &Pod, items: &[LimitRangeItem], pod_level_resources: bool) -> Vec<String> {
    let mut errs = Vec::new();
    let Some(spec) = pod.spec.as_ref() else {
        return errs;
    };
    for item in items {
        match item.type_.as_str() {
            "Container" => {
                let init = spec.init_containers.iter().flatten();
                for c in spec.containers.iter().chain(init) {
                    let (requests, limits) = lists(c);
                    check(&mut errs, item, "Container", &requests, &limits);
                }
            }
            "Pod" => {
                let requests = aggregate(
                    spec,
                    |c| lists(c).0,
                    pod_level_resources
                        .then(|| spec.resources.as_ref().and_then(|r| r.requests.as_ref()))
                        .flatten(),
                );
                let limits = aggregate(
                    spec,
                    |c| lists(c).1,
                    pod_level_resources
                        .then(|| spec.resources.as_ref().and_then(|r| r.limits.as_ref()))
                        .flatten(),
                );
                check(&mut errs, item, "Pod", &requests, &limits);
            }
            _ => {}
        }
    }
    errs
}

/// One resource's value as written and parsed.
#[derive(Clone, Debug)]
pub(crate) struct Value {
    pub(crate) text: String,
    pub(crate) q: Quantity,
}

pub(crate) type List = BTreeMap<String, Value>;

/// A container's requests and limits, parsed (a quantity that does not parse is left
/// out: validation refused it before admission).
pub(crate) fn lists(c: &Container) -> (List, List) {
    let parse = |l: Option<&BTreeMap<String, K8sQuantity>>| -> List {
        l.into_iter()
            .flatten()
            .filter_map(|(k, v)| {
                Some((
                    k.clone(),
                    Value {
                        text: canonical(&v.0),
                        q: Quantity::parse(&v.0).ok()?,
                    },
                ))
            })
            .collect()
    };
    let r = c.resources.as_ref();
    (
        parse(r.and_then(|r| r.requests.as_ref())),
        parse(r.and_then(|r| r.limits.as_ref())),
    )
}

/// `PodRequests`/`PodLimits` without overhead: containers summed, sidecars added, each
/// init container (with the sidecars before it) as a floor; then the pod-level values
/// of cpu and memory in their place.
pub(crate) fn aggregate(
    spec: &k8s_openapi::api::core::v1::PodSpec,
    of: impl Fn(&Container) -> List,
    pod_level: Option<&BTreeMap<String, K8sQuantity>>,
) -> List {
    let mut sum: BTreeMap<String, Quantity> = BTreeMap::new();
    let add = |into: &mut BTreeMap<String, Quantity>, l: &List| {
        for (k, v) in l {
            let e = into.entry(k.clone()).or_insert(Quantity::ZERO);
            *e = e.saturating_add(v.q);
        }
    };
    for c in &spec.containers {
        add(&mut sum, &of(c));
    }
    let mut sidecars = BTreeMap::new();
    let mut floor: BTreeMap<String, Quantity> = BTreeMap::new();
    for c in spec.init_containers.iter().flatten() {
        let l = of(c);
        let in_use = if c.restart_policy.as_deref() == Some("Always") {
            add(&mut sum, &l);
            add(&mut sidecars, &l);
            sidecars.clone()
        } else {
            let mut with = sidecars.clone();
            add(&mut with, &l);
            with
        };
        for (k, q) in in_use {
            let e = floor.entry(k).or_insert(q);
            *e = (*e).max(q);
        }
    }
    for (k, q) in floor {
        let e = sum.entry(k).or_insert(q);
        *e = (*e).max(q);
    }
    let mut out: List = sum
        .into_iter()
        .map(|(k, q)| {
            let binary = k == "memory" || k.starts_with("hugepages-") || k == "ephemeral-storage";
            (
                k,
                Value {
                    text: render(q, binary),
                    q,
                },
            )
        })
        .collect();
    for (k, v) in pod_level.into_iter().flatten() {
        if (k == "cpu" || k == "memory")
            && let Ok(q) = Quantity::parse(&v.0)
        {
            out.insert(
                k.clone(),
                Value {
                    text: canonical(&v.0),
                    q,
                },
            );
        }
    }
    out
}

/// A quantity as the API server prints it (`Quantity.String()`, canonical form): in its
/// written suffix family (binary for `Ki`..`Ei`), `1.5` as `1500m`, `1024Mi` as `1Gi`.
pub(crate) fn canonical(text: &str) -> String {
    let Ok(q) = Quantity::parse(text) else {
        return text.to_string();
    };
    let binary = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
        .iter()
        .any(|s| text.ends_with(s));
    render(q, binary)
}

/// `q` in canonical form, binary-suffixed when asked and exact (and not below 1024).
pub(crate) fn render(q: Quantity, binary: bool) -> String {
    let shown = q.to_string();
    let nanos: i128 = match shown.strip_suffix('n') {
        Some(n) => n.parse().unwrap_or(0),
        None => shown
            .parse::<i128>()
            .unwrap_or(0)
            .saturating_mul(1_000_000_000),
    };
    if nanos == 0 {
        return "0".into();
    }
    const NANO: i128 = 1_000_000_000;
    if binary && nanos % NANO == 0 && (nanos / NANO).abs() >= 1024 {
        let mut n = nanos / NANO;
        let mut exp = 0;
        while n % 1024 == 0 && exp < 6 {
            n /= 1024;
            exp += 1;
        }
        let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][exp];
        return format!("{n}{suffix}");
    }
    const SUFFIXES: [(i128, &str); 10] = [
        (1_000_000_000_000_000_000_000_000, "E"),
        (1_000_000_000_000_000_000_000, "P"),
        (1_000_000_000_000_000_000, "T"),
        (1_000_000_000_000_000, "G"),
        (1_000_000_000_000_000, "M"),
        (1_000_000_000_000, "k"),
        (NANO, ""),
        (1_000_000, "m"),
        (1_000, "u"),
        (1, "n"),
    ];
    for (scale, suffix) in SUFFIXES {
        if nanos % scale == 0 {
            return format!("{}{suffix}", nanos / scale);
        }
    }
    format!("{nanos}n")
}

/// `requestLimitEnforcedValues`: milli-units unless a value is too large for them.
fn scaled(values: &[Option<&Quantity>]) -> Vec<i64> {
    let milli = values
        .iter()
        .all(|v| v.is_none_or(|q| q.value() <= MAX_MILLI_VALUE));
    values
        .iter()
        .map(|v| match v {
            None => 0,
            Some(q) if milli => q.milli_value(),
            Some(q) => q.value(),
        })
        .collect()
}

/// The item's min, max and maxLimitRequestRatio on one set of requests and limits.
fn check(
    errs: &mut Vec<String>,
    item: &LimitRangeItem,
    kind: &str,
    requests: &List,
    limits: &List,
) {
    for (name, enforced) in item.min.iter().flatten() {
        let Ok(e) = Quantity::parse(&enforced.0) else {
            continue;
        };
        let (req, lim) = (requests.get(name), limits.get(name));
        let v = scaled(&[req.map(|r| &r.q), lim.map(|l| &l.q), Some(&e)]);
        let text = &canonical(&enforced.0);
        match req {
            None => errs.push(format!(
                "minimum {name} usage per {kind} is {text}.  No request is specified"
            )),
            Some(r) if v[0] < v[2] => errs.push(format!(
                "minimum {name} usage per {kind} is {text}, but request is {}",
                r.text
            )),
            _ => {
                if let Some(l) = lim.filter(|_| v[1] < v[2]) {
                    errs.push(format!(
                        "minimum {name} usage per {kind} is {text}, but limit is {}",
                        l.text
                    ));
                }
            }
        }
    }
    for (name, enforced) in item.max.iter().flatten() {
        let Ok(e) = Quantity::parse(&enforced.0) else {
            continue;
        };
        let (req, lim) = (requests.get(name), limits.get(name));
        let v = scaled(&[req.map(|r| &r.q), lim.map(|l| &l.q), Some(&e)]);
        let text = &canonical(&enforced.0);
        match lim {
            None => errs.push(format!(
                "maximum {name} usage per {kind} is {text}.  No limit is specified"
            )),
            Some(l) if v[1] > v[2] => errs.push(format!(
                "maximum {name} usage per {kind} is {text}, but limit is {}",
                l.text
            )),
            _ => {
                if let Some(r) = req.filter(|_| v[0] > v[2]) {
                    errs.push(format!(
                        "maximum {name} usage per {kind} is {text}, but request is {}",
                        r.text
                    ));
                }
            }
        }
    }
    for (name, enforced) in item.max_limit_request_ratio.iter().flatten() {
        let Ok(e) = Quantity::parse(&enforced.0) else {
            continue;
        };
        let (req, lim) = (requests.get(name), limits.get(name));
        let v = scaled(&[req.map(|r| &r.q), lim.map(|l| &l.q), Some(&e)]);
        let text = &canonical(&enforced.0);
        if req.is_none() || v[0] == 0 {
            errs.push(format!(
                "{name} max limit to request ratio per {kind} is {text}, but no request is specified or request is 0"
            ));
            continue;
        }
        if lim.is_none() || v[1] == 0 {
            errs.push(format!(
                "{name} max limit to request ratio per {kind} is {text}, but no limit is specified or limit is 0"
            ));
            continue;
        }
        #[allow(clippy::cast_precision_loss)] // upstream compares float64s
        let ratio = v[1] as f64 / v[0] as f64;
        #[allow(clippy::cast_precision_loss)]
        let (observed, max) = if e.value() <= MAX_MILLI_VALUE {
            (ratio * 1000.0, e.milli_value() as f64)
        } else {
            (ratio, e.value() as f64)
        };
        if observed > max {
            errs.push(format!(
                "{name} max limit to request ratio per {kind} is {text}, but provided ratio is {ratio:.6}"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lr(items: &str) -> LimitRange {
        serde_saphyr::from_str(&format!(
            "metadata: {{name: lr}}\nspec:\n  limits: {items}\n"
        ))
        .expect("the test object deserializes")
    }

    fn pod(containers: &str) -> Pod {
        serde_saphyr::from_str(&format!(
            "metadata: {{name: p}}\nspec:\n  containers: {containers}\n"
        ))
        .expect("the test object deserializes")
    }

    fn resources(p: &Pod) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
        let r = p
            .spec
            .as_ref()
            .and_then(|s| s.containers[0].resources.as_ref());
        let text = |l: Option<&BTreeMap<String, K8sQuantity>>| {
            l.into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.0.clone()))
                .collect()
        };
        (
            text(r.and_then(|r| r.requests.as_ref())),
            text(r.and_then(|r| r.limits.as_ref())),
        )
    }

    #[test]
    fn items_default_from_max_and_min() {
        let items = defaulted_items(&lr(
            "[{type: Container, max: {cpu: '1'}, min: {memory: 64Mi}}]",
        ));
        let d = &items[0];
        assert_eq!(
            d.default
                .as_ref()
                .and_then(|m| m.get("cpu"))
                .map(|q| q.0.as_str()),
            Some("1")
        );
        let req = d.default_request.as_ref().expect("defaultRequest");
        assert_eq!(req.get("cpu").map(|q| q.0.as_str()), Some("1"));
        assert_eq!(req.get("memory").map(|q| q.0.as_str()), Some("64Mi"));
    }

    #[test]
    fn defaults_fill_what_the_container_leaves_out() {
        let items = defaulted_items(&lr(
            "[{type: Container, default: {cpu: 500m, memory: 256Mi}, defaultRequest: {cpu: 100m}}]",
        ));
        let mut p = pod("[{name: c, resources: {limits: {memory: 1Gi}}}]");
        mutate(&mut p, &items);
        let (requests, limits) = resources(&p);
        assert_eq!(requests.get("cpu").map(String::as_str), Some("100m"));
        assert_eq!(limits.get("cpu").map(String::as_str), Some("500m"));
        assert_eq!(limits.get("memory").map(String::as_str), Some("1Gi"));
    }

    #[test]
    fn min_max_and_ratio_in_the_plugins_words() {
        let items = defaulted_items(&lr(
            "[{type: Container, max: {cpu: '1'}, min: {memory: 100Mi}, maxLimitRequestRatio: {memory: '2'}}]",
        ));
        let p = pod(
            "[{name: c, resources: {requests: {cpu: 500m, memory: 50Mi}, limits: {cpu: '2', memory: 200Mi}}}]",
        );
        assert_eq!(
            validate(&p, &items, true),
            [
                "minimum memory usage per Container is 100Mi, but request is 50Mi",
                "maximum cpu usage per Container is 1, but limit is 2",
                "memory max limit to request ratio per Container is 2, but provided ratio is 4.000000",
            ]
        );
        let ok = pod(
            "[{name: c, resources: {requests: {cpu: 500m, memory: 100Mi}, limits: {cpu: '1', memory: 200Mi}}}]",
        );
        assert!(validate(&ok, &items, true).is_empty());
    }

    #[test]
    fn quantities_are_printed_as_the_api_server_prints_them() {
        let got: Vec<String> = [
            "1.5", "1000m", "2000", "100Mi", "1024Mi", "1536Ki", "500", "0.1",
        ]
        .iter()
        .map(|t| canonical(t))
        .collect();
        assert_eq!(
            got,
            ["1500m", "1", "2k", "100Mi", "1Gi", "1536Ki", "500", "100m"]
        );
    }

    #[test]
    fn pod_items_bound_the_sum_of_containers() {
        let items = defaulted_items(&lr("[{type: Pod, max: {cpu: '1'}}]"));
        let p = pod(
            "[{name: a, resources: {limits: {cpu: 600m}}}, {name: b, resources: {limits: {cpu: 600m}}}]",
        );
        assert_eq!(
            validate(&p, &items, true),
            ["maximum cpu usage per Pod is 1, but limit is 1200m"]
        );
    }
}
