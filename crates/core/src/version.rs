//! The Kubernetes release a run follows: which feature gates exist, their defaults, and
//! the behaviour that changed between releases without a gate.
//!
//! `--kubernetes-version 1.30 --feature-gates MatchLabelKeysInPodTopologySpread=false`
//! resolves into [`FeatureGates`], from which the scheduler's [`Features`] and the API
//! server's gates are read. Every entry names the upstream change it follows.

use crate::api::resources::RequestOptions;
use crate::features::Features;
use std::fmt;
use std::str::FromStr;

/// The oldest minor release supported: the first with `nodeAffinityPolicy` /
/// `nodeTaintsPolicy` and `matchLabelKeys` in the API.
pub const OLDEST_MINOR: u32 = 25;
/// The newest minor release supported, the default.
pub const NEWEST_MINOR: u32 = 38;

/// A Kubernetes release, `1.MINOR`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubernetesVersion {
    /// The minor version (`30` for 1.30).
    pub minor: u32,
}

impl KubernetesVersion {
    /// The newest supported release.
    pub const NEWEST: Self = Self {
        minor: NEWEST_MINOR,
    };

    /// Reads `1.30`, `v1.30`, `1.30.2` or `v1.30.2-eks-1234` (a node's
    /// `kubeletVersion`), whatever the release; [`KubernetesVersion::supported`]
    /// checks the range.
    pub fn parse_any(text: &str) -> Result<Self, VersionError> {
        let malformed = || VersionError::Malformed(text.to_string());
        let rest = text.trim().strip_prefix('v').unwrap_or(text.trim());
        let mut parts = rest.splitn(3, '.');
        let major = parts.next().ok_or_else(malformed)?;
        let minor = parts.next().ok_or_else(malformed)?;
        let minor: String = minor.chars().take_while(char::is_ascii_digit).collect();
        if major != "1" || minor.is_empty() || minor.len() > 3 {
            return Err(malformed());
        }
        let minor = minor.parse().map_err(|_| malformed())?;
        Ok(Self { minor })
    }

    /// `self` when topospread models it, else an error naming the supported range.
    pub fn supported(self) -> Result<Self, VersionError> {
        if (OLDEST_MINOR..=NEWEST_MINOR).contains(&self.minor) {
            Ok(self)
        } else {
            Err(VersionError::Unsupported(self))
        }
    }

    /// Whether `labelSelector: {}` counts every pod of the namespace. From 1.27
    /// (kubernetes PR 116607, "Optimize topology spreading for null selector") until
    /// PR 141340 (first released in 1.38.0-alpha.1), `countPodsMatchSelector` returned 0
    /// for a selector without requirements, so such a constraint counted no pod.
    pub fn empty_selector_matches_all(self) -> bool {
        !(27..=37).contains(&self.minor)
    }

    /// Whether PostFilter's message closes the pending message without a period of
    /// its own. Until 1.27 `FitError.Error()` appended it as `" %v."`, so a preemption
    /// message (itself a FitError ending in `.`) ended in `..`; kubernetes PR 117588
    /// ("Avoid duplicated dots in pod status when preempting", first released in 1.28)
    /// appends it as `" %v"`.
    pub fn post_filter_message_unterminated(self) -> bool {
        self.minor >= 28
    }

    /// Whether NodeResourcesBalancedAllocation skips a pod that requests nothing
    /// (returns Skip at PreScore, so it scores no node): kubernetes PR 130260, in the
    /// 1.33.0 changelog ("The `BalancedAllocation` plugin now skips all best-effort
    /// (zero-requested) pods"). Earlier releases score every node by its balance.
    pub fn balanced_allocation_skips_best_effort(self) -> bool {
        self.minor >= 33
    }

    /// Whether NodeResourcesFit rejects a node as `UnschedulableAndUnresolvable` when
    /// the pod asks for more than the node's whole allocatable (preemption then skips
    /// it: "Preemption is not helpful for scheduling"): kubernetes PR 131345, opened
    /// after the 1.33 code freeze, so first released in 1.34. Earlier releases return
    /// `Unschedulable` for every shortfall.
    pub fn fit_unresolvable_beyond_allocatable(self) -> bool {
        self.minor >= 34
    }

    /// Whether a cycle whose preemption found a node says so in the pod's message
    /// (`preemption: found a potential placement for pod on node N, preempting K
    /// victims`): kubernetes PR 140180, merged during the 1.37 cycle (it is not in the
    /// 1.37.0-alpha.1 nor the 1.38 changelogs). Earlier releases leave the message at
    /// the filter reasons.
    pub fn preemption_success_message(self) -> bool {
        self.minor >= 37
    }
}

impl fmt::Display for KubernetesVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "1.{}", self.minor)
    }
}

impl FromStr for KubernetesVersion {
    type Err = VersionError;

    /// A supported release.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse_any(text)?.supported()
    }
}

impl Default for KubernetesVersion {
    fn default() -> Self {
        Self::NEWEST
    }
}

impl serde::Serialize for KubernetesVersion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for KubernetesVersion {
    /// A supported release as a string (`"1.30"`): an unquoted YAML `1.30` is the
    /// number 1.3, so numbers are refused rather than misread.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = KubernetesVersion;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Kubernetes release as a quoted string, e.g. \"1.30\"")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
                text.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

/// Why a version or a gate setting was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// Not `MAJOR.MINOR`.
    #[error("{0:?} is not a Kubernetes version (expected MAJOR.MINOR, e.g. 1.31)")]
    Malformed(String),
    /// Outside the releases topospread models.
    #[error(
        "Kubernetes {0} is not supported: topospread models 1.{OLDEST_MINOR} to 1.{NEWEST_MINOR}"
    )]
    Unsupported(KubernetesVersion),
    /// `--feature-gates` entry not `Name=bool`.
    #[error("--feature-gates: {0:?} is not Name=true or Name=false")]
    MalformedGate(String),
    /// A gate the release does not have.
    #[error(
        "--feature-gates: unrecognized feature gate {name:?} in Kubernetes {version} (known: {known})"
    )]
    UnknownGate {
        /// The gate as given.
        name: String,
        /// The release.
        version: KubernetesVersion,
        /// The gates the release has.
        known: String,
    },
    /// A GA gate locked to its default, as upstream refuses to change it.
    #[error(
        "--feature-gates: cannot set feature gate {name} to {value}, feature is locked to {locked} in Kubernetes {version}"
    )]
    Locked {
        /// The gate.
        name: &'static str,
        /// The value asked for.
        value: bool,
        /// The value it is locked to.
        locked: bool,
        /// The release.
        version: KubernetesVersion,
    },
}

/// One feature gate across releases.
#[derive(Copy, Clone, Debug)]
pub struct Gate {
    /// Upstream's name.
    pub name: &'static str,
    /// The first minor release that has it.
    pub since: u32,
    /// The first minor release where it is on by default (`None`: off everywhere).
    pub on_from: Option<u32>,
    /// The first minor release where it is GA and locked on.
    pub locked_from: Option<u32>,
    /// The upstream change, for the README and `--help`.
    pub upstream: &'static str,
}

/// The gates that change what topospread computes.
pub const GATES: &[Gate] = &[
    Gate {
        name: "MinDomainsInPodTopologySpread",
        since: 24,
        on_from: Some(27),
        locked_from: Some(30),
        upstream: "KEP-3022: alpha 1.24, beta (off) 1.25, on by default 1.27, GA 1.30",
    },
    Gate {
        name: "NodeInclusionPolicyInPodTopologySpread",
        since: 25,
        on_from: Some(26),
        locked_from: Some(33),
        upstream: "KEP-3094: alpha 1.25, beta (on) 1.26, GA 1.33",
    },
    Gate {
        name: "MatchLabelKeysInPodTopologySpread",
        since: 25,
        on_from: Some(27),
        locked_from: None,
        upstream: "KEP-3243: alpha 1.25, beta (on) 1.27",
    },
    Gate {
        name: "MatchLabelKeysInPodTopologySpreadSelectorMerge",
        since: 34,
        on_from: Some(34),
        locked_from: None,
        upstream: "KEP-3243: the API server merges matchLabelKeys into labelSelector at pod creation, beta (on) 1.34",
    },
    Gate {
        name: "PodLevelResources",
        since: 32,
        on_from: Some(34),
        locked_from: None,
        upstream: "KEP-2837: pod-level requests, alpha 1.32, beta (on) 1.34",
    },
    Gate {
        name: "TaintTolerationComparisonOperators",
        since: 35,
        on_from: None,
        locked_from: None,
        upstream: "Gt/Lt tolerations, alpha 1.35",
    },
];

/// The gates of one release, with `--feature-gates` applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureGates {
    version: KubernetesVersion,
    enabled: Vec<(&'static str, bool)>,
}

impl FeatureGates {
    /// The release's defaults.
    pub fn new(version: KubernetesVersion) -> Self {
        let enabled = GATES
            .iter()
            .filter(|g| g.since <= version.minor)
            .map(|g| (g.name, g.on_from.is_some_and(|m| m <= version.minor)))
            .collect();
        Self { version, enabled }
    }

    /// The release.
    pub fn version(&self) -> KubernetesVersion {
        self.version
    }

    /// Sets one gate as `--feature-gates Name=value` would.
    pub fn set(&mut self, name: &str, value: bool) -> Result<(), VersionError> {
        let version = self.version;
        let gate = GATES
            .iter()
            .find(|g| g.name == name && g.since <= version.minor)
            .ok_or_else(|| VersionError::UnknownGate {
                name: name.to_string(),
                version,
                known: self
                    .enabled
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        if gate.locked_from.is_some_and(|m| m <= version.minor) && !value {
            return Err(VersionError::Locked {
                name: gate.name,
                value,
                locked: true,
                version,
            });
        }
        if let Some(slot) = self.enabled.iter_mut().find(|(n, _)| *n == gate.name) {
            slot.1 = value;
        }
        Ok(())
    }

    /// Applies `Name=bool,Name=bool` (kube-scheduler's `--feature-gates` syntax).
    pub fn apply(&mut self, spec: &str) -> Result<(), VersionError> {
        for entry in spec.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (name, value) = entry
                .split_once('=')
                .ok_or_else(|| VersionError::MalformedGate(entry.to_string()))?;
            let value = match value.trim().to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => return Err(VersionError::MalformedGate(entry.to_string())),
            };
            self.set(name.trim(), value)?;
        }
        Ok(())
    }

    /// Whether a gate is on (a gate the release lacks is off).
    pub fn enabled(&self, name: &str) -> bool {
        self.enabled.iter().any(|(n, on)| *n == name && *on)
    }

    /// Every gate of the release with its value, in [`GATES`] order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, bool)> + '_ {
        self.enabled.iter().copied()
    }

    /// How pods' requests are computed (`PodLevelResources`).
    pub fn request_options(&self) -> RequestOptions {
        RequestOptions {
            pod_level_resources: self.enabled("PodLevelResources"),
            ..RequestOptions::default()
        }
    }

    /// What the scheduler's plugins read.
    pub fn scheduler_features(&self) -> Features {
        Features {
            min_domains: self.enabled("MinDomainsInPodTopologySpread"),
            node_inclusion_policy: self.enabled("NodeInclusionPolicyInPodTopologySpread"),
            match_label_keys: self.enabled("MatchLabelKeysInPodTopologySpread"),
            taint_toleration_comparison_operators: self
                .enabled("TaintTolerationComparisonOperators"),
            empty_selector_matches_all: self.version.empty_selector_matches_all(),
            kubernetes_version: self.version,
        }
    }
}

impl Default for FeatureGates {
    fn default() -> Self {
        Self::new(KubernetesVersion::NEWEST)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(minor: u32) -> KubernetesVersion {
        KubernetesVersion { minor }
    }

    #[test]
    fn versions_parse_as_kubectl_and_nodes_print_them() {
        for text in ["1.30", "v1.30", "1.30.2", "v1.30.2-eks-1234abc", " 1.30 "] {
            assert_eq!(text.parse::<KubernetesVersion>(), Ok(v(30)), "{text}");
        }
        for text in ["1", "2.30", "1.x", "", "v", "1.9999"] {
            assert!(
                matches!(
                    text.parse::<KubernetesVersion>(),
                    Err(VersionError::Malformed(_))
                ),
                "{text}"
            );
        }
        assert_eq!(
            "1.24".parse::<KubernetesVersion>(),
            Err(VersionError::Unsupported(v(24)))
        );
        assert_eq!(
            "1.39".parse::<KubernetesVersion>(),
            Err(VersionError::Unsupported(v(39)))
        );
    }

    #[test]
    fn defaults_follow_the_releases() {
        let f = FeatureGates::new(v(25)).scheduler_features();
        assert!(!f.min_domains && !f.node_inclusion_policy && !f.match_label_keys);
        assert!(f.empty_selector_matches_all);
        let f = FeatureGates::new(v(26)).scheduler_features();
        assert!(!f.min_domains && f.node_inclusion_policy && !f.match_label_keys);
        let f = FeatureGates::new(v(27)).scheduler_features();
        assert!(f.min_domains && f.node_inclusion_policy && f.match_label_keys);
        assert!(!f.empty_selector_matches_all);
        assert!(
            !FeatureGates::new(v(37))
                .scheduler_features()
                .empty_selector_matches_all
        );
        let newest = FeatureGates::default().scheduler_features();
        assert!(newest.empty_selector_matches_all);
        assert_eq!(
            Features {
                empty_selector_matches_all: true,
                ..newest
            },
            Features::default()
        );
        assert!(!FeatureGates::new(v(33)).enabled("PodLevelResources"));
        assert!(FeatureGates::new(v(34)).enabled("PodLevelResources"));
    }

    #[test]
    fn gates_are_set_as_kube_scheduler_sets_them() {
        let mut gates = FeatureGates::new(v(29));
        gates
            .apply("MinDomainsInPodTopologySpread=false, MatchLabelKeysInPodTopologySpread=FALSE")
            .expect("valid gates");
        let f = gates.scheduler_features();
        assert!(!f.min_domains && !f.match_label_keys && f.node_inclusion_policy);
        assert!(matches!(
            gates.apply("NoSuchGate=true"),
            Err(VersionError::UnknownGate { .. })
        ));
        assert!(matches!(
            gates.apply("MinDomainsInPodTopologySpread"),
            Err(VersionError::MalformedGate(_))
        ));
        assert!(matches!(
            gates.apply("MinDomainsInPodTopologySpread=maybe"),
            Err(VersionError::MalformedGate(_))
        ));
        // A gate the release does not have yet.
        assert!(matches!(
            gates.apply("PodLevelResources=true"),
            Err(VersionError::UnknownGate { .. })
        ));
        let mut locked = FeatureGates::new(v(30));
        assert!(matches!(
            locked.apply("MinDomainsInPodTopologySpread=false"),
            Err(VersionError::Locked { .. })
        ));
        assert!(locked.apply("MinDomainsInPodTopologySpread=true").is_ok());
    }
}
