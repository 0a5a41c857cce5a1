//! `--config`: a KubeSchedulerConfiguration file, parsed into the engine's
//! `SchedulerConfig` (the scheduler checks plugin names and args when it is built).

use super::input::read_limited;
use anyhow::{Result, bail};
use std::path::Path;
use topospread::config::SchedulerConfig;
use topospread::features::Features;
use topospread::load::{Object, parse_manifests};

/// What the runtime is built from.
#[derive(Clone, Debug)]
pub(crate) struct SchedulerSetup {
    /// Where it came from, for messages (`file: kubeschedulerconfiguration`).
    pub(crate) origin: String,
    /// The configuration.
    pub(crate) config: SchedulerConfig,
    /// Feature gates.
    pub(crate) features: Features,
}

/// The default profile, or the one `path` configures.
pub(crate) fn load(path: Option<&Path>) -> Result<SchedulerSetup> {
    let Some(path) = path else {
        return Ok(SchedulerSetup {
            origin: "default profile".into(),
            config: SchedulerConfig::default(),
            features: Features::default(),
        });
    };
    let file = path.display().to_string();
    let text = read_limited(path)?;
    let manifests = parse_manifests(&text, &file)?;
    let mut configs = manifests.objects.iter().filter_map(|l| match &l.object {
        Object::SchedulerConfiguration(v) => Some(v),
        _ => None,
    });
    let Some(value) = configs.next() else {
        bail!(
            "{file}: no KubeSchedulerConfiguration (apiVersion kubescheduler.config.k8s.io/v1) in the file"
        );
    };
    let origin = format!("{file}: kubeschedulerconfiguration");
    let config =
        SchedulerConfig::from_value(value).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
    Ok(SchedulerSetup {
        origin,
        config,
        features: Features::default(),
    })
}
