//! The describe / YAML popup's life in the app: `d` / `y` open it on the selection and ask the
//! API server for the object; the popup ([`DescribeUi`], `describe.rs`) answers its keys and
//! shows the redacted answer; Tab asks for the next object of a volume row.

use super::{App, Effect, Pane};
use crate::ui::popups::Popup;
use crate::ui::popups::describe::{DescribeMode, DescribeUi};
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
                .map(|i| ObjectRef::node(self.data.snap.nodes[i].metadata.name.as_deref().unwrap_or("")))
                .into_iter()
                .collect(),
            Pane::Pods => self
                .selected_in(Pane::Pods)
                .map(|i| ObjectRef::pod(&key_of(&self.data.snap.pods[i].metadata)))
                .into_iter()
                .collect(),
            Pane::Volumes => {
                let Some(v) = self.selected_in(Pane::Volumes).and_then(|i| self.data.lineage.volumes.get(i)) else {
                    return vec![];
                };
                let mut t: Vec<ObjectRef> = v.pvc.iter().map(|c| ObjectRef::pvc(c)).collect();
                t.push(ObjectRef::pv(&v.pv));
                t.extend(v.attachments.iter().map(|a| ObjectRef::va(&a.name)));
                t
            }
            Pane::Findings => self
                .selected_finding()
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
        self.popups.push(Popup::Describe(ui));
        fx
    }

    /// The API server's answer: shown (redacted) if it is for the object still on screen.
    pub(crate) fn on_described(&mut self, m: DescribeMsg) {
        let redactor = unstick_core::session::redactor(&self.cfg.session).unwrap_or_default();
        if let Some(d) = self.popups.describe_mut() {
            d.on_described(m, &redactor);
        }
    }
}

#[cfg(test)]
#[path = "describe_tests.rs"]
mod tests;
