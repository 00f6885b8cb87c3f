//! Writing a bundle: raw tool outputs as collected ([`Writer::put`]), or a whole [`Snapshot`]
//! re-encoded in the tools' JSON shapes ([`write_snapshot`], for tests and benchmarks).

use std::path::{Path, PathBuf};

use serde_json::json;

use super::format::{BLOCKLIST, BundleError, IMAGES, KUBE, MANIFEST, Manifest};
use super::kube_list;
use crate::model::ceph::BlocklistTarget;
use crate::model::{ImageRef, Snapshot};

/// True for a name that is safe as one path component (pool, RADOS namespace, image, node names
/// come from the cluster and must not walk out of the bundle).
fn safe_component(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\\', '\0'])
}

/// The relative directory of an image: `ceph/images/<pool>/<image>` or
/// `ceph/images/<pool>/<namespace>/<image>`; `None` when a name is not a safe path component.
pub fn image_dir(image: &ImageRef) -> Option<String> {
    if !safe_component(&image.pool) || !safe_component(&image.image) {
        return None;
    }
    if image.namespace.is_empty() {
        Some(format!("{IMAGES}/{}/{}", image.pool, image.image))
    } else if safe_component(&image.namespace) {
        Some(format!("{IMAGES}/{}/{}/{}", image.pool, image.namespace, image.image))
    } else {
        None
    }
}

/// Writes files under a bundle directory.
#[derive(Debug, Clone)]
pub struct Writer {
    dir: PathBuf,
}

impl Writer {
    /// Creates `dir` (and parents). An existing directory is used as is: files are overwritten.
    pub fn create(dir: &Path) -> Result<Self, BundleError> {
        std::fs::create_dir_all(dir).map_err(|source| BundleError::Io { path: dir.to_path_buf(), source })?;
        Ok(Writer { dir: dir.to_path_buf() })
    }

    /// The bundle directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `contents` to the relative path `rel` (`/`-separated, each component safe),
    /// creating directories.
    pub fn put(&self, rel: &str, contents: &str) -> Result<(), BundleError> {
        if !rel.split('/').all(safe_component) {
            let source = std::io::Error::new(std::io::ErrorKind::InvalidInput, "unsafe path in bundle");
            return Err(BundleError::Io { path: self.dir.join(rel.replace(['/', '\\'], "_")), source });
        }
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| BundleError::Io { path: parent.to_path_buf(), source })?;
        }
        std::fs::write(&path, contents).map_err(|source| BundleError::Io { path, source })
    }

    /// Writes a JSON value (pretty-printed) to `rel`.
    pub fn put_json(&self, rel: &str, v: &impl serde::Serialize) -> Result<(), BundleError> {
        let text = serde_json::to_string_pretty(v)
            .map(crate::text::json_escape_controls)
            .map_err(|e| BundleError::shape(rel, e.to_string()))?;
        self.put(rel, &(text + "\n"))
    }

    /// Writes `manifest.json`.
    pub fn manifest(&self, m: &Manifest) -> Result<(), BundleError> {
        self.put_json(MANIFEST, m)
    }
}

/// Writes everything in `snap` as a bundle: `kube.json`, `ceph/blocklist.json` (two concatenated
/// arrays, as `ceph osd blocklist ls` prints them), and per image `status.json` / `locks.json` in
/// `rbd`'s shapes. Facts that are errors are not written (they read back as missing), and are
/// recorded in the manifest's `errors`.
pub fn write_snapshot(dir: &Path, snap: &Snapshot, manifest: &Manifest) -> Result<Writer, BundleError> {
    let w = Writer::create(dir)?;
    let mut m = manifest.clone();
    w.put(KUBE, &serde_json::to_string(&kube_list(snap)).map_err(|e| BundleError::shape(KUBE, e.to_string()))?)?;
    match snap.ceph.blocklist.as_ref().map(|b| &b.value) {
        Some(Ok(entries)) => {
            let addrs: Vec<_> = entries
                .iter()
                .filter_map(|e| match &e.target {
                    BlocklistTarget::Addr(a) => Some(json!({"addr": a, "until": e.until})),
                    BlocklistTarget::Range(_) => None,
                })
                .collect();
            let ranges: Vec<_> = entries
                .iter()
                .filter_map(|e| match &e.target {
                    BlocklistTarget::Range(r) => Some(json!({"range": r, "until": e.until})),
                    BlocklistTarget::Addr(_) => None,
                })
                .collect();
            w.put(BLOCKLIST, &format!("\n{}{}", json!(addrs), json!(ranges)))?;
        }
        Some(Err(e)) => {
            m.errors.insert(BLOCKLIST.into(), e.to_string());
        }
        None => {}
    }
    for (image, facts) in &snap.ceph.images {
        let Some(rel) = image_dir(image) else { continue };
        match &facts.watchers.value {
            Ok(ws) => w.put_json(&format!("{rel}/status.json"), &json!({ "watchers": ws }))?,
            Err(e) => {
                m.errors.insert(format!("{rel}/status.json"), e.to_string());
            }
        }
        match &facts.locks.value {
            Ok(ls) => w.put_json(&format!("{rel}/locks.json"), ls)?,
            Err(e) => {
                m.errors.insert(format!("{rel}/locks.json"), e.to_string());
            }
        }
    }
    w.manifest(&m)?;
    Ok(w)
}
