//! One scheduling cycle over a snapshot, as kube-scheduler's `schedule_one.go` runs it:
//! PreFilter, Filter from a rotating start node until enough feasible nodes are found
//! (the adaptive `percentageOfNodesToScore`), PreScore, Score, and a seeded random
//! choice among the nodes with the top score.

mod explain;
mod failure_cache;
mod fit_error;
mod kept_screens;
mod nominator;
mod preemption;
mod schedule_one;

pub use explain::{Explanation, NodeFilterVerdicts, Victim};
pub use preemption::Preemption;
pub use schedule_one::{Attempt, EnqueueError, PodOutcome};

use crate::api::Pod;
use crate::config::SchedulerConfig;
use crate::features::{Feature, Features};
use crate::framework::{
    ConfigError, CycleState, Point, Profile, QueuedPod, Registry, ScoreTable, Status,
};
use crate::queue::{QueueConfig, SchedulingQueue};
use crate::rng::Rng;
use crate::snapshot::PodId;
use crate::snapshot::{NodeId, Snapshot};
use crate::spread::SpreadCounter;
use crate::version::KubernetesVersion;
use fit_error::{Diagnosis, fit_error_message};
use nominator::Nominator;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// A configured backoff in whole seconds, or the default.
fn backoff_seconds(configured: Option<i64>, default: u64) -> Duration {
    Duration::from_secs(
        configured
            .and_then(|s| u64::try_from(s).ok())
            .unwrap_or(default),
    )
}

/// Below this many nodes, every node is evaluated (`minFeasibleNodesToFind`).
pub(crate) const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
/// The adaptive percentage never drops below this (`minFeasibleNodesPercentageToFind`).
pub(crate) const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: i64 = 5;

/// The outcome of one scheduling cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScheduleResult {
    /// The pod fits `node`.
    Scheduled {
        /// The chosen node.
        node: NodeId,
        /// Nodes Filter ran on (feasible plus rejected).
        evaluated_nodes: usize,
        /// Nodes that passed Filter.
        feasible_nodes: usize,
    },
    /// No node fits: upstream's `FitError` message and every node's status.
    Unschedulable {
        /// `0/N nodes are available: ...`.
        message: String,
        /// Each node's status: its Filter rejection, or the PreFilter verdict that
        /// applied to it.
        node_statuses: Vec<(NodeId, Status)>,
    },
    /// A plugin failed (an internal error, not a verdict).
    Error(Status),
}

/// Upstream's `ErrNoNodesAvailable`.
const NO_NODES: &str = "no nodes available to schedule pods";

/// A PostFilter plugin the scheduler runs after a failed Filter, in profile order.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum PostFilter {
    /// DynamicResources: deallocates a claim to make room; for a pod without claims it
    /// rejects with `no new claims to deallocate`.
    DynamicResources,
    /// DefaultPreemption.
    DefaultPreemption,
}

impl PostFilter {
    fn from_name(name: &str) -> Option<Self> {
        match name {
            "DynamicResources" => Some(Self::DynamicResources),
            "DefaultPreemption" => Some(Self::DefaultPreemption),
            _ => None,
        }
    }
}

/// The scheduler: every profile of the configuration, the scheduling queue, the pods
/// nominated by preemption, the rotating start index and the tie-break generator. The
/// snapshot (the scheduler's cache) is the caller's: the simulator and the live
/// scheduler own it and hand it in.
pub struct Scheduler {
    profiles: Vec<Profile>,
    /// Per profile: its PostFilter plugins, in the order they run.
    post_filters: Vec<Vec<PostFilter>>,
    /// The profile of the cycle under way.
    current: usize,
    percentage_of_nodes_to_score: i32,
    next_start_node_index: usize,
    rng: Rng,
    /// Per profile: DefaultPreemptionArgs' candidate limits.
    preemption_limits: Vec<preemption::Limits>,
    nomination: Option<Preemption>,
    nominator: Nominator,
    queue: SchedulingQueue,
    /// Why each pod that is still pending failed its last cycle.
    last_failure: HashMap<PodId, String>,
    /// The pod whose cycles are recorded, and the recordings kept.
    explain: BTreeMap<PodId, explain::Recorded>,
    /// Bindings since the cache last dropped counting groups nobody reads.
    cycles_since_prune: u32,
    /// Failed cycles per class of identical pods, reused while nothing changes.
    failures: failure_cache::FailureCache,
    /// The by-node screening verdicts of the last class of identical pods.
    kept_screens: kept_screens::KeptScreens,
    /// Each profile's PodTopologySpread, for the spread an explained cycle saw.
    spread: SpreadCounter,
    /// The release whose messages the cycles write.
    release: KubernetesVersion,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("profiles", &self.profiles)
            .field("next_start_node_index", &self.next_start_node_index)
            .finish_non_exhaustive()
    }
}

/// What the cycle found, before the result is shaped.
struct Cycle {
    state: CycleState,
    pre_filter: Vec<(&'static str, Status)>,
    feasible: Vec<NodeId>,
    statuses: Vec<(NodeId, Status)>,
    /// A PreEnqueue plugin kept the pod out of the queue: no cycle ran.
    gated: bool,
    /// Nodes a screening Filter rejected whose statuses were not worked out (a node fit).
    screened: usize,
    diagnosis: Diagnosis,
    pre_score: Vec<(&'static str, Status)>,
    scores: ScoreTable,
    result: ScheduleResult,
    preemption: Option<Preemption>,
    /// Preemption found no node to make room on: the pod's nomination is cleared.
    clears_nomination: bool,
}

impl Scheduler {
    /// Builds the scheduler from the profiles of `config` (the default profile when it
    /// has none) with the in-tree plugins. `snapshot` lends its string table to intern
    /// the plugins' keys.
    pub fn new(
        config: &SchedulerConfig,
        features: Features,
        snapshot: &mut Snapshot,
    ) -> Result<Self, ConfigError> {
        Self::with_registry(&Registry::in_tree(), config, features, snapshot)
    }

    /// [`Scheduler::new`] with the plugins of `registry` (upstream's in-tree registry
    /// merged with out-of-tree plugins): every profile is built from it.
    pub fn with_registry(
        registry: &Registry,
        config: &SchedulerConfig,
        features: Features,
        snapshot: &mut Snapshot,
    ) -> Result<Self, ConfigError> {
        if let Some(p) = config.percentage_of_nodes_to_score
            && !(0..=100).contains(&p)
        {
            return Err(ConfigError::Percentage {
                field: "percentageOfNodesToScore".into(),
                value: p,
            });
        }
        if !config.extenders.is_empty() {
            return Err(ConfigError::Unsupported {
                field: "extenders".into(),
                message: "scheduler extenders are not supported".into(),
            });
        }
        // v1 defaulting gives a configuration without profiles the default one.
        let defaults = [crate::config::ProfileConfig::default()];
        let configured = if config.profiles.is_empty() {
            &defaults[..]
        } else {
            &config.profiles[..]
        };
        let mut profiles: Vec<Profile> = Vec::with_capacity(configured.len());
        for (i, p) in configured.iter().enumerate() {
            let profile = Profile::build(registry, p, i, features, snapshot.symbols_mut())?;
            if profiles
                .iter()
                .any(|q| q.scheduler_name() == profile.scheduler_name())
            {
                return Err(ConfigError::DuplicateProfile {
                    field: format!("profiles[{i}].schedulerName"),
                    name: profile.scheduler_name().to_string(),
                });
            }
            profiles.push(profile);
        }
        let post_filters = profiles
            .iter()
            .map(|p| {
                p.enabled(Point::PostFilter)
                    .iter()
                    .filter_map(|(n, _)| PostFilter::from_name(n))
                    .collect()
            })
            .collect();
        let preemption_limits = configured
            .iter()
            .enumerate()
            .map(|(i, p)| preemption::Limits::from_profile(p, i))
            .collect::<Result<_, _>>()?;
        let spread = SpreadCounter::new(config, features, snapshot).map_err(|e| {
            ConfigError::PluginArgs {
                field: crate::plugins::podtopologyspread::NAME.to_string(),
                message: e.to_string(),
            }
        })?;
        let queue = SchedulingQueue::new(QueueConfig {
            initial_backoff: backoff_seconds(config.pod_initial_backoff_seconds, 1),
            max_backoff: backoff_seconds(config.pod_max_backoff_seconds, 10),
            pop_from_backoff: features.enabled(Feature::SchedulerPopFromBackoffQ),
            ..QueueConfig::default()
        });
        Ok(Self {
            profiles,
            post_filters,
            preemption_limits,
            current: 0,
            nomination: None,
            nominator: Nominator::default(),
            queue,
            last_failure: HashMap::new(),
            explain: BTreeMap::new(),
            cycles_since_prune: 0,
            failures: failure_cache::FailureCache::default(),
            kept_screens: kept_screens::KeptScreens::default(),
            spread,
            percentage_of_nodes_to_score: config.percentage_of_nodes_to_score.unwrap_or(0),
            next_start_node_index: 0,
            rng: Rng::new(0),
            release: features.kubernetes_version(),
        })
    }

    /// The spread counter of every profile's PodTopologySpread plugin, for callers that
    /// report a pod's constraints as this scheduler counts them (a rollout's end state).
    pub fn spread_counter(&self) -> &SpreadCounter {
        &self.spread
    }

    /// Reseeds the generator that breaks ties among equally scored nodes.
    pub fn set_seed(&mut self, seed: u64) {
        self.rng = Rng::new(seed);
    }

    /// Turns the failure cache on (the default) or off. On, a pod identical to one whose
    /// cycle failed (same spec, labels, priority, owner...) gets that failure without
    /// running Filter again while the cluster and the nominations are unchanged; off,
    /// every pod runs its whole cycle (the reference the cache is tested against).
    pub fn set_failure_cache(&mut self, on: bool) {
        self.failures.set_enabled(on);
    }

    /// How many cycles the failure cache answered so far.
    pub fn failure_cache_hits(&self) -> u64 {
        self.failures.hits()
    }

    /// The first profile (the one a `default-scheduler` pod gets when the configuration
    /// names no other).
    pub fn profile(&self) -> &Profile {
        &self.profiles[0]
    }

    /// Every profile, in configuration order.
    pub fn profiles(&self) -> &[Profile] {
        &self.profiles
    }

    /// The index of the profile serving `scheduler_name`, if any.
    pub fn profile_index(&self, scheduler_name: &str) -> Option<usize> {
        self.profiles
            .iter()
            .position(|p| p.scheduler_name() == scheduler_name)
    }

    /// Queue order (QueueSort): whether `a` (queued at `arrival_a`) goes before `b`.
    pub fn queue_less(&self, a: &Pod, arrival_a: u64, b: &Pod, arrival_b: u64) -> bool {
        self.profiles[self.current].queue_sort.less(
            QueuedPod {
                pod: a,
                arrival: arrival_a,
            },
            QueuedPod {
                pod: b,
                arrival: arrival_b,
            },
        )
    }

    /// How many feasible nodes to look for among `num_all_nodes`
    /// (`numFeasibleNodesToFind`).
    pub(crate) fn num_feasible_nodes_to_find(&self, num_all_nodes: usize) -> usize {
        if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND {
            return num_all_nodes;
        }
        let mut percentage = i64::from(
            self.profiles[self.current]
                .percentage_of_nodes_to_score()
                .unwrap_or(self.percentage_of_nodes_to_score),
        );
        let all = i64::try_from(num_all_nodes).unwrap_or(i64::MAX);
        if percentage == 0 {
            percentage = (50 - all / 125).max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
        }
        let n = usize::try_from(all * percentage / 100).unwrap_or(0);
        n.max(MIN_FEASIBLE_NODES_TO_FIND)
    }

    /// One cycle for `pod` (not yet bound); does not mutate the snapshot.
    pub fn schedule_one(&mut self, snapshot: &Snapshot, pod: &Pod) -> ScheduleResult {
        let c = self.cycle(snapshot, pod, None, false);
        self.nomination = c.preemption;
        c.result
    }

    /// The preemption the last unschedulable cycle decided on (DefaultPreemption's
    /// PostFilter), if any: the caller evicts the victims and retries the pod with
    /// [`Self::schedule_nominated`].
    pub fn take_preemption(&mut self) -> Option<Preemption> {
        self.nomination.take()
    }

    /// A cycle for a pod nominated to `node` by an earlier preemption: the nominated
    /// node is tried first and taken if it passes Filter (`evaluateNominatedNode`).
    pub fn schedule_nominated(
        &mut self,
        snapshot: &Snapshot,
        pod: &Pod,
        node: NodeId,
    ) -> ScheduleResult {
        let c = self.cycle(snapshot, pod, Some(node), false);
        self.nomination = c.preemption;
        c.result
    }

    /// Same cycle, recording every node's verdict per filter plugin, every score per
    /// plugin (raw, normalized, weighted), PodTopologySpread's domain counts, and the
    /// chosen node or the failure message.
    pub fn explain(&mut self, snapshot: &Snapshot, pod: &Pod) -> Explanation {
        self.explain_cycle(snapshot, pod, None)
    }

    /// [`Self::explain`] for a pod that may be nominated to a node.
    fn explain_cycle(
        &mut self,
        snapshot: &Snapshot,
        pod: &Pod,
        nominated: Option<NodeId>,
    ) -> Explanation {
        self.explained_cycle(snapshot, pod, nominated).0
    }

    /// [`Self::explain_cycle`], and whether the cycle clears the pod's nomination.
    fn explained_cycle(
        &mut self,
        snapshot: &Snapshot,
        pod: &Pod,
        nominated: Option<NodeId>,
    ) -> (Explanation, bool) {
        // Counted before the cycle: the spread the pod's cycle starts from.
        let spread = self.spread.pod_spread(pod, snapshot);
        let c = self.cycle(snapshot, pod, nominated, true);
        let clears = c.clears_nomination;
        let e = Explanation::from_cycle(
            &self.profiles[self.current],
            snapshot,
            pod,
            c,
            spread,
            nominated,
            &self.nominator,
        );
        (e, clears)
    }

    /// A whole cycle; `record` keeps every plugin's scores for an explanation.
    fn cycle(
        &mut self,
        snapshot: &Snapshot,
        pod: &Pod,
        nominated: Option<NodeId>,
        record: bool,
    ) -> Cycle {
        self.current = self.profile_index(&pod.scheduler_name).unwrap_or(0);
        let mut c = self.filter_and_score(snapshot, pod, nominated, record);
        if c.gated || snapshot.nodes().is_empty() {
            return c;
        }
        let ScheduleResult::Unschedulable { message, .. } = &mut c.result else {
            return c;
        };
        // RunPostFilterPlugins: each plugin that rejects adds its reasons, until one
        // succeeds; the reasons are joined with ", " after the FitError message.
        let mut reasons: Vec<String> = Vec::new();
        for post_filter in &self.post_filters[self.current] {
            match post_filter {
                PostFilter::DynamicResources => {
                    // No pod here carries claims the engine allocates, so there is
                    // never one to deallocate.
                    reasons.push("no new claims to deallocate".to_string());
                }
                PostFilter::DefaultPreemption => {
                    let failed = preemption::Failed {
                        state: &c.state,
                        statuses: &c.statuses,
                        absent: c.diagnosis.absent.as_ref(),
                        nominator: &self.nominator,
                        nominated,
                    };
                    match preemption::preempt(
                        &self.profiles[self.current],
                        snapshot,
                        pod,
                        &failed,
                        self.preemption_limits[self.current],
                        &mut self.rng,
                    ) {
                        Ok(p) => {
                            // A success ends PostFilter with its own status only.
                            if self.release.preemption_success_message() {
                                let found = p.placement_message(snapshot);
                                fit_error::append_post_filter(message, &found, self.release);
                            }
                            c.preemption = Some(p);
                            return c;
                        }
                        Err(not) => {
                            reasons.push(not.message);
                            c.clears_nomination = not.clears_nomination;
                        }
                    }
                }
            }
        }
        fit_error::append_post_filter(message, &reasons.join(", "), self.release);
        c
    }

    fn filter_and_score(
        &mut self,
        snapshot: &Snapshot,
        pod: &Pod,
        nominated: Option<NodeId>,
        record: bool,
    ) -> Cycle {
        let mut c = Cycle {
            state: CycleState::new(),
            pre_filter: Vec::new(),
            feasible: Vec::new(),
            statuses: Vec::new(),
            screened: 0,
            gated: false,
            diagnosis: Diagnosis::default(),
            pre_score: Vec::new(),
            scores: ScoreTable::default(),
            result: ScheduleResult::Error(Status::error(NO_NODES)),
            preemption: None,
            clears_nomination: false,
        };
        let gate = self.profiles[self.current].run_pre_enqueue(pod);
        if !gate.is_success() {
            // Upstream never queues the pod; reported here as pending with the reason.
            let message = gate.reasons().join(", ");
            c.gated = true;
            c.diagnosis.pre_filter_msg = Some(message.clone());
            c.result = if gate.is_rejected() {
                ScheduleResult::Unschedulable {
                    message,
                    node_statuses: Vec::new(),
                }
            } else {
                ScheduleResult::Error(gate)
            };
            return c;
        }
        let all = snapshot.nodes().len();
        if all == 0 {
            // ErrNoNodesAvailable: UnschedulableAndUnresolvable, no PostFilter; the pod
            // waits for a node to be added.
            c.result = ScheduleResult::Unschedulable {
                message: NO_NODES.to_string(),
                node_statuses: Vec::new(),
            };
            return c;
        }
        let pre = self.profiles[self.current].run_pre_filter(&mut c.state, pod, snapshot);
        c.pre_filter = pre.verdicts;
        if !pre.status.is_success() {
            if !pre.status.is_rejected() {
                c.result = ScheduleResult::Error(pre.status);
                return c;
            }
            c.diagnosis.pre_filter_msg = Some(pre.status.reasons().join(", "));
            // Every node carries the rejection (what older releases' messages count).
            c.diagnosis.absent = Some(pre.status.clone());
            c.result = ScheduleResult::Unschedulable {
                message: fit_error_message(all, &c.diagnosis, self.release),
                node_statuses: snapshot
                    .nodes()
                    .iter()
                    .map(|n| (n.id, pre.status.clone()))
                    .collect(),
            };
            return c;
        }
        if let Some(n) = nominated.filter(|n| n.index() < all) {
            let s = nominator::filter(
                &self.profiles[self.current],
                &self.nominator,
                &c.state,
                pod,
                snapshot.node(n),
                snapshot,
            );
            if s.is_success() {
                c.feasible.push(n);
                c.result = ScheduleResult::Scheduled {
                    node: n,
                    evaluated_nodes: 1,
                    feasible_nodes: 1,
                };
                return c;
            }
        }
        let nodes: Vec<NodeId> = match &pre.result {
            // A node's id is its index: counted, not read from each node.
            None => (0..all)
                .map(|i| NodeId(u32::try_from(i).unwrap_or(u32::MAX)))
                .collect(),
            Some(r) => {
                let names: Vec<&str> = pre.plugins_with_nodes.iter().copied().collect();
                c.diagnosis.absent =
                    Some(fit_error::outside_pre_filter_result(&names, self.release));
                let mut ids: Vec<NodeId> = r
                    .node_names
                    .iter()
                    .filter_map(|n| snapshot.node_id(n))
                    .collect();
                ids.sort_unstable();
                ids
            }
        };
        if let Err(e) = self.find_feasible(snapshot, pod, &nodes, &mut c, record) {
            c.result = ScheduleResult::Error(e);
            return c;
        }
        c.result = self.choose(snapshot, pod, &mut c, all, record);
        c
    }

    fn find_feasible(
        &mut self,
        snapshot: &Snapshot,
        pod: &Pod,
        nodes: &[NodeId],
        c: &mut Cycle,
        record: bool,
    ) -> Result<(), Status> {
        let n = nodes.len();
        let to_find = self.num_feasible_nodes_to_find(n);
        // The walk starts at the rotating index and wraps around, without a division
        // per node.
        let start = self.next_start_node_index % n.max(1);
        let rotation = nodes[start..].iter().chain(&nodes[..start]).copied();
        let mut result = Ok(());
        if self.profiles[self.current].filter.is_empty() {
            c.feasible = rotation.take(to_find).collect();
        } else {
            let filters = self.profiles[self.current].active_filters(&c.state);
            // Explanations report every node's verdict in order, so they never screen.
            let screened_filters = (!record).then(|| filters.screened(&c.state, pod, snapshot));
            let kept = &mut self.kept_screens;
            let by_node_checks = screened_filters.as_ref().map_or(0, |f| f.by_node.len());
            let keeps =
                by_node_checks > 0 && kept.start(snapshot, self.current, by_node_checks, pod);
            let stamps = snapshot.node_stamps();
            c.feasible.reserve(to_find);
            let mut screened = Vec::new();
            for id in rotation {
                let node = snapshot.node(id);
                let s = if nominator::affects(&self.nominator, snapshot, pod, id) {
                    nominator::filter(
                        &self.profiles[self.current],
                        &self.nominator,
                        &c.state,
                        pod,
                        node,
                        snapshot,
                    )
                } else if let Some(f) = &screened_filters {
                    let by_node = if keeps {
                        kept.rejects(stamps, id, || f.rejects_by_node(node))
                    } else {
                        f.rejects_by_node(node)
                    };
                    if by_node || f.rejects(node) {
                        screened.push(id);
                        continue;
                    }
                    if f.rest.is_empty() {
                        Status::success()
                    } else {
                        f.rest.run(&c.state, pod, node, snapshot)
                    }
                } else {
                    filters.run(&c.state, pod, node, snapshot)
                };
                if s.is_success() {
                    c.feasible.push(id);
                    if c.feasible.len() >= to_find {
                        break;
                    }
                } else if s.is_rejected() {
                    c.statuses.push((id, s));
                } else {
                    result = Err(s);
                    break;
                }
            }
            c.screened = screened.len();
            // Statuses are reported only when no node fits: then the screened-out nodes
            // get theirs from the whole chain, in profile order, as if never screened.
            if result.is_ok() && c.feasible.is_empty() {
                for id in screened {
                    let s = filters.run(&c.state, pod, snapshot.node(id), snapshot);
                    if !s.is_rejected() {
                        result = Err(s);
                        break;
                    }
                    c.statuses.push((id, s));
                }
                c.screened = 0;
            }
        }
        let processed = c.feasible.len() + c.statuses.len() + c.screened;
        let all = snapshot.nodes().len();
        self.next_start_node_index = (self.next_start_node_index + processed) % all;
        result
    }

    fn choose(
        &mut self,
        snapshot: &Snapshot,
        pod: &Pod,
        c: &mut Cycle,
        all: usize,
        record: bool,
    ) -> ScheduleResult {
        let evaluated = c.feasible.len() + c.statuses.len() + c.screened;
        match c.feasible.as_slice() {
            [] => {
                c.diagnosis.explicit = c.statuses.iter().map(|(_, s)| s.clone()).collect();
                let mut by_node: Vec<Option<Status>> = vec![None; all];
                for (id, s) in &c.statuses {
                    if let Some(slot) = by_node.get_mut(id.index()) {
                        *slot = Some(s.clone());
                    }
                }
                let absent = c.diagnosis.absent.clone().unwrap_or_else(|| {
                    Status::code_only(crate::framework::Code::UnschedulableAndUnresolvable)
                });
                let node_statuses = snapshot
                    .nodes()
                    .iter()
                    .zip(by_node)
                    .map(|(n, s)| (n.id, s.unwrap_or_else(|| absent.clone())))
                    .collect();
                ScheduleResult::Unschedulable {
                    message: fit_error_message(all, &c.diagnosis, self.release),
                    node_statuses,
                }
            }
            [only] => ScheduleResult::Scheduled {
                node: *only,
                evaluated_nodes: evaluated,
                feasible_nodes: 1,
            },
            _ => {
                // Taken out while scoring mutates the cycle, then put back for explain.
                let feasible = std::mem::take(&mut c.feasible);
                let result = self.score_and_select(snapshot, pod, c, &feasible, record);
                c.feasible = feasible;
                result.map_or_else(ScheduleResult::Error, |node| ScheduleResult::Scheduled {
                    node,
                    evaluated_nodes: evaluated,
                    feasible_nodes: c.feasible.len(),
                })
            }
        }
    }

    /// PreScore, Score and `selectHost` over two or more feasible nodes. Without Score
    /// plugins every node ties at 0.
    fn score_and_select(
        &mut self,
        snapshot: &Snapshot,
        pod: &Pod,
        c: &mut Cycle,
        feasible: &[NodeId],
        record: bool,
    ) -> Result<NodeId, Status> {
        if self.profiles[self.current].score.is_empty() {
            return Ok(self.select_host(feasible, &vec![0; feasible.len()]));
        }
        let s = self.profiles[self.current].run_pre_score(
            &mut c.state,
            pod,
            feasible,
            snapshot,
            &mut c.pre_score,
        );
        if !s.is_success() {
            return Err(s);
        }
        c.scores =
            self.profiles[self.current].run_score(&c.state, pod, feasible, snapshot, record)?;
        Ok(self.select_host(feasible, &c.scores.totals))
    }

    /// `selectHost`: a uniform choice (reservoir sampling) among the top-scored nodes.
    fn select_host(&mut self, nodes: &[NodeId], totals: &[i64]) -> NodeId {
        let top = totals.iter().copied().max().unwrap_or(0);
        let mut chosen = None;
        let mut count = 0;
        for (&node, &total) in nodes.iter().zip(totals) {
            if total == top {
                count += 1;
                if chosen.is_none() || self.rng.below(count) == 0 {
                    chosen = Some(node);
                }
            }
        }
        chosen.unwrap_or(NodeId(0))
    }
}

#[cfg(test)]
mod queue_tests;
#[cfg(test)]
mod tests;
