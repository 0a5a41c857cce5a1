//! kube-scheduler's start-up checks of a decoded `KubeSchedulerConfiguration`
//! (`ValidateKubeSchedulerConfiguration`, the component-base leader election and client
//! connection checks, and the plugin args checks of `validation_pluginargs.go` for the
//! plugins whose args the profiles do not check themselves when built).

use super::args::validate_pod_topology_spread_args;
use super::field::{ErrorType, FieldError, FieldPath};
use crate::config::{
    DefaultPreemptionArgs, PluginRef, PluginSet, PodTopologySpreadArgs, ProfileConfig,
    SchedulerConfig, decode_strict, parse_duration,
};
use serde_json::Value;
use std::collections::HashMap;

/// Every start-up error of `config` (empty: kube-scheduler would start). Every profile
/// is checked; values are checked after v1 defaulting.
pub fn validate_kube_scheduler_configuration(config: &SchedulerConfig) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let client = config.client_connection();
    if let Some(burst) = client.burst
        && burst < 0
    {
        errs.push(FieldError::invalid(
            &FieldPath::new("clientConnection").child("burst"),
            burst,
            "must be non-negative",
        ));
    }
    validate_leader_election(config, &mut errs);
    if config.parallelism() <= 0 {
        errs.push(FieldError::invalid(
            &FieldPath::new("parallelism"),
            config.parallelism(),
            "should be an integer value greater than zero",
        ));
    }
    let profiles = config.profiles();
    let profiles_path = FieldPath::new("profiles");
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, profile) in profiles.iter().enumerate() {
        let path = profiles_path.index(i);
        validate_profile(&path, profile, &mut errs);
        let name = profile.scheduler_name();
        if let Some(first) = seen.get(name) {
            errs.push(FieldError {
                field: path.child("schedulerName").to_string(),
                kind: ErrorType::Duplicate,
                bad_value: Some(
                    profiles_path
                        .index(*first)
                        .child("schedulerName")
                        .to_string(),
                ),
                detail: String::new(),
                origin: None,
            });
        } else {
            seen.insert(name, i);
        }
    }
    validate_common_queue_sort(&profiles_path, &profiles, &mut errs);
    percentage(
        &FieldPath::new("percentageOfNodesToScore"),
        config.percentage_of_nodes_to_score,
        &mut errs,
    );
    if config.pod_initial_backoff_seconds() <= 0 {
        errs.push(FieldError::invalid(
            &FieldPath::new("podInitialBackoffSeconds"),
            config.pod_initial_backoff_seconds(),
            "must be greater than 0",
        ));
    }
    if config.pod_max_backoff_seconds() < config.pod_initial_backoff_seconds() {
        errs.push(FieldError::invalid(
            &FieldPath::new("podMaxBackoffSeconds"),
            config.pod_max_backoff_seconds(),
            "must be greater than or equal to PodInitialBackoffSeconds",
        ));
    }
    errs
}

/// `DefaultPreemptionArgs` (`ValidateDefaultPreemptionArgs`).
pub fn validate_default_preemption_args(
    args: &DefaultPreemptionArgs,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let pct_path = path.child("minCandidateNodesPercentage");
    let abs_path = path.child("minCandidateNodesAbsolute");
    let pct = args.min_candidate_nodes_percentage;
    let abs = args.min_candidate_nodes_absolute;
    if !(0..=100).contains(&pct) {
        errs.push(FieldError::invalid(
            &pct_path,
            pct,
            "not in valid range [0, 100]",
        ));
    }
    if abs < 0 {
        errs.push(FieldError::invalid(
            &abs_path,
            abs,
            "not in valid range [0, inf)",
        ));
    }
    if pct == 0 && abs == 0 {
        errs.push(FieldError::invalid(
            &pct_path,
            pct,
            "cannot be zero at the same time as minCandidateNodesAbsolute",
        ));
        errs.push(FieldError::invalid(
            &abs_path,
            abs,
            "cannot be zero at the same time as minCandidateNodesPercentage",
        ));
    }
    errs
}

fn percentage(path: &FieldPath, value: Option<i32>, errs: &mut Vec<FieldError>) {
    if let Some(p) = value
        && !(0..=100).contains(&p)
    {
        errs.push(FieldError::invalid(path, p, "not in valid range [0-100]"));
    }
}

fn validate_leader_election(config: &SchedulerConfig, errs: &mut Vec<FieldError>) {
    let le = config.leader_election();
    if !le.leader_elect() {
        return;
    }
    let path = FieldPath::new("leaderElection");
    let mut duration = |field: &str, text: &str| -> Option<i128> {
        let d = parse_duration(text);
        match d {
            None => errs.push(FieldError::invalid(
                &path.child(field),
                text,
                "not a duration (e.g. \"15s\")",
            )),
            Some(n) if n <= 0 => errs.push(FieldError {
                field: path.child(field).to_string(),
                kind: ErrorType::Invalid,
                bad_value: Some(text.to_string()),
                detail: "must be greater than zero".into(),
                origin: None,
            }),
            Some(_) => {}
        }
        d
    };
    let lease = duration("leaseDuration", le.lease_duration());
    let renew = duration("renewDeadline", le.renew_deadline());
    duration("retryPeriod", le.retry_period());
    if let (Some(lease), Some(renew)) = (lease, renew)
        && lease <= renew
    {
        errs.push(FieldError {
            field: path.child("leaseDuration").to_string(),
            kind: ErrorType::Invalid,
            bad_value: Some(le.renew_deadline().to_string()),
            detail: "LeaseDuration must be greater than RenewDeadline".into(),
            origin: None,
        });
    }
    for (field, value) in [
        ("resourceLock", le.resource_lock()),
        ("resourceNamespace", le.resource_namespace()),
        ("resourceName", le.resource_name()),
    ] {
        if value.is_empty() {
            errs.push(FieldError::invalid(
                &path.child(field),
                value,
                format!("{field} is required"),
            ));
        }
    }
    if le.resource_lock() != "leases" {
        errs.push(FieldError::invalid(
            &path.child("resourceLock"),
            le.resource_lock(),
            "resourceLock value must be \"leases\"",
        ));
    }
}

fn validate_profile(path: &FieldPath, profile: &ProfileConfig, errs: &mut Vec<FieldError>) {
    if profile.scheduler_name().is_empty() {
        errs.push(FieldError::required(&path.child("schedulerName"), ""));
    }
    percentage(
        &path.child("percentageOfNodesToScore"),
        profile.percentage_of_nodes_to_score,
        errs,
    );
    let mut seen: Vec<&str> = Vec::new();
    for (i, pc) in profile.plugin_config.iter().enumerate() {
        let pc_path = path.child("pluginConfig").index(i);
        if seen.contains(&pc.name.as_str()) {
            errs.push(FieldError::duplicate(&pc_path, pc.name.as_str()));
        } else {
            seen.push(&pc.name);
        }
        let args_path = pc_path.child("args");
        let args = pc.args.as_ref().filter(|a| !a.is_null());
        match pc.name.as_str() {
            "PodTopologySpread" => {
                if let Some(a) = decoded::<PodTopologySpreadArgs>(args, &args_path, errs) {
                    errs.extend(validate_pod_topology_spread_args(&a, &args_path));
                }
            }
            "DefaultPreemption" => {
                if let Some(a) = decoded::<DefaultPreemptionArgs>(args, &args_path, errs) {
                    errs.extend(validate_default_preemption_args(&a, &args_path));
                }
            }
            _ => {}
        }
    }
}

/// The typed args (defaults when none are written); a decoding error (normally caught
/// earlier by strict decoding) becomes an Invalid error on the args.
fn decoded<T: serde::de::DeserializeOwned + Default>(
    args: Option<&Value>,
    path: &FieldPath,
    errs: &mut Vec<FieldError>,
) -> Option<T> {
    let Some(args) = args else {
        return Some(T::default());
    };
    match decode_strict(args, path.as_str()) {
        Ok(a) => Some(a),
        Err(e) => {
            errs.push(FieldError {
                field: e.field,
                kind: ErrorType::Invalid,
                bad_value: None,
                detail: e.message,
                origin: None,
            });
            None
        }
    }
}

/// A plugin set with unset weights as 0, in the internal form upstream compares.
fn normalized(set: &PluginSet) -> PluginSet {
    let norm = |v: &[PluginRef]| -> Vec<PluginRef> {
        v.iter()
            .map(|p| PluginRef {
                name: p.name.clone(),
                weight: Some(p.weight.unwrap_or(0)),
            })
            .collect()
    };
    PluginSet {
        enabled: norm(&set.enabled),
        disabled: norm(&set.disabled),
    }
}

/// The plugin set as Go prints a `config.PluginSet` with `%#v`.
fn go_plugin_set(set: &PluginSet) -> String {
    let list = |v: &[PluginRef]| -> String {
        if v.is_empty() {
            return "[]config.Plugin(nil)".into();
        }
        let items: Vec<String> = v
            .iter()
            .map(|p| {
                format!(
                    "config.Plugin{{Name:{}, Weight:{}}}",
                    super::field::go_quote(&p.name),
                    p.weight.unwrap_or(0)
                )
            })
            .collect();
        format!("[]config.Plugin{{{}}}", items.join(", "))
    };
    format!(
        "config.PluginSet{{Enabled:{}, Disabled:{}}}",
        list(&set.enabled),
        list(&set.disabled)
    )
}

fn queue_sort(profile: &ProfileConfig) -> PluginSet {
    profile
        .plugins
        .as_ref()
        .map(|p| normalized(&p.queue_sort))
        .unwrap_or_default()
}

/// `validateCommonQueueSort`: every profile has the first profile's queueSort plugins
/// and the same args for its queue sort plugin.
fn validate_common_queue_sort(
    path: &FieldPath,
    profiles: &[ProfileConfig],
    errs: &mut Vec<FieldError>,
) {
    let Some(first) = profiles.first() else {
        return;
    };
    let canon = queue_sort(first);
    if canon.enabled.len() > 1 {
        errs.push(FieldError::invalid(
            &path
                .index(0)
                .child("plugins")
                .child("queueSort")
                .child("Enabled"),
            canon.enabled.len() as i64,
            "only one queue sort plugin can be enabled",
        ));
    }
    let name = canon.enabled.first().map(|p| p.name.clone());
    let args_of = |profile: &ProfileConfig| -> Option<Option<Value>> {
        let name = name.as_ref()?;
        profile
            .plugin_config
            .iter()
            .find(|pc| &pc.name == name)
            .map(|pc| pc.args.clone().filter(|a| !a.is_null()))
    };
    let canon_args = args_of(first).flatten();
    for (i, profile) in profiles.iter().enumerate().skip(1) {
        let curr = queue_sort(profile);
        if curr != canon {
            errs.push(FieldError {
                field: path
                    .index(i)
                    .child("plugins")
                    .child("queueSort")
                    .to_string(),
                kind: ErrorType::Invalid,
                bad_value: Some(go_plugin_set(&curr)),
                detail: "must be the same for all profiles".into(),
                origin: None,
            });
        }
        if let Some(args) = args_of(profile)
            && args != canon_args
        {
            errs.push(FieldError {
                field: path
                    .index(i)
                    .child("pluginConfig")
                    .child("args")
                    .to_string(),
                kind: ErrorType::Invalid,
                bad_value: Some(args.map_or_else(|| "null".to_string(), |a| a.to_string())),
                detail: "queueSort must be the same for all profiles".into(),
                origin: None,
            });
        }
    }
}
