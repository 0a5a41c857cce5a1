#![allow(clippy::unwrap_used)]

use super::*;
use crate::framework::{ActionType, EventResource};

const T0: Duration = Duration::ZERO;

fn id(n: u32) -> PodId {
    PodId(n)
}

fn queue() -> SchedulingQueue {
    SchedulingQueue::new(QueueConfig {
        pop_from_backoff: false,
        ..QueueConfig::default()
    })
}

#[test]
fn pops_by_priority_then_arrival() {
    let mut q = queue();
    q.add(id(0), 0, 0, false, T0).unwrap();
    q.add(id(1), 10, 0, false, T0).unwrap();
    q.add(id(2), 10, 0, false, T0).unwrap();
    q.add(id(3), 5, 0, false, T0).unwrap();
    let order: Vec<u32> = std::iter::from_fn(|| q.pop(T0)).map(|p| p.pod.0).collect();
    assert_eq!(order, [1, 2, 3, 0]);
}

#[test]
fn duplicate_add_is_an_error() {
    let mut q = queue();
    q.add(id(0), 0, 0, false, T0).unwrap();
    assert_eq!(
        q.add(id(0), 0, 0, false, T0),
        Err(QueueError::AlreadyQueued { pod: id(0) })
    );
    assert_eq!(
        q.add_backoff(id(9), T0),
        Err(QueueError::NotQueued { pod: id(9) })
    );
}

#[test]
fn backoff_doubles_up_to_the_maximum() {
    let q = queue();
    let secs: Vec<u64> = (1..=6).map(|a| q.backoff_duration(a).as_secs()).collect();
    assert_eq!(secs, [1, 2, 4, 8, 10, 10]);
}

#[test]
fn unschedulable_pod_waits_for_a_registered_event() {
    let mut q = queue();
    q.add(id(0), 0, 0, false, T0).unwrap();
    let p = q.pop(T0).unwrap();
    q.add_unschedulable(id(0), vec!["NodeResourcesFit"], p.cycle, T0)
        .unwrap();
    assert_eq!(q.queue_of(id(0)), Some(QueueName::Unschedulable));
    assert!(q.pop(Duration::from_secs(100)).is_none());
    let node_label = ClusterEvent::new(EventResource::Node, ActionType::UPDATE_NODE_LABEL);
    let fit_cares = |_: usize, by: &[&'static str], e: &ClusterEvent| {
        !(by == ["NodeResourcesFit"] && e.action == ActionType::UPDATE_NODE_LABEL)
    };
    assert_eq!(q.on_event(&node_label, T0, fit_cares), 0);
    // Still backing off (1 s after the failure at 0): to the backoff queue.
    assert_eq!(q.on_event(&ClusterEvent::NODE_ADD, T0, fit_cares), 1);
    assert_eq!(q.queue_of(id(0)), Some(QueueName::Backoff));
    assert!(q.pop(Duration::from_millis(500)).is_none());
    assert_eq!(q.next_backoff_expiry(), Some(Duration::from_secs(1)));
    let again = q.pop(Duration::from_secs(1)).unwrap();
    assert_eq!(again.attempts, 2);
}

#[test]
fn event_during_the_cycle_sends_the_pod_to_backoff() {
    let mut q = queue();
    q.add(id(0), 0, 0, false, T0).unwrap();
    let p = q.pop(T0).unwrap();
    q.on_event(&ClusterEvent::NODE_ADD, T0, |_, _, _| true);
    q.add_unschedulable(id(0), vec!["NodeAffinity"], p.cycle, T0)
        .unwrap();
    assert_eq!(q.queue_of(id(0)), Some(QueueName::Backoff));
}

#[test]
fn gated_pod_waits_for_its_update() {
    let mut q = queue();
    q.add(id(0), 0, 0, true, T0).unwrap();
    assert_eq!(q.pending().gated, 1);
    assert!(q.pop(T0).is_none());
    q.on_event(&ClusterEvent::NODE_ADD, T0, |_, _, _| true);
    assert!(q.pop(T0).is_none());
    q.update(id(0), 0, false, T0).unwrap();
    assert_eq!(q.pop(T0).map(|p| p.pod), Some(id(0)));
}

#[test]
fn pop_from_backoff_when_active_is_empty() {
    let mut q = SchedulingQueue::new(QueueConfig::default());
    q.add(id(0), 0, 0, false, T0).unwrap();
    let p = q.pop(T0).unwrap();
    q.add_backoff(p.pod, T0).unwrap();
    assert_eq!(q.pop(T0).map(|p| p.pod), Some(id(0)));
}

#[test]
fn leftover_unschedulable_pods_are_flushed() {
    let mut q = queue();
    q.add(id(0), 0, 0, false, T0).unwrap();
    let p = q.pop(T0).unwrap();
    q.add_unschedulable(id(0), vec!["X"], p.cycle, T0).unwrap();
    assert_eq!(q.flush_unschedulable_leftover(Duration::from_secs(60)), 0);
    assert_eq!(q.flush_unschedulable_leftover(Duration::from_secs(301)), 1);
    assert_eq!(q.pending().active, 1);
}
