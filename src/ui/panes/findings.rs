//! The Findings pane (sorted by severity, then age) and the finding detail overlay's drawing
//! ([`FindingDetail::draw`]): summary,
//! objects (Enter jumps to one in its pane), evidence with source and time, explanation, playbook.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, TableState, Wrap};

use super::ctx::{ViewCtx, block, muted};
use super::state::PaneView;
use crate::theme::Theme;
use crate::ui::panes::Pane;
use crate::ui::view::util::{fit_ids, plain};

/// Width of the PATTERN column (pattern ids wider than it are cut in their middle).
const PATTERN_W: u16 = 22;
use unstick_core::diagnose::{Finding, Severity};
use unstick_core::text::sanitize;

fn severity_style(t: &Theme, s: Severity) -> ratatui::style::Style {
    match s {
        Severity::Critical => t.error,
        Severity::Warning => t.warn,
        Severity::Info => t.muted,
    }
}

/// What the diagnosis could not read: one `short: why` per kind that is forbidden or never
/// listed, and Ceph when its blocklist could never be read. Empty when everything was read.
pub fn unreadable(cx: &ViewCtx) -> Vec<(String, String)> {
    use unstick_core::sources::kube::SourceState;
    let mut out: Vec<(String, String)> = cx
        .kube_state
        .iter()
        .filter_map(|(k, s)| match s {
            SourceState::Forbidden { verb, .. } => {
                Some((k.resource().to_string(), format!("forbidden: {} {}", verb.as_str(), k.resource())))
            }
            SourceState::Error(e) => Some((k.resource().to_string(), sanitize(e))),
            _ => None,
        })
        .collect();
    if let Some(Err(e)) = cx.snap.ceph.blocklist.as_ref().map(|b| &b.value) {
        out.push(("ceph".into(), sanitize(&e.to_string())));
    }
    out
}

/// The list of findings.
pub fn draw(f: &mut Frame, v: &PaneView, cx: &ViewCtx, area: Rect) {
    let t = cx.theme;
    let missing = unreadable(cx);
    let shown = &cx.rows.findings;
    let filter = v.filter();
    let mut extra = if filter.is_empty() {
        format!("[{}]", cx.findings.len())
    } else {
        format!("[{}/{}] /{}", shown.len(), cx.findings.len(), filter.text())
    };
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|(n, _)| n.as_str()).collect();
        extra.push_str(&format!(" incomplete: could not read {}", names.join(", ")));
    }
    let block = block(cx, Pane::Findings, extra);
    if shown.is_empty() && !cx.findings.is_empty() {
        let lines = vec![muted(t, "nothing matches the filter (Esc clears it)")];
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }).block(block), area);
        return;
    }
    if cx.findings.is_empty() {
        let mut lines = vec![];
        if missing.is_empty() {
            let msg = if cx.snap.taken_at.is_none() { "waiting for the first complete list…" } else { "no findings" };
            lines.push(muted(t, msg));
        } else {
            let head = if cx.snap.taken_at.is_none() {
                "cannot diagnose: nothing could be read yet"
            } else {
                "no findings in what could be read; these could not be checked:"
            };
            lines.push(Line::styled(head, t.error));
            for (_, why) in &missing {
                lines.push(Line::styled(format!("  {why}"), t.muted));
            }
        }
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }).block(block), area);
        return;
    }
    let total = shown.len();
    let h = area.height.saturating_sub(3) as usize;
    let sel = v.selected().min(total - 1);
    let first = v.first_visible(total, h);
    // SEVERITY, PATTERN, AGE and the spacing take 38 columns, the borders 2: the summary gets the
    // rest, cut so that the volumes it names stay distinct (all three of mass-unmap-busy once read
    // `(pvc-6a1e0c3d-55aa-4e7b-` even at 200 columns)
    let summary_w = (area.width as usize).saturating_sub(40);
    let rows: Vec<Row> = shown[first..(first + h).min(total)]
        .iter()
        .filter_map(|&i| cx.findings.get(i))
        .map(|fd| {
            let age = fd.since.map(|s| cx.age(s)).unwrap_or_default();
            Row::new(vec![
                Cell::from(fd.severity.as_str()).style(severity_style(t, fd.severity)),
                // cut in its middle: `csi-driver-not-registered` is wider than the column
                Cell::from(crate::ui::view::util::fit_middle(fd.pattern.as_str(), PATTERN_W as usize)),
                Cell::from(age),
                Cell::from(fit_ids(
                    &if fd.unverified.is_empty() {
                        sanitize(&fd.summary)
                    } else {
                        format!("unverified: {}", sanitize(&fd.summary))
                    },
                    summary_w,
                )),
            ])
        })
        .collect();
    let header = Row::new(["SEVERITY", "PATTERN", "AGE", "SUMMARY"].map(|h| Cell::from(h).style(t.accent)));
    let widths = [Constraint::Length(8), Constraint::Length(PATTERN_W), Constraint::Length(5), Constraint::Fill(1)];
    let t = Table::new(rows, widths)
        .header(header)
        .block(block)
        .column_spacing(1)
        .row_highlight_style(if cx.focus == Pane::Findings { t.selected } else { t.text });
    let mut state = TableState::default().with_selected(Some(sel - first));
    f.render_stateful_widget(t, area, &mut state);
}

/// The selected finding's summary and evidence, shown under the list in the tab layout.
pub fn preview(f: &mut Frame, v: &PaneView, cx: &ViewCtx, area: Rect) {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(cx.theme.border)
        .title(Line::styled(" Finding (Enter: detail) ", cx.theme.title));
    let lines = match cx.rows.findings.get(v.selected()).and_then(|&i| cx.findings.get(i)) {
        Some(fd) => body(cx, fd, None),
        None => vec![muted(cx.theme, "no finding selected")],
    };
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }).block(block), area);
}

/// Lines describing `fd`: with `object = Some(i)` the full detail (objects list with row `i`
/// highlighted, evidence, explanation); with `None` a preview (summary and evidence).
pub(crate) fn body<'a>(cx: &ViewCtx, fd: &Finding, object: Option<usize>) -> Vec<Line<'a>> {
    let t = cx.theme;
    let mut lines = vec![
        Line::from(vec![
            plain(format!("{} ", fd.severity.as_str()), severity_style(t, fd.severity)),
            plain(fd.pattern.as_str(), t.accent),
            plain(format!("  playbook {}", fd.playbook), t.muted),
        ]),
        Line::styled(sanitize(&fd.summary), t.text),
    ];
    for u in &fd.unverified {
        lines.push(Line::styled(sanitize(&u.line()), t.warn));
    }
    if let Some(object) = object {
        lines.push(Line::raw(""));
        lines.push(Line::styled("Objects (Enter jumps to the selected one)", t.accent));
        for (i, o) in fd.objects.iter().enumerate() {
            let style = if i == object { t.selected } else { t.text };
            lines.push(Line::styled(format!("  {}", sanitize(&o.label())), style));
        }
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled("Evidence", t.accent));
    for e in &fd.evidence {
        let age = cx.age(e.observed_at);
        lines.push(Line::from(vec![
            plain(format!("  [{}] ", evidence_source(e)), t.muted),
            plain(sanitize(&e.text), t.text),
            plain(format!("  ({age} ago)"), t.muted),
        ]));
    }
    if object.is_some() {
        lines.push(Line::raw(""));
        lines.push(Line::styled("Why", t.accent));
        lines.push(Line::styled(sanitize(&fd.explanation), t.text));
    }
    lines
}

fn evidence_source(e: &unstick_core::diagnose::Evidence) -> String {
    serde_json::to_value(e.source).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}
