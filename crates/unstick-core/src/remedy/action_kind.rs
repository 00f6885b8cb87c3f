//! The kind of a [`WriteAction`] as a name: the `kind` tag it has in the incident journal
//! (`rbd-lock-rm`, `delete-pod`, ...), which scenario files name in their `[[reference]]`
//! `action` key. Matching a journaled step against a reference step compares these names and the
//! action's namespace, never the wording of its summary.

use super::action::WriteAction;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ImageRef;

    #[test]
    fn the_kind_is_the_journal_tag() {
        let image = ImageRef { pool: "p".into(), namespace: String::new(), image: "i".into() };
        let s = String::new;
        let all = [
            WriteAction::RbdLockRm { image: image.clone(), lock_id: s(), locker: s(), address: s() },
            WriteAction::BlocklistAdd { addr: s() },
            WriteAction::BlocklistRm { addr: s() },
            WriteAction::BlocklistRangeRm { range: s() },
            WriteAction::TaintOutOfService { node: s() },
            WriteAction::UntaintOutOfService { node: s() },
            WriteAction::DeletePod { namespace: "ns".into(), name: s(), uid: s() },
            WriteAction::ForceDeletePod { namespace: "ns".into(), name: s(), uid: s() },
            WriteAction::DeleteVolumeAttachment { name: s(), node: s() },
            WriteAction::RemoveVaFinalizer { name: s(), finalizer: s() },
            WriteAction::ReleaseVolumeInUse { node: s(), volume: s() },
            WriteAction::SetMountPropagation {
                namespace: "ns".into(),
                daemonset: s(),
                container: s(),
                mount_path: s(),
                from: None,
                to: None,
            },
            WriteAction::SnapCreate { image, snap: s() },
        ];
        let kinds: Vec<&str> = all.iter().map(WriteAction::kind).collect();
        assert_eq!(kinds, WRITE_ACTION_KINDS);
        for a in &all {
            let json = serde_json::to_value(a).unwrap();
            assert_eq!(json["kind"], a.kind(), "{a:?}");
            assert_eq!(a.namespace(), json["namespace"].as_str(), "{a:?}");
        }
    }
}
