//! The queue's clock for the live scheduler.

use std::time::Duration;
use tokio::time::Instant;
use topospread::Clock;

/// The real monotonic clock, read through tokio so that the queue's backoff expiries and
/// the loop's timers share one time base: the loop sleeps until exactly the expiry the
/// queue reports, and tests can pause and advance time (`tokio::time::pause`) without
/// the queue and the timers drifting apart. In production it is the same monotonic
/// clock as the core's `SystemClock`.
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    start: Instant,
}

impl TokioClock {
    /// A clock starting now.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
        }
    }

    /// The instant a queue time (a duration since the start) falls on.
    pub fn instant(&self, at: Duration) -> Instant {
        self.start + at
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Duration {
        self.start.elapsed()
    }
}
