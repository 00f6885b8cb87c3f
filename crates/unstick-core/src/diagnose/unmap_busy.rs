//! `unmap-busy` (seed 003): `rbd unmap` fails with exit status 16 (`Device or resource busy`)
//! because something still holds the device: in seed 003 a process in another mount namespace (a
//! container started with the host's root mounted and `mountPropagation: None`, such as
//! node_exporter). The summary names the holder only when a probe found it.
//!
//! Proof: a recent event whose decoded message says the unmap failed with status 16, reported at
//! least `unmap_busy_min_count` times, naming the volume; and the problem still present: the event's
//! pod still exists, or the volume is still attached / in use on the node. `unstick probe` output
//! from that node, when available, adds the holder's PID (see [`super::add_probe_evidence`]).
//!
//! Without an event (kubelet posts none for a failed UnmountDevice: it only logs it, 1.20 and 1.37
//! alike; `pkg/volume/util/operationexecutor/operation_generator.go` `GenerateUnmountDeviceFunc`,
//! `EventRecorderFunc: nil`): a live-node-stale-map of the volume on a Ready node (its watcher, no
//! pod of the claim there, a pod of the claim blocked elsewhere; see `watchers.rs`), the node still
//! listing the volume in `status.volumesInUse` (kubelet has not finished unmounting and unmapping
//! it), and on that node a DaemonSet pod mounting the host root without mount propagation
//! ([`crate::model::kube::host_root_mounts`]), the holder candidate. Seen on ceph-csi with the
//! current control plane (incident 003-csi): the old pod is gone, the volume stays attached.

use std::collections::BTreeMap;

use jiff::Timestamp;

use super::ctx::Ctx;
use super::events::{EventView, is_unmap_busy};
use super::finding::{Builder, Evidence, EvidenceSource, Finding, ObjectRef, PatternId, Severity};
use super::index::Index;
use crate::config::DiagnoseConfig;
use crate::lineage::{Lineage, VolumeLineage};
use crate::model::Snapshot;
use crate::model::kube::{HostRootMount, host_root_mounts, pod_node};

const EXPLANATION: &str = "Kubelet cannot unmap the RBD device: `rbd unmap` fails with exit status 16 \
(\"rbd: sysfs write failed / unmap failed: (16) Device or resource busy\"): something on the node \
still holds the device open or mounted. The volume does not detach until it lets go, and a pod \
elsewhere cannot attach it. A frequent holder (seed 003), a hypothesis until a read shows it: a \
container that mounted the host's root (e.g. prometheus node_exporter with --path.rootfs=/host) with \
the default mountPropagation None keeps its own copy of every mount that existed when it started, in \
its own mount namespace, so the host's umount never reaches it; lsof on the host then shows only the \
kernel threads (rbdN-task, jbd2/rbdN). With ceph-csi, whose NodeUnstageVolume removes the staging \
directory before `rbd unmap` (Linux 3.18 and later then drop the other namespaces' copies of that \
mount), such a container holds the device only while it has a file of the volume open. Kubelet \
posts no event for a failed unmount or unmap of the device (its log says `UnmountDevice failed`): \
the old pod is deleted, the node keeps the volume in use and attached. Confirm with `unstick probe \
--device rbdN` on the node (or `grep rbdN /proc/*/task/*/mountinfo`): when it names such a holder, \
give that DaemonSet's host mount `mountPropagation: HostToContainer` and restart it (the restart \
also closes its files); kubelet then unmaps by itself. When it names none, look for a process on the \
host with the device open (`fuser -vm /dev/rbdN`).";

/// The end of the summary while no probe has named the holder; [`super::add_probe_evidence`]
/// replaces it with the holder a probe found.
pub(crate) const HOLDER_UNKNOWN: &str = "something on the node still holds it (which: `unstick probe` on the node)";

/// Finds failed unmaps of busy devices. See the module doc for the evidence required.
pub fn unmap_busy(snap: &Snapshot, lin: &Lineage, cfg: &DiagnoseConfig, now: Timestamp) -> Vec<Finding> {
    check(&Ctx::new(snap, lin, &Index::build(snap), cfg, now))
}

/// What the event is about: the PV it names (kubelet's prefix); else the PV of the image ceph-csi's
/// own `unmap for spec (<pool>/<image>)` names, or of the image the node's `rbd showmapped` maps
/// at the event's device (both through the PVs' `volumeAttributes` / in-tree `spec.rbd`); else
/// the device.
fn subject_of(ctx: &Ctx<'_>, e: &EventView, node: &str) -> String {
    if let Some(v) = e.volume_name() {
        return v.to_string();
    }
    let mapped = || {
        let dev = e.device()?;
        ctx.snap.ceph.mapped.get(node)?.iter().find(|m| m.device == *dev).map(|m| m.image.clone())
    };
    let image = e.unmap_spec().or_else(mapped);
    if let Some(v) = image.as_ref().and_then(|i| ctx.lin.by_image(i)) {
        return v.pv.clone();
    }
    e.device().map(String::from).or(image.map(|i| i.spec())).unwrap_or_else(|| "?".into())
}

pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = events(ctx);
    for vol in &ctx.lin.volumes {
        let held = held(ctx, vol, &super::watchers::volume(ctx, vol, PatternId::LiveNodeStaleMap));
        out.extend(held.into_iter().filter(|h| !out.iter().any(|f| f.id == h.id)).collect::<Vec<_>>());
    }
    out
}

/// The findings proven by kubelet's events (an event-based finding wins over the eventless one of
/// the same volume and node: [`super::post`]).
pub(crate) fn events(ctx: &Ctx<'_>) -> Vec<Finding> {
    // (node, volume or device) -> events
    let mut groups: BTreeMap<(String, String), Vec<&EventView>> = BTreeMap::new();
    for e in ctx.idx.scanned_events() {
        if !is_unmap_busy(e) || !ctx.is_recent(e) {
            continue;
        }
        let pod = (e.kind() == "Pod").then(|| ctx.pod(&e.object)).flatten();
        let node = e
            .node_name()
            .map(String::from)
            .or_else(|| e.host().map(str::to_string))
            .or_else(|| pod.and_then(pod_node).map(str::to_string))
            .or_else(|| (e.kind() == "Node").then(|| e.object.clone()));
        let Some(node) = node else { continue };
        let subject = subject_of(ctx, e, &node);
        groups.entry((node, subject)).or_default().push(e);
    }
    let mut out = vec![];
    for ((node, subject), events) in groups {
        let count: i32 = events.iter().map(|e| e.count).sum();
        if count < ctx.cfg.unmap_busy_min_count {
            continue;
        }
        let vol = ctx.lin.by_pv(&subject);
        let pods: Vec<_> = events
            .iter()
            .filter(|e| e.kind() == "Pod")
            .filter_map(|e| Some((e.object.as_str(), ctx.pod(&e.object)?)))
            .collect();
        let still_attached = vol.is_some_and(|v| {
            v.in_use_on.contains(&node) || v.attached_on.contains(&node) || v.attachments.iter().any(|a| a.node == node)
        });
        if pods.is_empty() && !still_attached {
            continue; // resolved: the pod is gone and the volume left the node
        }
        let dev = events.iter().find_map(|e| e.device());
        let device = dev.as_deref().unwrap_or("the device");
        let blocked_elsewhere: Vec<_> = vol
            .map(|v| {
                ctx.pods_of(v)
                    .filter(|(_, p)| !Ctx::on_node(p, &node))
                    .filter_map(|(k, p)| Some((k, p, ctx.blocked_since(p)?)))
                    .collect()
            })
            .unwrap_or_default();
        let severity = if blocked_elsewhere.is_empty() { Severity::Warning } else { Severity::Critical };
        let summary = format!(
            "node {node} cannot unmap {device} ({subject}): device busy (exit status 16), {count} failures; {HOLDER_UNKNOWN}"
        );
        let mut b = Builder::new(PatternId::UnmapBusy, severity, &format!("{subject}@{node}"), summary)
            .node(Some(&node))
            .device(dev.as_deref())
            .volume(vol.map(|v| v.pv.as_str()))
            .explanation(EXPLANATION)
            .object(ObjectRef::node(&node))
            .evidence(ctx.node_evidence(&node));
        for e in &events {
            b = b.evidence(ctx.event_evidence(e)).since(e.first);
        }
        for (k, p) in &pods {
            b = b.object(ObjectRef::pod(k)).evidence(ctx.pod_evidence(k, p));
        }
        for (k, p, since) in &blocked_elsewhere {
            b = b.object(ObjectRef::pod(k)).evidence(ctx.pod_evidence(k, p)).since(Some(*since));
        }
        if let Some(v) = vol {
            if still_attached {
                let text =
                    format!("{} still attached / in use on node {node}", v.unique_name.as_deref().unwrap_or(&v.pv));
                b = b.evidence(Evidence::new(EvidenceSource::NodeStatus, text, ctx.seen));
            }
            b = b.objects(v.pvc.as_deref().map(ObjectRef::pvc)).object(ObjectRef::pv(&v.pv));
            if let Some(img) = &v.image {
                b = b.object(ObjectRef::image(img));
            }
        }
        out.push(b.build());
    }
    out
}

/// The eventless proof (module doc) about `vol`, from its live-node-stale-map findings `stale`:
/// each whose node still has the volume in use and runs a DaemonSet pod that mounts the host root
/// without propagation.
pub(crate) fn held(ctx: &Ctx<'_>, vol: &VolumeLineage, stale: &[Finding]) -> Vec<Finding> {
    let mut out = vec![];
    for stale in stale.iter().filter(|f| f.pattern == PatternId::LiveNodeStaleMap) {
        let Some(node) = stale.node.as_deref() else { continue };
        if !vol.in_use_on.iter().any(|n| n == node) {
            continue;
        }
        let holders: Vec<(String, HostRootMount)> = ctx
            .snap
            .pods
            .iter()
            .filter(|p| pod_node(p) == Some(node))
            .flat_map(|p| {
                let key = format!(
                    "{}/{}",
                    p.metadata.namespace.as_deref().unwrap_or(""),
                    p.metadata.name.as_deref().unwrap_or("")
                );
                host_root_mounts(p).into_iter().map(move |m| (key.clone(), m))
            })
            .collect();
        let Some((first, _)) = holders.first() else { continue };
        let summary = format!(
            "node {node} still has {} in use after its pods left: its unmount or unmap has not finished (kubelet logs the failure, posts no event); DaemonSet pod {first} mounts the host root without mount propagation; {HOLDER_UNKNOWN}",
            vol.pv
        );
        let in_use = format!(
            "{} in status.volumesInUse of node {node}, which runs no pod of the claim",
            vol.unique_name.as_deref().unwrap_or(&vol.pv)
        );
        let mut b = Builder::new(PatternId::UnmapBusy, stale.severity, &format!("{}@{node}", vol.pv), summary)
            .node(Some(node))
            .volume(Some(&vol.pv))
            .explanation(EXPLANATION)
            .since(stale.since)
            .objects(stale.objects.iter().cloned())
            .evidence(Evidence::new(EvidenceSource::NodeStatus, in_use, ctx.seen))
            .evidences(stale.evidence.iter().cloned());
        for (key, m) in &holders {
            let text = format!(
                "pod {key} of DaemonSet {}: container {} mounts the host root at {} without mountPropagation (a copy of the host's mounts from its start)",
                m.daemonset, m.container, m.mount_path
            );
            b = b.object(ObjectRef::pod(key)).evidence(Evidence::new(EvidenceSource::Pod, text, ctx.seen));
        }
        out.push(b.build());
    }
    out
}

#[cfg(test)]
#[path = "unmap_busy_held_tests.rs"]
mod held_tests;
