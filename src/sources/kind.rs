//! The Kubernetes kinds the console lists and watches, and how the API and RBAC spell them.

/// The kinds the console watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
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

impl Kind {
    /// All kinds, in status-bar order.
    pub const ALL: [Kind; 6] = [Kind::Node, Kind::Pod, Kind::Pvc, Kind::Pv, Kind::VolumeAttachment, Kind::Event];

    /// The plural resource name as the API (and RBAC) spells it.
    pub fn resource(self) -> &'static str {
        match self {
            Kind::Node => "nodes",
            Kind::Pod => "pods",
            Kind::Pvc => "persistentvolumeclaims",
            Kind::Pv => "persistentvolumes",
            Kind::VolumeAttachment => "volumeattachments",
            Kind::Event => "events",
        }
    }

    /// Short name for the status bar (`no`, `po`, `pvc`, `pv`, `va`, `ev`).
    pub fn short(self) -> &'static str {
        match self {
            Kind::Node => "no",
            Kind::Pod => "po",
            Kind::Pvc => "pvc",
            Kind::Pv => "pv",
            Kind::VolumeAttachment => "va",
            Kind::Event => "ev",
        }
    }
}
