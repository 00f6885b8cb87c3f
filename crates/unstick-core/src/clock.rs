//! The one clock of the program. Everything that stamps or compares times takes a [`SharedClock`]
//! instead of reading the wall clock itself, so training runs on simulated time throughout
//! (the Ceph pane's "read N ago", evidence ages and refresh periods count simulated seconds) and
//! tests can pin time. `Timestamp::now()` appears only here (checked by `tests/shape.rs`).

use std::sync::Arc;

use jiff::Timestamp;

/// A source of "now" (UTC, nanosecond precision).
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current time on this clock.
    fn now(&self) -> Timestamp;
}

/// The system's real-time clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct WallClock;

impl Clock for WallClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A fixed clock for tests and reproducible output: always reads the same instant.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub Timestamp);

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        self.0
    }
}

/// A clock shared between services, views and the session log.
pub type SharedClock = Arc<dyn Clock>;

/// The wall clock, shared.
pub fn wall() -> SharedClock {
    Arc::new(WallClock)
}
