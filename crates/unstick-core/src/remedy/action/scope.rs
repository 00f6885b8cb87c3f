//! Which live facts an action depends on: the [`Scope`] its confirmation re-reads and compares
//! before anything is sent.

use crate::remedy::action::WriteAction;
use crate::remedy::action::precheck::{MountRef, Scope};

/// The facts an action depends on (for undo, which has no finding to compare with).
pub fn scope_for(action: &WriteAction) -> Scope {
    let mut s = Scope::default();
    match action {
        WriteAction::RbdLockRm { image, .. } | WriteAction::SnapCreate { image, .. } => s.image = Some(image.clone()),
        WriteAction::BlocklistAdd { .. } => s.blocklist = true,
        // an entry a csi-addons NetworkFence owns is lifted through the fence, never by hand
        WriteAction::BlocklistRm { .. } | WriteAction::BlocklistRangeRm { .. } => {
            (s.blocklist, s.fences) = (true, true)
        }
        WriteAction::NetworkFenceCreate { node, .. } => {
            s.fences = true;
            s.nodes.push(node.clone())
        }
        WriteAction::NetworkFenceState { .. } => s.fences = true,
        WriteAction::TaintOutOfService { node }
        | WriteAction::UntaintOutOfService { node }
        | WriteAction::ReleaseVolumeInUse { node, .. } => s.nodes.push(node.clone()),
        WriteAction::DeletePod { namespace, name, .. } | WriteAction::ForceDeletePod { namespace, name, .. } => {
            s.pods.push((namespace.clone(), name.clone()))
        }
        WriteAction::RemoveVaFinalizer { name, .. } | WriteAction::DeleteVolumeAttachment { name, .. } => {
            s.volume_attachments.push(name.clone())
        }
        WriteAction::SetMountPropagation { namespace, daemonset, container, mount_path, .. } => {
            s.mounts.push(MountRef {
                namespace: namespace.clone(),
                daemonset: daemonset.clone(),
                container: container.clone(),
                mount_path: mount_path.clone(),
            })
        }
    }
    s
}

/// `a` with what `b` adds: its image when `a` has none, and every node, pod, VolumeAttachment,
/// mount, blocklist and NetworkFence fact `a` lacks.
pub fn merge_scope(a: &Scope, b: &Scope) -> Scope {
    let mut s = a.clone();
    if s.image.is_none() {
        s.image = b.image.clone();
    }
    for n in &b.nodes {
        if !s.nodes.contains(n) {
            s.nodes.push(n.clone());
        }
    }
    for p in &b.pods {
        if !s.pods.contains(p) {
            s.pods.push(p.clone());
        }
    }
    for v in &b.volume_attachments {
        if !s.volume_attachments.contains(v) {
            s.volume_attachments.push(v.clone());
        }
    }
    for m in &b.mounts {
        if !s.mounts.contains(m) {
            s.mounts.push(m.clone());
        }
    }
    s.blocklist |= b.blocklist;
    s.fences |= b.fences;
    s
}
