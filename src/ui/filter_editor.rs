//! The filter editor of the list panes (`/`) as a component: its state is the one-line field
//! (`App::filter_editor`); the filter it edits is the focused pane's, applied by the app as the
//! user types (incremental). Drawn on the status line by `view/chrome.rs`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;

use super::confirm::edit_field;
use super::outcome::{AppCommand, Outcome};

/// The editor's answer to a key: Enter keeps the filter and closes ([`AppCommand::Close`]), Esc
/// or Ctrl-C clear it and close, Ctrl-U / Ctrl-W delete to the line start / the word before the
/// cursor, other keys edit; every edit asks for the new filter ([`AppCommand::Filter`]).
pub fn handle_key(editor: &mut TextArea<'static>, key: KeyEvent) -> Outcome {
    let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
    match key.code {
        KeyCode::Enter => Outcome::Command(AppCommand::Close),
        _ if ctrl_c => Outcome::Command(AppCommand::Filter { text: String::new(), close: true }),
        KeyCode::Esc => Outcome::Command(AppCommand::Filter { text: String::new(), close: true }),
        _ => {
            edit_field(editor, key);
            Outcome::Command(AppCommand::Filter { text: editor.lines().join(" "), close: false })
        }
    }
}
