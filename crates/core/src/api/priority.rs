//! PriorityClasses as the Priority admission plugin reads them: a registry by name,
//! with the two built-in system classes always present.

use std::collections::BTreeMap;

/// `system-cluster-critical`: the built-in class for cluster-critical pods.
pub const SYSTEM_CLUSTER_CRITICAL: &str = "system-cluster-critical";
/// `system-node-critical`: the built-in class for node-critical pods.
pub const SYSTEM_NODE_CRITICAL: &str = "system-node-critical";
/// The value of `system-cluster-critical` (`SystemCriticalPriority`).
pub const SYSTEM_CLUSTER_CRITICAL_VALUE: i32 = 2_000_000_000;
/// The value of `system-node-critical` (`SystemCriticalPriority + 1000`).
pub const SYSTEM_NODE_CRITICAL_VALUE: i32 = 2_000_001_000;

/// `spec.preemptionPolicy` of a pod or a PriorityClass.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum PreemptionPolicy {
    /// `PreemptLowerPriority` (the default): the pod may preempt lower-priority pods.
    #[default]
    PreemptLowerPriority,
    /// `Never`: the pod is placed ahead of lower-priority pods in the queue but never
    /// preempts.
    Never,
}

impl PreemptionPolicy {
    /// Parses the wire value; anything but `Never` is `PreemptLowerPriority` (API
    /// validation rejects other values before they reach the scheduler).
    pub fn parse(s: &str) -> Self {
        if s == "Never" {
            Self::Never
        } else {
            Self::PreemptLowerPriority
        }
    }

    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PreemptLowerPriority => "PreemptLowerPriority",
            Self::Never => "Never",
        }
    }
}

/// One PriorityClass, as admission needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriorityClass {
    /// `metadata.name`.
    pub name: Box<str>,
    /// `value`.
    pub value: i32,
    /// `globalDefault`.
    pub global_default: bool,
    /// `preemptionPolicy` (`PreemptLowerPriority` when left out, as API defaulting sets).
    pub preemption_policy: PreemptionPolicy,
}

impl PriorityClass {
    /// Converts a `scheduling.k8s.io/v1` PriorityClass.
    pub fn from_k8s(pc: &k8s_openapi::api::scheduling::v1::PriorityClass) -> Self {
        Self {
            name: pc.metadata.name.as_deref().unwrap_or("").into(),
            value: pc.value.unwrap_or(0),
            global_default: pc.global_default.unwrap_or(false),
            preemption_policy: pc
                .preemption_policy
                .as_deref()
                .map(PreemptionPolicy::parse)
                .unwrap_or_default(),
        }
    }
}

/// The cluster's PriorityClasses by name. The built-in `system-cluster-critical` and
/// `system-node-critical` are always there (the API server creates them at start-up
/// and recreates them if deleted); adding a class by one of those names replaces it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriorityClasses {
    classes: BTreeMap<Box<str>, PriorityClass>,
}

impl Default for PriorityClasses {
    fn default() -> Self {
        let mut classes = BTreeMap::new();
        for (name, value) in [
            (SYSTEM_CLUSTER_CRITICAL, SYSTEM_CLUSTER_CRITICAL_VALUE),
            (SYSTEM_NODE_CRITICAL, SYSTEM_NODE_CRITICAL_VALUE),
        ] {
            classes.insert(
                Box::from(name),
                PriorityClass {
                    name: name.into(),
                    value,
                    global_default: false,
                    preemption_policy: PreemptionPolicy::PreemptLowerPriority,
                },
            );
        }
        Self { classes }
    }
}

impl PriorityClasses {
    /// The built-in classes only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a class, or replaces the one of the same name (an update).
    pub fn add(&mut self, class: PriorityClass) {
        self.classes.insert(class.name.clone(), class);
    }

    /// Replaces a class (the same as [`Self::add`]; named for a watch's update event).
    pub fn update(&mut self, class: PriorityClass) {
        self.add(class);
    }

    /// Removes a class by name, returning it. The built-in classes come back at once,
    /// as the API server recreates them.
    pub fn remove(&mut self, name: &str) -> Option<PriorityClass> {
        let removed = self.classes.remove(name);
        if name == SYSTEM_CLUSTER_CRITICAL || name == SYSTEM_NODE_CRITICAL {
            let builtin = Self::default();
            if let Some(c) = builtin.classes.get(name) {
                self.classes.insert(name.into(), c.clone());
            }
        }
        removed
    }

    /// The class with this name.
    pub fn get(&self, name: &str) -> Option<&PriorityClass> {
        self.classes.get(name)
    }

    /// Every class, by name.
    pub fn iter(&self) -> impl Iterator<Item = &PriorityClass> {
        self.classes.values()
    }

    /// The global default class (`getDefaultPriorityClass`): among the classes with
    /// `globalDefault: true`, the one with the lowest value (upstream's rule for when a
    /// race left several); equal values go to the first name in order.
    pub fn global_default(&self) -> Option<&PriorityClass> {
        self.classes
            .values()
            .filter(|c| c.global_default)
            .min_by_key(|c| c.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, value: i32, global_default: bool) -> PriorityClass {
        PriorityClass {
            name: name.into(),
            value,
            global_default,
            preemption_policy: PreemptionPolicy::PreemptLowerPriority,
        }
    }

    #[test]
    fn builtins_always_exist() {
        let mut pcs = PriorityClasses::new();
        assert_eq!(
            pcs.get(SYSTEM_NODE_CRITICAL).map(|c| c.value),
            Some(2_000_001_000)
        );
        pcs.remove(SYSTEM_CLUSTER_CRITICAL);
        assert_eq!(
            pcs.get(SYSTEM_CLUSTER_CRITICAL).map(|c| c.value),
            Some(2_000_000_000)
        );
    }

    #[test]
    fn global_default_is_the_lowest_value() {
        let mut pcs = PriorityClasses::new();
        assert!(pcs.global_default().is_none());
        pcs.add(class("b-high", 100, true));
        pcs.add(class("a-low", 10, true));
        pcs.add(class("c", 1, false));
        assert_eq!(pcs.global_default().map(|c| &*c.name), Some("a-low"));
        pcs.update(class("a-low", 10, false));
        assert_eq!(pcs.global_default().map(|c| &*c.name), Some("b-high"));
        assert!(pcs.remove("b-high").is_some());
        assert!(pcs.global_default().is_none());
    }
}
