//! The ResourceQuota admission plugin on pods being created, with the ResourceQuotas of
//! their namespace (`staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota`
//! `CheckRequest`, and the pod evaluator `pkg/quota/v1/evaluator/core/pods.go`):
//!
//! - a quota applies to a pod when its `hard` names a resource pods use and every scope
//!   (`scopes`, `scopeSelector`) matches the pod (`generic.Matches`, `podMatchesScopeFunc`);
//! - a quota on cpu or memory refuses a container (or init container) that does not set
//!   the request or limit it names (`Constraints`: "failed quota: NAME: must specify ...");
//! - the pod's usage (`PodUsageFunc`: `count/pods`, `pods`, requests and limits of cpu,
//!   memory, ephemeral storage, hugepages and extended resources, overhead included)
//!   added to what the namespace uses must stay within every applying quota's `hard`, or
//!   the pod is refused ("exceeded quota: NAME, requested: ..., used: ..., limited: ...");
//!   an admitted pod's usage is added to each.
//!
//! `used` starts as the quota controller computes it (`CalculateUsageStats`): the usage
//! of the pods that already exist (read back from a cluster) in the quota's scopes. Every
//! quota's `hard` is its `spec.hard` (the controller copies it to `status.hard`). Quotas
//! are checked in name order (upstream's order is the informer's, unspecified); a pod
//! stuck terminating past its grace period is charged (the simulation has no clock).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1::{
    Affinity, Container, Pod, PodAffinityTerm, ResourceQuota, ResourceRequirements,
    WeightedPodAffinityTerm,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use topospread::api::quantity::Quantity;

use super::limit_range::{List, aggregate, lists, render};

/// A quantity of quota usage with the suffix family it prints in (`Quantity.String()`
/// keeps the format of the first non-zero term of a sum).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Amount {
    q: Quantity,
    binary: bool,
}

impl Amount {
    const ZERO: Amount = Amount {
        q: Quantity::ZERO,
        binary: false,
    };

    fn parse(text: &str) -> Option<Amount> {
        Some(Amount {
            q: Quantity::parse(text).ok()?,
            binary: is_binary(text),
        })
    }

    fn plus(self, other: Amount) -> Amount {
        Amount {
            q: self.q.saturating_add(other.q),
            binary: if self.q.is_zero() {
                other.binary
            } else {
                self.binary
            },
        }
    }
}

impl std::fmt::Display for Amount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&render(self.q, self.binary))
    }
}

fn is_binary(text: &str) -> bool {
    ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
        .iter()
        .any(|s| text.ends_with(s))
}

/// Quota usage by resource name.
type Usage = BTreeMap<String, Amount>;

/// What quota reads of one pod: its usage and what its scopes test. Kept for pods read in
/// compact form, whose whole object is dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct QuotaPod {
    usage: Usage,
    /// `spec.activeDeadlineSeconds` >= 0 (scope `Terminating`).
    terminating: bool,
    /// QoS class BestEffort (scope `BestEffort`).
    best_effort: bool,
    /// `spec.priorityClassName`, when set (scope `PriorityClass`).
    priority_class: Option<String>,
    /// A pod (anti-)affinity term naming namespaces or a namespace selector (scope
    /// `CrossNamespacePodAffinity`).
    cross_namespace_affinity: bool,
}

impl QuotaPod {
    /// What quota reads of `pod` (`PodUsageFunc` and the scope tests).
    pub fn of(pod: &Pod) -> QuotaPod {
        let spec = pod.spec.as_ref();
        QuotaPod {
            usage: usage(pod),
            terminating: spec
                .and_then(|s| s.active_deadline_seconds)
                .is_some_and(|d| d >= 0),
            best_effort: best_effort(pod),
            priority_class: spec
                .and_then(|s| s.priority_class_name.clone())
                .filter(|c| !c.is_empty()),
            cross_namespace_affinity: cross_namespace_affinity(pod),
        }
    }
}

/// What quota reads of pods, shared between the pods that read the same (the replicas
/// of one template): kept apiece, a dump's pods held a usage map each, ~640 bytes. A pod
/// is looked up by the fields the view is made of, so a replica's view is found without
/// making it again (making it, then looking it up, was a tenth of a dump's load).
#[derive(Debug, Default)]
pub struct QuotaPods {
    seen: Mutex<HashMap<u64, Vec<Shared>>>,
}

/// A view, with the fields of the first pod it was made for.
type Shared = (QuotaInput, Arc<QuotaPod>);

impl QuotaPods {
    /// At most this many distinct views are remembered; beyond, each pod has its own.
    const REMEMBERED: usize = 1 << 16;

    /// [`QuotaPod::of`] `pod`, the one already made when another pod read the same.
    pub fn of(&self, pod: &Pod) -> Arc<QuotaPod> {
        let key = QuotaInput::hash(pod);
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let same = seen.get(&key).into_iter().flatten();
        if let Some((_, shared)) = same.into_iter().find(|(input, _)| input.reads_same(pod)) {
            return Arc::clone(shared);
        }
        let quota = Arc::new(QuotaPod::of(pod));
        if seen.len() < Self::REMEMBERED {
            let entry = seen.entry(key).or_default();
            entry.push((QuotaInput::of(pod), Arc::clone(&quota)));
        }
        quota
    }
}

/// The fields of a pod [`QuotaPod::of`] reads, owned: what [`QuotaPods`] compares.
#[derive(Debug)]
struct QuotaInput {
    terminal: bool,
    active_deadline_seconds: Option<i64>,
    priority_class_name: Option<String>,
    cross_namespace_affinity: bool,
    resources: Option<ResourceRequirements>,
    overhead: Option<BTreeMap<String, K8sQuantity>>,
    containers: Vec<Option<ResourceRequirements>>,
    /// Each init container's resources and restart policy (a sidecar's are summed).
    init_containers: Vec<(Option<ResourceRequirements>, Option<String>)>,
}

impl QuotaInput {
    fn of(pod: &Pod) -> QuotaInput {
        let spec = pod.spec.as_ref();
        QuotaInput {
            terminal: terminal(pod),
            active_deadline_seconds: spec.and_then(|s| s.active_deadline_seconds),
            priority_class_name: spec.and_then(|s| s.priority_class_name.clone()),
            cross_namespace_affinity: cross_namespace_affinity(pod),
            resources: spec.and_then(|s| s.resources.clone()),
            overhead: spec.and_then(|s| s.overhead.clone()),
            containers: spec
                .map(|s| s.containers.iter().map(|c| c.resources.clone()).collect())
                .unwrap_or_default(),
            init_containers: spec
                .and_then(|s| s.init_containers.as_ref())
                .map(|i| {
                    i.iter()
                        .map(|c| (c.resources.clone(), c.restart_policy.clone()))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// Whether `pod` reads as these fields.
    fn reads_same(&self, pod: &Pod) -> bool {
        let spec = pod.spec.as_ref();
        let init = spec
            .and_then(|s| s.init_containers.as_deref())
            .unwrap_or_default();
        let containers = spec.map(|s| s.containers.as_slice()).unwrap_or_default();
        self.terminal == terminal(pod)
            && self.active_deadline_seconds == spec.and_then(|s| s.active_deadline_seconds)
            && self.priority_class_name.as_deref()
                == spec.and_then(|s| s.priority_class_name.as_deref())
            && self.cross_namespace_affinity == cross_namespace_affinity(pod)
            && self.resources.as_ref() == spec.and_then(|s| s.resources.as_ref())
            && self.overhead.as_ref() == spec.and_then(|s| s.overhead.as_ref())
            && self.containers.len() == containers.len()
            && self.init_containers.len() == init.len()
            && self
                .containers
                .iter()
                .zip(containers)
                .all(|(r, c)| r.as_ref() == c.resources.as_ref())
            && self
                .init_containers
                .iter()
                .zip(init)
                .all(|((r, policy), c)| {
                    r.as_ref() == c.resources.as_ref()
                        && policy.as_deref() == c.restart_policy.as_deref()
                })
    }

    /// A hash of the resources among those fields (the rest is compared only).
    fn hash(pod: &Pod) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        let spec = pod.spec.as_ref();
        let mut list = |l: Option<&BTreeMap<String, K8sQuantity>>| {
            for (k, v) in l.into_iter().flatten() {
                k.hash(&mut h);
                v.0.hash(&mut h);
            }
            0xffu8.hash(&mut h);
        };
        let mut requirements = |r: Option<&ResourceRequirements>| {
            list(r.and_then(|r| r.requests.as_ref()));
            list(r.and_then(|r| r.limits.as_ref()));
        };
        requirements(spec.and_then(|s| s.resources.as_ref()));
        let init = spec
            .and_then(|s| s.init_containers.as_deref())
            .unwrap_or_default();
        let containers = spec.map(|s| s.containers.as_slice()).unwrap_or_default();
        for c in containers.iter().chain(init) {
            requirements(c.resources.as_ref());
        }
        list(spec.and_then(|s| s.overhead.as_ref()));
        h.finish()
    }
}

fn terminal(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

fn cross_namespace_affinity(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.affinity.as_ref())
        .is_some_and(cross_namespace)
}

/// `PodUsageFunc`: `count/pods` always; for a pod not in a terminal phase, `pods` and
/// what `podComputeUsageHelper` makes of its requests and limits (`PodRequests`,
/// `PodLimits`: overhead included).
fn usage(pod: &Pod) -> Usage {
    let one = Amount {
        q: Quantity::from_value(1),
        binary: false,
    };
    let mut usage = Usage::from([("count/pods".to_string(), one)]);
    let Some(spec) = pod.spec.as_ref().filter(|_| !terminal(pod)) else {
        return usage;
    };
    let pod_level = spec.resources.as_ref();
    let mut requests = amounts(&aggregate(
        spec,
        |c| lists(c).0,
        pod_level.and_then(|r| r.requests.as_ref()),
    ));
    let mut limits = amounts(&aggregate(
        spec,
        |c| lists(c).1,
        pod_level.and_then(|r| r.limits.as_ref()),
    ));
    for (k, v) in spec.overhead.iter().flatten() {
        let Some(o) = Amount::parse(&v.0) else {
            continue;
        };
        let r = requests.entry(k.clone()).or_insert(Amount::ZERO);
        *r = r.plus(o);
        if let Some(l) = limits.get_mut(k) {
            *l = l.plus(o);
        }
    }
    usage.extend(compute_usage(&requests, &limits));
    usage
}

fn amounts(list: &List) -> Usage {
    list.iter()
        .map(|(k, v)| {
            (
                k.clone(),
                Amount {
                    q: v.q,
                    binary: is_binary(&v.text),
                },
            )
        })
        .collect()
}

/// `podComputeUsageHelper`: what quota charges for some requests and limits.
fn compute_usage(requests: &Usage, limits: &Usage) -> Usage {
    let mut out = Usage::from([(
        "pods".to_string(),
        Amount {
            q: Quantity::from_value(1),
            binary: false,
        },
    )]);
    for r in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(v) = requests.get(r) {
            out.insert(r.to_string(), *v);
            out.insert(format!("requests.{r}"), *v);
        }
        if let Some(v) = limits.get(r) {
            out.insert(format!("limits.{r}"), *v);
        }
    }
    for (k, v) in requests {
        if k.starts_with("hugepages-") {
            out.insert(k.clone(), *v);
            out.insert(format!("requests.{k}"), *v);
        }
        if is_extended_resource(k) {
            out.insert(format!("requests.{k}"), *v);
        }
    }
    out
}

/// `IsNativeResource`: unprefixed, or in the `kubernetes.io/` domain.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `helper.IsExtendedResourceName`: outside the native domains, not itself a quota name.
fn is_extended_resource(name: &str) -> bool {
    !is_native(name) && !name.starts_with("requests.")
}

/// `podResources`: what the pod evaluator tracks.
const POD_RESOURCES: &[&str] = &[
    "count/pods",
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
];

/// `podEvaluator.MatchingResources`: the names among `hard` that pods use.
fn matching_resources<'a>(hard: impl Iterator<Item = &'a String>) -> Vec<&'a str> {
    hard.filter(|r| {
        POD_RESOURCES.contains(&r.as_str())
            || r.starts_with("hugepages-")
            || r.starts_with("requests.hugepages-")
            || (!is_native(r) && r.starts_with("requests."))
    })
    .map(String::as_str)
    .collect()
}

/// `validationSet`: the resources every container must set when a quota tracks them.
const VALIDATION_SET: &[&str] = &[
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

/// `podEvaluator.Constraints`: each container and init container must set what the
/// quota tracks of cpu and memory; `Some` names what is missing, in upstream's words.
fn constraints(pod: &Pod, required: &[&str]) -> Option<String> {
    let required: BTreeSet<&str> = required
        .iter()
        .copied()
        .filter(|r| VALIDATION_SET.contains(r))
        .collect();
    if required.is_empty() {
        return None;
    }
    let spec = pod.spec.as_ref()?;
    let mut missing: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let init = spec.init_containers.iter().flatten();
    for c in spec.containers.iter().chain(init) {
        let have = container_usage(c);
        for r in &required {
            if !have.contains_key(*r) {
                missing.entry(*r).or_default().insert(c.name.as_str());
            }
        }
    }
    if missing.is_empty() {
        return None;
    }
    let parts: Vec<String> = missing
        .iter()
        .map(|(r, names)| {
            let names: Vec<&str> = names.iter().copied().collect();
            format!("{r} for: {}", names.join(","))
        })
        .collect();
    Some(format!("must specify {}", parts.join("; ")))
}

fn container_usage(c: &Container) -> Usage {
    let (requests, limits) = lists(c);
    compute_usage(&amounts(&requests), &amounts(&limits))
}

/// `qos.GetPodQOS(pod) == BestEffort`: no positive cpu or memory request or limit (the
/// pod-level ones when set, else the containers' and init containers').
fn best_effort(pod: &Pod) -> bool {
    let Some(spec) = pod.spec.as_ref() else {
        return true;
    };
    let positive = |m: Option<&BTreeMap<String, K8sQuantity>>| {
        m.into_iter().flatten().any(|(k, v)| {
            (k == "cpu" || k == "memory") && Quantity::parse(&v.0).is_ok_and(|q| q.signum() > 0)
        })
    };
    if let Some(r) = spec.resources.as_ref()
        && (r.requests.as_ref().is_some_and(|m| !m.is_empty())
            || r.limits.as_ref().is_some_and(|m| !m.is_empty()))
    {
        return !positive(r.requests.as_ref()) && !positive(r.limits.as_ref());
    }
    let init = spec.init_containers.iter().flatten();
    !spec.containers.iter().chain(init).any(|c| {
        c.resources
            .as_ref()
            .is_some_and(|r| positive(r.requests.as_ref()) || positive(r.limits.as_ref()))
    })
}

/// `usesCrossNamespacePodAffinity`.
fn cross_namespace(a: &Affinity) -> bool {
    let term = |t: &PodAffinityTerm| {
        t.namespaces.as_ref().is_some_and(|n| !n.is_empty()) || t.namespace_selector.is_some()
    };
    let terms = |req: Option<&Vec<PodAffinityTerm>>,
                 pref: Option<&Vec<WeightedPodAffinityTerm>>| {
        req.into_iter().flatten().any(term)
            || pref
                .into_iter()
                .flatten()
                .any(|w| term(&w.pod_affinity_term))
    };
    a.pod_affinity.as_ref().is_some_and(|p| {
        terms(
            p.required_during_scheduling_ignored_during_execution
                .as_ref(),
            p.preferred_during_scheduling_ignored_during_execution
                .as_ref(),
        )
    }) || a.pod_anti_affinity.as_ref().is_some_and(|p| {
        terms(
            p.required_during_scheduling_ignored_during_execution
                .as_ref(),
            p.preferred_during_scheduling_ignored_during_execution
                .as_ref(),
        )
    })
}

/// One scope requirement (`spec.scopes` are `Exists` requirements).
#[derive(Clone, Debug)]
struct Scope {
    name: String,
    operator: String,
    values: Vec<String>,
}

impl Scope {
    /// `podMatchesScopeFunc`.
    fn matches(&self, pod: &QuotaPod) -> bool {
        match self.name.as_str() {
            "Terminating" => pod.terminating,
            "NotTerminating" => !pod.terminating,
            "BestEffort" => pod.best_effort,
            "NotBestEffort" => !pod.best_effort,
            "CrossNamespacePodAffinity" => pod.cross_namespace_affinity,
            "PriorityClass" => {
                let class = pod.priority_class.as_deref();
                let listed = class.is_some_and(|c| self.values.iter().any(|v| v == c));
                match self.operator.as_str() {
                    "Exists" => class.is_some(),
                    "DoesNotExist" => class.is_none(),
                    "In" => listed,
                    "NotIn" => !listed,
                    _ => false,
                }
            }
            _ => false,
        }
    }
}

/// One ResourceQuota as admission reads it, with what its namespace uses.
#[derive(Clone, Debug)]
struct Quota {
    name: String,
    hard: Usage,
    scopes: Vec<Scope>,
    used: Usage,
}

impl Quota {
    fn new(rq: &ResourceQuota) -> Quota {
        let spec = rq.spec.as_ref();
        let hard: Usage = spec
            .and_then(|s| s.hard.as_ref())
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), Amount::parse(&v.0)?)))
            .collect();
        let mut scopes: Vec<Scope> = spec
            .and_then(|s| s.scopes.as_ref())
            .into_iter()
            .flatten()
            .map(|s| Scope {
                name: s.clone(),
                operator: "Exists".into(),
                values: Vec::new(),
            })
            .collect();
        let selector = spec.and_then(|s| s.scope_selector.as_ref());
        for e in selector
            .and_then(|s| s.match_expressions.as_ref())
            .into_iter()
            .flatten()
        {
            scopes.push(Scope {
                name: e.scope_name.clone(),
                operator: e.operator.clone(),
                values: e.values.clone().unwrap_or_default(),
            });
        }
        let used = hard.keys().map(|k| (k.clone(), Amount::ZERO)).collect();
        Quota {
            name: rq.metadata.name.clone().unwrap_or_default(),
            hard,
            scopes,
            used,
        }
    }

    /// `generic.Matches`: a resource pods use, and every scope.
    fn applies(&self, pod: &QuotaPod) -> bool {
        !matching_resources(self.hard.keys()).is_empty()
            && self.scopes.iter().all(|s| s.matches(pod))
    }

    /// What `pod` would add to `used`, masked to `hard`.
    fn requested(&self, pod: &QuotaPod) -> Usage {
        pod.usage
            .iter()
            .filter(|(k, _)| self.hard.contains_key(*k))
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    }

    fn charge(&mut self, requested: &Usage) {
        for (k, v) in requested {
            let u = self.used.entry(k.clone()).or_insert(Amount::ZERO);
            *u = u.plus(*v);
        }
    }
}

/// `prettyPrint`: `name=value` by name, comma-separated.
fn pretty(usage: &Usage, names: &BTreeSet<&str>) -> String {
    usage
        .iter()
        .filter(|(k, _)| names.contains(k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The ResourceQuotas of every namespace with what is used of them.
#[derive(Clone, Debug, Default)]
pub struct Quotas {
    /// Namespace -> its quotas, by name.
    by_namespace: BTreeMap<String, Vec<Quota>>,
}

impl Quotas {
    /// Adds a ResourceQuota (a later one of the same namespace and name replaces it).
    pub fn add(&mut self, namespace: &str, rq: &ResourceQuota) {
        let quota = Quota::new(rq);
        let list = self.by_namespace.entry(namespace.to_string()).or_default();
        list.retain(|q| q.name != quota.name);
        let at = list.partition_point(|q| q.name < quota.name);
        list.insert(at, quota);
    }

    /// Whether there is no quota at all.
    pub fn is_empty(&self) -> bool {
        self.by_namespace.is_empty()
    }

    /// Charges a pod that already exists to the quotas it falls under, as the quota
    /// controller counts it (no check: it was admitted when created).
    pub fn charge_existing(&mut self, namespace: &str, pod: &QuotaPod) {
        for q in self.by_namespace.get_mut(namespace).into_iter().flatten() {
            if q.scopes.iter().all(|s| s.matches(pod)) {
                let requested = q.requested(pod);
                q.charge(&requested);
            }
        }
    }

    /// Admits a pod being created in `namespace` (`CheckRequest`): `Err` is the
    /// plugin's reason; on success its usage is charged to every quota that applies.
    pub fn admit(&mut self, namespace: &str, pod: &Pod) -> Result<(), String> {
        let Some(quotas) = self.by_namespace.get_mut(namespace) else {
            return Ok(());
        };
        let facts = QuotaPod::of(pod);
        let mut applying = Vec::new();
        for (i, q) in quotas.iter().enumerate() {
            if !q.applies(&facts) {
                continue;
            }
            let restricted = matching_resources(q.hard.keys());
            if let Some(reason) = constraints(pod, &restricted) {
                return Err(format!("failed quota: {}: {reason}", q.name));
            }
            applying.push(i);
        }
        let mut charges = Vec::new();
        for i in applying {
            let q = &quotas[i];
            let requested = q.requested(&facts);
            let exceeded: BTreeSet<&str> = requested
                .iter()
                .filter(|(k, v)| {
                    let used = q.used.get(*k).copied().unwrap_or(Amount::ZERO);
                    q.hard.get(*k).is_some_and(|h| used.plus(**v).q > h.q)
                })
                .map(|(k, _)| k.as_str())
                .collect();
            if !exceeded.is_empty() {
                return Err(format!(
                    "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                    q.name,
                    pretty(&requested, &exceeded),
                    pretty(&q.used, &exceeded),
                    pretty(&q.hard, &exceeded),
                ));
            }
            charges.push((i, requested));
        }
        for (i, requested) in charges {
            quotas[i].charge(&requested);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{Object, parse_manifests};

    fn objects(text: &str) -> Vec<Object> {
        parse_manifests(text, "q.yaml")
            .expect("parses")
            .objects
            .into_iter()
            .map(|l| l.object)
            .collect()
    }

    fn quotas(text: &str) -> Quotas {
        let mut q = Quotas::default();
        for o in objects(text) {
            if let Object::ResourceQuota(rq) = o {
                q.add("default", &rq);
            }
        }
        q
    }

    fn pod(text: &str) -> Pod {
        match objects(text).pop() {
            Some(Object::Pod(p)) => *p,
            _ => panic!("not a pod"),
        }
    }

    const WEB: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - {name: c, resources: {requests: {cpu: 250m, memory: 64Mi}, limits: {cpu: 500m, memory: 128Mi}}}\n";

    #[test]
    fn pods_use_quota_until_it_is_exceeded() {
        let mut q = quotas(
            "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute}\nspec:\n  hard: {pods: '3', requests.cpu: 600m, limits.memory: 1Gi}\n",
        );
        let p = pod(WEB);
        assert_eq!(q.admit("default", &p), Ok(()));
        assert_eq!(q.admit("default", &p), Ok(()));
        assert_eq!(
            q.admit("default", &p),
            Err("exceeded quota: compute, requested: requests.cpu=250m, used: requests.cpu=500m, limited: requests.cpu=600m".into())
        );
        // Another namespace has no quota.
        assert_eq!(q.admit("other", &p), Ok(()));
    }

    #[test]
    fn a_quota_on_cpu_needs_every_container_to_set_it() {
        let mut q = quotas(
            "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute}\nspec:\n  hard: {limits.cpu: '2', requests.memory: 1Gi}\n",
        );
        let p = pod(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: [{name: init}]\n  containers:\n  - {name: a, resources: {limits: {cpu: '1'}}}\n  - {name: b, resources: {requests: {memory: 1Mi}}}\n",
        );
        assert_eq!(
            q.admit("default", &p),
            Err("failed quota: compute: must specify limits.cpu for: b,init; requests.memory for: a,init".into())
        );
    }

    #[test]
    fn scopes_select_the_pods_a_quota_counts() {
        let mut q = quotas(
            "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: best-effort}\nspec:\n  hard: {pods: '1'}\n  scopes: [BestEffort]\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: high}\nspec:\n  hard: {pods: '1'}\n  scopeSelector:\n    matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]\n",
        );
        let existing = pod(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: old}\nspec: {containers: [{name: c}]}\n",
        );
        q.charge_existing("default", &QuotaPod::of(&existing));
        let empty = pod(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n",
        );
        assert_eq!(
            q.admit("default", &empty),
            Err(
                "exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1"
                    .into()
            )
        );
        // Not BestEffort, no class: neither quota applies.
        assert_eq!(q.admit("default", &pod(WEB)), Ok(()));
        let mut high = pod(WEB);
        if let Some(s) = high.spec.as_mut() {
            s.priority_class_name = Some("high".into());
        }
        assert_eq!(q.admit("default", &high), Ok(()));
        assert!(q.admit("default", &high).is_err());
    }

    #[test]
    fn usage_counts_overhead_and_binary_sums_print_binary() {
        let mut p = pod(WEB);
        if let Some(s) = p.spec.as_mut() {
            s.overhead = Some(BTreeMap::from([(
                "memory".to_string(),
                K8sQuantity("64Mi".into()),
            )]));
        }
        let u = QuotaPod::of(&p).usage;
        let show = |k: &str| u.get(k).map(ToString::to_string);
        assert_eq!(show("requests.memory").as_deref(), Some("128Mi"));
        assert_eq!(show("limits.memory").as_deref(), Some("192Mi"));
        assert_eq!(show("count/pods").as_deref(), Some("1"));
        assert_eq!(show("limits.cpu").as_deref(), Some("500m"));
        let mut done = pod(WEB);
        done.status = Some(k8s_openapi::api::core::v1::PodStatus {
            phase: Some("Succeeded".into()),
            ..Default::default()
        });
        let u = QuotaPod::of(&done).usage;
        assert_eq!(u.keys().collect::<Vec<_>>(), ["count/pods"]);
    }

    #[test]
    fn pods_that_read_the_same_share_one_quota_view() {
        let views = QuotaPods::default();
        let (a, b) = (views.of(&pod(WEB)), views.of(&pod(WEB)));
        assert!(Arc::ptr_eq(&a, &b), "two replicas of one template share it");
        let mut bigger = pod(WEB);
        if let Some(s) = bigger.spec.as_mut() {
            s.overhead = Some(BTreeMap::from([(
                "memory".to_string(),
                K8sQuantity("64Mi".into()),
            )]));
        }
        let c = views.of(&bigger);
        assert!(!Arc::ptr_eq(&a, &c), "a pod that uses more has its own");
        assert_eq!(*c, QuotaPod::of(&bigger));
        assert_eq!(*a, QuotaPod::of(&pod(WEB)));
        // The same resources (the same hash), read differently: each has its own view.
        let mut classed = pod(WEB);
        if let Some(s) = classed.spec.as_mut() {
            s.priority_class_name = Some("gold".into());
        }
        let mut done = pod(WEB);
        done.status = Some(k8s_openapi::api::core::v1::PodStatus {
            phase: Some("Failed".into()),
            ..Default::default()
        });
        for other in [classed, done] {
            let v = views.of(&other);
            assert!(!Arc::ptr_eq(&a, &v));
            assert_eq!(*v, QuotaPod::of(&other));
            assert!(Arc::ptr_eq(&v, &views.of(&other)));
        }
    }
}
