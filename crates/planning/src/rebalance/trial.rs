//! The planner's working state: its own copy of the snapshot, the scheduler that places
//! replacements, the counting groups, and the eviction rules; and the one primitive
//! every strategy is built on: evict a pod and let the scheduler place its replacement.

use super::evictable::Evictability;
use super::measure::Groups;
use super::{RebalanceError, RebalanceOptions};
use topospread::Features;
use topospread::api::{Pod, Selector};
use topospread::config::SchedulerConfig;
use topospread::snapshot::{NodeId, PodId, Snapshot};
use topospread::spread::SpreadPlugins;
use topospread::{ScheduleResult, Scheduler};

/// A move carried out on the planner's snapshot, undoable.
#[derive(Debug)]
pub(crate) struct Applied {
    /// The replacement's id.
    pub(crate) pod: PodId,
    pub(crate) from: NodeId,
    pub(crate) to: NodeId,
    /// The pod as it was, to put back.
    original: Pod,
}

/// Everything a strategy works with.
pub(crate) struct Context {
    pub(crate) snapshot: Snapshot,
    pub(crate) scheduler: Scheduler,
    pub(crate) groups: Groups,
    pub(crate) evictability: Evictability,
    /// Nodes whose pods changed since [`Self::take_touched`] last ran, so that the
    /// greedy strategy's kept candidates re-read only those.
    touched: Touched,
    seed: u64,
}

/// A set of nodes in the order they were first touched.
#[derive(Debug, Default)]
struct Touched {
    list: Vec<NodeId>,
    seen: Vec<bool>,
}

impl Touched {
    fn insert(&mut self, node: NodeId) {
        let i = node.index();
        if self.seen.len() <= i {
            self.seen.resize(i + 1, false);
        }
        if !self.seen[i] {
            self.seen[i] = true;
            self.list.push(node);
        }
    }

    fn take(&mut self) -> Vec<NodeId> {
        for n in &self.list {
            self.seen[n.index()] = false;
        }
        std::mem::take(&mut self.list)
    }
}

impl Context {
    pub(crate) fn new(
        mut snapshot: Snapshot,
        config: &SchedulerConfig,
        features: Features,
        options: &RebalanceOptions,
    ) -> Result<Self, RebalanceError> {
        let selector = match &options.selector {
            None => None,
            Some(s) => Some(
                Selector::from_label_selector(Some(s), snapshot.symbols_mut())
                    .map_err(|e| RebalanceError::Selector(e.to_string()))?,
            ),
        };
        let mut scheduler = Scheduler::new(config, features, &mut snapshot)
            .map_err(|e| RebalanceError::Config(e.to_string()))?;
        scheduler.set_seed(options.seed);
        let plugins = SpreadPlugins::new(config, features, &mut snapshot)?;
        let evictability = Evictability::new(
            &snapshot,
            options.namespace.as_deref(),
            selector,
            options.blockers.clone(),
        );
        let any = snapshot
            .pods()
            .any(|(id, p)| snapshot.pod_node(id).is_some() && evictability.in_scope(p, &snapshot));
        // The descheduler evicts nothing when its filters select nothing; topospread
        // says the scope is empty.
        if !any && options.strategy == super::Strategy::Topospread {
            let mut what = Vec::new();
            if let Some(n) = &options.namespace {
                what.push(format!("namespace {n:?}"));
            }
            if let Some(s) = &options.selector {
                what.push(format!("selector {}", describe_selector(s)));
            }
            if what.is_empty() {
                what.push("the input (it has no bound pods)".into());
            }
            return Err(RebalanceError::NothingSelected {
                what: what.join(" and "),
            });
        }
        let groups = Groups::build(&snapshot, &plugins, |p| evictability.in_scope(p, &snapshot));
        Ok(Self {
            snapshot,
            scheduler,
            groups,
            evictability,
            touched: Touched::default(),
            seed: options.seed,
        })
    }

    /// Evicts `id` and schedules its replacement (the same pod without a node) on the
    /// snapshot without it. When the scheduler places it on another node, the move is
    /// carried out; otherwise the pod is put back and `None` returned.
    pub(crate) fn try_move(&mut self, id: PodId) -> Result<Option<Applied>, RebalanceError> {
        let Some(from) = self.snapshot.pod_node(id) else {
            return Ok(None);
        };
        let Some(original) = self.remove_pod(id) else {
            return Ok(None);
        };
        let mut replacement = original.clone();
        replacement.node_name = None;
        match self.place(&replacement) {
            Some(to) if to != from => {
                let a = self.bind_to(replacement, to, from, original)?;
                Ok(Some(a))
            }
            _ => {
                self.add_pod(original)?;
                Ok(None)
            }
        }
    }

    /// Where the scheduler would place `pod` now (each trial reseeded, so the answer
    /// does not depend on the trials before it).
    pub(crate) fn place(&mut self, pod: &Pod) -> Option<NodeId> {
        self.scheduler.set_seed(self.seed);
        let result = self.scheduler.schedule_one(&self.snapshot, pod);
        // A replacement never preempts here: the plan only moves pods.
        let _ = self.scheduler.take_preemption();
        match result {
            ScheduleResult::Scheduled { node, .. } => Some(node),
            _ => None,
        }
    }

    /// Moves `id` to `to` without asking the scheduler (replaying a checked move).
    pub(crate) fn move_to(
        &mut self,
        id: PodId,
        to: NodeId,
    ) -> Result<Option<Applied>, RebalanceError> {
        let Some(from) = self.snapshot.pod_node(id) else {
            return Ok(None);
        };
        let Some(original) = self.remove_pod(id) else {
            return Ok(None);
        };
        let replacement = original.clone();
        Ok(Some(self.bind_to(replacement, to, from, original)?))
    }

    fn bind_to(
        &mut self,
        mut replacement: Pod,
        to: NodeId,
        from: NodeId,
        original: Pod,
    ) -> Result<Applied, RebalanceError> {
        replacement.node_name = Some(self.snapshot.node(to).node.name.clone());
        let pod = self.add_pod(replacement)?;
        Ok(Applied {
            pod,
            from,
            to,
            original,
        })
    }

    /// Puts a moved pod back where it was.
    pub(crate) fn undo(&mut self, a: Applied) -> Result<PodId, RebalanceError> {
        self.remove_pod(a.pod);
        self.add_pod(a.original)
    }

    /// Removes a pod from the planner's snapshot, noting its node as touched.
    pub(crate) fn remove_pod(&mut self, id: PodId) -> Option<Pod> {
        if let Some(node) = self.snapshot.pod_node(id) {
            self.touched.insert(node);
        }
        self.snapshot.remove_pod(id)
    }

    /// Adds a pod to the planner's snapshot, noting its node as touched.
    pub(crate) fn add_pod(&mut self, pod: Pod) -> Result<PodId, RebalanceError> {
        let id = self.snapshot.add_pod(pod)?;
        if let Some(node) = self.snapshot.pod_node(id) {
            self.touched.insert(node);
        }
        Ok(id)
    }

    /// The nodes whose pods changed since the last call, through [`Self::remove_pod`]
    /// and [`Self::add_pod`] (every move, trial and undo goes through them).
    pub(crate) fn take_touched(&mut self) -> Vec<NodeId> {
        self.touched.take()
    }

    /// `namespace/name` of a pod.
    pub(crate) fn pod_name(&self, id: PodId) -> (String, String) {
        self.snapshot.pod(id).map_or_else(Default::default, |p| {
            (
                self.snapshot.symbols().resolve(p.namespace).to_string(),
                p.name.to_string(),
            )
        })
    }

    /// A node's name.
    pub(crate) fn node_name(&self, id: NodeId) -> String {
        self.snapshot.node(id).node.name.to_string()
    }
}

/// `app=web,tier in (a,b)` for messages.
fn describe_selector(s: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector) -> String {
    let mut parts: Vec<String> = s
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in s.match_expressions.iter().flatten() {
        let values = e.values.as_deref().unwrap_or_default().join(",");
        parts.push(match e.operator.as_str() {
            "Exists" => e.key.clone(),
            "DoesNotExist" => format!("!{}", e.key),
            op => format!("{} {} ({values})", e.key, op.to_lowercase()),
        });
    }
    if parts.is_empty() {
        "(everything)".into()
    } else {
        parts.join(",")
    }
}
