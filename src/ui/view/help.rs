//! The `?` help overlay: the keys of the view on top, generated from its key table.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::{centered, plain};
use crate::ui::app::App;
use crate::ui::keys_help::for_view;

/// Draws the help box of the view on top ([`for_view`]) centred over `area`.
pub fn draw(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let help = for_view(app);
    let kw = help.rows.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0).max(5) + 2;
    let w = 80.min(area.width);
    // what each key does, wrapped under itself (a hanging indent), never under the keys
    let room = (w as usize).saturating_sub(kw + 3).max(10);
    let mut lines: Vec<Line> = vec![];
    for (k, what) in &help.rows {
        for (i, part) in wrap_words(what, room).into_iter().enumerate() {
            let keys = if i == 0 { format!(" {k:<kw$}") } else { " ".repeat(kw + 1) };
            lines.push(Line::from(vec![plain(keys, t.accent), plain(part, t.text)]));
        }
    }
    if !help.about.is_empty() {
        lines.push(Line::raw(""));
        lines.extend(help.about.iter().map(|l| Line::styled(*l, t.muted)));
    }
    let h = (lines.len() as u16 + 2).min(area.height);
    let rect = centered(area, w, h);
    f.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focused)
        .title(Line::styled(format!(" keys: {} — Esc or ? to close ", help.title), t.title));
    let p = Paragraph::new(lines).wrap(Wrap { trim: false });
    let total = p.line_count(rect.width.saturating_sub(2)).min(u16::MAX as usize) as u16;
    let height = rect.height.saturating_sub(2);
    let scroll = app.help_scroll.min(total.saturating_sub(height));
    let block = block.title_bottom(Line::styled(super::more_marks(scroll, total, height), t.warn).right_aligned());
    f.render_widget(p.scroll((scroll, 0)).block(block), rect);
}

/// `text` cut at spaces into lines of at most `width` characters (a longer word is cut).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    let mut line = String::new();
    for word in text.split(' ') {
        let (n, wn) = (line.chars().count(), word.chars().count());
        if n > 0 && n + 1 + wn > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while line.chars().count() > width {
            let head: String = line.chars().take(width).collect();
            line = line.chars().skip(width).collect();
            out.push(head);
        }
    }
    out.push(line);
    out
}
