//! The bundle's format: its file names, its manifest, the read bundle, and its one error type.

use std::collections::BTreeMap;
use std::path::PathBuf;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::model::{ImageRef, Snapshot};
use crate::probe::ProbeReport;

/// `kube.json`.
pub const KUBE: &str = "kube.json";
/// `ceph/blocklist.json`.
pub const BLOCKLIST: &str = "ceph/blocklist.json";
/// `ceph/blocklist.txt`: the plain-text `ceph osd blocklist ls`, read when there is no JSON one.
pub const BLOCKLIST_TEXT: &str = "ceph/blocklist.txt";
/// `showmapped`: `rbd showmapped` per node.
pub const SHOWMAPPED: &str = "showmapped";
/// `ceph/images`.
pub const IMAGES: &str = "ceph/images";
/// `probe`.
pub const PROBES: &str = "probe";
/// `csiaddons/networkfences.json`: `kubectl get networkfences.csiaddons.openshift.io -o json`
/// (a List; written only when csi-addons is installed: without it the fences read as not known).
pub const NETWORK_FENCES: &str = "csiaddons/networkfences.json";
/// `csiaddons/networkfenceclasses.json`: `kubectl get networkfenceclasses.csiaddons.openshift.io -o json`.
pub const NETWORK_FENCE_CLASSES: &str = "csiaddons/networkfenceclasses.json";
/// `csiaddons/csiaddonsnodes.json`: `kubectl get csiaddonsnodes.csiaddons.openshift.io -A -o json`
/// (a List; written only when the CRD exists: without it the nodes read as not known).
pub const CSIADDONS_NODES: &str = "csiaddons/csiaddonsnodes.json";
/// `manifest.json`.
pub const MANIFEST: &str = "manifest.json";
/// `remediators.json`: [`crate::model::remediation::Remediators`] as `unstick collect` read them.
pub const REMEDIATORS: &str = "remediators.json";

/// `manifest.json`: who collected the bundle, when, and what failed while collecting.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// When the bundle was collected (RFC 3339); the diagnosis clock of `diagnose --bundle`.
    #[serde(default)]
    pub collected_at: Option<Timestamp>,
    /// kubeconfig context it was collected from.
    #[serde(default)]
    pub context: Option<String>,
    /// `unstick` version that wrote it.
    #[serde(default)]
    pub unstick_version: Option<String>,
    /// Files that could not be collected → why (`ceph/images/p/i/status.json` → "`rbd status` timed out").
    #[serde(default)]
    pub errors: BTreeMap<String, String>,
    /// How `unstick collect` read Ceph (absent when Ceph was not read, in bundles made by hand
    /// and in those of versions before 0.1 of issue 29): how many images, how many not read, and
    /// why the part ended early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceph: Option<CephPart>,
    /// The API server's release, `GET /version`'s `major.minor` (`"1.37"`), when collect read
    /// it: what `diagnose --bundle` judges release-bound facts by (an in-tree RBD PV on 1.31+).
    /// Absent in older bundles and when the read failed; diagnose then falls back to the nodes'
    /// kubelet versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
}

impl Manifest {
    /// [`Manifest::server_version`] as `(major, minor)`; `None` when absent or not `N.M`.
    pub fn server_release(&self) -> Option<(u32, u32)> {
        let (major, minor) = self.server_version.as_deref()?.split_once('.')?;
        Some((major.parse().ok()?, minor.parse().ok()?))
    }
}

/// `manifest.json` `ceph`: the Ceph part of a collect, e.g.
/// `{"images": 2000, "not_read": 1997, "ended": "unanswered", "millis": 12400}` or
/// `{"images": 2000, "not_read": 0, "millis": 3100, "reader": {"kind": "bulk", "librados": "3.0.0", "python": "3.11.2"}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CephPart {
    /// Images the bundle's PVs name (each one's `status.json` and `locks.json` were to be read).
    pub images: usize,
    /// Images of those whose watchers or locks were not read because the part ended early (an
    /// image whose own read failed is in `errors`, not counted here).
    pub not_read: usize,
    /// Why the part ended before reading every image; `None` when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<CephEnded>,
    /// Wall time of the Ceph part, milliseconds.
    pub millis: u64,
    /// Which reader read the locks and metadata (the bulk reader, or the `rbd` CLI and why);
    /// `None` when the scan's fast path did not run (older bundles do not have it; a reader this
    /// version does not know reads as `None`, not as a malformed manifest).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "known_reader")]
    pub reader: Option<crate::sources::ceph::bulk::CephReader>,
}

/// `ceph.reader` when this version knows its shape, else `None`.
fn known_reader<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<crate::sources::ceph::bulk::CephReader>, D::Error> {
    let v = Option::<serde_json::Value>::deserialize(d)?;
    Ok(v.and_then(|v| serde_json::from_value(v).ok()))
}

/// Why `collect`'s Ceph part ended before reading every image (`manifest.json` `ceph.ended`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CephEnded {
    /// Ceph stopped answering: the bulk reads got no answer, or
    /// [`crate::sources::ceph::SCAN_UNANSWERED_STOP`] image reads in a row got none.
    Unanswered,
    /// The scan's deadline ([`crate::sources::ceph::SCAN_DEADLINE`]) passed.
    Deadline,
}

/// A bundle read back: the snapshot the rules run on, plus what came with it.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// Kubernetes objects and Ceph facts; images whose files are missing carry an `Err` naming them.
    pub snapshot: Snapshot,
    /// `probe/<node>.json` reports by node name.
    pub probes: BTreeMap<String, ProbeReport>,
    /// Raw `rbd info` documents by image.
    pub info: BTreeMap<ImageRef, serde_json::Value>,
    /// `manifest.json`, if present.
    pub manifest: Option<Manifest>,
    /// Missing expected files (relative paths, with the collector's error when it recorded one).
    pub missing: Vec<String>,
    /// Items of `kube.json` of kinds the diagnosis does not use (skipped).
    pub skipped_items: usize,
    /// The diagnosis clock: `collected_at`, else the newest file time, else now.
    pub clock: Timestamp,
}

/// Why a bundle could not be read. Always names the file.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The directory has neither `kube.json` nor `manifest.json`.
    #[error("{path} is not a bundle: it has neither kube.json nor manifest.json")]
    NotABundle {
        /// The directory.
        path: PathBuf,
    },
    /// The directory or a file could not be read.
    #[error("bundle {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Not valid JSON.
    #[error("bundle file {file}: invalid JSON at line {line}, column {column}: {message}")]
    Json {
        /// Path relative to the bundle.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// Valid JSON of an unexpected shape.
    #[error("bundle file {file}: {detail}")]
    Shape {
        /// Path relative to the bundle.
        file: String,
        /// What was expected where.
        detail: String,
    },
}

impl BundleError {
    pub(crate) fn json(file: &str, e: &serde_json::Error) -> Self {
        let message = e.to_string();
        // serde_json appends " at line L column C"; keep the message without it.
        let message = message.rsplit_once(" at line ").map(|(m, _)| m.to_string()).unwrap_or(message);
        BundleError::Json { file: file.to_string(), line: e.line(), column: e.column(), message }
    }

    pub(crate) fn shape(file: &str, detail: impl Into<String>) -> Self {
        BundleError::Shape { file: file.to_string(), detail: detail.into() }
    }
}
