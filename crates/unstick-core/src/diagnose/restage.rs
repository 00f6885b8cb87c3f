//! `same-node-restage` (seed 004): a pod recreated on the same node (a StatefulSet pod keeps its
//! name and often its node) while the old pod's unmount / unstage / detach is still in flight; the
//! controllers' desired and actual states of world disagree for a while.
//!
//! Proof: a pod waiting past `creating_grace_seconds` on node N whose volume is attached / in use
//! on N itself (not on another node: that is multi-attach), plus a predecessor on N: another pod
//! of the claim Terminating on N, or a recent event for an earlier pod of the same name (a
//! different `involvedObject.uid`, e.g. `Killing`: deleted within `event_max_age_seconds`) whose
//! reporting kubelet (`source.host`), when the event names one, is N's. A driver's `an operation
//! with the given Volume ID ... already exists` is quoted as evidence with a predecessor, but alone
//! proves nothing (a driver hanging on unreachable monitors says the same, issue 24): such a pod
//! is left to `stuck.rs` (`unexplained` or a named cause).
//! Severity warning: it usually settles by itself; act only after the timeout.

use jiff::Timestamp;

use super::ctx::Ctx;
use super::events::is_operation_pending;
use super::finding::{Builder, Evidence, EvidenceSource, Finding, ObjectRef, PatternId, Severity};
use super::index::Index;
use crate::config::DiagnoseConfig;
use crate::lineage::{Lineage, VolumeLineage};
use crate::model::Snapshot;
use crate::model::kube::{PodState, pod_node, pod_state};

const EXPLANATION: &str = "A volume goes provision -> attach -> mount on the way in and umount -> \
detach on the way out, and three controllers own those steps: the PV controller, the attach-detach \
controller (node.status.volumesAttached, VolumeAttachment) and kubelet's volume manager \
(node.status.volumesInUse, the global and per-pod mounts). Each keeps a desired and an actual state \
of world and reconciles them in a loop. When a pod is deleted and recreated on the same node right \
away (a StatefulSet pod keeps its name), the new pod's mount can race the old pod's unmount or \
detach: the caches disagree for a while, and the driver refuses overlapping operations on one \
volume (\"an operation with the given Volume ID ... already exists\"). Usually this settles within \
minutes; if it does not, check the node's volumesInUse and mounts before acting.";

/// Finds pods stuck behind their own predecessor's teardown. See the module doc.
pub fn same_node_restage(snap: &Snapshot, lin: &Lineage, cfg: &DiagnoseConfig, now: Timestamp) -> Vec<Finding> {
    check(&Ctx::new(snap, lin, &Index::build(snap), cfg, now))
}

pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    ctx.lin.volumes.iter().flat_map(|v| volume(ctx, v)).collect()
}

/// The findings about the pods of one volume.
pub(crate) fn volume(ctx: &Ctx<'_>, vol: &VolumeLineage) -> Vec<Finding> {
    let mut out = vec![];
    for (key, pod) in ctx.pods_of(vol) {
        let Some(since) = ctx.blocked_since(pod) else { continue };
        let Some(node) = pod_node(pod) else { continue };
        let uid = pod.metadata.uid.as_deref();
        {
            let here = vol.attachments.iter().any(|a| a.node == node && a.attached)
                || vol.attached_on.iter().any(|n| n == node)
                || vol.in_use_on.iter().any(|n| n == node);
            let elsewhere = vol.attachments.iter().any(|a| a.node != node && !a.deleting)
                || vol.attached_on.iter().any(|n| n != node);
            if !here || elsewhere {
                continue;
            }
            let old_pods: Vec<_> = ctx
                .pods_of(vol)
                .filter(|(k, p)| {
                    *k != key && Ctx::on_node(p, node) && matches!(pod_state(p), PodState::Terminating { .. })
                })
                .collect();
            let events: Vec<_> = ctx.recent_events("Pod", key).collect();
            let predecessor: Vec<_> = events
                .iter()
                .filter(|e| matches!((e.uid(), uid), (Some(a), Some(b)) if a != b))
                .filter(|e| e.host().is_none_or(|h| h == node))
                .collect();
            let pending: Vec<_> = events
                .iter()
                .filter(|e| {
                    is_operation_pending(e)
                        && vol
                            .volume_handle
                            .as_deref()
                            .is_none_or(|h| e.message().contains(h) || e.message().contains(&vol.pv))
                })
                .collect();
            if old_pods.is_empty() && predecessor.is_empty() {
                continue;
            }
            let why = match old_pods.first() {
                Some((k, _)) => format!("old pod {k} is still Terminating there"),
                None => "an earlier pod of the same name was stopped there within the event window".to_string(),
            };
            let summary = format!(
                "{key} waits on node {node} for {}, which is still being torn down on that same node: {why}",
                vol.pv
            );
            let mut b =
                Builder::new(PatternId::SameNodeRestage, Severity::Warning, &format!("{key}#{}", vol.pv), summary)
                    .since(Some(since))
                    .volume(Some(&vol.pv))
                    .node(Some(node))
                    .explanation(EXPLANATION)
                    .object(ObjectRef::pod(key))
                    .evidence(ctx.pod_evidence(key, pod));
            for (k, p) in &old_pods {
                b = b.object(ObjectRef::pod(k)).evidence(ctx.pod_evidence(k, p));
            }
            for e in predecessor.iter().chain(pending.iter()) {
                b = b.evidence(ctx.event_evidence(e));
            }
            for a in vol.attachments.iter().filter(|a| a.node == node) {
                let text = format!("VolumeAttachment {} of {} to node {node}: attached={}", a.name, vol.pv, a.attached);
                b = b.object(ObjectRef::va(&a.name)).evidence(Evidence::new(
                    EvidenceSource::VolumeAttachment,
                    text,
                    ctx.seen,
                ));
            }
            if vol.in_use_on.iter().any(|n| n == node) {
                let text =
                    format!("node {node} status.volumesInUse lists {}", vol.unique_name.as_deref().unwrap_or(&vol.pv));
                b = b.evidence(Evidence::new(EvidenceSource::NodeStatus, text, ctx.seen));
            }
            b = b
                .object(ObjectRef::node(node))
                .objects(vol.pvc.as_deref().map(ObjectRef::pvc))
                .object(ObjectRef::pv(&vol.pv));
            if let Some(img) = &vol.image {
                b = b.object(ObjectRef::image(img));
            }
            out.push(b.build());
        }
    }
    out
}
