//! What the app derives from new Kubernetes objects: the lineage, the visible rows, the rules'
//! indexes (events by involved object among them, the Events pane's too) and the findings, each
//! brought over what a change replaced, added or removed (issue 13; the stores hand out the same
//! `Arc` for an object that did not change). What changed is found once per change
//! ([`unstick_core::console_state::changes::Changes`]) and carried to what reads it: the changed objects' joins
//! ([`Lineage::apply_pvs`], [`Lineage::apply_vas`], [`Lineage::apply_nodes`],
//! [`Lineage::apply_pods`]), the rules' indexes ([`unstick_core::diagnose::Index`], synced over the
//! changed objects only), the pods' and nodes' rows (patched for the objects changed in place).
//! The findings are redone only for the volumes the change can alter
//! ([`unstick_core::diagnose::Diagnosis::scoped`]): those whose lineage changed, those of the pods it
//! touches, those near a node whose health or addresses changed. A PV added, removed or re-bound
//! rebuilds the lineage, the rows and every finding. The clock tick redoes what the clock can
//! change.

use super::app::{App, Effect, Flagged, Pane};
use std::collections::BTreeSet;
use unstick_core::console_state::rows;

use unstick_core::console_state::changes::{Changed, Changes};
use unstick_core::diagnose::{Due, ObjectKind, Touched};
use unstick_core::lineage::Lineage;
use unstick_core::lineage::apply::Applied;
use unstick_core::model::Snapshot;
use unstick_core::model::objects::{Node, PersistentVolume, Pod, VolumeAttachment};
use unstick_core::sources::kube::{SourceState, WatchedKind};

impl App {
    /// Takes new Kubernetes objects (the Ceph part of `snap` is ignored: the app keeps its own),
    /// finding what changed by a walk over both snapshots' lists ([`Changes::between`]).
    pub(super) fn on_objects(&mut self, snap: Snapshot) -> Vec<Effect> {
        let known = self.snap.taken_at.is_some();
        let ch = Changes::between(&self.snap, &snap);
        let ceph = std::mem::take(&mut self.snap.ceph);
        self.snap = snap;
        self.snap.ceph = ceph;
        self.on_changes(known, ch)
    }

    /// Takes what the watch stores changed since the last take: patched into the snapshot at
    /// the cost of the change ([`Changes::patch`]).
    pub(super) fn on_watched(&mut self, d: unstick_core::sources::kube::Deltas) -> Vec<Effect> {
        let known = self.snap.taken_at.is_some();
        let ch = Changes::patch(&mut self.snap, d);
        self.on_changes(known, ch)
    }

    /// Brings what the app derives over the change `ch` of the snapshot (`known`: the app had
    /// objects before; else everything is built from the snapshot).
    fn on_changes(&mut self, known: bool, ch: Changes) -> Vec<Effect> {
        let Changes { nodes, pods, pvs, volume_attachments: vas, events } = ch;
        let (same_pods, same_events) = (known && pods.is_empty(), known && events.is_empty());
        let touched = if known {
            // the index is brought over the changed objects only
            let was = Snapshot {
                nodes: nodes.gone.clone(),
                volume_attachments: vas.gone.clone(),
                pods: pods.gone.clone(),
                events: events.gone,
                ..Snapshot::default()
            };
            let is = Snapshot {
                nodes: nodes.came.clone(),
                volume_attachments: vas.came.clone(),
                pods: pods.came.clone(),
                events: events.came,
                ..Snapshot::default()
            };
            self.diag_index.sync(&was, &is, false)
        } else {
            self.diag_index.sync(&Snapshot::default(), &self.snap, true)
        };
        // the volumes whose findings the change can alter (None: all of them)
        let scope = if known { self.apply_changes(&nodes, &pvs, &vas, &pods, &touched) } else { None };
        if scope.is_none() {
            if !known {
                // (a known snapshot's fall-back built it already)
                self.lineage = Lineage::build(&self.snap);
            }
            self.recompute_rows();
        }
        let unread = same_pods && same_events && vas.is_empty() && touched.nodes.is_empty();
        match scope {
            None => self.rediagnose(),
            // only PVCs, or what no rule reads of nodes and PVs, changed
            Some(pvs) if pvs.is_empty() && unread && self.diagnosed_at.is_some() => {}
            Some(mut pvs) => {
                pvs.extend(self.volumes_of(&touched.pod_events));
                pvs.extend(touched.claim_events.iter().filter_map(|c| self.lineage.by_pvc(c)).map(|v| v.pv.clone()));
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

    /// Brings the lineage and the rows over a change of a known snapshot, object by object
    /// (PVs, VolumeAttachments, nodes, then pods), and returns the volumes whose findings it can
    /// alter: those whose lineage changed, those of the changed pods (before and after), and
    /// the scope of each node whose health or addresses changed
    /// ([`unstick_core::diagnose::Diagnosis::node_scope`]). `None` when the lineage was built again
    /// (a PV added, removed or re-bound: [`Lineage::apply_pvs`]): the caller redoes the rows
    /// and the whole diagnosis.
    fn apply_changes(
        &mut self,
        nodes: &Changed<Node>,
        pvs: &Changed<PersistentVolume>,
        vas: &Changed<VolumeAttachment>,
        pods: &Changed<Pod>,
        touched: &Touched,
    ) -> Option<BTreeSet<String>> {
        let mut scope = BTreeSet::new();
        let mut take = |a: Applied| match a {
            Applied::Volumes(v) => {
                scope.extend(v);
                Some(())
            }
            Applied::Rebuilt => None,
        };
        if !pvs.is_empty() {
            take(self.lineage.apply_pvs(&pvs.gone, &pvs.came, &self.snap))?;
        }
        if !vas.is_empty() {
            take(self.lineage.apply_vas(&vas.gone, &vas.came))?;
        }
        if !nodes.is_empty() {
            take(self.lineage.apply_nodes(&nodes.gone, &nodes.came, &self.snap))?;
        }
        if !pods.is_empty() {
            scope.extend(self.volumes_of(&touched.pods));
            self.lineage.apply_pods(&pods.gone, &pods.came, &self.snap.pods);
            scope.extend(self.volumes_of(&touched.pods));
            self.update_pod_rows(pods.in_place.as_deref());
        }
        for name in &touched.nodes {
            let versions: Vec<&Node> = nodes
                .gone
                .iter()
                .chain(&nodes.came)
                .filter(|n| n.metadata.name.as_deref() == Some(name))
                .map(|n| &**n)
                .collect();
            scope.extend(self.diagnosis.node_scope(&self.lineage, name, &versions));
        }
        if !nodes.is_empty() {
            self.update_node_rows(nodes.in_place.as_deref());
        }
        // the volumes pane's rows read a volume's claim, PV, driver and image, which an
        // incremental change keeps
        Some(scope)
    }

    /// The nodes pane's rows after a change of nodes: patched for the nodes replaced in place,
    /// else recomputed (nodes were added or removed: a pass over the nodes, not the pods).
    fn update_node_rows(&mut self, in_place: Option<&[usize]>) {
        let filters = self.filters();
        match in_place {
            Some(at) => rows::patch_node_rows(&mut self.rows.nodes, &self.snap.nodes, at, &filters),
            None => self.rows.nodes = rows::node_rows(&self.snap.nodes, &filters),
        }
        let n = self.row_count(Pane::Nodes);
        self.view_mut(Pane::Nodes).clamp(n);
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

    fn take_findings(&mut self, found: Vec<unstick_core::diagnose::Finding>) {
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
        self.rows.findings =
            unstick_core::console_state::rows::finding_rows(&self.findings, self.view(Pane::Findings).filter());
        let n = self.rows.findings.len();
        self.view_mut(Pane::Findings).clamp(n);
    }
}

#[cfg(test)]
#[path = "app_derive_tests.rs"]
mod tests;
