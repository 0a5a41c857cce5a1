//! Feature gates the plugins read, resolved once into a plain struct before any hot loop.

use crate::version::KubernetesVersion;
use serde::{Deserialize, Serialize};

/// The feature gates that change scheduling behaviour. The defaults are current
/// Kubernetes': every topology-spread gate on, Gt/Lt tolerations (alpha) off.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Features {
    /// MinDomainsInPodTopologySpread (GA: always honoured).
    pub min_domains: bool,
    /// NodeInclusionPolicyInPodTopologySpread: nodeAffinityPolicy / nodeTaintsPolicy.
    pub node_inclusion_policy: bool,
    /// MatchLabelKeysInPodTopologySpread: matchLabelKeys merged into the selector.
    pub match_label_keys: bool,
    /// TaintTolerationComparisonOperators: Gt/Lt tolerations.
    pub taint_toleration_comparison_operators: bool,
    /// SchedulerPopFromBackoffQ: the queue pops a backing-off pod when no other waits
    /// (from 1.33).
    pub scheduler_pop_from_backoff_q: bool,
    /// Not a gate: whether `labelSelector: {}` counts every pod of the namespace (the
    /// newest releases) or none (1.27 to 1.37); see [`crate::version`].
    pub empty_selector_matches_all: bool,
    /// The release whose behaviour the plugins and the scheduler follow where it
    /// changed without a gate (`"1.30"`); see [`KubernetesVersion`]'s methods.
    pub kubernetes_version: KubernetesVersion,
}

impl Default for Features {
    fn default() -> Self {
        Self {
            min_domains: true,
            node_inclusion_policy: true,
            match_label_keys: true,
            taint_toleration_comparison_operators: false,
            scheduler_pop_from_backoff_q: true,
            empty_selector_matches_all: true,
            kubernetes_version: KubernetesVersion::NEWEST,
        }
    }
}
