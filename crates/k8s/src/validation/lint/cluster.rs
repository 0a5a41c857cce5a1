//! The lints that need the cluster's nodes (TS002, TS003, TS005, TS009, TS010, TS013), run on a
//! snapshot with the engine's own PodTopologySpread plugin, for the first pod a workload would
//! create.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{Lint, LintCode};
use crate::validation::Workload;
use crate::workloads::deployment;
use topospread::api::Labels;
use topospread::api::{
    NodeInclusionPolicy, Pod, TaintEffect, WhenUnsatisfiable, find_untolerated_taint,
};
use topospread::config::PodTopologySpreadArgs;
use topospread::convert;
use topospread::framework::{CycleState, FilterPlugin, PreFilterPlugin};
use topospread::plugins::podtopologyspread::{
    ERR_REASON_NODE_LABEL_NOT_MATCH, NewError, PodTopologySpread,
};
use topospread::snapshot::{NodeInfo, Snapshot};
use topospread::spread::PodSpread;
use topospread::validation::FieldPath;
use topospread::{Feature, Features};
use topospread_planning::controller::Strategy;

/// The `pod-template-hash` a Deployment's first pod gets here: a value no existing pod
/// carries, as for a new revision.
pub const FIRST_POD_TEMPLATE_HASH: &str = "topospread-first-pod";

/// The `pod-template-hash` TS009 gives a pod of the revision a rollout replaces.
const OLD_POD_TEMPLATE_HASH: &str = "topospread-old-revision";

/// Runs the lints that need nodes against one cluster snapshot.
#[derive(Debug)]
pub struct ClusterLinter {
    snapshot: Snapshot,
    plugin: PodTopologySpread,
    /// The scheduler's gates the plugin runs with (matchLabelKeys, empty selectors).
    features: Features,
    /// Lints already found, by what they read (see [`ClusterLinter::lint`]): a dump's
    /// pods are mostly replicas of a few templates, and each lint walks every node.
    seen: std::collections::HashMap<String, Vec<Lint>>,
    /// TS010's answers, by the nodeSelector and node affinity they read.
    placeable: std::collections::HashMap<String, Option<Lint>>,
}

impl ClusterLinter {
    /// A linter over `snapshot`, with kube-scheduler's default `PodTopologySpreadArgs`
    /// (only pods with constraints of their own are linted, so the defaults do not matter).
    pub fn new(snapshot: Snapshot) -> Result<Self, NewError> {
        Self::with_features(snapshot, Features::default())
    }

    /// [`ClusterLinter::new`] with the scheduler's gates of a given release.
    pub fn with_features(mut snapshot: Snapshot, features: Features) -> Result<Self, NewError> {
        let plugin = PodTopologySpread::new(
            &PodTopologySpreadArgs::default(),
            features,
            snapshot.symbols_mut(),
        )?;
        Ok(Self {
            snapshot,
            plugin,
            features,
            seen: std::collections::HashMap::new(),
            placeable: std::collections::HashMap::new(),
        })
    }

    /// The snapshot linted against.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// How many distinct pods the lints were worked out for; the rest reused an answer.
    pub fn distinct_pods_linted(&self) -> usize {
        self.seen.len()
    }

    /// TS002, TS003 and TS005 for the workload's first pod (the Pod itself, for a Pod),
    /// and TS009 for a Deployment.
    /// Nothing when the snapshot has no nodes or the pod cannot be converted (validation
    /// reports why); TS005 is skipped for a Pod already bound to a node.
    pub fn lint(&mut self, workload: &Workload) -> Vec<Lint> {
        let mut lints = Vec::new();
        if self.snapshot.nodes().is_empty() {
            return lints;
        }
        let (Some(first), Some(spec_ref)) = (first_pod(workload), workload.pod_spec()) else {
            return lints;
        };
        let bound = is_bound(&first);
        if !bound {
            lints.extend(self.no_node_matches(&first, &spec_ref.path));
        }
        // Every other lint here is about the pod's own constraints.
        if !has_constraints(&first) {
            return lints;
        }
        let list = spec_ref.path.child("topologySpreadConstraints");
        let key = lint_key(workload.kind(), &first, bound);
        lints.extend(self.lint_first(key.as_deref(), &first, &list, bound));
        if let Workload::Deployment(d) = workload {
            lints.extend(self.rollout_stall(d, &first, &list));
        }
        lints
    }

    /// [`ClusterLinter::lint`] for a bound Pod read in compact form, through the
    /// [`LintPod`] kept for it.
    pub fn lint_pod(&mut self, pod: &LintPod) -> Vec<Lint> {
        if self.snapshot.nodes().is_empty() {
            return Vec::new();
        }
        let list = FieldPath::new("spec").child("topologySpreadConstraints");
        self.lint_first(pod.key.as_deref(), &pod.pod, &list, is_bound(&pod.pod))
    }

    /// TS002, TS003 and TS005 for `first`, or what an earlier pod with the same `key`
    /// got.
    fn lint_first(
        &mut self,
        key: Option<&str>,
        first: &core::Pod,
        list: &FieldPath,
        bound: bool,
    ) -> Vec<Lint> {
        match key.and_then(|k| self.seen.get(k)) {
            Some(found) => found.clone(),
            None => {
                let lints = self.lint_converted(first, list, bound);
                if let Some(key) = key {
                    self.seen.insert(key.to_string(), lints.clone());
                }
                lints
            }
        }
    }

    /// TS009: a RollingUpdate that can never finish. With `maxUnavailable` 0 no old pod
    /// goes before a surge pod is available; a DoNotSchedule constraint with fewer
    /// eligible domains than `minDomains` counts the global minimum as 0, so each domain
    /// takes at most `maxSkew` matching pods; when the selector counts the old
    /// revision's pods too and `replicas` of them fill every domain, the surge pod
    /// never schedules (kubernetes issue 116629). Other pods matching the selector only
    /// fill domains further, so the verdict holds whatever else runs.
    fn rollout_stall(&mut self, d: &Deployment, first: &core::Pod, list: &FieldPath) -> Vec<Lint> {
        let replicas = d.spec.replicas.unwrap_or(1);
        let Strategy::RollingUpdate {
            max_surge,
            max_unavailable: 0,
        } = deployment::strategy(d, replicas)
        else {
            return Vec::new();
        };
        if replicas <= 0 {
            return Vec::new();
        }
        let Ok(pod) = convert::pod(first, self.snapshot.symbols_mut()) else {
            return Vec::new();
        };
        // A pod of the revision being replaced: the same labels, another hash.
        let mut old_labels = first.metadata.labels.clone().unwrap_or_default();
        old_labels.insert(
            "pod-template-hash".to_string(),
            OLD_POD_TEMPLATE_HASH.to_string(),
        );
        let old = Labels::from_map(Some(&old_labels), self.snapshot.symbols_mut());
        let spread = topospread::spread::count(&self.plugin, &pod, &self.snapshot);
        let hard = pod
            .spread_constraints
            .iter()
            .enumerate()
            .filter(|(_, c)| c.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule);
        let symbols = self.snapshot.symbols();
        let mut lints = Vec::new();
        // Hard constraints come first in the count, in the pod's order.
        for ((i, c), counted) in hard.zip(&spread.constraints) {
            let selector = if self
                .features
                .enabled(Feature::MatchLabelKeysInPodTopologySpread)
            {
                c.selector_for(&pod.labels)
            } else {
                c.selector.clone()
            };
            let counts_nothing = selector.is_empty() && !self.features.empty_selector_matches_all();
            if counts_nothing
                || !selector.matches(&pod.labels, symbols)
                || !selector.matches(&old, symbols)
            {
                continue;
            }
            let domains = counted.spread.counts.len();
            let eligible = i64::try_from(domains).unwrap_or(i64::MAX);
            let min = i64::from(counted.min_domains);
            let ceiling = eligible.saturating_mul(i64::from(c.max_skew));
            if domains == 0 || eligible >= min || i64::from(replicas) < ceiling {
                continue;
            }
            let key = symbols.resolve(c.topology_key);
            lints.push(Lint::new(
                LintCode::RolloutCannotFinish,
                &list.index(i),
                format!(
                    "a rollout can never finish: the strategy resolves to maxUnavailable 0 (maxSurge {max_surge}) for {replicas} replicas, so no old pod goes before a new one is available, but minDomains {min} exceeds the {domains} eligible domain(s) of {key:?}, each domain takes at most maxSkew ({}) matching pods, {ceiling} in all, and the old revision's {replicas} pods, which this selector counts, fill them: the surge pod stays Pending; allow spec.strategy.rollingUpdate.maxUnavailable of 1 or more, or add matchLabelKeys: [pod-template-hash]",
                    c.max_skew
                ),
            ));
        }
        lints
    }

    /// TS010: no node satisfies the pod's nodeSelector and required node affinity.
    fn no_node_matches(&mut self, first: &core::Pod, spec: &FieldPath) -> Option<Lint> {
        let pod_spec = first.spec.as_ref()?;
        let affinity = pod_spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            });
        let selector = pod_spec.node_selector.as_ref().filter(|s| !s.is_empty());
        if selector.is_none() && affinity.is_none() {
            return None;
        }
        let key = serde_json::to_string(&(selector, affinity)).ok()?;
        if let Some(found) = self.placeable.get(&key) {
            return found.clone();
        }
        let found = self.unmatched(first, spec);
        self.placeable.insert(key, found.clone());
        found
    }

    fn unmatched(&mut self, first: &core::Pod, spec: &FieldPath) -> Option<Lint> {
        let pod = convert::pod(first, self.snapshot.symbols_mut()).ok()?;
        let required = &pod.required_node_affinity;
        let symbols = self.snapshot.symbols();
        let nodes = self.snapshot.nodes();
        if nodes
            .iter()
            .any(|n| required.matches(&n.node.labels, &n.node.name, symbols))
        {
            return None;
        }
        let by_selector = required
            .node_selector
            .as_ref()
            .is_some_and(|s| !nodes.iter().any(|n| s.matches(&n.node.labels, symbols)));
        let (field, what) = if by_selector {
            (spec.child("nodeSelector"), "nodeSelector")
        } else {
            (
                spec.child("affinity")
                    .child("nodeAffinity")
                    .child("requiredDuringSchedulingIgnoredDuringExecution"),
                "nodeSelector and required node affinity together",
            )
        };
        Some(Lint::new(
            LintCode::NodeSelectorMatchesNoNode,
            &field,
            format!(
                "no node of the {} in the input satisfies the pod's {what}, so every pod stays Pending ({} node(s) didn't match Pod's node affinity/selector); label the nodes, or fix the selector",
                nodes.len(),
                nodes.len()
            ),
        ))
    }

    fn lint_converted(&mut self, first: &core::Pod, list: &FieldPath, bound: bool) -> Vec<Lint> {
        let mut lints = Vec::new();
        let Ok(pod) = convert::pod(first, self.snapshot.symbols_mut()) else {
            return lints;
        };
        lints.extend(self.missing_keys(&pod, list));
        let mut state = CycleState::new();
        if !self
            .plugin
            .pre_filter(&mut state, &pod, &self.snapshot)
            .is_success()
        {
            return lints;
        }
        let hard = hard_constraints(&pod);
        let spread = topospread::spread::count(&self.plugin, &pod, &self.snapshot);
        lints.extend(self.min_domains(&pod, &hard, &spread, list));
        lints.extend(minimum_held_by_unusable_nodes(
            &pod,
            &hard,
            &spread,
            &self.snapshot,
            self.features,
            list,
        ));
        if !bound && hard.len() >= 2 {
            lints.extend(self.conflict(&pod, &hard, &state, list));
        }
        lints
    }

    /// TS002: constraints whose topology key some nodes the pod may use lack.
    fn missing_keys(&self, pod: &Pod, list: &FieldPath) -> Vec<Lint> {
        let symbols = self.snapshot.symbols();
        let all = self.snapshot.nodes();
        let allowed: Vec<&NodeInfo> = all
            .iter()
            .filter(|n| {
                pod.required_node_affinity
                    .matches(&n.node.labels, &n.node.name, symbols)
            })
            .collect();
        if allowed.is_empty() {
            return Vec::new();
        }
        let scope = if allowed.len() < all.len() {
            " the pod's nodeSelector and node affinity allow"
        } else {
            ""
        };
        let mut lints = Vec::new();
        for (i, c) in pod.spread_constraints.iter().enumerate() {
            let key = symbols.resolve(c.topology_key);
            let hard = match c.when_unsatisfiable {
                WhenUnsatisfiable::DoNotSchedule => true,
                WhenUnsatisfiable::ScheduleAnyway => false,
                WhenUnsatisfiable::Other(_) => continue,
            };
            if key.is_empty() {
                continue;
            }
            let missing: Vec<&str> = allowed
                .iter()
                .filter(|n| !n.node.labels.has(c.topology_key))
                .map(|n| &*n.node.name)
                .collect();
            let message = match (missing.len() == allowed.len(), hard) {
                (_, _) if missing.is_empty() => continue,
                (true, true) => format!(
                    "no node{scope} carries the label {key:?} ({} checked), so every node is filtered out ({ERR_REASON_NODE_LABEL_NOT_MATCH}) and the pod stays Pending",
                    allowed.len()
                ),
                (true, false) => format!(
                    "no node{scope} carries the label {key:?} ({} checked), so the constraint scores every node alike and has no effect",
                    allowed.len()
                ),
                (false, true) => format!(
                    "{} of the {} nodes{scope} {} the label {key:?} ({}): pods never land on {}",
                    missing.len(),
                    allowed.len(),
                    if missing.len() == 1 { "lacks" } else { "lack" },
                    names(&missing),
                    if missing.len() == 1 { "it" } else { "them" },
                ),
                (false, false) => format!(
                    "{} of the {} nodes{scope} {} the label {key:?} ({}): {} always {} lowest",
                    missing.len(),
                    allowed.len(),
                    if missing.len() == 1 { "lacks" } else { "lack" },
                    names(&missing),
                    if missing.len() == 1 { "it" } else { "they" },
                    if missing.len() == 1 {
                        "scores"
                    } else {
                        "score"
                    },
                ),
            };
            lints.push(Lint::new(
                LintCode::TopologyKeyMissingOnNodes,
                &list.index(i).child("topologyKey"),
                message,
            ));
        }
        lints
    }

    /// TS003: hard constraints whose minDomains exceeds the eligible domains, counted as
    /// every spread report counts them.
    fn min_domains(
        &self,
        pod: &Pod,
        hard: &[usize],
        spread: &PodSpread,
        list: &FieldPath,
    ) -> Vec<Lint> {
        // Hard constraints come first, in the pod's order.
        let counts: Vec<&BTreeMap<String, i64>> = spread
            .constraints
            .iter()
            .take(hard.len())
            .map(|c| &c.spread.counts)
            .collect();
        let mut lints = Vec::new();
        for (j, &i) in hard.iter().enumerate() {
            let c = &pod.spread_constraints[i];
            let (Some(min), Some(domains)) = (c.min_domains, counts.get(j)) else {
                continue;
            };
            let eligible = domains.len();
            if i64::try_from(eligible).unwrap_or(i64::MAX) >= i64::from(min) {
                continue;
            }
            let key = self.snapshot.symbols().resolve(c.topology_key);
            let values: Vec<&str> = domains.keys().map(String::as_str).collect();
            let ceiling = i64::try_from(eligible)
                .unwrap_or(i64::MAX)
                .saturating_mul(i64::from(c.max_skew));
            lints.push(Lint::new(
                LintCode::MinDomainsExceedsDomains,
                &list.index(i).child("minDomains"),
                format!(
                    "minDomains is {min} but the nodes offer {eligible} eligible domain(s) of {key:?}{}: the global minimum counts as 0, so each domain takes at most maxSkew ({}) matching pods, {ceiling} in all, and the rest stay Pending until the cluster grows",
                    if values.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", names(&values))
                    },
                    c.max_skew
                ),
            ));
        }
        lints
    }

    /// TS005: no node passes Filter with every hard constraint, though each alone fits.
    fn conflict(
        &self,
        pod: &Pod,
        hard: &[usize],
        state: &CycleState,
        list: &FieldPath,
    ) -> Option<Lint> {
        if !self.passing_nodes(state, pod).is_empty() {
            return None;
        }
        let mut alone = Vec::with_capacity(hard.len());
        for &i in hard {
            let mut single = pod.clone();
            single.spread_constraints = [pod.spread_constraints[i].clone()].into();
            let mut s = CycleState::new();
            if !self
                .plugin
                .pre_filter(&mut s, &single, &self.snapshot)
                .is_success()
            {
                return None;
            }
            let fits = self.passing_nodes(&s, &single);
            if fits.is_empty() {
                // Not a conflict: this constraint alone cannot be met (TS002/TS003 say why).
                return None;
            }
            let key = self
                .snapshot
                .symbols()
                .resolve(pod.spread_constraints[i].topology_key);
            alone.push(format!("[{i}] ({key}) fits {}", names(&fits)));
        }
        Some(Lint::new(
            LintCode::HardConstraintsConflict,
            list,
            format!(
                "no node satisfies the DoNotSchedule constraints together, though each alone fits some node: {}; the pod stays Pending",
                alone.join("; ")
            ),
        ))
    }

    /// The nodes PodTopologySpread's Filter passes, among those the pod's nodeSelector and
    /// required node affinity allow (the NodeAffinity plugin rejects the others anyway).
    fn passing_nodes(&self, state: &CycleState, pod: &Pod) -> Vec<&str> {
        let symbols = self.snapshot.symbols();
        self.snapshot
            .nodes()
            .iter()
            .filter(|n| {
                pod.required_node_affinity
                    .matches(&n.node.labels, &n.node.name, symbols)
                    && self
                        .plugin
                        .filter(state, pod, n, &self.snapshot)
                        .is_success()
            })
            .map(|n| &*n.node.name)
            .collect()
    }
}

/// The indices of the pod's DoNotSchedule constraints, in its order: what PreFilter
/// counts first, and the `hard` that TS003 and TS013 read.
pub fn hard_constraints(pod: &Pod) -> Vec<usize> {
    pod.spread_constraints
        .iter()
        .enumerate()
        .filter(|(_, c)| c.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule)
        .map(|(i, _)| i)
        .collect()
}

/// TS013: hard constraints (`hard`: indices into the pod's constraints, counted first in
/// `spread` as [`topospread::spread::count`] counts them) whose global minimum a domain
/// holds that the pod can never use (its nodes tainted against the pod under
/// nodeTaintsPolicy Ignore, or outside its node affinity under nodeAffinityPolicy
/// Ignore): that count never rises, so the others stay within minimum + maxSkew.
pub fn minimum_held_by_unusable_nodes(
    pod: &Pod,
    hard: &[usize],
    spread: &PodSpread,
    snapshot: &Snapshot,
    features: Features,
    list: &FieldPath,
) -> Vec<Lint> {
    let mut lints = Vec::new();
    if !features.enabled(Feature::NodeInclusionPolicyInPodTopologySpread) {
        return lints;
    }
    let symbols = snapshot.symbols();
    for (j, &i) in hard.iter().enumerate() {
        let c = &pod.spread_constraints[i];
        let Some(counted) = spread.constraints.get(j) else {
            continue;
        };
        let counts = &counted.spread.counts;
        let Some(&min) = counts.values().min() else {
            continue;
        };
        let taints_counted = c.node_taints_policy != Some(NodeInclusionPolicy::Honor);
        let affinity_counted = c.node_affinity_policy == Some(NodeInclusionPolicy::Ignore);
        // Per domain: whether the pod may use some node, and why not otherwise.
        let mut usable: BTreeMap<String, (bool, bool, bool)> = BTreeMap::new();
        for n in snapshot.nodes() {
            let Some(value) = n.node.labels.get(c.topology_key) else {
                continue;
            };
            let entry = usable
                .entry(symbols.resolve(value).to_string())
                .or_insert((false, false, false));
            let tainted = find_untolerated_taint(&n.node.taints, &pod.tolerations, false, |t| {
                matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute)
            })
            .is_some();
            let outside =
                !pod.required_node_affinity
                    .matches(&n.node.labels, &n.node.name, symbols);
            entry.0 |= !tainted && !outside;
            entry.1 |= tainted;
            entry.2 |= outside && !tainted;
        }
        let held: Vec<(&str, bool)> = counts
            .iter()
            .filter(|(d, n)| **n == min && usable.get(*d).is_some_and(|u| !u.0))
            .filter_map(|(d, _)| {
                let (_, tainted, outside) = usable.get(d)?;
                match (*tainted && taints_counted, *outside && affinity_counted) {
                    (true, _) => Some((d.as_str(), true)),
                    (false, true) => Some((d.as_str(), false)),
                    _ => None,
                }
            })
            .collect();
        let others = counts.keys().any(|d| usable.get(d).is_some_and(|u| u.0));
        if held.is_empty() || !others {
            continue;
        }
        let by_taints = held.iter().any(|(_, t)| *t);
        let (policy, why) = if by_taints {
            ("nodeTaintsPolicy", "taints it does not tolerate")
        } else {
            (
                "nodeAffinityPolicy",
                "labels outside its nodeSelector/affinity",
            )
        };
        let domains: Vec<&str> = held.iter().map(|(d, _)| *d).collect();
        let key = symbols.resolve(c.topology_key);
        lints.push(Lint::new(
            LintCode::MinimumHeldByUnusableNodes,
            &list.index(i).child(policy),
            format!(
                "{} of {key:?} {} the global minimum ({min}) though the pod can use none of {} nodes ({why}, counted under {policy}: Ignore): the minimum never rises, so every other domain takes at most {} matching pods and the rest stay Pending; set {policy}: Honor",
                names(&domains),
                if domains.len() == 1 { "holds" } else { "hold" },
                if domains.len() == 1 { "its" } else { "their" },
                min.saturating_add(i64::from(c.max_skew)),
            ),
        ));
    }
    lints
}

/// A bound Pod as the cluster lints read it: the first in file order of the Pods they
/// read alike ([`LintPods`]), kept whole, whose findings are every such Pod's.
#[derive(Debug)]
pub struct LintPod {
    key: Option<String>,
    pod: core::Pod,
}

/// The [`LintPod`]s kept while Pods are read, one per key: a dump's pods are mostly
/// replicas of a few templates. Shared between reading threads.
#[derive(Debug, Default)]
pub struct LintPods {
    kept: Mutex<HashMap<String, Arc<LintPod>>>,
}

impl LintPods {
    /// What the cluster lints read of a bound Pod as read (before the API server's
    /// defaults): the Pod kept for its key when there is one already, else a copy not yet
    /// kept ([`LintPods::keep`]); `None` when it has no constraints (nothing to lint).
    pub fn read(&self, pod: &core::Pod) -> Option<Arc<LintPod>> {
        if !has_constraints(pod) {
            return None;
        }
        let key = lint_key("Pod", pod, is_bound(pod));
        if let Some(kept) = key.as_ref().and_then(|k| self.lock().get(k).cloned()) {
            return Some(kept);
        }
        let mut pod = pod.clone();
        // Named as [`first_pod`] names it.
        if pod.metadata.name.as_deref().is_none_or(str::is_empty) {
            pod.metadata.name = Some("<unnamed>".to_string());
        }
        Some(Arc::new(LintPod { key, pod }))
    }

    /// Called in file order with what [`LintPods::read`] gave: the Pod kept for its key,
    /// which is `pod` when it is the first.
    pub fn keep(&self, pod: Arc<LintPod>) -> Arc<LintPod> {
        let Some(key) = pod.key.clone() else {
            return pod;
        };
        Arc::clone(self.lock().entry(key).or_insert(pod))
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<LintPod>>> {
        // Nothing is left half-written by a panic while it is held.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether the pod has topology spread constraints of its own.
fn has_constraints(pod: &core::Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.topology_spread_constraints.as_ref())
        .is_some_and(|c| !c.is_empty())
}

/// Whether the pod names a node.
fn is_bound(pod: &core::Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_some_and(|n| !n.is_empty())
}

/// What the lints read of `first`: replicas of one template lint alike, and so do a
/// StatefulSet's pods, which differ in name, hostname, volumes and their `pod-name`
/// label. PodTopologySpread reads the pod's labels only through its constraints'
/// selectors and matchLabelKeys, and of the spec only the constraints, the node selector
/// and affinity, and the tolerations.
fn lint_key(kind: &str, first: &core::Pod, bound: bool) -> Option<String> {
    let spec = first.spec.as_ref();
    let constraints = spec.and_then(|s| s.topology_spread_constraints.as_ref());
    let read_labels: BTreeMap<&String, &String> = first
        .metadata
        .labels
        .iter()
        .flatten()
        .filter(|(k, _)| constraints.is_some_and(|cs| cs.iter().any(|c| reads_label(c, k))))
        .collect();
    serde_json::to_string(&(
        kind,
        &first.metadata.namespace,
        read_labels,
        constraints,
        spec.and_then(|s| s.node_selector.as_ref()),
        spec.and_then(|s| s.affinity.as_ref())
            .and_then(|a| a.node_affinity.as_ref()),
        spec.and_then(|s| s.tolerations.as_ref()),
        bound,
    ))
    .ok()
}

/// Whether `c` reads the pod's label `key`: its selector names it, or matchLabelKeys does.
fn reads_label(c: &core::TopologySpreadConstraint, key: &str) -> bool {
    let in_selector = c.label_selector.as_ref().is_some_and(|s| {
        s.match_labels.as_ref().is_some_and(|m| m.contains_key(key))
            || s.match_expressions.iter().flatten().any(|e| e.key == key)
    });
    in_selector || c.match_label_keys.iter().flatten().any(|k| k == key)
}

/// The first pod a workload's controller would create, as the scheduler receives it: the
/// template's labels and spec, the workload's namespace, a made-up name, and for a
/// Deployment a fresh `pod-template-hash` ([`FIRST_POD_TEMPLATE_HASH`]). For a Pod, the
/// Pod itself (named `<unnamed>` if it has no name).
pub fn first_pod(workload: &Workload) -> Option<core::Pod> {
    if let Workload::Pod(p) = workload {
        let mut pod = p.clone();
        if pod.metadata.name.as_deref().is_none_or(str::is_empty) {
            pod.metadata.name = Some("<unnamed>".to_string());
        }
        return Some(pod);
    }
    let (_, template) = workload.pod_template()?;
    let meta = workload.metadata();
    let mut labels: BTreeMap<String, String> = template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    if matches!(workload, Workload::Deployment(_)) {
        labels
            .entry("pod-template-hash".to_string())
            .or_insert_with(|| FIRST_POD_TEMPLATE_HASH.to_string());
    }
    let name = meta
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or("<unnamed>");
    Some(core::Pod {
        metadata: ObjectMeta {
            name: Some(format!("{name}-0")),
            namespace: meta.namespace.clone(),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        spec: template.spec.clone(),
        status: None,
    })
}

/// Up to three names, then how many more.
fn names(list: &[&str]) -> String {
    const SHOWN: usize = 3;
    let mut s = list
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if list.len() > SHOWN {
        s.push_str(&format!(" and {} more", list.len() - SHOWN));
    }
    s
}
