//! Args of the default plugins other than PodTopologySpread (v1 wire shapes).

use serde::Deserialize;

/// A resource and its weight (`ResourceSpec`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceSpecArg {
    /// The resource name.
    pub name: String,
    /// Its weight (defaults to 1).
    #[serde(default)]
    pub weight: Option<i64>,
}

/// A point of `requestedToCapacityRatio.shape`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UtilizationShapePointArg {
    /// Utilization in percent (0..=100).
    pub utilization: i32,
    /// Score (0..=10).
    pub score: i32,
}

/// `requestedToCapacityRatio`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestedToCapacityRatioArg {
    /// The shape.
    #[serde(default)]
    pub shape: Vec<UtilizationShapePointArg>,
}

/// `scoringStrategy` of NodeResourcesFit.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
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
#[serde(rename_all = "camelCase", deny_unknown_fields)]
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
#[serde(rename_all = "camelCase", deny_unknown_fields)]
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
#[serde(rename_all = "camelCase", deny_unknown_fields)]
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
#[serde(rename_all = "camelCase", deny_unknown_fields)]
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

/// `DefaultPreemptionArgs`: how many candidate nodes preemption looks for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DefaultPreemptionArgs {
    /// `apiVersion`, when written as a typed object.
    #[serde(default)]
    pub api_version: Option<String>,
    /// `kind`, when written as a typed object.
    #[serde(default)]
    pub kind: Option<String>,
    /// Candidates as a percentage of the nodes (0..=100; default 10).
    #[serde(default)]
    pub min_candidate_nodes_percentage: Option<i32>,
    /// Candidates as an absolute number (>= 0; default 100).
    #[serde(default)]
    pub min_candidate_nodes_absolute: Option<i32>,
}
