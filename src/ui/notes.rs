//! The note editor (`n`): a multi-line popup whose text goes into the session log as a `note`
//! event, stamped with the UTC time it was saved. Enter starts a new line, Ctrl-S (or Alt-Enter)
//! saves, Esc or Ctrl-C cancels (a second Esc when there is text, so a slip loses nothing).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::{TextArea, WrapMode};

use super::outcome::{AppCommand, Outcome};

/// The keys, as shown on the popup's bottom border.
pub const NOTE_KEYS: &str = "Ctrl-S save · Esc/Ctrl-C cancel · Enter new line";

/// The open note editor.
#[derive(Debug, Clone)]
pub struct NoteUi {
    /// The text being written.
    pub editor: TextArea<'static>,
    /// Esc was pressed once on a non-empty note: the next Esc discards it.
    pub discard_armed: bool,
    /// Why the last save or Esc did not close the editor.
    pub message: Option<String>,
}

impl NoteUi {
    /// An empty editor (word wrap, a placeholder saying where the note goes).
    pub fn new() -> Self {
        let mut editor = TextArea::default();
        editor.set_wrap_mode(WrapMode::Word);
        editor.set_cursor_line_style(ratatui::style::Style::default());
        editor
            .set_placeholder_text("What did you see, try or decide? It goes into the session log and the postmortem.");
        NoteUi { editor, discard_armed: false, message: None }
    }

    /// The note as typed: lines joined with `\n`, trailing blank space removed.
    pub fn text(&self) -> String {
        self.editor.lines().join("\n").trim_end().to_string()
    }
}

impl Default for NoteUi {
    fn default() -> Self {
        Self::new()
    }
}

/// True for the keys that save a note: Ctrl-S and Alt-Enter.
fn is_save(key: &KeyEvent) -> bool {
    (key.modifiers.contains(KeyModifiers::CONTROL) && matches!(key.code, KeyCode::Char('s' | 'S')))
        || (key.modifiers.contains(KeyModifiers::ALT) && key.code == KeyCode::Enter)
}

impl NoteUi {
    /// The editor's answer to a key: Ctrl-S / Alt-Enter ask to save the text
    /// ([`AppCommand::SaveNote`], the app checks the session log), Esc or Ctrl-C close an empty
    /// note at once and a written one on the second press, Ctrl-U deletes to the line start,
    /// anything else edits.
    pub fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        if is_save(&key) {
            return Outcome::Command(AppCommand::SaveNote(self.text()));
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if key.code == KeyCode::Esc || (ctrl && key.code == KeyCode::Char('c')) {
            if self.text().trim().is_empty() || self.discard_armed {
                return Outcome::Command(AppCommand::Close);
            }
            self.discard_armed = true;
            self.message = Some("Esc (or Ctrl-C) again discards this note · Ctrl-S saves it".into());
            return Outcome::Consumed;
        }
        self.discard_armed = false;
        self.message = None;
        if ctrl && key.code == KeyCode::Char('u') {
            // as in a shell: delete to the start of the line (the editor's own Ctrl-U is undo)
            self.editor.delete_line_by_head();
            return Outcome::Consumed;
        }
        self.editor.input(key);
        Outcome::Consumed
    }

    /// The save was refused (`why`: no working session log): the editor stays open with the text
    /// and says so.
    pub fn refuse_save(&mut self, why: &str) {
        self.message = Some(format!("not saved: {why}; copy the text, then Esc twice"));
        self.discard_armed = false;
    }
}
