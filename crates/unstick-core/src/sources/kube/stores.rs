//! The six watch stores the console reads ([`KubeStores`]), read whole ([`KubeStores::fill`]:
//! tests, benches, one-shot readers) or by what changed since the last read
//! ([`KubeStores::take_changes`]: the console's loop, issue 13).

use jiff::Timestamp;

use crate::model::Snapshot;
use crate::model::objects::{Event, Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment};
use crate::sources::kube::kind::WatchedKind;
use crate::sources::kube::store::{Keyed, Store, StoreChange};

/// The watch stores, one per kind. Cloning shares the stores.
#[derive(Clone)]
pub struct KubeStores {
    /// Nodes.
    pub nodes: Store<Node>,
    /// Pods.
    pub pods: Store<Pod>,
    /// PVCs.
    pub pvcs: Store<PersistentVolumeClaim>,
    /// PVs.
    pub pvs: Store<PersistentVolume>,
    /// VolumeAttachments.
    pub volume_attachments: Store<VolumeAttachment>,
    /// Events.
    pub events: Store<Event>,
}

/// What the stores of some kinds changed since their changes were last taken (the other kinds:
/// nothing), one [`StoreChange`] per object, in no particular order; what the console patches its
/// snapshot with.
#[derive(Debug, Clone, Default)]
pub struct Deltas {
    /// Nodes.
    pub nodes: Vec<StoreChange<Node>>,
    /// Pods.
    pub pods: Vec<StoreChange<Pod>>,
    /// PVCs.
    pub pvcs: Vec<StoreChange<PersistentVolumeClaim>>,
    /// PVs.
    pub pvs: Vec<StoreChange<PersistentVolume>>,
    /// VolumeAttachments.
    pub volume_attachments: Vec<StoreChange<VolumeAttachment>>,
    /// Events.
    pub events: Vec<StoreChange<Event>>,
    /// When they were taken (on the program's clock).
    pub taken_at: Option<Timestamp>,
}

impl KubeStores {
    /// Copies the current store contents (Arc pointers) into `snap`, sorted by namespace/name so
    /// that rendering is deterministic, and stamps it `at` (now on the program's clock). Takes no
    /// changes ([`Self::take_changes`] goes on from where it was).
    pub fn fill(&self, snap: &mut Snapshot, at: Timestamp) {
        fn sorted<K: Keyed>(s: &Store<K>) -> Vec<std::sync::Arc<K>> {
            let mut v = s.state();
            v.sort_by(|a, b| a.store_key().cmp(&b.store_key()));
            v
        }
        snap.nodes = sorted(&self.nodes);
        snap.pods = sorted(&self.pods);
        snap.pvcs = sorted(&self.pvcs);
        snap.pvs = sorted(&self.pvs);
        snap.volume_attachments = sorted(&self.volume_attachments);
        snap.events = sorted(&self.events);
        snap.taken_at = Some(at);
    }

    /// What the stores of `kinds` changed since their changes were last taken
    /// ([`Store::take_changes`]), stamped `at`; costs the number of changes. The console starts
    /// from an empty snapshot and patches it with every take: the stores start empty too, so
    /// what it holds is what the stores held at the last take.
    pub fn take_changes(&self, kinds: &[WatchedKind], at: Timestamp) -> Deltas {
        let mut d = Deltas { taken_at: Some(at), ..Deltas::default() };
        for kind in kinds {
            match kind {
                WatchedKind::Node => d.nodes = self.nodes.take_changes(),
                WatchedKind::Pod => d.pods = self.pods.take_changes(),
                WatchedKind::Pvc => d.pvcs = self.pvcs.take_changes(),
                WatchedKind::Pv => d.pvs = self.pvs.take_changes(),
                WatchedKind::VolumeAttachment => d.volume_attachments = self.volume_attachments.take_changes(),
                WatchedKind::Event => d.events = self.events.take_changes(),
            }
        }
        d
    }
}
