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
    let about: [&str; 4] = if app.training.is_some() && app.remedy.playbook.is_none() {
        [
            " Training: Enter on a finding shows its evidence; p opens its playbook.",
            " Backup first, then each step with Enter; a write asks y or a typed name.",
            " h: hints. The status bar counts goals met; the debrief opens at the end.",
            " Esc closes the playbook; q quits (the session log keeps what you did).",
        ]
    } else {
        [
            " Findings: diagnosed patterns; Enter shows evidence, explanation, objects.",
            " ! marks a row whose object is in a finding. Ceph: watchers, locks and",
            " blocklist of the selected image, each address matched to its node.",
            " Status bar: ✓ live, … listing, stale N = reconnecting, forbidden = 403.",
        ]
    };
    lines.extend(about.iter().map(|l| Line::styled(*l, t.muted)));
    let h = (lines.len() as u16 + 2).min(area.height);
    let w = 76.min(area.width);
    let rect = centered(area, w, h);
    f.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focused)
        .title(Line::styled(" help — Esc or ? to close ", t.title));
    let p = Paragraph::new(lines).wrap(Wrap { trim: false });
    let total = p.line_count(rect.width.saturating_sub(2)).min(u16::MAX as usize) as u16;
    let height = rect.height.saturating_sub(2);
    let scroll = app.help_scroll.min(total.saturating_sub(height));
    let block = block.title_bottom(Line::styled(super::more_marks(scroll, total, height), t.warn).right_aligned());
    f.render_widget(p.scroll((scroll, 0)).block(block), rect);
}
