//! Diagnosis: one pure function per failure pattern of `DESIGN.md`, each
//! `fn(&Snapshot, &Lineage, &DiagnoseConfig, now) -> Vec<Finding>`, and [`run`] for all of them.
//!
//! Every rule states in its module doc the evidence it requires and the healthy look-alikes it
//! must not report. Thresholds come from `[diagnose]` in the config. `now` is the diagnosis clock:
//! the wall clock live, the collection time for a support bundle.

mod blocklist;
mod causes;
mod ctx;
pub mod event_index;
pub mod events;
mod finding;
mod in_tree_gone;
mod index;
mod multi_attach;
pub mod render;
mod restage;
mod rwop;
mod scoped;
mod stale_lock;
mod stuck;
mod stuck_parts;
mod unexplained;
mod unmap_busy;
mod va_finalizer;
mod watchers;

use std::collections::{BTreeMap, HashSet};

use jiff::Timestamp;
use serde::Serialize;

pub use self::blocklist::blocklist_leftover;
#[cfg(test)]
use self::ctx::Ctx;
pub use self::finding::{
    Evidence, EvidenceSource, Finding, NO_PLAYBOOK, ObjectKind, ObjectRef, PatternId, Severity, UnverifiedRead,
};
pub use self::index::{Index, Touched};
pub use self::multi_attach::multi_attach_node_lost;
pub use self::restage::same_node_restage;
pub use self::scoped::{Diagnosis, Due};
pub use self::stale_lock::stale_lock;
pub use self::unmap_busy::unmap_busy;
pub use self::va_finalizer::va_finalizer_stuck;
pub use self::watchers::{dead_node_watcher, live_node_stale_map};
use crate::config::DiagnoseConfig;
use crate::lineage::Lineage;
use crate::model::{CephFacts, CephRead, ImageRef, Snapshot};
use crate::probe::ProbeReport;

/// A rule over the shared context.
#[cfg(test)]
fn rule(p: PatternId) -> fn(&Ctx<'_>) -> Vec<Finding> {
    match p {
        PatternId::StaleLock => stale_lock::check,
        PatternId::MultiAttachNodeLost => multi_attach::check,
        PatternId::DeadNodeWatcher => |c| watchers::check(c, PatternId::DeadNodeWatcher),
        PatternId::LiveNodeStaleMap => |c| watchers::check(c, PatternId::LiveNodeStaleMap),
        PatternId::UnmapBusy => unmap_busy::check,
        PatternId::SameNodeRestage => restage::check,
        PatternId::VaFinalizerStuck => va_finalizer::check,
        PatternId::BlocklistLeftover => blocklist::check,
        _ => |c| c.lin.volumes.iter().flat_map(|v| stuck::volume(c, v)).collect(),
    }
}

/// Runs every rule and returns the findings sorted by severity (critical first), then age (the
/// oldest problem first; findings without a start time last), then id.
///
/// One more specific pattern hides a vaguer one about the same volume and node: an `unmap-busy`
/// finding hides `live-node-stale-map` and `same-node-restage` for that PV on that node (the
/// busy device is their cause). A finding of the eight `DESIGN.md` patterns about a volume or a
/// pod hides the stuck-pod findings (named causes and `unexplained`) about that volume or pod,
/// except `in-tree-rbd-unsupported` about a pod waiting to start: it stays, and every other finding
/// about its volume gets an evidence line saying its playbook alone will not make the pod run (on
/// 1.31+ nothing but a move to ceph-csi does; a stale in-tree lock's removal included).
///
/// Indexes `snap` first; the console keeps an [`Index`] and a [`Diagnosis`] between changes
/// instead, and redoes only what a change touches.
pub fn run(snap: &Snapshot, lin: &Lineage, cfg: &DiagnoseConfig, now: Timestamp) -> Vec<Finding> {
    Diagnosis::default().all(snap, lin, &Index::build(snap), cfg, now)
}

/// The rules' findings (the global rules' first) made into [`run`]'s answer: duplicates and the
/// hidden ones dropped, unverified Ceph reads marked, automatic remediation on a finding's node
/// said ([`remediating`]), sorted.
fn post(mut all: Vec<Finding>, snap: &crate::model::Snapshot, seen: Timestamp) -> Vec<Finding> {
    let ceph = &snap.ceph;
    // one finding per id, the first: the global rules' come first, so an unmap-busy proven by
    // events replaces its eventless twin (a per-volume rule's)
    let mut ids = HashSet::new();
    all.retain(|f| ids.insert(f.id.clone()));
    let busy: HashSet<(Option<String>, Option<String>)> =
        all.iter().filter(|f| f.pattern == PatternId::UnmapBusy).map(|f| (f.volume.clone(), f.node.clone())).collect();
    all.retain(|f| {
        !(matches!(f.pattern, PatternId::LiveNodeStaleMap | PatternId::SameNodeRestage)
            && busy.contains(&(f.volume.clone(), f.node.clone())))
    });
    // An in-tree RBD PV on 1.31+ can never mount: for a pod waiting to start that answer stands
    // beside any other pattern about the volume, whose playbook alone will not make the pod run.
    // A Terminating pod's teardown is its kubelet's, which may be older and still have the plugin
    // (version skew): there the other patterns hide it as usual.
    let gone: HashSet<String> = all
        .iter()
        .filter(|f| f.pattern == PatternId::InTreeRbdUnsupported && !involves_terminating_pod(f, snap))
        .filter_map(|f| f.volume.clone())
        .collect();
    for f in all.iter_mut().filter(|f| f.pattern != PatternId::InTreeRbdUnsupported) {
        if f.volume.as_ref().is_some_and(|v| gone.contains(v)) {
            let text = "in-tree-rbd-unsupported on this volume too: on this release nothing mounts an in-tree \
RBD PV, so this finding's playbook alone will not make the pod run";
            f.evidence.push(Evidence::new(EvidenceSource::ServerVersion, text, seen));
        }
    }
    let known: Vec<&Finding> = all.iter().filter(|f| !f.pattern.is_stuck_cause()).collect();
    let covered: HashSet<String> = all
        .iter()
        .filter(|f| f.pattern.is_stuck_cause())
        .filter(|f| {
            !(f.pattern == PatternId::InTreeRbdUnsupported && f.volume.as_ref().is_some_and(|v| gone.contains(v)))
        })
        .filter(|f| {
            let pods = f.objects.iter().filter(|o| o.kind == ObjectKind::Pod);
            known.iter().any(|k| (k.volume.is_some() && k.volume == f.volume) || pods.clone().any(|p| k.involves(p)))
        })
        .map(|f| f.id.clone())
        .collect();
    all.retain(|f| !covered.contains(&f.id));
    for f in &mut all {
        mark_unverified(f, ceph);
        remediating(f, snap, seen);
    }
    sort(&mut all);
    all
}

/// Whether one of `f`'s pods is being deleted in `snap` (`metadata.deletionTimestamp` set).
fn involves_terminating_pod(f: &Finding, snap: &crate::model::Snapshot) -> bool {
    f.objects.iter().filter(|o| o.kind == ObjectKind::Pod).any(|o| {
        snap.pods.iter().any(|p| {
            p.metadata.name.as_deref() == Some(o.name.as_str())
                && p.metadata.namespace == o.namespace
                && p.metadata.deletion_timestamp.is_some()
        })
    })
}

/// Adds to `f` one [`EvidenceSource::Remediator`] line when a Medik8s remediator acts on its node
/// ([`crate::model::remediation::acting_on`]): acting on that node races it.
fn remediating(f: &mut Finding, snap: &crate::model::Snapshot, seen: Timestamp) {
    let Some(name) = f.node.as_deref() else { return };
    let Some(node) = snap.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(name)) else { return };
    let signs = crate::model::remediation::acting_on(snap.remediators.as_ref(), node);
    if !signs.is_empty() {
        let text = crate::model::remediation::describe(name, &signs) + "; acting on the node races it";
        f.evidence.push(Evidence::new(EvidenceSource::Remediator, text, seen));
    }
}

/// Lists in `f.unverified` the Ceph reads it rests on that could not be repeated: the watchers
/// and locks of each image it involves, and the blocklist when its evidence comes from Ceph (a
/// blocklist entry hides a watcher, so a stale blocklist changes what watchers prove).
fn mark_unverified(f: &mut Finding, ceph: &CephFacts) {
    if ceph.unverified.is_empty() {
        return;
    }
    let mut reads: Vec<CephRead> = f
        .objects
        .iter()
        .filter(|o| o.kind == ObjectKind::RbdImage)
        .filter_map(|o| {
            let image = ImageRef {
                pool: o.pool.clone()?,
                namespace: o.namespace.clone().unwrap_or_default(),
                image: o.name.clone(),
            };
            Some([CephRead::Watchers(image.clone()), CephRead::Locks(image)])
        })
        .flatten()
        .collect();
    let from_ceph = f
        .evidence
        .iter()
        .any(|e| matches!(e.source, EvidenceSource::RbdStatus | EvidenceSource::RbdLockLs | EvidenceSource::Blocklist));
    if from_ceph {
        reads.push(CephRead::Blocklist);
    }
    for r in reads {
        if let Some(u) = ceph.unverified.get(&r) {
            f.unverified.push(UnverifiedRead {
                read: crate::text::sanitize(&r.to_string()),
                since: u.since,
                error: crate::text::sanitize(&u.error.to_string()),
            });
        }
    }
}

/// Sorts findings as [`run`] returns them.
pub fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then_with(|| match (a.since, b.since) {
                (Some(x), Some(y)) => x.cmp(&y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            })
            .then_with(|| a.id.cmp(&b.id))
    });
}

/// Adds `unstick probe` results (node name → report) as evidence to the `unmap-busy` findings of
/// those nodes: each process outside the host mount namespace that mounts the device, or a line
/// saying the probe found none.
pub fn add_probe_evidence(findings: &mut [Finding], probes: &BTreeMap<String, ProbeReport>) {
    for f in findings.iter_mut().filter(|f| f.pattern == PatternId::UnmapBusy) {
        let Some(node) = &f.node else { continue };
        let Some(report) = probes.get(node) else { continue };
        let device = f.device.clone();
        let mut added = 0;
        let mut first = None;
        for h in report.holders.iter().filter(|h| !h.host_namespace) {
            if device
                .as_deref()
                .is_some_and(|d| h.source != d && report.device.as_deref() != Some(d.trim_start_matches("/dev/")))
            {
                continue;
            }
            let tid = h.tid.map(|t| format!(" thread {t}")).unwrap_or_default();
            let text = format!(
                "pid {}{tid} ({}) mounts {} at {} in mount namespace {} (not the host's); cgroup {}",
                h.pid, h.comm, h.source, h.mount_point, h.mount_namespace, h.cgroup
            );
            f.evidence.push(Evidence::new(EvidenceSource::Probe, text, report.scanned_at));
            added += 1;
            first = first.or(Some(h));
        }
        if let Some(h) = first {
            let holder = format!(
                "pid {} ({}) mounts it in mount namespace {}, not the host's (probe)",
                h.pid, h.comm, h.mount_namespace
            );
            f.summary = crate::text::sanitize(&f.summary.replace(unmap_busy::HOLDER_UNKNOWN, &holder));
        }
        if added == 0 {
            let text = format!(
                "probe on node {node} found no mount of {} outside the host mount namespace",
                device.as_deref().unwrap_or("the device")
            );
            f.evidence.push(Evidence::new(EvidenceSource::Probe, text, report.scanned_at));
        }
    }
}

/// The whole output of `unstick diagnose` (the JSON document of `--output json`).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Findings, sorted as [`run`] returns them.
    pub findings: Vec<Finding>,
    /// Inputs that were missing or unreadable (bundle files, Ceph reads that failed, kinds that
    /// could not be listed): what the findings could not take into account.
    pub missing: Vec<String>,
    /// Live runs: what the rules need that could not be read (`pods (403 Forbidden)`, `ceph`):
    /// the findings are only what could be proven without it, and `diagnose` exits 3. Absent
    /// from JSON when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub incomplete: Vec<String>,
    /// The diagnosis clock (RFC 3339).
    pub generated_at: Timestamp,
    /// `live <context>` or `bundle <dir>`.
    pub input: String,
}

#[cfg(test)]
mod attribution_tests;
#[cfg(test)]
mod fence_tests;
#[cfg(test)]
mod in_tree_gone_tests;
#[cfg(test)]
mod stuck_tests;
#[cfg(test)]
pub(crate) mod tests;
