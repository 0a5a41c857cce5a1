//! The queue-driven loop: profiles by scheduler name, nominated pods, binding failures.

use super::tests::{pod, scheduler, snapshot};
use super::*;
use crate::config::ProfileConfig;
use serde_json::json;

const T0: Duration = Duration::ZERO;

fn two_profiles(s: &mut Snapshot) -> Scheduler {
    let second = ProfileConfig {
        scheduler_name: Some("topospread".into()),
        ..ProfileConfig::default()
    };
    let mut config = SchedulerConfig::default();
    config.profiles.push(second);
    Scheduler::new(&config, Features::default(), s)
        .expect("the scheduler builds from the test configuration")
}

fn cpu_pod(
    s: &mut Snapshot,
    name: &str,
    priority: i32,
    cpu: &str,
    extra: serde_json::Value,
) -> Pod {
    let mut v = json!({
        "metadata": {"name": name},
        "spec": {"priority": priority,
                 "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    });
    if let (Some(spec), Some(extra)) = (v["spec"].as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    pod(s, v)
}

#[test]
fn each_pod_goes_to_the_profile_it_names() {
    let mut s = snapshot(1);
    let mut sched = two_profiles(&mut s);
    assert_eq!(sched.profiles().len(), 2);
    assert_eq!(sched.profile_index("topospread"), Some(1));
    let mine = cpu_pod(
        &mut s,
        "mine",
        0,
        "1",
        json!({"schedulerName": "topospread"}),
    );
    let other = cpu_pod(
        &mut s,
        "other",
        0,
        "1",
        json!({"schedulerName": "elsewhere"}),
    );
    let mine = s.add_pod(mine).expect("the snapshot takes the pod");
    let other = s.add_pod(other).expect("the snapshot takes the pod");
    assert!(sched.enqueue(&s, mine, T0).is_ok());
    let err = sched.enqueue(&s, other, T0).map_err(|e| e.to_string());
    assert_eq!(
        err,
        Err(
            "pod default/other: spec.schedulerName: no profile serves scheduler \"elsewhere\""
                .into()
        )
    );
    match sched.schedule_next(&mut s, T0) {
        Some(Attempt::Assumed { pod, .. }) => assert_eq!(pod, mine),
        other => panic!("{other:?}"),
    }
    assert!(sched.schedule_next(&mut s, T0).is_none());
}

#[test]
fn duplicate_profile_names_are_refused() {
    let mut s = snapshot(1);
    let mut config = SchedulerConfig::default();
    config.profiles.push(ProfileConfig::default());
    let err = Scheduler::new(&config, Features::default(), &mut s).map(|_| ());
    assert_eq!(
        err.map_err(|e| e.to_string()),
        Err("profiles[1].schedulerName: Duplicate value: \"default-scheduler\"".into())
    );
}

#[test]
fn a_nominated_pod_keeps_its_room_from_lower_priority_pods() {
    let mut s = snapshot(1);
    let mut sched = scheduler(&mut s);
    let high = cpu_pod(&mut s, "high", 100, "3", json!({}));
    let high = s.add_pod(high).expect("the snapshot takes the pod");
    sched.nominator.add(high, NodeId(0));
    let low = cpu_pod(&mut s, "low", 1, "2", json!({}));
    match sched.schedule_one(&s, &low) {
        ScheduleResult::Unschedulable { message, .. } => {
            assert!(message.contains("Insufficient cpu"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    // A pod of higher priority than the nominated one does not count it.
    let higher = cpu_pod(&mut s, "higher", 200, "2", json!({}));
    assert!(matches!(
        sched.schedule_one(&s, &higher),
        ScheduleResult::Scheduled { .. }
    ));
}

#[test]
fn a_failed_binding_is_forgotten_and_backs_off() {
    let mut s = snapshot(1);
    let mut sched = scheduler(&mut s);
    let p = cpu_pod(&mut s, "p", 0, "1", json!({}));
    let id = s.add_pod(p).expect("the snapshot takes the pod");
    sched.enqueue(&s, id, T0).expect("the pod is queued");
    let Some(Attempt::Assumed { node, .. }) = sched.schedule_next(&mut s, T0) else {
        panic!("not assumed");
    };
    assert_eq!(s.pod_node(id), Some(node));
    assert!(s.node(node).requested().milli_cpu > 0);
    sched
        .binding_failed(&mut s, id, T0)
        .expect("the failed binding is undone");
    assert_eq!(s.pod_node(id), None);
    assert_eq!(s.node(node).requested().milli_cpu, 0);
    assert_eq!(
        sched.queue().queue_of(id),
        Some(crate::queue::QueueName::Backoff)
    );
}
