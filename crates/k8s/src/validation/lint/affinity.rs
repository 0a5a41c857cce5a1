//! TS011: pod (anti-)affinity terms whose selector matches none of the workload's own
//! pods, nor any other pod the input holds; and TS012, a Node without allocatable.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::{Lint, LintCode, controller_added_labels, render_labels};
use crate::load::{Loaded, Object};
use crate::validation::Workload;
use crate::validation::admit::template_of;
use topospread::api::{Labels, Selector, Symbols};
use topospread::convert::DEFAULT_NAMESPACE;
use topospread::validation::FieldPath;

/// The labels of the pods the input shows (Pods, and the templates of workloads), by
/// namespace: what an affinity term could select besides the workload's own pods.
#[derive(Debug, Default)]
pub struct InputPods {
    pods: Vec<(String, BTreeMap<String, String>)>,
}

impl InputPods {
    /// The pods `objects` show (compact pods, read from a server, are left out); only
    /// labels are copied.
    pub fn new(objects: &[Loaded]) -> Self {
        let pods = objects
            .iter()
            .filter_map(|l| {
                let labels = match &l.object {
                    Object::Pod(p) => p.metadata.labels.as_ref(),
                    other => template_of(other)?.1.metadata.as_ref()?.labels.as_ref(),
                };
                let ns = l.object.metadata()?.namespace.as_deref();
                Some((namespace(ns), labels.cloned().unwrap_or_default()))
            })
            .collect();
        Self { pods }
    }
}

fn namespace(ns: Option<&str>) -> String {
    ns.filter(|n| !n.is_empty())
        .unwrap_or(DEFAULT_NAMESPACE)
        .to_string()
}

/// TS011 for a workload's pod template (bare Pods are left out: their own workload is
/// the ReplicaSet or the one Pod, which no anti-affinity keeps apart from itself).
pub fn lint_pod_affinity(workload: &Workload, others: &InputPods) -> Vec<Lint> {
    let mut lints = Vec::new();
    if matches!(workload, Workload::Pod(_)) {
        return lints;
    }
    let Some(spec) = workload.pod_spec() else {
        return lints;
    };
    let Some(affinity) = spec.spec.affinity.as_ref() else {
        return lints;
    };
    let empty = BTreeMap::new();
    let own = spec.labels.unwrap_or(&empty);
    let ns = namespace(workload.metadata().namespace.as_deref());
    let added = controller_added_labels(workload);
    let path = spec.path.child("affinity");
    let mut symbols = Symbols::default();
    let mut check = |anti: bool, field: FieldPath, term: &core::PodAffinityTerm, required: bool| {
        let Some(selector) = term.label_selector.as_ref() else {
            return;
        };
        if term.namespace_selector.is_some()
            || term
                .namespaces
                .as_ref()
                .is_some_and(|n| !n.is_empty() && !n.contains(&ns))
        {
            return;
        }
        let Some(compiled) = own_miss(selector, own, added, &mut symbols) else {
            return;
        };
        let anyone = others.pods.iter().any(|(pod_ns, labels)| {
            *pod_ns == ns && {
                let labels = Labels::from_map(Some(labels), &mut symbols);
                compiled.matches(&labels, &symbols)
            }
        });
        if anyone {
            return;
        }
        let shown = compiled.display(&symbols);
        let key = &term.topology_key;
        let effect = match (anti, required) {
            (true, _) => format!(
                "the rule never keeps the workload's pods apart (per {key:?}): as a \"one per node\" rule it is a no-op; select the pods' own labels"
            ),
            (false, true) => "no pod it selects exists, so unless the cluster runs one the pods stay Pending (\"didn't match pod affinity rules\"); select the pods to run beside".to_string(),
            (false, false) => "the preference never draws the pods anywhere".to_string(),
        };
        lints.push(Lint::new(
            LintCode::AffinitySelectorMissesOwnPods,
            &field.child("labelSelector"),
            format!(
                "{shown} does not match the pod template's own labels {}, nor any pod in the input (namespace {ns}): {effect}",
                render_labels(own)
            ),
        ));
    };
    for (anti, name, required, preferred) in [
        (
            false,
            "podAffinity",
            affinity.pod_affinity.as_ref().and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            }),
            affinity.pod_affinity.as_ref().and_then(|a| {
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref()
            }),
        ),
        (
            true,
            "podAntiAffinity",
            affinity.pod_anti_affinity.as_ref().and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            }),
            affinity.pod_anti_affinity.as_ref().and_then(|a| {
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref()
            }),
        ),
    ] {
        let base = path.child(name);
        for (i, term) in required.into_iter().flatten().enumerate() {
            let field = base
                .child("requiredDuringSchedulingIgnoredDuringExecution")
                .index(i);
            check(anti, field, term, true);
        }
        for (i, term) in preferred.into_iter().flatten().enumerate() {
            let field = base
                .child("preferredDuringSchedulingIgnoredDuringExecution")
                .index(i)
                .child("podAffinityTerm");
            check(anti, field, &term.pod_affinity_term, false);
        }
    }
    lints
}

/// The compiled selector when it misses the pod's own labels; `None` when it matches,
/// does not compile (validation says so) or names a label the controller adds.
fn own_miss(
    selector: &LabelSelector,
    own: &BTreeMap<String, String>,
    added: &[&str],
    symbols: &mut Symbols,
) -> Option<Selector> {
    let compiled = Selector::from_label_selector(Some(selector), symbols).ok()?;
    let names_added = compiled
        .requirements()
        .is_some_and(|reqs| reqs.iter().any(|r| added.contains(&symbols.resolve(r.key))));
    let labels = Labels::from_map(Some(own), symbols);
    (!names_added && !compiled.is_empty() && !compiled.matches(&labels, symbols))
        .then_some(compiled)
}

/// TS012: a Node without `status.allocatable`.
pub fn lint_node(node: &core::Node) -> Option<Lint> {
    let has = node
        .status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .is_some_and(|a| !a.is_empty());
    (!has).then(|| {
        Lint::new(
            LintCode::NodeWithoutAllocatable,
            &FieldPath::new("status").child("allocatable"),
            "the node has no status.allocatable, so the scheduler takes it as offering 0 pods, 0 CPU and 0 memory and no pod ever lands on it; add the node's allocatable (kubectl get node -o yaml prints it)",
        )
    })
}
