//! SchedulingGates: a pod with `spec.schedulingGates` stays out of the queue until every
//! gate is removed (PreEnqueue), so no cycle runs for it.

use crate::api::Pod;
use crate::framework::{ActionType as A, ClusterEvent, EventResource as R};
use crate::framework::{Code, Plugin, PreEnqueuePlugin, Status};

/// The plugin's registry name.
pub const NAME: &str = "SchedulingGates";

/// The SchedulingGates plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct SchedulingGates;

impl Plugin for SchedulingGates {
    fn name(&self) -> &'static str {
        NAME
    }

    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::new(
            R::UnscheduledPod,
            A::UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
        )]
    }
}

impl PreEnqueuePlugin for SchedulingGates {
    fn pre_enqueue(&self, pod: &Pod) -> Status {
        if pod.scheduling_gates.is_empty() {
            return Status::success();
        }
        // Upstream prints the gate names as Go prints a []string.
        Status::new(
            Code::UnschedulableAndUnresolvable,
            format!(
                "waiting for scheduling gates: [{}]",
                pod.scheduling_gates.join(" ")
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::testutil::{pod, snapshot};
    use serde_json::json;

    #[test]
    fn gates_keep_the_pod_out_of_the_queue() {
        let mut s = snapshot(&[], &[]);
        let open = pod(
            &mut s,
            json!({"metadata": {"name": "a"}, "spec": {"containers": []}}),
        );
        assert!(SchedulingGates.pre_enqueue(&open).is_success());
        let gated = pod(
            &mut s,
            json!({"metadata": {"name": "b"}, "spec": {"containers": [],
                "schedulingGates": [{"name": "example.com/foo"}, {"name": "example.com/bar"}]}}),
        );
        let st = SchedulingGates.pre_enqueue(&gated);
        assert_eq!(st.code(), Code::UnschedulableAndUnresolvable);
        assert_eq!(
            st.reasons(),
            ["waiting for scheduling gates: [example.com/foo example.com/bar]"]
        );
    }
}
