//! A pod's topology spread exactly as PodTopologySpread counts it: the one function
//! behind every spread report (simulate's before/after, rebalance's measures).
//!
//! Each constraint is read as the profile's plugin reads it: the pod's own constraints or
//! the cluster's default ones, matchLabelKeys merged, the namespace, node inclusion
//! policies, nodes lacking a constraint's key left out, and minDomains for the global
//! minimum. Only eligible domains appear; a domain no admitted node is in is not shown.

use crate::api::{Pod, Selector};
use crate::config::SchedulerConfig;
use crate::features::Features;
use crate::plugins::podtopologyspread::PodTopologySpread;
use crate::rebalance::measure::{Plugins, constraint_spread};
use crate::rebalance::{ConstraintSpread, RebalanceError};
use crate::snapshot::Snapshot;

/// One constraint of a pod, counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountedConstraint {
    /// Counts per eligible domain, skew and excess.
    pub spread: ConstraintSpread,
    /// The selector as counted (matchLabelKeys merged), as kubectl prints selectors.
    pub selector: String,
    /// minDomains as Filter applies it (1 for ScheduleAnyway).
    pub min_domains: i32,
}

/// A pod's constraints, counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodSpread {
    /// The constraints are the cluster's default constraints (the pod has none).
    pub from_defaults: bool,
    /// Hard constraints first (as PreFilter reads them), then soft ones (as PreScore).
    pub constraints: Vec<CountedConstraint>,
}

/// Counts pods' spread with each profile's PodTopologySpread plugin.
pub struct SpreadCounter {
    plugins: Plugins,
}

impl SpreadCounter {
    /// The plugin of every profile of `config`, built from its args.
    pub fn new(
        config: &SchedulerConfig,
        features: Features,
        snapshot: &mut Snapshot,
    ) -> Result<Self, RebalanceError> {
        Ok(Self {
            plugins: Plugins::new(config, features, snapshot)?,
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
}

/// `pod`'s constraints counted by `plugin` over `snapshot`'s bound pods: the function
/// behind [`SpreadCounter::pod_spread`], for callers that hold the plugin already (an
/// explained cycle, the cluster lints).
pub fn count(plugin: &PodTopologySpread, pod: &Pod, snapshot: &Snapshot) -> PodSpread {
    let symbols = snapshot.symbols();
    let constraints = plugin
        .counting_groups(pod, snapshot)
        .iter()
        .map(|g| CountedConstraint {
            spread: constraint_spread(g, snapshot),
            selector: match &g.selector {
                Selector::Nothing => "<none>".to_string(),
                s => s.display(symbols),
            },
            min_domains: g.min_domains,
        })
        .collect();
    PodSpread {
        from_defaults: pod.spread_constraints.is_empty(),
        constraints,
    }
}

#[cfg(test)]
mod tests {
    //! The report's counts against the state Filter itself builds: for every hard
    //! constraint, the same eligible domains with the same counts.

    use super::count;
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
                    .unwrap_or_else(|e| panic!("{e}"));
                let n = convert::node(&n, s.symbols_mut()).unwrap_or_else(|e| panic!("{e}"));
                s.add_node(n).unwrap_or_else(|e| panic!("{e}"));
            }
            for (i, (at, web, other_ns)) in pods.iter().enumerate() {
                let p: core::Pod = serde_json::from_value(json!({"metadata": {
                    "name": format!("p{i}"),
                    "namespace": if *other_ns { "other" } else { "default" },
                    "labels": {"app": if *web { "web" } else { "db" }}},
                    "spec": {"containers": [{"name": "c"}]}}))
                    .unwrap_or_else(|e| panic!("{e}"));
                let p = convert::pod(&p, s.symbols_mut()).unwrap_or_else(|e| panic!("{e}"));
                let id = s.add_pod(p).unwrap_or_else(|e| panic!("{e}"));
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
                .unwrap_or_else(|e| panic!("{e}"));
            let pod = convert::pod(&pod, s.symbols_mut()).unwrap_or_else(|e| panic!("{e}"));
            let plugin = PodTopologySpread::new(&PodTopologySpreadArgs::default(), Features::default(), s.symbols_mut())
                .unwrap_or_else(|e| panic!("{e}"));
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
