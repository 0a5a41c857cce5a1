//! PodDisruptionBudgets as DefaultPreemption reads them: namespace, compiled selector,
//! `status.disruptionsAllowed` and `status.disruptedPods`.

use super::{Labels, Selector, Sym, Symbols};
use std::collections::BTreeSet;

/// One `policy/v1` PodDisruptionBudget, compact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisruptionBudget {
    /// `metadata.namespace`.
    pub namespace: Sym,
    /// `metadata.name`.
    pub name: Box<str>,
    /// `spec.selector`, compiled; `None` when it is left out, empty or does not parse:
    /// such a budget matches no pod (`filterPodsWithPDBViolation`).
    pub selector: Option<Selector>,
    /// `status.disruptionsAllowed`.
    pub disruptions_allowed: i32,
    /// `status.disruptedPods` names: evictions the API server already processed, which
    /// do not count against the budget again.
    pub disrupted_pods: BTreeSet<Box<str>>,
}

impl DisruptionBudget {
    /// Converts a `policy/v1` PodDisruptionBudget; `namespace` is the defaulted one.
    pub fn from_k8s(
        pdb: &k8s_openapi::api::policy::v1::PodDisruptionBudget,
        namespace: Sym,
        symbols: &mut Symbols,
    ) -> Self {
        let selector = pdb
            .spec
            .as_ref()
            .and_then(|s| s.selector.as_ref())
            .and_then(|s| Selector::from_label_selector(Some(s), symbols).ok())
            .filter(|s| !s.is_empty() && *s != Selector::Nothing);
        let status = pdb.status.as_ref();
        Self {
            namespace,
            name: pdb.metadata.name.as_deref().unwrap_or("").into(),
            selector,
            disruptions_allowed: status.and_then(|s| s.disruptions_allowed).unwrap_or(0),
            disrupted_pods: status
                .and_then(|s| s.disrupted_pods.as_ref())
                .into_iter()
                .flatten()
                .map(|(k, _)| k.as_str().into())
                .collect(),
        }
    }

    /// Whether the budget covers a pod of `namespace` with `labels` (a pod without
    /// labels is covered by none).
    pub fn covers(&self, namespace: Sym, labels: &Labels, symbols: &Symbols) -> bool {
        self.namespace == namespace
            && !labels.is_empty()
            && self
                .selector
                .as_ref()
                .is_some_and(|s| s.matches(labels, symbols))
    }
}

/// The cluster's PodDisruptionBudgets, keyed by namespace and name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DisruptionBudgets {
    budgets: Vec<DisruptionBudget>,
}

impl DisruptionBudgets {
    /// Adds a budget, or replaces the one with the same namespace and name.
    pub fn add(&mut self, budget: DisruptionBudget) {
        match self
            .budgets
            .iter_mut()
            .find(|b| b.namespace == budget.namespace && b.name == budget.name)
        {
            Some(slot) => *slot = budget,
            None => self.budgets.push(budget),
        }
    }

    /// Replaces a budget (the same as [`Self::add`]; named for a watch's update event).
    pub fn update(&mut self, budget: DisruptionBudget) {
        self.add(budget);
    }

    /// Removes the budget with this namespace and name, returning it.
    pub fn remove(&mut self, namespace: Sym, name: &str) -> Option<DisruptionBudget> {
        let i = self
            .budgets
            .iter()
            .position(|b| b.namespace == namespace && &*b.name == name)?;
        Some(self.budgets.remove(i))
    }

    /// Every budget, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = &DisruptionBudget> {
        self.budgets.iter()
    }

    /// The number of budgets.
    pub fn len(&self) -> usize {
        self.budgets.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.budgets.is_empty()
    }
}
