//! The note editor popup (`n`): a multi-line field whose keys are named on its bottom border.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::{centered, fit};
use crate::ui::app::App;
use crate::ui::notes::{NOTE_KEYS, NoteUi};

/// Draws the note popup centred over `area`: 76×12 at most, smaller on a smaller terminal.
pub fn draw(f: &mut Frame, app: &App, note: &NoteUi, area: Rect) {
    let t = &app.theme;
    let rect = centered(area, area.width.saturating_sub(4).min(76), area.height.saturating_sub(4).clamp(5, 12));
    f.render_widget(Clear, rect);
    let title = match &app.session {
        Some(rec) => format!(" note → session log {} ", rec.id()),
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
    let (field, message) = match &note.message {
        Some(m) => {
            let [a, b] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
            (a, Some((m, b)))
        }
        None => (inner, None),
    };
    let mut editor = note.editor.clone();
    editor.set_style(t.text);
    editor.set_placeholder_style(t.muted);
    f.render_widget(&editor, field);
    if let Some((m, r)) = message {
        f.render_widget(Paragraph::new(Line::styled(fit(m, r.width as usize), t.warn)), r);
    }
}
