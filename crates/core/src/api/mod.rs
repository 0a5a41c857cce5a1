//! The engine's compact internal types: interned labels, compiled selectors, taints.
//!
//! Kubernetes objects are parsed into these once, at the edge, so the scheduling hot
//! path compares integers rather than hashing strings.

mod disruption;
mod interner;
mod labels;
mod node_affinity;
mod selector;
mod selector_syntax;
mod taints;

pub use interner::{Sym, Symbols};
pub use labels::Labels;
pub use node_affinity::{
    FieldRequirement, NodeSelectorMatcher, NodeSelectorTermMatcher, PreferredNodeAffinity,
    RequiredNodeAffinity, required_node_names,
};
pub(crate) use selector::intern_set;
pub use selector::{Op, Requirement, Selector, SelectorError};
pub use selector_syntax::{
    ParsedRequirement, SelectorOperator, SelectorParseError, parse_label_selector,
};
pub use taints::{Taint, TaintEffect, Toleration, TolerationOp, find_untolerated_taint};
mod objects;
mod pod_affinity;
mod priority;
pub mod quantity;
pub mod resources;
mod spread;
mod volumes;

pub use disruption::{DisruptionBudget, DisruptionBudgets};
pub use objects::{ControllerKind, ControllerRef, Node, NodeImage, Pod, Workloads};
pub use pod_affinity::{AffinityTerm, PodAffinity, WeightedAffinityTerm};
pub use priority::{
    PreemptionPolicy, PriorityClass, PriorityClasses, SYSTEM_CLUSTER_CRITICAL,
    SYSTEM_CLUSTER_CRITICAL_VALUE, SYSTEM_NODE_CRITICAL, SYSTEM_NODE_CRITICAL_VALUE,
};
pub use spread::{NodeInclusionPolicy, SpreadConstraintSpec, WhenUnsatisfiable};
pub use volumes::{
    AccessModes, ClaimRef, CsiNode, CsiNodeDriver, PersistentVolume, PersistentVolumeClaim,
    PodVolume, StorageClass, TopologyTerm, VolumeMode,
};
