//! Header, tab bar, status bar and the filter line.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui_textarea::TextArea;

use super::plain;
use crate::sources::kube::{SourceState, WatchedKind};
use crate::text::human_age;
use crate::ui::app::{App, Pane};

/// `unstick │ ctx kh │ ns all │ READ-ONLY │ ?:help`.
pub fn header(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let mut spans = vec![plain(" unstick ", t.title)];
    if app.training.is_some() {
        spans.push(plain(" TRAINING ", t.badge));
        spans.push(plain(" ", t.text));
    }
    if app.read_only {
        spans.push(plain(" READ-ONLY ", t.badge));
        spans.push(plain(" ", t.text));
    } else if app.remedy.mode == crate::ui::playbook::WriteMode::DryRun {
        spans.push(plain(" DRY-RUN ", t.badge));
        spans.push(plain(" ", t.text));
    }
    let ns = app.namespace_view.as_deref().unwrap_or(&app.namespace);
    let ns = crate::text::sanitize(ns);
    let ctx = crate::text::sanitize(&app.context);
    let pods = if app.all_pods { "all" } else { "troubled" };
    // `?:help` always fits: a long context (then namespace) is cut with … instead
    let fixed = Line::from(spans.clone()).width() + "│ ctx  │ ns  │ pods ".chars().count() + pods.len();
    let room = (area.width as usize).saturating_sub(fixed + "  ?:help".len());
    let ns_w = ns.chars().count().min(room.saturating_sub(8).max(room / 2)).max(1);
    let ns = super::fit(&ns, ns_w);
    let ctx = super::fit(&ctx, room.saturating_sub(ns.chars().count()).max(1));
    spans.extend([
        plain("│ ctx ", t.muted),
        plain(ctx, t.text),
        plain(" │ ns ", t.muted),
        plain(ns, t.text),
        plain(" │ pods ", t.muted),
        plain(pods, t.text),
    ]);
    // The key hint, as long as it fits.
    let used = Line::from(spans.clone()).width();
    let room = (area.width as usize).saturating_sub(used);
    if let Some(hint) = ["  ?:help  /:filter  Tab:pane  Enter:drill  q:quit", "  ?:help  q:quit", "  ?:help"]
        .into_iter()
        .find(|h| h.chars().count() <= room)
    {
        spans.push(plain(hint, t.muted));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// ` 1 Nodes  2 Pods  3 Volumes  4 Ceph  5 Events` with the focused pane highlighted.
pub fn tabs(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let mut spans = vec![];
    for (i, p) in Pane::ALL.iter().enumerate() {
        let style = if *p == app.focus { t.selected } else { t.muted };
        spans.push(plain(format!(" {} {} ", i + 1, p.title()), style));
        spans.push(plain(" ", t.text));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn kind_span<'a>(app: &App, kind: WatchedKind, state: &SourceState) -> Span<'a> {
    let t = &app.theme;
    match state {
        SourceState::Live => plain(format!("{}✓", kind.short()), t.ok),
        SourceState::Connecting => plain(format!("{}…", kind.short()), t.muted),
        SourceState::Stale { since, .. } => {
            plain(format!("{}:stale {}", kind.short(), human_age((app.now - *since).get_seconds())), t.warn)
        }
        SourceState::Forbidden { .. } => plain(format!("{}:forbidden", kind.short()), t.error),
        SourceState::Error(_) => plain(format!("{}:error", kind.short()), t.error),
    }
}

/// Connection state per source, last Ceph refresh, scan progress. A session log error is shown
/// in full until the next key (`App::log_alert`), then as a short `log ✗` mark in front.
pub fn status(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let log_error = app.session.as_ref().and_then(|s| s.error());
    if let Some(e) = log_error.filter(|_| app.log_alert) {
        let text = format!(" ⚠ {} — the console keeps working", crate::text::sanitize(e));
        f.render_widget(Paragraph::new(Line::from(plain(super::fit(&text, area.width as usize), t.error))), area);
        return;
    }
    let mut spans = vec![];
    if log_error.is_some() {
        spans.push(plain(" log ✗ ", t.error));
        spans.push(plain("│", t.muted));
    }
    if let Some(tr) = &app.training {
        spans.push(plain(super::train::status_segment(tr), t.accent));
    }
    spans.push(plain(" kube ", t.muted));
    for (kind, state) in &app.kube_state {
        spans.push(kind_span(app, *kind, state));
        spans.push(plain(" ", t.text));
    }
    spans.push(plain("│ ceph ", t.muted));
    if !app.ceph.enabled {
        spans.push(plain("off", t.muted));
    } else {
        match app.ceph.last_refresh {
            Some(at) => spans.push(plain(format!("{} ago", human_age((app.now - at).get_seconds())), t.text)),
            None => spans.push(plain("not read yet", t.muted)),
        }
        if !app.ceph.pending.is_empty() || app.ceph.blocklist_pending {
            spans.push(plain(" …", t.muted));
        }
        if let Some((done, total)) = app.ceph.scan {
            spans.push(plain(format!(" │ scan {done}/{total} "), t.accent));
            spans.push(plain(progress_bar(done, total, 10), t.accent));
        } else if let Some(s) = app.ceph.last_scan.as_ref().filter(|_| app.training.is_none() || area.width >= 100) {
            // The method in brackets only where there is room for it.
            let s = if area.width < 100 { s.split(" (").next().unwrap_or(s) } else { s.as_str() };
            spans.push(plain(format!(" │ scan: {s}"), t.muted));
        }
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// `[#####.....]` of `width` cells.
pub fn progress_bar(done: usize, total: usize, width: usize) -> String {
    let filled = (done.min(total) * width).checked_div(total).unwrap_or(width);
    format!("[{}{}]", "#".repeat(filled), ".".repeat(width - filled))
}

/// A one-line prompt (the filter editor, the `:` command), drawn over the status bar while open:
/// the line is cleared first, so nothing of the status bar shows through.
pub fn filter_line(f: &mut Frame, app: &App, label: &str, what: &str, editor: &TextArea<'static>, area: Rect) {
    let t = &app.theme;
    f.render_widget(ratatui::widgets::Clear, area);
    let label = if what.is_empty() { label.to_string() } else { format!("{label}{what}: ") };
    let w = label.chars().count() as u16;
    f.render_widget(Paragraph::new(Line::from(plain(label, t.accent))), area);
    let input = Rect { x: area.x + w.min(area.width), width: area.width.saturating_sub(w), ..area };
    let mut ed = editor.clone();
    ed.set_cursor_line_style(t.text);
    f.render_widget(&ed, input);
}

/// The banner text: interrupted steps found in the journals (never retried), else a notice.
pub fn banner_text(app: &App) -> Option<String> {
    let r = &app.remedy;
    if let Some(s) = r.interrupted.first() {
        let more =
            if r.interrupted.len() > 1 { format!(" (+{} more)", r.interrupted.len() - 1) } else { String::new() };
        let (inc, step, what) = (&s.incident, s.step, &s.summary);
        return Some(format!("⚠ interrupted — state unknown, re-check: {inc} step {step} {what}{more}"));
    }
    r.notice.clone()
}

/// Draws the banner line.
pub fn banner(f: &mut Frame, app: &App, text: &str, area: Rect) {
    let style = if app.remedy.interrupted.is_empty() { app.theme.warn } else { app.theme.error };
    f.render_widget(
        Paragraph::new(Line::from(plain(super::fit(&crate::text::sanitize(text), area.width as usize), style))),
        area,
    );
}
