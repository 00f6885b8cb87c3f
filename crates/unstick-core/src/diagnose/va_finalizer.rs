//! `va-finalizer-stuck`: a VolumeAttachment being deleted whose finalizer
//! (`external-attacher/<driver>`) is never cleared because its node is gone or lost, so the CSI
//! detach can never be confirmed.
//!
//! Proof: `deletionTimestamp` set for at least `va_deleting_grace_seconds`, finalizers present, and
//! the node missing or NotReady past `node_lost_grace_seconds`; the image's watchers are shown
//! because the playbook may only remove the finalizer once the image has none. Healthy look-alike:
//! a VA being deleted normally (young, or its node Ready).

use jiff::Timestamp;

use super::ctx::Ctx;
use super::events::is_attachment_being_deleted;
use super::finding::{Builder, Evidence, EvidenceSource, Finding, ObjectRef, PatternId, Severity};
use super::index::Index;
use crate::config::DiagnoseConfig;
use crate::lineage::Lineage;
use crate::model::Snapshot;
use crate::text::human_age;

const EXPLANATION: &str = "Deleting a VolumeAttachment asks the CSI external-attacher to detach the \
volume (ControllerUnpublish) and remove its finalizer when that succeeds. For RBD the detach is \
confirmed through the node: while the node is gone, the finalizer stays and the VolumeAttachment \
hangs in deletion, which keeps the volume counted as attached to the lost node. Removing the \
finalizer by hand is safe only once nothing on that node can still write: check that the image has \
no watcher (or blocklist it) first.";

/// Finds VolumeAttachments stuck in deletion. See the module doc for the evidence required.
pub fn va_finalizer_stuck(snap: &Snapshot, lin: &Lineage, cfg: &DiagnoseConfig, now: Timestamp) -> Vec<Finding> {
    check(&Ctx::new(snap, lin, &Index::build(snap), cfg, now))
}

pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = vec![];
    for va in ctx.idx.deleting_vas() {
        let Some(deleted) = va.metadata.deletion_timestamp.as_ref().map(|t| t.0) else { continue };
        let finalizers = va.metadata.finalizers.clone().unwrap_or_default();
        if finalizers.is_empty() || ctx.age(deleted) < ctx.cfg.va_deleting_grace_seconds {
            continue;
        }
        let node = va.spec.node_name.as_str();
        if !ctx.is_down(node) {
            continue;
        }
        let name = va.metadata.name.as_deref().unwrap_or("");
        let pv = va.spec.source.persistent_volume_name.as_deref();
        let vol = pv.and_then(|p| ctx.lin.by_pv(p));
        let blocked: Vec<_> = vol
            .map(|v| {
                ctx.pods_of(v)
                    .filter(|(_, p)| !Ctx::on_node(p, node))
                    .filter_map(|(k, p)| Some((k, p, ctx.blocked_since(p)?)))
                    .collect()
            })
            .unwrap_or_default();
        let severity = if blocked.is_empty() { Severity::Warning } else { Severity::Critical };
        let summary = format!(
            "VolumeAttachment {name} ({} on node {node}) has been deleting for {}: finalizer {} is never removed while the node is down",
            pv.unwrap_or("?"),
            human_age(ctx.age(deleted)),
            finalizers.join(", ")
        );
        let mut b = Builder::new(PatternId::VaFinalizerStuck, severity, name, summary)
            .since(Some(deleted))
            .volume(pv)
            .node(Some(node))
            .explanation(EXPLANATION)
            .object(ObjectRef::va(name))
            .object(ObjectRef::node(node))
            .evidence(Evidence::new(
                EvidenceSource::VolumeAttachment,
                format!(
                    "VolumeAttachment {name}: deletionTimestamp {deleted}, finalizers [{}], attached={}",
                    finalizers.join(", "),
                    va.status.as_ref().is_some_and(|s| s.attached)
                ),
                ctx.seen,
            ))
            .evidence(ctx.node_evidence(node));
        for (k, p, since) in &blocked {
            b = b.object(ObjectRef::pod(k)).evidence(ctx.pod_evidence(k, p)).since(Some(*since));
        }
        // kubelet's side of it: pods of the volume whose mount waits on the dying attachment.
        if let Some(v) = vol {
            for (k, _) in ctx.pods_of(v) {
                for e in ctx.recent_events("Pod", k).filter(|e| is_attachment_being_deleted(e)) {
                    b = b.object(ObjectRef::pod(k)).evidence(ctx.event_evidence(e));
                }
            }
        }
        if let Some(v) = vol {
            b = b.objects(v.pvc.as_deref().map(ObjectRef::pvc)).object(ObjectRef::pv(&v.pv));
            if let Some(img) = &v.image {
                b = b.object(ObjectRef::image(img));
                let text = match ctx.snap.ceph.images.get(img).map(|f| (&f.watchers.value, f.watchers.at)) {
                    Some((Ok(ws), _)) if ws.is_empty() => Some((format!("{img}: no watchers"), None)),
                    Some((Ok(ws), at)) => Some((
                        format!(
                            "{img}: {} watcher(s) still open: {}",
                            ws.len(),
                            ws.iter().map(|w| w.address.as_str()).collect::<Vec<_>>().join(", ")
                        ),
                        Some(at),
                    )),
                    Some((Err(e), _)) => Some((format!("{img}: watchers unknown: {e}"), None)),
                    None => None,
                };
                if let Some((text, at)) = text {
                    let at = at.or_else(|| ctx.snap.ceph.images.get(img).map(|f| f.watchers.at)).unwrap_or(ctx.seen);
                    b = b.evidence(Evidence::new(EvidenceSource::RbdStatus, text, at));
                }
            }
        }
        out.push(b.build());
    }
    out
}
