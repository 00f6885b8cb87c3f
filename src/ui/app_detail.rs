//! The app's side of the finding detail overlay (`finding_detail.rs`): routing its keys, and jumping from one of its objects to the pane that
//! lists it.

use super::app::{Action, App, Effect, Pane};
use super::outcome::{AppCommand, Outcome};
use unstick_core::diagnose::{Finding, ObjectKind, ObjectRef};
use unstick_core::model::key_of;

impl App {
    /// The finding whose detail is open, and its highlighted object row.
    pub fn open_finding(&self) -> Option<(&Finding, usize)> {
        let d = self.finding_detail.as_ref()?;
        Some((self.findings.get(self.selected_row(Pane::Findings))?, d.object()))
    }

    /// A pane key while the overlay is open ([`super::finding_detail::FindingDetail::handle_key`]);
    /// the overlay closes when its finding is gone.
    pub(super) fn act_in_detail(&mut self, a: Action) -> Vec<Effect> {
        let sel = self.selected_row(Pane::Findings);
        let (Some(f), Some(d)) = (self.findings.get(sel), self.finding_detail.as_mut()) else {
            self.finding_detail = None;
            return vec![];
        };
        match d.handle_key(a, f) {
            Outcome::Command(AppCommand::Close) => self.finding_detail = None,
            Outcome::Command(AppCommand::JumpTo(target)) => {
                self.finding_detail = None;
                return self.jump_to(&target);
            }
            Outcome::Command(c) => return self.apply_command(c),
            Outcome::Consumed | Outcome::Ignored => {}
        }
        vec![]
    }

    /// Focuses the pane that lists `o` and selects its row (clearing that pane's filter, and
    /// showing all pods when the pod is not a troubled one).
    pub(super) fn jump_to(&mut self, o: &ObjectRef) -> Vec<Effect> {
        let from = (self.focus, self.selected_row(self.focus));
        let volume_of = |app: &App| -> Option<usize> {
            match o.kind {
                ObjectKind::PersistentVolumeClaim => {
                    app.lineage.index_of_pvc(&format!("{}/{}", o.namespace.as_deref().unwrap_or(""), o.name))
                }
                ObjectKind::PersistentVolume => app.lineage.volumes.iter().position(|v| v.pv == o.name),
                ObjectKind::VolumeAttachment => {
                    app.lineage.volumes.iter().position(|v| v.attachments.iter().any(|a| a.name == o.name))
                }
                ObjectKind::RbdImage => app.lineage.volumes.iter().position(|v| {
                    v.image.as_ref().is_some_and(|i| Some(&i.pool) == o.pool.as_ref() && i.image == o.name)
                }),
                _ => None,
            }
        };
        let (pane, row) = match o.kind {
            ObjectKind::Pod => {
                let key = format!("{}/{}", o.namespace.as_deref().unwrap_or(""), o.name);
                let Some(i) = self.snap.pods.iter().position(|p| key_of(&p.metadata) == key) else { return vec![] };
                self.view_mut(Pane::Pods).clear_filter();
                if !self.all_pods && !unstick_core::model::kube::pod_state(&self.snap.pods[i]).is_troubled() {
                    self.all_pods = true;
                }
                self.recompute_rows();
                (Pane::Pods, self.rows.pods.iter().position(|&r| r == i))
            }
            ObjectKind::Node => {
                let Some(i) = self.snap.nodes.iter().position(|n| n.metadata.name.as_deref() == Some(&o.name)) else {
                    return vec![];
                };
                self.view_mut(Pane::Nodes).clear_filter();
                self.recompute_rows();
                (Pane::Nodes, self.rows.nodes.iter().position(|&r| r == i))
            }
            ObjectKind::BlocklistEntry => (Pane::Ceph, Some(0)),
            _ => {
                let Some(i) = volume_of(self) else { return vec![] };
                self.view_mut(Pane::Volumes).clear_filter();
                self.recompute_rows();
                (Pane::Volumes, self.rows.volumes.iter().position(|&r| r == i))
            }
        };
        let Some(row) = row else { return vec![] };
        self.back_stack.push(from);
        self.focus = pane;
        self.select(pane, row);
        self.follow_selection()
    }
}
