//! The service's own timers: the Wait step it keeps polling and the Lease it keeps alive. Periods
//! count on the console's clock ([`super::Clocks::timers`]; simulated time in training); a tokio
//! interval of [`TICK`] wakes the service to look at them between commands.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use crate::clock::SharedClock;
use crate::config::RemedyConfig;

/// How often the service looks at its timers (real time).
pub(super) const TICK: Duration = Duration::from_millis(250);

/// When the pending Wait step was polled and the Lease renewed, on the timers' clock.
#[derive(Debug, Clone)]
pub(super) struct Timers {
    clock: SharedClock,
    /// `remedy.wait_poll_seconds`.
    poll: SignedDuration,
    /// A third of `remedy.lease_duration_seconds`, at least 5 s.
    renew: SignedDuration,
    /// The Wait step being waited on (its index) and when it was last polled; `None`: not waiting.
    waited: Option<(usize, Timestamp)>,
    /// When the held Lease was last acquired or renewed; `None`: no Lease held.
    renewed: Option<Timestamp>,
}

impl Timers {
    /// Nothing to time yet; periods from `cfg`.
    pub(super) fn new(clock: SharedClock, cfg: &RemedyConfig) -> Self {
        let secs = |s: u64| SignedDuration::from_secs(i64::try_from(s).unwrap_or(i64::MAX));
        Timers {
            clock,
            poll: secs(cfg.wait_poll_seconds),
            renew: secs((cfg.lease_duration_seconds / 3).max(5)),
            waited: None,
            renewed: None,
        }
    }

    /// Step `index` (a Wait step) was just polled and is still pending.
    pub(super) fn waiting(&mut self, index: usize) {
        self.waited = Some((index, self.clock.now()));
    }

    /// Nothing to poll any more.
    pub(super) fn stop_waiting(&mut self) {
        self.waited = None;
    }

    /// The step to poll now, if its poll period has passed since the last poll.
    pub(super) fn wait_due(&self) -> Option<usize> {
        let now = self.clock.now();
        self.waited.filter(|(_, at)| now.duration_since(*at) >= self.poll).map(|(i, _)| i)
    }

    /// The Lease was just acquired or renewed.
    pub(super) fn renewed(&mut self) {
        self.renewed = Some(self.clock.now());
    }

    /// No Lease is held any more.
    pub(super) fn released(&mut self) {
        self.renewed = None;
    }

    /// True when the held Lease is due for renewal.
    pub(super) fn renew_due(&self) -> bool {
        let now = self.clock.now();
        self.renewed.is_some_and(|t| now.duration_since(t) >= self.renew)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::clock::Clock;

    /// A clock the test moves.
    #[derive(Debug, Default)]
    struct Hand(Mutex<Option<Timestamp>>);

    impl Clock for Hand {
        fn now(&self) -> Timestamp {
            self.0.lock().unwrap().unwrap_or(Timestamp::UNIX_EPOCH)
        }
    }

    impl Hand {
        fn add(&self, secs: i64) {
            let t = self.now() + SignedDuration::from_secs(secs);
            *self.0.lock().unwrap() = Some(t);
        }
    }

    fn timers(hand: &Arc<Hand>) -> Timers {
        let mut cfg = crate::config::Config::defaults().remedy;
        cfg.wait_poll_seconds = 5;
        cfg.lease_duration_seconds = 60;
        Timers::new(hand.clone(), &cfg)
    }

    #[test]
    fn a_pending_wait_is_polled_again_after_the_poll_period_of_the_clock() {
        let hand = Arc::new(Hand::default());
        let mut t = timers(&hand);
        assert_eq!(t.wait_due(), None, "not waiting");
        t.waiting(3);
        hand.add(4);
        assert_eq!(t.wait_due(), None, "not before the period");
        hand.add(1);
        assert_eq!(t.wait_due(), Some(3));
        t.waiting(3);
        assert_eq!(t.wait_due(), None, "polled: the period starts again");
        hand.add(60);
        t.stop_waiting();
        assert_eq!(t.wait_due(), None, "met, timed out or failed: no more polls");
    }

    #[test]
    fn a_held_lease_is_renewed_every_third_of_its_duration() {
        let hand = Arc::new(Hand::default());
        let mut t = timers(&hand);
        hand.add(600);
        assert!(!t.renew_due(), "no Lease held");
        t.renewed();
        hand.add(19);
        assert!(!t.renew_due());
        hand.add(1);
        assert!(t.renew_due(), "20 s = 60 s / 3");
        t.renewed();
        assert!(!t.renew_due());
        hand.add(30);
        t.released();
        assert!(!t.renew_due(), "lost or released: nothing to renew");
        let mut cfg = crate::config::Config::defaults().remedy;
        cfg.lease_duration_seconds = 6;
        let mut short = Timers::new(hand.clone(), &cfg);
        short.renewed();
        hand.add(4);
        assert!(!short.renew_due(), "never more often than every 5 s");
        hand.add(1);
        assert!(short.renew_due());
    }
}
