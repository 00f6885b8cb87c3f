//! Leaving the console cleanly whatever ends it.
//!
//! - [`Signals`]: SIGTERM, SIGHUP (an SSH drop) and SIGINT end the event loop like `q`, so the
//!   caller restores the terminal (alternate screen left, cursor shown, raw mode off) and writes
//!   the session log's `end` record. The exit code is then 128 + the signal number.
//! - [`install_panic_hook`]: a panic in any thread or tokio task restores the terminal, prints one
//!   line to stderr and ends the process with exit code 101, so a panicking background task can
//!   never leave a console that stopped drawing while keys echo as text.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::signal::unix::{Signal, SignalKind, signal};

static TERMINAL_TAKEN: AtomicBool = AtomicBool::new(false);

/// Marks the terminal as taken over (alternate screen, raw mode) or given back; the panic hook
/// restores it only while taken.
pub fn set_terminal_taken(taken: bool) {
    TERMINAL_TAKEN.store(taken, Ordering::SeqCst);
}

/// Gives the terminal back (mouse capture off, [`ratatui::restore`], cursor shown) if it was
/// taken. Idempotent.
pub fn restore_terminal() {
    if TERMINAL_TAKEN.swap(false, Ordering::SeqCst) {
        let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
        ratatui::restore();
        // ratatui::restore leaves raw mode and the alternate screen; the cursor too
        let _ = crossterm::execute!(std::io::stdout(), crossterm::cursor::Show);
    }
}

/// Replaces the panic hook (call once, first thing in `main`): restore the terminal, print
/// `unstick: internal error: MESSAGE at FILE:LINE` (sanitized, one line), log it, exit 101.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        restore_terminal();
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into());
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let line = unstick_core::text::sanitize(&format!("{msg}{at}"));
        tracing::error!(panic = %line, "internal error");
        let _ = writeln!(std::io::stderr(), "unstick: internal error (a bug; please report it): {line}");
        std::process::exit(101);
    }));
}

/// A termination signal that ended the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// SIGTERM (15).
    Term,
    /// SIGHUP (1): the terminal went away.
    Hup,
    /// SIGINT (2).
    Int,
}

impl Stopped {
    /// `SIGTERM`, `SIGHUP`, `SIGINT`.
    pub fn name(self) -> &'static str {
        match self {
            Stopped::Term => "SIGTERM",
            Stopped::Hup => "SIGHUP",
            Stopped::Int => "SIGINT",
        }
    }

    /// The conventional exit code: 128 + the signal number (143, 129, 130).
    pub fn exit_code(self) -> u8 {
        match self {
            Stopped::Term => 143,
            Stopped::Hup => 129,
            Stopped::Int => 130,
        }
    }
}

/// SIGTERM, SIGHUP and SIGINT, caught from creation on (call inside a tokio runtime, before
/// taking the terminal).
pub struct Signals {
    term: Signal,
    hup: Signal,
    int: Signal,
}

impl Signals {
    /// Registers the handlers. Errors: the OS refused a handler.
    pub fn new() -> std::io::Result<Self> {
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// Waits for the next of the three signals.
    pub async fn recv(&mut self) -> Stopped {
        tokio::select! {
            _ = self.term.recv() => Stopped::Term,
            _ = self.hup.recv() => Stopped::Hup,
            _ = self.int.recv() => Stopped::Int,
        }
    }
}
