//! The describe / YAML popup's life in the app: `d` / `y` open it on the selection and ask the
//! API server for the object; the popup ([`DescribeUi`], `describe.rs`) answers its keys and
//! shows the redacted answer; Tab asks for the next object of a volume row.

use crossterm::event::KeyEvent;

use super::app::{App, Effect, Pane};
use super::describe::{DescribeMode, DescribeUi};
use super::outcome::{AppCommand, Outcome};
use unstick_core::diagnose::{ObjectKind, ObjectRef};
use unstick_core::model::key_of;
use unstick_core::sources::describe::DescribeMsg;

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

    /// `d`: the describe popup on the selection.
    pub(crate) fn open_describe_view(&mut self) -> Vec<Effect> {
        self.open_describe(DescribeMode::Describe)
    }

    /// `y`: the YAML popup on the selection.
    pub(crate) fn open_yaml_view(&mut self) -> Vec<Effect> {
        self.open_describe(DescribeMode::Yaml)
    }

    /// `d` / `y`: opens the popup on the selection and asks the API server for the object.
    fn open_describe(&mut self, mode: DescribeMode) -> Vec<Effect> {
        let targets = self.describe_targets();
        if targets.iter().all(|t| matches!(t.kind, ObjectKind::RbdImage | ObjectKind::BlocklistEntry)) {
            self.remedy.notice = Some(match self.focus {
                Pane::Ceph | Pane::Events => "d/y: select a node, pod or volume (panes 2–4) first".into(),
                _ => "d/y: nothing selected that the API server knows".into(),
            });
            return vec![];
        }
        let current = targets.iter().position(|t| !matches!(t.kind, ObjectKind::RbdImage | ObjectKind::BlocklistEntry));
        let ui = DescribeUi::new(targets, current.unwrap_or(0), mode);
        let fx = ui.target().cloned().map(Effect::Describe).into_iter().collect();
        self.describe = Some(ui);
        fx
    }

    /// The API server's answer: shown (redacted) if it is for the object still on screen.
    pub(crate) fn on_described(&mut self, m: DescribeMsg) {
        let redactor = unstick_core::session::redactor(&self.cfg.session).unwrap_or_default();
        if let Some(d) = self.describe.as_mut() {
            d.on_described(m, &redactor);
        }
    }

    /// A key while the popup is open, answered by the popup ([`DescribeUi::handle_key`]).
    pub(crate) fn describe_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let metrics = match &self.describe {
            Some(d) => d.metrics(self.body_area(), &self.snap.events, self.now),
            None => return vec![],
        };
        let Some(d) = self.describe.as_mut() else { return vec![] };
        match d.handle_key(key, metrics) {
            Outcome::Command(AppCommand::Close) => self.describe = None,
            Outcome::Command(c) => return self.apply_command(c),
            Outcome::Consumed | Outcome::Ignored => {}
        }
        vec![]
    }
}

#[cfg(test)]
#[path = "describe_tests.rs"]
mod tests;
