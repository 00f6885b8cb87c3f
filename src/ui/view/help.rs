//! The `?` help overlay, generated from the key table.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::{centered, plain};
use crate::ui::app::App;
use crate::ui::keys::{HELP, PLAYBOOK_HELP};

/// Draws the help box centred over `area`.
pub fn draw(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    // inside the Playbook view, its own keys
    let table = if app.remedy.playbook.is_some() { PLAYBOOK_HELP } else { HELP };
    let mut lines: Vec<Line> = table
        .iter()
        .map(|(k, what)| Line::from(vec![plain(format!(" {k:<16}"), t.accent), plain(*what, t.text)]))
        .collect();
    lines.push(Line::raw(""));
    lines.push(Line::styled(" Findings: diagnosed patterns; Enter shows evidence, explanation, objects.", t.muted));
    lines.push(Line::styled(" ! marks a row whose object is in a finding. Ceph: watchers, locks and", t.muted));
    lines.push(Line::styled(" blocklist of the selected image, each address matched to its node.", t.muted));
    lines.push(Line::styled(" Status bar: ✓ live, … listing, stale N = reconnecting, forbidden = 403.", t.muted));
    let h = (lines.len() as u16 + 2).min(area.height);
    let w = 76.min(area.width);
    let rect = centered(area, w, h);
    f.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focused)
        .title(Line::styled(" help — Esc or ? to close ", t.title));
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }).block(block), rect);
}
