//! One pane's own state and keys, the same type for all six panes: the selected row (the list
//! panes: Findings, Nodes, Pods, Volumes) or the first line shown (the text panes: Ceph, Events),
//! the columns scrolled off to the left, and the filter (rows of a list pane, lines of a text pane). The app keeps one
//! per pane and routes the focused pane's keys to it ([`PaneView::handle_key`]); what the pane
//! shows comes from the app's data at draw time (`view::pane`, `PaneView::draw`), never stored
//! here.

use super::Pane;
use crate::ui::action::Action;
use crate::ui::outcome::Outcome;
use unstick_core::console_state::rows::Filter;

/// Farthest a text pane (Ceph, Events) scrolls, in lines: it has no row count to stop at.
const TEXT_SCROLL_MAX: usize = 10_000;

/// What a pane's keys need to know beyond its own state, from the app's data and last screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    /// Rows the pane lists (`None` for a text pane, which scrolls up to [`TEXT_SCROLL_MAX`]).
    pub rows: Option<usize>,
    /// Rows a page key moves (at least 1).
    pub page: usize,
    /// Largest useful column offset (`view::columns::max_offset` for the pane's width; 0 for a
    /// pane without columns).
    pub max_hscroll: usize,
}

/// One pane's state: selection or scroll offset, column offset, filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneView {
    pane: Pane,
    /// The selected row (index into the visible rows) of a list pane; the first line shown of a
    /// text pane.
    cursor: usize,
    /// Scrollable columns hidden on the left.
    hscroll: usize,
    /// The pane's filter (empty for the panes without one).
    filter: Filter,
}

impl PaneView {
    /// The state of `pane` at start: first row, no column scrolled, no filter.
    pub fn new(pane: Pane) -> Self {
        PaneView { pane, cursor: 0, hscroll: 0, filter: Filter::default() }
    }

    /// Which pane this is.
    pub fn pane(&self) -> Pane {
        self.pane
    }

    /// The selected row of a list pane (index into its visible rows), or the first line shown of
    /// a text pane.
    pub fn selected(&self) -> usize {
        self.cursor
    }

    /// Selects row `row` of a list pane (scrolls a text pane to line `row`).
    pub fn select(&mut self, row: usize) {
        self.cursor = row;
    }

    /// Keeps the selection within `rows` rows (the first row when there are none).
    pub fn clamp(&mut self, rows: usize) {
        self.cursor = self.cursor.min(rows.saturating_sub(1));
    }

    /// Scrollable columns hidden on the left (clamped when drawn).
    pub fn hscroll(&self) -> usize {
        self.hscroll
    }

    /// True for every pane: the list panes filter their rows, the text panes (Ceph, Events) the
    /// lines shown.
    pub fn has_filter(&self) -> bool {
        true
    }

    /// The pane's filter.
    pub fn filter(&self) -> &Filter {
        &self.filter
    }

    /// Filters the pane by `text` and selects its first row; nothing for a pane without a filter.
    /// Returns whether the filter was set (the visible rows must then be recomputed).
    pub fn set_filter(&mut self, text: &str) -> bool {
        if !self.has_filter() {
            return false;
        }
        self.filter = Filter::new(text);
        self.cursor = 0;
        true
    }

    /// Removes the filter, keeping the selection (a jump selects its row next).
    pub fn clear_filter(&mut self) {
        self.filter = Filter::default();
    }

    /// The first visible row of `h` rows so that the selection (clamped to `rows`) stays on screen.
    pub fn first_visible(&self, rows: usize, h: usize) -> usize {
        let sel = self.cursor.min(rows.saturating_sub(1));
        if h == 0 || sel < h { 0 } else { sel + 1 - h }
    }

    /// The pane's answer to a key: moving the selection (↑ ↓, pages, first, last) or scrolling the
    /// columns (← →) is [`Outcome::Consumed`]; every other key is the app's ([`Outcome::Ignored`]).
    pub fn handle_key(&mut self, a: Action, room: Room) -> Outcome {
        let page = room.page.max(1) as isize;
        match a {
            Action::Up => self.move_by(-1, room),
            Action::Down => self.move_by(1, room),
            Action::PageUp => self.move_by(-page, room),
            Action::PageDown => self.move_by(page, room),
            Action::Top => self.cursor = 0,
            Action::Bottom => self.move_by(isize::MAX / 2, room),
            Action::Left => self.scroll_columns(-1, room.max_hscroll),
            Action::Right => self.scroll_columns(1, room.max_hscroll),
            _ => return Outcome::Ignored,
        }
        Outcome::Consumed
    }

    fn move_by(&mut self, delta: isize, room: Room) {
        let max = match room.rows {
            None => TEXT_SCROLL_MAX as isize,
            Some(n) => n.saturating_sub(1) as isize,
        };
        self.cursor = (self.cursor as isize).saturating_add(delta).clamp(0, max.max(0)) as usize;
    }

    fn scroll_columns(&mut self, delta: isize, max: usize) {
        self.hscroll = (self.hscroll.min(max) as isize + delta).clamp(0, max as isize) as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOM: Room = Room { rows: Some(5), page: 3, max_hscroll: 2 };

    #[test]
    fn moves_within_its_rows_and_columns() {
        let mut v = PaneView::new(Pane::Pods);
        assert_eq!(v.handle_key(Action::Up, ROOM), Outcome::Consumed);
        assert_eq!(v.selected(), 0);
        v.handle_key(Action::PageDown, ROOM);
        v.handle_key(Action::PageDown, ROOM);
        assert_eq!(v.selected(), 4, "stops at the last row");
        v.handle_key(Action::Top, ROOM);
        assert_eq!(v.selected(), 0);
        for _ in 0..5 {
            v.handle_key(Action::Right, ROOM);
        }
        assert_eq!(v.hscroll(), 2, "stops at the last useful column offset");
        assert_eq!(v.handle_key(Action::Drill, ROOM), Outcome::Ignored);
    }

    #[test]
    fn text_panes_scroll_and_filter() {
        let mut v = PaneView::new(Pane::Events);
        v.handle_key(Action::Bottom, Room { rows: None, page: 3, max_hscroll: 0 });
        assert_eq!(v.selected(), TEXT_SCROLL_MAX);
        assert!(v.set_filter("x"));
        assert_eq!((v.filter().text(), v.selected()), ("x", 0), "a new filter scrolls to the top");
        let mut p = PaneView::new(Pane::Nodes);
        p.select(3);
        assert!(p.set_filter(" Node-A "));
        assert_eq!((p.filter().text(), p.selected()), ("node-a", 0));
    }
}
