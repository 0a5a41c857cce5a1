//! A `KubeSchedulerConfiguration` as `topospread validate` checks it: through the same
//! path as `--config` ([`validate_scheduler_configuration`]), and the
//! `PodTopologySpreadArgs` it holds ([`pod_topology_spread_args`]).

use serde_json::Value;

use crate::load::{LoadError, typed};
use topospread::config::PodTopologySpreadArgs;
use topospread::plugins::podtopologyspread::NAME;
use topospread::validation::{FieldError, FieldPath};

/// Why the plugin args of a scheduler configuration could not be read at all (as opposed
/// to read and found invalid): kube-scheduler would refuse to start on its decoding error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConfigDecodeError {
    /// The field path inside the configuration (`profiles[0].pluginConfig[1].args.defaultingType`).
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// Every `PodTopologySpreadArgs` of the configuration, with the path of its `args`.
/// Plugin configs of other plugins are ignored; an entry without `args` is skipped
/// (kube-scheduler then uses the defaults, which are valid).
pub fn pod_topology_spread_args(
    config: &Value,
) -> Result<Vec<(FieldPath, PodTopologySpreadArgs)>, ConfigDecodeError> {
    let mut out = Vec::new();
    let profiles = match config.get("profiles") {
        None | Some(Value::Null) => return Ok(out),
        Some(Value::Array(p)) => p,
        Some(_) => return Err(not_a_list(&FieldPath::new("profiles"))),
    };
    for (i, profile) in profiles.iter().enumerate() {
        let profile_path = FieldPath::new("profiles").index(i);
        let entries = match profile.get("pluginConfig") {
            None | Some(Value::Null) => continue,
            Some(Value::Array(e)) => e,
            Some(_) => return Err(not_a_list(&profile_path.child("pluginConfig"))),
        };
        for (j, entry) in entries.iter().enumerate() {
            if entry.get("name").and_then(Value::as_str) != Some(NAME) {
                continue;
            }
            let path = profile_path.child("pluginConfig").index(j).child("args");
            let Some(args) = entry.get("args").filter(|a| !a.is_null()) else {
                continue;
            };
            let args = typed::<PodTopologySpreadArgs>(args, "", path.as_str())
                .map_err(|e| decode_error(&path, e))?;
            out.push((path, args));
        }
    }
    Ok(out)
}

/// Validates a `KubeSchedulerConfiguration` document exactly as `--config` reads it
/// ([`check_configuration`](topospread::framework::check_configuration)) in the release
/// and gates `features` give: `Err` when it cannot be decoded (wrong apiVersion or kind,
/// an unknown field, a type error); otherwise the start-up errors (empty: that
/// kube-scheduler would start with it).
pub fn validate_scheduler_configuration(
    config: &Value,
    features: topospread::Features,
) -> Result<Vec<FieldError>, ConfigDecodeError> {
    match topospread::framework::check_configuration(config, features) {
        Ok(_) => Ok(Vec::new()),
        Err(e) => match e.field_errors() {
            Some(errors) => Ok(errors),
            None => Err(match e {
                topospread::framework::ConfigError::Parse(p) => ConfigDecodeError {
                    field: p.field,
                    message: p.message,
                },
                other => ConfigDecodeError {
                    field: String::new(),
                    message: other.to_string(),
                },
            }),
        },
    }
}

fn not_a_list(path: &FieldPath) -> ConfigDecodeError {
    ConfigDecodeError {
        field: path.to_string(),
        message: "Invalid value: expected a list".to_string(),
    }
}

fn decode_error(args: &FieldPath, e: LoadError) -> ConfigDecodeError {
    let under = |field: &str| {
        if field == "(object)" || field.is_empty() {
            args.to_string()
        } else if field.starts_with('[') {
            format!("{args}{field}")
        } else {
            format!("{args}.{field}")
        }
    };
    match e {
        LoadError::Field { field, message, .. } => ConfigDecodeError {
            field: under(&field),
            message,
        },
        LoadError::UnknownField { field, .. } => ConfigDecodeError {
            field: under(&field),
            message: "unknown field".to_string(),
        },
        other => ConfigDecodeError {
            field: args.to_string(),
            message: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validate_newest(config: &Value) -> Result<Vec<FieldError>, ConfigDecodeError> {
        validate_scheduler_configuration(config, Default::default())
    }
    use serde_json::json;

    fn config(args: Value) -> Value {
        json!({
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {"schedulerName": "a", "pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResources": ["x"]}}]},
                {"schedulerName": "b", "pluginConfig": [
                    {"name": "DefaultPreemption"},
                    {"name": "PodTopologySpread", "args": args}
                ]}
            ]
        })
    }

    #[test]
    fn errors_are_prefixed_with_the_args_path() {
        let errs = validate_newest(&config(json!({
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]
        })))
        .expect("decodes");
        let lines: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "profiles[1].pluginConfig[1].args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"
            ]
        );
    }

    #[test]
    fn valid_and_absent_args() {
        assert_eq!(
            validate_newest(&config(json!({"defaultingType": "System"}))),
            Ok(Vec::new())
        );
        assert_eq!(
            validate_newest(&json!({
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration"
            })),
            Ok(Vec::new())
        );
        assert_eq!(validate_newest(&config(Value::Null)), Ok(Vec::new()));
    }

    #[test]
    fn undecodable_args_name_the_field() {
        let e = validate_newest(&config(json!({"defaultConstraints": [{"maxSkew": "x"}]})))
            .expect_err("type error");
        assert!(
            e.field
                .starts_with("profiles[1].pluginConfig[1].args.defaultConstraints[0].maxSkew"),
            "{e}"
        );
        let e =
            validate_newest(&config(json!({"defaultingTyp": "List"}))).expect_err("unknown field");
        assert_eq!(
            e.to_string(),
            "profiles[1].pluginConfig[1].args.defaultingTyp: unknown field"
        );
        let e = validate_newest(&json!({
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": 3
        }))
        .expect_err("not a list");
        assert_eq!(e.field, "profiles");
        let e = validate_newest(&json!({
            "apiVersion": "kubescheduler.config.k8s.io/v1beta3",
            "kind": "KubeSchedulerConfiguration"
        }))
        .expect_err("old version");
        assert_eq!(e.field, "apiVersion");
    }
}
