//! Reading a bundle directory (layout in [`super`]). Raw tool outputs are parsed with the same
//! parsers as live output (`sources::ceph::parse`).

use std::collections::BTreeMap;
use std::path::Path;

use jiff::Timestamp;
use serde_json::Value;

use super::{BLOCKLIST, Bundle, BundleError, IMAGES, KUBE, MANIFEST, Manifest, PROBES, kube_list};
use crate::lineage::Lineage;
use crate::model::{ImageFacts, ImageRef, Observed, Snapshot};
use crate::probe::ProbeReport;
use crate::sources::ceph::parse;

/// Text and modification time of `dir/rel`, or `None` when it does not exist.
fn read_opt(dir: &Path, rel: &str) -> Result<Option<(String, Option<Timestamp>)>, BundleError> {
    let path = dir.join(rel);
    match std::fs::read(&path) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).map_err(|e| BundleError::Io {
                path: path.clone(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not UTF-8: {e}")),
            })?;
            let mtime = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| Timestamp::try_from(t).ok());
            Ok(Some((text, mtime)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(BundleError::Io { path, source }),
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

/// Reads the bundle in `dir`. Missing files are listed in [`Bundle::missing`]; unreadable or
/// malformed files are errors naming the file (and line/column for JSON syntax).
pub fn read(dir: &Path) -> Result<Bundle, BundleError> {
    let meta = std::fs::metadata(dir).map_err(|source| BundleError::Io { path: dir.to_path_buf(), source })?;
    if !meta.is_dir() {
        let source = std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a directory");
        return Err(BundleError::Io { path: dir.to_path_buf(), source });
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

    let mut snapshot = Snapshot::default();
    let mut skipped_items = 0;
    match read_opt(dir, KUBE)? {
        Some((text, mtime)) => {
            skipped_items = kube_list::parse(KUBE, &text, &mut snapshot)?;
            snapshot.taken_at = collected.or(seen(mtime));
        }
        None => miss(KUBE),
    }

    match read_opt(dir, BLOCKLIST)? {
        Some((text, mtime)) => {
            check_syntax(BLOCKLIST, &text)?;
            let entries = parse::blocklist_ls(&text).map_err(|e| BundleError::shape(BLOCKLIST, e.detail))?;
            let at = collected.or(seen(mtime)).unwrap_or_else(Timestamp::now);
            snapshot.ceph.blocklist = Some(Observed { value: Ok(entries), at });
        }
        None => miss(BLOCKLIST),
    }

    let mut info = BTreeMap::new();
    for (image, rel) in image_dirs(dir)? {
        let file = |name: &str| format!("{rel}/{name}");
        let status = read_opt(dir, &file("status.json"))?;
        let locks = read_opt(dir, &file("locks.json"))?;
        let watchers = match status {
            Some((text, mtime)) => {
                let f = file("status.json");
                check_syntax(&f, &text)?;
                let w = parse::rbd_status(&text).map_err(|e| BundleError::shape(&f, e.detail))?;
                Observed { value: Ok(w), at: collected.or(seen(mtime)).unwrap_or_else(Timestamp::now) }
            }
            None => {
                miss(&file("status.json"));
                Observed { value: Err(format!("{} is not in the bundle", file("status.json"))), at: collected.unwrap_or_else(Timestamp::now) }
            }
        };
        let locks = match locks {
            Some((text, mtime)) => {
                let f = file("locks.json");
                check_syntax(&f, &text)?;
                let l = parse::rbd_lock_ls(&text).map_err(|e| BundleError::shape(&f, e.detail))?;
                Observed { value: Ok(l), at: collected.or(seen(mtime)).unwrap_or_else(Timestamp::now) }
            }
            None => {
                miss(&file("locks.json"));
                Observed { value: Err(format!("{} is not in the bundle", file("locks.json"))), at: collected.unwrap_or_else(Timestamp::now) }
            }
        };
        if let Some((text, _)) = read_opt(dir, &file("info.json"))? {
            let v: Value = serde_json::from_str(&text).map_err(|e| BundleError::json(&file("info.json"), &e))?;
            info.insert(image.clone(), v);
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

    let mut probes = BTreeMap::new();
    for (node, rel) in json_files(dir, PROBES)? {
        if let Some((text, _)) = read_opt(dir, &rel)? {
            let r: ProbeReport = serde_json::from_str(&text).map_err(|e| serde_err(&rel, &e))?;
            probes.insert(node, r);
        }
    }
    // Errors the collector recorded for files that exist (a kind that could not be listed).
    if let Some(m) = &manifest {
        for (file, why) in &m.errors {
            if !missing.iter().any(|x| x == file || x.starts_with(&format!("{file} "))) {
                missing.push(format!("{file} (incomplete: {why})"));
            }
        }
    }
    let clock = collected.or(newest).unwrap_or_else(Timestamp::now);
    Ok(Bundle { snapshot, probes, info, manifest, missing, skipped_items, clock })
}

/// Sorted subdirectory names of `dir/rel` (UTF-8 names only); empty when it does not exist.
fn subdirs(dir: &Path, rel: &str) -> Result<Vec<String>, BundleError> {
    let path = dir.join(rel);
    let rd = match std::fs::read_dir(&path) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(source) => return Err(BundleError::Io { path, source }),
    };
    let mut out: Vec<String> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    out.sort();
    Ok(out)
}

fn is_image_dir(dir: &Path, rel: &str) -> bool {
    ["status.json", "locks.json", "info.json"].iter().any(|f| dir.join(rel).join(f).is_file())
}

/// `(image, relative dir)` for `ceph/images/<pool>/<image>` and `ceph/images/<pool>/<ns>/<image>`.
fn image_dirs(dir: &Path) -> Result<Vec<(ImageRef, String)>, BundleError> {
    let mut out = vec![];
    for pool in subdirs(dir, IMAGES)? {
        let prel = format!("{IMAGES}/{pool}");
        for name in subdirs(dir, &prel)? {
            let rel = format!("{prel}/{name}");
            if is_image_dir(dir, &rel) {
                out.push((ImageRef::new(pool.clone(), name), rel));
                continue;
            }
            for image in subdirs(dir, &rel)? {
                let irel = format!("{rel}/{image}");
                if is_image_dir(dir, &irel) {
                    let r = ImageRef { pool: pool.clone(), namespace: name.clone(), image };
                    out.push((r, irel));
                }
            }
        }
    }
    Ok(out)
}

/// `(stem, relative path)` of the `*.json` files in `dir/rel`.
fn json_files(dir: &Path, rel: &str) -> Result<Vec<(String, String)>, BundleError> {
    let path = dir.join(rel);
    let rd = match std::fs::read_dir(&path) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(source) => return Err(BundleError::Io { path, source }),
    };
    let mut out: Vec<(String, String)> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| Some((n.strip_suffix(".json")?.to_string(), format!("{rel}/{n}"))))
        .filter(|(stem, _)| !stem.is_empty())
        .collect();
    out.sort();
    Ok(out)
}
