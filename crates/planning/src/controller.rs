//! The workload controllers' arithmetic, shared by every command that acts as one:
//! which pods a ReplicaSet removes first when it scales down (`ActivePodsWithRanks`
//! and `getPodsToDelete` in kube-controller-manager), and how far a Deployment's
//! rolling update may move in one step (`maxSurge` / `maxUnavailable`).

use std::cmp::Ordering;

/// The annotation the ReplicaSet controller ranks pods by when it scales down.
pub const DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";

/// A `controller.kubernetes.io/pod-deletion-cost` value as the ReplicaSet controller
/// reads it (`GetDeletionCostFromPodAnnotations`): a base-10 int32 without a plus sign,
/// leading zeros or spaces; `None` for anything else (which the controller ranks as 0).
pub fn parse_deletion_cost(value: &str) -> Option<i32> {
    let first = value.bytes().next()?;
    if first == b'-' || value == "0" || (first.is_ascii_digit() && first != b'0') {
        value.parse().ok()
    } else {
        None
    }
}

/// A pod's phase as the deletion order ranks it: Pending before Unknown before Running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PhaseRank {
    /// Pending (or no phase yet).
    Pending,
    /// Unknown.
    Unknown,
    /// Running.
    Running,
}

impl PhaseRank {
    /// From `status.phase`; anything else than Unknown or Running ranks as Pending.
    pub fn from_phase(phase: Option<&str>) -> Self {
        match phase {
            Some("Running") => Self::Running,
            Some("Unknown") => Self::Unknown,
            _ => Self::Pending,
        }
    }
}

/// What the ReplicaSet controller looks at when it picks pods to delete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeletionCandidate {
    /// The pod's name (the last tie-break, so the order is reproducible).
    pub name: String,
    /// `metadata.uid` (empty when absent): under LogarithmicScaleDown, pods whose times
    /// fall in one log2 bucket go in UID order.
    pub uid: String,
    /// The node it is bound to, if any.
    pub node: Option<String>,
    /// Its phase.
    pub phase: PhaseRank,
    /// Its Ready condition is True.
    pub ready: bool,
    /// `controller.kubernetes.io/pod-deletion-cost` (0 when absent or not an integer).
    pub deletion_cost: i32,
    /// When it last became Ready (seconds since the epoch), if known.
    pub ready_since: Option<i64>,
    /// The highest restart count of its containers.
    pub restarts: i32,
    /// `metadata.creationTimestamp` (seconds since the epoch), if known; a pod the
    /// simulation created is newer than every pod of the input.
    pub created: Option<i64>,
}

impl DeletionCandidate {
    /// What the deletion order reads of an existing pod (a cost that is not an
    /// integer reads as 0, as `GetDeletionCostFromPodAnnotations` fails and the
    /// controller ignores the error).
    pub fn of_pod(p: &k8s_openapi::api::core::v1::Pod) -> Self {
        let status = p.status.as_ref();
        let ready = status
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "Ready"));
        Self {
            name: p.metadata.name.clone().unwrap_or_default(),
            uid: p.metadata.uid.clone().unwrap_or_default(),
            node: p
                .spec
                .as_ref()
                .and_then(|s| s.node_name.clone())
                .filter(|n| !n.is_empty()),
            phase: PhaseRank::from_phase(status.and_then(|s| s.phase.as_deref())),
            ready: ready.is_some_and(|c| c.status == "True"),
            deletion_cost: p
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(DELETION_COST_ANNOTATION))
                .and_then(|v| parse_deletion_cost(v))
                .unwrap_or(0),
            ready_since: ready
                .filter(|c| c.status == "True")
                .and_then(|c| c.last_transition_time.as_ref())
                .map(|t| t.0.as_second()),
            restarts: status
                .and_then(|s| s.container_statuses.as_ref())
                .and_then(|c| c.iter().map(|c| c.restart_count).max())
                .unwrap_or(0),
            created: p
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.as_second()),
        }
    }

    /// A pod the simulation is creating: Pending, unbound, newer than every input pod.
    pub fn created_pending(name: &str) -> Self {
        Self {
            name: name.to_string(),
            uid: String::new(),
            node: None,
            phase: PhaseRank::Pending,
            ready: false,
            deletion_cost: 0,
            ready_since: None,
            restarts: 0,
            created: None,
        }
    }
}

/// How the deletion order compares ready and creation times.
///
/// Upstream (`ActivePodsWithRanks.Less`) compares them exactly while LogarithmicScaleDown
/// is off or `Now` is zero, and otherwise by the log2 bucket of the time elapsed since.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeScale {
    /// Later times first (`afterOrZero`).
    #[default]
    Exact,
    /// LogarithmicScaleDown (kubernetes PR 99212, KEP-2185; alpha 1.21, on by default
    /// from 1.22, GA 1.31): shorter elapsed-time buckets first, one bucket in UID order.
    Logarithmic {
        /// The controller's `Now`, in nanoseconds since the epoch.
        now_ns: i128,
    },
}

/// The indices of `pods` in the order the ReplicaSet controller deletes them, with
/// times compared exactly ([`deletion_order_with`] and [`TimeScale::Exact`]).
pub fn deletion_order(pods: &[DeletionCandidate], related: &[Option<String>]) -> Vec<usize> {
    deletion_order_with(pods, related, TimeScale::Exact)
}

/// The indices of `pods` in the order the ReplicaSet controller deletes them.
///
/// `related` are every active pod of the same owner family (for a Deployment, the pods
/// of all its ReplicaSets), whose count per node is each candidate's rank: more
/// co-located pods go first. Then, as `ActivePodsWithRanks.Less`: unassigned before
/// assigned, Pending before Unknown before Running, not ready before ready, lower
/// deletion cost first, higher rank first, ready more recently first, more restarts
/// first, created more recently first; `times` says how the two times compare. Pods
/// upstream ranks equal keep a reproducible order: by name, descending.
pub fn deletion_order_with(
    pods: &[DeletionCandidate],
    related: &[Option<String>],
    times: TimeScale,
) -> Vec<usize> {
    let mut per_node: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for n in related.iter().flatten() {
        *per_node.entry(n.as_str()).or_default() += 1;
    }
    let ranks: Vec<usize> = pods
        .iter()
        .map(|p| {
            p.node
                .as_deref()
                .map_or(0, |n| per_node.get(n).copied().unwrap_or(0))
        })
        .collect();
    let mut order: Vec<usize> = (0..pods.len()).collect();
    merge_sort(&mut order, &|&a, &b| {
        let (x, y) = (&pods[a], &pods[b]);
        let first = x
            .node
            .is_some()
            .cmp(&y.node.is_some())
            .then(x.phase.cmp(&y.phase))
            .then(x.ready.cmp(&y.ready))
            .then(x.deletion_cost.cmp(&y.deletion_cost))
            .then(ranks[b].cmp(&ranks[a]));
        if first != Ordering::Equal {
            return first;
        }
        let ready = if x.ready && y.ready {
            compare_times(x.ready_since, y.ready_since, x, y, times)
        } else {
            None
        };
        let rest = ready.unwrap_or_else(|| {
            y.restarts.cmp(&x.restarts).then_with(|| {
                compare_times(x.created, y.created, x, y, times).unwrap_or(Ordering::Equal)
            })
        });
        rest.then_with(|| y.name.cmp(&x.name))
    });
    order
}

/// One time key of `ActivePodsWithRanks.Less` (seconds since the epoch; `None` is the
/// zero time): `None` when the times are equal (the next key decides); else the
/// verdict, exact (later first, the zero time before all) or by log2 bucket, where one
/// bucket is decided by UID alone (equal UIDs leave the pods equal, as upstream).
fn compare_times(
    a: Option<i64>,
    b: Option<i64>,
    x: &DeletionCandidate,
    y: &DeletionCandidate,
    times: TimeScale,
) -> Option<Ordering> {
    if a == b {
        return None;
    }
    Some(match (times, a, b) {
        (TimeScale::Logarithmic { now_ns }, Some(a), Some(b)) => {
            match log2_bucket(now_ns, a).cmp(&log2_bucket(now_ns, b)) {
                Ordering::Equal => x.uid.cmp(&y.uid),
                other => other,
            }
        }
        _ => newer_first(a, b),
    })
}

/// `logarithmicRankDiff`'s rank of a time: the integer part of log2 of the nanoseconds
/// elapsed from it to `now_ns`, or -1 when none have.
fn log2_bucket(now_ns: i128, at_secs: i64) -> i64 {
    let elapsed = now_ns - i128::from(at_secs) * 1_000_000_000;
    if elapsed <= 0 {
        return -1;
    }
    // Duration is an int64 in Go: a span beyond it saturates, as a subtraction there does.
    let elapsed = i64::try_from(elapsed).unwrap_or(i64::MAX);
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let bucket = go_log2(elapsed as f64) as i64;
    bucket
}

/// Go's `math.Log2`: exact for powers of two (its `Frexp` special case), else
/// `log(frac)/ln 2 + exp`, so bucket edges fall where the controller's do.
fn go_log2(x: f64) -> f64 {
    let bits = x.to_bits();
    let exp_bits = i32::try_from((bits >> 52) & 0x7ff).unwrap_or(0);
    if exp_bits == 0 || exp_bits == 0x7ff {
        return x.log2();
    }
    // x = frac * 2^exp with frac in [0.5, 1).
    let exp = exp_bits - 1022;
    let frac = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    if frac == 0.5 {
        return f64::from(exp - 1);
    }
    frac.ln() * (1.0 / std::f64::consts::LN_2) + f64::from(exp)
}

/// A stable merge sort that, unlike `sort_by`, accepts a comparison that is not a
/// total order: upstream's is not (the UID tie-break within a bucket skips the later
/// keys, which pods with equal times still reach), and the order must not panic.
fn merge_sort(v: &mut [usize], cmp: &dyn Fn(&usize, &usize) -> Ordering) {
    if v.len() <= 1 {
        return;
    }
    let mid = v.len() / 2;
    merge_sort(&mut v[..mid], cmp);
    merge_sort(&mut v[mid..], cmp);
    let (left, right) = (v[..mid].to_vec(), v[mid..].to_vec());
    let (mut i, mut j) = (0, 0);
    for slot in v.iter_mut() {
        let take_left =
            j >= right.len() || (i < left.len() && cmp(&right[j], &left[i]) != Ordering::Less);
        if take_left {
            *slot = left[i];
            i += 1;
        } else {
            *slot = right[j];
            j += 1;
        }
    }
}

/// Later times first; an unknown time counts as the newest (a pod made by the
/// simulation has no timestamp and is the newest of all).
fn newer_first(a: Option<i64>, b: Option<i64>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => b.cmp(&a),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// `maxSurge` or `maxUnavailable`: a count or a percentage of the replicas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOrPercent {
    /// A number of pods.
    Int(i32),
    /// A percentage of `spec.replicas`.
    Percent(i32),
}

impl IntOrPercent {
    /// The count for `replicas`, rounding a percentage up or down
    /// (`GetScaledValueFromIntOrPercent`).
    pub fn scaled(self, replicas: i32, round_up: bool) -> i32 {
        match self {
            Self::Int(n) => n,
            Self::Percent(p) => {
                let product = i64::from(p) * i64::from(replicas);
                let v = if round_up {
                    (product + 99).div_euclid(100)
                } else {
                    product.div_euclid(100)
                };
                i32::try_from(v).unwrap_or(i32::MAX)
            }
        }
    }
}

/// A Deployment's update strategy, resolved against its replicas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Every old pod is removed before any new one is created.
    Recreate,
    /// New pods up to `replicas + max_surge`, old ones removed while at least
    /// `replicas - max_unavailable` pods are available.
    RollingUpdate {
        /// Pods above `replicas` allowed during the update.
        max_surge: i32,
        /// Pods below `replicas` allowed to be unavailable.
        max_unavailable: i32,
    },
}

impl Strategy {
    /// `ResolveFenceposts`: surge rounds up, unavailable rounds down, and both zero
    /// means one unavailable pod (or the update could never move); `MaxUnavailable`
    /// then caps it at `replicas` (0 for 0 replicas).
    pub fn rolling(max_surge: IntOrPercent, max_unavailable: IntOrPercent, replicas: i32) -> Self {
        let surge = max_surge.scaled(replicas, true).max(0);
        let mut unavailable = max_unavailable.scaled(replicas, false).max(0);
        if surge == 0 && unavailable == 0 {
            unavailable = 1;
        }
        unavailable = unavailable.min(replicas.max(0));
        Self::RollingUpdate {
            max_surge: surge,
            max_unavailable: unavailable,
        }
    }
}

/// Where a rollout stands: the new ReplicaSet and the old ones (oldest first), each
/// with its replicas and how many of them are available.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RolloutState {
    /// `spec.replicas` of the Deployment.
    pub replicas: i32,
    /// The new ReplicaSet's (replicas, available).
    pub new: (i32, i32),
    /// Each old ReplicaSet's (replicas, available), oldest first.
    pub old: Vec<(i32, i32)>,
}

/// One move of the deployment controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RolloutStep {
    /// Scale the new ReplicaSet up to this many replicas.
    ScaleUpNew(i32),
    /// Scale old ReplicaSet `index` down to this many replicas.
    ScaleDownOld {
        /// Its index in [`RolloutState::old`].
        index: usize,
        /// Its replicas after the step.
        to: i32,
    },
}

/// The deployment controller's next moves from `state`, one sync of `rolloutRolling`
/// (or `rolloutRecreate`): the new ReplicaSet scaled up as far as surge allows
/// (`reconcileNewReplicaSet`, `NewRSNewReplicas`), or else the old ones scaled down as
/// far as availability allows (`reconcileOldReplicaSets`: `cleanupUnhealthyReplicas`,
/// then `scaleDownOldReplicaSetsForRollingUpdate`, oldest first). Counts are
/// ReplicaSets' `spec.replicas` and `status.availableReplicas`, so the old ones shrink
/// while new pods are not yet scheduled. Empty when the rollout is done or cannot move
/// until more pods become available.
pub fn rollout_steps(state: &RolloutState, strategy: Strategy) -> Vec<RolloutStep> {
    let old_total: i32 = state.old.iter().map(|o| o.0).sum();
    let mut steps = Vec::new();
    match strategy {
        Strategy::Recreate => {
            if old_total > 0 {
                for (index, o) in state.old.iter().enumerate() {
                    if o.0 > 0 {
                        steps.push(RolloutStep::ScaleDownOld { index, to: 0 });
                    }
                }
            } else if state.new.0 != state.replicas {
                steps.push(RolloutStep::ScaleUpNew(state.replicas));
            }
        }
        Strategy::RollingUpdate {
            max_surge,
            max_unavailable,
        } => {
            let mut new = state.new.0;
            if new > state.replicas {
                new = state.replicas;
                steps.push(RolloutStep::ScaleUpNew(new));
            } else if new < state.replicas {
                let total = old_total + new;
                let max_total = state.replicas + max_surge;
                if total < max_total {
                    let up = (max_total - total).min(state.replicas - new);
                    new += up;
                    steps.push(RolloutStep::ScaleUpNew(new));
                }
            }
            // A sync that scaled the new ReplicaSet ends there (`rolloutRolling`).
            if !steps.is_empty() {
                return steps;
            }
            // Old pods: unavailable ones go first (they do not lower availability), then
            // available ones while at least `replicas - max_unavailable` stay available.
            let available: i32 = state.new.1 + state.old.iter().map(|o| o.1).sum::<i32>();
            let min_available = state.replicas - max_unavailable;
            let new_unavailable = new - state.new.1;
            let mut budget = (old_total + new) - min_available - new_unavailable;
            let mut remaining: Vec<i32> = state.old.iter().map(|o| o.0).collect();
            for (index, o) in state.old.iter().enumerate() {
                let unhealthy = (o.0 - o.1).max(0).min(budget.max(0));
                if unhealthy > 0 {
                    remaining[index] -= unhealthy;
                    budget -= unhealthy;
                }
            }
            let mut can_remove = (available - min_available).max(0);
            for (index, r) in remaining.iter_mut().enumerate() {
                let take = (*r).min(can_remove);
                *r -= take;
                can_remove -= take;
                if *r != state.old[index].0 {
                    steps.push(RolloutStep::ScaleDownOld { index, to: *r });
                }
            }
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, node: Option<&str>, phase: PhaseRank, ready: bool) -> DeletionCandidate {
        DeletionCandidate {
            name: name.into(),
            uid: String::new(),
            node: node.map(str::to_string),
            phase,
            ready,
            deletion_cost: 0,
            ready_since: None,
            restarts: 0,
            created: Some(100),
        }
    }

    #[test]
    fn unassigned_pending_unready_go_first() {
        let pods = vec![
            pod("running-ready", Some("n1"), PhaseRank::Running, true),
            pod("running-unready", Some("n1"), PhaseRank::Running, false),
            pod("unknown", Some("n1"), PhaseRank::Unknown, false),
            pod("pending-bound", Some("n1"), PhaseRank::Pending, false),
            pod("unassigned", None, PhaseRank::Pending, false),
        ];
        let related: Vec<_> = pods.iter().map(|p| p.node.clone()).collect();
        let order: Vec<&str> = deletion_order(&pods, &related)
            .into_iter()
            .map(|i| pods[i].name.as_str())
            .collect();
        assert_eq!(
            order,
            [
                "unassigned",
                "pending-bound",
                "unknown",
                "running-unready",
                "running-ready"
            ]
        );
    }

    #[test]
    fn cost_then_colocation_then_newest() {
        let mut cheap = pod("cheap", Some("n1"), PhaseRank::Running, true);
        cheap.deletion_cost = -5;
        let mut old = pod("old", Some("n2"), PhaseRank::Running, true);
        old.created = Some(10);
        let crowded = pod("crowded", Some("n3"), PhaseRank::Running, true);
        let pods = vec![old, crowded, cheap];
        let related = vec![
            Some("n1".to_string()),
            Some("n2".to_string()),
            Some("n3".to_string()),
            Some("n3".to_string()),
        ];
        let order: Vec<&str> = deletion_order(&pods, &related)
            .into_iter()
            .map(|i| pods[i].name.as_str())
            .collect();
        assert_eq!(order, ["cheap", "crowded", "old"]);
    }

    /// Four pods of one scale-up, Ready 100 to 103 s before `now`: one log2 bucket
    /// (2^36 to 2^37 ns), so the controller removes them in UID order, not newest first.
    #[test]
    fn one_ready_bucket_goes_by_uid() {
        let now_secs = 1_700_000_000_i64;
        let pods: Vec<DeletionCandidate> = ["d", "c", "b", "a"]
            .iter()
            .zip(100..)
            .map(|(uid, ago)| {
                let mut p = pod(&format!("pod-{uid}"), Some("n1"), PhaseRank::Running, true);
                p.uid = (*uid).to_string();
                p.ready_since = Some(now_secs - ago);
                p
            })
            .collect();
        let related: Vec<_> = pods.iter().map(|p| p.node.clone()).collect();
        let names = |order: Vec<usize>| -> Vec<String> {
            order.into_iter().map(|i| pods[i].name.clone()).collect()
        };
        let exact = names(deletion_order(&pods, &related));
        assert_eq!(exact, ["pod-d", "pod-c", "pod-b", "pod-a"]);
        let times = TimeScale::Logarithmic {
            now_ns: i128::from(now_secs) * 1_000_000_000,
        };
        let log = names(deletion_order_with(&pods, &related, times));
        assert_eq!(log, ["pod-a", "pod-b", "pod-c", "pod-d"]);
    }

    /// Buckets that differ still put the more recently Ready pod first, whatever the
    /// UIDs; a pod without a ready time (the zero time) goes before both.
    #[test]
    fn distinct_buckets_go_newest_first() {
        let now_secs = 1_700_000_000_i64;
        let mut recent = pod("recent", Some("n1"), PhaseRank::Running, true);
        recent.uid = "z".into();
        recent.ready_since = Some(now_secs - 10);
        let mut old = pod("old", Some("n1"), PhaseRank::Running, true);
        old.uid = "a".into();
        old.ready_since = Some(now_secs - 10_000);
        let mut zero = pod("zero", Some("n1"), PhaseRank::Running, true);
        zero.uid = "m".into();
        let pods = vec![old, recent, zero];
        let order = order_at(&pods, now_secs);
        assert_eq!(order, ["zero", "recent", "old"]);
    }

    /// The deletion order's names under LogarithmicScaleDown, `now_secs` the clock.
    fn order_at(pods: &[DeletionCandidate], now_secs: i64) -> Vec<&str> {
        let related: Vec<_> = pods.iter().map(|p| p.node.clone()).collect();
        let times = TimeScale::Logarithmic {
            now_ns: i128::from(now_secs) * 1_000_000_000,
        };
        deletion_order_with(pods, &related, times)
            .into_iter()
            .map(|i| pods[i].name.as_str())
            .collect()
    }

    /// Equal ready times fall through to restarts; one creation bucket goes by UID.
    #[test]
    fn equal_ready_times_fall_through_to_restarts_then_created_bucket() {
        let now_secs = 1_700_000_000_i64;
        let mk = |name: &str, uid: &str, restarts: i32, created: i64| {
            let mut p = pod(name, Some("n1"), PhaseRank::Running, true);
            p.uid = uid.into();
            p.ready_since = Some(now_secs - 50);
            p.restarts = restarts;
            p.created = Some(now_secs - created);
            p
        };
        let pods = vec![
            mk("young-b", "b", 0, 100),
            mk("restarted", "z", 3, 300),
            mk("young-a", "a", 0, 101),
        ];
        let order = order_at(&pods, now_secs);
        assert_eq!(order, ["restarted", "young-a", "young-b"]);
    }

    #[test]
    fn log2_buckets_as_go() {
        assert!((go_log2(1024.0) - 10.0).abs() < f64::EPSILON);
        let now = 10_i128 * 1_000_000_000;
        // 1 s = 1e9 ns: 2^29 < 1e9 < 2^30.
        assert_eq!(log2_bucket(now, 9), 29);
        assert_eq!(log2_bucket(now, 10), -1);
        assert_eq!(log2_bucket(now, 11), -1);
    }

    #[test]
    fn deletion_costs_parse_as_the_controller_reads_them() {
        assert_eq!(parse_deletion_cost("-12"), Some(-12));
        assert_eq!(parse_deletion_cost("0"), Some(0));
        assert_eq!(parse_deletion_cost("2147483647"), Some(i32::MAX));
        for bad in ["+10", "008", " 5", "", "-", "1.5", "cheap", "2147483648"] {
            assert_eq!(parse_deletion_cost(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn fenceposts_round_as_upstream() {
        let s = Strategy::rolling(IntOrPercent::Percent(25), IntOrPercent::Percent(25), 3);
        assert_eq!(
            s,
            Strategy::RollingUpdate {
                max_surge: 1,
                max_unavailable: 0
            }
        );
        let s = Strategy::rolling(IntOrPercent::Int(0), IntOrPercent::Int(0), 3);
        assert_eq!(
            s,
            Strategy::RollingUpdate {
                max_surge: 0,
                max_unavailable: 1
            }
        );
        // 9 replicas at 25%: surge 2.25 rounds up to 3, unavailable down to 2.
        let s = Strategy::rolling(IntOrPercent::Percent(25), IntOrPercent::Percent(25), 9);
        assert_eq!(
            s,
            Strategy::RollingUpdate {
                max_surge: 3,
                max_unavailable: 2
            }
        );
        // `MaxUnavailable` caps at the replicas, and is 0 for none.
        let s = Strategy::rolling(IntOrPercent::Int(1), IntOrPercent::Int(5), 2);
        assert_eq!(
            s,
            Strategy::RollingUpdate {
                max_surge: 1,
                max_unavailable: 2
            }
        );
        let s = Strategy::rolling(IntOrPercent::Int(0), IntOrPercent::Int(0), 0);
        assert_eq!(
            s,
            Strategy::RollingUpdate {
                max_surge: 0,
                max_unavailable: 0
            }
        );
    }

    #[test]
    fn rolling_update_surges_then_scales_down() {
        let s = Strategy::rolling(IntOrPercent::Percent(25), IntOrPercent::Percent(25), 4);
        let state = RolloutState {
            replicas: 4,
            new: (0, 0),
            old: vec![(4, 4)],
        };
        // surge 1, unavailable 1: one new pod; then, with it available, two old pods go.
        assert_eq!(rollout_steps(&state, s), [RolloutStep::ScaleUpNew(1)]);
        let state = RolloutState {
            replicas: 4,
            new: (1, 1),
            old: vec![(4, 4)],
        };
        assert_eq!(
            rollout_steps(&state, s),
            [RolloutStep::ScaleDownOld { index: 0, to: 2 }]
        );
        // The new pod still pending: only one old pod may go.
        let state = RolloutState {
            replicas: 4,
            new: (1, 0),
            old: vec![(4, 4)],
        };
        assert_eq!(
            rollout_steps(&state, s),
            [RolloutStep::ScaleDownOld { index: 0, to: 3 }]
        );
        // kubernetes#98215's shape, 9 replicas at 25%: the sync after the surge of 3
        // shrinks the old ReplicaSet by 2 while none of the new pods is available
        // (`maxScaledDown` = 12 - 7 - 3), before they are even scheduled.
        let nine = Strategy::rolling(IntOrPercent::Percent(25), IntOrPercent::Percent(25), 9);
        let state = RolloutState {
            replicas: 9,
            new: (0, 0),
            old: vec![(9, 9)],
        };
        assert_eq!(rollout_steps(&state, nine), [RolloutStep::ScaleUpNew(3)]);
        let state = RolloutState {
            replicas: 9,
            new: (3, 0),
            old: vec![(9, 9)],
        };
        assert_eq!(
            rollout_steps(&state, nine),
            [RolloutStep::ScaleDownOld { index: 0, to: 7 }]
        );
        // `cleanupUnhealthyReplicas`: two old pods not available go first, and then no
        // available one may (7 available is the floor).
        let state = RolloutState {
            replicas: 9,
            new: (3, 0),
            old: vec![(9, 7)],
        };
        assert_eq!(
            rollout_steps(&state, nine),
            [RolloutStep::ScaleDownOld { index: 0, to: 7 }]
        );
        let done = RolloutState {
            replicas: 4,
            new: (4, 4),
            old: vec![(0, 0)],
        };
        assert!(rollout_steps(&done, s).is_empty());
    }

    #[test]
    fn recreate_empties_old_first() {
        let state = RolloutState {
            replicas: 2,
            new: (0, 0),
            old: vec![(2, 2)],
        };
        assert_eq!(
            rollout_steps(&state, Strategy::Recreate),
            [RolloutStep::ScaleDownOld { index: 0, to: 0 }]
        );
        let state = RolloutState {
            replicas: 2,
            new: (0, 0),
            old: vec![(0, 0)],
        };
        assert_eq!(
            rollout_steps(&state, Strategy::Recreate),
            [RolloutStep::ScaleUpNew(2)]
        );
    }
}
