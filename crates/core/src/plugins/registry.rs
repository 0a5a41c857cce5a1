//! The in-tree plugin registry: every default-profile plugin by its upstream name, the
//! extension points it extends, and how to build it from its args.

use super::imagelocality::ImageLocality;
use super::interpodaffinity::InterPodAffinity;
use super::nodeaffinity::NodeAffinity;
use super::nodename::NodeName;
use super::nodeports::NodePorts;
use super::noderesources::{BalancedAllocation, Fit};
use super::nodeunschedulable::NodeUnschedulable;
use super::podtopologyspread::PodTopologySpread;
use super::queuesort::PrioritySort;
use super::schedulinggates::SchedulingGates;
use super::tainttoleration::TaintToleration;
use crate::api::Symbols;
use crate::config::{
    FieldProblem, InterPodAffinityArgs, NodeAffinityArgs, NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs, PodTopologySpreadArgs,
};
use crate::features::Features;
use crate::framework::{
    FilterPlugin, PreEnqueuePlugin, PreFilterPlugin, PreScorePlugin, QueueSortPlugin, ScorePlugin,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

/// An extension point of the scheduling framework.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Point {
    /// PreEnqueue.
    PreEnqueue,
    /// QueueSort.
    QueueSort,
    /// PreFilter.
    PreFilter,
    /// Filter.
    Filter,
    /// PostFilter.
    PostFilter,
    /// PreScore.
    PreScore,
    /// Score.
    Score,
    /// Reserve.
    Reserve,
    /// Permit.
    Permit,
    /// PreBind.
    PreBind,
    /// Bind.
    Bind,
    /// PostBind.
    PostBind,
}

impl Point {
    /// Every point, in the order a pod meets them.
    pub const ALL: [Point; 12] = [
        Point::PreEnqueue,
        Point::QueueSort,
        Point::PreFilter,
        Point::Filter,
        Point::PostFilter,
        Point::PreScore,
        Point::Score,
        Point::Reserve,
        Point::Permit,
        Point::PreBind,
        Point::Bind,
        Point::PostBind,
    ];

    /// The v1 config field (`preFilter`, `score`...).
    pub fn field(self) -> &'static str {
        match self {
            Point::PreEnqueue => "preEnqueue",
            Point::QueueSort => "queueSort",
            Point::PreFilter => "preFilter",
            Point::Filter => "filter",
            Point::PostFilter => "postFilter",
            Point::PreScore => "preScore",
            Point::Score => "score",
            Point::Reserve => "reserve",
            Point::Permit => "permit",
            Point::PreBind => "preBind",
            Point::Bind => "bind",
            Point::PostBind => "postBind",
        }
    }

    /// The interface name upstream prints (`FilterPlugin`...).
    pub fn interface(self) -> &'static str {
        match self {
            Point::PreEnqueue => "PreEnqueuePlugin",
            Point::QueueSort => "QueueSortPlugin",
            Point::PreFilter => "PreFilterPlugin",
            Point::Filter => "FilterPlugin",
            Point::PostFilter => "PostFilterPlugin",
            Point::PreScore => "PreScorePlugin",
            Point::Score => "ScorePlugin",
            Point::Reserve => "ReservePlugin",
            Point::Permit => "PermitPlugin",
            Point::PreBind => "PreBindPlugin",
            Point::Bind => "BindPlugin",
            Point::PostBind => "PostBindPlugin",
        }
    }
}

use Point::*;

/// Every in-tree plugin the registry knows, with the points it extends upstream.
/// Plugins marked inert in [`is_inert`] are accepted in configs but do nothing here:
/// they act only on volumes, resource claims, preemption or binding.
pub const PLUGINS: &[(&str, &[Point])] = &[
    ("SchedulingGates", &[PreEnqueue]),
    ("PrioritySort", &[QueueSort]),
    ("NodeUnschedulable", &[Filter]),
    ("NodeName", &[Filter]),
    ("TaintToleration", &[Filter, PreScore, Score]),
    ("NodeAffinity", &[PreFilter, Filter, PreScore, Score]),
    ("NodePorts", &[PreFilter, Filter]),
    ("NodeResourcesFit", &[PreFilter, Filter, PreScore, Score]),
    ("VolumeRestrictions", &[PreFilter, Filter]),
    ("NodeVolumeLimits", &[PreFilter, Filter]),
    (
        "VolumeBinding",
        &[PreFilter, Filter, Reserve, PreBind, PreScore, Score],
    ),
    ("VolumeZone", &[PreFilter, Filter, PreScore, Score]),
    ("PodTopologySpread", &[PreFilter, Filter, PreScore, Score]),
    ("InterPodAffinity", &[PreFilter, Filter, PreScore, Score]),
    (
        "DynamicResources",
        &[PreEnqueue, PreFilter, Filter, PostFilter, Reserve, PreBind],
    ),
    ("DefaultPreemption", &[PostFilter]),
    ("NodeResourcesBalancedAllocation", &[PreScore, Score]),
    ("ImageLocality", &[Score]),
    ("DefaultBinder", &[Bind]),
];

/// The v1 default profile's `multiPoint.enabled`, with weights (`getDefaultPlugins`,
/// DynamicResourceAllocation on).
pub const DEFAULT_MULTI_POINT: &[(&str, Option<i32>)] = &[
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", Some(3)),
    ("NodeAffinity", Some(2)),
    ("NodePorts", None),
    ("NodeResourcesFit", Some(1)),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", Some(2)),
    ("InterPodAffinity", Some(2)),
    ("DynamicResources", None),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", Some(1)),
    ("ImageLocality", Some(1)),
    ("DefaultBinder", None),
];

/// The points a plugin extends, or `None` for a name the registry does not know.
pub fn points(name: &str) -> Option<&'static [Point]> {
    PLUGINS.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// Whether a known plugin is accepted but does nothing in this engine (volumes,
/// resource claims, preemption, binding).
pub fn is_inert(name: &str) -> bool {
    matches!(
        name,
        "VolumeRestrictions"
            | "NodeVolumeLimits"
            | "VolumeBinding"
            | "VolumeZone"
            | "DynamicResources"
            | "DefaultPreemption"
            | "DefaultBinder"
    )
}

/// A built plugin, as the extension points see it.
#[derive(Clone, Default)]
pub struct Built {
    /// As PreEnqueue.
    pub pre_enqueue: Option<Arc<dyn PreEnqueuePlugin>>,
    /// As QueueSort.
    pub queue_sort: Option<Arc<dyn QueueSortPlugin>>,
    /// As PreFilter.
    pub pre_filter: Option<Arc<dyn PreFilterPlugin>>,
    /// As Filter.
    pub filter: Option<Arc<dyn FilterPlugin>>,
    /// As PreScore.
    pub pre_score: Option<Arc<dyn PreScorePlugin>>,
    /// As Score.
    pub score: Option<Arc<dyn ScorePlugin>>,
}

impl std::fmt::Debug for Built {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Built").finish_non_exhaustive()
    }
}

fn args<T: DeserializeOwned + Default>(args: Option<&Value>) -> Result<T, FieldProblem> {
    match args {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => {
            crate::config::decode_strict(v, "").map_err(|e| FieldProblem::new(e.field, e.message))
        }
    }
}

/// Builds a plugin from its args (the `pluginConfig` entry, if any). On error: the
/// field inside `args` (empty for the whole object) and the message. An inert or
/// unknown plugin builds to nothing.
pub fn build(
    name: &str,
    raw_args: Option<&Value>,
    features: Features,
    symbols: &mut Symbols,
) -> Result<Built, FieldProblem> {
    let mut b = Built::default();
    match name {
        "SchedulingGates" => b.pre_enqueue = Some(Arc::new(SchedulingGates)),
        "PrioritySort" => b.queue_sort = Some(Arc::new(PrioritySort)),
        "NodeUnschedulable" => b.filter = Some(Arc::new(NodeUnschedulable::new(features))),
        "NodeName" => b.filter = Some(Arc::new(NodeName)),
        "TaintToleration" => {
            let p = Arc::new(TaintToleration::new(features));
            b.filter = Some(p.clone());
            b.pre_score = Some(p.clone());
            b.score = Some(p);
        }
        "NodeAffinity" => {
            let a: NodeAffinityArgs = args(raw_args)?;
            let p = Arc::new(NodeAffinity::new(&a, symbols)?);
            b.pre_filter = Some(p.clone());
            b.filter = Some(p.clone());
            b.pre_score = Some(p.clone());
            b.score = Some(p);
        }
        "NodePorts" => {
            let p = Arc::new(NodePorts);
            b.pre_filter = Some(p.clone());
            b.filter = Some(p);
        }
        "NodeResourcesFit" => {
            let a: NodeResourcesFitArgs = args(raw_args)?;
            let p = Arc::new(Fit::new(&a).map_err(|e| FieldProblem::new("", e.to_string()))?);
            b.pre_filter = Some(p.clone());
            b.filter = Some(p.clone());
            b.pre_score = Some(p.clone());
            b.score = Some(p);
        }
        "NodeResourcesBalancedAllocation" => {
            let a: NodeResourcesBalancedAllocationArgs = args(raw_args)?;
            let p = Arc::new(
                BalancedAllocation::new(&a).map_err(|e| FieldProblem::new("", e.to_string()))?,
            );
            b.pre_score = Some(p.clone());
            b.score = Some(p);
        }
        "ImageLocality" => b.score = Some(Arc::new(ImageLocality)),
        "PodTopologySpread" => {
            let a: PodTopologySpreadArgs = args(raw_args)?;
            let p = Arc::new(
                PodTopologySpread::new(&a, features, symbols)
                    .map_err(|e| FieldProblem::new("", e.to_string()))?,
            );
            b.pre_filter = Some(p.clone());
            b.filter = Some(p.clone());
            b.pre_score = Some(p.clone());
            b.score = Some(p);
        }
        "InterPodAffinity" => {
            let a: InterPodAffinityArgs = args(raw_args)?;
            let p = Arc::new(
                InterPodAffinity::new(&a).map_err(|e| FieldProblem::new("", e.to_string()))?,
            );
            b.pre_filter = Some(p.clone());
            b.filter = Some(p.clone());
            b.pre_score = Some(p.clone());
            b.score = Some(p);
        }
        _ => {}
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_is_registered_and_built_plugins_match_their_points() {
        for (name, _) in DEFAULT_MULTI_POINT {
            let pts = points(name).unwrap_or_else(|| panic!("{name} not registered"));
            let mut symbols = Symbols::default();
            let b = match build(name, None, Features::default(), &mut symbols) {
                Ok(b) => b,
                Err(e) => panic!("{name}: {e:?}"),
            };
            if is_inert(name) {
                continue;
            }
            assert_eq!(b.pre_enqueue.is_some(), pts.contains(&PreEnqueue), "{name}");
            assert_eq!(b.queue_sort.is_some(), pts.contains(&QueueSort), "{name}");
            assert_eq!(b.pre_filter.is_some(), pts.contains(&PreFilter), "{name}");
            assert_eq!(b.filter.is_some(), pts.contains(&Filter), "{name}");
            assert_eq!(b.pre_score.is_some(), pts.contains(&PreScore), "{name}");
            assert_eq!(b.score.is_some(), pts.contains(&Score), "{name}");
        }
    }
}
