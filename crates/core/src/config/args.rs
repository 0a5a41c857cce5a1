use k8s_openapi::api::core::v1::TopologySpreadConstraint;
use serde::{Deserialize, Serialize};

/// `PodTopologySpreadArgs` (kubescheduler.config.k8s.io/v1): the plugin's configuration.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTopologySpreadArgs {
    /// `apiVersion`, when the args are written as a typed object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `kind`, when the args are written as a typed object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Constraints applied to pods that define none; their selectors are derived per pod.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub default_constraints: Vec<TopologySpreadConstraint>,
    /// `System` or `List`, as written; empty defaults to `System` (v1 defaulting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaulting_type: Option<String>,
}

/// How the plugin picks default constraints for pods that define none.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DefaultingType {
    /// kube-scheduler's built-in constraints (hostname maxSkew 3, zone maxSkew 5, soft).
    System,
    /// The `defaultConstraints` list as given.
    List,
}

impl PodTopologySpreadArgs {
    /// The defaulting type after v1 defaulting (`""` becomes `System`); `None` if unsupported.
    pub fn defaulting(&self) -> Option<DefaultingType> {
        match self.defaulting_type.as_deref() {
            None | Some("") | Some("System") => Some(DefaultingType::System),
            Some("List") => Some(DefaultingType::List),
            Some(_) => None,
        }
    }
}
