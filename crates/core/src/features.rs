//! Feature gates the plugins read, resolved once into a plain struct before any hot loop.

use serde::Deserialize;

/// The feature gates that change scheduling behaviour. The defaults are current
/// Kubernetes': every topology-spread gate on, Gt/Lt tolerations (alpha) off.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize)]
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
}

impl Default for Features {
    fn default() -> Self {
        Self {
            min_domains: true,
            node_inclusion_policy: true,
            match_label_keys: true,
            taint_toleration_comparison_operators: false,
        }
    }
}
