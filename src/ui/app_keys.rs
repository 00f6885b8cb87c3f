//! Where a raw key goes: the popup or prompt on top has the keys, in the order they are drawn
//! over each other (the note editor over everything, then the `:` prompt, the describe popup, a
//! training screen, the filter editor, the Playbook view's popups). The help overlay, when open,
//! sits over the describe popup and the training screens: their keys are then mapped ones.

use crossterm::event::KeyEvent;

use super::app::{App, Effect};

impl App {
    /// True while a popup or prompt takes raw keys ([`super::app::Msg::Key`]) instead of the
    /// mapped pane or Playbook keys.
    pub fn takes_raw_keys(&self) -> bool {
        self.note.is_some()
            || self.command.is_some()
            || (self.describe.is_some() && !self.help)
            || (self.training.as_ref().is_some_and(|t| t.captures_keys()) && !self.help)
            || self.wants_raw_keys()
    }

    /// A raw key, to the popup or prompt that has the keys (nothing when none has).
    pub(crate) fn route_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if self.note.is_some() {
            self.note_key(key);
            return vec![];
        }
        if self.command.is_some() {
            return self.command_key(key);
        }
        if self.describe.is_some() && !self.help {
            return self.describe_key(key);
        }
        if self.training.as_ref().is_some_and(|t| t.captures_keys()) && !self.help {
            self.train_key(key);
            return vec![];
        }
        if self.filter_editor.is_some() {
            self.filter_key(key);
            return self.follow_selection();
        }
        if self.wants_raw_keys() {
            return self.popup_key(key);
        }
        vec![]
    }
}
