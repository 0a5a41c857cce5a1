//! Prometheus metrics under kube-scheduler's names and labels, so existing dashboards
//! and alerts read topospread as they read kube-scheduler.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use topospread::PendingCounts;

/// The counter type of [`log_lines_dropped`], for the log writer that counts into it.
pub type LogCounter = Counter;

/// Log lines the process could not write (stderr closed, disk full), process-wide: the
/// log writer counts into it and every [`Metrics`] exports it.
static LOG_LINES_DROPPED: std::sync::LazyLock<Counter> = std::sync::LazyLock::new(Counter::default);

/// `topospread_log_lines_dropped_total`: the process's log writer counts a line it could
/// not write here instead of failing, as klog drops and counts (a log collector
/// restarting must not stop scheduling).
pub fn log_lines_dropped() -> &'static Counter {
    &LOG_LINES_DROPPED
}

/// `{result, profile}`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AttemptLabels {
    /// `scheduled`, `unschedulable` or `error`.
    pub result: String,
    /// The profile's schedulerName.
    pub profile: String,
}

/// `{queue}`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct QueueLabels {
    /// `active`, `backoff`, `unschedulable` or `gated`.
    pub queue: String,
}

/// `{queue, event}`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct IncomingLabels {
    /// The queue the pod entered.
    pub queue: String,
    /// What moved it (`PodAdd`, `ScheduleAttemptFailure`, `BindingFailed`).
    pub event: String,
}

/// `{namespace, workload, topology_key}`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SkewLabels {
    /// The workload's namespace.
    pub namespace: String,
    /// `Kind/name` of the pods' controller.
    pub workload: String,
    /// The constraint's topologyKey.
    pub topology_key: String,
}

/// `{namespace, replicaset, topology_key, scale_in}`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GuardSkewLabels {
    /// The ReplicaSet's namespace.
    pub namespace: String,
    /// The ReplicaSet.
    pub replicaset: String,
    /// The constraint's topologyKey.
    pub topology_key: String,
    /// `1` or `half`: how many pods the predicted scale-in removes.
    pub scale_in: String,
}

fn attempt_buckets() -> Histogram {
    // kube-scheduler: ExponentialBuckets(0.001, 2, 15).
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// Every metric the live scheduler exports.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// `scheduler_schedule_attempts_total{result,profile}`.
    pub attempts: Family<AttemptLabels, Counter>,
    /// `scheduler_scheduling_attempt_duration_seconds{result,profile}`.
    pub attempt_duration: Family<AttemptLabels, Histogram, fn() -> Histogram>,
    /// `scheduler_pending_pods{queue}`.
    pub pending: Family<QueueLabels, Gauge>,
    /// `scheduler_preemption_attempts_total`.
    pub preemption_attempts: Counter,
    /// `scheduler_preemption_victims`.
    pub preemption_victims: Histogram,
    /// `scheduler_queue_incoming_pods_total{queue,event}`.
    pub incoming: Family<IncomingLabels, Counter>,
    /// `topospread_domain_skew{namespace,workload,topology_key}`: per controller and
    /// constraint key, matching pods in the fullest domain minus the emptiest.
    pub domain_skew: Family<SkewLabels, Gauge>,
    /// `topospread_node_overcommits_total`: pods bound by someone else that left their
    /// node requesting more than its allocatable (a race between two schedulers).
    pub node_overcommits: Counter,
    /// `topospread_guard_patches_total`: pod-deletion-cost patches the guard wrote.
    pub guard_patches: Counter,
    /// `topospread_guard_predicted_skew{namespace,replicaset,topology_key,scale_in}`:
    /// the skew a scale-in by one or by half would leave, with the guard's costs.
    pub guard_predicted_skew: Family<GuardSkewLabels, Gauge>,
    /// `topospread_log_lines_dropped_total`: the process-wide [`log_lines_dropped`].
    pub log_lines_dropped: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let attempts = Family::<AttemptLabels, Counter>::default();
        registry.register(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result",
            attempts.clone(),
        );
        let attempt_duration =
            Family::<AttemptLabels, Histogram, fn() -> Histogram>::new_with_constructor(
                attempt_buckets,
            );
        registry.register(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            attempt_duration.clone(),
        );
        let pending = Family::<QueueLabels, Gauge>::default();
        registry.register(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type",
            pending.clone(),
        );
        let preemption_attempts = Counter::default();
        registry.register(
            "scheduler_preemption_attempts",
            "Total preemption attempts in the cluster till now",
            preemption_attempts.clone(),
        );
        let preemption_victims = Histogram::new(exponential_buckets(1.0, 2.0, 7));
        registry.register(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            preemption_victims.clone(),
        );
        let incoming = Family::<IncomingLabels, Counter>::default();
        registry.register(
            "scheduler_queue_incoming_pods",
            "Number of pods added to scheduling queues by event and queue type",
            incoming.clone(),
        );
        let domain_skew = Family::<SkewLabels, Gauge>::default();
        registry.register(
            "topospread_domain_skew",
            "Per workload and topology key: matching pods in the fullest domain minus the emptiest",
            domain_skew.clone(),
        );
        let node_overcommits = Counter::default();
        registry.register(
            "topospread_node_overcommits",
            "Pods bound by another scheduler that left their node requesting more than its allocatable",
            node_overcommits.clone(),
        );
        let guard_patches = Counter::default();
        registry.register(
            "topospread_guard_patches",
            "Pod-deletion-cost patches the guard wrote",
            guard_patches.clone(),
        );
        let guard_predicted_skew = Family::<GuardSkewLabels, Gauge>::default();
        registry.register(
            "topospread_guard_predicted_skew",
            "Per ReplicaSet and topology key: the skew a scale-in by one or by half would leave, with the guard's costs",
            guard_predicted_skew.clone(),
        );
        let log_lines_dropped = LOG_LINES_DROPPED.clone();
        registry.register(
            "topospread_log_lines_dropped",
            "Log lines dropped because stderr could not be written (closed pipe, full disk)",
            log_lines_dropped.clone(),
        );
        Self {
            registry,
            attempts,
            attempt_duration,
            pending,
            preemption_attempts,
            preemption_victims,
            incoming,
            domain_skew,
            node_overcommits,
            guard_patches,
            guard_predicted_skew,
            log_lines_dropped,
        }
    }

    /// Sets the guard's predicted skews from a plan, dropping ReplicaSets it no longer
    /// reports.
    pub fn set_guard_skew(&self, plan: &topospread_planning::guard::GuardPlan) {
        self.guard_predicted_skew.clear();
        for rs in &plan.replica_sets {
            for c in &rs.constraints {
                for (scale_in, skew) in [("1", c.after_one), ("half", c.after_half)] {
                    if let Some(skew) = skew {
                        self.guard_predicted_skew
                            .get_or_create(&GuardSkewLabels {
                                namespace: rs.namespace.clone(),
                                replicaset: rs.name.clone(),
                                topology_key: c.constraint.topology_key.clone(),
                                scale_in: scale_in.into(),
                            })
                            .set(skew);
                    }
                }
            }
        }
    }

    /// Counts one scheduling attempt.
    pub fn attempt(&self, result: &str, profile: &str, seconds: f64) {
        let labels = AttemptLabels {
            result: result.into(),
            profile: profile.into(),
        };
        self.attempts.get_or_create(&labels).inc();
        self.attempt_duration
            .get_or_create(&labels)
            .observe(seconds);
    }

    /// Counts a pod entering a queue.
    pub fn incoming(&self, queue: &str, event: &str) {
        self.incoming
            .get_or_create(&IncomingLabels {
                queue: queue.into(),
                event: event.into(),
            })
            .inc();
    }

    /// Sets the pending gauges.
    pub fn set_pending(&self, p: &PendingCounts) {
        for (queue, n) in [
            ("active", p.active),
            ("backoff", p.backoff),
            ("unschedulable", p.unschedulable),
            ("gated", p.gated),
        ] {
            self.pending
                .get_or_create(&QueueLabels {
                    queue: queue.into(),
                })
                .set(i64::try_from(n).unwrap_or(i64::MAX));
        }
    }

    /// The text exposition format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_texts_end_in_one_period() {
        let m = Metrics::new();
        m.attempt("scheduled", "p", 0.1);
        m.incoming("active", "PodAdd");
        m.set_pending(&PendingCounts::default());
        let text = m.encode();
        let helps: Vec<&str> = text.lines().filter(|l| l.starts_with("# HELP")).collect();
        assert!(helps.len() >= 5, "{text}");
        for help in helps {
            // prometheus-client adds the period itself.
            assert!(help.ends_with('.') && !help.ends_with(".."), "{help}");
        }
    }
}
