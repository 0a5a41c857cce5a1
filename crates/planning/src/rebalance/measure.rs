//! The global violation measure: every counting group PodTopologySpread uses for the
//! bound pods (identical constraints share one group), each group's excess skew, and
//! the per-workload skew reports. Counts come from the snapshot's incrementally kept
//! domain sums, the ones Filter reads, so a trial move costs a lookup, not a recount.

use super::{ConstraintSpread, WorkloadSpread};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use topospread::api::{ControllerKind, Pod, WhenUnsatisfiable};
use topospread::plugins::podtopologyspread::CountingGroup;
use topospread::snapshot::{PodId, Snapshot};
use topospread::spread::SpreadPlugins;
use topospread::spread::{constraint_spread, excess};

/// How far the cluster is from every constraint holding, compared lexicographically:
/// hard (DoNotSchedule) excess first, then soft (ScheduleAnyway). Excess of a group is
/// the sum over its domains of how far each count is above `global minimum + maxSkew`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
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
                    _ => "controller",
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

impl Groups {
    /// The groups of every bound, non-terminating pod; `in_scope` says which pods the
    /// plan is about (their groups are reported).
    pub(crate) fn build(
        snapshot: &Snapshot,
        plugins: &SpreadPlugins,
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
