//! The confirm-before-act popup drawn (the action to confirm is a value: [`ConfirmUi`]). Shows exactly the confirmation: the argv or API verb + resource + patch,
//! the objects, the live precondition just re-checked, reversible or not, the inverse, the
//! warnings, the blast radius. Reversible: `y`; irreversible (or affecting volumes without a
//! verified backup): type the name's highlighted part; Esc cancels. The content scrolls; the keys
//! line says when more is below (state and keys: `ui::confirm`).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use unstick_core::remedy::journal::step::{step_label, undone_step};

use crate::theme::Theme;
use crate::ui::popups::playbook::ConfirmUi;
use crate::ui::view::util::{centered, plain};
use unstick_core::text::sanitize;

fn section<'a>(t: &Theme, title: &str, items: &[String]) -> Vec<Line<'a>> {
    let mut out = vec![Line::styled(title.to_string(), t.accent)];
    out.extend(items.iter().map(|s| Line::styled(format!("  {}", sanitize(s)), t.text)));
    out
}

/// The popup's scrollable content: command, warnings, reversibility, objects, blast radius, the
/// live re-check and the name to type (its typed part highlighted).
fn lines<'a>(t: &Theme, c: &ConfirmUi) -> Vec<Line<'a>> {
    let v = &c.view;
    let mut lines = section(t, "Command", std::slice::from_ref(&v.command));
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
    lines.extend(section(t, "Objects", &v.objects));
    if !c.blast.lines.is_empty() {
        lines.push(Line::styled(format!("Blast radius ({} more object(s) affected)", c.blast.lines.len()), t.warn));
        for l in &c.blast.lines {
            let style = if l.unbacked { t.error } else { t.text };
            lines.push(Line::styled(format!("  {}", sanitize(l)), style));
        }
    }
    lines.extend(section(t, "Live re-check (just now)", &v.precheck));
    if let (Some(name), Some(part)) = (&c.typed_name, c.to_type()) {
        let name = sanitize(name);
        let why = if v.typed_name.is_some() { "irreversible" } else { "affects volumes without a verified backup" };
        lines.push(Line::styled(format!("To confirm ({why}), type the highlighted part:"), t.warn));
        let head = name.strip_suffix(part).unwrap_or_default().to_string();
        lines.push(Line::from(vec![plain(format!("  {head}"), t.text), plain(part.to_string(), t.selected)]));
    }
    lines
}

fn geometry(c: &ConfirmUi, area: Rect) -> (Rect, Rect, Rect) {
    let rect = centered(area, area.width.min(110), area.height);
    let inner = Rect {
        x: rect.x + 1,
        y: rect.y + 1,
        width: rect.width.saturating_sub(2),
        height: rect.height.saturating_sub(2),
    };
    let foot = if c.typed_name.is_some() { 3 } else { 2 };
    let [body, foot] = Layout::vertical([Constraint::Min(1), Constraint::Length(foot)]).areas(inner);
    (rect, body, foot)
}

impl ConfirmUi {
    /// `(content rows, visible rows)` of the popup over `area` (what its keys scroll through).
    pub fn metrics(&self, area: Rect, t: &Theme) -> (u16, u16) {
        let (_, body, _) = geometry(self, area);
        let total = Paragraph::new(lines(t, self)).wrap(Wrap { trim: false }).line_count(body.width);
        (total.min(u16::MAX as usize) as u16, body.height)
    }

    /// Draws the popup centred over `area`.
    pub fn draw(&self, f: &mut Frame, area: Rect, t: &Theme) {
        draw(f, t, self, area)
    }
}

fn draw(f: &mut Frame, t: &Theme, c: &ConfirmUi, area: Rect) {
    let v = &c.view;
    let (rect, body, foot) = geometry(c, area);
    f.render_widget(Clear, rect);
    // one numbering: the playbook's step number, as the playbook, the journal and the export show it
    let what = match (v.undo_of, undone_step(&v.step_id)) {
        (Some(_), Some(of)) => format!(" confirm: UNDO of {} ", step_label(of)),
        (Some(n), None) => format!(" confirm: UNDO of journal entry {n} "),
        (None, _) => format!(" confirm {} ", step_label(&v.step_id)),
    };
    let mut title = vec![plain(what, t.title)];
    if v.dry_run {
        title.push(plain(" DRY-RUN: nothing will be sent ", t.badge));
    }
    let content = lines(t, c);
    let (total, height) = c.metrics(area, t);
    let mut s = c.scroll;
    s.shown(total, height);
    let more = crate::ui::view::util::more_marks(s.offset, total, height);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focused)
        .title(Line::from(title))
        .title_bottom(Line::styled(more, t.warn).right_aligned());
    f.render_widget(block, rect);
    f.render_widget(Paragraph::new(content).wrap(Wrap { trim: false }).scroll((s.offset, 0)), body);
    let err = c.error.as_deref().map(|e| Line::styled(sanitize(e), t.error));
    let unseen = !s.all_seen(total);
    let keys = match (c.to_type(), unseen) {
        (_, true) => "↓ / PgDn: read the rest first · Esc cancel".to_string(),
        (None, false) => "y confirm · n / Esc cancel".to_string(),
        (Some(part), false) => format!("type `{}` then Enter · Esc cancel", sanitize(part)),
    };
    match c.to_type() {
        None => {
            let [a, b] = Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(foot);
            f.render_widget(Paragraph::new(err.unwrap_or_else(|| Line::raw(""))), a);
            f.render_widget(Paragraph::new(Line::styled(keys, t.accent)), b);
        }
        Some(_) => {
            let [a, b, e] =
                Layout::vertical([Constraint::Length(1), Constraint::Length(1), Constraint::Length(1)]).areas(foot);
            f.render_widget(Paragraph::new(Line::styled(keys, t.warn)), a);
            super::draw_field(f, t, &c.input, b);
            f.render_widget(Paragraph::new(err.unwrap_or_else(|| Line::raw(""))), e);
        }
    }
}
