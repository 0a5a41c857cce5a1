//! `KubeSchedulerConfiguration` (`kubescheduler.config.k8s.io/v1`), as written.

use super::component::{ClientConnection, LeaderElection};
use super::strict::decode;
use serde::Deserialize;
use serde_json::Value;

/// A plugin named in a plugin set, with its score weight.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginRef {
    /// The plugin name (or `*` in `disabled`).
    pub name: String,
    /// The Score weight; left out or 0 means 1.
    #[serde(default)]
    pub weight: Option<i32>,
}

/// `enabled` / `disabled` plugins of one extension point.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginSet {
    /// Plugins enabled in addition to (or re-configuring) the defaults.
    #[serde(default)]
    pub enabled: Vec<PluginRef>,
    /// Default plugins disabled; `*` disables them all.
    #[serde(default)]
    pub disabled: Vec<PluginRef>,
}

/// `plugins`: a plugin set per extension point, and `multiPoint`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plugins {
    /// PreEnqueue.
    #[serde(default)]
    pub pre_enqueue: PluginSet,
    /// QueueSort.
    #[serde(default)]
    pub queue_sort: PluginSet,
    /// PreFilter.
    #[serde(default)]
    pub pre_filter: PluginSet,
    /// Filter.
    #[serde(default)]
    pub filter: PluginSet,
    /// PostFilter.
    #[serde(default)]
    pub post_filter: PluginSet,
    /// PreScore.
    #[serde(default)]
    pub pre_score: PluginSet,
    /// Score.
    #[serde(default)]
    pub score: PluginSet,
    /// Reserve.
    #[serde(default)]
    pub reserve: PluginSet,
    /// Permit.
    #[serde(default)]
    pub permit: PluginSet,
    /// PreBind.
    #[serde(default)]
    pub pre_bind: PluginSet,
    /// Bind.
    #[serde(default)]
    pub bind: PluginSet,
    /// PostBind.
    #[serde(default)]
    pub post_bind: PluginSet,
    /// Plugins enabled at every point they implement.
    #[serde(default)]
    pub multi_point: PluginSet,
}

/// One `pluginConfig` entry.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginConfig {
    /// The plugin name.
    pub name: String,
    /// Its args object.
    #[serde(default)]
    pub args: Option<Value>,
}

/// One scheduling profile (`KubeSchedulerProfile`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileConfig {
    /// `schedulerName` (default `default-scheduler`).
    #[serde(default)]
    pub scheduler_name: Option<String>,
    /// Overrides the top-level `percentageOfNodesToScore` for this profile.
    #[serde(default)]
    pub percentage_of_nodes_to_score: Option<i32>,
    /// Plugins per extension point, applied on top of the defaults.
    #[serde(default)]
    pub plugins: Option<Plugins>,
    /// Per-plugin args.
    #[serde(default)]
    pub plugin_config: Vec<PluginConfig>,
}

impl Default for ProfileConfig {
    fn default() -> Self {
        Self {
            scheduler_name: Some(DEFAULT_SCHEDULER_NAME.into()),
            percentage_of_nodes_to_score: None,
            plugins: None,
            plugin_config: vec![PluginConfig {
                name: "PodTopologySpread".into(),
                args: Some(serde_json::json!({"defaultingType": "System"})),
            }],
        }
    }
}

/// The default profile's scheduler name.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// A parsed `KubeSchedulerConfiguration`. Fields the engine does not act on (leader
/// election, client connection, extenders...) are accepted as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchedulerConfig {
    /// `apiVersion`.
    #[serde(default)]
    pub api_version: Option<String>,
    /// `kind`.
    #[serde(default)]
    pub kind: Option<String>,
    /// `parallelism`.
    #[serde(default)]
    pub parallelism: Option<i32>,
    /// `leaderElection`.
    #[serde(default)]
    pub leader_election: Option<LeaderElection>,
    /// `clientConnection`.
    #[serde(default)]
    pub client_connection: Option<ClientConnection>,
    /// `healthzBindAddress` (deprecated).
    #[serde(default)]
    pub healthz_bind_address: Option<String>,
    /// `metricsBindAddress` (deprecated).
    #[serde(default)]
    pub metrics_bind_address: Option<String>,
    /// `enableProfiling`.
    #[serde(default)]
    pub enable_profiling: Option<bool>,
    /// `enableContentionProfiling`.
    #[serde(default)]
    pub enable_contention_profiling: Option<bool>,
    /// `percentageOfNodesToScore`: 0 (or left out) = adaptive.
    #[serde(default)]
    pub percentage_of_nodes_to_score: Option<i32>,
    /// `podInitialBackoffSeconds`.
    #[serde(default)]
    pub pod_initial_backoff_seconds: Option<i64>,
    /// `podMaxBackoffSeconds`.
    #[serde(default)]
    pub pod_max_backoff_seconds: Option<i64>,
    /// `profiles`; none = one default profile.
    #[serde(default)]
    pub profiles: Vec<ProfileConfig>,
    /// `extenders` (not supported: must be empty).
    #[serde(default)]
    pub extenders: Vec<Value>,
    /// `delayCacheUntilActive`.
    #[serde(default)]
    pub delay_cache_until_active: Option<bool>,
}

impl Default for SchedulerConfig {
    /// The default profile, PodTopologySpread args `{defaultingType: System}`.
    fn default() -> Self {
        Self::from_profile(ProfileConfig::default())
    }
}

impl SchedulerConfig {
    /// A configuration holding just `profile`.
    pub fn from_profile(profile: ProfileConfig) -> Self {
        Self {
            api_version: None,
            kind: None,
            parallelism: None,
            leader_election: None,
            client_connection: None,
            healthz_bind_address: None,
            metrics_bind_address: None,
            enable_profiling: None,
            enable_contention_profiling: None,
            percentage_of_nodes_to_score: None,
            pod_initial_backoff_seconds: None,
            pod_max_backoff_seconds: None,
            profiles: vec![profile],
            extenders: Vec::new(),
            delay_cache_until_active: None,
        }
    }

    /// Parses a configuration object strictly: unknown fields are errors naming the
    /// field. `apiVersion` and `kind` are not checked; see
    /// [`from_document`](Self::from_document). Plugin args are decoded against the
    /// plugin registry by [`check_config`](crate::framework::check_config).
    pub fn from_value(value: &Value) -> Result<Self, ParseError> {
        decode(value, "")
    }

    /// Parses a whole `KubeSchedulerConfiguration` document as kube-scheduler reads its
    /// `--config`: `apiVersion` must be `kubescheduler.config.k8s.io/v1` and `kind`
    /// `KubeSchedulerConfiguration`; then [`from_value`](Self::from_value).
    pub fn from_document(value: &Value) -> Result<Self, ParseError> {
        if !value.is_object() {
            return Err(ParseError {
                field: "(object)".into(),
                message: "Invalid value: a KubeSchedulerConfiguration must be a mapping".into(),
            });
        }
        let api_version = value.get("apiVersion").and_then(Value::as_str);
        if api_version != Some(API_VERSION) {
            return Err(ParseError {
                field: "apiVersion".into(),
                message: format!(
                    "Unsupported value: {}: only {API_VERSION} is supported",
                    go_string(api_version)
                ),
            });
        }
        let kind = value.get("kind").and_then(Value::as_str);
        if kind != Some(KIND) {
            return Err(ParseError {
                field: "kind".into(),
                message: format!(
                    "Unsupported value: {}: supported values: \"{KIND}\"",
                    go_string(kind)
                ),
            });
        }
        Self::from_value(value)
    }

    /// Parses a lone profile (as scenario cases write `config:`), strictly; its plugin
    /// args are decoded when the configuration holding it is checked.
    pub fn profile_from_value(value: &Value) -> Result<ProfileConfig, ParseError> {
        decode(value, "")
    }

    /// The profiles after v1 defaulting: none written means the default profile.
    pub fn profiles(&self) -> Vec<ProfileConfig> {
        if self.profiles.is_empty() {
            vec![ProfileConfig::default()]
        } else {
            self.profiles.clone()
        }
    }

    /// `parallelism` after v1 defaulting (16).
    pub fn parallelism(&self) -> i32 {
        self.parallelism.unwrap_or(16)
    }

    /// `podInitialBackoffSeconds` after v1 defaulting (1).
    pub(crate) fn pod_initial_backoff_seconds(&self) -> i64 {
        self.pod_initial_backoff_seconds.unwrap_or(1)
    }

    /// `podMaxBackoffSeconds` after v1 defaulting (10).
    pub(crate) fn pod_max_backoff_seconds(&self) -> i64 {
        self.pod_max_backoff_seconds.unwrap_or(10)
    }

    /// `leaderElection` after v1 defaulting.
    pub fn leader_election(&self) -> LeaderElection {
        self.leader_election.clone().unwrap_or_default()
    }

    /// `clientConnection` after v1 defaulting.
    pub fn client_connection(&self) -> ClientConnection {
        self.client_connection.clone().unwrap_or_default()
    }
}

impl ProfileConfig {
    /// `schedulerName` after v1 defaulting: left out means `default-scheduler`; an
    /// empty name stays empty (validation refuses it).
    pub fn scheduler_name(&self) -> &str {
        self.scheduler_name
            .as_deref()
            .unwrap_or(DEFAULT_SCHEDULER_NAME)
    }
}

/// The one `apiVersion` kube-scheduler reads.
pub const API_VERSION: &str = "kubescheduler.config.k8s.io/v1";
/// The configuration's `kind`.
pub const KIND: &str = "KubeSchedulerConfiguration";

fn go_string(s: Option<&str>) -> String {
    crate::validation::go_quote(s.unwrap_or(""))
}

/// A configuration that does not match the v1 shape.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{field}: {message}")]
pub struct ParseError {
    /// The field path (`profiles[0].plugins.filter`).
    pub field: String,
    /// What is wrong.
    pub message: String,
}
