//! Small drawing helpers shared by the views and by the components that draw themselves
//! (`popups/note.rs`, `popups/describe.rs`, ...): centring a popup, fitting text, the scroll marks.
//! Imports nothing of the app, so any component may use it without an import cycle.

use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Span;

/// The mark on a scrolled box's bottom border: what is above and below the visible rows.
pub fn more_marks(offset: u16, total: u16, height: u16) -> String {
    let below = total.saturating_sub(offset.saturating_add(height));
    match (offset > 0, below > 0) {
        (false, false) => String::new(),
        (true, false) => format!(" ↑ {offset} above "),
        (false, true) => format!(" ↓ {below} more below (j/↓ PgDn) "),
        (true, true) => format!(" ↑ {offset} above · ↓ {below} more below "),
    }
}

/// A `w`×`h` rectangle centred in `area` (clamped to it), for popups and overlays.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let [row] = Layout::vertical([Constraint::Length(h.min(area.height))]).flex(Flex::Center).areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(w.min(area.width))]).flex(Flex::Center).areas(row);
    rect
}

/// Truncates `s` to `w` display columns, marking the cut with `…`.
pub fn fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        return s.to_string();
    }
    let mut out: String = s.chars().take(w.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `s` as a span in `style`.
pub fn plain<'a>(s: impl Into<String>, style: Style) -> Span<'a> {
    Span::styled(s.into(), style)
}
