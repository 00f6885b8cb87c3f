//! The filter editor of the list panes (`/`, incremental) and each pane's source state.

use super::app::{App, Pane};
use super::outcome::{AppCommand, Outcome};
use super::rows::Filter;
use crate::sources::kube::{SourceState, WatchedKind};

impl App {
    pub(crate) fn focus_has_filter(&self) -> bool {
        matches!(self.focus, Pane::Nodes | Pane::Pods | Pane::Volumes)
    }

    pub(crate) fn focused_filter(&self) -> &Filter {
        match self.focus {
            Pane::Nodes => &self.filters.nodes,
            Pane::Volumes => &self.filters.volumes,
            _ => &self.filters.pods,
        }
    }

    pub(crate) fn set_focused_filter(&mut self, text: &str) {
        let f = Filter::new(text);
        match self.focus {
            Pane::Nodes => self.filters.nodes = f,
            Pane::Volumes => self.filters.volumes = f,
            Pane::Pods => self.filters.pods = f,
            _ => return,
        }
        self.selected[self.focus.index()] = 0;
        self.recompute_rows();
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
        let kinds: &[WatchedKind] = match pane {
            Pane::Nodes => &[WatchedKind::Node],
            Pane::Pods => &[WatchedKind::Pod],
            Pane::Volumes => &[WatchedKind::Pvc, WatchedKind::Pv, WatchedKind::VolumeAttachment],
            Pane::Events => &[WatchedKind::Event],
            Pane::Ceph | Pane::Findings => return None,
        };
        let rank = |s: &SourceState| match s {
            SourceState::Forbidden { .. } => 4,
            SourceState::Error(_) => 3,
            SourceState::Stale { .. } => 2,
            SourceState::Connecting => 1,
            SourceState::Live => 0,
        };
        kinds.iter().filter_map(|k| self.kube_state.get(k).map(|s| (*k, s))).max_by_key(|(_, s)| rank(s))
    }
}
