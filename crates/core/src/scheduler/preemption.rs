//! DefaultPreemption's PostFilter (upstream's `preemption.Evaluator` with the default
//! plugin's victim selection): when no node fits, find nodes where evicting
//! lower-priority pods makes room, pick the best by upstream's ordered criteria, and
//! nominate it. Victims whose eviction would break a PodDisruptionBudget are reprieved
//! first, and the node with the fewest such violations wins.

use super::fit_error::{Diagnosis, filter_histogram_message};
use super::nominator::{self, Nominator};
use crate::api::Pod;
use crate::config::{DefaultPreemptionArgs, ProfileConfig};
use crate::framework::{Code, ConfigError, CycleState, Profile, Status};
use crate::rng::Rng;
use crate::snapshot::{NodeId, NodeInfo, PodId, Snapshot};

/// `minCandidateNodesPercentage` default.
pub(crate) const MIN_CANDIDATE_NODES_PERCENTAGE: usize = 10;
/// `minCandidateNodesAbsolute` default.
pub(crate) const MIN_CANDIDATE_NODES_ABSOLUTE: usize = 100;
/// Status of a node where nothing can be evicted.
pub(crate) const NO_VICTIMS: &str = "No preemption victims found for incoming pod";
/// Status of nodes preemption cannot help (UnschedulableAndUnresolvable ones).
pub(crate) const NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";

/// How many candidate nodes preemption looks for (`DefaultPreemptionArgs`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Limits {
    /// `minCandidateNodesPercentage`.
    percentage: usize,
    /// `minCandidateNodesAbsolute`.
    absolute: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            percentage: MIN_CANDIDATE_NODES_PERCENTAGE,
            absolute: MIN_CANDIDATE_NODES_ABSOLUTE,
        }
    }
}

impl Limits {
    /// Reads DefaultPreemption's `pluginConfig` entry of `profile`, if any, with v1
    /// defaulting and upstream's `ValidateDefaultPreemptionArgs` ranges.
    pub(super) fn from_profile(profile: &ProfileConfig, index: usize) -> Result<Self, ConfigError> {
        let Some((i, pc)) = profile
            .plugin_config
            .iter()
            .enumerate()
            .find(|(_, pc)| pc.name == "DefaultPreemption")
        else {
            return Ok(Self::default());
        };
        let field = format!("profiles[{index}].pluginConfig[{i}].args");
        let args: DefaultPreemptionArgs = match &pc.args {
            None | Some(serde_json::Value::Null) => DefaultPreemptionArgs::default(),
            Some(v) => crate::config::decode_strict(v, &field)?,
        };
        let percentage = args.min_candidate_nodes_percentage;
        let absolute = args.min_candidate_nodes_absolute;
        let invalid = |name: &str, value: i32, why: &str| ConfigError::PluginArgs {
            field: format!("{field}.{name}"),
            message: format!("Invalid value: {value}: {why}"),
        };
        if !(0..=100).contains(&percentage) {
            return Err(invalid(
                "minCandidateNodesPercentage",
                percentage,
                "not in valid range [0, 100]",
            ));
        }
        if absolute < 0 {
            return Err(invalid(
                "minCandidateNodesAbsolute",
                absolute,
                "not in valid range [0, inf)",
            ));
        }
        if percentage == 0 && absolute == 0 {
            return Err(ConfigError::PluginArgs {
                field: format!("{field}.minCandidateNodesPercentage"),
                message: "Invalid value: 0: minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero".into(),
            });
        }
        Ok(Self {
            percentage: usize::try_from(percentage).unwrap_or(0),
            absolute: usize::try_from(absolute).unwrap_or(0),
        })
    }

    /// `calculateNumCandidates`.
    fn num_candidates(self, nodes: usize) -> usize {
        (nodes * self.percentage / 100)
            .max(self.absolute)
            .min(nodes)
    }
}

/// A preemption DefaultPreemption decided on: evict `victims` and nominate `node`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Preemption {
    /// The nominated node.
    pub node: NodeId,
    /// The pods to evict, most important first.
    pub victims: Vec<PodId>,
    /// Lower-priority pending pods that were nominated to `node` and no longer are
    /// (upstream's `getLowerPriorityNominatedPods`, cleared by `prepareCandidate`): the
    /// caller clears their `status.nominatedNodeName`.
    pub cleared_nominations: Vec<PodId>,
}

/// Why DefaultPreemption nominated nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct NotPreempted {
    /// The PostFilter message, prefixed `preemption: `.
    pub(super) message: String,
    /// No node could be made to fit: the pod's nomination is cleared (upstream returns
    /// `NewPostFilterResultWithNominatedNode("")`). Otherwise (the pod is not eligible,
    /// e.g. its victims are still terminating) the nomination stays.
    pub(super) clears_nomination: bool,
}

impl Preemption {
    /// DefaultPreemption's message when it found a node (kubernetes PR 140180, from
    /// 1.37): `preemption: found a potential placement for pod on node N, preempting K
    /// victims`.
    pub(super) fn placement_message(&self, snapshot: &Snapshot) -> String {
        format!(
            "preemption: found a potential placement for pod on node {}, preempting {} victims",
            snapshot.node(self.node).node.name,
            self.victims.len()
        )
    }
}

/// What `preempt` needs from the failed cycle.
pub(super) struct Failed<'a> {
    pub(super) state: &'a CycleState,
    /// Filter's rejections.
    pub(super) statuses: &'a [(NodeId, Status)],
    /// The status every other node got (a PreFilter rejection), if any.
    pub(super) absent: Option<&'a Status>,
    /// The pods nominated so far: Filter on a candidate node counts those of equal or
    /// higher priority (`RunFilterPluginsWithNominatedPods`), so freed room is never
    /// promised twice.
    pub(super) nominator: &'a Nominator,
    /// The node the pod itself is nominated to, if the scheduler knows one.
    pub(super) nominated: Option<NodeId>,
}

/// A pod's start as `GetPodStartTime` reads it: `status.startTime`, or "now" (later
/// than every recorded start) for a pod that has not started.
fn start_time(pod: Option<&Pod>) -> i128 {
    pod.and_then(|p| p.start_time).unwrap_or(i128::MAX)
}

/// `MoreImportantPod`: higher priority, then earlier start; pods that tie on both keep
/// their arrival order.
fn more_important(snapshot: &Snapshot, a: PodId, b: PodId) -> std::cmp::Ordering {
    let (pa, pb) = (snapshot.pod(a), snapshot.pod(b));
    let prio = |p: Option<&Pod>| p.map_or(0, |p| p.priority);
    prio(pb)
        .cmp(&prio(pa))
        .then(start_time(pa).cmp(&start_time(pb)))
        .then(a.cmp(&b))
}

/// `filterPodsWithPDBViolation`: splits `victims` (in order) into those whose eviction
/// would take a PodDisruptionBudget below zero allowed disruptions and the others.
/// Each covered pod not yet in the budget's `disruptedPods` uses one disruption.
fn split_by_pdb_violation(victims: &[PodId], snapshot: &Snapshot) -> (Vec<PodId>, Vec<PodId>) {
    let budgets: Vec<_> = snapshot.workloads().disruption_budgets.iter().collect();
    let mut allowed: Vec<i64> = budgets
        .iter()
        .map(|b| i64::from(b.disruptions_allowed))
        .collect();
    let (mut violating, mut fine) = (Vec::new(), Vec::new());
    for &id in victims {
        let Some(pod) = snapshot.pod(id) else {
            continue;
        };
        let mut violated = false;
        for (b, left) in budgets.iter().zip(allowed.iter_mut()) {
            if !b.covers(pod.namespace, &pod.labels, snapshot.symbols())
                || b.disrupted_pods.contains(&pod.name)
            {
                continue;
            }
            *left -= 1;
            if *left < 0 {
                violated = true;
            }
        }
        if violated {
            violating.push(id);
        } else {
            fine.push(id);
        }
    }
    (violating, fine)
}

/// `PodEligibleToPreemptOthers`: a pod with `preemptionPolicy: Never` never preempts,
/// and one whose nominated node (if Filter did not find it unresolvable) already has a
/// lower-priority pod terminating because of preemption waits for it instead.
fn eligible(snapshot: &Snapshot, pod: &Pod, failed: &Failed<'_>) -> Result<(), &'static str> {
    if pod.preemption_never {
        return Err("not eligible due to preemptionPolicy=Never.");
    }
    // Upstream reads the pod's `status.nominatedNodeName`; the nomination the scheduler
    // made in memory is newer than any status the watch has delivered yet.
    let Some(nominated) = failed.nominated.or_else(|| {
        pod.nominated_node_name
            .as_deref()
            .and_then(|n| snapshot.node_id(n))
    }) else {
        return Ok(());
    };
    let code = failed
        .statuses
        .iter()
        .find(|(id, _)| *id == nominated)
        .map(|(_, s)| s.code())
        .or(failed.absent.map(Status::code));
    if code == Some(Code::UnschedulableAndUnresolvable) {
        return Ok(());
    }
    let waiting = snapshot.node(nominated).pods().iter().any(|&id| {
        snapshot
            .pod(id)
            .is_some_and(|p| p.priority < pod.priority && p.terminating_by_preemption)
    });
    if waiting {
        return Err("not eligible due to a terminating pod on the nominated node.");
    }
    Ok(())
}

/// Whether a victim leaves the simulated node or comes back to it.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) enum Change {
    Remove,
    Add,
}

/// Applies a victim's removal or return to the node copy and to every active PreFilter
/// plugin's state (`RemovePod` / `AddPod`).
#[allow(clippy::too_many_arguments)]
pub(super) fn apply(
    change: Change,
    profile: &Profile,
    state: &mut CycleState,
    pod: &Pod,
    node: &mut NodeInfo,
    id: PodId,
    victim: &Pod,
    snapshot: &Snapshot,
) -> Result<(), Status> {
    match change {
        Change::Remove => node.remove_pod(id, victim),
        Change::Add => node.add_pod(id, victim),
    }
    for pl in &profile.pre_filter {
        if state.is_filter_skipped(pl.name()) {
            continue;
        }
        let s = match change {
            Change::Remove => pl.remove_pod(state, pod, victim, node, snapshot),
            Change::Add => pl.add_pod(state, pod, victim, node, snapshot),
        };
        if !s.is_success() {
            return Err(s);
        }
    }
    Ok(())
}

/// Victims on one node, most important first, and how many of them violate a
/// PodDisruptionBudget.
type Victims = (Vec<PodId>, usize);

/// `SelectVictimsOnNode`: remove every lower-priority pod; if the pod then fits,
/// reprieve as many as possible, PDB-violating ones first, most important first within
/// each group. Fitting is Filter with the node's nominated pods of equal or higher
/// priority counted (`RunFilterPluginsWithNominatedPods`).
fn select_victims(
    profile: &Profile,
    nominator: &Nominator,
    state: &CycleState,
    pod: &Pod,
    node: NodeId,
    snapshot: &Snapshot,
) -> Result<Victims, Status> {
    let mut potential: Vec<PodId> = snapshot
        .node(node)
        .pods()
        .iter()
        .copied()
        .filter(|&id| snapshot.pod(id).is_some_and(|p| p.priority < pod.priority))
        .collect();
    // Nothing to evict: the verdict needs no copy of the node or of the cycle state.
    if potential.is_empty() {
        return Err(Status::new(Code::UnschedulableAndUnresolvable, NO_VICTIMS));
    }
    let mut state = state.clone();
    let mut info = snapshot.node(node).clone();
    for &id in &potential {
        if let Some(v) = snapshot.pod(id) {
            apply(
                Change::Remove,
                profile,
                &mut state,
                pod,
                &mut info,
                id,
                v,
                snapshot,
            )?;
        }
    }
    let fits = |state: &CycleState, info: &NodeInfo| {
        nominator::filter(profile, nominator, state, pod, info, snapshot)
    };
    let s = fits(&state, &info);
    if !s.is_success() {
        return Err(s);
    }
    potential.sort_by(|a, b| more_important(snapshot, *a, *b));
    let (violating, fine) = split_by_pdb_violation(&potential, snapshot);
    let first_fine = violating.len();
    let mut victims = Vec::new();
    let mut violations = 0;
    for (i, id) in violating.iter().chain(&fine).copied().enumerate() {
        let Some(v) = snapshot.pod(id) else { continue };
        apply(
            Change::Add,
            profile,
            &mut state,
            pod,
            &mut info,
            id,
            v,
            snapshot,
        )?;
        if !fits(&state, &info).is_success() {
            apply(
                Change::Remove,
                profile,
                &mut state,
                pod,
                &mut info,
                id,
                v,
                snapshot,
            )?;
            victims.push(id);
            if i < first_fine {
                violations += 1;
            }
        }
    }
    if first_fine != 0 && !fine.is_empty() {
        victims.sort_by(|a, b| more_important(snapshot, *a, *b));
    }
    Ok((victims, violations))
}

/// `pickOneNodeForPreemption`: fewest PodDisruptionBudget violations, then lowest top
/// victim priority, then lowest priority sum, then fewest victims, then the latest
/// earliest start among the top-priority victims, then the first candidate.
fn pick(candidates: &[(NodeId, Victims)], snapshot: &Snapshot) -> Option<usize> {
    let prio = |id: &PodId| i128::from(snapshot.pod(*id).map_or(0, |p| p.priority));
    type Key = fn(&Victims, &dyn Fn(&PodId) -> i128, &Snapshot) -> i128;
    let keys: [Key; 5] = [
        |(_, violations), _, _| -i128::try_from(*violations).unwrap_or(i128::MAX),
        |(v, _), prio, _| -v.first().map_or(i128::MIN, prio),
        |(v, _), prio, _| {
            -v.iter()
                .map(|id| prio(id) + i128::from(i32::MAX) + 1)
                .sum::<i128>()
        },
        |(v, _), _, _| -i128::try_from(v.len()).unwrap_or(i128::MAX),
        |(v, _), prio, snapshot| {
            // GetEarliestPodStartTime: the earliest start among the top-priority victims.
            let top = v.iter().map(prio).max().unwrap_or(0);
            v.iter()
                .filter(|id| prio(id) == top)
                .map(|id| start_time(snapshot.pod(*id)))
                .min()
                .unwrap_or(i128::MIN)
        },
    ];
    let mut left: Vec<usize> = (0..candidates.len()).collect();
    for key in keys {
        if left.len() <= 1 {
            break;
        }
        let scored: Vec<(usize, i128)> = left
            .iter()
            .map(|&i| (i, key(&candidates[i].1, &prio, snapshot)))
            .collect();
        let best = scored.iter().map(|s| s.1).max().unwrap_or(0);
        left = scored
            .into_iter()
            .filter(|s| s.1 == best)
            .map(|s| s.0)
            .collect();
    }
    left.first().copied()
}

/// DefaultPreemption's PostFilter (upstream's `Evaluator.Preempt`). `Ok` nominates a
/// node; `Err` says why not, and whether the pod's nomination is cleared.
pub(super) fn preempt(
    profile: &Profile,
    snapshot: &Snapshot,
    pod: &Pod,
    failed: &Failed<'_>,
    limits: Limits,
    rng: &mut Rng,
) -> Result<Preemption, NotPreempted> {
    if let Err(why) = eligible(snapshot, pod, failed) {
        return Err(NotPreempted {
            message: format!("preemption: {why}"),
            clears_nomination: false,
        });
    }
    let none_fits = |message: String| NotPreempted {
        message: format!("preemption: {message}"),
        clears_nomination: true,
    };
    let all = snapshot.nodes().len();
    let absent_code = failed.absent.map(Status::code);
    let mut codes: Vec<Option<Code>> = vec![absent_code; all];
    for (id, s) in failed.statuses {
        if let Some(slot) = codes.get_mut(id.index()) {
            *slot = Some(s.code());
        }
    }
    let potential: Vec<NodeId> = snapshot
        .nodes()
        .iter()
        .zip(codes)
        .filter(|(_, code)| *code == Some(Code::Unschedulable))
        .map(|(n, _)| n.id)
        .collect();
    let not_helpful = Some(Status::new(Code::UnschedulableAndUnresolvable, NOT_HELPFUL));
    if potential.is_empty() {
        let d = Diagnosis {
            absent: not_helpful,
            ..Diagnosis::default()
        };
        return Err(none_fits(filter_histogram_message(all, &d)));
    }
    let offset = rng.below(potential.len());
    let wanted = limits.num_candidates(potential.len());
    let mut candidates = Vec::new();
    let mut statuses = Vec::new();
    for i in 0..potential.len() {
        let node = potential[(offset + i) % potential.len()];
        match select_victims(profile, failed.nominator, failed.state, pod, node, snapshot) {
            Ok(v) if !v.0.is_empty() => {
                candidates.push((node, v));
                if candidates.len() >= wanted {
                    break;
                }
            }
            Ok(_) => statuses.push(Status::error(format!(
                "expected at least one victim pod on node {:?}",
                snapshot.node(node).node.name
            ))),
            Err(s) => statuses.push(s),
        }
    }
    match pick(&candidates, snapshot) {
        Some(i) => {
            let (node, (victims, _)) = candidates.swap_remove(i);
            Ok(Preemption {
                node,
                victims,
                cleared_nominations: Vec::new(),
            })
        }
        None => {
            let d = Diagnosis {
                explicit: statuses,
                absent: not_helpful,
                pre_filter_msg: None,
            };
            Err(none_fits(filter_histogram_message(all, &d)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PluginConfig;

    fn profile_with(args: serde_json::Value) -> ProfileConfig {
        ProfileConfig {
            plugin_config: vec![PluginConfig {
                name: "DefaultPreemption".into(),
                args: Some(args),
            }],
            ..ProfileConfig::default()
        }
    }

    #[test]
    fn candidate_limits_default_read_and_validate() {
        let d = Limits::from_profile(&ProfileConfig::default(), 0).expect("defaults");
        assert_eq!(d, Limits::default());
        assert_eq!(d.num_candidates(5000), 500);
        assert_eq!(d.num_candidates(50), 50);
        let l = Limits::from_profile(
            &profile_with(serde_json::json!({
                "minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 2
            })),
            0,
        )
        .expect("valid");
        assert_eq!(l.num_candidates(50), 2);
        let e = Limits::from_profile(
            &profile_with(serde_json::json!({
                "minCandidateNodesPercentage": 101
            })),
            0,
        )
        .expect_err("out of range");
        assert_eq!(
            e.to_string(),
            "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"
        );
        assert!(
            Limits::from_profile(
                &profile_with(serde_json::json!({
                    "minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0
                })),
                0
            )
            .is_err()
        );
        assert!(Limits::from_profile(&profile_with(serde_json::json!({"bogus": 1})), 0).is_err());
    }

    #[test]
    fn pdb_split_counts_down_each_budget() {
        use crate::builders::{NodeBuilder, PodBuilder};
        let mut snapshot = crate::Snapshot::new();
        let node = crate::convert::node(&NodeBuilder::new("n1").build(), snapshot.symbols_mut())
            .expect("node");
        snapshot.add_node(node).expect("adds");
        let pdb: k8s_openapi::api::policy::v1::PodDisruptionBudget =
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "db", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": "db"}}},
                "status": {"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2,
                           "expectedPods": 3}
            }))
            .expect("pdb");
        let ns = snapshot.symbols_mut().intern("default");
        let budget = crate::api::DisruptionBudget::from_k8s(&pdb, ns, snapshot.symbols_mut());
        snapshot.workloads_mut().disruption_budgets.add(budget);
        for pod in [
            PodBuilder::new("a").label("app", "db").node("n1").build(),
            PodBuilder::new("b").label("app", "db").node("n1").build(),
            PodBuilder::new("c").node("n1").build(),
        ] {
            let pod = crate::convert::pod(&pod, snapshot.symbols_mut()).expect("pod");
            snapshot.add_pod(pod).expect("adds");
        }
        let ids: Vec<PodId> = snapshot.pods().map(|(id, _)| id).collect();
        let (violating, fine) = split_by_pdb_violation(&ids, &snapshot);
        // a uses the one allowed disruption, b would take the budget below zero; c has
        // no labels, so no budget covers it.
        assert_eq!(violating, vec![ids[1]]);
        assert_eq!(fine, vec![ids[0], ids[2]]);
    }

    /// Freed room is promised once: while the first preemptor's victim is still being
    /// deleted, an equal-priority second preemptor finds no candidate on that node
    /// (`SelectVictimsOnNode` runs `RunFilterPluginsWithNominatedPods`), and a pod whose
    /// status names a node is nominated there when it is added.
    #[test]
    fn a_nominated_node_is_not_promised_to_a_second_preemptor() {
        use super::super::tests::{pod, scheduler, snapshot};
        use crate::scheduler::Attempt;
        use serde_json::json;
        use std::time::Duration;
        let mut s = snapshot(1);
        let mut sched = scheduler(&mut s);
        let now = Duration::ZERO;
        let p = |s: &mut Snapshot,
                 name: &str,
                 priority: i32,
                 node: Option<&str>,
                 named: Option<&str>| {
            let mut v = json!({"metadata": {"name": name, "uid": name},
                "spec": {"priority": priority,
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]}});
            if let Some(n) = node {
                v["spec"]["nodeName"] = json!(n);
            }
            if let Some(n) = named {
                v["status"] = json!({"nominatedNodeName": n});
            }
            pod(s, v)
        };
        let low = p(&mut s, "low", 0, Some("n0"), None);
        let victim = s.add_pod(low).expect("adds");
        for name in ["a", "b"] {
            let pending = p(&mut s, name, 1000, None, None);
            sched
                .add_pod(&mut s, pending, now)
                .expect("adds")
                .expect("queued");
        }
        let Some(Attempt::Unschedulable {
            pod: a,
            preemption: Some(first),
            ..
        }) = sched.schedule_next(&mut s, now)
        else {
            panic!("the first pod preempts")
        };
        assert_eq!(
            (first.node, first.victims.clone()),
            (NodeId(0), vec![victim])
        );
        assert_eq!(sched.nominated_node(a), Some(NodeId(0)));
        match sched.schedule_next(&mut s, now) {
            Some(Attempt::Unschedulable {
                pod,
                preemption: None,
                message,
            }) => {
                assert_ne!(pod, a);
                assert!(
                    message.contains("preemption: 0/1 nodes are available"),
                    "{message}"
                );
                assert_eq!(sched.nominated_node(pod), None);
            }
            other => panic!("{other:?}"),
        }
        // The first keeps its nomination; a pod whose status names n0 is nominated.
        assert_eq!(sched.nominated_node(a), Some(NodeId(0)));
        let named = p(&mut s, "c", 1000, None, Some("n0"));
        let c = sched
            .add_pod(&mut s, named, now)
            .expect("adds")
            .expect("queued");
        assert_eq!(sched.nominated_node(c), Some(NodeId(0)));
    }
}
