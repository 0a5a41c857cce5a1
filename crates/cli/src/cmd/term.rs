//! The terminal: how wide output may be, and progress on stderr for work that takes
//! longer than about a second (only when stderr is a terminal; quiet otherwise, so
//! pipes, CI logs and tests see nothing).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Progress appears once work has run this long.
pub(crate) const PROGRESS_AFTER: Duration = Duration::from_secs(1);

/// The width to lay tables out in: `COLUMNS` when set to a number, else 80 (also when
/// stdout is not a terminal, so output is the same in tests and pipes).
pub(crate) fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .unwrap_or(80)
}

/// Whether progress may be drawn at all.
fn progress_wanted() -> bool {
    std::io::stderr().is_terminal()
}

/// Runs `work`; if it is still running after [`PROGRESS_AFTER`] and stderr is a
/// terminal, a spinner with `message` turns on stderr until it ends.
pub(crate) fn with_spinner<T>(message: &str, work: impl FnOnce() -> T) -> T {
    if !progress_wanted() {
        return work();
    }
    let (done, wait) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = wait.recv_timeout(PROGRESS_AFTER) {
                let spinner = ProgressBar::new_spinner();
                spinner.set_message(message.to_string());
                spinner.enable_steady_tick(Duration::from_millis(120));
                // Ends when the sender is dropped.
                let _ = wait.recv();
                spinner.finish_and_clear();
            }
        });
        let out = work();
        drop(done);
        out
    })
}

/// A bar of `total` steps that stays hidden until [`PROGRESS_AFTER`] has passed (and
/// for good when stderr is not a terminal).
pub(crate) struct DelayedBar {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: bool,
}

impl DelayedBar {
    /// A hidden bar with `template` (indicatif's syntax).
    pub(crate) fn new(total: u64, template: &str) -> Self {
        let bar = progress_wanted().then(|| {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
            b.set_style(
                ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        });
        Self {
            bar,
            start: Instant::now(),
            shown: false,
        }
    }

    /// Advances by `n`, showing the bar once the work has run long enough.
    pub(crate) fn inc(&mut self, n: u64) {
        let Some(b) = &self.bar else {
            return;
        };
        b.inc(n);
        if !self.shown && self.start.elapsed() >= PROGRESS_AFTER {
            self.shown = true;
            b.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    /// Clears the bar.
    pub(crate) fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// A job's progress on the terminal: a spinner with a message while it loads (after
/// [`PROGRESS_AFTER`]), then a bar of pods bound while it schedules.
pub(crate) struct JobProgress {
    spinner: Option<(mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
    bar: Option<DelayedBar>,
}

impl JobProgress {
    /// Starts the loading spinner (nothing when stderr is not a terminal).
    pub(crate) fn loading(message: &str) -> Self {
        let spinner = progress_wanted().then(|| {
            let (done, wait) = mpsc::channel::<()>();
            let message = message.to_string();
            let thread = std::thread::spawn(move || {
                if let Err(RecvTimeoutError::Timeout) = wait.recv_timeout(PROGRESS_AFTER) {
                    let spinner = ProgressBar::new_spinner();
                    spinner.set_message(message);
                    spinner.enable_steady_tick(Duration::from_millis(120));
                    // Ends when the sender is dropped.
                    let _ = wait.recv();
                    spinner.finish_and_clear();
                }
            });
            (done, thread)
        });
        Self { spinner, bar: None }
    }

    fn stop_spinner(&mut self) {
        if let Some((done, thread)) = self.spinner.take() {
            drop(done);
            let _ = thread.join();
        }
    }
}

impl topospread_jobs::runtime::Progress for JobProgress {
    fn start(&mut self, total: u64) {
        self.stop_spinner();
        self.bar = Some(DelayedBar::new(
            total,
            "{bar:40} {pos}/{len} pods bound {per_sec} {eta}",
        ));
    }

    fn advance(&mut self, n: u64) {
        if let Some(bar) = &mut self.bar {
            bar.inc(n);
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish();
        }
    }
}

impl Drop for JobProgress {
    fn drop(&mut self) {
        self.stop_spinner();
    }
}
