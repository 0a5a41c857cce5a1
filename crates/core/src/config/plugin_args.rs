//! Args of the default plugins other than PodTopologySpread (v1 wire shapes).

use serde::Deserialize;

/// A resource and its weight (`ResourceSpec`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSpecArg {
    /// The resource name.
    pub name: String,
    /// Its weight (defaults to 1).
    #[serde(default)]
    pub weight: Option<i64>,
}

/// A point of `requestedToCapacityRatio.shape`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UtilizationShapePointArg {
    /// Utilization in percent (0..=100).
    pub utilization: i32,
    /// Score (0..=10).
    pub score: i32,
}

/// `requestedToCapacityRatio`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestedToCapacityRatioArg {
    /// The shape.
    #[serde(default)]
    pub shape: Vec<UtilizationShapePointArg>,
}

/// `scoringStrategy` of NodeResourcesFit.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScoringStrategyArg {
    /// `LeastAllocated` (default), `MostAllocated` or `RequestedToCapacityRatio`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// Resources and weights (default cpu and memory, weight 1).
    #[serde(default)]
    pub resources: Option<Vec<ResourceSpecArg>>,
    /// The shape for `RequestedToCapacityRatio`.
    #[serde(default)]
    pub requested_to_capacity_ratio: Option<RequestedToCapacityRatioArg>,
}

/// `NodeResourcesFitArgs`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeResourcesFitArgs {
    /// `apiVersion`, when written as a typed object.
    #[serde(default)]
    pub api_version: Option<String>,
    /// `kind`, when written as a typed object.
    #[serde(default)]
    pub kind: Option<String>,
    /// Extended resources Filter does not check.
    #[serde(default)]
    pub ignored_resources: Vec<String>,
    /// Extended resource groups (prefixes) Filter does not check.
    #[serde(default)]
    pub ignored_resource_groups: Vec<String>,
    /// How Score ranks nodes.
    #[serde(default)]
    pub scoring_strategy: Option<ScoringStrategyArg>,
}

/// `NodeResourcesBalancedAllocationArgs`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeResourcesBalancedAllocationArgs {
    /// `apiVersion`, when written as a typed object.
    #[serde(default)]
    pub api_version: Option<String>,
    /// `kind`, when written as a typed object.
    #[serde(default)]
    pub kind: Option<String>,
    /// Resources and weights (default cpu and memory, weight 1).
    #[serde(default)]
    pub resources: Option<Vec<ResourceSpecArg>>,
}

/// `InterPodAffinityArgs`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InterPodAffinityArgs {
    /// `apiVersion`, when written as a typed object.
    #[serde(default)]
    pub api_version: Option<String>,
    /// `kind`, when written as a typed object.
    #[serde(default)]
    pub kind: Option<String>,
    /// Weight of existing pods' required affinity terms the incoming pod matches (default 1).
    #[serde(default)]
    pub hard_pod_affinity_weight: Option<i32>,
    /// Skip existing pods' preferred terms when the incoming pod has none.
    #[serde(default)]
    pub ignore_preferred_terms_of_existing_pods: bool,
}

/// `NodeAffinityArgs`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeAffinityArgs {
    /// `apiVersion`, when written as a typed object.
    #[serde(default)]
    pub api_version: Option<String>,
    /// `kind`, when written as a typed object.
    #[serde(default)]
    pub kind: Option<String>,
    /// Node affinity the scheduler applies to every pod of the profile, on top of the
    /// pod's own: required terms filter, preferred terms add to the score.
    #[serde(default)]
    pub added_affinity: Option<k8s_openapi::api::core::v1::NodeAffinity>,
}

/// `DefaultPreemptionArgs`: how many nodes preemption looks at, at least.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefaultPreemptionArgs {
    /// `apiVersion`, when written as a typed object.
    #[serde(default)]
    pub api_version: Option<String>,
    /// `kind`, when written as a typed object.
    #[serde(default)]
    pub kind: Option<String>,
    /// The minimum share of nodes to find candidates on, in percent (default 10).
    #[serde(default = "default_min_candidate_nodes_percentage")]
    pub min_candidate_nodes_percentage: i32,
    /// The minimum number of nodes to find candidates on (default 100).
    #[serde(default = "default_min_candidate_nodes_absolute")]
    pub min_candidate_nodes_absolute: i32,
}

fn default_min_candidate_nodes_percentage() -> i32 {
    10
}

fn default_min_candidate_nodes_absolute() -> i32 {
    100
}

impl Default for DefaultPreemptionArgs {
    /// The v1 defaults: 10 percent, 100 nodes.
    fn default() -> Self {
        Self {
            api_version: None,
            kind: None,
            min_candidate_nodes_percentage: default_min_candidate_nodes_percentage(),
            min_candidate_nodes_absolute: default_min_candidate_nodes_absolute(),
        }
    }
}
