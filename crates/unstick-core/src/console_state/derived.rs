//! What the console derives from the Kubernetes objects it reads: the lineage, the visible rows,
//! the rules' indexes (events by involved object among them, the Events pane's too) and the
//! findings, each brought over what a change replaced, added or removed (issue 13; the stores hand
//! out the same `Arc` for an object that did not change). What changed is found once per change
//! ([`Changes`]) and carried to what reads it: the changed objects' joins
//! ([`Lineage::apply_pvs`], [`Lineage::apply_vas`], [`Lineage::apply_nodes`],
//! [`Lineage::apply_pods`]), the rules' indexes ([`Index`], synced over the changed objects only),
//! the pods' and nodes' rows (patched for the objects changed in place). The findings are redone
//! only for the volumes the change can alter ([`Diagnosis::scoped`]): those whose lineage changed,
//! those of the pods it touches, those near a node whose health or addresses changed. A PV added,
//! removed or re-bound rebuilds the lineage, the rows and every finding. The clock tick redoes
//! what the clock can change ([`Derived::rediagnose_due`]).
//!
//! No terminal here: the console's `App` owns one [`Derived`], lends it the panes' filters
//! ([`Inputs`]) and keeps the panes' selections within the rows it returns.

use std::collections::{BTreeSet, HashSet};

use jiff::Timestamp;

use super::changes::{Changed, Changes};
use super::rows::{self, Filter, Filters, Rows};
use crate::config::DiagnoseConfig;
use crate::diagnose::{Diagnosis, Due, Finding, Index, ObjectKind, Touched};
use crate::lineage::Lineage;
use crate::lineage::apply::Applied;
use crate::model::Snapshot;
use crate::model::objects::{Node, PersistentVolume, Pod, VolumeAttachment};
use crate::sources::kube::Deltas;

/// Objects that appear in at least one finding, by pane.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flagged {
    /// Pods as `namespace/name`.
    pub pods: HashSet<String>,
    /// PVs by name.
    pub pvs: HashSet<String>,
    /// Nodes by name.
    pub nodes: HashSet<String>,
}

impl Flagged {
    /// The pods, PVs and nodes `findings` name.
    pub fn of(findings: &[Finding]) -> Self {
        let mut flagged = Flagged::default();
        for o in findings.iter().flat_map(|f| &f.objects) {
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
        flagged
    }
}

/// What a derivation reads besides the objects: the panes' filters, the "all pods" toggle, the
/// rules' settings and the console's clock.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The Nodes, Pods and Volumes panes' filters and the `:ns` namespace.
    pub filters: &'a Filters,
    /// The Findings pane's filter.
    pub findings_filter: &'a Filter,
    /// Show every pod, not only the troubled ones.
    pub all_pods: bool,
    /// The rules' thresholds.
    pub diagnose: &'a DiagnoseConfig,
    /// The console's clock (ages and grace periods are computed against it).
    pub now: Timestamp,
}

/// The findings a derivation replaced, for the session log to diff against the new ones
/// (`None`: the findings were not redone).
pub type Replaced = Option<Vec<Finding>>;

/// The console's data: the snapshot and everything computed from it.
#[derive(Debug, Default)]
pub struct Derived {
    /// Current data (its Ceph part is the console's own: [`Derived::on_objects`] keeps it).
    pub snap: Snapshot,
    /// Joined view of `snap`.
    pub lineage: Lineage,
    /// Visible rows of the list panes.
    pub rows: Rows,
    /// Findings of the last diagnosis, most severe first, then oldest.
    pub findings: Vec<Finding>,
    /// Objects that appear in a finding, for marking rows.
    pub flagged: Flagged,
    /// When the findings were last computed (`None`: never).
    pub diagnosed_at: Option<Timestamp>,
    /// The rules' indexes over `snap`, updated from the objects that change (its events by
    /// involved object are the Events pane's too).
    pub index: Index,
    /// The findings by volume, redone for what a change touches.
    pub diagnosis: Diagnosis,
}

impl Derived {
    /// Takes new Kubernetes objects (the Ceph part of `snap` is ignored: the console keeps its
    /// own), finding what changed by a walk over both snapshots' lists ([`Changes::between`]).
    pub fn on_objects(&mut self, snap: Snapshot, i: Inputs) -> Replaced {
        let known = self.snap.taken_at.is_some();
        let ch = Changes::between(&self.snap, &snap);
        let ceph = std::mem::take(&mut self.snap.ceph);
        let version = self.snap.server_version;
        self.snap = snap;
        self.snap.ceph = ceph;
        self.snap.server_version = self.snap.server_version.or(version);
        self.on_changes(known, ch, i)
    }

    /// The API server's version as the remediation worker read it (`None`: unknown), then the
    /// whole diagnosis again (findings that depend on the release, like an in-tree RBD volume on
    /// 1.31+).
    pub fn on_server_version(&mut self, v: Option<(u32, u32)>, i: Inputs) -> Replaced {
        self.snap.server_version = v;
        self.rediagnose(i)
    }

    /// Takes what the watch stores changed since the last take: patched into the snapshot at
    /// the cost of the change ([`Changes::patch`]).
    pub fn on_watched(&mut self, d: Deltas, i: Inputs) -> Replaced {
        let known = self.snap.taken_at.is_some();
        let ch = Changes::patch(&mut self.snap, d);
        self.on_changes(known, ch, i)
    }

    /// Brings what is derived over the change `ch` of the snapshot (`known`: there were objects
    /// before; else everything is built from the snapshot).
    fn on_changes(&mut self, known: bool, ch: Changes, i: Inputs) -> Replaced {
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
            self.index.sync(&was, &is, false)
        } else {
            self.index.sync(&Snapshot::default(), &self.snap, true)
        };
        // the volumes whose findings the change can alter (None: all of them)
        let scope = if known { self.apply_changes(&nodes, &pvs, &vas, &pods, &touched, i) } else { None };
        if scope.is_none() {
            if !known {
                // (a known snapshot's fall-back built it already)
                self.lineage = Lineage::build(&self.snap);
            }
            self.recompute_rows(i);
        }
        let unread = same_pods && same_events && vas.is_empty() && touched.nodes.is_empty();
        match scope {
            None => self.rediagnose(i),
            // only PVCs, or what no rule reads of nodes and PVs, changed
            Some(pvs) if pvs.is_empty() && unread && self.diagnosed_at.is_some() => None,
            Some(mut pvs) => {
                pvs.extend(self.volumes_of(&touched.pod_events));
                pvs.extend(touched.claim_events.iter().filter_map(|c| self.lineage.by_pvc(c)).map(|v| v.pv.clone()));
                self.rediagnose_scoped(&pvs, i)
            }
        }
    }

    /// Brings the lineage and the rows over a change of a known snapshot, object by object
    /// (PVs, VolumeAttachments, nodes, then pods), and returns the volumes whose findings it can
    /// alter: those whose lineage changed, those of the changed pods (before and after), and
    /// the scope of each node whose health or addresses changed ([`Diagnosis::node_scope`]).
    /// `None` when the lineage was built again (a PV added, removed or re-bound:
    /// [`Lineage::apply_pvs`]): the caller redoes the rows and the whole diagnosis.
    fn apply_changes(
        &mut self,
        nodes: &Changed<Node>,
        pvs: &Changed<PersistentVolume>,
        vas: &Changed<VolumeAttachment>,
        pods: &Changed<Pod>,
        touched: &Touched,
        i: Inputs,
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
            self.update_pod_rows(pods.in_place.as_deref(), i);
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
            self.update_node_rows(nodes.in_place.as_deref(), i);
        }
        // the volumes pane's rows read a volume's claim, PV, driver and image, which an
        // incremental change keeps
        Some(scope)
    }

    /// The nodes pane's rows after a change of nodes: patched for the nodes replaced in place,
    /// else recomputed (nodes were added or removed: a pass over the nodes, not the pods).
    fn update_node_rows(&mut self, in_place: Option<&[usize]>, i: Inputs) {
        match in_place {
            Some(at) => rows::patch_node_rows(&mut self.rows.nodes, &self.snap.nodes, at, i.filters),
            None => self.rows.nodes = rows::node_rows(&self.snap.nodes, i.filters),
        }
    }

    /// The pods pane's rows after a change of pods only: patched for the pods replaced in place
    /// (`in_place`: their positions), else recomputed (pods were added or removed, which moves
    /// the others' positions); the nodes' and volumes' rows do not read pods.
    fn update_pod_rows(&mut self, in_place: Option<&[usize]>, i: Inputs) {
        match in_place {
            Some(at) => rows::patch_pod_rows(&mut self.rows.pods, &self.snap.pods, at, i.filters, i.all_pods),
            None => self.rows.pods = rows::pod_rows(&self.snap.pods, i.filters, i.all_pods),
        }
    }

    /// The PVs the pods `keys` (`namespace/name`) mount, as the lineage joins them now.
    fn volumes_of(&self, keys: &[String]) -> BTreeSet<String> {
        keys.iter().flat_map(|k| self.lineage.volumes_of_pod(k)).map(|v| v.pv.clone()).collect()
    }

    /// Every list pane's rows from the snapshot and the findings, under the filters of `i`.
    pub fn recompute_rows(&mut self, i: Inputs) {
        self.rows = rows::compute(&self.snap, &self.lineage, i.filters, i.all_pods);
        self.rows.findings = rows::finding_rows(&self.findings, i.findings_filter);
    }

    /// Runs the diagnosis on the whole snapshot (nothing before the first complete list).
    pub fn rediagnose(&mut self, i: Inputs) -> Replaced {
        self.snap.taken_at?;
        let found = self.diagnosis.all(&self.snap, &self.lineage, &self.index, i.diagnose, i.now);
        Some(self.take_findings(found, i))
    }

    /// Redoes the findings about the PVs `pvs` (and the global rules), keeping the others.
    fn rediagnose_scoped(&mut self, pvs: &BTreeSet<String>, i: Inputs) -> Replaced {
        if self.diagnosed_at.is_none() {
            return self.rediagnose(i);
        }
        let found = self.diagnosis.scoped(&self.snap, &self.lineage, &self.index, i.diagnose, i.now, pvs);
        Some(self.take_findings(found, i))
    }

    /// On a clock tick: redoes what the clock can have changed ([`Diagnosis::due`]).
    pub fn rediagnose_due(&mut self, i: Inputs) -> Replaced {
        match self.diagnosis.due(i.now) {
            Due::All => self.rediagnose(i),
            Due::Volumes(pvs) => self.rediagnose_scoped(&pvs, i),
            Due::Nothing => {
                self.diagnosed_at = Some(i.now);
                None
            }
        }
    }

    /// Takes new findings, their flags and rows; returns the findings they replace.
    fn take_findings(&mut self, found: Vec<Finding>, i: Inputs) -> Vec<Finding> {
        let before = std::mem::replace(&mut self.findings, found);
        self.flagged = Flagged::of(&self.findings);
        self.diagnosed_at = Some(i.now);
        self.rows.findings = rows::finding_rows(&self.findings, i.findings_filter);
        before
    }
}
