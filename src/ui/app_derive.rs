//! What the app derives from new Kubernetes objects: the lineage, the events index, the visible
//! rows and the findings. Each is rebuilt only when the kinds it reads changed (the stores hand
//! out the same `Arc` for an object that did not change), so churn on one kind does not redo the
//! joins of the others (issue 13); a change of pods only redoes the changed pods' joins
//! ([`Lineage::update_pods`]), and the diagnosis is skipped when no rule can see the changed
//! pods. Otherwise the diagnosis still runs over the whole snapshot.

use super::app::{App, Effect, Flagged, Pane};
use crate::diagnose::ObjectKind;
use crate::lineage::{Lineage, PodsChanged};
use crate::model::Snapshot;
use crate::model::index::{EventsByObject, same_objects};
use crate::sources::kube::{SourceState, WatchedKind};

impl App {
    /// Takes new Kubernetes objects (the Ceph part of `snap` is ignored: the app keeps its own).
    pub(super) fn on_objects(&mut self, snap: Snapshot) -> Vec<Effect> {
        let old = &self.snap;
        let known = old.taken_at.is_some();
        // the lineage joins nodes, pods, PVs and VolumeAttachments (not PVCs, not Events)
        let same_volumes = known
            && same_objects(&old.nodes, &snap.nodes)
            && same_objects(&old.pvs, &snap.pvs)
            && same_objects(&old.volume_attachments, &snap.volume_attachments);
        let same_pods = known && same_objects(&old.pods, &snap.pods);
        let same_events = known && same_objects(&old.events, &snap.events);
        let ceph = std::mem::take(&mut self.snap.ceph);
        let old = std::mem::replace(&mut self.snap, snap);
        self.snap.ceph = ceph;
        // whether the diagnosis can see the change (see `unseen_by_rules`)
        let mut seen = true;
        match (same_volumes, same_pods) {
            (true, true) => {}
            (true, false) => {
                let changed = self.lineage.update_pods(&old.pods, &self.snap.pods);
                self.recompute_rows();
                seen = !same_events || !self.unseen_by_rules(&changed);
            }
            _ => {
                self.lineage = Lineage::build(&self.snap);
                self.recompute_rows();
            }
        }
        if !same_events {
            self.events_by_object = EventsByObject::build(&self.snap.events);
        }
        if seen || self.diagnosed_at.is_none() {
            self.rediagnose();
        }
        let mut fx = self.follow_selection();
        let pvs_listed = self.kube_state.get(&WatchedKind::Pv) == Some(&SourceState::Live);
        if self.cfg.ceph.scan_on_start && !self.ceph.scanned && pvs_listed {
            fx.extend(self.start_scan());
        }
        fx
    }

    /// True when no rule can see the pods of `changed` (only pods changed, no other kind): the
    /// rules read a pod only through a volume it mounts (the lineage's pod join) or through an
    /// Event about it, and these pods have neither, before or after. Their findings are then
    /// those of the last diagnosis (which the clock tick redoes every few seconds for the
    /// time-dependent parts, as between changes).
    fn unseen_by_rules(&self, changed: &PodsChanged) -> bool {
        !changed.joined && changed.keys.iter().all(|k| self.events_by_object.of("Pod", k).is_empty())
    }

    /// Runs the diagnosis on the current snapshot and updates the flags.
    pub(super) fn rediagnose(&mut self) {
        if self.snap.taken_at.is_none() {
            return;
        }
        let before = std::mem::replace(
            &mut self.findings,
            crate::diagnose::run(&self.snap, &self.lineage, &self.cfg.diagnose, self.now),
        );
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

#[cfg(test)]
#[path = "app_derive_tests.rs"]
mod tests;
