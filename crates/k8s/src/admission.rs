//! The API server's admission plugins as they treat a pod on create: Priority (from the
//! core, [`topospread::admission`], re-exported here), defaults, LimitRanger and
//! RuntimeClass.

mod defaults;
pub mod limit_range;
pub mod resource_quota;
pub mod runtime_class;

pub use defaults::set_pod_defaults;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::core::v1::LimitRangeItem;
use k8s_openapi::api::node::v1::RuntimeClass;
use topospread::api::PriorityClasses;
use topospread::convert::DEFAULT_NAMESPACE;

use crate::load::{Loaded, Object};

pub use topospread::admission::{
    AdmissionError, AdmittedPriority, DEFAULT_PRIORITY, WrittenPriority, admit_priority,
    requested_name, resolve_priority,
};

/// The admission plugins besides Priority that read other objects of the cluster:
/// LimitRanger (LimitRanges by namespace), RuntimeClass and ResourceQuota. Built once
/// from the loaded objects; pods being created go through [`Admission::admit`]. Clones
/// share the quotas' usage, as every pod of a cluster uses the same quotas.
#[derive(Clone, Debug, Default)]
pub struct Admission {
    /// Namespace -> each LimitRange's defaulted items, by LimitRange name.
    limit_ranges: BTreeMap<String, Vec<Vec<LimitRangeItem>>>,
    /// RuntimeClasses by name.
    runtime_classes: BTreeMap<String, RuntimeClass>,
    /// ResourceQuotas by namespace, with what the pods admitted so far use of them.
    quotas: Arc<Mutex<resource_quota::Quotas>>,
    /// The `PodLevelResources` gate (LimitRanger's Pod items read pod-level resources).
    pod_level_resources: bool,
}

impl Admission {
    /// The LimitRanges, RuntimeClasses and ResourceQuotas among `objects`, the quotas
    /// charged with the pods of `objects` that already exist ([`crate::build::from_server`]
    /// or compact), as the quota controller counts them.
    pub fn from_objects<'a>(objects: impl IntoIterator<Item = &'a Loaded>) -> Self {
        let mut ranges: BTreeMap<String, BTreeMap<String, Vec<LimitRangeItem>>> = BTreeMap::new();
        let mut admission = Admission {
            pod_level_resources: true,
            ..Admission::default()
        };
        let mut quotas = resource_quota::Quotas::default();
        let objects: Vec<&Loaded> = objects.into_iter().collect();
        for l in &objects {
            match &l.object {
                Object::ResourceQuota(rq) => {
                    let ns = rq
                        .metadata
                        .namespace
                        .as_deref()
                        .unwrap_or(DEFAULT_NAMESPACE);
                    quotas.add(ns, rq);
                }
                Object::LimitRange(lr) => {
                    let ns = lr
                        .metadata
                        .namespace
                        .as_deref()
                        .unwrap_or(DEFAULT_NAMESPACE);
                    ranges.entry(ns.to_string()).or_default().insert(
                        lr.metadata.name.clone().unwrap_or_default(),
                        limit_range::defaulted_items(lr),
                    );
                }
                Object::RuntimeClass(rc) => {
                    let name = rc.metadata.name.clone().unwrap_or_default();
                    admission.runtime_classes.insert(name, (**rc).clone());
                }
                _ => {}
            }
        }
        admission.limit_ranges = ranges
            .into_iter()
            .map(|(ns, by_name)| (ns, by_name.into_values().collect()))
            .collect();
        if !quotas.is_empty() {
            for l in &objects {
                match &l.object {
                    Object::Pod(p) if crate::build::from_server(p) => {
                        let ns = p.metadata.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
                        quotas.charge_existing(ns, &resource_quota::QuotaPod::of(p));
                    }
                    Object::CompactPod(p) => quotas.charge_existing(&p.namespace, &p.quota),
                    _ => {}
                }
            }
        }
        admission.quotas = Arc::new(Mutex::new(quotas));
        admission
    }

    /// This admission under the `PodLevelResources` gate as given.
    #[must_use]
    pub fn with_pod_level_resources(mut self, enabled: bool) -> Self {
        self.pod_level_resources = enabled;
        self
    }

    /// Whether no plugin here has anything to do.
    pub fn is_empty(&self) -> bool {
        self.limit_ranges.is_empty() && self.runtime_classes.is_empty() && self.quotas().is_empty()
    }

    fn quotas(&self) -> std::sync::MutexGuard<'_, resource_quota::Quotas> {
        // A panic while holding the lock cannot leave the usage half-charged: a pod's
        // charges are applied after every check.
        self.quotas.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits a pod being created, in the API server's order: LimitRanger's defaults,
    /// Priority, RuntimeClass's overhead and scheduling, then LimitRanger's bounds and
    /// RuntimeClass's overhead check, and last ResourceQuota, which charges the admitted
    /// pod to its namespace's quotas. The pod is changed as the API server changes it.
    pub fn admit(
        &self,
        pod: &mut core::Pod,
        classes: &PriorityClasses,
    ) -> Result<(), AdmissionError> {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let ns = pod
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string());
        let ranges = self.limit_ranges.get(&ns).map_or(&[][..], Vec::as_slice);
        for items in ranges {
            limit_range::mutate(pod, items);
        }
        resolve_priority(pod, classes)?;
        let requested = topospread::admission::requested_name(pod);
        let forbidden = |reason: String| AdmissionError::Forbidden {
            pod: requested.clone(),
            reason,
        };
        runtime_class::admit(pod, &self.runtime_classes).map_err(forbidden)?;
        // The API server validates the mutated pod before the validating plugins run
        // (`createHandler`: admit, then the strategy's Validate, then validate).
        if let Some(spec) = pod.spec.as_ref() {
            let errs = crate::validation::requests_above_limits(spec);
            if let Some(errors) = topospread::validation::aggregate_message(&errs) {
                return Err(AdmissionError::Invalid { pod: name, errors });
            }
        }
        for items in ranges {
            let errs = limit_range::validate(pod, items, self.pod_level_resources);
            if let Some(reason) = aggregate(errs) {
                return Err(forbidden(reason));
            }
        }
        self.quotas().admit(&ns, pod).map_err(forbidden)
    }
}

/// Messages as `utilerrors.NewAggregate(errs).Error()` joins them: one alone, several
/// (duplicates dropped) as `[a, b]`.
fn aggregate(errs: Vec<String>) -> Option<String> {
    let mut unique: Vec<String> = Vec::new();
    for e in errs {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    match unique.len() {
        0 => None,
        1 => unique.pop(),
        _ => Some(format!("[{}]", unique.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use topospread::api::{PreemptionPolicy, PriorityClass};

    fn pod(class: Option<&str>, priority: Option<i32>, policy: Option<&str>) -> core::Pod {
        core::Pod {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some("p".into()),
                ..Default::default()
            },
            spec: Some(core::PodSpec {
                priority_class_name: class.map(Into::into),
                priority,
                preemption_policy: policy.map(Into::into),
                ..Default::default()
            }),
            status: None,
        }
    }

    fn classes() -> PriorityClasses {
        let mut pcs = PriorityClasses::new();
        pcs.add(PriorityClass {
            name: "high".into(),
            value: 1000,
            global_default: false,
            preemption_policy: PreemptionPolicy::Never,
        });
        pcs
    }

    fn spec(p: &core::Pod) -> (Option<&str>, Option<i32>, Option<&str>) {
        let s = p.spec.as_ref().expect("spec");
        (
            s.priority_class_name.as_deref(),
            s.priority,
            s.preemption_policy.as_deref(),
        )
    }

    #[test]
    fn class_value_and_policy() {
        let mut p = pod(Some("high"), None, None);
        assert_eq!(resolve_priority(&mut p, &classes()), Ok(()));
        assert_eq!(spec(&p), (Some("high"), Some(1000), Some("Never")));
        let mut p = pod(Some("system-node-critical"), None, None);
        assert_eq!(resolve_priority(&mut p, &classes()), Ok(()));
        assert_eq!(spec(&p).1, Some(2_000_001_000));
    }

    #[test]
    fn missing_class_is_forbidden() {
        let mut p = pod(Some("nope"), None, None);
        let e = resolve_priority(&mut p, &classes()).expect_err("refused");
        assert_eq!(
            e.to_string(),
            "pods \"p\" is forbidden: no PriorityClass with name nope was found"
        );
        assert_eq!(e.pod(), "p");
    }

    #[test]
    fn default_class_or_zero() {
        let mut p = pod(None, None, None);
        assert_eq!(resolve_priority(&mut p, &classes()), Ok(()));
        assert_eq!(spec(&p), (None, Some(0), Some("PreemptLowerPriority")));
        let mut pcs = classes();
        pcs.add(PriorityClass {
            name: "dflt".into(),
            value: 7,
            global_default: true,
            preemption_policy: PreemptionPolicy::PreemptLowerPriority,
        });
        let mut p = pod(None, None, None);
        assert_eq!(resolve_priority(&mut p, &pcs), Ok(()));
        assert_eq!(
            spec(&p),
            (Some("dflt"), Some(7), Some("PreemptLowerPriority"))
        );
    }

    #[test]
    fn mismatches_are_forbidden_and_written_priorities_kept() {
        let mut p = pod(Some("high"), Some(5), None);
        assert!(matches!(
            resolve_priority(&mut p, &classes()),
            Err(AdmissionError::PriorityMismatch {
                given: 5,
                computed: 1000,
                ..
            })
        ));
        let mut p = pod(Some("high"), None, Some("PreemptLowerPriority"));
        assert!(matches!(
            resolve_priority(&mut p, &classes()),
            Err(AdmissionError::PreemptionPolicyMismatch { .. })
        ));
        let mut p = pod(None, Some(42), None);
        assert_eq!(resolve_priority(&mut p, &classes()), Ok(()));
        assert_eq!(spec(&p), (None, Some(42), None));
        let mut p = pod(Some("gone"), Some(42), None);
        assert_eq!(resolve_priority(&mut p, &classes()), Ok(()));
    }

    #[test]
    fn a_default_limit_below_the_request_makes_the_pod_invalid() {
        // kwok's LimitRange walkthrough: the default limit (the max, 500m) lands under
        // the 700m request, and the API server's validation refuses the pod before
        // LimitRanger's own max check would.
        let text = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits: [{type: Container, max: {cpu: 500m}, min: {cpu: 100m}}]\n";
        let m = crate::load::parse_manifests(text, "a.yaml").expect("parses");
        let admission = Admission::from_objects(&m.objects);
        let mut p = pod(None, None, None);
        p.spec.as_mut().expect("spec").containers = vec![core::Container {
            name: "c".into(),
            resources: Some(core::ResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "cpu".to_string(),
                    k8s_openapi::apimachinery::pkg::api::resource::Quantity("700m".into()),
                )])),
                ..Default::default()
            }),
            ..Default::default()
        }];
        let e = admission
            .admit(&mut p, &PriorityClasses::new())
            .expect_err("refused");
        assert_eq!(
            e.to_string(),
            "Pod \"p\" is invalid: spec.containers[0].resources.requests: Invalid value: \"700m\": must be less than or equal to cpu limit of 500m"
        );
        assert_eq!(e.pod(), "p");
    }

    #[test]
    fn limit_ranges_and_runtime_classes_admit_pods_of_their_namespace() {
        let text = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr, namespace: team}\nspec:\n  limits: [{type: Container, max: {cpu: 500m}}]\n---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: kata\noverhead: {podFixed: {memory: 64Mi}}\n";
        let m = crate::load::parse_manifests(text, "a.yaml").expect("parses");
        let admission = Admission::from_objects(&m.objects);
        let classes = PriorityClasses::new();
        // Defaulted to the max: request and limit 500m.
        let mut p = pod(None, None, None);
        p.metadata.namespace = Some("team".into());
        p.spec.as_mut().expect("spec").containers = vec![core::Container {
            name: "c".into(),
            ..Default::default()
        }];
        assert_eq!(admission.admit(&mut p, &classes), Ok(()));
        let r = p
            .spec
            .as_ref()
            .and_then(|s| s.containers[0].resources.clone());
        let req = r.and_then(|r| r.requests).unwrap_or_default();
        assert_eq!(req.get("cpu").map(|q| q.0.as_str()), Some("500m"));
        // Beyond the max: refused in the plugin's words.
        let mut big = p.clone();
        if let Some(r) = big
            .spec
            .as_mut()
            .and_then(|s| s.containers[0].resources.as_mut())
        {
            r.limits = Some(BTreeMap::from([(
                "cpu".to_string(),
                k8s_openapi::apimachinery::pkg::api::resource::Quantity("2".into()),
            )]));
        }
        let e = admission.admit(&mut big, &classes).expect_err("refused");
        assert_eq!(
            e.to_string(),
            "pods \"p\" is forbidden: maximum cpu usage per Container is 500m, but limit is 2"
        );
        // Another namespace: no LimitRange; a RuntimeClass adds its overhead.
        let mut q = pod(None, None, None);
        q.spec.as_mut().expect("spec").runtime_class_name = Some("kata".into());
        assert_eq!(admission.admit(&mut q, &classes), Ok(()));
        let overhead = q
            .spec
            .as_ref()
            .and_then(|s| s.overhead.clone())
            .unwrap_or_default();
        assert_eq!(overhead.get("memory").map(|v| v.0.as_str()), Some("64Mi"));
        assert_eq!(
            aggregate(vec!["a".into(), "b".into(), "a".into()]),
            Some("[a, b]".into())
        );
    }
}
