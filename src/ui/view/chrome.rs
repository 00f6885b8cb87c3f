//! Header, tab bar, status bar, banner and the filter line, drawn from a [`ChromeCtx`] (what
//! they show, borrowed for one frame), never from the app.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui_textarea::TextArea;

use std::collections::BTreeMap;

use jiff::Timestamp;

use super::plain;
use crate::theme::Theme;
use crate::ui::panes::Pane;
use crate::ui::panes::ceph_status::CephStatus;
use crate::ui::popups::playbook::WriteMode;
use unstick_core::remedy::journal::incidents::InterruptedStep;
use unstick_core::sources::kube::{SourceState, WatchedKind};
use unstick_core::text::human_age;

/// What the header, tab bar and status line show, borrowed from the app for one frame.
pub struct ChromeCtx<'a> {
    /// Resolved theme.
    pub theme: &'a Theme,
    /// The console's clock (ages are computed against it).
    pub now: Timestamp,
    /// The training status segment (`goals 1/3 hints 0/2(h) │`) when a scenario runs.
    pub training: Option<String>,
    /// `--read-only`.
    pub read_only: bool,
    /// What the console may write (the header says DRY-RUN).
    pub mode: WriteMode,
    /// The kubeconfig context.
    pub context: &'a str,
    /// The namespace shown (the `:ns` one, else the console's).
    pub namespace: &'a str,
    /// All pods shown, not only troubled ones.
    pub all_pods: bool,
    /// The focused pane (highlighted in the tab bar).
    pub focus: Pane,
    /// The session log's error, if it has one.
    pub log_error: Option<&'a str>,
    /// Show `log_error` in full on the status line (until the next key).
    pub log_alert: bool,
    /// Connection state per kind.
    pub kube_state: &'a BTreeMap<WatchedKind, SourceState>,
    /// Ceph requests in flight, last refresh, scan progress.
    pub ceph: &'a CephStatus,
}

/// The one line over the panes: interrupted steps found in the journals, else a notice.
pub struct Banner {
    /// The line's text (sanitized and cut when drawn).
    pub text: String,
    /// Interrupted steps (drawn as an error), not a notice (a warning).
    pub alarm: bool,
}

impl Banner {
    /// The banner for `interrupted` steps (never retried), else for `notice`; `None` when neither.
    pub fn of(interrupted: &[InterruptedStep], notice: Option<&str>) -> Option<Banner> {
        if let Some(s) = interrupted.first() {
            let more =
                if interrupted.len() > 1 { format!(" (+{} more)", interrupted.len() - 1) } else { String::new() };
            let (inc, step, what) = (&s.incident, s.step, &s.summary);
            let text = format!("⚠ interrupted — state unknown, re-check: {inc} step {step} {what}{more}");
            return Some(Banner { text, alarm: true });
        }
        notice.map(|n| Banner { text: n.to_string(), alarm: false })
    }
}

/// `unstick │ ctx kh │ ns all │ READ-ONLY │ ?:help`.
pub fn header(f: &mut Frame, cx: &ChromeCtx, area: Rect) {
    let t = cx.theme;
    let mut spans = vec![plain(" unstick ", t.title)];
    if cx.training.is_some() {
        spans.push(plain(" TRAINING ", t.badge));
        spans.push(plain(" ", t.text));
    }
    if cx.read_only {
        spans.push(plain(" READ-ONLY ", t.badge));
        spans.push(plain(" ", t.text));
    } else if cx.mode == WriteMode::DryRun {
        spans.push(plain(" DRY-RUN ", t.badge));
        spans.push(plain(" ", t.text));
    }
    let ns = unstick_core::text::sanitize(cx.namespace);
    let ctx = unstick_core::text::sanitize(cx.context);
    let pods = if cx.all_pods { "all" } else { "troubled" };
    // What must stay, by priority: the badges, the context and the namespace (cut in their
    // middle only when they cannot fit whole: `train:no…-volumes`, never `t…`), `?:help`; then
    // the decoration as long as it fits: the Pods mode, the longer key hints.
    const HELP: &str = "  ?:help";
    let w = area.width as usize;
    let lead = Line::from(spans.clone()).width() + super::util::width("│ ctx  │ ns ");
    let (ctx, ns) = ctx_and_ns(&ctx, &ns, w.saturating_sub(lead + HELP.len()));
    let used = lead + super::util::width(&ctx) + super::util::width(&ns);
    let show_pods = used + super::util::width(" │ pods ") + pods.len() + HELP.len() <= w;
    spans.extend([plain("│ ctx ", t.muted), plain(ctx, t.text), plain(" │ ns ", t.muted), plain(ns, t.text)]);
    if show_pods {
        spans.extend([plain(" │ pods ", t.muted), plain(pods, t.text)]);
    }
    // The key hint, as long as it fits.
    let used = Line::from(spans.clone()).width();
    let room = w.saturating_sub(used);
    if let Some(hint) = ["  ?:help  /:filter  Tab:pane  Enter:drill  q:quit", "  ?:help  q:quit", HELP]
        .into_iter()
        .find(|h| h.chars().count() <= room)
    {
        spans.push(plain(hint, t.muted));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The context and the namespace in `room` columns: both whole when they fit; else each is cut
/// in its middle ([`super::util::fit_middle`]: both ends stay, so two contexts that share a
/// prefix never read the same), the namespace to no less than 8 columns, the context taking the
/// rest.
fn ctx_and_ns(ctx: &str, ns: &str, room: usize) -> (String, String) {
    let (cw, nw) = (super::util::width(ctx), super::util::width(ns));
    if cw + nw <= room {
        return (ctx.to_string(), ns.to_string());
    }
    let ns_w = nw.min(room.saturating_sub(cw).max(8.min(room / 2)));
    let ns = super::util::fit_middle(ns, ns_w.max(5));
    let ctx = super::util::fit_middle(ctx, room.saturating_sub(super::util::width(&ns)).max(5));
    (ctx, ns)
}

/// ` 1 Nodes  2 Pods  3 Volumes  4 Ceph  5 Events` with the focused pane highlighted.
pub fn tabs(f: &mut Frame, cx: &ChromeCtx, area: Rect) {
    let t = cx.theme;
    let mut spans = vec![];
    for (i, p) in Pane::ALL.iter().enumerate() {
        let style = if *p == cx.focus { t.selected } else { t.muted };
        spans.push(plain(format!(" {} {} ", i + 1, p.title()), style));
        spans.push(plain(" ", t.text));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn kind_span<'a>(cx: &ChromeCtx, kind: WatchedKind, state: &SourceState) -> Span<'a> {
    let t = cx.theme;
    match state {
        SourceState::Live => plain(format!("{}✓", kind.short()), t.ok),
        SourceState::Connecting => plain(format!("{}…", kind.short()), t.muted),
        SourceState::Stale { since, .. } => {
            plain(format!("{}:stale {}", kind.short(), human_age((cx.now - *since).get_seconds())), t.warn)
        }
        SourceState::Forbidden { .. } => plain(format!("{}:forbidden", kind.short()), t.error),
        SourceState::Error(_) => plain(format!("{}:error", kind.short()), t.error),
    }
}

/// Connection state per source, last Ceph refresh, scan progress. A session log error is shown
/// in full until the next key ([`ChromeCtx::log_alert`]), then as a short `log ✗` mark in front.
/// What must stay at every width: the training goals, each source that is not live, the age of
/// the last Ceph read and whether it is failing or being read; so when the line is wider than the
/// terminal, the live sources are summed up first (`kube ✓` instead of `no✓ po✓ …`), then the
/// reads in flight and the scan's bar go (its count stays), then the scan, rather than the end
/// being cut off.
pub fn status(f: &mut Frame, cx: &ChromeCtx, area: Rect) {
    let t = cx.theme;
    if let Some(e) = cx.log_error.filter(|_| cx.log_alert) {
        let text = format!(" ⚠ {} — the console keeps working", unstick_core::text::sanitize(e));
        f.render_widget(Paragraph::new(Line::from(plain(super::fit(&text, area.width as usize), t.error))), area);
        return;
    }
    let spans = [0, 1, 2, 3]
        .into_iter()
        .map(|level| status_spans(cx, area.width, level))
        .find(|s| Line::from(s.clone()).width() <= area.width as usize)
        .unwrap_or_else(|| status_spans(cx, area.width, 3));
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The status line's spans, shorter at each `level`: 0 everything (with the Rook pod the Ceph calls run
/// in), 1 the live sources summed up,
/// 2 also neither the reads in flight nor the scan's bar (its count stays), 3 also neither the
/// scan's count nor the last scan's result (what they change shows in the Ceph pane).
fn status_spans<'a>(cx: &ChromeCtx, width: u16, level: u8) -> Vec<Span<'a>> {
    let compact = level > 0;
    let t = cx.theme;
    let mut spans = vec![];
    if cx.log_error.is_some() {
        spans.push(plain(" log ✗ ", t.error));
        spans.push(plain("│", t.muted));
    }
    if let Some(seg) = &cx.training {
        spans.push(plain(seg.clone(), t.accent));
    }
    spans.push(plain(" kube ", t.muted));
    let live = cx.kube_state.values().filter(|s| matches!(s, SourceState::Live)).count();
    if compact && live > 0 {
        spans.push(plain(if live == cx.kube_state.len() { "✓ " } else { "others ✓ " }, t.ok));
    }
    for (kind, state) in cx.kube_state.iter().filter(|(_, s)| !compact || !matches!(s, SourceState::Live)) {
        spans.push(kind_span(cx, *kind, state));
        spans.push(plain(" ", t.text));
    }
    spans.push(plain("│ ceph ", t.muted));
    let ceph = cx.ceph;
    if !ceph.enabled {
        spans.push(plain("off", t.muted));
        return spans;
    }
    // which Rook pod runs the calls: in full only, the age and the scan matter more
    if let Some(via) = ceph.via.as_ref().filter(|_| level == 0) {
        spans.push(plain(format!("via {via} "), t.muted));
    }
    // the age of the last read that succeeded, never of the last attempt
    match ceph.last_refresh {
        Some(at) => spans.push(plain(format!("{} ago", human_age((cx.now - at).get_seconds())), t.text)),
        None if ceph.failing() => spans.push(plain("unreadable", t.error)),
        None => spans.push(plain("not read yet", t.muted)),
    }
    if ceph.failing() && ceph.last_refresh.is_some() {
        spans.push(plain(" (failing)", t.warn));
    }
    if level > 2 {
        return spans;
    }
    if level < 2 && (!ceph.pending.is_empty() || ceph.blocklist_pending) {
        // said in words: a lone `…` at the end of the line reads as a cut
        spans.push(plain(" (reading)", t.muted));
    }
    if let Some((done, total)) = ceph.scan {
        spans.push(plain(format!(" │ scan {done}/{total} "), t.accent));
        if level < 2 {
            spans.push(plain(progress_bar(done, total, 10), t.accent));
        }
    } else if let Some(s) = ceph.last_scan.as_ref().filter(|_| cx.training.is_none() || width >= 100) {
        // The method in brackets only where there is room for it.
        let s = if width < 100 { s.split(" (").next().unwrap_or(s) } else { s.as_str() };
        spans.push(plain(format!(" │ scan: {s}"), t.muted));
    }
    spans
}

/// `[#####.....]` of `width` cells.
pub fn progress_bar(done: usize, total: usize, width: usize) -> String {
    let filled = (done.min(total) * width).checked_div(total).unwrap_or(width);
    format!("[{}{}]", "#".repeat(filled), ".".repeat(width - filled))
}

/// A one-line prompt (the filter editor, the `:` command), drawn over the status bar while open:
/// the line is cleared first, so nothing of the status bar shows through.
pub fn filter_line(f: &mut Frame, t: &Theme, label: &str, what: &str, editor: &TextArea<'static>, area: Rect) {
    f.render_widget(ratatui::widgets::Clear, area);
    let label = if what.is_empty() { label.to_string() } else { format!("{label}{what}: ") };
    let w = label.chars().count() as u16;
    f.render_widget(Paragraph::new(Line::from(plain(label, t.accent))), area);
    let input = Rect { x: area.x + w.min(area.width), width: area.width.saturating_sub(w), ..area };
    let mut ed = editor.clone();
    ed.set_cursor_line_style(t.text);
    f.render_widget(&ed, input);
}

/// Draws the banner over `area` (one or two rows: [`super::banner_rows`]), wrapped; what is
/// wider still is cut keeping its identifiers distinct ([`super::util::fit_ids`]).
pub fn banner(f: &mut Frame, t: &Theme, b: &Banner, area: Rect) {
    let style = if b.alarm { t.error } else { t.warn };
    // a wrapped second row loses up to a word's width at the break: keep slack for it
    let w = area.width as usize;
    let room = if area.height > 1 { w * area.height as usize - w / 3 } else { w };
    let text = super::util::fit_ids(&unstick_core::text::sanitize(&b.text), room);
    f.render_widget(Paragraph::new(Line::from(plain(text, style))).wrap(ratatui::widgets::Wrap { trim: true }), area);
}
