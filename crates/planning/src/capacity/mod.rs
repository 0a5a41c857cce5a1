//! Capacity what-if: the fewest new nodes (then the lowest price), per template and
//! zone, such that every pending pod that any number of nodes could place schedules when
//! the same scheduler runs over the cluster with them.
//!
//! Every candidate is checked by simulating it; the answer is the run that passed, and
//! its snapshot is returned so callers report what that run placed. The search:
//!
//! 1. a base run with nothing added (nothing to do when every pod schedules);
//! 2. a lower bound from resources (the pending pods' requests beyond the free room,
//!    over the largest template), and pods no template can host at all;
//! 3. growth: nodes of each pending pod's cheapest template, spread over its zones,
//!    doubled until a run places every pod (or a pool of one node per pod and slot
//!    shows which pods no number of nodes places);
//! 4. shrinking: only the nodes that run pods, scaled down by bisection, then one node
//!    less per slot and cheaper swaps while the budget lasts;
//! 5. on small clusters, the exact search: every vector from the lower bound up to that
//!    answer in increasing total, then price, each either refuted by sound bounds
//!    (`exact`: room, and spread counts that only grow during a run) or simulated, so
//!    the first that places the pods is the minimum; within a budget, past which the
//!    heuristic's answer stands with the total below which every vector was ruled out.

mod exact;
mod greedy;
mod hosts;
mod idle;
mod search;
mod template;
mod trial;

#[cfg(test)]
mod tests;

pub use greedy::GreedyEstimate;
pub use idle::{IdleRequest, Removal, remove_idle};
pub use search::plan;
pub use template::{
    LimitedResource, NodeTemplate, SharedLimit, TemplateError, ZoneChoice, format_price,
    parse_price,
};

use topospread::snapshot::PodId;
use topospread::spread::ConstraintSpread;
use topospread::{Features, SchedulerConfig, Snapshot};

/// The zone label templates are placed by.
pub const ZONE_KEY: &str = "topology.kubernetes.io/zone";
/// The deprecated zone label, set on added nodes too when the cluster's nodes carry it.
pub const ZONE_KEY_BETA: &str = "failure-domain.beta.kubernetes.io/zone";
/// The hostname label, set to each added node's name.
pub const HOSTNAME_KEY: &str = "kubernetes.io/hostname";
/// Annotation: at most this many nodes of the template, over all zones.
pub const ANNOTATION_MAX_COUNT: &str = "topospread.io/max-count";
/// Annotation: the price of one node of the template (a decimal, in any currency).
pub const ANNOTATION_PRICE: &str = "topospread.io/price";
/// Annotation: the zones (comma-separated, each one the cluster has) the template's
/// nodes may go to.
pub const ANNOTATION_ZONES: &str = "topospread.io/zones";
/// The largest `topospread.io/max-count` accepted.
pub const MAX_COUNT: u32 = 100_000;

/// Why planning could not run.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum CapacityError {
    /// A template is unusable.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// No template was given.
    #[error("no node template given (--node-template FILE)")]
    NoTemplates,
    /// Two templates share a name.
    #[error("node template {name:?}: two templates have this name")]
    DuplicateTemplate {
        /// The name.
        name: String,
    },
    /// A template names a zone the cluster does not have.
    #[error(
        "node template {template:?}: metadata.annotations[topospread.io/zones]: zone {zone:?} is not a zone of the cluster (known: {known}); label the template topology.kubernetes.io/zone={zone} to add a new zone"
    )]
    UnknownZone {
        /// The template.
        template: String,
        /// The zone.
        zone: String,
        /// The cluster's zones, comma-separated.
        known: String,
    },
    /// The scheduler configuration does not build.
    #[error("scheduler configuration: {0}")]
    Config(String),
    /// A simulation failed (did not settle, a node could not be added).
    #[error("simulation: {0}")]
    Simulation(String),
}

/// How much searching is allowed.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The exact search stops after this many simulations (it runs only when the
    /// cluster is small enough for them to be cheap).
    pub exhaustive_simulations: usize,
    /// The shrinking phase stops after this many simulations of the whole plan.
    pub simulations: usize,
    /// ... or this many on a large cluster (over 5,000 nodes and pods), where each
    /// simulation schedules thousands of pods.
    pub large_simulations: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            exhaustive_simulations: 3_000,
            simulations: 40,
            large_simulations: 4,
        }
    }
}

/// What to plan for.
#[derive(Clone, Debug)]
pub struct CapacityRequest<'a> {
    /// The cluster, its pending pods unbound.
    pub snapshot: &'a Snapshot,
    /// The scheduler's configuration.
    pub config: &'a SchedulerConfig,
    /// Its feature gates.
    pub features: Features,
    /// Tie-breaking seed, as `simulate --seed`.
    pub seed: u64,
    /// The kinds of node that may be added.
    pub templates: Vec<NodeTemplate>,
    /// How much searching is allowed.
    pub limits: Limits,
}

impl<'a> CapacityRequest<'a> {
    /// A request with seed 0 and the default limits.
    pub fn new(
        snapshot: &'a Snapshot,
        config: &'a SchedulerConfig,
        features: Features,
        templates: Vec<NodeTemplate>,
    ) -> Self {
        Self {
            snapshot,
            config,
            features,
            seed: 0,
            templates,
            limits: Limits::default(),
        }
    }
}

/// One template in one zone: where nodes are added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Index into the request's templates.
    pub template: usize,
    /// The zone (`None` when the cluster has no zones and the template names none).
    pub zone: Option<String>,
}

/// Nodes of one template added in one zone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Addition {
    /// The template's name.
    pub template: String,
    /// The zone.
    pub zone: Option<String>,
    /// How many.
    pub count: u32,
    /// Their names in the verified run.
    pub nodes: Vec<String>,
}

/// A pod no number of template nodes lets the scheduler place, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unplaceable {
    /// `namespace/name`.
    pub pod: String,
    /// Why, in a line.
    pub reason: String,
}

/// One workload's spread in the verified run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadSpread {
    /// `namespace/controller` or `namespace/pod`.
    pub workload: String,
    /// Its pending pods before.
    pub pending_before: usize,
    /// Of those, bound in the verified run.
    pub placed: usize,
    /// Each constraint counted after the verified run.
    pub constraints: Vec<ConstraintSpread>,
}

/// The answer, and the run that proves it.
#[derive(Debug)]
pub struct CapacityPlan {
    /// Nodes to add, per template and zone (none when nothing is needed).
    pub additions: Vec<Addition>,
    /// The price of the nodes added, in millionths.
    pub price_micros: u64,
    /// Whether the exact search proved that no vector of fewer nodes, or as many at a
    /// lower price, schedules the pods (when no vector up to one node per pod places
    /// them all: none leaves as few Pending as the one-node-per-pod vector does).
    pub exact: bool,
    /// No fewer nodes can do: the answer when exact, else the lower bounds' or the total
    /// below which the exact search ruled out every vector.
    pub lower_bound: u32,
    /// Simulations run.
    pub simulations: usize,
    /// Pods pending with nothing added.
    pub pending_before: Vec<PodId>,
    /// Pods still pending in the verified run (those no number of nodes places).
    pub pending_after: Vec<PodId>,
    /// Pods no number of nodes places, and why.
    pub unplaceable: Vec<Unplaceable>,
    /// cluster-autoscaler's binpacking estimate per template, simulated.
    pub greedy: Vec<GreedyEstimate>,
    /// The spread of each workload with pending pods, in the verified run.
    pub spread: Vec<WorkloadSpread>,
    /// The cluster after the verified run.
    pub snapshot: Snapshot,
}

impl CapacityPlan {
    /// Nodes added in all.
    pub fn total_nodes(&self) -> u32 {
        self.additions.iter().map(|a| a.count).sum()
    }
}
