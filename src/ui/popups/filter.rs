//! The filter prompt of the focused pane (`/`) as a component: its state is the one-line field;
//! the filter it edits is the focused pane's, applied by the app as the user types (incremental).
//! Drawn over the status line.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

use crate::theme::Theme;
use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::popups::confirm::{edit_field, one_line_field};

/// The open filter prompt.
#[derive(Debug, Clone)]
pub struct FilterPrompt {
    field: TextArea<'static>,
}

impl FilterPrompt {
    /// The prompt holding the pane's current filter `text`.
    pub fn new(text: &str) -> Self {
        let mut field = one_line_field();
        field.insert_str(text);
        FilterPrompt { field }
    }

    /// The text typed.
    pub fn text(&self) -> String {
        self.field.lines().join(" ")
    }

    /// The prompt's answer to a key: Enter keeps the filter and closes ([`AppCommand::Close`]),
    /// Esc or Ctrl-C clear it and close, Ctrl-U / Ctrl-W delete to the line start / the word
    /// before the cursor, other keys edit; every edit asks for the new filter
    /// ([`AppCommand::Filter`]). Every key is the prompt's.
    pub fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        match key.code {
            KeyCode::Enter => Outcome::Command(AppCommand::Close),
            _ if ctrl_c => Outcome::Command(AppCommand::Filter { text: String::new(), close: true }),
            KeyCode::Esc => Outcome::Command(AppCommand::Filter { text: String::new(), close: true }),
            _ => {
                edit_field(&mut self.field, key);
                Outcome::Command(AppCommand::Filter { text: self.text(), close: false })
            }
        }
    }

    /// Draws the prompt over the status line `area`, naming the pane it filters.
    pub fn draw(&self, f: &mut Frame, t: &Theme, pane: &str, area: Rect) {
        crate::ui::view::chrome::filter_line(f, t, " filter ", pane, &self.field, area);
    }
}
