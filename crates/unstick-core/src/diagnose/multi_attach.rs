//! `multi-attach-node-lost` (seeds 001, 002): an RWO volume still attached to a node that is lost
//! (NotReady past `node_lost_grace_seconds`) or gone, while a pod of the claim waits elsewhere.
//!
//! Proof: a VolumeAttachment (CSI) or a `volumesAttached` entry (in-tree) on the lost node, the
//! node's Ready condition, and a pod of the claim on another node that is waiting with a recent
//! `Multi-Attach error` event or past `creating_grace_seconds`. Healthy look-alikes: a Ready node
//! holding its RWO volume for a running pod; RWX/ROX volumes; a node NotReady for a few seconds.

use jiff::Timestamp;

use super::ctx::{Ctx, is_rwo};
use super::events::is_multi_attach;
use super::finding::{Builder, Evidence, EvidenceSource, Finding, ObjectRef, PatternId, Severity};
use super::index::Index;
use crate::config::DiagnoseConfig;
use crate::lineage::{Lineage, VolumeLineage};
use crate::model::Snapshot;

const EXPLANATION: &str = "For a volume whose access modes forbid multi-attach (ReadWriteOnce), the \
attach-detach controller refuses to attach it to a new node while its actual state of world still \
shows it attached to another node, and reports \"Multi-Attach error ... Volume is already used by \
pod(s)\" or \"... exclusively attached to one node\" (from 1.37 the same event reads \"Waiting for detach \
for volume ...\"). When that node is powered off or unreachable, \
nothing ever detaches the volume: its kubelet cannot unmount, the old pod stays Running or \
Terminating in the API, and the replacement pod waits in ContainerCreating. Detaching needs proof \
that the node is really down: the out-of-service taint (on by default from Kubernetes 1.26) or force-deleting the \
old pod and releasing the VolumeAttachment, after making sure the old node can no longer write.";

/// Finds RWO volumes held by lost nodes. See the module doc for the evidence required.
pub fn multi_attach_node_lost(snap: &Snapshot, lin: &Lineage, cfg: &DiagnoseConfig, now: Timestamp) -> Vec<Finding> {
    check(&Ctx::new(snap, lin, &Index::build(snap), cfg, now))
}

pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    ctx.lin.volumes.iter().filter_map(|v| volume(ctx, v)).collect()
}

/// The finding about one volume, if any.
pub(crate) fn volume(ctx: &Ctx<'_>, vol: &VolumeLineage) -> Option<Finding> {
    {
        if !is_rwo(vol) {
            return None;
        }
        // Nodes the volume is attached to that are down, with the evidence of the attachment.
        let mut lost: Vec<(&str, Evidence, Option<String>)> = vec![];
        for a in vol.attachments.iter().filter(|a| !a.deleting || a.attached) {
            if ctx.is_down(&a.node) {
                let text = format!(
                    "VolumeAttachment {} of {} to node {}: attached={}{}",
                    a.name,
                    vol.pv,
                    a.node,
                    a.attached,
                    if a.deleting { " (being deleted)" } else { "" }
                );
                lost.push((
                    &a.node,
                    Evidence::new(EvidenceSource::VolumeAttachment, text, ctx.seen),
                    Some(a.name.clone()),
                ));
            }
        }
        for n in &vol.attached_on {
            if ctx.is_down(n) && !lost.iter().any(|(l, _, _)| l == n) {
                let text =
                    format!("node {n} status.volumesAttached lists {}", vol.unique_name.as_deref().unwrap_or(&vol.pv));
                lost.push((n, Evidence::new(EvidenceSource::NodeStatus, text, ctx.seen), None));
            }
        }
        if lost.is_empty() {
            return None;
        }
        let on_lost = |p: &crate::model::objects::Pod| lost.iter().any(|(n, _, _)| Ctx::on_node(p, n));
        let mut waiting = vec![];
        for (key, pod) in ctx.pods_of(vol).filter(|(_, p)| !on_lost(p)) {
            if ctx.waiting_since(pod).is_none() {
                continue;
            }
            let events: Vec<_> = ctx.recent_events("Pod", key).filter(|e| is_multi_attach(e)).collect();
            let blocked = ctx.blocked_since(pod);
            if !events.is_empty() || blocked.is_some() {
                waiting.push((key, pod, blocked, events));
            }
        }
        let (first_pod, _, _, _) = waiting.first()?;
        let nodes: Vec<&str> = lost.iter().map(|(n, _, _)| *n).collect();
        let down = match ctx.down_since(nodes[0]) {
            Some(t) => format!("not Ready for {}", crate::text::human_age(ctx.age(t))),
            None => "gone".to_string(),
        };
        let summary = format!(
            "{first_pod} cannot attach {} (ReadWriteOnce): still attached to node {} ({down})",
            vol.pv,
            nodes.join(", ")
        );
        let mut b = Builder::new(PatternId::MultiAttachNodeLost, Severity::Critical, &vol.pv, summary)
            .volume(Some(&vol.pv))
            .node(Some(nodes[0]))
            .explanation(EXPLANATION);
        for (key, pod, blocked, events) in &waiting {
            b = b.object(ObjectRef::pod(key)).evidence(ctx.pod_evidence(key, pod)).since(*blocked);
            for e in events {
                b = b.evidence(ctx.event_evidence(e)).since(e.first);
            }
        }
        Some(finish(ctx, vol, b, &lost))
    }
}

fn finish(ctx: &Ctx<'_>, vol: &VolumeLineage, mut b: Builder, lost: &[(&str, Evidence, Option<String>)]) -> Finding {
    for (n, ev, va) in lost {
        b = b.evidence(ctx.node_evidence(n)).evidence(ev.clone()).object(ObjectRef::node(n));
        if let Some(va) = va {
            b = b.object(ObjectRef::va(va));
        }
        b = b.since(ctx.down_since(n));
        for (k, p) in ctx.pods_of(vol).filter(|(_, p)| Ctx::on_node(p, n)) {
            b = b.object(ObjectRef::pod(k)).evidence(ctx.pod_evidence(k, p));
        }
    }
    b = b.objects(vol.pvc.as_deref().map(ObjectRef::pvc)).object(ObjectRef::pv(&vol.pv));
    b = b.evidence(Evidence::new(
        EvidenceSource::PersistentVolume,
        format!("PV {} accessModes {:?} driver {}", vol.pv, vol.access_modes, vol.driver),
        ctx.seen,
    ));
    if let Some(img) = &vol.image {
        b = b.object(ObjectRef::image(img));
    }
    b.build()
}
