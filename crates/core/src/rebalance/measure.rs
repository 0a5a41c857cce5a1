//! The global violation measure: every counting group PodTopologySpread uses for the
//! bound pods (identical constraints share one group), each group's excess skew, and
//! the per-workload skew reports. Counts come from the snapshot's incrementally kept
//! domain sums, the ones Filter reads, so a trial move costs a lookup, not a recount.

use super::{ConstraintSpread, WorkloadSpread};
use crate::api::{ControllerKind, Pod, WhenUnsatisfiable};
use crate::config::{PodTopologySpreadArgs, SchedulerConfig};
use crate::features::Features;
use crate::plugins::podtopologyspread::{self as pts, CountingGroup, PodTopologySpread};
use crate::snapshot::{DomainCounts, PodId, Snapshot};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How far the cluster is from every constraint holding, compared lexicographically:
/// hard (DoNotSchedule) excess first, then soft (ScheduleAnyway). Excess of a group is
/// the sum over its domains of how far each count is above `global minimum + maxSkew`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Violation {
    /// Total DoNotSchedule excess skew.
    pub hard: i64,
    /// Total ScheduleAnyway excess skew.
    pub soft: i64,
}

/// A workload for reports: `replicaset/web-7d9c` or `pod/standalone`, in a namespace.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct WorkloadRef {
    pub(crate) namespace: String,
    pub(crate) name: String,
}

impl WorkloadRef {
    pub(crate) fn of(pod: &Pod, snapshot: &Snapshot) -> Self {
        let name = match &pod.controller {
            Some(c) => {
                let kind = match c.kind {
                    ControllerKind::ReplicaSet => "replicaset",
                    ControllerKind::StatefulSet => "statefulset",
                    ControllerKind::ReplicationController => "replicationcontroller",
                    ControllerKind::DaemonSet => "daemonset",
                    ControllerKind::Other => "controller",
                };
                format!("{kind}/{}", c.name)
            }
            None => format!("pod/{}", pod.name),
        };
        Self {
            namespace: snapshot.symbols().resolve(pod.namespace).to_string(),
            name,
        }
    }
}

/// One counting group with the workloads that declare it.
#[derive(Debug)]
pub(crate) struct Group {
    pub(crate) group: CountingGroup,
    pub(crate) owners: BTreeSet<WorkloadRef>,
    /// Some owner pod is inside the plan's scope.
    pub(crate) in_scope: bool,
    /// Its excess now.
    pub(crate) excess: i64,
}

impl Group {
    pub(crate) fn is_hard(&self) -> bool {
        self.group.when == WhenUnsatisfiable::DoNotSchedule
    }
}

/// Every group, the current measure, and which groups count each pod.
#[derive(Debug)]
pub(crate) struct Groups {
    pub(crate) list: Vec<Group>,
    pub(crate) total: Violation,
    /// Per pod identity (namespace and labels): the groups counting it.
    counted_by: HashMap<PodId, Vec<usize>>,
}

/// The excess of one group over its counts.
pub(crate) fn excess(g: &CountingGroup, counts: &DomainCounts) -> i64 {
    let floor = g.min_match(counts) + i64::from(g.max_skew);
    counts.iter().map(|(_, c)| (c - floor).max(0)).sum()
}

/// The PodTopologySpread plugin of every profile, built from its args, to read
/// constraints exactly as each profile's plugin reads them.
pub(crate) struct Plugins {
    by_profile: Vec<(String, PodTopologySpread)>,
}

impl Plugins {
    pub(crate) fn new(
        config: &SchedulerConfig,
        features: Features,
        snapshot: &mut Snapshot,
    ) -> Result<Self, super::RebalanceError> {
        let defaults = [crate::config::ProfileConfig::default()];
        let profiles = if config.profiles.is_empty() {
            &defaults[..]
        } else {
            &config.profiles[..]
        };
        let mut by_profile = Vec::new();
        for p in profiles {
            let args: PodTopologySpreadArgs = match p
                .plugin_config
                .iter()
                .find(|c| c.name == pts::NAME)
                .and_then(|c| c.args.as_ref())
            {
                None | Some(serde_json::Value::Null) => PodTopologySpreadArgs::default(),
                Some(v) => crate::config::decode_strict(v, "").map_err(|e| {
                    super::RebalanceError::Config(format!("{}: {}", e.field, e.message))
                })?,
            };
            let plugin = PodTopologySpread::new(&args, features, snapshot.symbols_mut())
                .map_err(|e| super::RebalanceError::Config(e.to_string()))?;
            let name = p
                .scheduler_name
                .clone()
                .unwrap_or_else(|| crate::config::DEFAULT_SCHEDULER_NAME.to_string());
            by_profile.push((name, plugin));
        }
        Ok(Self { by_profile })
    }

    /// The plugin of the profile serving the pod (the first when none does).
    pub(crate) fn for_pod(&self, pod: &Pod) -> Option<&PodTopologySpread> {
        self.by_profile
            .iter()
            .find(|(n, _)| **n == *pod.scheduler_name)
            .or(self.by_profile.first())
            .map(|(_, p)| p)
    }
}

impl Groups {
    /// The groups of every bound, non-terminating pod; `in_scope` says which pods the
    /// plan is about (their groups are reported).
    pub(crate) fn build(
        snapshot: &Snapshot,
        plugins: &Plugins,
        in_scope: impl Fn(&Pod) -> bool,
    ) -> Self {
        let mut index: HashMap<CountingGroup, usize> = HashMap::new();
        let mut list: Vec<Group> = Vec::new();
        for (id, pod) in snapshot.pods() {
            if snapshot.pod_node(id).is_none() || pod.terminating {
                continue;
            }
            let Some(plugin) = plugins.for_pod(pod) else {
                continue;
            };
            let scoped = in_scope(pod);
            for g in plugin.counting_groups(pod, snapshot) {
                let i = *index.entry(g.clone()).or_insert_with(|| {
                    list.push(Group {
                        group: g,
                        owners: BTreeSet::new(),
                        in_scope: false,
                        excess: 0,
                    });
                    list.len() - 1
                });
                list[i].owners.insert(WorkloadRef::of(pod, snapshot));
                list[i].in_scope |= scoped;
            }
        }
        snapshot.prepare_counts(
            list.iter()
                .map(|g| (g.group.namespace, g.group.selector.clone())),
        );
        let mut groups = Self {
            list,
            total: Violation::default(),
            counted_by: HashMap::new(),
        };
        groups.refresh(snapshot);
        groups
    }

    /// Recomputes every group's excess and the total.
    pub(crate) fn refresh(&mut self, snapshot: &Snapshot) {
        let mut total = Violation::default();
        for g in &mut self.list {
            g.excess = excess(&g.group, &g.group.counts(snapshot));
            if g.is_hard() {
                total.hard += g.excess;
            } else {
                total.soft += g.excess;
            }
        }
        self.total = total;
    }

    /// The groups whose counts a pod is part of (its namespace, its labels).
    pub(crate) fn counting(&mut self, id: PodId, pod: &Pod, snapshot: &Snapshot) -> Vec<usize> {
        self.counted_by
            .entry(id)
            .or_insert_with(|| {
                self.list
                    .iter()
                    .enumerate()
                    .filter(|(_, g)| {
                        g.group.namespace == pod.namespace
                            && g.group.selector.matches(&pod.labels, snapshot.symbols())
                    })
                    .map(|(i, _)| i)
                    .collect()
            })
            .clone()
    }

    /// The measure if only `changed` groups moved from their recorded excess, and the
    /// group whose excess dropped most (the constraint the move repairs).
    pub(crate) fn measure_with(
        &self,
        changed: &[usize],
        snapshot: &Snapshot,
    ) -> (Violation, Option<usize>) {
        let mut v = self.total;
        let mut best: Option<(bool, i64, usize)> = None;
        for &i in changed {
            let g = &self.list[i];
            let now = excess(&g.group, &g.group.counts(snapshot));
            if g.is_hard() {
                v.hard += now - g.excess;
            } else {
                v.soft += now - g.excess;
            }
            let drop = g.excess - now;
            if drop > 0 && best.is_none_or(|(h, d, _)| (g.is_hard(), drop) > (h, d)) {
                best = Some((g.is_hard(), drop, i));
            }
        }
        (v, best.map(|b| b.2))
    }

    /// Records the current excess of `changed` groups.
    pub(crate) fn commit(&mut self, changed: &[usize], snapshot: &Snapshot) {
        for &i in changed {
            let now = excess(&self.list[i].group, &self.list[i].group.counts(snapshot));
            let g = &mut self.list[i];
            if g.is_hard() {
                self.total.hard += now - g.excess;
            } else {
                self.total.soft += now - g.excess;
            }
            g.excess = now;
        }
    }

    /// Per in-scope workload, each of its constraints' counts and skew now.
    pub(crate) fn report(&self, snapshot: &Snapshot) -> Vec<WorkloadSpread> {
        let mut by_workload: BTreeMap<&WorkloadRef, Vec<ConstraintSpread>> = BTreeMap::new();
        for g in self.list.iter().filter(|g| g.in_scope) {
            let spread = constraint_spread(&g.group, snapshot);
            for w in &g.owners {
                by_workload.entry(w).or_default().push(spread.clone());
            }
        }
        by_workload
            .into_iter()
            .map(|(w, constraints)| WorkloadSpread {
                namespace: w.namespace.clone(),
                workload: w.name.clone(),
                constraints,
            })
            .collect()
    }

    /// In-scope hard groups whose skew exceeds maxSkew now.
    pub(crate) fn hard_violations(&self) -> usize {
        self.list
            .iter()
            .filter(|g| g.in_scope && g.is_hard() && g.excess > 0)
            .count()
    }
}

/// One group's counts per domain and skew, for people.
pub(crate) fn constraint_spread(g: &CountingGroup, snapshot: &Snapshot) -> ConstraintSpread {
    let counts = g.counts(snapshot);
    let symbols = snapshot.symbols();
    let keys = snapshot.domains(g.topology_key);
    let name = |d: usize| -> String {
        u32::try_from(d)
            .ok()
            .and_then(|d| keys.filter(|k| (d as usize) < k.len()).map(|k| k.value(d)))
            .map_or_else(
                || "<no label>".to_string(),
                |v| symbols.resolve(v).to_string(),
            )
    };
    let map: BTreeMap<String, i64> = counts.iter().map(|(d, c)| (name(d), c)).collect();
    let max = map.values().copied().max().unwrap_or(0);
    let skew = if map.is_empty() {
        0
    } else {
        max - g.min_match(&counts)
    };
    ConstraintSpread {
        constraint: g.describe(snapshot),
        topology_key: symbols.resolve(g.topology_key).to_string(),
        max_skew: g.max_skew,
        when_unsatisfiable: g.when.as_str().to_string(),
        counts: map,
        skew,
        excess: excess(g, &counts),
    }
}
