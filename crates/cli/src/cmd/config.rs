//! `--config`: a KubeSchedulerConfiguration, checked for plugin names the scheduler
//! knows, with the PodTopologySpread args taken out.

use super::input::read_limited;
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::Path;
use topospread::config::PodTopologySpreadArgs;
use topospread::features::Features;
use topospread::load::{Object, parse_manifests, typed};

/// The in-tree plugins of kube-scheduler's registry (and `*`, which disables all).
const KNOWN_PLUGINS: &[&str] = &[
    "*",
    "PrioritySort",
    "DefaultBinder",
    "DefaultPreemption",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "NodeResourcesBalancedAllocation",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "ImageLocality",
    "SchedulingGates",
    "DynamicResources",
];

/// What the runtime is built from.
#[derive(Clone, Debug, Default)]
pub(crate) struct SchedulerSetup {
    /// Where it came from, for messages.
    pub(crate) origin: String,
    /// The PodTopologySpread args of the (first) profile.
    pub(crate) pts_args: PodTopologySpreadArgs,
    /// Feature gates.
    pub(crate) features: Features,
}

/// The default profile, or the one `path` configures.
pub(crate) fn load(path: Option<&Path>) -> Result<SchedulerSetup> {
    let Some(path) = path else {
        return Ok(SchedulerSetup {
            origin: "default profile".into(),
            ..Default::default()
        });
    };
    let file = path.display().to_string();
    let text = read_limited(path)?;
    let manifests = parse_manifests(&text, &file)?;
    let mut configs = manifests.objects.iter().filter_map(|l| match &l.object {
        Object::SchedulerConfiguration(v) => Some(v),
        _ => None,
    });
    let Some(config) = configs.next() else {
        bail!(
            "{file}: no KubeSchedulerConfiguration (apiVersion kubescheduler.config.k8s.io/v1) in the file"
        );
    };
    let object = "kubeschedulerconfiguration";
    let profiles = config.get("profiles").and_then(Value::as_array);
    for (i, p) in profiles.into_iter().flatten().enumerate() {
        let exts = p.get("plugins").and_then(Value::as_object);
        for (ext, set) in exts.into_iter().flatten() {
            for list in ["enabled", "disabled"] {
                let items = set.get(list).and_then(Value::as_array);
                for (j, plugin) in items.into_iter().flatten().enumerate() {
                    check_name(
                        plugin,
                        &file,
                        object,
                        &format!("profiles[{i}].plugins.{ext}.{list}[{j}].name"),
                    )?;
                }
            }
        }
        let pcs = p.get("pluginConfig").and_then(Value::as_array);
        for (j, pc) in pcs.into_iter().flatten().enumerate() {
            check_name(
                pc,
                &file,
                object,
                &format!("profiles[{i}].pluginConfig[{j}].name"),
            )?;
        }
    }
    let args = profiles
        .and_then(|ps| ps.first())
        .and_then(|p| p.get("pluginConfig"))
        .and_then(Value::as_array)
        .and_then(|pcs| {
            pcs.iter()
                .find(|pc| pc.get("name").and_then(Value::as_str) == Some("PodTopologySpread"))
        })
        .and_then(|pc| pc.get("args"));
    let pts_args = match args {
        Some(a) => typed(a, &file, object).context("PodTopologySpread args")?,
        None => PodTopologySpreadArgs::default(),
    };
    Ok(SchedulerSetup {
        origin: file,
        pts_args,
        features: Features::default(),
    })
}

fn check_name(item: &Value, file: &str, object: &str, field: &str) -> Result<()> {
    let name = item.get("name").and_then(Value::as_str).unwrap_or("");
    if !KNOWN_PLUGINS.contains(&name) {
        bail!("{file}: {object}: {field}: Invalid value: {name:?}: not a kube-scheduler plugin");
    }
    Ok(())
}
