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

/// Shortens `s` to `w` columns by cutting the middle (`replicapool/csi-vol-5b…c3d4e02`): both
/// ends of an identifier stay readable (the pool and the end of a UUID, a pod's generated
/// suffix), so names that share a prefix are never cut to the same text. Below 5 columns `s` is
/// returned whole (the table clips it).
pub fn fit_middle(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n <= w || w < 5 {
        return s.to_string();
    }
    let tail = (w - 1) / 2;
    let head = w - 1 - tail;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// `s` as a span in `style`.
pub fn plain<'a>(s: impl Into<String>, style: Style) -> Span<'a> {
    Span::styled(s.into(), style)
}

#[cfg(test)]
mod tests {
    use super::fit_middle;

    #[test]
    fn identifiers_that_share_a_prefix_stay_distinct_when_cut() {
        let pvs = [
            "pvc-6a1e0c3d-5b2f-4c11-9e8f-0a1b2c3d4e01",
            "pvc-6a1e0c3d-5b2f-4c11-9e8f-0a1b2c3d4e02",
            "pvc-6a1e0c3d-5b2f-4c11-9e8f-0a1b2c3d4e03",
        ];
        for w in [8, 12, 20] {
            let cut: Vec<String> = pvs.iter().map(|p| fit_middle(p, w)).collect();
            assert!(cut.iter().all(|c| c.chars().count() == w), "{cut:?}");
            assert!(cut[0] != cut[1] && cut[1] != cut[2], "cut to the same text at {w}: {cut:?}");
        }
        assert_eq!(fit_middle("short", 12), "short");
    }
}
