//! The app's side of what it derives from the objects it reads: it lends the panes' filters to
//! [`Derived`] (the snapshot, lineage, findings and rows, in the core: `console_state::derived`),
//! logs the findings a change replaced, keeps each list pane's selection within its rows, and
//! follows the selection to the Ceph and Events panes.

use super::{App, Effect, Pane};
use unstick_core::console_state::derived::{Derived, Inputs, Replaced};
use unstick_core::console_state::rows::Filters;
use unstick_core::model::Snapshot;
use unstick_core::sources::kube::{SourceState, WatchedKind};

impl App {
    /// Runs `f` on the derived data with the panes' filters, the toggles, the rules' settings
    /// and the clock; then logs the findings it replaced and clamps the selections.
    pub(crate) fn derive(&mut self, f: impl FnOnce(&mut Derived, Inputs) -> Replaced) {
        let filters = self.filters();
        let findings_filter = self.view(Pane::Findings).filter().clone();
        let inputs = Inputs {
            filters: &filters,
            findings_filter: &findings_filter,
            all_pods: self.all_pods,
            diagnose: &self.cfg.diagnose,
            now: self.now,
        };
        let selected = self.selected_finding().map(|f| {
            let playbook = f.playbook != unstick_core::diagnose::NO_PLAYBOOK;
            (f.id.clone(), f.pattern, f.volume.clone().or(f.node.clone()), playbook)
        });
        let replaced = f(&mut self.data, inputs);
        if let Some(before) = replaced {
            self.record_findings(&before);
            let gone = |id: &String| !self.data.findings.iter().any(|f| f.id == *id);
            if let Some((_, pattern, subject, playbook)) = selected.filter(|(id, ..)| gone(id)) {
                // its detail, if open, would now show another finding under the same frame
                self.popups.close(crate::ui::popups::Kind::Detail);
                // the selection moved on to another finding, so `p` would open something else:
                // said (seen in tmux on same-node-restage) for a finding with a playbook; one
                // without that clears was mostly explained by a later read (an `unexplained`
                // one before the Ceph facts came)
                if playbook {
                    let on = subject.map(|s| format!(" on {s}")).unwrap_or_default();
                    let cleared = format!("{pattern}{on} cleared at {}", self.now.strftime("%H:%M:%S"));
                    if self.popups.playbook().is_none() {
                        self.remedy.notice = Some(format!("selected finding gone: {cleared}"));
                    }
                    self.cleared_selection = Some(cleared);
                }
            }
        }
        for p in [Pane::Findings, Pane::Nodes, Pane::Pods, Pane::Volumes] {
            let n = self.row_count(p);
            self.view_mut(p).clamp(n);
        }
    }

    /// Takes new Kubernetes objects (the Ceph part of `snap` is ignored: the app keeps its own).
    pub(super) fn on_objects(&mut self, snap: Snapshot) -> Vec<Effect> {
        self.derive(|d, i| d.on_objects(snap, i));
        self.after_objects()
    }

    /// Takes what the watch stores changed since the last take.
    pub(super) fn on_watched(&mut self, deltas: unstick_core::sources::kube::Deltas) -> Vec<Effect> {
        self.derive(|d, i| d.on_watched(deltas, i));
        self.after_objects()
    }

    /// After new objects: the Ceph and Events panes follow the selection; the first scan starts
    /// once the PVs are listed and taken, with at least one RBD image (when configured).
    fn after_objects(&mut self) -> Vec<Effect> {
        let mut fx = self.follow_selection();
        let pvs_listed = self.kube_state.get(&WatchedKind::Pv) == Some(&SourceState::Live);
        // The PV kind turns Live before its objects are taken into the snapshot (the watch sends
        // its state, then the change the loop takes after a short coalescing delay), so a take of
        // other kinds in between sees no PV yet: a first scan of nothing would then be the only
        // one (seen on the harness after a context switch: "scan: 0 images", stale-lock never
        // found). The first scan waits for an image to scan. This runs after every change until
        // that scan (with --no-ceph: always), so it asks whether any volume has an image without
        // building the sorted list of them (issue 29: half the console's CPU per change at 50k).
        if self.cfg.ceph.scan_on_start
            && self.ceph.enabled
            && !self.ceph.scanned
            && pvs_listed
            && self.data.lineage.volumes.iter().any(|v| v.image.is_some())
        {
            fx.extend(self.start_scan());
        }
        fx
    }

    /// Runs the diagnosis on the current snapshot.
    pub(super) fn rediagnose(&mut self) {
        self.derive(Derived::rediagnose);
    }

    /// On a clock tick: redoes what the clock can have changed.
    pub(super) fn rediagnose_due(&mut self) {
        self.derive(Derived::rediagnose_due);
    }

    /// Every list pane's rows again (a filter or the "all pods" toggle changed).
    pub(super) fn recompute_rows(&mut self) {
        self.derive(|d, i| {
            d.recompute_rows(i);
            None
        });
    }

    /// What the list panes show: each pane's filter and the `:ns` namespace.
    pub fn filters(&self) -> Filters {
        Filters {
            nodes: self.view(Pane::Nodes).filter().clone(),
            pods: self.view(Pane::Pods).filter().clone(),
            volumes: self.view(Pane::Volumes).filter().clone(),
            namespace: self.namespace_view.clone(),
        }
    }
}

#[cfg(test)]
#[path = "derive_tests.rs"]
mod tests;
