//! The note editor (`n`): a multi-line popup whose text goes into the session log as a `note`
//! event, stamped with the UTC time it was saved. Enter starts a new line, Ctrl-S (or Alt-Enter)
//! saves, Esc or Ctrl-C cancels (a second Esc when there is text, so a slip loses nothing).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::{TextArea, WrapMode};

use super::app::App;
use crate::session::Event;

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
    fn new() -> Self {
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

/// True for the keys that save a note: Ctrl-S and Alt-Enter.
fn is_save(key: &KeyEvent) -> bool {
    (key.modifiers.contains(KeyModifiers::CONTROL) && matches!(key.code, KeyCode::Char('s' | 'S')))
        || (key.modifiers.contains(KeyModifiers::ALT) && key.code == KeyCode::Enter)
}

impl App {
    /// Opens the note editor (it keeps a note already being written).
    pub(crate) fn open_note(&mut self) {
        if self.note.is_none() {
            self.note = Some(NoteUi::new());
        }
    }

    /// A raw key while the note editor is open.
    pub fn note_key(&mut self, key: KeyEvent) {
        let Some(note) = self.note.as_mut() else { return };
        if is_save(&key) {
            return self.save_note();
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if key.code == KeyCode::Esc || (ctrl && key.code == KeyCode::Char('c')) {
            if note.text().trim().is_empty() || note.discard_armed {
                self.note = None;
            } else {
                note.discard_armed = true;
                note.message = Some("Esc (or Ctrl-C) again discards this note · Ctrl-S saves it".into());
            }
            return;
        }
        note.discard_armed = false;
        note.message = None;
        if ctrl && key.code == KeyCode::Char('u') {
            // as in a shell: delete to the start of the line (the editor's own Ctrl-U is undo)
            note.editor.delete_line_by_head();
            return;
        }
        note.editor.input(key);
    }

    /// Writes the note to the session log and closes the editor; when there is no working log the
    /// editor stays open with the text and says why.
    fn save_note(&mut self) {
        let Some(note) = self.note.as_mut() else { return };
        let text = note.text();
        if text.trim().is_empty() {
            self.note = None;
            self.remedy.notice = Some("empty note: nothing saved".into());
            return;
        }
        let why = match &self.session {
            None => Some("this console has no session log".to_string()),
            Some(rec) => rec.error().map(|e| format!("the session log is failing ({e})")),
        };
        if let Some(why) = why {
            note.message = Some(format!("not saved: {why}; copy the text, then Esc twice"));
            note.discard_armed = false;
            return;
        }
        self.note = None;
        if let Some(rec) = self.session.as_mut() {
            let at = rec.now();
            rec.record_at(at, Event::Note { text });
            self.remedy.notice = Some(format!("note saved {} UTC to session {}", at.strftime("%H:%M:%S"), rec.id()));
        }
    }
}
