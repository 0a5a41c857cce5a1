//! The plugin registry the framework is built from (upstream's `frameworkruntime.Registry`):
//! plugin names, the extension points each extends, which releases register it and
//! enable it by default, and how to build it from its args. A profile is built against
//! a [`Registry`] handed to it; the in-tree one is [`Registry::in_tree`].

use super::{
    FilterPlugin, PreEnqueuePlugin, PreFilterPlugin, PreScorePlugin, QueueSortPlugin, ScorePlugin,
};
use crate::api::Symbols;
use crate::config::{FieldProblem, ParseError};
use crate::features::{Feature, Features};
use crate::version::KubernetesVersion;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

/// An extension point of the scheduling framework.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Point {
    /// PreEnqueue.
    PreEnqueue,
    /// QueueSort.
    QueueSort,
    /// PreFilter.
    PreFilter,
    /// Filter.
    Filter,
    /// PostFilter.
    PostFilter,
    /// PreScore.
    PreScore,
    /// Score.
    Score,
    /// Reserve.
    Reserve,
    /// Permit.
    Permit,
    /// PreBind.
    PreBind,
    /// Bind.
    Bind,
    /// PostBind.
    PostBind,
}

impl Point {
    /// Every point, in the order a pod meets them.
    pub const ALL: [Point; 12] = [
        Point::PreEnqueue,
        Point::QueueSort,
        Point::PreFilter,
        Point::Filter,
        Point::PostFilter,
        Point::PreScore,
        Point::Score,
        Point::Reserve,
        Point::Permit,
        Point::PreBind,
        Point::Bind,
        Point::PostBind,
    ];

    /// The v1 config field (`preFilter`, `score`...).
    pub fn field(self) -> &'static str {
        match self {
            Point::PreEnqueue => "preEnqueue",
            Point::QueueSort => "queueSort",
            Point::PreFilter => "preFilter",
            Point::Filter => "filter",
            Point::PostFilter => "postFilter",
            Point::PreScore => "preScore",
            Point::Score => "score",
            Point::Reserve => "reserve",
            Point::Permit => "permit",
            Point::PreBind => "preBind",
            Point::Bind => "bind",
            Point::PostBind => "postBind",
        }
    }

    /// The interface name upstream prints (`FilterPlugin`...).
    pub fn interface(self) -> &'static str {
        match self {
            Point::PreEnqueue => "PreEnqueuePlugin",
            Point::QueueSort => "QueueSortPlugin",
            Point::PreFilter => "PreFilterPlugin",
            Point::Filter => "FilterPlugin",
            Point::PostFilter => "PostFilterPlugin",
            Point::PreScore => "PreScorePlugin",
            Point::Score => "ScorePlugin",
            Point::Reserve => "ReservePlugin",
            Point::Permit => "PermitPlugin",
            Point::PreBind => "PreBindPlugin",
            Point::Bind => "BindPlugin",
            Point::PostBind => "PostBindPlugin",
        }
    }
}

/// Builds a plugin from its args (`None` when the profile has no `pluginConfig` entry),
/// the release and gates in force, and the snapshot's string table for its keys. On
/// error: the field inside `args` (empty for the whole object) and the message.
pub type Factory = fn(Option<&Value>, Features, &mut Symbols) -> Result<BuiltPlugin, FieldProblem>;

/// Decodes a plugin's args strictly (an unknown field is refused), at the given path.
pub type ArgsCheck = fn(&Value, &str) -> Result<(), ParseError>;

/// One plugin: everything the framework needs to know about it, in one place.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Registration {
    /// Upstream's name (`PodTopologySpread`).
    pub name: &'static str,
    /// The extension points it extends.
    pub points: &'static [Point],
    /// Its weight in the v1 default profile's `multiPoint.enabled` (`None`: enabled
    /// without a weight, as upstream's `getDefaultPlugins` lists it).
    pub default_weight: Option<i32>,
    /// The kind of its args (`PodTopologySpreadArgs`), when it takes any.
    pub args_kind: Option<&'static str>,
    /// Strict decoding of its args, when it takes any.
    pub check_args: Option<ArgsCheck>,
    /// How to build it; `None` for a plugin accepted in configs but inert here (it acts
    /// only on volumes, resource claims, preemption or binding).
    pub factory: Option<Factory>,
    /// The first minor release whose kube-scheduler registers it (0: every release).
    pub since: u32,
    /// The first minor release whose kube-scheduler no longer registers it.
    pub removed_in: Option<u32>,
    /// The minor releases whose default profile enables it: from the first, until the
    /// second (exclusive); `None`: never by default.
    pub default_in: Option<(u32, Option<u32>)>,
    /// The gate without which the default profile leaves it out (upstream's
    /// `applyFeatureGates` in `default_plugins.go`).
    pub default_gate: Option<Feature>,
}

impl Registration {
    /// A plugin registered in every release, extending `points`, out of the default
    /// profile (a configuration enables it), without args and inert until
    /// [`with_factory`](Self::with_factory) says how to build it.
    pub const fn new(name: &'static str, points: &'static [Point]) -> Self {
        Self {
            name,
            points,
            default_weight: None,
            args_kind: None,
            check_args: None,
            factory: None,
            since: 0,
            removed_in: None,
            default_in: None,
            default_gate: None,
        }
    }

    /// The registration, built by `factory`.
    pub const fn with_factory(self, factory: Factory) -> Self {
        Self {
            factory: Some(factory),
            ..self
        }
    }

    /// The registration, taking args of `kind` decoded strictly by `check`.
    pub const fn with_args(self, kind: &'static str, check: ArgsCheck) -> Self {
        Self {
            args_kind: Some(kind),
            check_args: Some(check),
            ..self
        }
    }

    /// Whether release `1.minor` registers the plugin.
    pub(crate) fn exists_in(&self, release: KubernetesVersion) -> bool {
        release.minor >= self.since && self.removed_in.is_none_or(|r| release.minor < r)
    }

    /// Whether the default profile of the release `features` follow enables the plugin,
    /// with those gates.
    pub(crate) fn is_default_in(&self, features: Features) -> bool {
        let release = features.kubernetes_version();
        self.exists_in(release)
            && self.default_in.is_some_and(|(from, until)| {
                release.minor >= from && until.is_none_or(|u| release.minor < u)
            })
            && self.default_gate.is_none_or(|g| features.enabled(g))
    }

    /// Why a release other than one that registers the plugin is asked for: `it was
    /// removed in 1.32` or `it is registered from 1.35`.
    pub(crate) fn absence_in(&self, release: KubernetesVersion) -> Option<String> {
        match self.removed_in {
            Some(r) if release.minor >= r => Some(format!("it was removed in 1.{r}")),
            _ if release.minor < self.since => {
                Some(format!("it is registered from 1.{}", self.since))
            }
            _ => None,
        }
    }
}

/// A registry that cannot take a change (`Registry.Register`/`Unregister` upstream).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// A second plugin of a name already registered.
    #[error("a plugin named {0:?} already exists")]
    AlreadyRegistered(String),
    /// A name the registry does not hold.
    #[error("no plugin named {0:?} exists")]
    NotRegistered(String),
}

/// The plugins a framework can be built from, by name, in the order the default
/// profile enables them. Cheap to clone while it is the in-tree table unchanged.
#[derive(Clone, Debug)]
pub struct Registry {
    entries: Cow<'static, [Registration]>,
}

impl Registry {
    /// A registry of a fixed table (the in-tree one is [`Registry::in_tree`]).
    pub const fn from_static(entries: &'static [Registration]) -> Self {
        Self {
            entries: Cow::Borrowed(entries),
        }
    }

    /// A registry without any plugin.
    pub const fn empty() -> Self {
        Self::from_static(&[])
    }

    /// Adds a plugin after the others; a name already registered is refused.
    pub fn register(&mut self, registration: Registration) -> Result<(), RegistryError> {
        if self.get(registration.name).is_some() {
            return Err(RegistryError::AlreadyRegistered(
                registration.name.to_string(),
            ));
        }
        self.entries.to_mut().push(registration);
        Ok(())
    }

    /// Removes the plugin `name` and returns it.
    pub fn unregister(&mut self, name: &str) -> Result<Registration, RegistryError> {
        let i = self
            .entries
            .iter()
            .position(|r| r.name == name)
            .ok_or_else(|| RegistryError::NotRegistered(name.to_string()))?;
        Ok(self.entries.to_mut().remove(i))
    }

    /// Adds every plugin of `other` (out-of-tree plugins into the in-tree registry, as
    /// `app.WithPlugin` does); a name both hold is refused and nothing is added.
    pub fn merge(&mut self, other: &Registry) -> Result<(), RegistryError> {
        if let Some(r) = other.iter().find(|r| self.get(r.name).is_some()) {
            return Err(RegistryError::AlreadyRegistered(r.name.to_string()));
        }
        self.entries.to_mut().extend(other.iter().cloned());
        Ok(())
    }

    /// The registration of `name`, or `None` for a name the registry does not know in
    /// any release.
    pub fn get(&self, name: &str) -> Option<&Registration> {
        self.entries.iter().find(|r| r.name == name)
    }

    /// Every registration, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Registration> {
        self.entries.iter()
    }

    /// The points a plugin extends, or `None` for a name the registry does not know.
    pub(crate) fn points(&self, name: &str) -> Option<&'static [Point]> {
        self.get(name).map(|r| r.points)
    }

    /// Whether the plugin `name` extends `point`.
    pub(crate) fn extends(&self, name: &str, point: Point) -> bool {
        self.points(name).is_some_and(|pts| pts.contains(&point))
    }

    /// The points a plugin extends in `release`, or `None` for a name that release's
    /// kube-scheduler does not register.
    pub(crate) fn points_in(
        &self,
        name: &str,
        release: KubernetesVersion,
    ) -> Option<&'static [Point]> {
        self.get(name)
            .filter(|r| r.exists_in(release))
            .map(|r| r.points)
    }

    /// The plugins the default profile enables with `features` (a release and its
    /// gates), in order, with their weights.
    pub(crate) fn defaults_in(&self, features: Features) -> impl Iterator<Item = &Registration> {
        self.entries
            .iter()
            .filter(move |r| r.is_default_in(features))
    }

    /// Whether a known plugin is accepted but does nothing in this engine (volumes,
    /// resource claims, preemption, binding).
    pub fn is_inert(&self, name: &str) -> bool {
        self.get(name).is_some_and(|r| r.factory.is_none())
    }

    /// Decodes `args` of the plugin `name` strictly, naming fields under `path`; a
    /// plugin without typed args (or unknown) takes any.
    pub(crate) fn check_args(
        &self,
        name: &str,
        args: &Value,
        path: &str,
    ) -> Result<(), ParseError> {
        match self.get(name).and_then(|r| r.check_args) {
            Some(check) => check(args, path),
            None => Ok(()),
        }
    }

    /// Builds a plugin from its args (the `pluginConfig` entry, if any). An inert or
    /// unknown plugin builds to nothing.
    pub(crate) fn build(
        &self,
        name: &str,
        raw_args: Option<&Value>,
        features: Features,
        symbols: &mut Symbols,
    ) -> Result<BuiltPlugin, FieldProblem> {
        match self.get(name).and_then(|r| r.factory) {
            Some(factory) => factory(raw_args, features, symbols),
            None => Ok(BuiltPlugin::default()),
        }
    }
}

/// A built plugin, as the extension points see it.
#[derive(Clone, Default)]
pub struct BuiltPlugin {
    /// As PreEnqueue.
    pub pre_enqueue: Option<Arc<dyn PreEnqueuePlugin>>,
    /// As QueueSort.
    pub queue_sort: Option<Arc<dyn QueueSortPlugin>>,
    /// As PreFilter.
    pub pre_filter: Option<Arc<dyn PreFilterPlugin>>,
    /// As Filter.
    pub filter: Option<Arc<dyn FilterPlugin>>,
    /// As PreScore.
    pub pre_score: Option<Arc<dyn PreScorePlugin>>,
    /// As Score.
    pub score: Option<Arc<dyn ScorePlugin>>,
}

impl BuiltPlugin {
    /// A plugin that extends PreFilter and Filter.
    pub fn filtering<P>(p: Arc<P>) -> Self
    where
        P: PreFilterPlugin + FilterPlugin + 'static,
    {
        Self {
            pre_filter: Some(p.clone()),
            filter: Some(p),
            ..Self::default()
        }
    }

    /// A plugin that extends PreFilter, Filter, PreScore and Score.
    pub fn all_but_queue<P>(p: Arc<P>) -> Self
    where
        P: PreFilterPlugin + FilterPlugin + PreScorePlugin + ScorePlugin + 'static,
    {
        Self {
            pre_filter: Some(p.clone()),
            filter: Some(p.clone()),
            pre_score: Some(p.clone()),
            score: Some(p),
            ..Self::default()
        }
    }
}

impl std::fmt::Debug for BuiltPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltPlugin").finish_non_exhaustive()
    }
}
