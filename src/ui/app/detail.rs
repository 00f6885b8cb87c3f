//! The app's side of the finding detail overlay (`popups/finding_detail.rs`): the finding it shows,
//! and jumping from one of its objects to the pane that lists it.

use super::{App, Effect, Pane};
use unstick_core::diagnose::{Finding, ObjectKind, ObjectRef};
use unstick_core::model::key_of;

impl App {
    /// The finding whose detail is open, and its highlighted object row.
    pub fn open_finding(&self) -> Option<(&Finding, usize)> {
        let d = self.popups.detail()?;
        Some((self.selected_finding()?, d.object()))
    }

    /// Focuses the pane that lists `o` and selects its row (clearing that pane's filter, and
    /// showing all pods when the pod is not a troubled one).
    pub(super) fn jump_to(&mut self, o: &ObjectRef) -> Vec<Effect> {
        let from = (self.focus, self.selected_row(self.focus));
        let volume_of = |app: &App| -> Option<usize> {
            match o.kind {
                ObjectKind::PersistentVolumeClaim => {
                    app.data.lineage.index_of_pvc(&format!("{}/{}", o.namespace.as_deref().unwrap_or(""), o.name))
                }
                ObjectKind::PersistentVolume => app.data.lineage.volumes.iter().position(|v| v.pv == o.name),
                ObjectKind::VolumeAttachment => {
                    app.data.lineage.volumes.iter().position(|v| v.attachments.iter().any(|a| a.name == o.name))
                }
                ObjectKind::RbdImage => app.data.lineage.volumes.iter().position(|v| {
                    v.image.as_ref().is_some_and(|i| Some(&i.pool) == o.pool.as_ref() && i.image == o.name)
                }),
                _ => None,
            }
        };
        let (pane, row) = match o.kind {
            ObjectKind::Pod => {
                let key = format!("{}/{}", o.namespace.as_deref().unwrap_or(""), o.name);
                let Some(i) = self.data.snap.pods.iter().position(|p| key_of(&p.metadata) == key) else {
                    return vec![];
                };
                self.view_mut(Pane::Pods).clear_filter();
                if !self.all_pods && !unstick_core::model::kube::pod_state(&self.data.snap.pods[i]).is_troubled() {
                    self.all_pods = true;
                }
                self.recompute_rows();
                (Pane::Pods, self.data.rows.pods.iter().position(|&r| r == i))
            }
            ObjectKind::Node => {
                let Some(i) = self.data.snap.nodes.iter().position(|n| n.metadata.name.as_deref() == Some(&o.name))
                else {
                    return vec![];
                };
                self.view_mut(Pane::Nodes).clear_filter();
                self.recompute_rows();
                (Pane::Nodes, self.data.rows.nodes.iter().position(|&r| r == i))
            }
            ObjectKind::BlocklistEntry => (Pane::Ceph, Some(0)),
            _ => {
                let Some(i) = volume_of(self) else { return vec![] };
                self.view_mut(Pane::Volumes).clear_filter();
                self.recompute_rows();
                (Pane::Volumes, self.data.rows.volumes.iter().position(|&r| r == i))
            }
        };
        let Some(row) = row else { return vec![] };
        self.back_stack.push(from);
        self.focus = pane;
        self.select(pane, row);
        self.follow_selection()
    }
}
