//! Every profile of a configuration, and the one path a `KubeSchedulerConfiguration`
//! takes before anything runs: strict decoding, kube-scheduler's start-up validation,
//! then building every profile. `topospread validate`, `--config` and the scenario
//! cases all go through [`check_configuration`], so what one accepts the others accept.

use super::{ConfigError, Profile};
use crate::api::Symbols;
use crate::config::SchedulerConfig;
use crate::features::Features;
use crate::validation::validate_kube_scheduler_configuration;
use serde_json::Value;

/// The built profiles of a configuration, in order, looked up by `schedulerName`.
#[derive(Clone, Debug)]
pub struct Profiles {
    list: Vec<Profile>,
}

impl Profiles {
    /// Builds every profile of `config` (the default profile when it lists none).
    /// `symbols` interns the plugins' keys.
    pub fn build(
        config: &SchedulerConfig,
        features: Features,
        symbols: &mut Symbols,
    ) -> Result<Self, ConfigError> {
        let list = config
            .profiles()
            .iter()
            .enumerate()
            .map(|(i, p)| Profile::build(p, i, features, symbols))
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

/// Checks a decoded configuration as kube-scheduler does at start-up: its validation
/// (every profile), the fields the engine cannot honour, and building every profile.
pub fn check_config(config: &SchedulerConfig, features: Features) -> Result<(), ConfigError> {
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
    Profiles::build(config, features, &mut Symbols::default()).map(drop)
}

/// Reads a whole `KubeSchedulerConfiguration` document the way kube-scheduler reads its
/// `--config`: v1 only, strictly decoded (plugin args included), validated, and every
/// profile built. The one path for `--config`, `topospread validate` and scenarios.
pub fn check_configuration(
    document: &Value,
    features: Features,
) -> Result<SchedulerConfig, ConfigError> {
    let config = SchedulerConfig::from_document(document)?;
    check_config(&config, features)?;
    Ok(config)
}

#[cfg(test)]
mod tests;
