//! What the app derives from new Kubernetes objects: the lineage, the visible rows, the rules'
//! indexes (events by involved object among them, the Events pane's too) and the findings. Each is rebuilt only when the kinds it reads changed (the stores hand
//! out the same `Arc` for an object that did not change), so churn on one kind does not redo the
//! joins of the others (issue 13). What changed of pods and Events is found once per change
//! ([`super::changes::Changes`], a walk over pointers) and carried to what reads them: the
//! changed pods' joins ([`Lineage::apply_pods`]), the rules' indexes
//! ([`crate::diagnose::Index`], synced over the changed objects only), the pods pane's rows
//! (patched for the pods changed in place). A change of pods or Events redoes only the findings
//! about the volumes of the pods it touches ([`crate::diagnose::Diagnosis::scoped`]); a change
//! of nodes, PVs or VolumeAttachments redoes them all. The clock tick redoes what the clock can
//! change.

use super::app::{App, Effect, Flagged, Pane};
use super::rows;
use std::collections::BTreeSet;
use std::sync::Arc;

use super::changes::Changes;
use crate::diagnose::{Due, ObjectKind};
use crate::lineage::Lineage;
use crate::model::Snapshot;
use crate::sources::kube::{SourceState, WatchedKind};

impl App {
    /// Takes new Kubernetes objects (the Ceph part of `snap` is ignored: the app keeps its own),
    /// finding what changed by a walk over both snapshots' lists ([`Changes::between`]).
    pub(super) fn on_objects(&mut self, snap: Snapshot) -> Vec<Effect> {
        let known = self.snap.taken_at.is_some();
        let ch = Changes::between(&self.snap, &snap);
        let ceph = std::mem::take(&mut self.snap.ceph);
        let old = std::mem::replace(&mut self.snap, snap);
        self.snap.ceph = ceph;
        self.on_changes(known, ch, &old)
    }

    /// Takes what the watch stores changed since the last take: patched into the snapshot at
    /// the cost of the change ([`Changes::patch`]).
    pub(super) fn on_watched(&mut self, d: crate::sources::kube::Deltas) -> Vec<Effect> {
        let known = self.snap.taken_at.is_some();
        // what the index still rebuilds whole when it changed: the old nodes and VolumeAttachments
        let old = Snapshot {
            nodes: whole(d.nodes.is_empty(), &self.snap.nodes),
            volume_attachments: whole(d.volume_attachments.is_empty(), &self.snap.volume_attachments),
            ..Snapshot::default()
        };
        let ch = Changes::patch(&mut self.snap, d);
        self.on_changes(known, ch, &old)
    }

    /// Brings what the app derives over the change `ch` of the snapshot (from `old`, whose
    /// nodes and VolumeAttachments are read when they changed; `known`: the app had objects).
    fn on_changes(&mut self, known: bool, ch: Changes, old: &Snapshot) -> Vec<Effect> {
        // the lineage joins nodes, pods, PVs and VolumeAttachments (not PVCs, not Events)
        let same_nodes = known && ch.nodes.is_empty();
        let same_vas = known && ch.volume_attachments.is_empty();
        let same_volumes = same_nodes && same_vas && ch.pvs.is_empty();
        let Changes { pods, events, .. } = ch;
        let (same_pods, same_events) = (known && pods.is_empty(), known && events.is_empty());
        let touched = if known {
            // the index is brought over the changed objects only (the kinds it rebuilds whole,
            // nodes and VolumeAttachments, only when they changed)
            let was = Snapshot {
                nodes: whole(same_nodes, &old.nodes),
                volume_attachments: whole(same_vas, &old.volume_attachments),
                pods: pods.gone.clone(),
                events: events.gone,
                ..Snapshot::default()
            };
            let is = Snapshot {
                nodes: whole(same_nodes, &self.snap.nodes),
                volume_attachments: whole(same_vas, &self.snap.volume_attachments),
                pods: pods.came.clone(),
                events: events.came,
                ..Snapshot::default()
            };
            self.diag_index.sync(&was, &is, false)
        } else {
            self.diag_index.sync(old, &self.snap, true)
        };
        // the volumes whose findings the change can alter (None: all of them)
        let scope = match (same_volumes, same_pods) {
            (true, true) => Some(BTreeSet::new()),
            (true, false) => {
                let mut pvs = self.volumes_of(&touched.pods);
                self.lineage.apply_pods(&pods.gone, &pods.came, &self.snap.pods);
                pvs.extend(self.volumes_of(&touched.pods));
                self.update_pod_rows(pods.in_place.as_deref());
                Some(pvs)
            }
            _ => {
                self.lineage = Lineage::build(&self.snap);
                self.recompute_rows();
                None
            }
        };
        match scope {
            None => self.rediagnose(),
            // only PVCs changed: no rule reads them
            Some(pvs) if pvs.is_empty() && same_pods && same_events && self.diagnosed_at.is_some() => {}
            Some(mut pvs) => {
                pvs.extend(self.volumes_of(&touched.pod_events));
                self.rediagnose_scoped(&pvs);
            }
        }
        let mut fx = self.follow_selection();
        let pvs_listed = self.kube_state.get(&WatchedKind::Pv) == Some(&SourceState::Live);
        if self.cfg.ceph.scan_on_start && !self.ceph.scanned && pvs_listed {
            fx.extend(self.start_scan());
        }
        fx
    }

    /// The PVs the pods `keys` (`namespace/name`) mount, as the lineage joins them now.
    fn volumes_of(&self, keys: &[String]) -> BTreeSet<String> {
        keys.iter().flat_map(|k| self.lineage.volumes_of_pod(k)).map(|v| v.pv.clone()).collect()
    }

    /// The pods pane's rows after a change of pods only: patched for the pods replaced in place
    /// (`in_place`: their positions), else recomputed (pods were added or removed, which moves
    /// the others' positions); the nodes' and volumes' rows do not read pods.
    fn update_pod_rows(&mut self, in_place: Option<&[usize]>) {
        let filters = self.filters();
        match in_place {
            Some(at) => rows::patch_pod_rows(&mut self.rows.pods, &self.snap.pods, at, &filters, self.all_pods),
            None => self.rows.pods = rows::pod_rows(&self.snap.pods, &filters, self.all_pods),
        }
        let n = self.row_count(Pane::Pods);
        self.view_mut(Pane::Pods).clamp(n);
    }

    /// Runs the diagnosis on the current snapshot and updates the flags.
    pub(super) fn rediagnose(&mut self) {
        if self.snap.taken_at.is_none() {
            return;
        }
        let d = &mut self.diagnosis;
        let found = d.all(&self.snap, &self.lineage, &self.diag_index, &self.cfg.diagnose, self.now);
        self.take_findings(found);
    }

    /// Redoes the findings about the PVs `pvs` (and the global rules), keeping the others.
    fn rediagnose_scoped(&mut self, pvs: &BTreeSet<String>) {
        if self.diagnosed_at.is_none() {
            return self.rediagnose();
        }
        let d = &mut self.diagnosis;
        let found = d.scoped(&self.snap, &self.lineage, &self.diag_index, &self.cfg.diagnose, self.now, pvs);
        self.take_findings(found);
    }

    /// On a clock tick: redoes what the clock can have changed ([`Diagnosis::due`]).
    pub(super) fn rediagnose_due(&mut self) {
        match self.diagnosis.due(self.now) {
            Due::All => self.rediagnose(),
            Due::Volumes(pvs) => self.rediagnose_scoped(&pvs),
            Due::Nothing => self.diagnosed_at = Some(self.now),
        }
    }

    fn take_findings(&mut self, found: Vec<crate::diagnose::Finding>) {
        let before = std::mem::replace(&mut self.findings, found);
        self.record_findings(&before);
        let mut flagged = Flagged::default();
        for f in &self.findings {
            for o in &f.objects {
                match o.kind {
                    ObjectKind::Pod => {
                        flagged.pods.insert(format!("{}/{}", o.namespace.as_deref().unwrap_or(""), o.name));
                    }
                    ObjectKind::PersistentVolume => {
                        flagged.pvs.insert(o.name.clone());
                    }
                    ObjectKind::Node => {
                        flagged.nodes.insert(o.name.clone());
                    }
                    _ => {}
                }
            }
        }
        self.flagged = flagged;
        self.diagnosed_at = Some(self.now);
        let n = self.findings.len();
        self.view_mut(Pane::Findings).clamp(n);
    }
}

/// `v` when its kind changed (`!same`), else nothing: what [`crate::diagnose::Index::sync`] needs
/// of a kind it rebuilds whole.
fn whole<T>(same: bool, v: &[Arc<T>]) -> Vec<Arc<T>> {
    if same { vec![] } else { v.to_vec() }
}

#[cfg(test)]
#[path = "app_derive_tests.rs"]
mod tests;
