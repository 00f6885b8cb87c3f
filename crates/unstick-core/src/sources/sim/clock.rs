//! The simulation's clock: simulated time that runs at a chosen speed (0 = only when advanced)
//! and can be advanced; [`super::Sim`] serves it as the console's clock.

use jiff::{SignedDuration, Timestamp};

/// The simulated clock: `base + speed × (real time since start) + advanced`.
#[derive(Debug, Clone)]
pub struct SimClock {
    started: std::time::Instant,
    base: Timestamp,
    speed: f64,
    advanced: SignedDuration,
}

impl SimClock {
    /// A clock that reads `base` now and runs `speed` times real time (0 = only when advanced).
    pub fn new(base: Timestamp, speed: f64) -> Self {
        SimClock { started: std::time::Instant::now(), base, speed: speed.max(0.0), advanced: SignedDuration::ZERO }
    }

    /// Simulated now.
    pub fn now(&self) -> Timestamp {
        let real = self.started.elapsed().as_secs_f64() * self.speed;
        let real = SignedDuration::try_from_secs_f64(real).unwrap_or(SignedDuration::MAX);
        let d = real.checked_add(self.advanced).unwrap_or(self.advanced);
        self.base.checked_add(d).unwrap_or(self.base)
    }

    /// Simulated seconds per real second.
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// Changes the speed from now on (time already passed is kept).
    pub fn set_speed(&mut self, speed: f64) {
        let now = self.now();
        *self = SimClock {
            started: std::time::Instant::now(),
            base: now,
            speed: speed.max(0.0),
            advanced: SignedDuration::ZERO,
        };
    }

    /// Moves simulated time forward by `d` (kept as it is if the sum would overflow).
    pub fn advance(&mut self, d: SignedDuration) {
        self.advanced = self.advanced.checked_add(d).unwrap_or(self.advanced);
    }
}
