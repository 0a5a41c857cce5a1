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
        let Some(plugin) = self.plugins.for_pod(pod) else {
            return PodSpread::default();
        };
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
}
