//! Never silent (issue 24): every pod stuck on a Ceph volume gets a finding, of a named cause
//! when its events or its volume's attachments name one, else `unexplained`.
//!
//! A pod of a Ceph volume (RBD or CephFS, CSI or in-tree) is stuck when it is
//! - waiting for its volumes (`ContainerCreating`, or `Pending` with no container status) past
//!   `creating_grace_seconds`;
//! - Terminating past `terminating_grace_seconds` after its deletion time; or
//! - not Running and the subject of a recent `FailedMount`, `FailedAttachVolume`,
//!   `FailedMapVolume`, `FailedUnMount`, `FailedDetachVolume`, `VolumeResizeFailed` or
//!   `FileSystemResizeFailed` event that names this volume (or names none).
//!
//! A claim with a recent resize failure event is stuck too (`resize-stuck`), whether or not a pod
//! waits. The cause is the one the newest recent failure event names in its own words
//! ([`super::causes::cause_of`]; in CephFS terms for a CephFS volume, and a `not registered`
//! event older than the node plugin pod's restart on that node naming nothing); else an attach
//! or detach error on the volume's
//! VolumeAttachment to the pod's node; else, for a `Multi-Attach error`, the claim used by a
//! running pod on another Ready node (`rwo-claim-shared`); else `unexplained`. A finding of one
//! of the eight `DESIGN.md` patterns about the same volume or pod hides these ([`super::post`]).
//!
//! Per volume: it reads the volume's lineage, its pods and their events, its claim's events, its
//! VolumeAttachments, the image's Ceph facts, the blocklist, and the health and addresses of the
//! nodes the pods run on (which [`super::Diagnosis::node_scope`] adds for these findings).

use super::causes::{cause_of, explanation, for_volume, is_multi, is_pod_volume_failure, is_resize_failure};
use super::ctx::{Ctx, Health};
use super::events::EventView;
use super::finding::{Builder, Evidence, EvidenceSource, Finding, ObjectRef, PatternId, Severity};
use super::in_tree_gone;
use super::stuck_parts::{How, lineage_evidence, state_words, volume_objects};
use super::unexplained;
use crate::lineage::{VolumeLineage, is_cephfs_driver};
use crate::model::kube::{PodState, is_node_plugin, pod_node, pod_state};
use crate::model::objects::Pod;

/// True for the volumes the console is about: RBD or CephFS, through ceph-csi (any driver name
/// ending as ceph-csi's, Rook's `<ns>.rbd.csi.ceph.com` included), in-tree (`kubernetes.io/rbd`, and
/// `cephfs` as the lineage names an in-tree CephFS source), or Rook's flex driver.
pub(crate) fn is_ceph(vol: &VolumeLineage) -> bool {
    let d = vol.driver.as_str();
    vol.image.is_some()
        || d.ends_with("rbd.csi.ceph.com")
        || d.ends_with("cephfs.csi.ceph.com")
        || d.ends_with("nfs.csi.ceph.com")
        || d == "kubernetes.io/rbd"
        || d == "cephfs"
        || d.starts_with("ceph.rook.io")
}

/// The recent volume failure events about pod `key` that concern `vol` (naming it, or no
/// volume), newest first.
fn failures<'a>(ctx: &Ctx<'a>, key: &str, vol: &VolumeLineage) -> Vec<&'a EventView> {
    let mut v: Vec<&EventView> = ctx
        .recent_events("Pod", key)
        .filter(|e| is_pod_volume_failure(e))
        .filter(|e| e.volume_name().is_none_or(|n| n == vol.pv || vol.pvc.as_deref().is_some_and(|c| c.ends_with(&*n))))
        .collect();
    v.sort_by(|a, b| b.last.cmp(&a.last).then_with(|| a.line().cmp(&b.line())));
    v
}

/// The recent resize failure events on `vol`'s claim, newest first.
fn claim_failures<'a>(ctx: &Ctx<'a>, vol: &VolumeLineage) -> Vec<&'a EventView> {
    let Some(pvc) = vol.pvc.as_deref() else { return vec![] };
    let mut v: Vec<&EventView> =
        ctx.recent_events("PersistentVolumeClaim", pvc).filter(|e| is_resize_failure(e)).collect();
    v.sort_by(|a, b| b.last.cmp(&a.last).then_with(|| a.line().cmp(&b.line())));
    v
}

fn how_stuck(ctx: &Ctx<'_>, pod: &Pod, events: &[&EventView]) -> Option<How> {
    if let Some(t) = ctx.blocked_since(pod) {
        return Some(How::Waiting(t));
    }
    if let PodState::Terminating { since } = pod_state(pod)
        && ctx.terminating_overdue(pod)
    {
        return Some(How::Terminating(since));
    }
    let running = matches!(pod_state(pod), PodState::Phase(p) if p == "Running" || p == "Succeeded");
    let first = events.iter().filter_map(|e| e.first.or(e.last)).min();
    match first {
        Some(t) if !running && pod_node(pod).is_some() => Some(How::Failing(t)),
        _ => None,
    }
}

/// The findings about `vol`'s stuck pods and claim.
pub(crate) fn volume(ctx: &Ctx<'_>, vol: &VolumeLineage) -> Vec<Finding> {
    if !is_ceph(vol) {
        return vec![];
    }
    let claim = claim_failures(ctx, vol);
    let mut out = vec![];
    for (key, pod) in ctx.pods_of(vol) {
        let events = failures(ctx, key, vol);
        let Some(node) = pod_node(pod) else { continue };
        // an in-tree RBD volume on 1.31+ can never mount: stuck from the start, whatever the events
        let gone = in_tree_gone::evidence(ctx, vol, node);
        let how = how_stuck(ctx, pod, &events).or_else(|| gone.as_ref().and_then(|_| in_tree_gone::waiting(pod)));
        let Some(how) = how else { continue };
        let mut all: Vec<&EventView> = events.iter().chain(&claim).copied().collect();
        all.sort_by(|a, b| b.last.cmp(&a.last).then_with(|| a.line().cmp(&b.line())));
        let cephfs = is_cephfs_driver(&vol.driver);
        let named = all
            .iter()
            .filter(|e| !plugin_restarted_since(ctx, vol, node, e))
            .find_map(|e| Some((for_volume(cause_of(e)?, cephfs)?, *e)));
        if let Some(ev) = gone {
            out.push(named_finding(ctx, vol, key, pod, node, &how, PatternId::InTreeRbdUnsupported, ev).build());
            continue;
        }
        let f = match named {
            Some((p, e)) => named_finding(ctx, vol, key, pod, node, &how, p, vec![ctx.event_evidence(e)]).build(),
            None => match attach_error(ctx, vol, node) {
                Some(ev) => named_finding(ctx, vol, key, pod, node, &how, PatternId::AttachError, ev).build(),
                None => match shared_rwo(ctx, vol, key, node, &events) {
                    // the holder and its node are affected too (they are what the operator stops)
                    Some((ev, holder, on)) => {
                        named_finding(ctx, vol, key, pod, node, &how, PatternId::RwoClaimShared, ev)
                            .object(ObjectRef::pod(holder))
                            .object(ObjectRef::node(on))
                            .build()
                    }
                    None => unexplained::finding(ctx, vol, key, pod, node, &how, &all),
                },
            },
        };
        out.push(f);
    }
    if out.is_empty()
        && let (Some(e), Some(pvc)) = (claim.first(), vol.pvc.as_deref())
    {
        let summary = format!("claim {pvc} cannot be expanded: {}", e.reason());
        let b = Builder::new(PatternId::ResizeStuck, Severity::Warning, &format!("{pvc}#{}", vol.pv), summary)
            .since(e.first)
            .volume(Some(&vol.pv))
            .explanation(explanation(PatternId::ResizeStuck, false))
            .objects([ObjectRef::pvc(pvc), ObjectRef::pv(&vol.pv)])
            .evidence(ctx.event_evidence(e))
            .evidence(lineage_evidence(ctx, vol));
        out.push(b.build());
    }
    out.extend(super::rwop::findings(ctx, vol));
    out
}

#[allow(clippy::too_many_arguments)]
fn named_finding(
    ctx: &Ctx<'_>,
    vol: &VolumeLineage,
    key: &str,
    pod: &Pod,
    node: &str,
    how: &How,
    p: PatternId,
    evidence: Vec<Evidence>,
) -> Builder {
    let cephfs = is_cephfs_driver(&vol.driver);
    let missing = match &vol.subvolume {
        Some(s) => format!("the CephFS subvolume {} the PV names does not exist", s.spec()),
        None => "the RBD image the PV names does not exist".to_string(),
    };
    let what = match p {
        PatternId::CephAuthFailed if cephfs => "the node's CephFS client is refused by cephx (key, caps or secret)",
        PatternId::CephAuthFailed => "the node's Ceph client is refused by cephx (key, caps or secret)",
        PatternId::KernelCannotMap => "the node's kernel cannot map the image",
        PatternId::CephUnreachable if cephfs => "the node cannot reach the Ceph monitors or MDS in time",
        PatternId::CephUnreachable => "the node cannot reach Ceph in time",
        PatternId::FilesystemError => "the volume's filesystem cannot be mounted",
        PatternId::CsiDriverNotRegistered => "the CSI driver is not registered with this node's kubelet",
        PatternId::RwoClaimShared => "the RWO claim is in use by a running pod on another Ready node",
        PatternId::ResizeStuck => "an expansion of the claim failed",
        PatternId::AttachError => "attaching the volume to the node failed",
        PatternId::InTreeRbdUnsupported => "kubelet has no in-tree RBD plugin any more",
        PatternId::ClientBlocklisted => "the node's Ceph client is blocklisted (ESHUTDOWN)",
        PatternId::BackingImageMissing => &missing,
        PatternId::CephfsClientEvicted => {
            "the node's CephFS client was most likely evicted by the MDS (hypothesis: its stale mount refuses access)"
        }
        _ => "",
    };
    let summary = format!("{key} on node {node} is {}, volume {}: {what}", state_words(ctx, how), vol.pv);
    let b = Builder::new(p, Severity::Critical, &format!("{key}#{}", vol.pv), summary)
        .since(Some(how.since()))
        .volume(Some(&vol.pv))
        .node(Some(node))
        .explanation(explanation(p, cephfs))
        .object(ObjectRef::pod(key))
        .evidence(ctx.pod_evidence(key, pod))
        .evidences(evidence)
        .evidence(lineage_evidence(ctx, vol))
        .evidence(ctx.node_evidence(node));
    volume_objects(b, vol, node)
}

/// True for a `not registered` event older than the (re)start of the node plugin pod of `vol`'s
/// driver on `node`: the registration it reports missing may exist now (kubelet reports again if
/// the retried mount still fails), so it names no cause any more.
fn plugin_restarted_since(ctx: &Ctx<'_>, vol: &VolumeLineage, node: &str, e: &EventView) -> bool {
    if cause_of(e) != Some(PatternId::CsiDriverNotRegistered) {
        return false;
    }
    let Some(last) = e.last else { return false };
    ctx.snap.pods.iter().any(|p| {
        pod_node(p) == Some(node)
            && is_node_plugin(p, &vol.driver)
            && p.metadata.creation_timestamp.as_ref().is_some_and(|t| t.0 > last)
    })
}

/// The attach or detach error of `vol`'s VolumeAttachment to `node`, as evidence.
fn attach_error(ctx: &Ctx<'_>, vol: &VolumeLineage, node: &str) -> Option<Vec<Evidence>> {
    let name = &vol.attachments.iter().find(|a| a.node == node)?.name;
    let va = ctx.snap.volume_attachments.iter().find(|v| v.metadata.name.as_deref() == Some(name.as_str()))?;
    let st = va.status.as_ref()?;
    let errs: Vec<Evidence> = [("attachError", &st.attach_error), ("detachError", &st.detach_error)]
        .into_iter()
        .filter_map(|(k, e)| {
            let e = e.as_ref()?;
            let at = e.time.as_ref().map(|t| t.0).unwrap_or(ctx.seen);
            // errorCode: the gRPC code of the CSI call (API 1.33+, alpha: set only with the
            // MutableCSINodeAllocatableCount feature gate)
            let code = e.error_code.map(|c| format!(" (errorCode {c})")).unwrap_or_default();
            let text =
                format!("VolumeAttachment {name} status.{k}: {}{code}", e.message.as_deref().unwrap_or("(no message)"));
            Some(Evidence::new(EvidenceSource::VolumeAttachment, text, at))
        })
        .collect();
    (!errs.is_empty()).then_some(errs)
}

/// A `Multi-Attach error` for `key` while the RWO volume is attached to another Ready node that
/// runs a pod of the claim not being deleted: the evidence, that pod's key and its node.
fn shared_rwo<'a>(
    ctx: &Ctx<'a>,
    vol: &'a VolumeLineage,
    key: &str,
    node: &str,
    events: &[&EventView],
) -> Option<(Vec<Evidence>, &'a str, &'a str)> {
    let multi = events.iter().find(|e| is_multi(e))?;
    if !super::ctx::is_rwo(vol) {
        return None;
    }
    let holders = vol.attachments.iter().map(|a| a.node.as_str()).chain(vol.attached_on.iter().map(String::as_str));
    for other in holders.filter(|n| *n != node) {
        if ctx.health(other) != Health::Ready {
            continue;
        }
        let running = ctx.pods_of(vol).find(|(k, p)| {
            *k != key && Ctx::on_node(p, other) && !matches!(pod_state(p), PodState::Terminating { .. })
        });
        if let Some((k, p)) = running {
            let text = format!("{} access modes {}", vol.pv, vol.access_modes.join(","));
            let ev = vec![
                ctx.event_evidence(multi),
                ctx.pod_evidence(k, p),
                ctx.node_evidence(other),
                Evidence::new(EvidenceSource::PersistentVolume, text, ctx.seen),
            ];
            return Some((ev, k, other));
        }
    }
    None
}
