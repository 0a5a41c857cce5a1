//! Time for the queue: a virtual clock for simulations, the system clock for the live
//! scheduler. Both count from their own start, as a `Duration`.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// A source of the current time.
pub trait Clock {
    /// The time since the clock's start.
    fn now(&self) -> Duration;
}

/// A clock that moves only when told to: simulations jump to the next backoff expiry.
#[derive(Debug, Default)]
pub struct VirtualClock {
    now: Cell<Duration>,
}

impl VirtualClock {
    /// A clock at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock forward to `t` (never backward).
    pub(crate) fn advance_to(&self, t: Duration) {
        if t > self.now.get() {
            self.now.set(t);
        }
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        self.now.set(self.now.get() + d);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        self.now.get()
    }
}

/// The system's monotonic clock.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    start: Instant,
}

impl SystemClock {
    /// A clock starting now.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.start.elapsed()
    }
}
