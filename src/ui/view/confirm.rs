//! The confirm-before-act popup (the action to confirm is a value: [`ConfirmUi`]) and the
//! typed-override prompt. Shows exactly the confirmation: the argv or API verb + resource + patch,
//! the objects, the live precondition just re-checked, reversible or not, the inverse, the
//! warnings. Reversible: `y`; irreversible: type the object's name; Esc cancels.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::{centered, plain};
use crate::text::sanitize;
use crate::ui::app::App;
use crate::ui::export::ExportUi;
use crate::ui::playbook::{ConfirmUi, OverrideUi};
use crate::ui::worker::OverrideNeed;

fn section<'a>(app: &App, title: &str, items: &[String]) -> Vec<Line<'a>> {
    let mut out = vec![Line::styled(title.to_string(), app.theme.accent)];
    out.extend(items.iter().map(|s| Line::styled(format!("  {}", sanitize(s)), app.theme.text)));
    out
}

/// Draws the confirm popup centred over `area`.
pub fn draw(f: &mut Frame, app: &App, c: &ConfirmUi, area: Rect) {
    let t = &app.theme;
    let v = &c.view;
    let rect = centered(area, area.width.min(110), area.height);
    f.render_widget(Clear, rect);
    let what = match v.undo_of {
        Some(n) => format!(" confirm: UNDO of step {n} "),
        None => format!(" confirm {} ", v.step_id),
    };
    let mut title = vec![plain(what, t.title)];
    if v.dry_run {
        title.push(plain(" DRY-RUN: nothing will be sent ", t.badge));
    }
    let block = Block::default().borders(Borders::ALL).border_style(t.border_focused).title(Line::from(title));
    let inner = block.inner(rect);
    f.render_widget(block, rect);
    // most important first: a small terminal cuts the tail of the live re-check, never the warnings
    let mut lines = section(app, "Command", std::slice::from_ref(&v.command));
    if !v.warnings.is_empty() {
        lines.push(Line::styled("Warnings", t.warn));
        lines.extend(v.warnings.iter().map(|w| Line::styled(format!("  ! {}", sanitize(w)), t.warn)));
    }
    lines.push(Line::from(vec![
        plain("Reversible: ", t.accent),
        plain(if v.reversible { "yes" } else { "NO" }, if v.reversible { t.ok } else { t.error }),
        plain("  Inverse: ", t.accent),
        plain(sanitize(&v.inverse), t.text),
    ]));
    lines.extend(section(app, "Objects", &v.objects));
    lines.extend(section(app, "Live re-check (just now)", &v.precheck));
    // the name to type is shown whole (wrapped): a VolumeAttachment name is 68 characters
    let name = v.typed_name.as_ref().map(|n| sanitize(n));
    let prompt_rows = name.as_ref().map(|n| 1 + (n.chars().count() as u16 + 2).div_ceil(inner.width.max(1))).unwrap_or(0);
    let bottom: u16 = if v.typed_name.is_some() { prompt_rows + 2 } else { 2 };
    let [body, foot] = Layout::vertical([Constraint::Min(1), Constraint::Length(bottom)]).areas(inner);
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), body);
    let err = c.error.as_deref().map(|e| Line::styled(e.to_string(), t.error));
    match &v.typed_name {
        None => {
            let [a, b] = Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(foot);
            f.render_widget(Paragraph::new(err.unwrap_or_else(|| Line::raw(""))), a);
            f.render_widget(Paragraph::new(Line::styled("y confirm · n / Esc cancel", t.accent)), b);
        }
        Some(_) => {
            let [a, b, e] = Layout::vertical([Constraint::Length(prompt_rows), Constraint::Length(1), Constraint::Length(1)]).areas(foot);
            let prompt = vec![
                Line::styled("Irreversible: type this name, then Enter · Esc cancel", t.warn),
                Line::styled(format!("`{}`", name.unwrap_or_default()), t.warn),
            ];
            f.render_widget(Paragraph::new(prompt).wrap(Wrap { trim: false }), a);
            input(f, app, &c.input, b);
            f.render_widget(Paragraph::new(err.unwrap_or_else(|| Line::raw(""))), e);
        }
    }
}

fn input(f: &mut Frame, app: &App, field: &ratatui_textarea::TextArea<'static>, area: Rect) {
    let label = "> ";
    f.render_widget(Paragraph::new(Line::styled(label, app.theme.accent)), area);
    let r = Rect { x: area.x + 2, width: area.width.saturating_sub(2), ..area };
    f.render_widget(field, r);
}

/// Draws the typed-override prompt.
pub fn draw_override(f: &mut Frame, app: &App, o: &OverrideUi, area: Rect) {
    let t = &app.theme;
    let rect = centered(area, area.width.saturating_sub(4).min(90), 8);
    f.render_widget(Clear, rect);
    let block = Block::default().borders(Borders::ALL).border_style(t.border_focused).title(Line::styled(" OVERRIDE a safety rule ", t.title));
    let inner = block.inner(rect);
    f.render_widget(block, rect);
    let what = match &o.need {
        OverrideNeed::ReadyNode(n) => format!("Node {n} is Ready: fencing it cuts off a live node."),
        OverrideNeed::WideBlocklist(a) => format!("{a} has no nonce: it blocks EVERY client on that host."),
    };
    let [a, b, c, d] = Layout::vertical([Constraint::Length(2), Constraint::Length(1), Constraint::Length(1), Constraint::Length(1)]).areas(inner);
    f.render_widget(Paragraph::new(Line::styled(what, t.warn)).wrap(Wrap { trim: false }), a);
    f.render_widget(Paragraph::new(Line::styled(format!("Type `{}` then Enter to override · Esc cancel", o.need.name()), t.accent)), b);
    input(f, app, &o.input, c);
    if let Some(e) = &o.error {
        f.render_widget(Paragraph::new(Line::styled(e.clone(), t.error)), d);
    }
}

/// Draws the full-copy destination prompt of the Backup step.
pub fn draw_export(f: &mut Frame, app: &App, e: &ExportUi, area: Rect) {
    let t = &app.theme;
    let rect = centered(area, area.width.saturating_sub(4).min(100), 8);
    f.render_widget(Clear, rect);
    let block = Block::default().borders(Borders::ALL).border_style(t.border_focused).title(Line::styled(" Backup: full copy with rbd export ", t.title));
    let inner = block.inner(rect);
    f.render_widget(block, rect);
    let [a, b, c, d] = Layout::vertical([Constraint::Length(2), Constraint::Length(1), Constraint::Length(1), Constraint::Length(1)]).areas(inner);
    let what = "Runs the Backup step and exports the new snapshot to this file (must not exist); the journal records its path and sha256.";
    f.render_widget(Paragraph::new(Line::styled(what, t.text)).wrap(Wrap { trim: false }), a);
    f.render_widget(Paragraph::new(Line::styled("Destination file, then Enter · Esc cancel", t.accent)), b);
    input(f, app, &e.input, c);
    if let Some(err) = &e.error {
        f.render_widget(Paragraph::new(Line::styled(sanitize(err), t.error)), d);
    }
}
