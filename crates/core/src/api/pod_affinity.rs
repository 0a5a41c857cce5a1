//! Inter-pod affinity terms, compiled once (`framework.AffinityTerm` upstream).

use super::{Labels, Op, Requirement, Selector, Sym, Symbols};
use k8s_openapi::api::core::v1 as core;

/// One compiled `podAffinityTerm`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AffinityTerm {
    /// Namespaces the term names explicitly (or the owning pod's own namespace when
    /// both `namespaces` and `namespaceSelector` are left out). Sorted.
    pub namespaces: Box<[Sym]>,
    /// `namespaceSelector`: `Nothing` when left out, everything when `{}`.
    pub namespace_selector: Selector,
    /// `labelSelector` (with `matchLabelKeys`/`mismatchLabelKeys` merged in).
    pub selector: Selector,
    /// `topologyKey`.
    pub topology_key: Sym,
}

impl AffinityTerm {
    /// Whether `pod` (in `namespace` with `labels`) matches the term; `ns_labels` are the
    /// labels of the pod's namespace (`AffinityTerm.Matches`).
    #[inline]
    pub fn matches(
        &self,
        namespace: Sym,
        labels: &Labels,
        ns_labels: &Labels,
        symbols: &Symbols,
    ) -> bool {
        (self.namespaces.contains(&namespace)
            || self.namespace_selector.matches(ns_labels, symbols))
            && self.selector.matches(labels, symbols)
    }
}

/// A preferred term and its weight.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WeightedAffinityTerm {
    /// The term.
    pub term: AffinityTerm,
    /// `weight` (1..=100 once validated).
    pub weight: i64,
}

/// A pod's inter-pod affinity and anti-affinity, compiled.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PodAffinity {
    /// `podAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub required_affinity: Vec<AffinityTerm>,
    /// `podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub required_anti_affinity: Vec<AffinityTerm>,
    /// `podAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    pub preferred_affinity: Vec<WeightedAffinityTerm>,
    /// `podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    pub preferred_anti_affinity: Vec<WeightedAffinityTerm>,
    /// `podAffinity` or `podAntiAffinity` is set (`NodeInfo.PodsWithAffinity`).
    pub has_affinity: bool,
    /// The first selector that did not compile (`NewPodInfo`'s error), if any; the
    /// term is left out.
    pub error: Option<String>,
}

impl PodAffinity {
    /// Whether the pod has required anti-affinity (`NodeInfo.PodsWithRequiredAntiAffinity`).
    pub(crate) fn has_required_anti_affinity(&self) -> bool {
        !self.required_anti_affinity.is_empty()
    }

    /// Whether the pod has preferred affinity or anti-affinity terms.
    pub(crate) fn has_preferred(&self) -> bool {
        !self.preferred_affinity.is_empty() || !self.preferred_anti_affinity.is_empty()
    }

    /// Compiles a pod's `spec.affinity` (pod part) for a pod in `namespace` with `labels`.
    pub fn parse(
        affinity: Option<&core::Affinity>,
        namespace: Sym,
        labels: &Labels,
        symbols: &mut Symbols,
    ) -> Self {
        let mut out = Self::default();
        let Some(affinity) = affinity else {
            return out;
        };
        let mut parse =
            |t: &core::PodAffinityTerm, field: &str, error: &mut Option<String>| match term(
                t, namespace, labels, symbols,
            ) {
                Ok(t) => Some(t),
                Err(e) => {
                    error.get_or_insert_with(|| format!("{field}: {e}"));
                    None
                }
            };
        // Affinity and anti-affinity are the same shape: required terms and weighted
        // preferred terms, under their own field names.
        let mut both = |kind: &str,
                        required: Option<&Vec<core::PodAffinityTerm>>,
                        preferred: Option<&Vec<core::WeightedPodAffinityTerm>>,
                        error: &mut Option<String>| {
            let required: Vec<AffinityTerm> = required
                .into_iter()
                .flatten()
                .enumerate()
                .filter_map(|(i, t)| parse(t, &format!("{kind}.required[{i}]"), error))
                .collect();
            let preferred: Vec<WeightedAffinityTerm> = preferred
                .into_iter()
                .flatten()
                .enumerate()
                .filter_map(|(i, w)| {
                    parse(
                        &w.pod_affinity_term,
                        &format!("{kind}.preferred[{i}]"),
                        error,
                    )
                    .map(|term| WeightedAffinityTerm {
                        term,
                        weight: i64::from(w.weight),
                    })
                })
                .collect();
            (required, preferred)
        };
        if let Some(pa) = &affinity.pod_affinity {
            out.has_affinity = true;
            (out.required_affinity, out.preferred_affinity) = both(
                "podAffinity",
                pa.required_during_scheduling_ignored_during_execution
                    .as_ref(),
                pa.preferred_during_scheduling_ignored_during_execution
                    .as_ref(),
                &mut out.error,
            );
        }
        if let Some(pa) = &affinity.pod_anti_affinity {
            out.has_affinity = true;
            (out.required_anti_affinity, out.preferred_anti_affinity) = both(
                "podAntiAffinity",
                pa.required_during_scheduling_ignored_during_execution
                    .as_ref(),
                pa.preferred_during_scheduling_ignored_during_execution
                    .as_ref(),
                &mut out.error,
            );
        }
        out
    }
}

/// Compiles one term. `matchLabelKeys` / `mismatchLabelKeys` are merged into the label
/// selector as the API server does on pod creation (`key in (value)` / `key notin (value)`
/// for each key the pod carries).
fn term(
    t: &core::PodAffinityTerm,
    namespace: Sym,
    labels: &Labels,
    symbols: &mut Symbols,
) -> Result<AffinityTerm, String> {
    let mut selector = Selector::from_label_selector(t.label_selector.as_ref(), symbols)
        .map_err(|e| format!("labelSelector: {e}"))?;
    let mut extra = Vec::new();
    for (keys, is_match) in [(&t.match_label_keys, true), (&t.mismatch_label_keys, false)] {
        for key in keys.iter().flatten() {
            let k = symbols.intern(key);
            if let Some(v) = labels.get(k) {
                let set: Box<[Sym]> = Box::new([v]);
                extra.push(Requirement {
                    key: k,
                    op: if is_match {
                        Op::In(set)
                    } else {
                        Op::NotIn(set)
                    },
                });
            }
        }
    }
    if !extra.is_empty() {
        if selector == Selector::Nothing {
            selector = Selector::everything();
        }
        selector = selector.with(&extra);
    }
    let namespace_selector = Selector::from_label_selector(t.namespace_selector.as_ref(), symbols)
        .map_err(|e| format!("namespaceSelector: {e}"))?;
    let listed = t.namespaces.as_deref().unwrap_or_default();
    let mut namespaces: Vec<Sym> = if listed.is_empty() && t.namespace_selector.is_none() {
        vec![namespace]
    } else {
        listed.iter().map(|n| symbols.intern(n)).collect()
    };
    namespaces.sort_unstable();
    namespaces.dedup();
    Ok(AffinityTerm {
        namespaces: namespaces.into_boxed_slice(),
        namespace_selector,
        selector,
        topology_key: symbols.intern(&t.topology_key),
    })
}
