//! The describe / YAML popup (k9s `d` / `y`): the selected object read from the API server at
//! that moment (never from the cached list), redacted, in a scrollable popup. On the Volumes pane
//! Tab cycles through the row's PVC, PV and VolumeAttachments.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;

use super::app::{App, Effect, Pane};
use super::popup::{Scroll, scroll_delta};
use crate::diagnose::{ObjectKind, ObjectRef};
use crate::model::key_of;
use crate::sources::describe::DescribeMsg;
use crate::text::clean_message;

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
    /// The object shown.
    pub fn target(&self) -> Option<&ObjectRef> {
        self.targets.get(self.current)
    }

    /// The popup's text lines (rendered by the view; built here so tests can read them).
    pub fn lines(&self, app: &App) -> Vec<String> {
        match &self.object {
            None => vec!["reading from the API server…".into()],
            Some(Err(e)) => vec![format!("cannot read: {e}")],
            Some(Ok(v)) => match self.mode {
                DescribeMode::Yaml => yaml_lines(v),
                DescribeMode::Describe => describe_lines(app, self.target(), v),
            },
        }
    }
}

/// The YAML of `v`, one string per line.
pub fn yaml_lines(v: &Value) -> Vec<String> {
    match serde_saphyr::to_string(v) {
        Ok(s) => s.lines().map(crate::text::sanitize).collect(),
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
pub fn describe_lines(app: &App, target: Option<&ObjectRef>, v: &Value) -> Vec<String> {
    let mut out = vec![];
    let mut kv = |k: &str, val: Option<String>| {
        if let Some(val) = val.filter(|x| !x.is_empty()) {
            out.push(format!("{:<17} {}", format!("{k}:"), crate::text::sanitize(&val)));
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
            out.push(crate::text::sanitize(&format!(
                "  {:<22} {:<6} {} {}",
                s(&c, "/type").unwrap_or_default(),
                s(&c, "/status").unwrap_or_default(),
                s(&c, "/reason").unwrap_or_default(),
                s(&c, "/lastTransitionTime").unwrap_or_default()
            )));
        }
    }
    out.push(String::new());
    let events = target.map(|t| events_of(app, t)).unwrap_or_default();
    out.push(if events.is_empty() { "Events: none in the console's list".into() } else { "Events:".into() });
    out.extend(events);
    out
}

/// The object's events from the snapshot, newest first, as `age type reason (xN): message`.
fn events_of(app: &App, t: &ObjectRef) -> Vec<String> {
    let kind = match t.kind {
        ObjectKind::Pod => "Pod",
        ObjectKind::PersistentVolumeClaim => "PersistentVolumeClaim",
        ObjectKind::PersistentVolume => "PersistentVolume",
        ObjectKind::VolumeAttachment => "VolumeAttachment",
        ObjectKind::Node => "Node",
        _ => return vec![],
    };
    let mut evs: Vec<_> = app
        .snap
        .events
        .iter()
        .filter(|e| {
            let o = &e.involved_object;
            o.kind.as_deref() == Some(kind)
                && o.name.as_deref() == Some(t.name.as_str())
                && (t.namespace.is_none() || o.namespace == t.namespace)
        })
        .collect();
    evs.sort_by_key(|e| std::cmp::Reverse(super::view::event_seen(e)));
    evs.iter()
        .map(|e| {
            let age = super::view::event_seen(e)
                .map(|s| crate::text::human_age((app.now - s).get_seconds()))
                .unwrap_or_else(|| "?".into());
            let count = e.count.filter(|c| *c > 1).map(|c| format!(" (x{c})")).unwrap_or_default();
            crate::text::sanitize(&format!(
                "  {age:>4} {} {}{count}: {}",
                e.type_.as_deref().unwrap_or(""),
                e.reason.as_deref().unwrap_or(""),
                clean_message(e.message.as_deref().unwrap_or(""))
            ))
        })
        .collect()
}

impl App {
    /// The objects `d` / `y` would show for the current selection: the node, the pod, the
    /// volume row's PVC, PV and VolumeAttachments, or the highlighted object of a finding.
    pub fn describe_targets(&self) -> Vec<ObjectRef> {
        if let Some((f, obj)) = self.open_finding() {
            return f.objects.get(obj).cloned().into_iter().collect();
        }
        match self.focus {
            Pane::Nodes => self
                .selected_in(Pane::Nodes)
                .map(|i| ObjectRef::node(self.snap.nodes[i].metadata.name.as_deref().unwrap_or("")))
                .into_iter()
                .collect(),
            Pane::Pods => self
                .selected_in(Pane::Pods)
                .map(|i| ObjectRef::pod(&key_of(&self.snap.pods[i].metadata)))
                .into_iter()
                .collect(),
            Pane::Volumes => {
                let Some(v) = self.selected_in(Pane::Volumes).and_then(|i| self.lineage.volumes.get(i)) else {
                    return vec![];
                };
                let mut t: Vec<ObjectRef> = v.pvc.iter().map(|c| ObjectRef::pvc(c)).collect();
                t.push(ObjectRef::pv(&v.pv));
                t.extend(v.attachments.iter().map(|a| ObjectRef::va(&a.name)));
                t
            }
            Pane::Findings => self
                .findings
                .get(self.selected_row(Pane::Findings))
                .and_then(|f| f.objects.iter().find(|o| o.kind == ObjectKind::Pod).or(f.objects.first()))
                .cloned()
                .into_iter()
                .collect(),
            Pane::Ceph | Pane::Events => vec![],
        }
    }

    /// `d` / `y`: opens the popup on the selection and asks the API server for the object.
    pub(crate) fn open_describe(&mut self, mode: DescribeMode) -> Vec<Effect> {
        let targets = self.describe_targets();
        if targets.iter().all(|t| matches!(t.kind, ObjectKind::RbdImage | ObjectKind::BlocklistEntry)) {
            self.remedy.notice = Some(match self.focus {
                Pane::Ceph | Pane::Events => "d/y: select a node, pod or volume (panes 2–4) first".into(),
                _ => "d/y: nothing selected that the API server knows".into(),
            });
            return vec![];
        }
        let current = targets.iter().position(|t| !matches!(t.kind, ObjectKind::RbdImage | ObjectKind::BlocklistEntry));
        let ui = DescribeUi { targets, current: current.unwrap_or(0), mode, object: None, scroll: Scroll::default() };
        let fx = ui.target().cloned().map(Effect::Describe).into_iter().collect();
        self.describe = Some(ui);
        fx
    }

    /// The API server's answer: shown (redacted) if it is for the object still on screen.
    pub(crate) fn on_described(&mut self, m: DescribeMsg) {
        let redactor = self.cfg.session.redactor().unwrap_or_default();
        let Some(d) = self.describe.as_mut() else { return };
        if d.target() != Some(&m.target) {
            return;
        }
        d.object = Some(m.result.map(|mut v| {
            redactor.redact_value(&mut v);
            v
        }));
    }

    /// A key while the popup is open: scroll, `d`/`y` switch, Tab the next object, Esc/q close.
    pub(crate) fn describe_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let (total, page) = match &self.describe {
            Some(d) => super::view::describe_metrics(self, d),
            None => return vec![],
        };
        let Some(d) = self.describe.as_mut() else { return vec![] };
        let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        if let Some(delta) = scroll_delta(&key, page, true) {
            d.scroll.by(delta, total, page);
            return vec![];
        }
        match key.code {
            _ if ctrl_c => self.describe = None,
            KeyCode::Esc | KeyCode::Char('q') => self.describe = None,
            KeyCode::Char('?') => self.help = true,
            KeyCode::Char('g') => d.scroll.offset = 0,
            KeyCode::Char('G') => d.scroll.by(i32::MAX / 2, total, page),
            KeyCode::Char('d') => d.mode = DescribeMode::Describe,
            KeyCode::Char('y') => d.mode = DescribeMode::Yaml,
            KeyCode::Tab if d.targets.len() > 1 => {
                d.current = (d.current + 1) % d.targets.len();
                d.object = None;
                d.scroll = Scroll::default();
                return d.target().cloned().map(Effect::Describe).into_iter().collect();
            }
            _ => {}
        }
        vec![]
    }
}

#[cfg(test)]
#[path = "describe_tests.rs"]
mod tests;
