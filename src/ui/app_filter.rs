//! The filter editor of the list panes (`/`, incremental) and each pane's source state.

use super::app::{App, Pane};
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

    /// A raw key while the filter editor is open: Enter keeps the filter, Esc or Ctrl-C clears
    /// it, Ctrl-U / Ctrl-W delete to the line start / the word before the cursor, other keys edit.
    pub(crate) fn filter_key(&mut self, key: crossterm::event::KeyEvent) {
        use crossterm::event::{KeyCode, KeyModifiers};
        let Some(editor) = self.filter_editor.as_mut() else { return };
        let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        match key.code {
            KeyCode::Enter => self.filter_editor = None,
            _ if ctrl_c => {
                self.filter_editor = None;
                self.set_focused_filter("");
            }
            KeyCode::Esc => {
                self.filter_editor = None;
                self.set_focused_filter("");
            }
            _ => {
                super::confirm::edit_field(editor, key);
                let text = editor.lines().join(" ");
                // Incremental: the list narrows as the user types.
                self.set_focused_filter(&text);
            }
        }
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
