//! Feature gates the plugins read, resolved once into a plain value before any hot loop.

use crate::version::KubernetesVersion;
use serde::{Deserialize, Serialize};

/// One feature gate whose value changes what the scheduler's plugins or queue do, named
/// as upstream's `featuregate.Feature`. More are modelled as topospread follows upstream.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// MinDomainsInPodTopologySpread (GA: always honoured).
    MinDomainsInPodTopologySpread,
    /// NodeInclusionPolicyInPodTopologySpread: nodeAffinityPolicy / nodeTaintsPolicy.
    NodeInclusionPolicyInPodTopologySpread,
    /// MatchLabelKeysInPodTopologySpread: matchLabelKeys merged into the selector.
    MatchLabelKeysInPodTopologySpread,
    /// TaintTolerationComparisonOperators: Gt/Lt tolerations.
    TaintTolerationComparisonOperators,
    /// SchedulerPopFromBackoffQ: the queue pops a backing-off pod when no other waits
    /// (from 1.33).
    SchedulerPopFromBackoffQ,
    /// DynamicResourceAllocation: the default profile runs DynamicResources (whose
    /// PostFilter speaks in every failure message); on by default from 1.34.
    DynamicResourceAllocation,
}

impl Feature {
    /// Every modelled gate, in declaration order.
    pub const ALL: [Feature; 6] = [
        Feature::MinDomainsInPodTopologySpread,
        Feature::NodeInclusionPolicyInPodTopologySpread,
        Feature::MatchLabelKeysInPodTopologySpread,
        Feature::TaintTolerationComparisonOperators,
        Feature::SchedulerPopFromBackoffQ,
        Feature::DynamicResourceAllocation,
    ];

    /// The gate's name as `--feature-gates` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Feature::MinDomainsInPodTopologySpread => "MinDomainsInPodTopologySpread",
            Feature::NodeInclusionPolicyInPodTopologySpread => {
                "NodeInclusionPolicyInPodTopologySpread"
            }
            Feature::MatchLabelKeysInPodTopologySpread => "MatchLabelKeysInPodTopologySpread",
            Feature::TaintTolerationComparisonOperators => "TaintTolerationComparisonOperators",
            Feature::SchedulerPopFromBackoffQ => "SchedulerPopFromBackoffQ",
            Feature::DynamicResourceAllocation => "DynamicResourceAllocation",
        }
    }
}

/// The feature gates that change scheduling behaviour, and the release the plugins
/// follow. The defaults are current Kubernetes': every topology-spread gate on, Gt/Lt
/// tolerations (alpha) off. Read with [`Features::enabled`]; build with
/// [`Features::for_release`] (or [`crate::version::FeatureGates::scheduler_features`] for
/// `--feature-gates`) and [`Features::with`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Features {
    min_domains: bool,
    node_inclusion_policy: bool,
    match_label_keys: bool,
    taint_toleration_comparison_operators: bool,
    scheduler_pop_from_backoff_q: bool,
    dynamic_resource_allocation: bool,
    /// Not a gate: whether `labelSelector: {}` counts every pod of the namespace (the
    /// newest releases) or none (1.27 to 1.37); see [`crate::version`].
    empty_selector_matches_all: bool,
    kubernetes_version: KubernetesVersion,
}

impl Features {
    /// A release's defaults: its gates as that kube-scheduler enables them by default.
    pub fn for_release(version: KubernetesVersion) -> Self {
        crate::version::FeatureGates::new(version).scheduler_features()
    }

    /// Whether `gate` is on.
    pub fn enabled(&self, gate: Feature) -> bool {
        *self.slot(gate)
    }

    /// The same features with `gate` set to `on` (as `--feature-gates Gate=on` would,
    /// without the release's checks: [`crate::version::FeatureGates::set`] makes those).
    #[must_use]
    pub fn with(mut self, gate: Feature, on: bool) -> Self {
        self.set(gate, on);
        self
    }

    /// Sets `gate` to `on`.
    pub fn set(&mut self, gate: Feature, on: bool) {
        *self.slot_mut(gate) = on;
    }

    /// The release whose behaviour the plugins and the scheduler follow where it changed
    /// without a gate; see [`KubernetesVersion`]'s methods.
    pub fn kubernetes_version(&self) -> KubernetesVersion {
        self.kubernetes_version
    }

    /// Whether `labelSelector: {}` counts every pod of the namespace (the newest
    /// releases) or none (1.27 to 1.37); not a gate, it follows the release.
    pub fn empty_selector_matches_all(&self) -> bool {
        self.empty_selector_matches_all
    }

    /// The same gates, following `version` where behaviour changed without a gate
    /// (the empty-selector rule included).
    #[must_use]
    pub fn with_kubernetes_version(mut self, version: KubernetesVersion) -> Self {
        self.kubernetes_version = version;
        self.empty_selector_matches_all = version.empty_selector_matches_all();
        self
    }

    fn slot(&self, gate: Feature) -> &bool {
        match gate {
            Feature::MinDomainsInPodTopologySpread => &self.min_domains,
            Feature::NodeInclusionPolicyInPodTopologySpread => &self.node_inclusion_policy,
            Feature::MatchLabelKeysInPodTopologySpread => &self.match_label_keys,
            Feature::TaintTolerationComparisonOperators => {
                &self.taint_toleration_comparison_operators
            }
            Feature::SchedulerPopFromBackoffQ => &self.scheduler_pop_from_backoff_q,
            Feature::DynamicResourceAllocation => &self.dynamic_resource_allocation,
        }
    }

    fn slot_mut(&mut self, gate: Feature) -> &mut bool {
        match gate {
            Feature::MinDomainsInPodTopologySpread => &mut self.min_domains,
            Feature::NodeInclusionPolicyInPodTopologySpread => &mut self.node_inclusion_policy,
            Feature::MatchLabelKeysInPodTopologySpread => &mut self.match_label_keys,
            Feature::TaintTolerationComparisonOperators => {
                &mut self.taint_toleration_comparison_operators
            }
            Feature::SchedulerPopFromBackoffQ => &mut self.scheduler_pop_from_backoff_q,
            Feature::DynamicResourceAllocation => &mut self.dynamic_resource_allocation,
        }
    }
}

/// [`Features`] as a case file writes it: every key optional.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FeaturesInFile {
    min_domains: Option<bool>,
    node_inclusion_policy: Option<bool>,
    match_label_keys: Option<bool>,
    taint_toleration_comparison_operators: Option<bool>,
    scheduler_pop_from_backoff_q: Option<bool>,
    dynamic_resource_allocation: Option<bool>,
    empty_selector_matches_all: Option<bool>,
    kubernetes_version: Option<KubernetesVersion>,
}

impl<'de> Deserialize<'de> for Features {
    /// Keys left out take the defaults of the release `kubernetesVersion` names (the
    /// newest without it), so a case pinned to a release runs with that release's gates.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let f = FeaturesInFile::deserialize(deserializer)?;
        let base = f
            .kubernetes_version
            .map_or_else(Self::default, Self::for_release);
        macro_rules! given_or_base {
            ($($field:ident),*) => {
                Self {
                    $($field: f.$field.unwrap_or(base.$field),)*
                    kubernetes_version: base.kubernetes_version,
                }
            };
        }
        Ok(given_or_base!(
            min_domains,
            node_inclusion_policy,
            match_label_keys,
            taint_toleration_comparison_operators,
            scheduler_pop_from_backoff_q,
            dynamic_resource_allocation,
            empty_selector_matches_all
        ))
    }
}

impl Default for Features {
    fn default() -> Self {
        Self {
            min_domains: true,
            node_inclusion_policy: true,
            match_label_keys: true,
            taint_toleration_comparison_operators: false,
            scheduler_pop_from_backoff_q: true,
            dynamic_resource_allocation: true,
            empty_selector_matches_all: true,
            kubernetes_version: KubernetesVersion::NEWEST,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_gate_reads_back_what_was_set_and_no_other() {
        for gate in Feature::ALL {
            let base = Features::default();
            let flipped = base.with(gate, !base.enabled(gate));
            assert_eq!(
                flipped.enabled(gate),
                !base.enabled(gate),
                "{}",
                gate.name()
            );
            for other in Feature::ALL.into_iter().filter(|g| *g != gate) {
                assert_eq!(
                    flipped.enabled(other),
                    base.enabled(other),
                    "{}",
                    other.name()
                );
            }
        }
    }

    #[test]
    fn serde_keeps_the_case_file_keys() {
        let f: Features = serde_json::from_value(serde_json::json!({
            "minDomains": false, "taintTolerationComparisonOperators": true
        }))
        .expect("known keys parse");
        assert!(!f.enabled(Feature::MinDomainsInPodTopologySpread));
        assert!(f.enabled(Feature::TaintTolerationComparisonOperators));
        assert!(f.enabled(Feature::MatchLabelKeysInPodTopologySpread));
        let unknown = serde_json::from_value::<Features>(serde_json::json!({"nope": true}));
        assert!(unknown.is_err());
    }

    #[test]
    fn a_release_follows_its_gates_and_selector_rule() {
        let v = |minor| KubernetesVersion { minor };
        let f = Features::for_release(v(26));
        assert!(!f.enabled(Feature::MinDomainsInPodTopologySpread));
        assert!(f.enabled(Feature::NodeInclusionPolicyInPodTopologySpread));
        assert_eq!(f.kubernetes_version(), v(26));
        let moved = Features::default().with_kubernetes_version(v(30));
        assert!(!moved.empty_selector_matches_all());
        assert!(moved.enabled(Feature::MinDomainsInPodTopologySpread));
    }
}
