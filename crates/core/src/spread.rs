//! A pod's topology spread exactly as PodTopologySpread counts it: the one function
//! behind every spread report (simulate's before/after, rebalance's measures).
//!
//! Each constraint is read as the profile's plugin reads it: the pod's own constraints or
//! the cluster's default ones, matchLabelKeys merged, the namespace, node inclusion
//! policies, nodes lacking a constraint's key left out, and minDomains for the global
//! minimum. Only eligible domains appear; a domain no admitted node is in is not shown.

use crate::api::{Pod, WhenUnsatisfiable};
use crate::config::{PodTopologySpreadArgs, SchedulerConfig};
use crate::features::Features;
use crate::plugins::podtopologyspread::{self as pts, CountingGroup, PodTopologySpread};
use crate::snapshot::{DomainCounts, Snapshot};
use std::collections::BTreeMap;
use std::fmt;

/// A spread constraint as it is counted: what tells it apart from a pod's other
/// constraints. Reports render it with [`fmt::Display`] as
/// `zone maxSkew=1 DoNotSchedule app=web`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ConstraintRef {
    /// The topology key.
    pub topology_key: String,
    /// maxSkew.
    pub max_skew: i32,
    /// Hard (DoNotSchedule) or soft (ScheduleAnyway).
    pub when_unsatisfiable: WhenUnsatisfiable,
    /// The selector as counted (matchLabelKeys merged, a default constraint's selector
    /// derived from the pod's owners), as kubectl prints selectors.
    pub selector: String,
}

impl ConstraintRef {
    /// The constraint `group` counts, named with `snapshot`'s symbols.
    pub fn of(group: &CountingGroup, snapshot: &Snapshot) -> Self {
        let symbols = snapshot.symbols();
        Self {
            topology_key: symbols.resolve(group.topology_key).to_string(),
            max_skew: group.max_skew,
            when_unsatisfiable: group.when.clone(),
            selector: group.selector.display(symbols),
        }
    }

    /// A constraint named by its parts.
    pub fn new(
        topology_key: impl Into<String>,
        max_skew: i32,
        when_unsatisfiable: WhenUnsatisfiable,
        selector: impl Into<String>,
    ) -> Self {
        Self {
            topology_key: topology_key.into(),
            max_skew,
            when_unsatisfiable,
            selector: selector.into(),
        }
    }

    /// Whether it is a hard (DoNotSchedule) constraint.
    pub fn is_hard(&self) -> bool {
        self.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule
    }
}

impl fmt::Display for ConstraintRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} maxSkew={} {} {}",
            self.topology_key,
            self.max_skew,
            self.when_unsatisfiable.as_str(),
            self.selector
        )
    }
}

/// One constraint's counts per domain and skew.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConstraintSpread {
    /// The constraint counted; its `Display` is the label reports print
    /// (`zone maxSkew=1 DoNotSchedule app=web`).
    pub constraint: ConstraintRef,
    /// Matching pods per eligible domain.
    pub counts: BTreeMap<String, i64>,
    /// Largest count minus the global minimum (0 when fewer than minDomains domains).
    pub skew: i64,
    /// How far the counts are above `minimum + maxSkew`, summed over domains.
    pub excess: i64,
}

/// Why spread cannot be counted.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpreadError {
    /// A profile's PodTopologySpread args do not decode or build.
    #[error("scheduler configuration: {0}")]
    Config(String),
}

/// One constraint of a pod, counted.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CountedConstraint {
    /// Its position in the pod's `topologySpreadConstraints` (or, when the pod has
    /// none, in the profile's default constraints).
    pub index: usize,
    /// The constraint, its counts per eligible domain, skew and excess.
    pub spread: ConstraintSpread,
    /// minDomains as Filter applies it (1 for ScheduleAnyway).
    pub min_domains: i32,
}

/// A pod's constraints, counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PodSpread {
    /// The constraints are the cluster's default constraints (the pod has none).
    pub from_defaults: bool,
    /// Hard constraints first (as PreFilter reads them), then soft ones (as PreScore).
    pub constraints: Vec<CountedConstraint>,
}

/// Counts pods' spread with each profile's PodTopologySpread plugin.
pub struct SpreadCounter {
    plugins: SpreadPlugins,
}

impl SpreadCounter {
    /// The plugin of every profile of `config`, built from its args.
    pub fn new(
        config: &SchedulerConfig,
        features: Features,
        snapshot: &mut Snapshot,
    ) -> Result<Self, SpreadError> {
        Ok(Self {
            plugins: SpreadPlugins::new(config, features, snapshot)?,
        })
    }

    /// `pod`'s constraints counted over `snapshot`'s bound pods (the pod itself counts
    /// when it is bound and matches, as it would for its next sibling).
    pub fn pod_spread(&self, pod: &Pod, snapshot: &Snapshot) -> PodSpread {
        match self.plugins.for_pod(pod) {
            Some(plugin) => count(plugin, pod, snapshot),
            None => PodSpread::default(),
        }
    }

    /// `pod`'s constraints as [`Self::pod_spread`] would count them (hard first, then
    /// soft), without counting: for comparing what two pods count.
    pub fn constraint_refs(&self, pod: &Pod, snapshot: &Snapshot) -> Vec<ConstraintRef> {
        self.plugins.for_pod(pod).map_or_else(Vec::new, |plugin| {
            plugin
                .counting_groups(pod, snapshot)
                .iter()
                .map(|g| ConstraintRef::of(g, snapshot))
                .collect()
        })
    }
}

/// `pod`'s constraints counted by `plugin` over `snapshot`'s bound pods: the function
/// behind [`SpreadCounter::pod_spread`], for callers that hold the plugin already (an
/// explained cycle, the cluster lints).
pub fn count(plugin: &PodTopologySpread, pod: &Pod, snapshot: &Snapshot) -> PodSpread {
    // The groups are the hard constraints then the soft ones, each in the order the pod
    // (or the defaults) list them: their positions in that list, in the same order.
    let specs = if pod.spread_constraints.is_empty() {
        plugin.default_constraints()
    } else {
        &pod.spread_constraints[..]
    };
    let positions = |when: WhenUnsatisfiable| {
        specs
            .iter()
            .enumerate()
            .filter(move |(_, s)| s.when_unsatisfiable == when)
            .map(|(i, _)| i)
    };
    let indices = positions(WhenUnsatisfiable::DoNotSchedule)
        .chain(positions(WhenUnsatisfiable::ScheduleAnyway));
    let constraints = plugin
        .counting_groups(pod, snapshot)
        .iter()
        .zip(indices)
        .map(|(g, index)| CountedConstraint {
            index,
            spread: constraint_spread(g, snapshot),
            min_domains: g.min_domains,
        })
        .collect();
    PodSpread {
        from_defaults: pod.spread_constraints.is_empty(),
        constraints,
    }
}

/// The excess of one group over its counts.
pub fn excess(g: &CountingGroup, counts: &DomainCounts) -> i64 {
    let floor = g.min_match(counts) + i64::from(g.max_skew);
    counts.iter().map(|(_, c)| (c - floor).max(0)).sum()
}

/// The PodTopologySpread plugin of every profile, built from its args, to read
/// constraints exactly as each profile's plugin reads them.
pub struct SpreadPlugins {
    by_profile: Vec<(String, PodTopologySpread)>,
}

impl SpreadPlugins {
    /// The plugin of every profile of `config` (the default profile when none is set).
    pub fn new(
        config: &SchedulerConfig,
        features: Features,
        snapshot: &mut Snapshot,
    ) -> Result<Self, SpreadError> {
        let defaults = [crate::config::ProfileConfig::default()];
        let profiles = if config.profiles.is_empty() {
            &defaults[..]
        } else {
            &config.profiles[..]
        };
        let mut by_profile = Vec::new();
        for p in profiles {
            let args: PodTopologySpreadArgs = match p
                .plugin_config
                .iter()
                .find(|c| c.name == pts::NAME)
                .and_then(|c| c.args.as_ref())
            {
                None | Some(serde_json::Value::Null) => PodTopologySpreadArgs::default(),
                Some(v) => crate::config::decode_strict(v, "")
                    .map_err(|e| SpreadError::Config(format!("{}: {}", e.field, e.message)))?,
            };
            let plugin = PodTopologySpread::new(&args, features, snapshot.symbols_mut())
                .map_err(|e| SpreadError::Config(e.to_string()))?;
            let name = p
                .scheduler_name
                .clone()
                .unwrap_or_else(|| crate::config::DEFAULT_SCHEDULER_NAME.to_string());
            by_profile.push((name, plugin));
        }
        Ok(Self { by_profile })
    }

    /// The plugin of the profile serving the pod (the first when none does).
    pub fn for_pod(&self, pod: &Pod) -> Option<&PodTopologySpread> {
        self.by_profile
            .iter()
            .find(|(n, _)| **n == *pod.scheduler_name)
            .or(self.by_profile.first())
            .map(|(_, p)| p)
    }
}

/// One group's counts per domain and skew, for people.
pub fn constraint_spread(g: &CountingGroup, snapshot: &Snapshot) -> ConstraintSpread {
    let counts = g.counts(snapshot);
    let symbols = snapshot.symbols();
    let keys = snapshot.domains(g.topology_key);
    let name = |d: usize| -> String {
        u32::try_from(d)
            .ok()
            .and_then(|d| keys.filter(|k| (d as usize) < k.len()).map(|k| k.value(d)))
            .map_or_else(
                || "<no label>".to_string(),
                |v| symbols.resolve(v).to_string(),
            )
    };
    let map: BTreeMap<String, i64> = counts.iter().map(|(d, c)| (name(d), c)).collect();
    let max = map.values().copied().max().unwrap_or(0);
    let skew = if map.is_empty() {
        0
    } else {
        max - g.min_match(&counts)
    };
    ConstraintSpread {
        constraint: ConstraintRef::of(g, snapshot),
        counts: map,
        skew,
        excess: excess(g, &counts),
    }
}

#[cfg(test)]
mod tests {
    //! The report's counts against the state Filter itself builds: for every hard
    //! constraint, the same eligible domains with the same counts; and each counted
    //! constraint's place in the pod's list.

    use super::count;
    use crate::api::WhenUnsatisfiable;
    use crate::config::PodTopologySpreadArgs;
    use crate::convert;
    use crate::features::Features;
    use crate::plugins::podtopologyspread::PodTopologySpread;
    use crate::snapshot::{NodeId, Snapshot};
    use k8s_openapi::api::core::v1 as core;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn node(i: usize, zone: Option<u8>, tainted: bool, tier: bool) -> Value {
        let mut labels = json!({"kubernetes.io/hostname": format!("n{i}")});
        if let Some(z) = zone {
            labels["zone"] = json!(format!("z{z}"));
        }
        if tier {
            labels["tier"] = json!("gold");
        }
        let taints = if tainted {
            json!([{"key": "dedicated", "value": "x", "effect": "NoSchedule"}])
        } else {
            json!([])
        };
        json!({"metadata": {"name": format!("n{i}"), "labels": labels}, "spec": {"taints": taints}})
    }

    fn constraint(key: &str, min_domains: Option<i32>, honor: (bool, bool)) -> Value {
        let mut c = json!({
            "maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
            "nodeAffinityPolicy": if honor.0 { "Honor" } else { "Ignore" },
            "nodeTaintsPolicy": if honor.1 { "Honor" } else { "Ignore" },
        });
        if let Some(m) = min_domains {
            c["minDomains"] = json!(m);
        }
        c
    }

    #[test]
    fn each_counted_constraint_knows_its_place_in_the_pods_list() {
        let mut s = Snapshot::new();
        for i in 0..2 {
            let n: core::Node =
                serde_json::from_value(node(i, Some(u8::try_from(i).unwrap_or(0)), false, false))
                    .expect("the test node deserializes");
            let n = convert::node(&n, s.symbols_mut()).expect("the test node converts");
            s.add_node(n).expect("the snapshot takes the node");
        }
        let mut soft = constraint("zone", None, (true, false));
        soft["whenUnsatisfiable"] = json!("ScheduleAnyway");
        soft["maxSkew"] = json!(2);
        let hard = constraint("kubernetes.io/hostname", None, (true, false));
        let pod: core::Pod = serde_json::from_value(json!({
            "metadata": {"name": "incoming", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c"}], "topologySpreadConstraints": [soft, hard]}}))
        .expect("the incoming pod deserializes");
        let pod = convert::pod(&pod, s.symbols_mut()).expect("the test pod converts");
        let plugin = PodTopologySpread::new(
            &PodTopologySpreadArgs::default(),
            Features::default(),
            s.symbols_mut(),
        )
        .expect("the plugin builds with default arguments");
        let counted = count(&plugin, &pod, &s);
        assert!(!counted.from_defaults);
        // Hard first (as PreFilter reads them), each with its index in the pod's list.
        let got: Vec<(usize, String, WhenUnsatisfiable)> = counted
            .constraints
            .iter()
            .map(|c| {
                (
                    c.index,
                    c.spread.constraint.topology_key.clone(),
                    c.spread.constraint.when_unsatisfiable.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    1,
                    "kubernetes.io/hostname".to_string(),
                    WhenUnsatisfiable::DoNotSchedule
                ),
                (0, "zone".to_string(), WhenUnsatisfiable::ScheduleAnyway),
            ]
        );
        let soft = &counted.constraints[1].spread;
        assert_eq!(soft.constraint.max_skew, 2);
        let label = soft.constraint.to_string();
        assert!(
            label.starts_with("zone maxSkew=2 ScheduleAnyway "),
            "{label}"
        );
    }

    proptest! {
        #[test]
        fn hard_counts_equal_pre_filter_state(
            nodes in prop::collection::vec((prop::option::of(0u8..4), any::<bool>(), any::<bool>()), 1..12),
            pods in prop::collection::vec((0usize..12, any::<bool>(), any::<bool>()), 0..30),
            min_domains in prop::option::of(1i32..6),
            honor in (any::<bool>(), any::<bool>()),
            selector in any::<bool>(),
            both in any::<bool>(),
        ) {
            let mut s = Snapshot::new();
            for (i, (zone, tainted, tier)) in nodes.iter().enumerate() {
                let n: core::Node = serde_json::from_value(node(i, *zone, *tainted, *tier))
                    .expect("the test object deserializes");
                let n = convert::node(&n, s.symbols_mut()).expect("the test node converts");
                s.add_node(n).expect("the snapshot takes the node");
            }
            for (i, (at, web, other_ns)) in pods.iter().enumerate() {
                let p: core::Pod = serde_json::from_value(json!({"metadata": {
                    "name": format!("p{i}"),
                    "namespace": if *other_ns { "other" } else { "default" },
                    "labels": {"app": if *web { "web" } else { "db" }}},
                    "spec": {"containers": [{"name": "c"}]}}))
                    .expect("the test pod deserializes");
                let p = convert::pod(&p, s.symbols_mut()).expect("the test pod converts");
                let id = s.add_pod(p).expect("the snapshot takes the pod");
                let at = u32::try_from(at % nodes.len()).unwrap_or(0);
                s.bind(id, NodeId(at));
            }
            let mut constraints = vec![constraint("zone", min_domains, honor)];
            if both {
                constraints.push(constraint("kubernetes.io/hostname", None, honor));
            }
            let mut spec = json!({"containers": [{"name": "c"}], "topologySpreadConstraints": constraints});
            if selector {
                spec["nodeSelector"] = json!({"tier": "gold"});
            }
            let pod: core::Pod = serde_json::from_value(json!({
                "metadata": {"name": "incoming", "labels": {"app": "web"}}, "spec": spec}))
                .expect("the incoming pod deserializes");
            let pod = convert::pod(&pod, s.symbols_mut()).expect("the test pod converts");
            let plugin = PodTopologySpread::new(&PodTopologySpreadArgs::default(), Features::default(), s.symbols_mut())
                .expect("the plugin builds with default arguments");
            let state = plugin.pre_filter_state(&pod, &s);
            let reported = count(&plugin, &pod, &s);
            let filtered = state.domain_counts(&s);
            prop_assert_eq!(filtered.len(), reported.constraints.len());
            for ((want, got), min) in filtered.iter().zip(&reported.constraints).zip(state.minimums()) {
                prop_assert_eq!(want, &got.spread.counts);
                let max = want.values().copied().max().unwrap_or(0);
                let eligible = i64::try_from(want.len()).unwrap_or(i64::MAX);
                let global_min = if eligible < i64::from(got.min_domains) { 0 } else { min.unwrap_or(0) };
                prop_assert_eq!(got.spread.skew, if want.is_empty() { 0 } else { max - global_min });
            }
        }
    }
}
