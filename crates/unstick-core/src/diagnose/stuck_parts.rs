//! What the stuck-pod findings (`stuck.rs`, `unexplained.rs`) share: how a pod is stuck, its
//! state in words, the volume's lineage line and objects.

use jiff::Timestamp;

use super::ctx::Ctx;
use super::finding::{Builder, Evidence, EvidenceSource, ObjectRef};
use crate::lineage::VolumeLineage;
use crate::text::human_age;

/// How a pod is stuck, and since when.
pub(crate) enum How {
    /// Waiting for its volumes past the grace.
    Waiting(Timestamp),
    /// Terminating past the grace.
    Terminating(Timestamp),
    /// Not Running, with a volume failure event.
    Failing(Timestamp),
}

impl How {
    pub(crate) fn since(&self) -> Timestamp {
        match self {
            How::Waiting(t) | How::Terminating(t) | How::Failing(t) => *t,
        }
    }
}

/// The pod's state in words, for a summary.
pub(crate) fn state_words(ctx: &Ctx<'_>, how: &How) -> String {
    let age = human_age(ctx.age(how.since()));
    match how {
        How::Waiting(_) => format!("waiting for its volumes for {age}"),
        How::Terminating(_) => format!("Terminating for {age} past its deletion time"),
        How::Failing(_) => format!("failing to set up its volume for {age}"),
    }
}

/// The volume's lineage in one line: claim, PV, driver, access modes, image, CephFS subvolume
/// (`<fs>/<group>/<name>`) or handle.
pub(crate) fn lineage_evidence(ctx: &Ctx<'_>, vol: &VolumeLineage) -> Evidence {
    let claim = vol.pvc.as_deref().map(|c| format!("claim {c} -> ")).unwrap_or_default();
    let backing = match (&vol.image, &vol.subvolume, &vol.volume_handle) {
        (Some(i), _, _) => format!(" -> image {}", i.spec()),
        (None, Some(s), _) => format!(" -> CephFS subvolume {}", s.spec()),
        (None, None, Some(h)) => format!(" -> volumeHandle {h}"),
        _ => String::new(),
    };
    let modes = if vol.access_modes.is_empty() { "none".to_string() } else { vol.access_modes.join(",") };
    let text = format!("{claim}PV {} (driver {}, access modes {modes}){backing}", vol.pv, vol.driver);
    Evidence::new(EvidenceSource::PersistentVolume, text, ctx.seen)
}

/// `b` with the volume's objects: claim, PV, image, attachments, the node.
pub(crate) fn volume_objects(mut b: Builder, vol: &VolumeLineage, node: &str) -> Builder {
    b = b.objects(vol.pvc.as_deref().map(ObjectRef::pvc)).object(ObjectRef::pv(&vol.pv));
    if let Some(img) = &vol.image {
        b = b.object(ObjectRef::image(img));
    }
    b = b.objects(vol.attachments.iter().map(|a| ObjectRef::va(&a.name)));
    b.object(ObjectRef::node(node))
}
