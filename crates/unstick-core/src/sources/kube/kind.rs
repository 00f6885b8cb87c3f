//! The Kubernetes kinds the console lists and watches, and how the API and RBAC spell them.

/// A kind the console lists and watches (one watcher each). Its own word: the kind of an object a
/// finding involves is [`ObjectKind`](crate::diagnose::ObjectKind) (which has no Event and adds
/// RBD images and blocklist entries), the type of a playbook step is
/// [`StepKind`](crate::remedy::playbook::StepKind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WatchedKind {
    /// core/v1 Node
    Node,
    /// core/v1 Pod
    Pod,
    /// core/v1 PersistentVolumeClaim
    Pvc,
    /// core/v1 PersistentVolume
    Pv,
    /// storage.k8s.io/v1 VolumeAttachment
    VolumeAttachment,
    /// core/v1 Event
    Event,
}

impl WatchedKind {
    /// All kinds, in status-bar order.
    pub const ALL: [WatchedKind; 6] = [
        WatchedKind::Node,
        WatchedKind::Pod,
        WatchedKind::Pvc,
        WatchedKind::Pv,
        WatchedKind::VolumeAttachment,
        WatchedKind::Event,
    ];

    /// The plural resource name as the API (and RBAC) spells it.
    pub fn resource(self) -> &'static str {
        match self {
            WatchedKind::Node => "nodes",
            WatchedKind::Pod => "pods",
            WatchedKind::Pvc => "persistentvolumeclaims",
            WatchedKind::Pv => "persistentvolumes",
            WatchedKind::VolumeAttachment => "volumeattachments",
            WatchedKind::Event => "events",
        }
    }

    /// Short name for the status bar (`no`, `po`, `pvc`, `pv`, `va`, `ev`).
    pub fn short(self) -> &'static str {
        match self {
            WatchedKind::Node => "no",
            WatchedKind::Pod => "po",
            WatchedKind::Pvc => "pvc",
            WatchedKind::Pv => "pv",
            WatchedKind::VolumeAttachment => "va",
            WatchedKind::Event => "ev",
        }
    }
}
