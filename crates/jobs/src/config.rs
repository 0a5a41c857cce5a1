//! `--config`: a file holding one KubeSchedulerConfiguration, read as kube-scheduler
//! reads it (v1 only, strict decoding, start-up validation of every profile) through the
//! engine's `check_configuration`, the same path `topospread validate` takes. A
//! KubeSchedulerConfiguration among the `-f` files is read the same way.

use crate::context::Context;
use crate::error::{Error, Result, refuse};
use crate::input::{Input, InputPath, read_path};
use std::path::Path;
use topospread::Features;
use topospread::check_configuration;
use topospread::config::API_VERSION;
use topospread::config::SchedulerConfig;
use topospread_k8s::load::parse_yaml_documents;

/// What the runtime is built from.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SchedulerSetup {
    /// Where it came from, for messages (`file: kubeschedulerconfiguration`).
    pub origin: String,
    /// The configuration.
    pub config: SchedulerConfig,
    /// Feature gates.
    pub features: Features,
}

/// The default profile, or the one `path` (`--config`) or a KubeSchedulerConfiguration
/// among the `-f` files configures; both at once is refused.
pub fn load(ctx: &Context, path: Option<&Path>, input: &Input) -> Result<SchedulerSetup> {
    let in_files = input.scheduler_configuration()?;
    let path = match (path, in_files) {
        (Some(path), Some((file, _))) => refuse!(
            "{file}: a KubeSchedulerConfiguration is among the -f files and --config {} is given too; give one of them",
            path.display()
        ),
        (None, Some((file, value))) => return checked(ctx, value, file),
        (None, None) => {
            return Ok(SchedulerSetup {
                origin: "default profile".into(),
                config: SchedulerConfig::default(),
                features: ctx.scheduler_features(),
            });
        }
        (Some(path), None) => path,
    };
    let file = path.display().to_string();
    let text = read_path(
        &InputPath::File(path.to_path_buf()),
        ctx.input().max_input_bytes,
    )?;
    // kube-scheduler reads exactly one KubeSchedulerConfiguration object from --config.
    let documents = parse_yaml_documents(&text, &file)?;
    let value = match documents.as_slice() {
        [one] => one,
        [] => refuse!("{file}: no KubeSchedulerConfiguration ({API_VERSION}) in the file"),
        [_, second, ..] => refuse!(
            "{file}: document 2: a --config file holds exactly one KubeSchedulerConfiguration, found {} documents (second: {})",
            documents.len(),
            describe(second)
        ),
    };
    checked(ctx, value, &file)
}

/// Reads one KubeSchedulerConfiguration document as kube-scheduler does at start-up.
fn checked(ctx: &Context, value: &serde_json::Value, file: &str) -> Result<SchedulerSetup> {
    let origin = format!("{file}: kubeschedulerconfiguration");
    let features = ctx.scheduler_features();
    let config = check_configuration(value, features)
        .map_err(|e| Error::Refused(format!("{origin}: {e}")))?;
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
