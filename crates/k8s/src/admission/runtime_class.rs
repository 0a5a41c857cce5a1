//! The RuntimeClass admission plugin (`plugin/pkg/admission/runtimeclass/admission.go`)
//! on a pod being created that names `spec.runtimeClassName`:
//! - the class must exist ("pod rejected: RuntimeClass \"x\" not found");
//! - `setOverhead`: the class's `overhead.podFixed` becomes `spec.overhead` (a pod that
//!   sets a different overhead itself is refused);
//! - `setScheduling`: the class's `scheduling.nodeSelector` is merged into the pod's (a
//!   key the pod sets to another value is refused) and its tolerations merged
//!   (`tolerations.MergeTolerations`);
//! - `validateOverhead`: a pod with an overhead and no class overhead is refused.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, Toleration};
use k8s_openapi::api::node::v1::RuntimeClass;

/// Admits `pod` with the RuntimeClasses by name: `Err` holds the refusal's reason.
pub fn admit(pod: &mut Pod, classes: &BTreeMap<String, RuntimeClass>) -> Result<(), String> {
    let Some(spec) = pod.spec.as_mut() else {
        return Ok(());
    };
    let class = match spec.runtime_class_name.as_deref() {
        None => None,
        Some(name) => match classes.get(name) {
            Some(c) => Some(c),
            None => return Err(format!("pod rejected: RuntimeClass \"{name}\" not found")),
        },
    };
    let class_overhead = class
        .and_then(|c| c.overhead.as_ref())
        .and_then(|o| o.pod_fixed.as_ref());
    if let Some(fixed) = class_overhead {
        if spec.overhead.as_ref().is_some_and(|o| o != fixed) {
            return Err(
                "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead".into(),
            );
        }
        spec.overhead = Some(fixed.clone());
    }
    if let Some(scheduling) = class.and_then(|c| c.scheduling.as_ref()) {
        if let Some(runtime) = scheduling.node_selector.as_ref() {
            let selector = spec.node_selector.get_or_insert_with(BTreeMap::new);
            for (key, value) in runtime {
                if let Some(have) = selector.get(key)
                    && have != value
                {
                    return Err(format!(
                        "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; pod.spec.nodeSelector[{key}] = {have}"
                    ));
                }
                selector.insert(key.clone(), value.clone());
            }
        }
        if let Some(extra) = scheduling.tolerations.as_ref() {
            let have = spec.tolerations.take().unwrap_or_default();
            let merged = merge_tolerations(&have, extra);
            spec.tolerations = (!merged.is_empty()).then_some(merged);
        }
    }
    if class_overhead.is_none() && spec.overhead.is_some() {
        return Err(
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
                .into(),
        );
    }
    Ok(())
}

/// `MergeTolerations`: both lists, without the tolerations another one covers (of two
/// equal ones, the first is kept).
pub fn merge_tolerations(first: &[Toleration], second: &[Toleration]) -> Vec<Toleration> {
    let all: Vec<&Toleration> = first.iter().chain(second).collect();
    let mut merged: Vec<Toleration> = Vec::new();
    for (i, t) in all.iter().enumerate() {
        if merged.iter().any(|m| is_superset(m, t)) {
            continue;
        }
        if all[i + 1..].iter().any(|t2| t != t2 && is_superset(t2, t)) {
            continue;
        }
        merged.push((*t).clone());
    }
    merged
}

/// `isSuperset`: whether `ss` tolerates everything `t` does.
fn is_superset(ss: &Toleration, t: &Toleration) -> bool {
    if ss == t {
        return true;
    }
    let op = |x: &Toleration| x.operator.clone().unwrap_or_default();
    let key = |x: &Toleration| x.key.clone().unwrap_or_default();
    let effect = |x: &Toleration| x.effect.clone().unwrap_or_default();
    if key(t) != key(ss) && (!key(ss).is_empty() || op(ss) != "Exists") {
        return false;
    }
    if effect(t) != effect(ss) && !effect(ss).is_empty() {
        return false;
    }
    if effect(ss) == "NoExecute"
        && let Some(limit) = ss.toleration_seconds
        && t.toleration_seconds.is_none_or(|s| s > limit)
    {
        return false;
    }
    match op(ss).as_str() {
        "Equal" | "" => op(t) == "Equal" && t.value == ss.value,
        "Exists" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(yaml: &str) -> BTreeMap<String, RuntimeClass> {
        let c: RuntimeClass = serde_saphyr::from_str(yaml).expect("the test object deserializes");
        BTreeMap::from([(c.metadata.name.clone().unwrap_or_default(), c)])
    }

    fn pod(yaml: &str) -> Pod {
        serde_saphyr::from_str(yaml).expect("the test object deserializes")
    }

    const KATA: &str = "metadata: {name: kata}\nhandler: kata\noverhead: {podFixed: {cpu: 250m, memory: 120Mi}}\nscheduling:\n  nodeSelector: {runtime: kata}\n  tolerations: [{key: kata, operator: Exists, effect: NoSchedule}]\n";

    #[test]
    fn overhead_and_scheduling_are_merged_into_the_pod() {
        let mut p = pod(
            "metadata: {name: p}\nspec:\n  runtimeClassName: kata\n  nodeSelector: {zone: a}\n  tolerations: [{key: kata, operator: Equal, value: x, effect: NoSchedule}]\n  containers: [{name: c}]\n",
        );
        admit(&mut p, &class(KATA)).expect("admitted");
        let spec = p.spec.as_ref().expect("spec");
        let overhead: Vec<(&str, &str)> = spec
            .overhead
            .iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.0.as_str()))
            .collect();
        assert_eq!(overhead, [("cpu", "250m"), ("memory", "120Mi")]);
        let selector = spec.node_selector.as_ref().expect("selector");
        assert_eq!(selector.get("runtime").map(String::as_str), Some("kata"));
        assert_eq!(selector.get("zone").map(String::as_str), Some("a"));
        // The class's Exists toleration covers the pod's Equal one.
        let tolerations = spec.tolerations.as_ref().expect("tolerations");
        assert_eq!(tolerations.len(), 1);
        assert_eq!(tolerations[0].operator.as_deref(), Some("Exists"));
    }

    #[test]
    fn missing_classes_conflicts_and_stray_overheads_are_refused() {
        let mut p =
            pod("metadata: {name: p}\nspec: {runtimeClassName: gvisor, containers: [{name: c}]}\n");
        assert_eq!(
            admit(&mut p, &class(KATA)),
            Err("pod rejected: RuntimeClass \"gvisor\" not found".into())
        );
        let mut p = pod(
            "metadata: {name: p}\nspec: {runtimeClassName: kata, nodeSelector: {runtime: runc}, containers: [{name: c}]}\n",
        );
        assert_eq!(
            admit(&mut p, &class(KATA)),
            Err("conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; pod.spec.nodeSelector[runtime] = runc".into())
        );
        let mut p =
            pod("metadata: {name: p}\nspec: {overhead: {cpu: 1}, containers: [{name: c}]}\n");
        assert!(admit(&mut p, &class(KATA)).is_err());
        let mut p = pod("metadata: {name: p}\nspec: {containers: [{name: c}]}\n");
        assert_eq!(admit(&mut p, &class(KATA)), Ok(()));
    }
}
