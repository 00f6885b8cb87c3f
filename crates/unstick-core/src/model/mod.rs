//! Plain data: a [`Snapshot`] of Kubernetes objects plus Ceph facts, each with the time it was
//! observed. No IO, no UI.

pub mod ceph;
pub mod ceph_error;
pub mod csiaddons_node;
pub mod event_bound;
mod exact;
pub mod fence;
pub mod index;
pub mod kube;
pub mod meta;
pub mod objects;
#[cfg(test)]
mod objects_tests;
pub mod pod_condition;
pub mod remediation;
pub mod step_type;
pub mod workload;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use jiff::Timestamp;

pub use self::ceph::ImageRef;
use self::ceph::{BlocklistEntry, Lock, MappedDevice, Watcher};
pub use self::ceph_error::{CephError, CephReadError};
use self::objects::{Event, Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment};

/// A value with the time it was observed.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed<T> {
    /// The value (often a `Result` whose error is shown in place of the data).
    pub value: T,
    /// When it was read.
    pub at: Timestamp,
}

/// What is known about one image from Ceph.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageFacts {
    /// `rbd status` watchers, or the error (command + message) that prevented reading them.
    pub watchers: Observed<Result<Vec<Watcher>, CephReadError>>,
    /// `rbd lock ls` locks, or the error.
    pub locks: Observed<Result<Vec<Lock>, CephReadError>>,
}

/// `rbd image-meta list --format json` of one image (key → value), or the error.
pub type ImageMeta = Observed<Result<BTreeMap<String, String>, CephReadError>>;

/// Everything Ceph told us.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CephFacts {
    /// Per-image facts, keyed by image.
    pub images: BTreeMap<ImageRef, ImageFacts>,
    /// `ceph osd blocklist ls`, or the error; `None` until first read.
    pub blocklist: Option<Observed<Result<Vec<BlocklistEntry>, CephReadError>>>,
    /// `rbd showmapped` by node name, where a bundle carries it (`showmapped/<node>.*`); empty live.
    pub mapped: BTreeMap<String, Vec<MappedDevice>>,
    /// Reads whose latest attempts failed after an earlier success. The earlier value is kept in
    /// `images` / `blocklist` (a failed read is not an empty list); this says since when it could
    /// not be re-checked and why. Filled by [`CephFacts::apply_image`] / [`CephFacts::apply_blocklist`].
    pub unverified: BTreeMap<CephRead, Unverified>,
    /// `rbd image-meta list --format json` by image (key → value; `{}` when the image has none),
    /// read for the images whose watchers no node address ties to a node; ceph-csi's client
    /// addresses are in it ([`ceph::client_addresses`]).
    pub image_meta: BTreeMap<ImageRef, ImageMeta>,
}

/// One kind of Ceph read, for [`CephFacts::unverified`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CephRead {
    /// `rbd status` of an image.
    Watchers(ImageRef),
    /// `rbd lock ls` of an image.
    Locks(ImageRef),
    /// `ceph osd blocklist ls`.
    Blocklist,
}

impl fmt::Display for CephRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CephRead::Watchers(i) => write!(f, "rbd status {i}"),
            CephRead::Locks(i) => write!(f, "rbd lock ls {i}"),
            CephRead::Blocklist => f.write_str("ceph osd blocklist ls"),
        }
    }
}

/// A value kept from an earlier read because the later reads failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unverified {
    /// When the first failed read after the last success finished.
    pub since: Timestamp,
    /// The latest failure (command and message).
    pub error: CephReadError,
}

impl CephFacts {
    /// Takes a fresh read of `image`. A failed read (watchers or locks) never replaces an earlier
    /// successful one: the earlier value stays and the read is marked in [`Self::unverified`]; a
    /// successful read replaces the value and clears the mark. Without an earlier success the
    /// error is stored (nothing is known).
    pub fn apply_image(&mut self, image: ImageRef, facts: ImageFacts) {
        let ImageFacts { watchers, locks } = facts;
        match self.images.get_mut(&image) {
            None => {
                self.images.insert(image, ImageFacts { watchers, locks });
            }
            Some(old) => {
                merge(&mut old.watchers, watchers, CephRead::Watchers(image.clone()), &mut self.unverified);
                merge(&mut old.locks, locks, CephRead::Locks(image), &mut self.unverified);
            }
        }
    }

    /// Takes a fresh `ceph osd blocklist ls`, with the rule of [`Self::apply_image`].
    pub fn apply_blocklist(&mut self, b: Observed<Result<Vec<BlocklistEntry>, CephReadError>>) {
        match &mut self.blocklist {
            None => self.blocklist = Some(b),
            Some(old) => merge(old, b, CephRead::Blocklist, &mut self.unverified),
        }
    }
}

fn merge<T>(
    old: &mut Observed<Result<T, CephReadError>>,
    new: Observed<Result<T, CephReadError>>,
    key: CephRead,
    unverified: &mut BTreeMap<CephRead, Unverified>,
) {
    match (&old.value, new.value) {
        (Ok(_), Err(error)) => {
            let since = unverified.get(&key).map_or(new.at, |u| u.since);
            unverified.insert(key, Unverified { since, error });
        }
        (_, value) => {
            unverified.remove(&key);
            *old = Observed { value, at: new.at };
        }
    }
}

/// The Kubernetes objects and Ceph facts one frame or one diagnosis works on.
///
/// Objects are shared `Arc`s from the watch stores (or from a bundle / scenario), so taking a
/// snapshot copies pointers, not objects.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// core/v1 Nodes.
    pub nodes: Vec<Arc<Node>>,
    /// core/v1 Pods.
    pub pods: Vec<Arc<Pod>>,
    /// core/v1 PersistentVolumeClaims.
    pub pvcs: Vec<Arc<PersistentVolumeClaim>>,
    /// core/v1 PersistentVolumes.
    pub pvs: Vec<Arc<PersistentVolume>>,
    /// storage.k8s.io/v1 VolumeAttachments.
    pub volume_attachments: Vec<Arc<VolumeAttachment>>,
    /// core/v1 Events.
    pub events: Vec<Arc<Event>>,
    /// Ceph facts.
    pub ceph: CephFacts,
    /// When the Kubernetes part was taken.
    pub taken_at: Option<Timestamp>,
    /// The API server's `GET /version` as `(major, minor)` (`1.37`); `None` when it was not read
    /// (a bundle, a fixture, the request failed).
    pub server_version: Option<(u32, u32)>,
    /// Addresses each node reported through `unstick probe` (node name → its interfaces' IPs), as
    /// a bundle carries them (`probe/<node>.json`); empty live.
    pub probe_addresses: BTreeMap<String, Vec<std::net::IpAddr>>,
    /// csi-addons NetworkFences; `None` when csi-addons is not installed or they were not read.
    pub network_fences: fence::NetworkFences,
    /// What the Medik8s remediators' APIs said (objects, kinds not installed); `None` when they
    /// were not read (a bundle without them, a fixture). Their taints are on the nodes.
    pub remediators: Option<remediation::Remediators>,
    /// csi-addons NetworkFenceClasses (empty when csi-addons is not installed or none exists).
    pub network_fence_classes: Vec<fence::NetworkFenceClass>,
    /// csi-addons CSIAddonsNodes (each driver's node id and fence clients); `None` when csi-addons
    /// is not installed or they were not read.
    pub csiaddons_nodes: csiaddons_node::CsiAddonsNodes,
}

/// Converts a Kubernetes `Time` to a `jiff::Timestamp` (k8s-openapi 0.29 uses jiff already).
pub fn ts(t: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time) -> Timestamp {
    t.0
}

/// `namespace/name` of an object (or `name` for cluster-scoped ones).
pub fn key_of(meta: &meta::Meta) -> String {
    match &meta.namespace {
        Some(ns) => format!("{ns}/{}", meta.name.as_deref().unwrap_or("")),
        None => meta.name.clone().unwrap_or_default(),
    }
}
