//! The kind of a [`WriteAction`] as a name (the journal's `kind` tag) and the namespace it writes.

use super::WriteAction;

// ---- the kind of an action as a name: the journal's `kind` tag (`rbd-lock-rm`, `delete-pod`, ...),
// which scenario files name in their `[[reference]]` `action` key; matching a journaled step against a
// reference step compares these names and the action's namespace, never a summary's wording.
/// Every [`WriteAction::kind`], in the enum's order.
pub const WRITE_ACTION_KINDS: &[&str] = &[
    "rbd-lock-rm",
    "blocklist-add",
    "blocklist-rm",
    "blocklist-range-rm",
    "taint-out-of-service",
    "untaint-out-of-service",
    "delete-pod",
    "force-delete-pod",
    "delete-volume-attachment",
    "remove-va-finalizer",
    "release-volume-in-use",
    "set-mount-propagation",
    "network-fence-create",
    "network-fence-state",
    "snap-create",
];

impl WriteAction {
    /// The action's kind: its `kind` tag in the journal's JSON (kebab-case variant name).
    pub fn kind(&self) -> &'static str {
        match self {
            WriteAction::RbdLockRm { .. } => "rbd-lock-rm",
            WriteAction::BlocklistAdd { .. } => "blocklist-add",
            WriteAction::BlocklistRm { .. } => "blocklist-rm",
            WriteAction::BlocklistRangeRm { .. } => "blocklist-range-rm",
            WriteAction::TaintOutOfService { .. } => "taint-out-of-service",
            WriteAction::UntaintOutOfService { .. } => "untaint-out-of-service",
            WriteAction::DeletePod { .. } => "delete-pod",
            WriteAction::ForceDeletePod { .. } => "force-delete-pod",
            WriteAction::DeleteVolumeAttachment { .. } => "delete-volume-attachment",
            WriteAction::RemoveVaFinalizer { .. } => "remove-va-finalizer",
            WriteAction::ReleaseVolumeInUse { .. } => "release-volume-in-use",
            WriteAction::SetMountPropagation { .. } => "set-mount-propagation",
            WriteAction::NetworkFenceCreate { .. } => "network-fence-create",
            WriteAction::NetworkFenceState { .. } => "network-fence-state",
            WriteAction::SnapCreate { .. } => "snap-create",
        }
    }

    /// The Kubernetes namespace of the object the action writes (pods, DaemonSets); `None` for
    /// cluster-scoped objects and Ceph writes.
    pub fn namespace(&self) -> Option<&str> {
        match self {
            WriteAction::DeletePod { namespace, .. }
            | WriteAction::ForceDeletePod { namespace, .. }
            | WriteAction::SetMountPropagation { namespace, .. } => Some(namespace),
            _ => None,
        }
    }
}
