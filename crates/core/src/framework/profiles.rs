//! Every profile of a configuration, and the one path a `KubeSchedulerConfiguration`
//! takes before anything runs: strict decoding, kube-scheduler's start-up validation,
//! then building every profile. `topospread validate`, `--config` and the scenario
//! cases all go through [`check_configuration`], so what one accepts the others accept.
//! Each takes the plugin [`Registry`] the profiles are built from; the functions
//! without `_with` use the in-tree one.

use super::{ConfigError, Profile, Registry};
use crate::api::Symbols;
use crate::config::{ParseError, SchedulerConfig};
use crate::features::Features;
use crate::validation::validate_kube_scheduler_configuration;
use serde_json::Value;

/// The built profiles of a configuration, in order, looked up by `schedulerName`.
#[derive(Clone, Debug)]
pub struct Profiles {
    list: Vec<Profile>,
}

impl Profiles {
    /// Builds every profile of `config` (the default profile when it lists none) from
    /// the plugins of `registry`. `symbols` interns the plugins' keys.
    pub fn build(
        registry: &Registry,
        config: &SchedulerConfig,
        features: Features,
        symbols: &mut Symbols,
    ) -> Result<Self, ConfigError> {
        let list = config
            .profiles()
            .iter()
            .enumerate()
            .map(|(i, p)| Profile::build(registry, p, i, features, symbols))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { list })
    }

    /// The profile whose `schedulerName` is `name` (a pod's `spec.schedulerName`).
    pub fn get(&self, name: &str) -> Option<&Profile> {
        self.list.iter().find(|p| p.scheduler_name() == name)
    }

    /// The profiles, in configuration order.
    pub fn as_slice(&self) -> &[Profile] {
        &self.list
    }

    /// The profiles, in configuration order, owned.
    pub fn into_vec(self) -> Vec<Profile> {
        self.list
    }
}

/// Checks a decoded configuration as kube-scheduler does at start-up, with the
/// in-tree plugins; see [`check_config_with`].
pub fn check_config(config: &SchedulerConfig, features: Features) -> Result<(), ConfigError> {
    check_config_with(&Registry::in_tree(), config, features)
}

/// Checks a decoded configuration as kube-scheduler does at start-up against the
/// plugins of `registry`: the args of its plugins decoded strictly, its validation
/// (every profile), the fields the engine cannot honour, and building every profile.
pub fn check_config_with(
    registry: &Registry,
    config: &SchedulerConfig,
    features: Features,
) -> Result<(), ConfigError> {
    check_plugin_args(registry, config)?;
    let errors = validate_kube_scheduler_configuration(config);
    if !errors.is_empty() {
        return Err(ConfigError::Invalid { errors });
    }
    if !config.extenders.is_empty() {
        return Err(ConfigError::Unsupported {
            field: "extenders".into(),
            message: "scheduler extenders are not supported".into(),
        });
    }
    Profiles::build(registry, config, features, &mut Symbols::default()).map(drop)
}

/// Decodes the args of every plugin whose args `registry` types, strictly, so that an
/// unknown field in them is refused as a decoding error before anything is validated.
fn check_plugin_args(registry: &Registry, config: &SchedulerConfig) -> Result<(), ParseError> {
    for (i, profile) in config.profiles.iter().enumerate() {
        for (j, pc) in profile.plugin_config.iter().enumerate() {
            if let Some(args) = pc.args.as_ref().filter(|a| !a.is_null()) {
                let path = format!("profiles[{i}].pluginConfig[{j}].args");
                registry.check_args(&pc.name, args, &path)?;
            }
        }
    }
    Ok(())
}

/// Reads a whole `KubeSchedulerConfiguration` document the way kube-scheduler reads its
/// `--config`, with the in-tree plugins; see [`check_configuration_with`].
pub fn check_configuration(
    document: &Value,
    features: Features,
) -> Result<SchedulerConfig, ConfigError> {
    check_configuration_with(&Registry::in_tree(), document, features)
}

/// Reads a whole `KubeSchedulerConfiguration` document the way kube-scheduler reads its
/// `--config`: v1 only, strictly decoded (plugin args included, as `registry` types
/// them), validated, and every profile built from `registry`'s plugins.
pub fn check_configuration_with(
    registry: &Registry,
    document: &Value,
    features: Features,
) -> Result<SchedulerConfig, ConfigError> {
    let config = SchedulerConfig::from_document(document)?;
    check_config_with(registry, &config, features)?;
    Ok(config)
}

#[cfg(test)]
mod tests;
