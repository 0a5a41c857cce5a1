//! PodTopologySpread: spreads pods over topology domains by `topologySpreadConstraints`
//! (Filter for `DoNotSchedule`, Score for `ScheduleAnyway`), with cluster-wide default
//! constraints for pods that define none.

use crate::framework::{ActionType as A, ClusterEvent, EventResource as R};
mod common;
mod counting;
mod filtering;
mod scoring;

pub use counting::CountingGroup;
pub use filtering::{
    ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, PreFilterState,
};
pub use scoring::PreScoreState;

use crate::api::{Selector, SpreadConstraintSpec, Symbols, WhenUnsatisfiable};
use crate::config::{DefaultingType, PodTopologySpreadArgs};
use crate::features::Features;
use crate::framework::Plugin;
use k8s_openapi::api::core::v1::TopologySpreadConstraint;

/// The plugin's registry name.
pub const NAME: &str = "PodTopologySpread";

/// `kubernetes.io/hostname`: per-node counts for this key are read at Score time.
pub const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";
/// `topology.kubernetes.io/zone`.
pub const LABEL_TOPOLOGY_ZONE: &str = "topology.kubernetes.io/zone";

/// Why the plugin could not be built from its args.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NewError {
    /// `defaultingType` is neither System nor List.
    #[error(
        "PodTopologySpreadArgs: defaultingType: Unsupported value: {0:?}: supported values: \"System\", \"List\""
    )]
    DefaultingType(String),
}

/// The PodTopologySpread plugin.
#[derive(Clone, Debug)]
pub struct PodTopologySpread {
    default_constraints: Vec<SpreadConstraintSpec>,
    system_defaulted: bool,
    features: Features,
}

impl Plugin for PodTopologySpread {
    fn name(&self) -> &'static str {
        NAME
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(R::AssignedPod, A::ADD | A::UPDATE_POD_LABEL | A::DELETE),
            ClusterEvent::new(
                R::Node,
                A::ADD | A::DELETE | A::UPDATE_NODE_LABEL | A::UPDATE_NODE_TAINT,
            ),
        ]
    }
}

impl PodTopologySpread {
    /// Builds the plugin from its args; `symbols` interns the default constraints' keys.
    pub fn new(
        args: &PodTopologySpreadArgs,
        features: Features,
        symbols: &mut Symbols,
    ) -> Result<Self, NewError> {
        let defaulting = args.defaulting().ok_or_else(|| {
            NewError::DefaultingType(args.defaulting_type.clone().unwrap_or_default())
        })?;
        let (default_constraints, system_defaulted) = match defaulting {
            DefaultingType::System => (
                vec![
                    system_default(symbols, LABEL_HOSTNAME, 3),
                    system_default(symbols, LABEL_TOPOLOGY_ZONE, 5),
                ],
                true,
            ),
            DefaultingType::List => (
                args.default_constraints
                    .iter()
                    // Default constraints carry no selector (validation forbids one): it is
                    // derived per pod from its Services and controller. With the selector
                    // dropped, conversion has nothing left that can fail.
                    .filter_map(|c| {
                        crate::convert::spread_constraint(
                            &TopologySpreadConstraint {
                                label_selector: None,
                                ..c.clone()
                            },
                            symbols,
                        )
                        .ok()
                    })
                    .collect(),
                false,
            ),
        };
        symbols.intern(LABEL_HOSTNAME);
        symbols.intern("");
        Ok(Self {
            default_constraints,
            system_defaulted,
            features,
        })
    }
}

fn system_default(symbols: &mut Symbols, key: &str, max_skew: i32) -> SpreadConstraintSpec {
    SpreadConstraintSpec {
        max_skew,
        topology_key: symbols.intern(key),
        when_unsatisfiable: WhenUnsatisfiable::ScheduleAnyway,
        selector: Selector::Nothing,
        min_domains: None,
        node_affinity_policy: None,
        node_taints_policy: None,
        match_label_keys: Vec::new(),
    }
}
