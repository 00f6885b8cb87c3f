//! What every popup and overlay shares: vertical scrolling that remembers how far the content has
//! been on screen (a confirmation is refused until all of it was), and the key guard of a view
//! that opened by itself (it takes no key for a moment, so keys typed for something else are not
//! stolen).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use jiff::{SignedDuration, Timestamp};

/// Console-clock seconds during which a view that opened by itself ignores keys. The clock moves
/// on ticks (`ui.tick_seconds`, 1 s by default), so the guard lasts between one and two ticks.
pub const GUARD_SECONDS: f64 = 2.0;

/// Scroll position of a popup's content, and the furthest row that has been on screen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scroll {
    /// First content row shown.
    pub offset: u16,
    /// Rows of content that have been on screen, from the top (the furthest bottom row seen + 1).
    pub seen: u16,
}

impl Scroll {
    /// Notes that `height` rows of `total` are visible at the current offset (clamped).
    pub fn shown(&mut self, total: u16, height: u16) {
        self.offset = self.offset.min(total.saturating_sub(height));
        self.seen = self.seen.max(self.offset.saturating_add(height).min(total));
    }

    /// Scrolls by `delta` rows within `total` rows shown `height` at a time.
    pub fn by(&mut self, delta: i32, total: u16, height: u16) {
        let max = total.saturating_sub(height) as i32;
        self.offset = (self.offset as i32 + delta).clamp(0, max.max(0)) as u16;
        self.shown(total, height);
    }

    /// True once every one of `total` rows has been on screen.
    pub fn all_seen(&self, total: u16) -> bool {
        self.seen >= total
    }
}

/// The scroll step of a key, for a popup `page` rows high: arrows, PgUp/PgDn, Home/End, and `j`/`k`
/// and space unless the popup has a text field (`letters` false).
pub fn scroll_delta(key: &KeyEvent, page: u16, letters: bool) -> Option<i32> {
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return match key.code {
            KeyCode::Char('f') if letters => Some(page.max(1) as i32),
            KeyCode::Char('b') if letters => Some(-(page.max(1) as i32)),
            _ => None,
        };
    }
    let page = page.max(1) as i32;
    Some(match key.code {
        KeyCode::Down => 1,
        KeyCode::Up => -1,
        KeyCode::PageDown => page,
        KeyCode::PageUp => -page,
        KeyCode::End => i32::MAX / 2,
        KeyCode::Home => -(i32::MAX / 2),
        KeyCode::Char('j') if letters => 1,
        KeyCode::Char('k') if letters => -1,
        KeyCode::Char(' ') if letters => page,
        _ => return None,
    })
}

/// The key guard of a view that opened by itself: keys are ignored until the console clock
/// reaches `until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard {
    /// First clock time at which keys are taken.
    pub until: Timestamp,
}

impl Guard {
    /// A guard from `now` on a clock running `speed` times real time (training's simulated clock).
    pub fn new(now: Timestamp, speed: f64) -> Self {
        let secs = GUARD_SECONDS * if speed > 0.0 { speed } else { 1.0 };
        Guard { until: now.saturating_add(SignedDuration::from_secs_f64(secs)).unwrap_or(now) }
    }

    /// True while keys are still ignored at `now`.
    pub fn holds(&self, now: Timestamp) -> bool {
        now < self.until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrolling_remembers_the_furthest_row_seen() {
        let mut s = Scroll::default();
        s.shown(30, 10);
        assert_eq!(s.seen, 10);
        assert!(!s.all_seen(30));
        s.by(15, 30, 10);
        assert_eq!((s.offset, s.seen), (15, 25));
        s.by(-100, 30, 10);
        assert_eq!((s.offset, s.seen), (0, 25), "scrolling back keeps what was seen");
        s.by(i32::MAX / 2, 30, 10);
        assert_eq!((s.offset, s.seen), (20, 30));
        assert!(s.all_seen(30));
        let mut short = Scroll::default();
        short.shown(5, 10);
        assert!(short.all_seen(5), "content that fits is seen at once");
    }

    #[test]
    fn letters_scroll_only_without_a_text_field() {
        let k = |c| KeyEvent::new(c, KeyModifiers::NONE);
        assert_eq!(scroll_delta(&k(KeyCode::Char('j')), 8, true), Some(1));
        assert_eq!(scroll_delta(&k(KeyCode::Char('j')), 8, false), None);
        assert_eq!(scroll_delta(&k(KeyCode::PageDown), 8, false), Some(8));
        assert_eq!(scroll_delta(&k(KeyCode::Up), 8, false), Some(-1));
    }

    #[test]
    fn the_guard_lasts_on_the_console_clock() {
        let t0 = Timestamp::from_second(1_800_000_000).unwrap();
        let g = Guard::new(t0, 1.0);
        assert!(g.holds(t0));
        assert!(g.holds(t0 + SignedDuration::from_secs(1)));
        assert!(!g.holds(t0 + SignedDuration::from_secs(2)));
        let sim = Guard::new(t0, 5.0);
        assert!(sim.holds(t0 + SignedDuration::from_secs(9)), "simulated time runs 5× faster");
    }
}
