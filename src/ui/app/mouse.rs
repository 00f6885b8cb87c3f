//! Mouse: a click focuses a pane (on the tab bar or the pane) and selects the row under it; the
//! wheel scrolls whatever is on top, as the arrow keys would. How far the list panes' columns scroll
//! sideways (← →) is worked out here too: both need the screen geometry of [`crate::ui::view::areas`] (`App::screen_areas`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use super::{App, Effect, Pane};

/// Rows one wheel notch scrolls.
const WHEEL_ROWS: usize = 3;

impl App {
    /// A mouse event.
    pub(crate) fn mouse(&mut self, m: MouseEvent) -> Vec<Effect> {
        let code = match m.kind {
            MouseEventKind::ScrollDown => Some(KeyCode::Down),
            MouseEventKind::ScrollUp => Some(KeyCode::Up),
            MouseEventKind::ScrollLeft => Some(KeyCode::Left),
            MouseEventKind::ScrollRight => Some(KeyCode::Right),
            _ => None,
        };
        if let Some(code) = code {
            // the wheel is the arrow keys of whatever is on top (never a text field's edit)
            if self.popups.top().is_some_and(|p| p.takes_text()) {
                return vec![];
            }
            if self.popups.is_empty() {
                self.focus_at(m.column, m.row);
            }
            let mut fx = vec![];
            let times = if matches!(code, KeyCode::Left | KeyCode::Right) { 1 } else { WHEEL_ROWS };
            for _ in 0..times {
                fx.extend(self.key(KeyEvent::new(code, KeyModifiers::NONE)));
            }
            return fx;
        }
        // a click acts on the panes only when nothing covers them
        if m.kind != MouseEventKind::Down(MouseButton::Left) || !self.popups.is_empty() {
            return vec![];
        }
        self.click(m.column, m.row)
    }

    /// Focuses the pane under (x, y), if any; returns it with its rectangle.
    fn focus_at(&mut self, x: u16, y: u16) -> Option<(Pane, Rect)> {
        let a = self.screen_areas();
        let hit = a.panes.iter().find(|(_, r)| r.contains(Position { x, y })).copied();
        if let Some((p, _)) = hit {
            self.focus = p;
        }
        hit
    }

    fn click(&mut self, x: u16, y: u16) -> Vec<Effect> {
        let a = self.screen_areas();
        if let Some(tabs) = a.tabs.filter(|t| t.contains(Position { x, y })) {
            // ` 1 Findings ` + ` ` per tab, as the tab bar draws them
            let mut left = tabs.x;
            for (i, p) in Pane::ALL.iter().enumerate() {
                let w = format!(" {} {} ", i + 1, p.title()).chars().count() as u16 + 1;
                if x >= left && x < left + w {
                    self.focus = *p;
                    return self.follow_selection();
                }
                left += w;
            }
            return vec![];
        }
        let Some((pane, r)) = self.focus_at(x, y) else { return vec![] };
        let listed = matches!(pane, Pane::Findings | Pane::Nodes | Pane::Pods | Pane::Volumes);
        // rows start under the top border and the header row
        if listed && y >= r.y + 2 && y < r.y + r.height.saturating_sub(1) {
            let h = r.height.saturating_sub(3) as usize;
            let n = self.row_count(pane);
            let row = self.view(pane).first_visible(n, h) + (y - r.y - 2) as usize;
            if row < n {
                self.select(pane, row);
            }
        }
        self.follow_selection()
    }

    /// The largest useful sideways offset of `pane`'s columns at its width on the last screen
    /// (0 for a pane without columns).
    pub(crate) fn max_hscroll(&self, pane: Pane) -> usize {
        let cols = crate::ui::panes::columns::of(pane);
        if cols.is_empty() {
            return 0;
        }
        let width = self.pane_width(pane).saturating_sub(2);
        crate::ui::panes::columns::max_offset(cols, width)
    }
}

#[cfg(test)]
#[path = "mouse_tests.rs"]
mod tests;
