//! The filter editor of the list panes (`/`, incremental) and each pane's source state.

use super::app::{App, Pane};
use super::outcome::{AppCommand, Outcome};
use super::rows::Filter;
use unstick_core::sources::kube::{SourceState, WatchedKind};

impl App {
    pub(crate) fn focus_has_filter(&self) -> bool {
        self.view(self.focus).has_filter()
    }

    pub(crate) fn focused_filter(&self) -> &Filter {
        self.view(self.focus).filter()
    }

    pub(crate) fn set_focused_filter(&mut self, text: &str) {
        if self.view_mut(self.focus).set_filter(text) {
            self.recompute_rows();
        }
    }

    /// A raw key while the filter editor is open ([`super::filter_editor::handle_key`]).
    pub(crate) fn filter_key(&mut self, key: crossterm::event::KeyEvent) {
        let Some(editor) = self.filter_editor.as_mut() else { return };
        match super::filter_editor::handle_key(editor, key) {
            Outcome::Command(AppCommand::Close) => self.filter_editor = None,
            Outcome::Command(c) => {
                self.apply_command(c);
            }
            Outcome::Consumed | Outcome::Ignored => {}
        }
    }

    /// Sets the focused pane's filter to `text` (incremental: the list narrows as the user types);
    /// `close` closes the editor first.
    pub(super) fn edit_filter(&mut self, text: &str, close: bool) {
        if close {
            self.filter_editor = None;
        }
        self.set_focused_filter(text);
    }

    /// The state of the kinds a pane shows: the worst one (forbidden > error > stale > connecting).
    pub fn pane_state(&self, pane: Pane) -> Option<(WatchedKind, &SourceState)> {
        super::pane::pane_state(&self.kube_state, pane)
    }
}
