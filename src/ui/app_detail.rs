//! The finding detail overlay: its keys, and jumping from one of its objects to the pane that
//! lists it.

use super::app::{Action, App, Effect, Pane};
use super::rows::Filter;
use crate::diagnose::{Finding, ObjectKind, ObjectRef};
use crate::model::key_of;

impl App {
    /// The finding whose detail is open.
    pub fn open_finding(&self) -> Option<(&Finding, usize)> {
        let obj = self.finding_detail?;
        Some((self.findings.get(self.selected_row(Pane::Findings))?, obj))
    }

    pub(super) fn act_in_detail(&mut self, a: Action) -> Vec<Effect> {
        let Some((f, obj)) = self.open_finding() else {
            self.finding_detail = None;
            return vec![];
        };
        let n = f.objects.len();
        match a {
            Action::Quit => self.quit = true,
            Action::Back => self.finding_detail = None,
            Action::Up => self.finding_detail = Some(obj.saturating_sub(1)),
            Action::Down => self.finding_detail = Some((obj + 1).min(n.saturating_sub(1))),
            Action::PageDown => self.detail_scroll = self.detail_scroll.saturating_add(5),
            Action::PageUp => self.detail_scroll = self.detail_scroll.saturating_sub(5),
            Action::Top => self.detail_scroll = 0,
            Action::ToggleHelp => self.help = !self.help,
            Action::OpenPlaybook => return self.open_playbook(),
            Action::Note => self.open_note(),
            Action::Describe => return self.open_describe_view(),
            Action::Yaml => return self.open_yaml_view(),
            Action::Command => self.open_command(),
            Action::Drill => {
                let Some(target) = f.objects.get(obj).cloned() else { return vec![] };
                self.finding_detail = None;
                return self.jump_to(&target);
            }
            _ => {}
        }
        vec![]
    }

    /// Focuses the pane that lists `o` and selects its row (clearing that pane's filter, and
    /// showing all pods when the pod is not a troubled one).
    fn jump_to(&mut self, o: &ObjectRef) -> Vec<Effect> {
        let from = (self.focus, self.selected[self.focus.index()]);
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
                self.filters.pods = Filter::default();
                if !self.all_pods && !crate::model::kube::pod_state(&self.snap.pods[i]).is_troubled() {
                    self.all_pods = true;
                }
                self.recompute_rows();
                (Pane::Pods, self.rows.pods.iter().position(|&r| r == i))
            }
            ObjectKind::Node => {
                let Some(i) = self.snap.nodes.iter().position(|n| n.metadata.name.as_deref() == Some(&o.name)) else {
                    return vec![];
                };
                self.filters.nodes = Filter::default();
                self.recompute_rows();
                (Pane::Nodes, self.rows.nodes.iter().position(|&r| r == i))
            }
            ObjectKind::BlocklistEntry => (Pane::Ceph, Some(0)),
            _ => {
                let Some(i) = volume_of(self) else { return vec![] };
                self.filters.volumes = Filter::default();
                self.recompute_rows();
                (Pane::Volumes, self.rows.volumes.iter().position(|&r| r == i))
            }
        };
        let Some(row) = row else { return vec![] };
        self.back_stack.push(from);
        self.focus = pane;
        self.selected[pane.index()] = row;
        self.follow_selection()
    }
}
