//! Logs go to `$XDG_STATE_HOME/unstick/unstick.log`, never to the screen. `UNSTICK_LOG` sets the
//! filter (tracing-subscriber `EnvFilter` syntax; default `info`).

use std::path::PathBuf;

use tracing_appender::non_blocking::WorkerGuard;

/// Lines waiting for the writer thread; more are dropped (lossy, as tracing-appender's default
/// is). Its default of 128,000 preallocates a 4 MB channel (measured: 4.1 MB of the console's
/// 46.6 MB live heap at 10k pods, issue 13); the console logs a few lines per watch failure.
pub const BUFFERED_LINES: usize = 1024;

/// Starts file logging; keep the guard alive until exit so buffered lines are flushed.
/// Returns the log file path. If the directory cannot be created, logging is off (`None`).
pub fn init() -> Option<(PathBuf, WorkerGuard)> {
    let dir = unstick_core::dirs::state_dir();
    std::fs::create_dir_all(&dir).ok()?;
    let appender = tracing_appender::rolling::never(&dir, "unstick.log");
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(BUFFERED_LINES)
        .finish(appender);
    let filter = tracing_subscriber::EnvFilter::try_from_env("UNSTICK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_writer(writer).with_ansi(false).with_env_filter(filter).try_init().ok()?;
    Some((dir.join("unstick.log"), guard))
}
