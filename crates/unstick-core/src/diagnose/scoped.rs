//! The diagnosis kept between changes (issue 13): findings about a volume are redone only when
//! something the rules read of that volume changed, or when the clock reaches an instant at
//! which one of its time thresholds can flip.
//!
//! The rules stay pure functions of a [`Ctx`]; they are cut in two parts:
//! - per volume (`multi-attach-node-lost`, `stale-lock`, the two watcher patterns and unmap-busy's
//!   eventless proof,
//!   `same-node-restage`, and the stuck-pod causes with `unexplained`, `stuck.rs`): each reads one [`VolumeLineage`], its pods, those pods' events, its
//!   image's Ceph facts, the nodes' health and addresses, the blocklist;
//! - global (`unmap-busy` from events, `blocklist-leftover`, `va-finalizer-stuck`, watchers on images no PV
//!   uses): they scan small sets the [`Index`] keeps (unmap-busy and fenced-map events,
//!   VolumeAttachments being deleted, blocklist entries, orphan images) and are redone every time.
//!
//! What the caller must redo after a change: every volume when the blocklist or the Ceph facts
//! changed, or the lineage was rebuilt (a PV added, removed or re-bound); else the volumes whose
//! lineage changed (`Lineage::apply_*`), the volumes of the pods that changed (before and after)
//! and of the pods and claims whose events changed, and for each node whose health or addresses changed its
//! [`Diagnosis::node_scope`].

use std::collections::{BTreeSet, HashMap};

use jiff::{SignedDuration, Timestamp};

use super::ctx::Ctx;
use super::finding::{Finding, PatternId};
use super::index::Index;
use super::{blocklist, multi_attach, restage, stale_lock, stuck, unmap_busy, va_finalizer, watchers};
use crate::config::DiagnoseConfig;
use crate::lineage::{Lineage, VolumeLineage};
use crate::model::Snapshot;

/// What a clock tick has to redo ([`Diagnosis::due`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Due {
    /// Nothing can have changed: no finding's age to refresh, no threshold reached.
    Nothing,
    /// These volumes (PV names), and the global rules.
    Volumes(BTreeSet<String>),
    /// Everything (a node's grace or a blocklist entry's expiry was reached).
    All,
}

/// Findings kept between diagnoses; see the module doc.
#[derive(Debug, Clone, Default)]
pub struct Diagnosis {
    /// PV name → the per-volume rules' findings about it (only non-empty lists).
    by_volume: HashMap<String, Vec<Finding>>,
    /// PV name → the next instant at which a threshold about it can flip (only future ones).
    flips: HashMap<String, Timestamp>,
    /// The next instant a node's grace ends or a blocklist entry expires.
    global_flip: Option<Timestamp>,
    /// The global rules have something to read (their results can change with the clock).
    global_live: bool,
    /// The volumes the Ceph facts tie to nodes ([`Diagnosis::node_scope`]).
    ceph_refs: node_scope::CephRefs,
}

impl Diagnosis {
    /// Runs every rule on every volume.
    pub fn all(
        &mut self,
        snap: &Snapshot,
        lin: &Lineage,
        idx: &Index,
        cfg: &DiagnoseConfig,
        now: Timestamp,
    ) -> Vec<Finding> {
        let ctx = Ctx::new(snap, lin, idx, cfg, now);
        self.by_volume.clear();
        self.flips.clear();
        for vol in &lin.volumes {
            self.redo(&ctx, vol);
        }
        self.ceph_refs = node_scope::CephRefs::build(snap, lin);
        self.finish(&ctx)
    }

    /// Redoes the per-volume rules for the PVs `pvs` (a PV no longer in `lin` loses its
    /// findings) and the global rules; keeps the other volumes' findings.
    pub fn scoped(
        &mut self,
        snap: &Snapshot,
        lin: &Lineage,
        idx: &Index,
        cfg: &DiagnoseConfig,
        now: Timestamp,
        pvs: &BTreeSet<String>,
    ) -> Vec<Finding> {
        let ctx = Ctx::new(snap, lin, idx, cfg, now);
        for pv in pvs {
            self.by_volume.remove(pv);
            self.flips.remove(pv);
            if let Some(vol) = lin.by_pv(pv) {
                self.redo(&ctx, vol);
            }
        }
        self.finish(&ctx)
    }

    /// What the clock reaching `now` makes stale: the volumes with findings (their ages), the
    /// volumes whose next threshold is reached, everything when a node's grace ends.
    pub fn due(&self, now: Timestamp) -> Due {
        if self.global_flip.is_some_and(|t| t <= now) {
            return Due::All;
        }
        let mut pvs: BTreeSet<String> = self.by_volume.keys().cloned().collect();
        pvs.extend(self.flips.iter().filter(|(_, t)| **t <= now).map(|(pv, _)| pv.clone()));
        if pvs.is_empty() && !self.global_live { Due::Nothing } else { Due::Volumes(pvs) }
    }

    /// The volumes with a stuck-pod finding about a pod on node `name` (what its health and
    /// addresses alter, see `node_scope.rs`).
    fn stuck_on<'s>(&'s self, name: &'s str) -> impl Iterator<Item = String> + 's {
        self.by_volume
            .iter()
            .filter(move |(_, fs)| fs.iter().any(|f| f.pattern.is_stuck_cause() && f.node.as_deref() == Some(name)))
            .map(|(pv, _)| pv.clone())
    }

    fn redo(&mut self, ctx: &Ctx<'_>, vol: &VolumeLineage) {
        let mut found: Vec<Finding> = multi_attach::volume(ctx, vol).into_iter().collect();
        found.extend(stale_lock::volume(ctx, vol));
        found.extend(watchers::volume(ctx, vol, PatternId::DeadNodeWatcher));
        let stale = watchers::volume(ctx, vol, PatternId::LiveNodeStaleMap);
        found.extend(unmap_busy::held(ctx, vol, &stale));
        found.extend(stale);
        found.extend(restage::volume(ctx, vol));
        found.extend(stuck::volume(ctx, vol));
        if !found.is_empty() {
            self.by_volume.insert(vol.pv.clone(), found);
        }
        if let Some(t) = volume_flip(ctx, vol) {
            self.flips.insert(vol.pv.clone(), t);
        }
    }

    fn finish(&mut self, ctx: &Ctx<'_>) -> Vec<Finding> {
        self.global_flip = global_flip(ctx);
        let mut all = global(ctx); // first: see `post`
        all.extend(self.by_volume.values().flatten().cloned());
        let ceph = &ctx.snap.ceph;
        self.global_live = ctx.idx.scanned_events().next().is_some()
            || ctx.idx.deleting_vas().next().is_some()
            || ceph.blocklist.as_ref().is_some_and(|b| b.value.as_ref().is_ok_and(|v| !v.is_empty()))
            || !ceph.images.is_empty();
        super::post(all, ctx.snap, ctx.seen)
    }
}

/// The global rules' findings.
fn global(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = unmap_busy::events(ctx);
    out.extend(blocklist::check(ctx));
    out.extend(va_finalizer::check(ctx));
    out.extend(watchers::orphans(ctx, PatternId::DeadNodeWatcher));
    out
}

/// The first instant after `ctx.now` at which `t + secs` (or one second later: the rules compare
/// whole seconds with `>` as well as `>=`) is reached.
fn push(out: &mut Vec<Timestamp>, t: Timestamp, secs: i64) {
    for d in [secs, secs.saturating_add(1)] {
        if let Ok(x) = t.checked_add(SignedDuration::from_secs(d)) {
            out.push(x);
        }
    }
}

/// The next instant after `ctx.now` at which a threshold about `vol` can flip: a pod of it
/// waiting past `creating_grace_seconds`, Terminating past its deletion time or past
/// `terminating_grace_seconds`, an event about such a pod growing older than
/// `event_max_age_seconds`, an event about its claim doing so. (Nodes' grace: [`global_flip`].)
fn volume_flip(ctx: &Ctx<'_>, vol: &VolumeLineage) -> Option<Timestamp> {
    let cfg = ctx.cfg;
    let mut at = vec![];
    for (key, pod) in ctx.pods_of(vol) {
        if let Some(t) = ctx.waiting_since(pod) {
            push(&mut at, t, cfg.creating_grace_seconds);
        }
        if let Some(t) = pod.metadata.deletion_timestamp.as_ref() {
            push(&mut at, t.0, 0);
            push(&mut at, t.0, cfg.terminating_grace_seconds);
        }
        for e in ctx.idx.events_of("Pod", key) {
            if let Some(t) = e.last {
                push(&mut at, t, cfg.event_max_age_seconds);
            }
        }
    }
    for e in vol.pvc.as_deref().into_iter().flat_map(|c| ctx.idx.events_of("PersistentVolumeClaim", c)) {
        if let Some(t) = e.last {
            push(&mut at, t, cfg.event_max_age_seconds);
        }
    }
    at.into_iter().filter(|t| *t > ctx.now).min()
}

/// The next instant after `ctx.now` at which a NotReady node becomes lost or a blocklist entry
/// expires: every volume's findings may change then. Redone with every diagnosis (a node's
/// change redoes only some volumes); the cost is the nodes not Ready and the blocklist.
fn global_flip(ctx: &Ctx<'_>) -> Option<Timestamp> {
    let mut at = vec![];
    for (_, r) in ctx.idx.nodes_not_ready() {
        if let Some(t) = r.since.filter(|_| !r.is_ready()) {
            push(&mut at, t, ctx.cfg.node_lost_grace_seconds);
        }
    }
    if let Some(Ok(entries)) = ctx.snap.ceph.blocklist.as_ref().map(|b| &b.value) {
        at.extend(entries.iter().filter_map(|e| e.until_time()));
    }
    at.into_iter().filter(|t| *t > ctx.now).min()
}

#[path = "node_scope.rs"]
mod node_scope;
