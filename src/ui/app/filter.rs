//! The focused pane's filter (`/`, edited in its prompt, incremental) and each pane's source state.

use super::{App, Pane};
use unstick_core::console_state::rows::Filter;
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

    /// The state of the kinds a pane shows: the worst one (forbidden > error > stale > connecting).
    pub fn pane_state(&self, pane: Pane) -> Option<(WatchedKind, &SourceState)> {
        crate::ui::panes::pane_state(&self.kube_state, pane)
    }
}
