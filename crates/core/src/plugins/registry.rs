//! The in-tree plugin registry ([`Registry::in_tree`]): every plugin of the supported
//! releases by its upstream name, the extension points it extends, the releases that
//! register it and enable it by default, and how to build it from its args.

use super::imagelocality::ImageLocality;
use super::interpodaffinity::InterPodAffinity;
use super::nodeaffinity::NodeAffinity;
use super::nodename::NodeName;
use super::nodeports::NodePorts;
use super::noderesources::{BalancedAllocation, Fit};
use super::nodeunschedulable::NodeUnschedulable;
use super::nodevolumelimits::NodeVolumeLimits;
use super::podtopologyspread::PodTopologySpread;
use super::queuesort::PrioritySort;
use super::schedulinggates::SchedulingGates;
use super::tainttoleration::TaintToleration;
use super::volumebinding::VolumeBinding;
use super::volumerestrictions::VolumeRestrictions;
use super::volumezone::VolumeZone;
use crate::config::{
    DefaultPreemptionArgs, FieldProblem, InterPodAffinityArgs, NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs, ParseError, PodTopologySpreadArgs,
};
use crate::features::Feature;
use crate::framework::{BuiltPlugin, Point, Registration, Registry};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

use Point::*;

fn check<T: DeserializeOwned>(args: &Value, path: &str) -> Result<(), ParseError> {
    crate::config::decode_strict::<T>(args, path).map(drop)
}

/// An in-tree plugin in every release's default profile, inert until given a factory.
const fn plugin(name: &'static str, points: &'static [Point]) -> Registration {
    Registration {
        default_in: Some((0, None)),
        ..Registration::new(name, points)
    }
}

/// An in-tree volume-limit plugin (`nodevolumelimits/non_csi.go`): deprecated and out of
/// the default profile from 1.31 (kubernetes PR 124500), removed in 1.32 (PR 124003, in
/// the 1.32.0-alpha.1 changelog), their volumes counted by NodeVolumeLimits through CSI
/// migration.
const fn in_tree_volume_limits(name: &'static str, default: bool) -> Registration {
    Registration {
        removed_in: Some(32),
        default_in: if default { Some((0, Some(31))) } else { None },
        ..plugin(name, &[PreFilter, Filter])
    }
}

/// Every in-tree plugin of 1.25 to 1.38, in the order of the v1 default profile's
/// `multiPoint.enabled` (`getDefaultPlugins`); each says which releases register it and
/// which enable it by default.
const REGISTRY: &[Registration] = &[
    Registration {
        factory: Some(|_, _, _| {
            Ok(BuiltPlugin {
                pre_enqueue: Some(Arc::new(SchedulingGates)),
                ..BuiltPlugin::default()
            })
        }),
        // Registered from 1.26 (KEP-3521); the default profile enables it once
        // PodSchedulingReadiness is on by default (beta, 1.27).
        since: 26,
        default_in: Some((27, None)),
        ..plugin("SchedulingGates", &[PreEnqueue])
    },
    Registration {
        factory: Some(|_, _, _| {
            Ok(BuiltPlugin {
                queue_sort: Some(Arc::new(PrioritySort)),
                ..BuiltPlugin::default()
            })
        }),
        ..plugin("PrioritySort", &[QueueSort])
    },
    Registration {
        factory: Some(|_, features, _| {
            Ok(BuiltPlugin {
                filter: Some(Arc::new(NodeUnschedulable::new(features))),
                ..BuiltPlugin::default()
            })
        }),
        ..plugin("NodeUnschedulable", &[Filter])
    },
    Registration {
        factory: Some(|_, _, _| {
            Ok(BuiltPlugin {
                filter: Some(Arc::new(NodeName)),
                ..BuiltPlugin::default()
            })
        }),
        ..plugin("NodeName", &[Filter])
    },
    Registration {
        default_weight: Some(3),
        factory: Some(|_, features, _| {
            let p = Arc::new(TaintToleration::new(features));
            Ok(BuiltPlugin {
                filter: Some(p.clone()),
                pre_score: Some(p.clone()),
                score: Some(p),
                ..BuiltPlugin::default()
            })
        }),
        ..plugin("TaintToleration", &[Filter, PreScore, Score])
    },
    Registration {
        default_weight: Some(2),
        args_kind: Some("NodeAffinityArgs"),
        check_args: Some(check::<NodeAffinityArgs>),
        factory: Some(|raw, _, symbols| {
            let a: NodeAffinityArgs = args(raw)?;
            Ok(BuiltPlugin::all_but_queue(Arc::new(NodeAffinity::new(
                &a, symbols,
            )?)))
        }),
        ..plugin("NodeAffinity", &[PreFilter, Filter, PreScore, Score])
    },
    Registration {
        factory: Some(|_, _, _| {
            let p = Arc::new(NodePorts);
            Ok(BuiltPlugin {
                pre_filter: Some(p.clone()),
                filter: Some(p),
                ..BuiltPlugin::default()
            })
        }),
        ..plugin("NodePorts", &[PreFilter, Filter])
    },
    Registration {
        default_weight: Some(1),
        args_kind: Some("NodeResourcesFitArgs"),
        check_args: Some(check::<NodeResourcesFitArgs>),
        factory: Some(|raw, features, _| {
            let a: NodeResourcesFitArgs = args(raw)?;
            let p = Fit::new(&a)
                .map_err(|e| FieldProblem::new("", e.to_string()))?
                .for_release(features.kubernetes_version());
            Ok(BuiltPlugin::all_but_queue(Arc::new(p)))
        }),
        ..plugin("NodeResourcesFit", &[PreFilter, Filter, PreScore, Score])
    },
    Registration {
        factory: Some(|_, _, _| Ok(BuiltPlugin::filtering(Arc::new(VolumeRestrictions)))),
        ..plugin("VolumeRestrictions", &[PreFilter, Filter])
    },
    in_tree_volume_limits("EBSLimits", true),
    in_tree_volume_limits("GCEPDLimits", true),
    Registration {
        factory: Some(|_, _, _| Ok(BuiltPlugin::filtering(Arc::new(NodeVolumeLimits)))),
        ..plugin("NodeVolumeLimits", &[PreFilter, Filter])
    },
    in_tree_volume_limits("AzureDiskLimits", true),
    // Reserve and PreBind are the scheduler's claim binding after assume
    // (`volumebinding::bind_pod_volumes`).
    Registration {
        factory: Some(|_, features, _| {
            Ok(BuiltPlugin::all_but_queue(Arc::new(
                VolumeBinding::for_release(features.kubernetes_version()),
            )))
        }),
        ..plugin(
            "VolumeBinding",
            &[PreFilter, Filter, Reserve, PreBind, PreScore, Score],
        )
    },
    Registration {
        factory: Some(|_, _, _| Ok(BuiltPlugin::filtering(Arc::new(VolumeZone)))),
        ..plugin("VolumeZone", &[PreFilter, Filter])
    },
    Registration {
        default_weight: Some(2),
        args_kind: Some("PodTopologySpreadArgs"),
        check_args: Some(check::<PodTopologySpreadArgs>),
        factory: Some(|raw, features, symbols| {
            let a: PodTopologySpreadArgs = args(raw)?;
            let p = PodTopologySpread::new(&a, features, symbols)
                .map_err(|e| FieldProblem::new("", e.to_string()))?;
            Ok(BuiltPlugin::all_but_queue(Arc::new(p)))
        }),
        ..plugin("PodTopologySpread", &[PreFilter, Filter, PreScore, Score])
    },
    Registration {
        default_weight: Some(2),
        args_kind: Some("InterPodAffinityArgs"),
        check_args: Some(check::<InterPodAffinityArgs>),
        factory: Some(|raw, _, _| {
            let a: InterPodAffinityArgs = args(raw)?;
            let p = InterPodAffinity::new(&a).map_err(|e| FieldProblem::new("", e.to_string()))?;
            Ok(BuiltPlugin::all_but_queue(Arc::new(p)))
        }),
        ..plugin("InterPodAffinity", &[PreFilter, Filter, PreScore, Score])
    },
    // Registered from 1.26; the default profile adds it when DynamicResourceAllocation
    // is on, by default from 1.34 (GA).
    Registration {
        since: 26,
        default_gate: Some(Feature::DynamicResourceAllocation),
        ..plugin(
            "DynamicResources",
            &[PreEnqueue, PreFilter, Filter, PostFilter, Reserve, PreBind],
        )
    },
    // Preemption runs in the scheduler (its args are read there); no framework plugin.
    Registration {
        args_kind: Some("DefaultPreemptionArgs"),
        check_args: Some(check::<DefaultPreemptionArgs>),
        ..plugin("DefaultPreemption", &[PostFilter])
    },
    Registration {
        default_weight: Some(1),
        args_kind: Some("NodeResourcesBalancedAllocationArgs"),
        check_args: Some(check::<NodeResourcesBalancedAllocationArgs>),
        factory: Some(|raw, features, _| {
            let a: NodeResourcesBalancedAllocationArgs = args(raw)?;
            let p = Arc::new(
                BalancedAllocation::new(&a)
                    .map_err(|e| FieldProblem::new("", e.to_string()))?
                    .for_release(features.kubernetes_version()),
            );
            Ok(BuiltPlugin {
                pre_score: Some(p.clone()),
                score: Some(p),
                ..BuiltPlugin::default()
            })
        }),
        ..plugin("NodeResourcesBalancedAllocation", &[PreScore, Score])
    },
    Registration {
        default_weight: Some(1),
        factory: Some(|_, features, _| {
            Ok(BuiltPlugin {
                score: Some(Arc::new(ImageLocality::for_release(
                    features.kubernetes_version(),
                ))),
                ..BuiltPlugin::default()
            })
        }),
        ..plugin("ImageLocality", &[Score])
    },
    plugin("DefaultBinder", &[Bind]),
    // Never in the v1 default profile (OpenStack Cinder volumes).
    in_tree_volume_limits("CinderLimits", false),
    // KEP-5328, registered from 1.35 and a no-op until the NodeDeclaredFeatures gate is
    // on; accepted in a configuration, left out of the default profile here.
    Registration {
        since: 35,
        default_in: None,
        ..plugin("NodeDeclaredFeatures", &[PreFilter, Filter])
    },
];

impl Registry {
    /// kube-scheduler's in-tree registry (`plugins.NewInTreeRegistry`): every plugin of
    /// 1.25 to 1.38, each with the releases that register it and enable it by default.
    pub fn in_tree() -> Self {
        Self::from_static(REGISTRY)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Symbols;
    use crate::features::Features;
    use crate::version::KubernetesVersion;

    #[test]
    fn every_default_is_registered_and_built_plugins_match_their_points() -> Result<(), String> {
        let registry = Registry::in_tree();
        for r in registry.iter() {
            let (name, pts) = (r.name, r.points);
            let mut symbols = Symbols::default();
            let b = registry
                .build(name, None, Features::default(), &mut symbols)
                .map_err(|e| format!("{name}: {e:?}"))?;
            if registry.is_inert(name) {
                continue;
            }
            assert_eq!(b.pre_enqueue.is_some(), pts.contains(&PreEnqueue), "{name}");
            assert_eq!(b.queue_sort.is_some(), pts.contains(&QueueSort), "{name}");
            assert_eq!(b.pre_filter.is_some(), pts.contains(&PreFilter), "{name}");
            assert_eq!(b.filter.is_some(), pts.contains(&Filter), "{name}");
            assert_eq!(b.pre_score.is_some(), pts.contains(&PreScore), "{name}");
            assert_eq!(b.score.is_some(), pts.contains(&Score), "{name}");
        }
        Ok(())
    }

    fn release(minor: u32) -> KubernetesVersion {
        KubernetesVersion { minor }
    }

    fn default_names(minor: u32) -> Vec<&'static str> {
        Registry::in_tree()
            .defaults_in(Features::for_release(release(minor)))
            .map(|r| r.name)
            .collect()
    }

    #[test]
    fn each_release_registers_and_defaults_its_own_plugins() {
        let registry = Registry::in_tree();
        let points_in = |name: &str, release| registry.points_in(name, release);
        let lookup = |name: &str| registry.get(name);
        let limits = ["EBSLimits", "GCEPDLimits", "AzureDiskLimits"];
        for minor in 25..=30 {
            let d = default_names(minor);
            assert!(limits.iter().all(|l| d.contains(l)), "1.{minor}: {d:?}");
            assert!(points_in("CinderLimits", release(minor)).is_some());
            assert!(!d.contains(&"CinderLimits"));
        }
        // 1.31: deprecated, out of the defaults, still accepted (PR 124500).
        let d = default_names(31);
        assert!(limits.iter().all(|l| !d.contains(l)), "{d:?}");
        assert!(points_in("EBSLimits", release(31)).is_some());
        // 1.32: removed (PR 124003).
        for name in limits.iter().chain(&["CinderLimits"]) {
            assert!(points_in(name, release(32)).is_none(), "{name}");
            assert_eq!(
                lookup(name).and_then(|r| r.absence_in(release(38))),
                Some("it was removed in 1.32".to_string())
            );
        }
        assert_eq!(
            default_names(25)[..4],
            [
                "PrioritySort",
                "NodeUnschedulable",
                "NodeName",
                "TaintToleration"
            ]
        );
        assert!(points_in("SchedulingGates", release(25)).is_none());
        assert!(!default_names(26).contains(&"SchedulingGates"));
        assert!(default_names(27).contains(&"SchedulingGates"));
        assert!(!default_names(33).contains(&"DynamicResources"));
        assert!(default_names(34).contains(&"DynamicResources"));
        // The gate decides, as `--feature-gates` sets it.
        let alpha =
            Features::for_release(release(30)).with(Feature::DynamicResourceAllocation, true);
        assert!(
            registry
                .defaults_in(alpha)
                .any(|r| r.name == "DynamicResources")
        );
        assert!(points_in("NodeDeclaredFeatures", release(34)).is_none());
        assert_eq!(
            lookup("NodeDeclaredFeatures").and_then(|r| r.absence_in(release(34))),
            Some("it is registered from 1.35".to_string())
        );
        assert!(points_in("NodeDeclaredFeatures", release(35)).is_some());
        // The newest default profile is what it was before releases were told apart.
        assert_eq!(
            default_names(38),
            [
                "SchedulingGates",
                "PrioritySort",
                "NodeUnschedulable",
                "NodeName",
                "TaintToleration",
                "NodeAffinity",
                "NodePorts",
                "NodeResourcesFit",
                "VolumeRestrictions",
                "NodeVolumeLimits",
                "VolumeBinding",
                "VolumeZone",
                "PodTopologySpread",
                "InterPodAffinity",
                "DynamicResources",
                "DefaultPreemption",
                "NodeResourcesBalancedAllocation",
                "ImageLocality",
                "DefaultBinder",
            ]
        );
    }
}
