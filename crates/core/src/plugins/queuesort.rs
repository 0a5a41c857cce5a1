//! PrioritySort: the default queue order, higher `spec.priority` first, then arrival.

use crate::framework::{Plugin, QueueSortPlugin, QueuedPod};

/// The plugin's registry name.
pub const NAME: &str = "PrioritySort";

/// The PrioritySort plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrioritySort;

impl Plugin for PrioritySort {
    fn name(&self) -> &'static str {
        NAME
    }
}

impl QueueSortPlugin for PrioritySort {
    fn less(&self, a: QueuedPod<'_>, b: QueuedPod<'_>) -> bool {
        a.pod.priority > b.pod.priority
            || (a.pod.priority == b.pod.priority && a.arrival < b.arrival)
    }
}
