//! Plain data: a [`Snapshot`] of Kubernetes objects plus Ceph facts, each with the time it was
//! observed. No IO, no UI.

pub mod ceph;
pub mod kube;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::VolumeAttachment;

use self::ceph::{BlocklistEntry, Lock, MappedDevice, Watcher};

/// An RBD image: pool, optional RADOS namespace, image name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct ImageRef {
    /// Pool name (`replicapool`).
    pub pool: String,
    /// RADOS namespace inside the pool; empty for the default namespace.
    #[serde(default)]
    pub namespace: String,
    /// Image name (`csi-vol-<uuid>`, `index-api-image`).
    pub image: String,
}

impl ImageRef {
    /// A ref in the default RADOS namespace.
    pub fn new(pool: impl Into<String>, image: impl Into<String>) -> Self {
        Self { pool: pool.into(), namespace: String::new(), image: image.into() }
    }

    /// The image spec `rbd` takes: `pool/image` or `pool/namespace/image`.
    pub fn spec(&self) -> String {
        if self.namespace.is_empty() {
            format!("{}/{}", self.pool, self.image)
        } else {
            format!("{}/{}/{}", self.pool, self.namespace, self.image)
        }
    }
}

impl fmt::Display for ImageRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec())
    }
}

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
    pub watchers: Observed<Result<Vec<Watcher>, String>>,
    /// `rbd lock ls` locks, or the error.
    pub locks: Observed<Result<Vec<Lock>, String>>,
}

/// Everything Ceph told us.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CephFacts {
    /// Per-image facts, keyed by image.
    pub images: BTreeMap<ImageRef, ImageFacts>,
    /// `ceph osd blocklist ls`, or the error; `None` until first read.
    pub blocklist: Option<Observed<Result<Vec<BlocklistEntry>, String>>>,
    /// `rbd showmapped` by node name, where a bundle carries it (`showmapped/<node>.*`); empty live.
    pub mapped: BTreeMap<String, Vec<MappedDevice>>,
}

/// The Kubernetes objects and Ceph facts one frame or one diagnosis works on.
///
/// Objects are shared `Arc`s from the reflector stores (or from a bundle / scenario), so taking a
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
}

/// Converts a Kubernetes `Time` to a `jiff::Timestamp` (k8s-openapi 0.29 uses jiff already).
pub fn ts(t: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time) -> Timestamp {
    t.0
}

/// `namespace/name` of an object (or `name` for cluster-scoped ones).
pub fn key_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    match &meta.namespace {
        Some(ns) => format!("{ns}/{}", meta.name.as_deref().unwrap_or("")),
        None => meta.name.clone().unwrap_or_default(),
    }
}
