//! The NodeResourcesFit and NodeResourcesBalancedAllocation plugins: thin wrappers that
//! read the node's incrementally kept sums and call this module's arithmetic.

use super::balanced_allocation::{
    balance_change_score, balanced_score, balanced_score_of_two, without_pod,
};
use super::fit::{IgnoredResources, fits, insufficient_resources, is_unresolvable};
use super::least_allocated::{least_allocated_of_two, least_requested_score};
use super::most_allocated::most_requested_score;
use super::requested_to_capacity_ratio::{
    UtilizationShapePoint, requested_to_capacity_ratio_score,
};
use super::resource_allocation::{
    NodeResources, ResourceAmounts, ResourceSpec, cpu_memory_amounts, default_resources,
    is_best_effort, is_cpu_then_memory, pod_request_list, resource_amounts, weighted_mean,
};
use crate::api::Pod;
use crate::config::{NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs, ResourceSpecArg};
use crate::framework::{ActionType as A, ClusterEvent, EventResource as R};
use crate::framework::{
    Code, CycleState, FilterPlugin, NodeScore, NodeScoreCache, Plugin, PreFilterPlugin,
    PreScorePlugin, ScorePlugin, Screening, Status,
};
use crate::snapshot::{NodeId, NodeInfo, Snapshot};
use crate::version::KubernetesVersion;

/// NodeResourcesFit's registry name.
pub const FIT_NAME: &str = "NodeResourcesFit";
/// NodeResourcesBalancedAllocation's registry name.
pub const BALANCED_ALLOCATION_NAME: &str = "NodeResourcesBalancedAllocation";

/// Why a plugin could not be built from its args.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceArgsError {
    /// `scoringStrategy.type` is not a known strategy.
    #[error(
        "scoringStrategy.type: Unsupported value: {0:?}: supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""
    )]
    Strategy(String),
    /// A resource weight is outside 1..=100.
    #[error(
        "resources[{index}].weight: Invalid value: {weight}: resource weight of {name} should be in range [1, 100]"
    )]
    Weight {
        /// Index in the list.
        index: usize,
        /// Resource name.
        name: String,
        /// The weight.
        weight: i64,
    },
}

fn resources(list: Option<&[ResourceSpecArg]>) -> Result<Vec<ResourceSpec>, ResourceArgsError> {
    let Some(list) = list else {
        return Ok(default_resources());
    };
    list.iter()
        .enumerate()
        .map(|(index, r)| {
            let weight = r.weight.unwrap_or(1);
            if !(1..=100).contains(&weight) {
                return Err(ResourceArgsError::Weight {
                    index,
                    name: r.name.clone(),
                    weight,
                });
            }
            Ok(ResourceSpec::new(&r.name, weight))
        })
        .collect()
}

fn node_resources(node: &NodeInfo) -> NodeResources<'_> {
    NodeResources {
        allocatable: &node.node.allocatable,
        requested: node.requested(),
        non_zero_requested: node.non_zero_requested(),
    }
}

#[derive(Clone, Debug)]
enum Strategy {
    LeastAllocated,
    MostAllocated,
    RequestedToCapacityRatio(Vec<UtilizationShapePoint>),
}

/// NodeResourcesFit: Filter on requests against allocatable; Score by the configured
/// strategy (LeastAllocated by default).
#[derive(Clone, Debug)]
pub struct Fit {
    ignored: IgnoredResources,
    strategy: Strategy,
    resources: Vec<ResourceSpec>,
    /// `resources` is cpu then memory (the default): scoring reads them directly.
    cpu_memory: bool,
    /// LeastAllocated over cpu then memory (the default): their weights, for the
    /// score's two-resource path.
    least_cpu_memory: Option<[i64; 2]>,
    /// A request beyond the node's whole allocatable is `UnschedulableAndUnresolvable`
    /// (from 1.34, [`KubernetesVersion::fit_unresolvable_beyond_allocatable`]).
    unresolvable_beyond_allocatable: bool,
    /// Scores kept across cycles, by the pod's requests (a node's score reads only them
    /// and the node).
    kept: NodeScoreCache<Vec<i64>>,
}

impl Fit {
    /// Builds the plugin from its args.
    pub fn new(args: &NodeResourcesFitArgs) -> Result<Self, ResourceArgsError> {
        let s = args.scoring_strategy.clone().unwrap_or_default();
        let strategy = match s.kind.as_deref() {
            None | Some("") | Some("LeastAllocated") => Strategy::LeastAllocated,
            Some("MostAllocated") => Strategy::MostAllocated,
            Some("RequestedToCapacityRatio") => Strategy::RequestedToCapacityRatio(
                s.requested_to_capacity_ratio
                    .iter()
                    .flat_map(|r| &r.shape)
                    .map(|p| UtilizationShapePoint {
                        utilization: p.utilization,
                        score: p.score,
                    })
                    .collect(),
            ),
            Some(other) => return Err(ResourceArgsError::Strategy(other.to_string())),
        };
        let resources = resources(s.resources.as_deref())?;
        let cpu_memory = is_cpu_then_memory(&resources);
        let least_cpu_memory = match (&strategy, resources.as_slice()) {
            (Strategy::LeastAllocated, [cpu, memory]) if cpu_memory => {
                Some([cpu.weight, memory.weight])
            }
            _ => None,
        };
        Ok(Self {
            ignored: IgnoredResources::new(&args.ignored_resources, &args.ignored_resource_groups),
            strategy,
            cpu_memory,
            least_cpu_memory,
            resources,
            unresolvable_beyond_allocatable: true,
            kept: NodeScoreCache::default(),
        })
    }

    /// The plugin as `release` runs it.
    pub(crate) fn for_release(mut self, release: KubernetesVersion) -> Self {
        self.unresolvable_beyond_allocatable = release.fit_unresolvable_beyond_allocatable();
        self
    }
}

impl Plugin for Fit {
    fn name(&self) -> &'static str {
        FIT_NAME
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(R::AssignedPod, A::DELETE | A::UPDATE_POD_SCALE_DOWN),
            ClusterEvent::new(R::UnscheduledPod, A::UPDATE_POD_SCALE_DOWN),
            ClusterEvent::new(
                R::Node,
                A::ADD | A::UPDATE_NODE_ALLOCATABLE | A::UPDATE_NODE_TAINT | A::UPDATE_NODE_LABEL,
            ),
        ]
    }
}

impl PreFilterPlugin for Fit {
    fn pre_filter(&self, _: &mut CycleState, _: &Pod, _: &Snapshot) -> Status {
        // The pod's requests were computed once, when it was converted.
        Status::success()
    }
}

impl FilterPlugin for Fit {
    fn filter(&self, _: &CycleState, pod: &Pod, node: &NodeInfo, _: &Snapshot) -> Status {
        if fits(
            &pod.requests.requested,
            &node.node.allocatable,
            node.requested(),
            node.pods().len(),
            &self.ignored,
        ) {
            return Status::success();
        }
        let short = insufficient_resources(
            &pod.requests.requested,
            &node.node.allocatable,
            node.requested(),
            node.pods().len(),
            &self.ignored,
        );
        let Some(first) = short.first() else {
            return Status::success();
        };
        let code = if self.unresolvable_beyond_allocatable && is_unresolvable(&short) {
            Code::UnschedulableAndUnresolvable
        } else {
            Code::Unschedulable
        };
        short[1..]
            .iter()
            .fold(Status::new(code, first.reason.to_string()), |s, r| {
                s.with_reason(r.reason.to_string())
            })
    }

    /// [`fits`] alone: the reasons are built only for the statuses reported.
    fn screen<'a>(
        &'a self,
        _: &'a CycleState,
        pod: &'a Pod,
        _: &'a Snapshot,
    ) -> Option<Screening<'a>> {
        let request = &pod.requests.requested;
        Some(Screening::RejectsByNode(Box::new(
            move |node: &NodeInfo| {
                !fits(
                    request,
                    &node.node.allocatable,
                    node.requested(),
                    node.pods().len(),
                    &self.ignored,
                )
            },
        )))
    }
}

/// NodeResourcesFit's PreScore state: the pod's request per scored resource.
#[derive(Clone, Debug)]
pub struct FitPreScoreState(Vec<i64>);

impl PreScorePlugin for Fit {
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, _: &[NodeId], _: &Snapshot) -> Status {
        state.write(FitPreScoreState(pod_request_list(
            &pod.requests,
            &self.resources,
            false,
        )));
        Status::success()
    }
}

const FIT_PRE_SCORE_KEY: &str = "PreScoreNodeResourcesFit";

/// LeastAllocated over cpu then memory with `weights`: Fit's score on a default profile.
#[inline]
fn least_of_two(requests: &FitPreScoreState, node: &NodeInfo, weights: [i64; 2]) -> i64 {
    let amounts = cpu_memory_amounts(&node_resources(node), &requests.0, false);
    least_allocated_of_two(amounts, weights)
}

impl Fit {
    /// The node's score by the configured strategy, given the pod's requests.
    fn node_score(&self, requests: &FitPreScoreState, node: &NodeInfo) -> i64 {
        let view = node_resources(node);
        if let Some(weights) = self.least_cpu_memory {
            return least_of_two(requests, node, weights);
        }
        if self.cpu_memory {
            self.score_amounts(cpu_memory_amounts(&view, &requests.0, false).into_iter())
        } else {
            self.score_amounts(resource_amounts(&view, &self.resources, &requests.0, false))
        }
    }

    /// The strategy's score of `(requested, allocatable)` per resource.
    #[inline]
    fn score_amounts(&self, amounts: impl Iterator<Item = (i64, i64)>) -> i64 {
        match &self.strategy {
            Strategy::LeastAllocated => {
                weighted_mean(amounts, &self.resources, least_requested_score)
            }
            Strategy::MostAllocated => {
                weighted_mean(amounts, &self.resources, most_requested_score)
            }
            Strategy::RequestedToCapacityRatio(shape) => {
                let (req, alloc): (ResourceAmounts, ResourceAmounts) = amounts.unzip();
                requested_to_capacity_ratio_score(&req, &alloc, &self.resources, shape)
            }
        }
    }
}

impl ScorePlugin for Fit {
    fn score(
        &self,
        state: &CycleState,
        _: &Pod,
        node: &NodeInfo,
        _: &Snapshot,
    ) -> Result<i64, Status> {
        let s = state.require::<FitPreScoreState>(FIT_PRE_SCORE_KEY)?;
        Ok(self.node_score(s, node))
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        _: &Pod,
        nodes: &[NodeId],
        snapshot: &Snapshot,
        out: &mut Vec<NodeScore>,
    ) -> Result<(), Status> {
        let s = state.require::<FitPreScoreState>(FIT_PRE_SCORE_KEY)?;
        if let Some(weights) = self.least_cpu_memory {
            // The default profile's loop: two resources, no strategy dispatch per node,
            // and the divisions skipped for a node whose amounts equal the last node's.
            let mut last = Memo::default();
            self.kept.score_nodes(snapshot, &s.0, nodes, out, |node| {
                let amounts = cpu_memory_amounts(&node_resources(node), &s.0, false);
                last.get(amounts, |a| least_allocated_of_two(a, weights))
            });
        } else {
            self.kept
                .score_nodes(snapshot, &s.0, nodes, out, |node| self.node_score(s, node));
        }
        Ok(())
    }
}

/// The last `(requested, allocatable)` pairs scored and their score. Nodes of one
/// shape carrying the same pods come in runs, so a scorer walking the nodes in order
/// mostly reuses the score before it (the scorers are pure functions of the pairs).
#[derive(Default)]
struct Memo(Option<([(i64, i64); 2], i64)>);

impl Memo {
    /// The score of `amounts`: the last one's when they are equal, else `score`'s.
    #[inline]
    fn get(&mut self, amounts: [(i64, i64); 2], score: impl Fn([(i64, i64); 2]) -> i64) -> i64 {
        match self.0 {
            Some((last, s)) if last == amounts => s,
            _ => {
                let s = score(amounts);
                self.0 = Some((amounts, s));
                s
            }
        }
    }
}

/// NodeResourcesBalancedAllocation: prefers nodes whose resources stay in balance.
#[derive(Clone, Debug)]
pub struct BalancedAllocation {
    resources: Vec<ResourceSpec>,
    /// `resources` is cpu then memory (the default): scoring reads them directly.
    cpu_memory: bool,
    /// A pod that requests nothing is skipped at PreScore (from 1.33,
    /// [`KubernetesVersion::balanced_allocation_skips_best_effort`]).
    skip_best_effort: bool,
    /// A node scores the change the pod makes to its balance (from 1.36,
    /// [`KubernetesVersion::balanced_allocation_scores_change`]).
    scores_change: bool,
    /// Scores kept across cycles, by the pod's requests (a node's score reads only them
    /// and the node).
    kept: NodeScoreCache<Vec<i64>>,
}

impl BalancedAllocation {
    /// Builds the plugin from its args.
    pub fn new(args: &NodeResourcesBalancedAllocationArgs) -> Result<Self, ResourceArgsError> {
        let resources = resources(args.resources.as_deref())?;
        Ok(Self {
            cpu_memory: is_cpu_then_memory(&resources),
            resources,
            skip_best_effort: true,
            scores_change: true,
            kept: NodeScoreCache::default(),
        })
    }

    /// The plugin as `release` runs it.
    pub(crate) fn for_release(mut self, release: KubernetesVersion) -> Self {
        self.skip_best_effort = release.balanced_allocation_skips_best_effort();
        self.scores_change = release.balanced_allocation_scores_change();
        self
    }
}

/// BalancedAllocation's PreScore state: the pod's request per resource.
#[derive(Clone, Debug)]
pub struct BalancedPreScoreState(Vec<i64>);

impl Plugin for BalancedAllocation {
    fn name(&self) -> &'static str {
        BALANCED_ALLOCATION_NAME
    }
}

impl PreScorePlugin for BalancedAllocation {
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, _: &[NodeId], _: &Snapshot) -> Status {
        let requests = pod_request_list(&pod.requests, &self.resources, true);
        if self.skip_best_effort && is_best_effort(&requests) {
            // Upstream skips best-effort pods so they do not pile onto one node.
            return Status::skip();
        }
        state.write(BalancedPreScoreState(requests));
        Status::success()
    }
}

const BALANCED_PRE_SCORE_KEY: &str = "PreScoreNodeResourcesBalancedAllocation";

/// `(requested, allocatable)` of cpu then memory.
type CpuMemory = [(i64, i64); 2];

/// BalancedAllocation's balance over cpu then memory (a default profile), with and
/// without the pod.
#[inline]
fn cpu_memory_with_and_without(
    requests: &BalancedPreScoreState,
    node: &NodeInfo,
) -> (CpuMemory, CpuMemory) {
    let with = cpu_memory_amounts(&node_resources(node), &requests.0, true);
    let mut without = with;
    for (pair, pod) in without.iter_mut().zip(requests.0.iter()) {
        if pair.1 != 0 {
            pair.0 = pair.0.wrapping_sub(*pod);
        }
    }
    (with, without)
}

impl BalancedAllocation {
    /// The node's score, given the pod's requests.
    fn node_score(&self, requests: &BalancedPreScoreState, node: &NodeInfo) -> i64 {
        if self.cpu_memory {
            let (with, without) = cpu_memory_with_and_without(requests, node);
            let after = balanced_score_of_two(with);
            if self.scores_change {
                balance_change_score(after, balanced_score_of_two(without))
            } else {
                after
            }
        } else {
            let view = node_resources(node);
            let amounts = || resource_amounts(&view, &self.resources, &requests.0, true);
            let after = balanced_score(amounts());
            if self.scores_change {
                let before = balanced_score(without_pod(amounts(), &requests.0));
                balance_change_score(after, before)
            } else {
                after
            }
        }
    }
}

impl ScorePlugin for BalancedAllocation {
    fn score(
        &self,
        state: &CycleState,
        _: &Pod,
        node: &NodeInfo,
        _: &Snapshot,
    ) -> Result<i64, Status> {
        let s = state.require::<BalancedPreScoreState>(BALANCED_PRE_SCORE_KEY)?;
        Ok(self.node_score(s, node))
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        _: &Pod,
        nodes: &[NodeId],
        snapshot: &Snapshot,
        out: &mut Vec<NodeScore>,
    ) -> Result<(), Status> {
        let s = state.require::<BalancedPreScoreState>(BALANCED_PRE_SCORE_KEY)?;
        if self.cpu_memory {
            // The default profile's loop: cpu and memory read straight from the node, and
            // the divisions skipped for a node whose amounts equal the last node's.
            let (mut last, mut last_without) = (Memo::default(), Memo::default());
            let scores_change = self.scores_change;
            self.kept.score_nodes(snapshot, &s.0, nodes, out, |node| {
                let (with, without) = cpu_memory_with_and_without(s, node);
                let after = last.get(with, balanced_score_of_two);
                if scores_change {
                    balance_change_score(after, last_without.get(without, balanced_score_of_two))
                } else {
                    after
                }
            });
        } else {
            self.kept
                .score_nodes(snapshot, &s.0, nodes, out, |node| self.node_score(s, node));
        }
        Ok(())
    }
}
