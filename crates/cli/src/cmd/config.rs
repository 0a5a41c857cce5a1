//! `--config`: a file holding one KubeSchedulerConfiguration, read as kube-scheduler
//! reads it (v1 only, strict decoding, start-up validation of every profile) through the
//! engine's `check_configuration`, the same path `topospread validate` takes.

use super::input::read_limited;
use anyhow::{Result, bail};
use std::path::Path;
use topospread::check_configuration;
use topospread::config::API_VERSION;
use topospread::config::SchedulerConfig;
use topospread::features::Features;
use topospread_k8s::load::parse_yaml_documents;

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
    // kube-scheduler reads exactly one KubeSchedulerConfiguration object from --config.
    let documents = parse_yaml_documents(&text, &file)?;
    let value = match documents.as_slice() {
        [one] => one,
        [] => bail!("{file}: no KubeSchedulerConfiguration ({API_VERSION}) in the file"),
        [_, second, ..] => bail!(
            "{file}: document 2: a --config file holds exactly one KubeSchedulerConfiguration, found {} documents (second: {})",
            documents.len(),
            describe(second)
        ),
    };
    let origin = format!("{file}: kubeschedulerconfiguration");
    let features = Features::default();
    let config =
        check_configuration(value, features).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
    Ok(SchedulerSetup {
        origin,
        config,
        features,
    })
}

/// `kind (apiVersion)` of a document, for messages.
fn describe(value: &serde_json::Value) -> String {
    let field = |name: &str| value.get(name).and_then(|v| v.as_str()).unwrap_or("<none>");
    format!(
        "kind {} (apiVersion {})",
        field("kind"),
        field("apiVersion")
    )
}
