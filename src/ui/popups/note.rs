//! The note editor (`n`): a multi-line popup whose text goes into the session log as a `note`
//! event, stamped with the UTC time it was saved. Enter starts a new line, Ctrl-S (or Alt-Enter)
//! saves, Esc or Ctrl-C cancels (a second Esc when there is text, so a slip loses nothing).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui_textarea::{TextArea, WrapMode};

use crate::theme::Theme;
use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::view::util::{centered, fit};

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

impl NoteUi {
    /// Draws the popup centred over `area` (76×12 at most, smaller on a smaller terminal); its
    /// title names the session log `log_id` the note goes to, or says there is none.
    pub fn draw(&self, f: &mut Frame, area: Rect, t: &Theme, log_id: Option<&str>) {
        let rect = centered(area, area.width.saturating_sub(4).min(76), area.height.saturating_sub(4).clamp(5, 12));
        f.render_widget(Clear, rect);
        let title = match log_id {
            Some(id) => format!(" note → session log {id} "),
            None => " note (no session log) ".to_string(),
        };
        let width = rect.width.saturating_sub(2) as usize;
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border_focused)
            .title(Line::styled(fit(&title, width), t.title))
            .title_bottom(Line::styled(fit(&format!(" {NOTE_KEYS} "), width), t.accent));
        let inner = block.inner(rect);
        f.render_widget(block, rect);
        let (field, message) = match &self.message {
            Some(m) => {
                let [a, b] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
                (a, Some((m, b)))
            }
            None => (inner, None),
        };
        let mut editor = self.editor.clone();
        editor.set_style(t.text);
        editor.set_placeholder_style(t.muted);
        f.render_widget(&editor, field);
        if let Some((m, r)) = message {
            f.render_widget(Paragraph::new(Line::styled(fit(m, r.width as usize), t.warn)), r);
        }
    }
}
