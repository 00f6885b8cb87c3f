//! The Events pane: events of the selected object, newest first, messages decoded (Go byte
//! slices) and stripped of control characters.

use std::sync::Arc;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use unstick_core::model::objects::Event;

use super::ctx::{ViewCtx, block, muted};
use super::state::PaneView;
use crate::ui::panes::{Pane, Subject};
use crate::ui::view::util::plain;
use unstick_core::text::{clean_message, sanitize};

/// When the event last happened: `lastTimestamp`, `eventTime`, or `firstTimestamp`.
pub fn last_seen(e: &Event) -> Option<jiff::Timestamp> {
    e.last_timestamp
        .as_ref()
        .map(|t| t.0)
        .or_else(|| e.event_time.as_ref().map(|t| t.0))
        .or_else(|| e.first_timestamp.as_ref().map(|t| t.0))
}

/// Events whose involvedObject is the subject (for a volume: its PV, PVC and the pods using it),
/// newest first (events seen at the same time in the snapshot's order: namespace, name). Read
/// from the index of events by object: a frame touches only the subject's events.
pub fn of_subject<'a>(cx: &ViewCtx<'a>) -> Vec<&'a Arc<Event>> {
    let idx = cx.events;
    let mut v: Vec<&'a Arc<Event>> = match cx.subject {
        Subject::None => vec![],
        Subject::Node(n) => idx.of("Node", n).map(|d| d.event()).collect(),
        Subject::Pod(k) => idx.of("Pod", k).map(|d| d.event()).collect(),
        Subject::Volume(pv) => match cx.lineage.by_pv(pv) {
            None => vec![],
            Some(v) => {
                let mut at: Vec<&Arc<Event>> = idx.of("PersistentVolume", pv).map(|d| d.event()).collect();
                if let Some(pvc) = &v.pvc {
                    at.extend(idx.of("PersistentVolumeClaim", pvc).map(|d| d.event()));
                }
                for p in &v.pods {
                    at.extend(idx.of("Pod", p).map(|d| d.event()));
                }
                at
            }
        },
    };
    fn order(e: &Arc<Event>) -> (Option<&str>, Option<&str>, *const Event) {
        (e.metadata.namespace.as_deref(), e.metadata.name.as_deref(), Arc::as_ptr(e))
    }
    v.sort_by(|a, b| order(a).cmp(&order(b)));
    v.dedup_by(|a, b| Arc::ptr_eq(a, b));
    v.sort_by_key(|e| std::cmp::Reverse(last_seen(e)));
    v
}

/// Draws the pane, scrolled to `v`'s offset.
pub fn draw(f: &mut Frame, v: &PaneView, cx: &ViewCtx, area: Rect) {
    let t = cx.theme;
    let mut events = of_subject(cx);
    // the filter keeps whole events: either of an event's two lines may hold the text
    let filter = v.filter();
    events.retain(|e| {
        filter.matches(
            [e.type_.as_deref(), e.reason.as_deref(), e.message.as_deref(), e.involved_object.name.as_deref()]
                .into_iter()
                .flatten(),
        )
    });
    let subject = match cx.subject {
        Subject::None => String::new(),
        Subject::Node(n) => format!("node/{n}"),
        Subject::Pod(k) => format!("pod/{k}"),
        Subject::Volume(pv) => format!("pv/{pv}"),
    };
    let mut lines: Vec<Line> = vec![];
    if matches!(cx.subject, Subject::None) {
        lines.push(muted(t, "Select a node, pod or volume to see its events."));
    } else if events.is_empty() && !filter.is_empty() {
        lines.push(muted(t, format!("no event holds \"{}\" (/ then Esc clears the filter)", filter.text())));
    } else if events.is_empty() {
        lines.push(muted(t, "no events"));
    }
    for e in events {
        let seen = last_seen(e).map(|s| cx.age(s)).unwrap_or_else(|| "?".into());
        let warn = e.type_.as_deref() == Some("Warning");
        let count = e.count.filter(|c| *c > 1).map(|c| format!(" (x{c})")).unwrap_or_default();
        let obj = format!(
            "{}/{}",
            e.involved_object.kind.as_deref().unwrap_or("?").to_lowercase(),
            e.involved_object.name.as_deref().unwrap_or("?")
        );
        lines.push(Line::from(vec![
            plain(format!("{seen:>4} "), t.muted),
            plain(sanitize(e.type_.as_deref().unwrap_or("")), if warn { t.warn } else { t.text }),
            plain(" ", t.text),
            plain(sanitize(e.reason.as_deref().unwrap_or("")), t.accent),
            plain(count, t.muted),
            plain(format!(" {}", sanitize(&obj)), t.muted),
        ]));
        lines.push(Line::styled(format!("     {}", clean_message(e.message.as_deref().unwrap_or(""))), t.text));
    }
    // the subject keeps both ends when the title is narrow (as the Ceph pane's does)
    let subject = crate::ui::view::util::fit_middle(&sanitize(&subject), (area.width as usize).saturating_sub(11));
    let block = block(cx, Pane::Events, subject);
    let p = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((v.selected().min(u16::MAX as usize) as u16, 0))
        .block(block);
    f.render_widget(p, area);
}
