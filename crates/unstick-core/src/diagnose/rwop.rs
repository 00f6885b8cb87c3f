//! `rwop-claim-in-use` (issue 24): a pod of a Ceph volume's ReadWriteOncePod claim left
//! unscheduled because another pod uses the claim. kube-scheduler's VolumeRestrictions plugin
//! says so in a `FailedScheduling` event (`… node has pod using PersistentVolumeClaim with the same
//! name and ReadWriteOncePod access mode`, kubernetes/kubernetes
//! `pkg/scheduler/framework/plugins/volumerestrictions`, reworded by kubernetes/kubernetes#129145
//! to `… ReadWriteOncePod access mode is already in-use by another pod`; both name the mode). The
//! pod has no node, so [`super::stuck`]'s per-node rules never see it. Read-only guidance: the
//! holder is a healthy pod, never to be force-deleted or fenced.

use super::causes::explanation;
use super::ctx::Ctx;
use super::events::EventView;
use super::finding::{Builder, Evidence, EvidenceSource, Finding, ObjectRef, PatternId, Severity};
use super::stuck_parts::lineage_evidence;
use crate::lineage::VolumeLineage;
use crate::model::kube::{PodState, pod_node, pod_state};

/// True for the scheduler's ReadWriteOncePod conflict.
fn is_rwop_conflict(e: &EventView) -> bool {
    e.reason() == "FailedScheduling" && e.has("ReadWriteOncePod access mode")
}

/// One finding per unscheduled pod of `vol` with a recent ReadWriteOncePod conflict, naming the
/// pods that hold the claim.
pub(crate) fn findings(ctx: &Ctx<'_>, vol: &VolumeLineage) -> Vec<Finding> {
    let mut out = vec![];
    for (key, pod) in ctx.pods_of(vol) {
        if pod_node(pod).is_some() || matches!(pod_state(pod), PodState::Terminating { .. }) {
            continue;
        }
        let newest = ctx.recent_events("Pod", key).filter(|e| is_rwop_conflict(e)).max_by_key(|e| e.last);
        let Some(e) = newest else { continue };
        let holders: Vec<(&str, &crate::model::objects::Pod)> =
            ctx.pods_of(vol).filter(|(k, p)| *k != key && pod_node(p).is_some()).collect();
        let names: Vec<String> =
            holders.iter().map(|(k, p)| format!("{k} on node {}", pod_node(p).unwrap_or("?"))).collect();
        let held = if names.is_empty() {
            "another pod (not in the snapshot) holds it".to_string()
        } else {
            format!("held by {}", names.join(", "))
        };
        let claim = vol.pvc.as_deref().unwrap_or(&vol.pv);
        let summary = format!("{key} is unscheduled: its ReadWriteOncePod claim {claim} is in use ({held})");
        let modes = Evidence::new(
            EvidenceSource::PersistentVolume,
            format!("{} access modes {}", vol.pv, vol.access_modes.join(",")),
            ctx.seen,
        );
        let mut b = Builder::new(PatternId::RwopClaimInUse, Severity::Critical, &format!("{key}#{}", vol.pv), summary)
            .since(e.first.or(e.last))
            .volume(Some(&vol.pv))
            .explanation(explanation(PatternId::RwopClaimInUse, false))
            .object(ObjectRef::pod(key))
            .evidence(ctx.pod_evidence(key, pod))
            .evidence(ctx.event_evidence(e))
            .evidence(modes)
            .evidence(lineage_evidence(ctx, vol));
        for (k, p) in &holders {
            b = b.object(ObjectRef::pod(k)).evidence(ctx.pod_evidence(k, p));
        }
        b = b.objects(vol.pvc.as_deref().map(ObjectRef::pvc)).object(ObjectRef::pv(&vol.pv));
        out.push(b.build());
    }
    out
}
