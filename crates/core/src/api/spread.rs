use super::{Labels, Selector, Sym};

/// `whenUnsatisfiable`: what to do when a constraint cannot be met.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum WhenUnsatisfiable {
    /// A hard constraint: Filter rejects nodes that would break it.
    DoNotSchedule,
    /// A soft constraint: Score prefers nodes that keep the skew low.
    ScheduleAnyway,
    /// A value the API does not know; the scheduler never acts on it.
    Other(Box<str>),
}

impl WhenUnsatisfiable {
    /// Parses the field as written.
    pub fn parse(s: &str) -> Self {
        match s {
            "DoNotSchedule" => Self::DoNotSchedule,
            "ScheduleAnyway" => Self::ScheduleAnyway,
            other => Self::Other(other.into()),
        }
    }

    /// The API name.
    pub fn as_str(&self) -> &str {
        match self {
            Self::DoNotSchedule => "DoNotSchedule",
            Self::ScheduleAnyway => "ScheduleAnyway",
            Self::Other(s) => s,
        }
    }
}

impl std::fmt::Display for WhenUnsatisfiable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `nodeAffinityPolicy` / `nodeTaintsPolicy`: whether a node property limits the domains counted.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum NodeInclusionPolicy {
    /// Only nodes that satisfy the pod's affinity (or tolerate its taints) count.
    Honor,
    /// Every node counts.
    Ignore,
}

impl NodeInclusionPolicy {
    /// Parses the field as written; as upstream compares against `Honor`, anything else ignores.
    pub fn parse(s: &str) -> Self {
        if s == "Honor" {
            Self::Honor
        } else {
            Self::Ignore
        }
    }

    /// The API name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Honor => "Honor",
            Self::Ignore => "Ignore",
        }
    }
}

/// A `topologySpreadConstraint` as the pod (or the plugin's defaults) wrote it, with the
/// selector compiled and strings interned. The plugin derives its working constraints
/// (gates applied, matchLabelKeys merged, defaults filled) from this.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SpreadConstraintSpec {
    /// `maxSkew`.
    pub max_skew: i32,
    /// `topologyKey`.
    pub topology_key: Sym,
    /// `whenUnsatisfiable`.
    pub when_unsatisfiable: WhenUnsatisfiable,
    /// `labelSelector`, compiled (`Nothing` when absent).
    pub selector: Selector,
    /// `minDomains`, if set.
    pub min_domains: Option<i32>,
    /// `nodeAffinityPolicy`, if set.
    pub node_affinity_policy: Option<NodeInclusionPolicy>,
    /// `nodeTaintsPolicy`, if set.
    pub node_taints_policy: Option<NodeInclusionPolicy>,
    /// `matchLabelKeys`.
    pub match_label_keys: Vec<Sym>,
}

impl SpreadConstraintSpec {
    /// The selector the constraint counts with for a pod with `pod_labels`: the pod's
    /// values of `matchLabelKeys` (those it has) ANDed with `labelSelector`
    /// (`mergeLabelSetWithSelector`); with no `labelSelector`, the pod's values alone.
    pub fn selector_for(&self, pod_labels: &Labels) -> Selector {
        if self.match_label_keys.is_empty() {
            return self.selector.clone();
        }
        let set = Labels::from_pairs(
            self.match_label_keys
                .iter()
                .filter_map(|k| pod_labels.get(*k).map(|v| (*k, v))),
        );
        if set.is_empty() {
            return self.selector.clone();
        }
        let merged = Selector::from_set(&set);
        match self.selector.requirements() {
            Some(reqs) => merged.with(reqs),
            None => merged,
        }
    }
}
