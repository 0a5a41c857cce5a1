//! A scheduling profile: the plugins of each extension point, built from a v1
//! `KubeSchedulerProfile` applied on top of the v1 defaults, as kube-scheduler does
//! (`mergePlugins`, then the framework's multi-point expansion and score weights).

use super::{
    BuiltPlugin, ClusterEvent, FilterPlugin, Point, PreEnqueuePlugin, PreFilterPlugin,
    PreScorePlugin, QueueSortPlugin, Registry, ScorePlugin,
};
use crate::api::Symbols;
use crate::config::{
    DEFAULT_SCHEDULER_NAME, DefaultPreemptionArgs, ParseError, PluginRef, PluginSet, Plugins,
    ProfileConfig,
};
use crate::features::Features;
use crate::validation::{ErrorType, FieldError, aggregate_message, go_quote};
use crate::version::KubernetesVersion;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A configuration the scheduler cannot run with; each names the field.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The configuration does not match the v1 shape.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// kube-scheduler's start-up validation failed; every error names its field.
    #[error("{}", aggregate_message(errors).unwrap_or_default())]
    Invalid {
        /// The field errors, in upstream's order.
        errors: Vec<FieldError>,
    },
    /// A plugin name the release's registry does not know.
    #[error(
        "{field}: Invalid value: {name:?}: no plugin with this name is registered in Kubernetes {release}{}",
        absence.as_ref().map(|a| format!(" ({a})")).unwrap_or_default()
    )]
    UnknownPlugin {
        /// Where it is named.
        field: String,
        /// The name.
        name: String,
        /// The release.
        release: KubernetesVersion,
        /// For a plugin of other releases: `it was removed in 1.32`.
        absence: Option<String>,
    },
    /// A plugin enabled at a point it does not extend.
    #[error("{field}: Invalid value: {name:?}: plugin {name:?} does not extend {interface} plugin")]
    NotExtending {
        /// Where it is enabled.
        field: String,
        /// The plugin.
        name: String,
        /// The interface it lacks.
        interface: &'static str,
    },
    /// A plugin enabled twice at one point.
    #[error("{field}: Duplicate value: plugin {name:?} already registered as {interface:?}")]
    DuplicatePlugin {
        /// Where it is enabled.
        field: String,
        /// The plugin.
        name: String,
        /// The point.
        interface: &'static str,
    },
    /// Two `pluginConfig` entries for one plugin.
    #[error("{field}: Duplicate value: repeated config for plugin {name}")]
    RepeatedPluginConfig {
        /// The repeated entry.
        field: String,
        /// The plugin.
        name: String,
    },
    /// A plugin's args are invalid.
    #[error("{field}: {message}")]
    PluginArgs {
        /// The field inside `pluginConfig[i].args`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// `percentageOfNodesToScore` outside 0..=100.
    #[error("{field}: Invalid value: {value}: not in valid range [0-100]")]
    Percentage {
        /// The field.
        field: String,
        /// The value.
        value: i32,
    },
    /// Not exactly one QueueSort plugin.
    #[error(
        "{field}: Invalid value: only one queue sort plugin required for profile with scheduler name {scheduler_name:?}, but got {count}"
    )]
    QueueSort {
        /// The profile.
        field: String,
        /// Its scheduler name.
        scheduler_name: String,
        /// How many there are.
        count: usize,
    },
    /// No Bind plugin.
    #[error(
        "{field}: Invalid value: at least one bind plugin is needed for profile with scheduler name {scheduler_name:?}"
    )]
    NoBind {
        /// The profile.
        field: String,
        /// Its scheduler name.
        scheduler_name: String,
    },
    /// Two profiles share a scheduler name.
    #[error("{field}: Duplicate value: {name:?}")]
    DuplicateProfile {
        /// The second profile's `schedulerName`.
        field: String,
        /// The name.
        name: String,
    },
    /// A field the engine cannot honour.
    #[error("{field}: Forbidden: {message}")]
    Unsupported {
        /// The field.
        field: String,
        /// Why.
        message: String,
    },
}

impl ConfigError {
    /// The error as field errors, as `topospread validate` reports them; `None` for a
    /// configuration that could not be decoded at all ([`ConfigError::Parse`]).
    pub fn field_errors(&self) -> Option<Vec<FieldError>> {
        let one = |field: &str, kind: ErrorType, value: Option<String>, detail: String| {
            vec![FieldError {
                field: field.to_string(),
                kind,
                bad_value: value,
                detail,
                origin: None,
            }]
        };
        Some(match self {
            Self::Parse(_) => return None,
            Self::Invalid { errors } => errors.clone(),
            Self::UnknownPlugin {
                field,
                name,
                release,
                absence,
            } => one(
                field,
                ErrorType::Invalid,
                Some(go_quote(name)),
                format!(
                    "no plugin with this name is registered in Kubernetes {release}{}",
                    absence
                        .as_ref()
                        .map(|a| format!(" ({a})"))
                        .unwrap_or_default()
                ),
            ),
            Self::NotExtending {
                field,
                name,
                interface,
            } => one(
                field,
                ErrorType::Invalid,
                Some(go_quote(name)),
                format!(
                    "plugin {} does not extend {interface} plugin",
                    go_quote(name)
                ),
            ),
            Self::DuplicatePlugin {
                field,
                name,
                interface,
            } => one(
                field,
                ErrorType::Duplicate,
                Some(format!(
                    "plugin {} already registered as {}",
                    go_quote(name),
                    go_quote(interface)
                )),
                String::new(),
            ),
            Self::DuplicateProfile { field, name } => one(
                field,
                ErrorType::Duplicate,
                Some(go_quote(name)),
                String::new(),
            ),
            Self::RepeatedPluginConfig { field, name } => one(
                field,
                ErrorType::Duplicate,
                Some(format!("repeated config for plugin {name}")),
                String::new(),
            ),
            Self::PluginArgs { field, message } => {
                one(field, ErrorType::Invalid, None, message.clone())
            }
            Self::Percentage { field, value } => one(
                field,
                ErrorType::Invalid,
                Some(value.to_string()),
                "not in valid range [0-100]".into(),
            ),
            Self::QueueSort {
                field,
                scheduler_name,
                count,
            } => one(
                field,
                ErrorType::Invalid,
                None,
                format!(
                    "only one queue sort plugin required for profile with scheduler name {}, but got {count}",
                    go_quote(scheduler_name)
                ),
            ),
            Self::NoBind {
                field,
                scheduler_name,
            } => one(
                field,
                ErrorType::Invalid,
                None,
                format!(
                    "at least one bind plugin is needed for profile with scheduler name {}",
                    go_quote(scheduler_name)
                ),
            ),
            Self::Unsupported { field, message } => {
                one(field, ErrorType::Forbidden, None, message.clone())
            }
        })
    }
}

/// The plugins of one profile, per extension point, ready to run.
#[derive(Clone)]
pub struct Profile {
    scheduler_name: String,
    percentage_of_nodes_to_score: Option<i32>,
    default_preemption: DefaultPreemptionArgs,
    enabled: BTreeMap<Point, Vec<(String, i64)>>,
    pub(crate) pre_enqueue: Vec<Arc<dyn PreEnqueuePlugin>>,
    pub(crate) queue_sort: Arc<dyn QueueSortPlugin>,
    pub(crate) pre_filter: Vec<Arc<dyn PreFilterPlugin>>,
    pub(crate) filter: Vec<Arc<dyn FilterPlugin>>,
    pub(crate) pre_score: Vec<Arc<dyn PreScorePlugin>>,
    pub(crate) score: Vec<(Arc<dyn ScorePlugin>, i64)>,
    /// The events each plugin that can reject a pod registered (`EventsToRegister`).
    events: HashMap<&'static str, Vec<ClusterEvent>>,
}

impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profile")
            .field("scheduler_name", &self.scheduler_name)
            .field("enabled", &self.enabled)
            .finish_non_exhaustive()
    }
}

fn set_of(plugins: &Plugins, point: Point) -> &PluginSet {
    match point {
        Point::PreEnqueue => &plugins.pre_enqueue,
        Point::QueueSort => &plugins.queue_sort,
        Point::PreFilter => &plugins.pre_filter,
        Point::Filter => &plugins.filter,
        Point::PostFilter => &plugins.post_filter,
        Point::PreScore => &plugins.pre_score,
        Point::Score => &plugins.score,
        Point::Reserve => &plugins.reserve,
        Point::Permit => &plugins.permit,
        Point::PreBind => &plugins.pre_bind,
        Point::Bind => &plugins.bind,
        Point::PostBind => &plugins.post_bind,
    }
}

/// `mergePluginSet`: custom `disabled` (with `*`) removes defaults; a custom enabled
/// plugin that is also a default replaces it in place; the rest are appended.
fn merge(defaults: &[PluginRef], custom: &PluginSet) -> PluginSet {
    let disabled_all = custom.disabled.iter().any(|p| p.name == "*");
    let mut replaced = vec![false; custom.enabled.len()];
    let mut enabled = Vec::new();
    if !disabled_all {
        for d in defaults {
            if custom.disabled.iter().any(|p| p.name == d.name) {
                continue;
            }
            match custom.enabled.iter().position(|p| p.name == d.name) {
                Some(i) => {
                    replaced[i] = true;
                    enabled.push(custom.enabled[i].clone());
                }
                None => enabled.push(d.clone()),
            }
        }
    }
    enabled.extend(
        custom
            .enabled
            .iter()
            .zip(&replaced)
            .filter(|(_, r)| !**r)
            .map(|(p, _)| p.clone()),
    );
    PluginSet {
        enabled,
        disabled: custom.disabled.clone(),
    }
}

/// `name` is unknown to `release`'s kube-scheduler.
fn unknown_plugin(
    registry: &Registry,
    field: String,
    name: &str,
    release: KubernetesVersion,
) -> ConfigError {
    ConfigError::UnknownPlugin {
        field,
        name: name.to_string(),
        release,
        absence: registry.get(name).and_then(|r| r.absence_in(release)),
    }
}

fn check_names(
    registry: &Registry,
    plugins: &Plugins,
    prefix: &str,
    release: KubernetesVersion,
) -> Result<(), ConfigError> {
    let sets = Point::ALL
        .iter()
        .map(|p| (p.field(), set_of(plugins, *p)))
        .chain([("multiPoint", &plugins.multi_point)]);
    for (field, set) in sets {
        for (list, refs) in [("enabled", &set.enabled), ("disabled", &set.disabled)] {
            for (i, p) in refs.iter().enumerate() {
                let star_ok = list == "disabled" && p.name == "*";
                if !star_ok && registry.points_in(&p.name, release).is_none() {
                    return Err(unknown_plugin(
                        registry,
                        format!("{prefix}.plugins.{field}.{list}[{i}].name"),
                        &p.name,
                        release,
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The plugins of one point after multi-point expansion: explicitly configured
/// overrides first, then multi-point plugins, then the rest of the point's own list.
fn expand(
    registry: &Registry,
    point: Point,
    own: &PluginSet,
    multi: &PluginSet,
    prefix: &str,
) -> Result<Vec<String>, ConfigError> {
    let field = format!("{prefix}.plugins.{}.enabled", point.field());
    let mut own_names: Vec<&str> = Vec::new();
    for (i, p) in own.enabled.iter().enumerate() {
        if !registry.extends(&p.name, point) {
            return Err(ConfigError::NotExtending {
                field: format!("{field}[{i}]"),
                name: p.name.clone(),
                interface: point.interface(),
            });
        }
        if own_names.contains(&p.name.as_str()) {
            return Err(ConfigError::DuplicatePlugin {
                field: format!("{field}[{i}]"),
                name: p.name.clone(),
                interface: point.interface(),
            });
        }
        own_names.push(&p.name);
    }
    if own.disabled.iter().any(|p| p.name == "*") {
        return Ok(own_names.into_iter().map(String::from).collect());
    }
    let mut overrides: Vec<&str> = Vec::new();
    let mut from_multi: Vec<&str> = Vec::new();
    for (i, p) in multi.enabled.iter().enumerate() {
        if !registry.extends(&p.name, point) || own.disabled.iter().any(|d| d.name == p.name) {
            continue;
        }
        if own_names.contains(&p.name.as_str()) {
            overrides.push(&p.name);
            continue;
        }
        if from_multi.contains(&p.name.as_str()) {
            return Err(ConfigError::DuplicatePlugin {
                field: format!("{prefix}.plugins.multiPoint.enabled[{i}]"),
                name: p.name.clone(),
                interface: point.interface(),
            });
        }
        from_multi.push(&p.name);
    }
    let mut out: Vec<String> = Vec::new();
    for n in overrides.into_iter().chain(from_multi).chain(own_names) {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    }
    Ok(out)
}

impl Profile {
    /// Builds profile `index` of a configuration from its v1 form on top of the
    /// defaults, with the plugins of `registry` (upstream's `NewFramework`): a plugin it
    /// does not register is refused as an unknown name.
    pub fn build(
        registry: &Registry,
        config: &ProfileConfig,
        index: usize,
        features: Features,
        symbols: &mut Symbols,
    ) -> Result<Self, ConfigError> {
        let prefix = format!("profiles[{index}]");
        let scheduler_name = config
            .scheduler_name
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| DEFAULT_SCHEDULER_NAME.to_string());
        if let Some(p) = config.percentage_of_nodes_to_score
            && !(0..=100).contains(&p)
        {
            return Err(ConfigError::Percentage {
                field: format!("{prefix}.percentageOfNodesToScore"),
                value: p,
            });
        }
        let custom = config.plugins.clone().unwrap_or_default();
        let release = features.kubernetes_version();
        check_names(registry, &custom, &prefix, release)?;
        let defaults: Vec<PluginRef> = registry
            .defaults_in(features)
            .map(|r| PluginRef {
                name: r.name.to_string(),
                weight: r.default_weight,
            })
            .collect();
        let multi = merge(&defaults, &custom.multi_point);

        let mut args = HashMap::new();
        for (i, pc) in config.plugin_config.iter().enumerate() {
            if registry.points_in(&pc.name, release).is_none() {
                return Err(unknown_plugin(
                    registry,
                    format!("{prefix}.pluginConfig[{i}].name"),
                    &pc.name,
                    release,
                ));
            }
            if args.insert(pc.name.clone(), (i, pc.args.clone())).is_some() {
                return Err(ConfigError::RepeatedPluginConfig {
                    field: format!("{prefix}.pluginConfig[{i}]"),
                    name: pc.name.clone(),
                });
            }
        }

        let mut enabled = BTreeMap::new();
        let mut weights: HashMap<String, i64> = HashMap::new();
        for point in Point::ALL {
            let own = merge(&[], set_of(&custom, point));
            let names = expand(registry, point, &own, &multi, &prefix)?;
            if point == Point::Score {
                for p in own.enabled.iter().chain(&multi.enabled) {
                    if registry.extends(&p.name, Point::Score) {
                        weights.entry(p.name.clone()).or_insert_with(|| {
                            i64::from(p.weight.filter(|w| *w != 0).unwrap_or(1))
                        });
                    }
                }
            }
            enabled.insert(point, names);
        }

        let mut built: HashMap<String, BuiltPlugin> = HashMap::new();
        let needed = enabled
            .values()
            .flatten()
            .cloned()
            .chain(args.keys().cloned());
        for name in needed.collect::<Vec<_>>() {
            if built.contains_key(&name) {
                continue;
            }
            let (i, a) = args.get(&name).cloned().unwrap_or((0, None));
            let b = registry
                .build(&name, a.as_ref(), features, symbols)
                .map_err(|crate::config::FieldProblem { field, message }| {
                    ConfigError::PluginArgs {
                        field: if field.is_empty() {
                            format!("{prefix}.pluginConfig[{i}].args")
                        } else {
                            format!("{prefix}.pluginConfig[{i}].args.{field}")
                        },
                        message,
                    }
                })?;
            built.insert(name, b);
        }

        let default_preemption = match args.get("DefaultPreemption") {
            Some((i, Some(a))) if !a.is_null() => {
                crate::config::decode_strict(a, &format!("{prefix}.pluginConfig[{i}].args"))?
            }
            _ => DefaultPreemptionArgs::default(),
        };
        let list = |point: Point| enabled.get(&point).cloned().unwrap_or_default();
        let get = |name: &str| built.get(name).cloned().unwrap_or_default();
        let queue_sorts: Vec<_> = list(Point::QueueSort)
            .iter()
            .filter_map(|n| get(n).queue_sort)
            .collect();
        let [queue_sort] = queue_sorts.as_slice() else {
            return Err(ConfigError::QueueSort {
                field: prefix,
                scheduler_name,
                count: queue_sorts.len(),
            });
        };
        if list(Point::Bind).is_empty() {
            return Err(ConfigError::NoBind {
                field: prefix,
                scheduler_name,
            });
        }
        let mut profile = Self {
            events: HashMap::new(),
            pre_enqueue: list(Point::PreEnqueue)
                .iter()
                .filter_map(|n| get(n).pre_enqueue)
                .collect(),
            queue_sort: queue_sort.clone(),
            pre_filter: list(Point::PreFilter)
                .iter()
                .filter_map(|n| get(n).pre_filter)
                .collect(),
            filter: list(Point::Filter)
                .iter()
                .filter_map(|n| get(n).filter)
                .collect(),
            pre_score: list(Point::PreScore)
                .iter()
                .filter_map(|n| get(n).pre_score)
                .collect(),
            score: list(Point::Score)
                .iter()
                .filter_map(|n| {
                    let w = weights.get(n).copied().unwrap_or(1);
                    get(n).score.map(|s| (s, w))
                })
                .collect(),
            enabled: enabled
                .into_iter()
                .map(|(p, names)| {
                    let with_w = names
                        .into_iter()
                        .map(|n| {
                            let w = if p == Point::Score {
                                weights.get(&n).copied().unwrap_or(1)
                            } else {
                                0
                            };
                            (n, w)
                        })
                        .collect();
                    (p, with_w)
                })
                .collect(),
            scheduler_name,
            percentage_of_nodes_to_score: config.percentage_of_nodes_to_score,
            default_preemption,
        };
        profile.events = profile.registered_events();
        Ok(profile)
    }

    /// The events registered by every plugin that can reject a pod (PreEnqueue,
    /// PreFilter and Filter plugins), by plugin name.
    fn registered_events(&self) -> HashMap<&'static str, Vec<ClusterEvent>> {
        let plugins = self
            .pre_enqueue
            .iter()
            .map(|p| (p.name(), p.events_to_register()))
            .chain(
                self.pre_filter
                    .iter()
                    .map(|p| (p.name(), p.events_to_register())),
            )
            .chain(
                self.filter
                    .iter()
                    .map(|p| (p.name(), p.events_to_register())),
            );
        plugins.collect()
    }

    /// Whether `event` may make schedulable a pod that `rejected_by` turned down
    /// (`isPodWorthRequeuing` without queueing hints): some rejecting plugin registered
    /// it. A pod no plugin rejected (an error) is retried on any event.
    pub(crate) fn worth_requeuing(
        &self,
        rejected_by: &[&'static str],
        event: &ClusterEvent,
    ) -> bool {
        if rejected_by.is_empty() {
            return true;
        }
        rejected_by.iter().any(|name| {
            self.events
                .get(name)
                .is_none_or(|evs| evs.iter().any(|r| event.matches(r)))
        })
    }

    /// The profile's `schedulerName`.
    pub fn scheduler_name(&self) -> &str {
        &self.scheduler_name
    }

    /// The profile's own `percentageOfNodesToScore`, if set.
    pub fn percentage_of_nodes_to_score(&self) -> Option<i32> {
        self.percentage_of_nodes_to_score
    }

    /// The profile's `DefaultPreemptionArgs` after v1 defaulting (10 percent, 100 nodes
    /// when not configured).
    pub fn default_preemption_args(&self) -> &DefaultPreemptionArgs {
        &self.default_preemption
    }

    /// The plugins enabled at `point`, in run order, with Score weights (0 elsewhere);
    /// plugins inert in this engine are listed as configured.
    pub fn enabled(&self, point: Point) -> &[(String, i64)] {
        self.enabled.get(&point).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests;
