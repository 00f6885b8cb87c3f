//! Where a [`super::app::Msg::Key`] goes: the popup or prompt on top has the keys, in the order
//! they are drawn over each other (the note editor over everything, then the `:` prompt, the
//! describe popup, a training screen, the filter editor, the Playbook view's popups), then the
//! Playbook view itself (its keys mapped by `keys::map_playbook`). The help overlay, when open,
//! sits over the describe popup and the training screens: their keys are then mapped ones. The
//! commands components answer with are applied here too.

use crate::ui::train_screen::TrainingScreen as _;
use crossterm::event::KeyEvent;

use super::app::{App, Effect};
use super::outcome::AppCommand;

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

    /// A key, to the popup or prompt that has the keys, else to the open Playbook view (its
    /// mapped keys); nothing when neither takes it.
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
        if self.remedy.playbook.is_some()
            && let Some(a) = super::keys::map_playbook(key)
        {
            return self.playbook_action(a);
        }
        vec![]
    }

    /// Applies a command a component answered. Closing is the caller's (it knows which component
    /// answered); the full copy's path and a confirmation are the Playbook view's own.
    pub(crate) fn apply_command(&mut self, c: AppCommand) -> Vec<Effect> {
        match c {
            AppCommand::Quit => self.quit = true,
            AppCommand::ClockStarted(at) => self.now = at,
            AppCommand::OpenHelp => self.help = true,
            AppCommand::OpenNote => self.open_note(),
            AppCommand::OpenPlaybook => return self.open_playbook(),
            AppCommand::OpenDescribe { yaml: false } => return self.open_describe_view(),
            AppCommand::OpenDescribe { yaml: true } => return self.open_yaml_view(),
            AppCommand::OpenCommand => self.open_command(),
            AppCommand::JumpTo(o) => {
                self.finding_detail = None;
                return self.jump_to(&o);
            }
            AppCommand::ToggleHints => self.toggle_hints(),
            AppCommand::SaveNote(text) => self.save_note(text),
            AppCommand::Remedy(r) => return vec![Effect::Remedy(r)],
            AppCommand::Describe(t) => return vec![Effect::Describe(t)],
            AppCommand::Answered { record, send } => {
                self.record_event(*record);
                return send.map(Effect::Remedy).into_iter().collect();
            }
            AppCommand::Filter { text, close } => self.edit_filter(&text, close),
            AppCommand::RunCommand(line) => return self.run_command(&line),
            AppCommand::Close | AppCommand::StartExport(_) | AppCommand::Confirm(_) => {}
        }
        vec![]
    }
}
