//! The Kubernetes release a run follows: which feature gates exist, their defaults, and
//! the behaviour that changed between releases without a gate.
//!
//! `--kubernetes-version 1.30 --feature-gates MatchLabelKeysInPodTopologySpread=false`
//! resolves into [`FeatureGates`], from which the scheduler's [`Features`] and the API
//! server's gates are read. Every entry names the upstream change it follows.

mod known_gates;

use crate::api::resources::RequestOptions;
use crate::features::{Feature, Features};
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

    /// The supported release closest to `self` (the oldest for older releases, the
    /// newest for newer ones): what a run on an unsupported cluster behaves as when
    /// forced to.
    pub fn nearest_supported(self) -> Self {
        Self {
            minor: self.minor.clamp(OLDEST_MINOR, NEWEST_MINOR),
        }
    }

    /// Whether `labelSelector: {}` counts every pod of the namespace. From 1.27
    /// (kubernetes PR 116607, "Optimize topology spreading for null selector") until
    /// PR 141340 (first released in 1.38.0-alpha.1), `countPodsMatchSelector` returned 0
    /// for a selector without requirements, so such a constraint counted no pod.
    pub(crate) fn empty_selector_matches_all(self) -> bool {
        !(27..=37).contains(&self.minor)
    }

    /// Whether PostFilter's message closes the pending message without a period of
    /// its own. 1.25's `FitError.Error()` appended it after a space; 1.26 restructured
    /// the message around `SeparatorFormat = " %v."`, so a preemption message (itself a
    /// FitError ending in `.`) ended in `..` until 1.28; 1.29 appends it as `" %v"`
    /// again (kubernetes PR 117588, "Avoid duplicated dots in pod status when
    /// preempting"). Read from `pkg/scheduler/framework/types.go` as vendored at
    /// v1.25.5, v1.26.2, v1.27.4, v1.28.4 and v1.29.4.
    pub(crate) fn post_filter_message_unterminated(self) -> bool {
        self.minor == 25 || self.minor >= 29
    }

    /// How a PreFilter rejection reads in the pending message. 1.25 has no PreFilter part:
    /// every node carries the rejection, so the message is their histogram (`0/3 nodes
    /// are available: 3 REASON.`). 1.26 adds the PreFilter message before that same
    /// histogram (`0/3 nodes are available: REASON. 3 REASON.`); 1.28 leaves the
    /// histogram out (`0/3 nodes are available: REASON.`). Same sources as
    /// [`Self::post_filter_message_unterminated`].
    pub(crate) fn pre_filter_rejection_layout(self) -> PreFilterLayout {
        match self.minor {
            ..=25 => PreFilterLayout::HistogramOnly,
            26..=27 => PreFilterLayout::MessageAndHistogram,
            _ => PreFilterLayout::MessageOnly,
        }
    }

    /// Whether ImageLocality counts init containers' images, in the sum of the sizes a
    /// node holds and in the per-container maximum: kubernetes PR 123366, in the 1.30
    /// changelog ("The kube-scheduler now considers whether nodes have the images
    /// available for init containers"). Earlier releases score regular containers only.
    pub(crate) fn image_locality_counts_init_containers(self) -> bool {
        self.minor >= 30
    }

    /// Whether NodeResourcesBalancedAllocation skips a pod that requests nothing
    /// (returns Skip at PreScore, so it scores no node): kubernetes PR 130260, in the
    /// 1.33.0 changelog ("The `BalancedAllocation` plugin now skips all best-effort
    /// (zero-requested) pods"). Earlier releases score every node by its balance.
    pub fn balanced_allocation_skips_best_effort(self) -> bool {
        self.minor >= 33
    }

    /// Whether NodeResourcesBalancedAllocation scores the change the pod makes to the
    /// node's balance rather than the balance after it: kubernetes PR 135573 (merged
    /// December 2025, first released in 1.36). With `S` the balance score of earlier
    /// releases, a node scores `50 + (50 + S(with the pod) - S(without it)) / 2`: 75
    /// when the balance stays as it was, the range still 50 to 100.
    pub fn balanced_allocation_scores_change(self) -> bool {
        self.minor >= 36
    }

    /// Whether TaintToleration's Filter reason leaves the taint out (`node(s) had
    /// untolerated taint(s)`): kubernetes PR 134740 ("remove taint values from
    /// unschedulable messages in pod status", 1.35.0-alpha.3 changelog). Earlier
    /// releases name it: `node(s) had untolerated taint {key: value}`.
    pub fn taint_reason_names_no_taint(self) -> bool {
        self.minor >= 35
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
    pub(crate) fn preemption_success_message(self) -> bool {
        self.minor >= 37
    }
}

/// How a release writes a PreFilter rejection into the pending message
/// ([`KubernetesVersion::pre_filter_rejection_layout`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum PreFilterLayout {
    /// The per-node histogram alone (1.25).
    HistogramOnly,
    /// The PreFilter message, then the histogram (1.26, 1.27).
    MessageAndHistogram,
    /// The PreFilter message alone (from 1.28).
    MessageOnly,
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
#[non_exhaustive]
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
        "--feature-gates: unrecognized feature gate {name:?} in Kubernetes {version}{} (known: {known})",
        elsewhere.as_ref().map(|e| format!(": {e}")).unwrap_or_default()
    )]
    UnknownGate {
        /// The gate as given.
        name: String,
        /// The release.
        version: KubernetesVersion,
        /// For a gate of other releases: `first in 1.32` or `removed in 1.32`.
        elsewhere: Option<String>,
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

/// A gate's maturity in a release (upstream's `featuregate.PreRelease`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Maturity {
    /// Alpha.
    Alpha,
    /// Beta.
    Beta,
    /// Generally available.
    Ga,
}

/// One entry of a gate's history: from release `1.since` on, until the next entry
/// (upstream's `featuregate.VersionedSpec`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// The first minor release of this stage.
    pub since: u32,
    /// The value when `--feature-gates` does not set it.
    pub default: bool,
    /// Its maturity.
    pub maturity: Maturity,
    /// Whether setting it to anything but `default` is refused.
    pub locked: bool,
}

const fn alpha(since: u32) -> Stage {
    Stage {
        since,
        default: false,
        maturity: Maturity::Alpha,
        locked: false,
    }
}

const fn beta(since: u32, default: bool) -> Stage {
    Stage {
        since,
        default,
        maturity: Maturity::Beta,
        locked: false,
    }
}

const fn ga(since: u32, locked: bool) -> Stage {
    Stage {
        since,
        default: true,
        maturity: Maturity::Ga,
        locked,
    }
}

/// One feature gate across releases.
#[derive(Copy, Clone, Debug)]
pub struct Gate {
    /// Upstream's name.
    pub name: &'static str,
    /// Its history, oldest first (upstream's versioned gate table).
    pub stages: &'static [Stage],
    /// The first minor release that no longer has it (kube-scheduler then refuses it).
    pub removed_in: Option<u32>,
    /// Whether it changes what topospread computes; the others are accepted, as
    /// kube-scheduler accepts them, and change none of its answers.
    pub modelled: bool,
    /// The upstream change, for the README and `--help`.
    pub upstream: &'static str,
}

impl Gate {
    /// The stage in force in release `1.minor`, if the release has the gate.
    pub(crate) fn stage_in(&self, minor: u32) -> Option<Stage> {
        if self.removed_in.is_some_and(|r| minor >= r) {
            return None;
        }
        self.stages.iter().rev().find(|s| s.since <= minor).copied()
    }

    /// The first release that has the gate.
    pub fn since(&self) -> u32 {
        self.stages.first().map_or(u32::MAX, |s| s.since)
    }

    /// The value a release without the gate behaves as: on once a GA gate is removed
    /// (the feature stays), off before the gate exists.
    fn absent_value(&self, minor: u32) -> bool {
        self.removed_in.is_some_and(|r| minor >= r)
            && self
                .stages
                .last()
                .is_some_and(|s| s.maturity == Maturity::Ga && s.default)
    }
}

const fn gate(
    name: &'static str,
    stages: &'static [Stage],
    modelled: bool,
    upstream: &'static str,
) -> Gate {
    Gate {
        name,
        stages,
        removed_in: None,
        modelled,
        upstream,
    }
}

/// Every gate kube-scheduler or its plugins read between 1.25 and 1.38 (and the API
/// server's and StatefulSet controller's gates that change the pods a workload makes), with its
/// history from upstream's versioned gate table (`pkg/features/kube_features.go`
/// `defaultVersionedKubernetesFeatureGates`) and, for the gates removed before that
/// table, the feature-gate pages of the Kubernetes documentation. `modelled` marks the
/// ones that change topospread's answers.
pub const GATES: &[Gate] = &[
    Gate {
        removed_in: Some(32),
        ..gate(
            "MinDomainsInPodTopologySpread",
            &[alpha(24), beta(25, false), beta(27, true), ga(30, true)],
            true,
            "KEP-3022: alpha 1.24, beta (off) 1.25, on by default 1.27, GA 1.30, gate removed in 1.32 (PR 126863)",
        )
    },
    gate(
        "NodeInclusionPolicyInPodTopologySpread",
        &[alpha(25), beta(26, true), ga(33, true)],
        true,
        "KEP-3094: alpha 1.25, beta (on) 1.26, GA 1.33",
    ),
    gate(
        "MatchLabelKeysInPodTopologySpread",
        &[alpha(25), beta(27, true)],
        true,
        "KEP-3243: alpha 1.25, beta (on) 1.27",
    ),
    gate(
        "MatchLabelKeysInPodTopologySpreadSelectorMerge",
        &[beta(34, true)],
        true,
        "KEP-3243: the API server merges matchLabelKeys into labelSelector at pod creation, beta (on) 1.34",
    ),
    gate(
        "PodLevelResources",
        &[alpha(32), beta(34, true)],
        true,
        "KEP-2837: pod-level requests, alpha 1.32, beta (on) 1.34",
    ),
    gate(
        "TaintTolerationComparisonOperators",
        &[alpha(35)],
        true,
        "KEP-5471: Gt/Lt tolerations, alpha 1.35",
    ),
    gate(
        "DynamicResourceAllocation",
        &[alpha(26), beta(32, false), ga(34, false), ga(35, true)],
        true,
        "KEP-4381: the default profile runs DynamicResources (its PostFilter adds `no new claims to deallocate` to failure messages), alpha 1.26, beta (off) 1.32, GA (on) 1.34, locked on 1.35 (PR 134452)",
    ),
    gate(
        "SchedulerPopFromBackoffQ",
        &[beta(33, true)],
        true,
        "KEP-5142: the queue pops a backing-off pod when activeQ is empty, beta (on) 1.33",
    ),
    Gate {
        removed_in: Some(34),
        ..gate(
            "StatefulSetStartOrdinal",
            &[alpha(26), beta(27, true), ga(31, true)],
            true,
            "KEP-3335: a StatefulSet's spec.ordinals.start (kube-apiserver drops the field while off, the StatefulSet controller numbers from 0), alpha 1.26, beta (on) 1.27, GA 1.31, gate removed in 1.34 (PR 132119)",
        )
    },
    gate(
        "MaxUnavailableStatefulSet",
        &[alpha(24), beta(35, true)],
        true,
        "KEP-961: a StatefulSet's rollingUpdate.maxUnavailable (kube-apiserver drops the field while off), alpha 1.24, beta (on) 1.35",
    ),
    Gate {
        removed_in: Some(36),
        ..gate(
            "CSIMigrationPortworx",
            &[alpha(23), beta(25, false), beta(31, true), ga(33, true)],
            false,
            "VolumeBinding/NodeVolumeLimits: Portworx volumes through CSI; gate removed in 1.36 (not in 1.36's feature list)",
        )
    },
    Gate {
        removed_in: Some(28),
        ..gate(
            "CSIStorageCapacity",
            &[alpha(19), beta(21, true), ga(24, true)],
            false,
            "VolumeBinding reads CSIStorageCapacity; gate removed in 1.28",
        )
    },
    gate(
        "ClearingNominatedNodeNameAfterBinding",
        &[alpha(34), beta(35, true)],
        false,
        "KEP-5278: nominatedNodeName cleared after binding",
    ),
    gate(
        "DRAAdminAccess",
        &[alpha(32), beta(34, true)],
        false,
        "DynamicResources: admin access to devices",
    ),
    gate(
        "DRAConsumableCapacity",
        &[alpha(34)],
        false,
        "DynamicResources: consumable device capacity",
    ),
    gate(
        "DRADeviceBindingConditions",
        &[alpha(34)],
        false,
        "DynamicResources: device binding conditions at PreBind",
    ),
    gate(
        "DRADeviceTaintRules",
        &[alpha(35)],
        false,
        "DynamicResources: DeviceTaintRule objects",
    ),
    gate(
        "DRADeviceTaints",
        &[alpha(33)],
        false,
        "DynamicResources: device taints and tolerations",
    ),
    gate(
        "DRAExtendedResource",
        &[alpha(34), ga(37, false)],
        false,
        "DynamicResources: extended resources backed by DRA, GA in 1.37 (1.37.0-alpha.1 changelog, PR 138488)",
    ),
    gate(
        "DRAPartitionableDevices",
        &[alpha(33)],
        false,
        "DynamicResources: partitionable devices",
    ),
    gate(
        "DRAPrioritizedList",
        &[alpha(33), beta(34, true)],
        false,
        "DynamicResources: prioritized alternatives in a claim",
    ),
    gate(
        "DRASchedulerFilterTimeout",
        &[beta(34, true)],
        false,
        "DynamicResources: Filter time limit",
    ),
    gate(
        "GangScheduling",
        &[alpha(35)],
        false,
        "KEP-4671: gang scheduling of pod groups",
    ),
    gate(
        "GenericWorkload",
        &[alpha(35)],
        false,
        "KEP-4671: the Workload API the scheduler reads",
    ),
    gate(
        "InPlacePodLevelResourcesVerticalScaling",
        &[alpha(35)],
        false,
        "resize of pod-level resources",
    ),
    gate(
        "InPlacePodVerticalScaling",
        &[alpha(27), beta(33, true), ga(35, true)],
        true,
        "KEP-1287: NodeResourcesFit counts a pending resize",
    ),
    Gate {
        removed_in: Some(27),
        ..gate(
            "LocalStorageCapacityIsolation",
            &[alpha(7), beta(10, true), ga(25, true)],
            false,
            "ephemeral-storage requests; gate removed in 1.27",
        )
    },
    gate(
        "MatchLabelKeysInPodAffinity",
        &[alpha(29), beta(31, true), ga(33, true)],
        false,
        "KEP-3633: matchLabelKeys in pod affinity terms",
    ),
    gate(
        "NodeDeclaredFeatures",
        &[alpha(35)],
        false,
        "KEP-5328: the NodeDeclaredFeatures plugin",
    ),
    gate(
        "NominatedNodeNameForExpectation",
        &[alpha(34), beta(35, true)],
        false,
        "KEP-5278: nominatedNodeName set before binding",
    ),
    gate(
        "OpportunisticBatching",
        &[beta(35, true)],
        false,
        "scheduling identical pods in batches",
    ),
    Gate {
        removed_in: Some(34),
        ..gate(
            "PodDisruptionConditions",
            &[alpha(25), beta(26, true), ga(31, true)],
            false,
            "preemption adds the DisruptionTarget condition; gate removed in 1.34 (still registered in v1.33.3's kube_features.go)",
        )
    },
    gate(
        "PodSchedulingReadiness",
        &[alpha(26), beta(27, true), ga(30, true)],
        false,
        "KEP-3521: spec.schedulingGates (SchedulingGates plugin)",
    ),
    Gate {
        removed_in: Some(26),
        ..gate(
            "PreferNominatedNode",
            &[alpha(21), beta(22, true), ga(24, true)],
            false,
            "a nominated pod's cycle tries its nominated node first (schedule_one.go evaluateNominatedNode); locked on in 1.25, gate removed in 1.26",
        )
    },
    Gate {
        removed_in: Some(31),
        ..gate(
            "ReadWriteOncePod",
            &[alpha(22), beta(27, true), ga(29, true)],
            false,
            "VolumeRestrictions: ReadWriteOncePod claims; gate removed in 1.31",
        )
    },
    gate(
        "SchedulerAsyncAPICalls",
        &[beta(34, false)],
        false,
        "KEP-5229: API calls off the scheduling cycle",
    ),
    gate(
        "SchedulerAsyncPreemption",
        &[alpha(32), beta(33, true)],
        false,
        "KEP-4832: preemption API calls off the scheduling cycle",
    ),
    gate(
        "SchedulerQueueingHints",
        &[beta(28, false), beta(32, true), ga(34, true)],
        false,
        "KEP-4247: queueing hints",
    ),
    gate(
        "SidecarContainers",
        &[alpha(28), beta(29, true), ga(33, true)],
        true,
        "KEP-753: restartable init containers in pod requests",
    ),
    gate(
        "StorageCapacityScoring",
        &[alpha(33)],
        false,
        "KEP-4049: VolumeBinding scores by free capacity",
    ),
    gate(
        "VolumeAttributesClass",
        &[alpha(29), beta(31, false), ga(34, false), ga(36, true)],
        false,
        "KEP-3751: VolumeBinding reads VolumeAttributesClass",
    ),
    Gate {
        removed_in: Some(33),
        ..gate(
            "VolumeCapacityPriority",
            &[alpha(21)],
            false,
            "VolumeBinding scores by capacity; replaced by StorageCapacityScoring in 1.33",
        )
    },
    gate(
        "VolumeLimitScaling",
        &[alpha(35)],
        false,
        "KEP-5030: NodeVolumeLimits with volume limit scaling",
    ),
];

/// `name` as a gate release `1.minor`'s kube-scheduler binary registers outside
/// [`GATES`] (kubelet's, the API server's, component-base's...), if it does.
fn other_gate(name: &str, minor: u32) -> Option<&'static str> {
    known_gates::KNOWN_GATES
        .iter()
        .find(|(n, since, removed)| {
            *n == name && *since <= minor && removed.is_none_or(|r| minor < r)
        })
        .map(|(n, _, _)| *n)
}

/// For a gate of other releases' binaries: `first in 1.N` or `removed in 1.N`.
fn other_gate_elsewhere(name: &str, minor: u32) -> Option<String> {
    let (_, since, removed) = known_gates::KNOWN_GATES.iter().find(|(n, ..)| *n == name)?;
    Some(match removed {
        Some(r) if minor >= *r => format!("removed in 1.{r}"),
        _ => format!("first in 1.{since}"),
    })
}

/// The gates of one release, with `--feature-gates` applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureGates {
    version: KubernetesVersion,
    enabled: Vec<(&'static str, bool)>,
    /// Gates of the release's binary outside [`GATES`] that `--feature-gates` set.
    others: Vec<(&'static str, bool)>,
    /// The gates `--feature-gates` set, in order.
    set: Vec<&'static str>,
}

impl FeatureGates {
    /// The release's defaults.
    pub fn new(version: KubernetesVersion) -> Self {
        let enabled = GATES
            .iter()
            .filter_map(|g| g.stage_in(version.minor).map(|s| (g.name, s.default)))
            .collect();
        Self {
            version,
            enabled,
            others: Vec::new(),
            set: Vec::new(),
        }
    }

    /// The release.
    pub fn version(&self) -> KubernetesVersion {
        self.version
    }

    /// Sets one gate as `--feature-gates Name=value` would.
    pub fn set(&mut self, name: &str, value: bool) -> Result<(), VersionError> {
        let version = self.version;
        let found = GATES.iter().find(|g| g.name == name);
        if found.is_none()
            && let Some(other) = other_gate(name, version.minor)
        {
            // A gate of the binary that no scheduling reads: accepted, noted, unmodelled.
            match self.others.iter_mut().find(|(n, _)| *n == other) {
                Some(slot) => slot.1 = value,
                None => self.others.push((other, value)),
            }
            if !self.set.contains(&other) {
                self.set.push(other);
            }
            return Ok(());
        }
        let Some((gate, stage)) = found.and_then(|g| g.stage_in(version.minor).map(|s| (g, s)))
        else {
            return Err(VersionError::UnknownGate {
                name: name.to_string(),
                version,
                elsewhere: found
                    .map(|g| match g.removed_in {
                        Some(r) if version.minor >= r => format!("removed in 1.{r}"),
                        _ => format!("first in 1.{}", g.since()),
                    })
                    .or_else(|| other_gate_elsewhere(name, version.minor)),
                known: self
                    .enabled
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        if stage.locked && value != stage.default {
            return Err(VersionError::Locked {
                name: gate.name,
                value,
                locked: stage.default,
                version,
            });
        }
        if let Some(slot) = self.enabled.iter_mut().find(|(n, _)| *n == gate.name) {
            slot.1 = value;
        }
        if !self.set.contains(&gate.name) {
            self.set.push(gate.name);
        }
        Ok(())
    }

    /// The same `--feature-gates` settings over another release's defaults: once a live
    /// cluster's release is known, the gates given on the command line apply to it.
    pub fn for_release(&self, version: KubernetesVersion) -> Result<Self, VersionError> {
        let mut gates = Self::new(version);
        for name in &self.set {
            gates.set(name, self.enabled(name))?;
        }
        Ok(gates)
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

    /// Whether a gate is on. A gate the release lacks is off, unless it was removed
    /// after GA: its feature stays.
    pub fn enabled(&self, name: &str) -> bool {
        if let Some((_, on)) = self.others.iter().find(|(n, _)| *n == name) {
            return *on;
        }
        match self.enabled.iter().find(|(n, _)| *n == name) {
            Some((_, on)) => *on,
            None => GATES
                .iter()
                .any(|g| g.name == name && g.absent_value(self.version.minor)),
        }
    }

    /// The gates `--feature-gates` set that topospread does not model: accepted as
    /// kube-scheduler accepts them, they change none of topospread's answers.
    pub fn unmodelled_settings(&self) -> Vec<&'static str> {
        self.set
            .iter()
            .copied()
            .filter(|n| !GATES.iter().any(|g| g.name == *n && g.modelled))
            .collect()
    }

    /// Every gate of the release with its value, in [`GATES`] order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, bool)> + '_ {
        self.enabled.iter().copied()
    }

    /// How pods' requests are computed (`PodLevelResources`, `InPlacePodVerticalScaling`,
    /// `SidecarContainers`).
    pub fn request_options(&self) -> RequestOptions {
        RequestOptions {
            pod_level_resources: self.enabled("PodLevelResources"),
            in_place_pod_vertical_scaling: self.enabled("InPlacePodVerticalScaling"),
            sidecar_containers: self.enabled("SidecarContainers"),
        }
    }

    /// What the scheduler's plugins read.
    pub fn scheduler_features(&self) -> Features {
        Feature::ALL.into_iter().fold(
            Features::default().with_kubernetes_version(self.version),
            |f, gate| f.with(gate, self.enabled(gate.name())),
        )
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
    fn gates_given_carry_over_to_the_cluster_release() {
        let mut given = FeatureGates::new(v(38));
        given.apply("PodLevelResources=false").unwrap();
        let on_34 = given.for_release(v(34)).unwrap();
        assert_eq!(on_34.version(), v(34));
        assert!(!on_34.enabled("PodLevelResources"));
        assert_eq!(
            on_34.enabled("MatchLabelKeysInPodTopologySpread"),
            FeatureGates::new(v(34)).enabled("MatchLabelKeysInPodTopologySpread")
        );
        // A gate the cluster's release lacks is refused as `--feature-gates` would be.
        assert!(matches!(
            given.for_release(v(25)),
            Err(VersionError::UnknownGate { .. })
        ));
        assert_eq!(v(24).nearest_supported(), v(25));
        assert_eq!(v(41).nearest_supported(), v(38));
        assert_eq!(v(32).nearest_supported(), v(32));
    }

    #[test]
    fn defaults_follow_the_releases() {
        let on = |f: &Features| {
            [
                Feature::MinDomainsInPodTopologySpread,
                Feature::NodeInclusionPolicyInPodTopologySpread,
                Feature::MatchLabelKeysInPodTopologySpread,
            ]
            .map(|g| f.enabled(g))
        };
        let f = FeatureGates::new(v(25)).scheduler_features();
        assert_eq!(on(&f), [false, false, false]);
        assert!(f.empty_selector_matches_all());
        let f = FeatureGates::new(v(26)).scheduler_features();
        assert_eq!(on(&f), [false, true, false]);
        let f = FeatureGates::new(v(27)).scheduler_features();
        assert_eq!(on(&f), [true, true, true]);
        assert!(!f.empty_selector_matches_all());
        assert!(
            !FeatureGates::new(v(37))
                .scheduler_features()
                .empty_selector_matches_all()
        );
        let newest = FeatureGates::default().scheduler_features();
        assert!(newest.empty_selector_matches_all());
        assert_eq!(newest, Features::default());
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
        assert!(!f.enabled(Feature::MinDomainsInPodTopologySpread));
        assert!(!f.enabled(Feature::MatchLabelKeysInPodTopologySpread));
        assert!(f.enabled(Feature::NodeInclusionPolicyInPodTopologySpread));
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

    #[test]
    fn every_release_accepts_its_scheduler_gates() {
        // kubernetes issue 22's report: 1.30 refused SchedulerQueueingHints.
        let mut gates = FeatureGates::new(v(30));
        assert!(!gates.enabled("SchedulerQueueingHints"));
        gates
            .apply("SchedulerQueueingHints=true,DynamicResourceAllocation=true")
            .expect("1.30 has both gates");
        assert!(gates.enabled("SchedulerQueueingHints"));
        // DynamicResourceAllocation is modelled: it puts DynamicResources in the profile.
        assert_eq!(gates.unmodelled_settings(), vec!["SchedulerQueueingHints"]);
        assert!(FeatureGates::new(v(32)).enabled("SchedulerQueueingHints"));
        // Not yet in 1.27, locked on from 1.34.
        let e = FeatureGates::new(v(27)).apply("SchedulerQueueingHints=true");
        assert_eq!(
            e.map_err(|e| e.to_string()).err().as_deref().map(|m| m
                .split(" (known")
                .next()
                .unwrap_or(m)
                .to_string()),
            Some(
                "--feature-gates: unrecognized feature gate \"SchedulerQueueingHints\" in Kubernetes 1.27: first in 1.28"
                    .to_string()
            )
        );
        assert!(matches!(
            FeatureGates::new(v(34)).apply("SchedulerQueueingHints=false"),
            Err(VersionError::Locked {
                locked: true,
                value: false,
                ..
            })
        ));
        // A gate refused once removed, its feature kept.
        let e = FeatureGates::new(v(33)).apply("MinDomainsInPodTopologySpread=true");
        assert!(
            e.as_ref()
                .map_err(|e| e.to_string().contains("removed in 1.32"))
                .err()
                .unwrap_or(false),
            "{e:?}"
        );
        assert!(
            FeatureGates::new(v(33))
                .scheduler_features()
                .enabled(Feature::MinDomainsInPodTopologySpread)
        );
        assert!(FeatureGates::new(v(38)).enabled("MinDomainsInPodTopologySpread"));
        // Modelled gates set on the command line need no note.
        let mut modelled = FeatureGates::new(v(35));
        modelled
            .apply("TaintTolerationComparisonOperators=true")
            .expect("alpha in 1.35");
        assert!(modelled.unmodelled_settings().is_empty());
    }

    #[test]
    fn every_gate_of_the_binary_is_accepted_with_a_note() {
        let mut gates = FeatureGates::new(v(36));
        gates
            .apply("HPAScaleToZero=true,RotateKubeletServerCertificate=false")
            .expect("gates of kube-scheduler's binary");
        assert!(gates.enabled("HPAScaleToZero"));
        assert!(!gates.enabled("RotateKubeletServerCertificate"));
        assert_eq!(
            gates.unmodelled_settings(),
            vec!["HPAScaleToZero", "RotateKubeletServerCertificate"]
        );
        assert_eq!(
            gates.scheduler_features(),
            FeatureGates::new(v(36)).scheduler_features()
        );
        assert!(matches!(
            gates.apply("NoSuchGateAnywhere=true"),
            Err(VersionError::UnknownGate {
                elsewhere: None,
                ..
            })
        ));
    }

    #[test]
    fn request_counting_follows_its_gates_per_release() {
        let o = |minor| FeatureGates::new(v(minor)).request_options();
        assert!(!o(28).sidecar_containers && o(29).sidecar_containers);
        assert!(!o(32).in_place_pod_vertical_scaling && o(33).in_place_pod_vertical_scaling);
        assert!(!o(33).pod_level_resources && o(34).pod_level_resources);
        let mut gates = FeatureGates::new(v(28));
        gates
            .apply("SidecarContainers=true")
            .expect("alpha in 1.28");
        assert!(gates.request_options().sidecar_containers);
        assert!(gates.unmodelled_settings().is_empty());
    }

    #[test]
    fn the_modelled_gates_agree_with_the_binary_table() {
        let mut differ = Vec::new();
        for g in GATES {
            let Some((_, since, removed)) =
                known_gates::KNOWN_GATES.iter().find(|(n, ..)| *n == g.name)
            else {
                differ.push(format!("{} missing", g.name));
                continue;
            };
            for minor in OLDEST_MINOR..=NEWEST_MINOR {
                let in_table = *since <= minor && removed.is_none_or(|r| minor < r);
                if g.stage_in(minor).is_some() != in_table {
                    differ.push(format!("{} in 1.{minor}: table {in_table}", g.name));
                }
            }
        }
        assert_eq!(differ, Vec::<String>::new());
        assert!(known_gates::KNOWN_GATES.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn prefer_nominated_node_is_locked_on_in_1_25_and_gone_after() {
        assert!(FeatureGates::new(v(25)).enabled("PreferNominatedNode"));
        assert!(matches!(
            FeatureGates::new(v(25)).apply("PreferNominatedNode=false"),
            Err(VersionError::Locked { locked: true, .. })
        ));
        assert!(matches!(
            FeatureGates::new(v(26)).apply("PreferNominatedNode=true"),
            Err(VersionError::UnknownGate { .. })
        ));
    }

    #[test]
    fn the_gate_table_is_ordered_and_unique() {
        let mut names = std::collections::BTreeSet::new();
        for g in GATES {
            assert!(names.insert(g.name), "{} twice", g.name);
            assert!(!g.stages.is_empty(), "{}", g.name);
            assert!(
                g.stages.windows(2).all(|w| w[0].since < w[1].since),
                "{}: stages out of order",
                g.name
            );
            if let Some(r) = g.removed_in {
                assert!(g.since() < r, "{}", g.name);
                assert!(g.stage_in(r).is_none() && g.stage_in(r - 1).is_some());
            }
            // Every gate exists in some supported release.
            assert!(
                (OLDEST_MINOR..=NEWEST_MINOR).any(|m| g.stage_in(m).is_some()),
                "{}",
                g.name
            );
        }
        // Each release's gates are listed in GATES order.
        let newest = FeatureGates::default();
        assert_eq!(
            newest.iter().count(),
            GATES
                .iter()
                .filter(|g| g.stage_in(NEWEST_MINOR).is_some())
                .count()
        );
    }
}
