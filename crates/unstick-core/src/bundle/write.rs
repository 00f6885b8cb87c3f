//! Writing a bundle: raw tool outputs as collected ([`Writer::put`]), or a whole [`Snapshot`]
//! re-encoded in the tools' JSON shapes ([`write_snapshot`], for tests and benchmarks).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::format::{
    BLOCKLIST, BundleError, CSIADDONS_NODES, IMAGES, KUBE, MANIFEST, Manifest, NETWORK_FENCE_CLASSES, NETWORK_FENCES,
};
use super::kube_list;
use crate::model::ceph::BlocklistTarget;
use crate::model::{CephReadError, ImageFacts, ImageRef, Observed, Snapshot};

/// A blocklist read as the model holds it.
pub type Blocklist = Observed<Result<Vec<crate::model::ceph::BlocklistEntry>, CephReadError>>;

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

    /// Writes `ceph/blocklist.json` in `ceph osd blocklist ls --format json`'s shape (two
    /// concatenated arrays: addresses, then ranges), or records the read's error in `errors`.
    pub fn put_blocklist(&self, b: &Blocklist, errors: &mut BTreeMap<String, String>) -> Result<(), BundleError> {
        let entries = match &b.value {
            Ok(entries) => entries,
            Err(e) => {
                errors.insert(BLOCKLIST.into(), e.to_string());
                return Ok(());
            }
        };
        let (mut addrs, mut ranges) = (vec![], vec![]);
        for e in entries {
            match &e.target {
                BlocklistTarget::Addr(a) => addrs.push(json!({"addr": a, "until": e.until})),
                BlocklistTarget::Range(r) => ranges.push(json!({"range": r, "until": e.until})),
            }
        }
        self.put(BLOCKLIST, &format!("\n{}{}", json!(addrs), json!(ranges)))
    }

    /// Writes an image's `status.json` (`{"watchers": [...]}`, `rbd status`'s shape) and
    /// `locks.json` (`rbd lock ls`'s array); a read that failed is not written and its error is
    /// recorded in `errors`, as is a name that is not a safe path component.
    pub fn put_image(
        &self,
        image: &ImageRef,
        facts: &ImageFacts,
        errors: &mut BTreeMap<String, String>,
    ) -> Result<(), BundleError> {
        let Some(rel) = image_dir(image) else {
            errors.insert(format!("{IMAGES}/{}", image.spec()), "name is not a safe path component".into());
            return Ok(());
        };
        match &facts.watchers.value {
            Ok(ws) => self.put_json(&format!("{rel}/status.json"), &json!({ "watchers": ws }))?,
            Err(e) => {
                errors.insert(format!("{rel}/status.json"), e.to_string());
            }
        }
        match &facts.locks.value {
            Ok(ls) => self.put_json(&format!("{rel}/locks.json"), ls)?,
            Err(e) => {
                errors.insert(format!("{rel}/locks.json"), e.to_string());
            }
        }
        Ok(())
    }

    /// Writes an image's `meta.json` (`rbd image-meta list --format json`'s object); a failed read
    /// is recorded in `errors` instead.
    pub fn put_image_meta(
        &self,
        image: &ImageRef,
        meta: &crate::model::ImageMeta,
        errors: &mut BTreeMap<String, String>,
    ) -> Result<(), BundleError> {
        let Some(rel) = image_dir(image) else { return Ok(()) };
        match &meta.value {
            Ok(m) => self.put_json(&format!("{rel}/meta.json"), m),
            Err(e) => {
                errors.insert(format!("{rel}/meta.json"), e.to_string());
                Ok(())
            }
        }
    }

    /// Starts one part of the `v1` `List` at `rel` (one kind, say): its items are streamed to
    /// the hidden file `.<rel>.<part>.part` beside it until [`Writer::put_list`] joins the parts.
    /// Errors: the file cannot be created.
    pub fn list_part(&self, rel: &str, part: &str) -> Result<ListPart, BundleError> {
        let path = self.dir.join(format!(".{}.{part}.part", rel.replace('/', "_")));
        let file = std::fs::File::create(&path).map_err(|source| BundleError::Io { path: path.clone(), source })?;
        Ok(ListPart { path, out: std::io::BufWriter::new(file), items: 0, error: None })
    }

    /// Writes the `v1` `List` at `rel` (as kubectl prints one, one item a line) from `parts`,
    /// in order, and removes their files (as dropping a part does). Returns the number of items. Errors: a part's first
    /// write error, or writing `rel`.
    pub fn put_list(&self, rel: &str, parts: Vec<ListPart>) -> Result<usize, BundleError> {
        let path = self.dir.join(rel);
        let io = |source| BundleError::Io { path: path.clone(), source };
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).map_err(io)?);
        out.write_all(br#"{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":["#)
            .map_err(io)?;
        let mut total = 0;
        for mut part in parts {
            part.flushed()?;
            if part.items > 0 {
                out.write_all(if total == 0 { b"\n" } else { b",\n" }).map_err(io)?;
                let file = &part.path;
                let mut r =
                    std::fs::File::open(file).map_err(|source| BundleError::Io { path: file.clone(), source })?;
                std::io::copy(&mut r, &mut out).map_err(io)?;
                total += part.items;
            }
        }
        out.write_all(b"\n]}\n").map_err(io)?;
        out.flush().map_err(io)?;
        Ok(total)
    }

    /// Writes `manifest.json`.
    pub fn manifest(&self, m: &Manifest) -> Result<(), BundleError> {
        self.put_json(MANIFEST, m)
    }
}

/// Items of a `v1` `List` being written (see [`Writer::list_part`]): each pushed item is
/// written at once, so a list is never held whole.
#[derive(Debug)]
pub struct ListPart {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    items: usize,
    error: Option<BundleError>,
}

impl ListPart {
    /// Writes `o` as one item (with its `apiVersion` and `kind`). After a write error the rest
    /// is dropped and [`Writer::put_list`] returns that error.
    pub fn push<T: serde::Serialize + k8s_openapi::Resource>(&mut self, o: &T) {
        if self.error.is_some() {
            return;
        }
        let Some(v) = kube_list::list_item(o) else { return };
        self.write_item(|out| serde_json::to_writer(out, &v).map_err(Into::into));
    }

    /// Writes one item as the API server listed it (`raw`: an object of kind `kind` in
    /// `api_version`, without those two fields, as a list's items come), with `apiVersion` and
    /// `kind` added and `managedFields` and the last-applied annotation dropped
    /// ([`kube_list::stripped_item`]); nothing else of it is decoded. Returns false (writing
    /// nothing) when `raw` is not an object; after a write error, as [`Self::push`].
    pub fn push_raw(&mut self, api_version: &str, kind: &str, raw: &str) -> bool {
        if self.error.is_some() {
            return true;
        }
        let Ok(text) = kube_list::stripped_item(api_version, kind, raw) else { return false };
        self.write_item(|out| out.write_all(text.as_bytes()));
        true
    }

    /// Writes the separator and one item with `write`; counts it, or keeps the error.
    fn write_item(&mut self, write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>) {
        let sep: &[u8] = if self.items == 0 { b"" } else { b",\n" };
        match self.out.write_all(sep).and_then(|()| write(&mut self.out)) {
            Ok(()) => self.items += 1,
            Err(source) => self.error = Some(BundleError::Io { path: self.path.clone(), source }),
        }
    }

    /// Items written so far.
    pub fn items(&self) -> usize {
        self.items
    }

    /// Flushes the part's file; the first write error if there was one.
    fn flushed(&mut self) -> Result<(), BundleError> {
        if let Err(source) = self.out.flush() {
            self.error.get_or_insert(BundleError::Io { path: self.path.clone(), source });
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A part's file is removed with it (joined into the list, or dropped when the list is not
/// written).
impl Drop for ListPart {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
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
    if let Some(b) = &snap.ceph.blocklist {
        w.put_blocklist(b, &mut m.errors)?;
    }
    for (image, facts) in &snap.ceph.images {
        w.put_image(image, facts, &mut m.errors)?;
    }
    if let Some(fences) = &snap.network_fences {
        put_fences(&w, fences, &snap.network_fence_classes)?;
    }
    if let Some(nodes) = &snap.csiaddons_nodes {
        put_csiaddons_nodes(&w, nodes)?;
    }
    w.manifest(&m)?;
    Ok(w)
}

/// Writes csi-addons' NetworkFences and NetworkFenceClasses as Lists (`kubectl get ... -o json`'s
/// shape) to [`NETWORK_FENCES`] and [`NETWORK_FENCE_CLASSES`]. Errors: the files.
pub fn put_fences(
    w: &Writer,
    fences: &[crate::model::fence::NetworkFence],
    classes: &[crate::model::fence::NetworkFenceClass],
) -> Result<(), BundleError> {
    let list = |items: Vec<serde_json::Value>| serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    w.put_json(NETWORK_FENCES, &list(fences.iter().map(|f| f.to_json()).collect()))?;
    w.put_json(NETWORK_FENCE_CLASSES, &list(classes.iter().map(|c| c.to_json()).collect()))
}

/// Writes csi-addons' CSIAddonsNodes as a List (`kubectl get csiaddonsnodes -A -o json`'s shape)
/// to [`CSIADDONS_NODES`]. Errors: the file.
pub fn put_csiaddons_nodes(
    w: &Writer,
    nodes: &[crate::model::csiaddons_node::CsiAddonsNode],
) -> Result<(), BundleError> {
    let items: Vec<serde_json::Value> = nodes.iter().map(|n| n.to_json()).collect();
    w.put_json(CSIADDONS_NODES, &serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}))
}
