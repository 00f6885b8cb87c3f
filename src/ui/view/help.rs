//! The `?` help overlay, generated from the key table.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::plain;
use crate::ui::app::App;
use crate::ui::keys::HELP;

/// Draws the help box centred over `area`.
pub fn draw(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let mut lines: Vec<Line> = HELP
        .iter()
        .map(|(k, what)| Line::from(vec![plain(format!(" {k:<16}"), t.accent), plain(*what, t.text)]))
        .collect();
    lines.push(Line::raw(""));
    lines.push(Line::styled(" Panes: Nodes (Ready, InternalIP, taints), Pods (Terminating /", t.muted));
    lines.push(Line::styled(" ContainerCreating), Volumes (PVC → PV → image, VolumeAttachments),", t.muted));
    lines.push(Line::styled(" Ceph (watchers, locks, blocklist of the selected image), Events.", t.muted));
    lines.push(Line::styled(" Status bar: ✓ live, … connecting, stale N = reconnecting.", t.muted));
    let h = (lines.len() as u16 + 2).min(area.height);
    let w = 76.min(area.width);
    let [row] = Layout::vertical([Constraint::Length(h)]).flex(Flex::Center).areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(w)]).flex(Flex::Center).areas(row);
    f.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focused)
        .title(Line::styled(" help — Esc or ? to close ", t.title));
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }).block(block), rect);
}
