//! The describe / YAML popup (k9s `d` / `y`): the selected object read from the API server at
//! that moment (never from the cached list), redacted, in a scrollable popup. On the Volumes pane
//! Tab cycles through the row's PVC, PV and VolumeAttachments. This file holds the popup's state
//! and text and answers its keys (no `App`); opening it on the selection is in `app/describe.rs`.

use std::sync::Arc;

use jiff::Timestamp;
use serde_json::Value;
use unstick_core::model::objects::Event;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::theme::Theme;
use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::popup::{Scroll, scroll_delta};
use crate::ui::view::util::{centered, fit, fit_middle, more_marks};
use unstick_core::diagnose::{ObjectKind, ObjectRef};
use unstick_core::session::Redactor;
use unstick_core::sources::describe::DescribeMsg;
use unstick_core::text::clean_message;

/// Describe (a summary a person reads) or the object's YAML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DescribeMode {
    /// `d`: the fields that matter, conditions and the object's events.
    Describe,
    /// `y`: the whole object as YAML (managedFields dropped, secrets redacted).
    Yaml,
}

/// The open popup.
#[derive(Debug, Clone)]
pub struct DescribeUi {
    /// Objects of the selected row (Tab cycles); `current` indexes it.
    pub targets: Vec<ObjectRef>,
    /// The object shown.
    pub current: usize,
    /// Describe or YAML.
    pub mode: DescribeMode,
    /// `None` while the GET is in flight; the redacted object or why it could not be read.
    pub object: Option<Result<Value, String>>,
    /// Scroll position.
    pub scroll: Scroll,
}

impl DescribeUi {
    /// The popup on `targets` (Tab cycles), showing `current` in `mode`, its object not read yet.
    pub fn new(targets: Vec<ObjectRef>, current: usize, mode: DescribeMode) -> Self {
        DescribeUi { targets, current, mode, object: None, scroll: Scroll::default() }
    }

    /// The object shown.
    pub fn target(&self) -> Option<&ObjectRef> {
        self.targets.get(self.current)
    }

    /// The popup's answer to a key, its content `metrics` = `(rows, visible rows)` on screen:
    /// scroll keys, `g`/`G`, `d`/`y` switch, Tab reads the next object ([`AppCommand::Describe`]),
    /// `?` the help ([`AppCommand::OpenHelp`]), Esc, `q` or Ctrl-C close it.
    pub fn handle_key(&mut self, key: KeyEvent, metrics: (u16, u16)) -> Outcome {
        let (total, page) = metrics;
        let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        if let Some(delta) = scroll_delta(&key, page, true) {
            self.scroll.by(delta, total, page);
            return Outcome::Consumed;
        }
        match key.code {
            _ if ctrl_c => return Outcome::Command(AppCommand::Close),
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Command(AppCommand::Close),
            KeyCode::Char('?') => return Outcome::Command(AppCommand::OpenHelp),
            KeyCode::Char('g') => self.scroll.offset = 0,
            KeyCode::Char('G') => self.scroll.by(i32::MAX / 2, total, page),
            KeyCode::Char('d') => self.mode = DescribeMode::Describe,
            KeyCode::Char('y') => self.mode = DescribeMode::Yaml,
            KeyCode::Tab if self.targets.len() > 1 => {
                self.current = (self.current + 1) % self.targets.len();
                self.object = None;
                self.scroll = Scroll::default();
                return match self.target() {
                    Some(t) => Outcome::Command(AppCommand::Describe(t.clone())),
                    None => Outcome::Consumed,
                };
            }
            _ => return Outcome::Ignored,
        }
        Outcome::Consumed
    }

    /// The API server's answer `m`: shown, redacted by `redactor`, if it is for the object still
    /// on screen (an answer for an object Tab has left is dropped).
    pub fn on_described(&mut self, m: DescribeMsg, redactor: &Redactor) {
        if self.target() != Some(&m.target) {
            return;
        }
        self.object = Some(m.result.map(|mut v| {
            redactor.redact_value(&mut v);
            v
        }));
    }

    /// The popup's text lines, with the object's events from `events` aged at `now` (rendered
    /// by the view; built here so tests can read them).
    pub fn lines(&self, events: &[Arc<Event>], now: Timestamp) -> Vec<String> {
        match &self.object {
            None => vec!["reading from the API server…".into()],
            Some(Err(e)) => vec![format!("cannot read: {e}")],
            Some(Ok(v)) => match self.mode {
                DescribeMode::Yaml => yaml_lines(v),
                DescribeMode::Describe => describe_lines(events, now, self.target(), v),
            },
        }
    }
}

/// When the event last happened: `lastTimestamp`, `eventTime`, or `firstTimestamp`.
fn last_seen(e: &Event) -> Option<Timestamp> {
    e.last_timestamp
        .as_ref()
        .map(|t| t.0)
        .or_else(|| e.event_time.as_ref().map(|t| t.0))
        .or_else(|| e.first_timestamp.as_ref().map(|t| t.0))
}

/// The YAML of `v`, one string per line.
pub fn yaml_lines(v: &Value) -> Vec<String> {
    match serde_saphyr::to_string(v) {
        Ok(s) => s.lines().map(unstick_core::text::sanitize).collect(),
        Err(e) => vec![format!("cannot render YAML: {e}")],
    }
}

fn s(v: &Value, ptr: &str) -> Option<String> {
    match v.pointer(ptr)? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn list(v: &Value, ptr: &str, field: &str) -> Vec<String> {
    v.pointer(ptr)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| if field.is_empty() { s(x, "") } else { s(x, field) }).collect())
        .unwrap_or_default()
}

/// kubectl-describe-like lines: identity, the fields of its kind that matter for a stuck volume,
/// conditions, then the events of the object from the console's snapshot.
pub fn describe_lines(events: &[Arc<Event>], now: Timestamp, target: Option<&ObjectRef>, v: &Value) -> Vec<String> {
    let mut out = vec![];
    let mut kv = |k: &str, val: Option<String>| {
        if let Some(val) = val.filter(|x| !x.is_empty()) {
            out.push(format!("{:<17} {}", format!("{k}:"), unstick_core::text::sanitize(&val)));
        }
    };
    kv("Kind", s(v, "/kind"));
    kv("Name", s(v, "/metadata/name"));
    kv("Namespace", s(v, "/metadata/namespace"));
    kv("Created", s(v, "/metadata/creationTimestamp"));
    kv("Deleting since", s(v, "/metadata/deletionTimestamp"));
    kv("Finalizers", Some(list(v, "/metadata/finalizers", "").join(", ")));
    kv("Owner", Some(list(v, "/metadata/ownerReferences", "/name").join(", ")));
    let kind = target.map(|t| t.kind);
    match kind {
        Some(ObjectKind::Pod) => {
            kv("Node", s(v, "/spec/nodeName"));
            kv("Phase", s(v, "/status/phase"));
            kv("Reason", s(v, "/status/reason"));
            kv("Pod IP", s(v, "/status/podIP"));
            kv("Claims", Some(list(v, "/spec/volumes", "/persistentVolumeClaim/claimName").join(", ")));
            for c in v.pointer("/status/containerStatuses").and_then(Value::as_array).into_iter().flatten() {
                let state = c.pointer("/state").and_then(Value::as_object).and_then(|m| m.keys().next().cloned());
                let reason = s(c, "/state/waiting/reason").or_else(|| s(c, "/state/terminated/reason"));
                kv(
                    &format!("Container {}", s(c, "/name").unwrap_or_default()),
                    Some(format!("{} {}", state.unwrap_or_default(), reason.unwrap_or_default())),
                );
            }
        }
        Some(ObjectKind::Node) => {
            kv("Unschedulable", s(v, "/spec/unschedulable"));
            kv("Taints", Some(list(v, "/spec/taints", "/key").join(", ")));
            kv("Addresses", Some(list(v, "/status/addresses", "/address").join(", ")));
            kv("volumesAttached", Some(list(v, "/status/volumesAttached", "/name").join(", ")));
            kv("volumesInUse", Some(list(v, "/status/volumesInUse", "").join(", ")));
        }
        Some(ObjectKind::PersistentVolumeClaim) => {
            kv("Phase", s(v, "/status/phase"));
            kv("Volume", s(v, "/spec/volumeName"));
            kv("StorageClass", s(v, "/spec/storageClassName"));
            kv("Access modes", Some(list(v, "/spec/accessModes", "").join(", ")));
        }
        Some(ObjectKind::PersistentVolume) => {
            kv("Phase", s(v, "/status/phase"));
            kv(
                "Claim",
                s(v, "/spec/claimRef/namespace").zip(s(v, "/spec/claimRef/name")).map(|(n, c)| format!("{n}/{c}")),
            );
            kv("Reclaim policy", s(v, "/spec/persistentVolumeReclaimPolicy"));
            kv("Access modes", Some(list(v, "/spec/accessModes", "").join(", ")));
            kv("CSI driver", s(v, "/spec/csi/driver"));
            kv("volumeHandle", s(v, "/spec/csi/volumeHandle"));
            kv("Pool", s(v, "/spec/csi/volumeAttributes/pool").or_else(|| s(v, "/spec/rbd/pool")));
            kv("Image", s(v, "/spec/csi/volumeAttributes/imageName").or_else(|| s(v, "/spec/rbd/image")));
        }
        Some(ObjectKind::VolumeAttachment) => {
            kv("Attacher", s(v, "/spec/attacher"));
            kv("Node", s(v, "/spec/nodeName"));
            kv("PV", s(v, "/spec/source/persistentVolumeName"));
            kv("Attached", s(v, "/status/attached"));
            kv("Attach error", s(v, "/status/attachError/message"));
            kv("Detach error", s(v, "/status/detachError/message"));
        }
        _ => {}
    }
    let conds = v.pointer("/status/conditions").and_then(Value::as_array).cloned().unwrap_or_default();
    if !conds.is_empty() {
        out.push(String::new());
        out.push("Conditions:".into());
        for c in conds {
            out.push(unstick_core::text::sanitize(&format!(
                "  {:<22} {:<6} {} {}",
                s(&c, "/type").unwrap_or_default(),
                s(&c, "/status").unwrap_or_default(),
                s(&c, "/reason").unwrap_or_default(),
                s(&c, "/lastTransitionTime").unwrap_or_default()
            )));
        }
    }
    out.push(String::new());
    let events = target.map(|t| events_of(events, now, t)).unwrap_or_default();
    out.push(if events.is_empty() { "Events: none in the console's list".into() } else { "Events:".into() });
    out.extend(events);
    out
}

/// The object's events from the snapshot, newest first, as `age type reason (xN): message`.
fn events_of(events: &[Arc<Event>], now: Timestamp, t: &ObjectRef) -> Vec<String> {
    let kind = match t.kind {
        ObjectKind::Pod => "Pod",
        ObjectKind::PersistentVolumeClaim => "PersistentVolumeClaim",
        ObjectKind::PersistentVolume => "PersistentVolume",
        ObjectKind::VolumeAttachment => "VolumeAttachment",
        ObjectKind::Node => "Node",
        _ => return vec![],
    };
    let mut evs: Vec<_> = events
        .iter()
        .filter(|e| {
            let o = &e.involved_object;
            o.kind.as_deref() == Some(kind)
                && o.name.as_deref() == Some(t.name.as_str())
                && (t.namespace.is_none() || o.namespace == t.namespace)
        })
        .collect();
    evs.sort_by_key(|e| std::cmp::Reverse(last_seen(e)));
    evs.iter()
        .map(|e| {
            let age = last_seen(e)
                .map(|s| unstick_core::text::human_age((now - s).get_seconds()))
                .unwrap_or_else(|| "?".into());
            let count = e.count.filter(|c| *c > 1).map(|c| format!(" (x{c})")).unwrap_or_default();
            unstick_core::text::sanitize(&format!(
                "  {age:>4} {} {}{count}: {}",
                e.type_.as_deref().unwrap_or(""),
                e.reason.as_deref().unwrap_or(""),
                clean_message(e.message.as_deref().unwrap_or(""))
            ))
        })
        .collect()
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

/// Where the popup goes in `area` (the body): nearly full width (120 columns at most), full height.
fn popup_rect(area: Rect) -> Rect {
    centered(area, area.width.saturating_sub(2).min(120), area.height)
}

impl DescribeUi {
    /// `(content rows, visible rows)` of the popup drawn in `area`, its text made from `events`
    /// (the snapshot's) at the console's clock `now`.
    pub fn metrics(&self, area: Rect, events: &[Arc<Event>], now: Timestamp) -> (u16, u16) {
        let r = popup_rect(area);
        let total =
            wrapped(self.lines(events, now), r.width.saturating_sub(2) as usize).len().min(u16::MAX as usize) as u16;
        (total, r.height.saturating_sub(2))
    }

    /// Draws the popup over `area` (the body: header, banner and status line stay visible), with
    /// what is above and below on its bottom border.
    pub fn draw(&self, f: &mut Frame, area: Rect, t: &Theme, events: &[Arc<Event>], now: Timestamp) {
        let r = popup_rect(area);
        f.render_widget(Clear, r);
        let what = match self.mode {
            DescribeMode::Describe => "describe",
            DescribeMode::Yaml => "yaml",
        };
        let target = self.target().map(|o| o.label()).unwrap_or_default();
        let of = if self.targets.len() > 1 {
            format!(" ({}/{} Tab)", self.current + 1, self.targets.len())
        } else {
            String::new()
        };
        let width = r.width.saturating_sub(2) as usize;
        // the object's name keeps both ends (a pod's generated suffix tells replicas apart)
        let room = width.saturating_sub(crate::ui::view::util::width(&format!(" {what} {of} ")));
        let target = fit_middle(&unstick_core::text::sanitize(&target), room);
        let title = fit(&format!(" {what} {target}{of} "), width);
        let lines = wrapped(self.lines(events, now), width);
        let total = lines.len().min(u16::MAX as usize) as u16;
        let height = r.height.saturating_sub(2);
        let offset = self.scroll.offset.min(total.saturating_sub(height));
        let marks = more_marks(offset, total, height);
        let keys = " d/y switch · Esc close ";
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border_focused)
            .title(Line::styled(title, t.title))
            .title_bottom(Line::styled(keys, t.accent))
            .title_bottom(Line::styled(marks, t.warn).right_aligned());
        let style = if matches!(self.object, Some(Err(_))) { t.error } else { t.text };
        let text: Vec<Line> =
            lines.into_iter().skip(offset as usize).take(height as usize).map(|l| Line::styled(l, style)).collect();
        f.render_widget(Paragraph::new(text).block(block), r);
    }
}
