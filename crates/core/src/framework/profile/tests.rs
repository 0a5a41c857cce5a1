use super::*;
use crate::config::{PluginConfig, SchedulerConfig};

fn build(config: &ProfileConfig) -> Result<Profile, ConfigError> {
    Profile::build(
        &Registry::in_tree(),
        config,
        0,
        Features::default(),
        &mut Symbols::default(),
    )
}

fn names(p: &Profile, point: Point) -> Vec<(&str, i64)> {
    p.enabled(point)
        .iter()
        .map(|(n, w)| (n.as_str(), *w))
        .collect()
}

#[test]
fn default_profile_has_upstream_points_and_weights() {
    let p = build(&ProfileConfig::default()).unwrap();
    assert_eq!(
        names(&p, Point::Score),
        vec![
            ("TaintToleration", 3),
            ("NodeAffinity", 2),
            ("NodeResourcesFit", 1),
            ("VolumeBinding", 1),
            ("PodTopologySpread", 2),
            ("InterPodAffinity", 2),
            ("NodeResourcesBalancedAllocation", 1),
            ("ImageLocality", 1),
        ]
    );
    assert_eq!(
        names(&p, Point::Filter)
            .into_iter()
            .map(|(n, _)| n)
            .collect::<Vec<_>>(),
        vec![
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
        ]
    );
    assert_eq!(p.filter.len(), 12);
    assert_eq!(p.score.len(), 8);
}

#[test]
fn disabling_star_keeps_only_the_explicit_plugins() {
    let v = serde_json::json!({
        "plugins": {
            "preScore": {"enabled": [{"name": "PodTopologySpread"}], "disabled": [{"name": "*"}]},
            "score": {"enabled": [{"name": "PodTopologySpread", "weight": 1}], "disabled": [{"name": "*"}]}
        }
    });
    let cfg = SchedulerConfig::profile_from_value(&v).unwrap();
    let p = build(&cfg).unwrap();
    assert_eq!(names(&p, Point::Score), vec![("PodTopologySpread", 1)]);
    assert_eq!(names(&p, Point::PreScore), vec![("PodTopologySpread", 0)]);
    assert_eq!(p.filter.len(), 12);
}

#[test]
fn reconfigured_weight_overrides_the_default_in_place() {
    let v = serde_json::json!({
        "plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 5}]}}
    });
    let cfg = SchedulerConfig::profile_from_value(&v).unwrap();
    let p = build(&cfg).unwrap();
    assert_eq!(names(&p, Point::Score)[0], ("ImageLocality", 5));
}

#[test]
fn errors_name_the_field() {
    let v = serde_json::json!({"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}});
    let cfg = SchedulerConfig::profile_from_value(&v).unwrap();
    let err = build(&cfg).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        err.starts_with("profiles[0].plugins.filter.enabled[0].name"),
        "{err}"
    );

    let v = serde_json::json!({"plugins": {"score": {"enabled": [{"name": "NodeName"}]}}});
    let cfg = SchedulerConfig::profile_from_value(&v).unwrap_or_default();
    assert!(matches!(build(&cfg), Err(ConfigError::NotExtending { .. })));

    let mut cfg = ProfileConfig::default();
    cfg.plugin_config.push(PluginConfig {
        name: "PodTopologySpread".into(),
        args: None,
    });
    assert!(matches!(
        build(&cfg),
        Err(ConfigError::RepeatedPluginConfig { .. })
    ));

    let cfg = ProfileConfig {
        plugin_config: vec![PluginConfig {
            name: "PodTopologySpread".into(),
            args: Some(serde_json::json!({"defaultingType": "Sometimes"})),
        }],
        ..ProfileConfig::default()
    };
    let err = build(&cfg).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.starts_with("profiles[0].pluginConfig[0].args"), "{err}");

    let v = serde_json::json!({"plugins": {"filter": {"enabled": [{"name": "NodeName", "wieght": 1}]}}});
    let err = SchedulerConfig::profile_from_value(&v)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.starts_with("plugins.filter.enabled[0]"), "{err}");
}

#[test]
fn a_whole_configuration_parses_and_builds() {
    let v = serde_json::json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": false},
        "percentageOfNodesToScore": 50,
        "profiles": [{
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}]}},
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
                {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 5}}
            ]
        }]
    });
    let cfg = SchedulerConfig::from_value(&v).unwrap();
    assert_eq!(cfg.percentage_of_nodes_to_score, Some(50));
    build(&cfg.profiles[0]).unwrap();
    let bad = serde_json::json!({"profiles": [{"pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Random"}}}]}]});
    let cfg = SchedulerConfig::from_value(&bad).unwrap();
    let err = build(&cfg.profiles[0])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("pluginConfig[0].args") && err.contains("Random"),
        "{err}"
    );
}

/// A profile is built from the registry it is handed: a plugin the registry lacks is
/// refused exactly as a misspelt name is, and the default profile leaves it out.
#[test]
fn a_plugin_the_registry_lacks_is_an_unknown_name() {
    let mut registry = Registry::in_tree();
    registry
        .unregister("ImageLocality")
        .expect("the in-tree registry holds ImageLocality");
    let naming = |name: &str| {
        let v = serde_json::json!({"plugins": {"score": {"enabled": [{"name": name}]}}});
        let cfg = SchedulerConfig::profile_from_value(&v).expect("the profile decodes");
        Profile::build(
            &registry,
            &cfg,
            0,
            Features::default(),
            &mut Symbols::default(),
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
    };
    let missing = naming("ImageLocality");
    let misspelt = naming("ImageLocalty");
    assert_eq!(
        missing,
        format!(
            "profiles[0].plugins.score.enabled[0].name: Invalid value: \"ImageLocality\": no plugin with this name is registered in Kubernetes {}",
            Features::default().kubernetes_version()
        )
    );
    assert_eq!(missing.replace("ImageLocality", "ImageLocalty"), misspelt);
    // The in-tree registry knows it.
    let v = serde_json::json!({"plugins": {"score": {"enabled": [{"name": "ImageLocality"}]}}});
    let cfg = SchedulerConfig::profile_from_value(&v).expect("the profile decodes");
    assert!(build(&cfg).is_ok());

    let p = Profile::build(
        &registry,
        &ProfileConfig::default(),
        0,
        Features::default(),
        &mut Symbols::default(),
    )
    .expect("the default profile builds without ImageLocality");
    assert!(
        names(&p, Point::Score)
            .iter()
            .all(|(n, _)| *n != "ImageLocality")
    );
    assert_eq!(p.score.len(), 7);
}
