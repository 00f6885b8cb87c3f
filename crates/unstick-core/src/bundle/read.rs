//! Reading a bundle directory (layout in [`super`] and `docs/bundle.md`). Raw tool outputs are
//! parsed with the same parsers as live output (`sources::ceph::parse`), JSON or plain text.
//!
//! Only regular files are read: a FIFO would block forever and a link to `/dev/zero` would read
//! until memory runs out. Every file but `kube.json` has a size cap ([`FILE_MAX_BYTES`]);
//! `kube.json` is streamed, of any size, and what its reader holds besides the model is capped
//! ([`KUBE_HELD_MAX_BYTES`]). A file or directory that exists but cannot be read is an error naming
//! it, never "missing".

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use jiff::Timestamp;
use serde_json::Value;

use super::format::{
    BLOCKLIST, BLOCKLIST_TEXT, Bundle, BundleError, CSIADDONS_NODES, IMAGES, KUBE, MANIFEST, Manifest,
    NETWORK_FENCE_CLASSES, NETWORK_FENCES, PROBES, REMEDIATORS, SHOWMAPPED,
};
use super::kube_scan;
use crate::clock::Clock;
use crate::lineage::Lineage;
use crate::model::{CephReadError, ImageFacts, ImageRef, Observed, Snapshot};
use crate::probe::ProbeReport;
use crate::sources::ceph::parse::{self, ParseError};

/// Most bytes of `kube.json` held at once besides the model: 1 GiB (one item, a nested `List`, the
/// fields around `items`, or the items waiting for a list's `kind`). The file itself may be of any
/// size: it is streamed, and memory grows with the objects kept (about a third of the file's bytes
/// for a `kubectl get … -A -o json` with `managedFields` stripped, less with them: README "Scale
/// benchmark"), not with the file. A `kubectl get -A -o json` of 100k pods and 5,000 nodes is about
/// 1.3 GB stripped and 2.9 GB with `managedFields`; its largest item is a few KB. 1 GiB was the
/// whole file's cap before (issue 29), so every file read before still reads.
pub const KUBE_HELD_MAX_BYTES: u64 = 1 << 30;

/// Largest other file read: 64 MiB. The largest Ceph output in a bundle, a blocklist of 100k
/// entries, is about 10 MB; a probe report or `rbd info` is a few KB.
pub const FILE_MAX_BYTES: u64 = 64 << 20;

fn io_err(path: &Path, kind: std::io::ErrorKind, msg: String) -> BundleError {
    BundleError::Io { path: path.to_path_buf(), source: std::io::Error::new(kind, msg) }
}

/// Text and modification time of `dir/rel` (not `kube.json`, which is streamed), or `None` when
/// it does not exist. Errors: not a regular file (FIFO, device, socket, directory), over
/// [`FILE_MAX_BYTES`], unreadable, not UTF-8.
fn read_opt(dir: &Path, rel: &str) -> Result<Option<(String, Option<Timestamp>)>, BundleError> {
    let path = dir.join(rel);
    let cap = FILE_MAX_BYTES;
    let Some((file, len, mtime)) = open_opt(dir, rel)? else { return Ok(None) };
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(cap + 1).read_to_end(&mut bytes).map_err(|source| BundleError::Io { path: path.clone(), source })?;
    if bytes.len() as u64 > cap {
        return Err(too_big(&path, cap));
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| io_err(&path, std::io::ErrorKind::InvalidData, format!("not UTF-8: {e}")))?;
    Ok(Some((text, mtime)))
}

fn too_big(path: &Path, cap: u64) -> BundleError {
    let cap = bytesize::ByteSize(cap).display().iec();
    io_err(path, std::io::ErrorKind::InvalidData, format!("larger than the {cap:.0} this file may have"))
}

/// The opened regular file `dir/rel` with its length and modification time, or `None` when it
/// does not exist. Errors: not a regular file (FIFO, device, socket, directory), over
/// [`FILE_MAX_BYTES`] (but `kube.json`, streamed, may be of any size), unreadable.
fn open_opt(dir: &Path, rel: &str) -> Result<Option<(std::fs::File, u64, Option<Timestamp>)>, BundleError> {
    let path = dir.join(rel);
    let cap = if rel == KUBE { u64::MAX } else { FILE_MAX_BYTES };
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(BundleError::Io { path, source }),
    };
    let not_regular = "not a regular file (a FIFO, device, socket or directory): a bundle holds only regular files";
    if !meta.is_file() {
        return Err(io_err(&path, std::io::ErrorKind::InvalidInput, not_regular.into()));
    }
    if meta.len() > cap {
        return Err(too_big(&path, cap));
    }
    let file = std::fs::File::open(&path).map_err(|source| BundleError::Io { path: path.clone(), source })?;
    // The path may have been swapped since the check: look at what was opened.
    let opened = file.metadata().map_err(|source| BundleError::Io { path: path.clone(), source })?;
    if !opened.is_file() {
        return Err(io_err(&path, std::io::ErrorKind::InvalidInput, not_regular.into()));
    }
    if opened.len() > cap {
        return Err(too_big(&path, cap));
    }
    let mtime = opened.modified().ok().and_then(|t| Timestamp::try_from(t).ok());
    Ok(Some((file, opened.len(), mtime)))
}

/// True when `dir/rel` exists (whatever it is); an error when it cannot be looked at.
fn exists(dir: &Path, rel: &str) -> Result<bool, BundleError> {
    match std::fs::metadata(dir.join(rel)) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(BundleError::Io { path: dir.join(rel), source }),
    }
}

/// serde_json errors: syntax → line/column, wrong shape → the message (which has them too).
fn serde_err(file: &str, e: &serde_json::Error) -> BundleError {
    match e.classify() {
        serde_json::error::Category::Data => BundleError::shape(file, e.to_string()),
        _ => BundleError::json(file, e),
    }
}

/// Checks that `text` is one or more concatenated JSON documents (leading whitespace allowed).
fn check_syntax(file: &str, text: &str) -> Result<(), BundleError> {
    let mut n = 0;
    for doc in serde_json::Deserializer::from_str(text).into_iter::<serde::de::IgnoredAny>() {
        doc.map_err(|e| BundleError::json(file, &e))?;
        n += 1;
    }
    if n == 0 {
        return Err(BundleError::shape(file, "empty file"));
    }
    Ok(())
}

type Parser<T> = fn(&str) -> Result<T, ParseError>;

/// Reads `<base>.json` (JSON syntax checked first, for line and column) or else `<base>.txt`,
/// with the matching parser: `(value, file read, mtime)`, or `None` when neither exists.
fn read_json_or_text<T>(
    dir: &Path,
    base: &str,
    json: Parser<T>,
    text: Parser<T>,
) -> Result<Option<(T, String, Option<Timestamp>)>, BundleError> {
    let jf = format!("{base}.json");
    if let Some((raw, mtime)) = read_opt(dir, &jf)? {
        check_syntax(&jf, &raw)?;
        let v = json(&raw).map_err(|e| BundleError::shape(&jf, e.detail))?;
        return Ok(Some((v, jf, mtime)));
    }
    let tf = format!("{base}.txt");
    match read_opt(dir, &tf)? {
        Some((raw, mtime)) => Ok(Some((text(&raw).map_err(|e| BundleError::shape(&tf, e.detail))?, tf, mtime))),
        None => Ok(None),
    }
}

/// Reads the bundle in `dir`. Missing files are listed in [`Bundle::missing`], and so are optional
/// files (`info.json`, `probe/*.json`, `showmapped/*`) that do not parse, with file, line and
/// column; unreadable files and required files that are malformed are errors naming the file. A
/// directory with neither `kube.json` nor `manifest.json` is not a bundle. Times come from the
/// manifest's collection time, else the files' modification times, else `clock` (the time the
/// bundle is read).
pub fn read(dir: &Path, clock: &dyn Clock) -> Result<Bundle, BundleError> {
    let meta = std::fs::metadata(dir).map_err(|source| BundleError::Io { path: dir.to_path_buf(), source })?;
    if !meta.is_dir() {
        let source = std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a directory");
        return Err(BundleError::Io { path: dir.to_path_buf(), source });
    }
    if !exists(dir, KUBE)? && !exists(dir, MANIFEST)? {
        return Err(BundleError::NotABundle { path: dir.to_path_buf() });
    }
    let mut newest: Option<Timestamp> = None;
    let mut seen = |t: Option<Timestamp>| {
        if let Some(t) = t {
            newest = Some(newest.map_or(t, |n| n.max(t)));
        }
        t
    };
    let manifest = match read_opt(dir, MANIFEST)? {
        Some((text, _)) => Some(serde_json::from_str::<Manifest>(&text).map_err(|e| serde_err(MANIFEST, &e))?),
        None => None,
    };
    let collected = manifest.as_ref().and_then(|m| m.collected_at);
    let mut missing = vec![];
    let mut miss = |rel: &str| {
        let why = manifest.as_ref().and_then(|m| m.errors.get(rel));
        missing.push(match why {
            Some(w) => format!("{rel} (collect failed: {w})"),
            None => rel.to_string(),
        });
    };

    let mut snapshot =
        Snapshot { server_version: manifest.as_ref().and_then(Manifest::server_release), ..Snapshot::default() };
    let mut skipped_items = 0;
    // streamed: a 100k-pod kube.json is not held whole (issues 13 and 29)
    match open_opt(dir, KUBE)? {
        Some((file, _, mtime)) => {
            skipped_items = kube_scan::parse_reader(KUBE, file, KUBE_HELD_MAX_BYTES, &mut snapshot)?;
            crate::model::event_bound::bound(&mut snapshot.events);
            snapshot.taken_at = collected.or(seen(mtime));
        }
        None => miss(KUBE),
    }

    let base = BLOCKLIST.strip_suffix(".json").unwrap_or(BLOCKLIST);
    debug_assert_eq!(format!("{base}.txt"), BLOCKLIST_TEXT);
    match read_json_or_text(dir, base, parse::blocklist_ls, parse::blocklist_ls_text)? {
        Some((entries, _, mtime)) => {
            let at = collected.or(seen(mtime)).unwrap_or_else(|| clock.now());
            snapshot.ceph.blocklist = Some(Observed { value: Ok(entries), at });
        }
        None => miss(BLOCKLIST),
    }

    let mut info = BTreeMap::new();
    let mut problems = vec![];
    for (image, rel) in image_dirs(dir)? {
        let base = |name: &str| format!("{rel}/{name}");
        let absent = |name: &str| CephReadError::NotInBundle { file: base(&format!("{name}.json")) };
        let watchers = match read_json_or_text(dir, &base("status"), parse::rbd_status, parse::rbd_status_text)? {
            Some((w, _, mtime)) => {
                Observed { value: Ok(w), at: collected.or(seen(mtime)).unwrap_or_else(|| clock.now()) }
            }
            None => {
                miss(&base("status.json"));
                Observed { value: Err(absent("status")), at: collected.unwrap_or_else(|| clock.now()) }
            }
        };
        let locks = match read_json_or_text(dir, &base("locks"), parse::rbd_lock_ls, parse::rbd_lock_ls_text)? {
            Some((l, _, mtime)) => {
                Observed { value: Ok(l), at: collected.or(seen(mtime)).unwrap_or_else(|| clock.now()) }
            }
            None => {
                miss(&base("locks.json"));
                Observed { value: Err(absent("locks")), at: collected.unwrap_or_else(|| clock.now()) }
            }
        };
        let f = base("info.json");
        if let Some((text, _)) = read_opt(dir, &f)? {
            match serde_json::from_str::<Value>(&text) {
                Ok(v) => {
                    info.insert(image.clone(), v);
                }
                Err(e) => problems.push(ignored(&BundleError::json(&f, &e))),
            }
        }
        let f = base("meta.json");
        if let Some((text, mtime)) = read_opt(dir, &f)? {
            match parse::rbd_image_meta(&text) {
                Ok(m) => {
                    let at = collected.or(seen(mtime)).unwrap_or_else(|| clock.now());
                    snapshot.ceph.image_meta.insert(image.clone(), Observed { value: Ok(m), at });
                }
                Err(e) => problems.push(ignored(&BundleError::shape(&f, e.detail))),
            }
        }
        snapshot.ceph.images.insert(image, ImageFacts { watchers, locks });
    }
    // Images the PVs reference but the bundle has nothing about.
    for image in Lineage::build(&snapshot).images() {
        if !snapshot.ceph.images.contains_key(&image) {
            let rel = super::image_dir(&image).unwrap_or_else(|| format!("{IMAGES}/<unsafe name {}>", image.spec()));
            miss(&format!("{rel}/status.json"));
            miss(&format!("{rel}/locks.json"));
        }
    }

    if let Some((text, _)) = read_opt(dir, REMEDIATORS)? {
        match serde_json::from_str(&text) {
            Ok(r) => snapshot.remediators = Some(r),
            Err(e) => problems.push(ignored(&serde_err(REMEDIATORS, &e))),
        }
    }
    let mut probes = BTreeMap::new();
    for (node, rel) in files_in(dir, PROBES, &["json"])? {
        if let Some((text, _)) = read_opt(dir, &rel)? {
            match serde_json::from_str::<ProbeReport>(&text) {
                Ok(r) => {
                    if !r.addresses.is_empty() {
                        snapshot.probe_addresses.insert(r.node.clone(), r.addresses.clone());
                    }
                    probes.insert(node, r);
                }
                Err(e) => problems.push(ignored(&serde_err(&rel, &e))),
            }
        }
    }
    for (node, rel) in files_in(dir, SHOWMAPPED, &["json", "txt"])? {
        if let Some((text, _)) = read_opt(dir, &rel)? {
            let parsed = if rel.ends_with(".json") {
                check_syntax(&rel, &text)
                    .and_then(|_| parse::showmapped(&text).map_err(|e| BundleError::shape(&rel, e.detail)))
            } else {
                parse::showmapped(&text).map_err(|e| BundleError::shape(&rel, e.detail))
            };
            match parsed {
                Ok(devs) => snapshot.ceph.mapped.entry(node).or_default().extend(devs),
                Err(e) => problems.push(ignored(&e)),
            }
        }
    }
    // csi-addons: a bundle without the file (older, or csi-addons not installed) leaves them unknown
    if let Some(items) = list_items(dir, NETWORK_FENCES, &mut problems)? {
        let f = items.into_iter().filter_map(|o| crate::model::fence::NetworkFence::from_json(o).ok());
        snapshot.network_fences = Some(f.collect());
    }
    if let Some(items) = list_items(dir, NETWORK_FENCE_CLASSES, &mut problems)? {
        let c = items.into_iter().filter_map(|o| crate::model::fence::NetworkFenceClass::from_json(o).ok());
        snapshot.network_fence_classes = c.collect();
    }
    if let Some(items) = list_items(dir, CSIADDONS_NODES, &mut problems)? {
        let n = items.into_iter().filter_map(|o| crate::model::csiaddons_node::CsiAddonsNode::from_json(o).ok());
        snapshot.csiaddons_nodes = Some(n.collect());
    }
    // Errors the collector recorded for files that exist (a kind that could not be listed).
    if let Some(m) = &manifest {
        for (file, why) in &m.errors {
            if !missing.iter().any(|x| x == file || x.starts_with(&format!("{file} "))) {
                missing.push(format!("{file} (incomplete: {why})"));
            }
        }
    }
    missing.extend(problems);
    let clock = collected.or(newest).unwrap_or_else(|| clock.now());
    Ok(Bundle { snapshot, probes, info, manifest, missing, skipped_items, clock })
}

/// An optional file that does not parse, as a `missing` line: the error (file, line, column), and
/// that the diagnosis went on without it.
/// The `items` of the List in optional file `rel` (`None` when the file is absent or is not a
/// List: then a problem is noted). Errors: reading the file.
fn list_items(dir: &Path, rel: &str, problems: &mut Vec<String>) -> Result<Option<Vec<Value>>, BundleError> {
    let Some((text, _)) = read_opt(dir, rel)? else { return Ok(None) };
    let problem = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(mut o)) => match o.remove("items") {
            Some(Value::Array(items)) => return Ok(Some(items)),
            _ => BundleError::shape(rel, "a List with `items` expected"),
        },
        Ok(_) => BundleError::shape(rel, "a List with `items` expected"),
        Err(e) => serde_err(rel, &e),
    };
    problems.push(ignored(&problem));
    Ok(None)
}

fn ignored(e: &BundleError) -> String {
    let text = e.to_string();
    let text = text.strip_prefix("bundle file ").unwrap_or(&text);
    format!("{text} (optional file ignored)")
}

/// Sorted names of the entries of `dir/rel` that satisfy `keep` (UTF-8 names only); empty when
/// `dir/rel` does not exist. An entry that cannot be read is an error.
fn entries(dir: &Path, rel: &str, keep: fn(&std::fs::FileType) -> bool) -> Result<Vec<String>, BundleError> {
    let path = dir.join(rel);
    let rd = match std::fs::read_dir(&path) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(source) => return Err(BundleError::Io { path, source }),
    };
    let mut out = vec![];
    for e in rd {
        let e = e.map_err(|source| BundleError::Io { path: path.clone(), source })?;
        let t = e.file_type().map_err(|source| BundleError::Io { path: e.path(), source })?;
        if keep(&t)
            && let Ok(name) = e.file_name().into_string()
        {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

const IMAGE_FILES: [&str; 6] = ["status.json", "status.txt", "locks.json", "locks.txt", "info.json", "meta.json"];

/// True when `dir/rel` holds an image's files. A file that cannot be looked at (permission,
/// a symlink loop) is an error: the image is unreadable, not missing.
fn is_image_dir(dir: &Path, rel: &str) -> Result<bool, BundleError> {
    let mut any = false;
    for f in IMAGE_FILES {
        any |= exists(dir, &format!("{rel}/{f}"))?;
    }
    Ok(any)
}

/// `(image, relative dir)` for `ceph/images/<pool>/<image>` and `ceph/images/<pool>/<ns>/<image>`.
fn image_dirs(dir: &Path) -> Result<Vec<(ImageRef, String)>, BundleError> {
    let is_dir = |t: &std::fs::FileType| t.is_dir();
    let mut out = vec![];
    for pool in entries(dir, IMAGES, is_dir)? {
        let prel = format!("{IMAGES}/{pool}");
        for name in entries(dir, &prel, is_dir)? {
            let rel = format!("{prel}/{name}");
            if is_image_dir(dir, &rel)? {
                out.push((ImageRef::new(pool.clone(), name), rel));
                continue;
            }
            for image in entries(dir, &rel, is_dir)? {
                let irel = format!("{rel}/{image}");
                if is_image_dir(dir, &irel)? {
                    let r = ImageRef { pool: pool.clone(), namespace: name.clone(), image };
                    out.push((r, irel));
                }
            }
        }
    }
    Ok(out)
}

/// `(stem, relative path)` of the files in `dir/rel` ending in `.<ext>` for one of `exts`
/// (anything but a directory is listed, so that a FIFO there is reported, not skipped).
fn files_in(dir: &Path, rel: &str, exts: &[&str]) -> Result<Vec<(String, String)>, BundleError> {
    let mut out = vec![];
    for n in entries(dir, rel, |t| !t.is_dir())? {
        let stem = exts.iter().find_map(|e| n.strip_suffix(&format!(".{e}")));
        if let Some(stem) = stem.filter(|s| !s.is_empty()) {
            out.push((stem.to_string(), format!("{rel}/{n}")));
        }
    }
    Ok(out)
}
