//! The daemons' logs (`serve`, `guard --live`): stderr, coloured only for a terminal
//! (never with `--log-format json`, never when `NO_COLOR` is set), and never fatal. A
//! line that cannot be written (a closed pipe, a full disk) is dropped and counted in
//! `topospread_log_lines_dropped_total`, as klog drops and counts: a log collector
//! restarting must not stop scheduling.

use crate::cli::LogFormat;
use std::ffi::OsString;
use std::io::{self, IsTerminal as _, Write};
use tracing_subscriber::fmt::MakeWriter;

/// The process-wide count of dropped lines (`topospread_log_lines_dropped_total`).
type Counter = &'static topospread_serve::LogCounter;

/// Installs the process's log subscriber: `RUST_LOG` or `info`, in `format`, on stderr
/// through [`DroppingStderr`].
pub(crate) fn init(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = colour(
        format,
        io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR"),
    );
    // `fmt()` reports a failed write with `eprintln!`, which panics when stderr is
    // closed: that panic, in whichever task logged, is what ended serve when its stderr
    // pipe closed. The writer below never fails; the reports are off as well.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .log_internal_errors(false)
        .with_writer(DroppingStderr::new(topospread_serve::log_lines_dropped()));
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

/// Whether log lines carry ANSI colour: text to a terminal, unless `NO_COLOR` is set to
/// anything non-empty (no-color.org).
fn colour(format: LogFormat, terminal: bool, no_color: Option<OsString>) -> bool {
    format == LogFormat::Text && terminal && no_color.is_none_or(|v| v.is_empty())
}

/// A [`MakeWriter`] over stderr whose writers never fail: an event that cannot be
/// written is dropped and counted once in `dropped`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DroppingStderr {
    dropped: Counter,
}

impl DroppingStderr {
    /// Counting into `dropped`.
    pub(crate) fn new(dropped: Counter) -> Self {
        Self { dropped }
    }
}

impl<'a> MakeWriter<'a> for DroppingStderr {
    type Writer = Dropping<io::Stderr>;

    fn make_writer(&'a self) -> Self::Writer {
        Dropping::new(io::stderr(), self.dropped)
    }
}

/// One event's writer: writes to `inner` until a write fails, then swallows the rest;
/// counts the event as dropped when it is done with.
#[derive(Debug)]
pub(crate) struct Dropping<W: Write> {
    inner: W,
    failed: bool,
    dropped: Counter,
}

impl<W: Write> Dropping<W> {
    /// Over `inner`, counting a failed event into `dropped`.
    pub(crate) fn new(inner: W, dropped: Counter) -> Self {
        Self {
            inner,
            failed: false,
            dropped,
        }
    }
}

impl<W: Write> Write for Dropping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.failed && self.inner.write_all(buf).is_err() {
            self.failed = true;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.failed && self.inner.flush().is_err() {
            self.failed = true;
        }
        Ok(())
    }
}

impl<W: Write> Drop for Dropping<W> {
    fn drop(&mut self) {
        if self.failed {
            self.dropped.inc();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that fails every write, as a closed pipe does.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn a_failed_event_is_swallowed_and_counted_once() {
        let counter: Counter = Box::leak(Box::default());
        {
            let mut w = Dropping::new(Closed, counter);
            assert!(w.write_all(b"2026-11-29T07:14:51Z  INFO starting").is_ok());
            assert!(w.write_all(b"\n").is_ok());
            assert!(w.flush().is_ok());
        }
        assert_eq!(counter.get(), 1);
        let mut out = Vec::new();
        {
            let mut w = Dropping::new(&mut out, counter);
            assert!(w.write_all(b"line\n").is_ok());
        }
        assert_eq!(counter.get(), 1);
        assert_eq!(out, b"line\n");
    }

    #[test]
    fn colour_only_for_text_on_a_terminal_without_no_color() {
        assert!(colour(LogFormat::Text, true, None));
        assert!(colour(LogFormat::Text, true, Some("".into())));
        assert!(!colour(LogFormat::Text, true, Some("1".into())));
        assert!(!colour(LogFormat::Text, false, None));
        assert!(!colour(LogFormat::Json, true, None));
    }
}
