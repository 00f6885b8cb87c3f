//! The describe / YAML popup (`d` / `y`): the object as read from the API server, scrollable,
//! with what is above and below on its bottom border.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::{centered, fit, more_marks};
use crate::ui::app::App;
use crate::ui::describe::{DescribeMode, DescribeUi};

/// `(content rows, visible rows)` of the popup drawn in `area`.
pub fn metrics(app: &App, d: &DescribeUi, area: Rect) -> (u16, u16) {
    let r = rect(area);
    let total = wrapped(d.lines(&app.snap.events, app.now), r.width.saturating_sub(2) as usize)
        .len()
        .min(u16::MAX as usize) as u16;
    (total, r.height.saturating_sub(2))
}

/// `lines` cut into rows of at most `width` characters (continuations start with `↪`): nothing
/// is cut off at the popup's edge.
pub fn wrapped(lines: Vec<String>, width: usize) -> Vec<String> {
    let width = width.max(8);
    let mut out = vec![];
    for l in lines {
        let chars: Vec<char> = l.chars().collect();
        if chars.len() <= width {
            out.push(l);
            continue;
        }
        out.push(chars[..width].iter().collect());
        for chunk in chars[width..].chunks(width - 2) {
            out.push(format!("↪ {}", chunk.iter().collect::<String>()));
        }
    }
    out
}

fn rect(area: Rect) -> Rect {
    centered(area, area.width.saturating_sub(2).min(120), area.height)
}

/// Draws the popup over `area` (the body: header, banner and status line stay visible).
pub fn draw(f: &mut Frame, app: &App, d: &DescribeUi, area: Rect) {
    let t = &app.theme;
    let r = rect(area);
    f.render_widget(Clear, r);
    let what = match d.mode {
        DescribeMode::Describe => "describe",
        DescribeMode::Yaml => "yaml",
    };
    let target = d.target().map(|o| o.label()).unwrap_or_default();
    let of = if d.targets.len() > 1 { format!(" ({}/{} Tab)", d.current + 1, d.targets.len()) } else { String::new() };
    let width = r.width.saturating_sub(2) as usize;
    let title = fit(&format!(" {what} {}{of} ", crate::text::sanitize(&target)), width);
    let lines = wrapped(d.lines(&app.snap.events, app.now), width);
    let total = lines.len().min(u16::MAX as usize) as u16;
    let height = r.height.saturating_sub(2);
    let offset = d.scroll.offset.min(total.saturating_sub(height));
    let marks = more_marks(offset, total, height);
    let keys = " d/y switch · Esc close ";
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focused)
        .title(Line::styled(title, t.title))
        .title_bottom(Line::styled(keys, t.accent))
        .title_bottom(Line::styled(marks, t.warn).right_aligned());
    let style = if matches!(d.object, Some(Err(_))) { t.error } else { t.text };
    let text: Vec<Line> =
        lines.into_iter().skip(offset as usize).take(height as usize).map(|l| Line::styled(l, style)).collect();
    f.render_widget(Paragraph::new(text).block(block), r);
}
