//! The Ceph part of `unstick collect`: the console's scan ([`crate::sources::ceph::scan`]) written
//! into a bundle as it reads, so that a bundle of thousands of images is never held whole and a
//! Ceph that stops answering ends the part with what was read.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use futures::StreamExt;

use super::format::{BundleError, CephEnded, CephPart, Manifest};
use super::write::Writer;
use crate::model::{CephReadError, ImageRef};
use crate::sources::ceph::cli::CephCli;
use crate::sources::ceph::{self, CephMsg, Reading, ScanMethod};

/// The manifest `errors` key saying the Ceph part ended before every image was read.
pub const CEPH_STOPPED: &str = "ceph";

/// Reads the blocklist and `images` with the console's scan and the bulk reader
/// ([`ceph::bulk`]; the CLI when it cannot run: `manifest.ceph.reader` says which), `width`
/// images at a time (each call still bounded by the runner's `max_concurrent` and timeouts), and
/// writes each image's `status.json` / `locks.json` as soon as it is read, and the `meta.json`
/// of each image with a watcher or lock: from the bulk reader, else (`rbd image-meta list`)
/// `width` at a time after the scan. Failed reads go to
/// `manifest.errors`; `manifest.ceph` says how many images there were, how many were not read and
/// why the part ended early ([`CephEnded`]: Ceph stopped answering, or the scan's deadline), and
/// `errors[CEPH_STOPPED]` says it in words. `progress(done, total)` is called as images are read.
/// Errors: writing a file.
pub async fn ceph_to_bundle(
    cli: &CephCli,
    w: &Writer,
    images: Vec<ImageRef>,
    width: usize,
    manifest: &mut Manifest,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(), BundleError> {
    let started = Instant::now();
    let total = images.len();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let scan = async move { ceph::scan_with(cli, images, width, Reading::Bulk, &tx).await };
    let errors = &mut manifest.errors;
    let (mut with_clients, mut with_meta) = (vec![], HashSet::new());
    let write = async {
        let (mut not_read, mut example, mut method) = (0, None, None);
        while let Some(msg) = rx.recv().await {
            match msg {
                CephMsg::Image { image, facts } => {
                    let results = [facts.watchers.value.as_ref().err(), facts.locks.value.as_ref().err()];
                    if let Some(e) = results.into_iter().flatten().find(|e| not_read_by_scan(e)) {
                        not_read += 1;
                        example.get_or_insert_with(|| e.clone());
                    }
                    w.put_image(&image, &facts, errors)?;
                    if ceph::has_clients(&facts) {
                        with_clients.push(image);
                    }
                }
                CephMsg::ImageMeta { image, meta } => {
                    w.put_image_meta(&image, &meta, errors)?;
                    with_meta.insert(image);
                }
                CephMsg::Via(_) => {}
                CephMsg::Blocklist(b) => w.put_blocklist(&b, errors)?,
                CephMsg::ScanProgress { done, total } => progress(done, total),
                CephMsg::ScanDone { method: m, .. } => method = Some(m),
            }
        }
        Ok::<_, BundleError>((not_read, example, method))
    };
    let (reader, written) = tokio::join!(scan, write);
    let (not_read, example, method) = written?;
    let mut ended = match &example {
        Some(CephReadError::ScanDeadline { .. }) => Some(CephEnded::Deadline),
        Some(_) => Some(CephEnded::Unanswered),
        None => (method == Some(ScanMethod::Failed)).then_some(CephEnded::Unanswered),
    };
    with_clients.retain(|i| !with_meta.contains(i));
    if ended.is_none() && !put_metas(cli, w, with_clients, width, &mut manifest.errors).await? {
        ended = Some(CephEnded::Unanswered);
    }
    if ended.is_some() {
        let why = example.map_or_else(|| "Ceph stopped answering".into(), |e| e.to_string());
        let line = format!(
            "the Ceph part ended early: {not_read} of {total} images not read (the files written hold what was read): {why}"
        );
        manifest.errors.insert(CEPH_STOPPED.into(), line);
    }
    manifest.ceph = Some(CephPart {
        images: total,
        not_read,
        ended,
        millis: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        reader,
    });
    Ok(())
}

/// Reads and writes the `meta.json` of `images` (ceph-csi's client addresses, for attribution),
/// `width` at a time; after [`ceph::SCAN_UNANSWERED_STOP`] reads in a row without an answer the
/// rest are not read (each recorded in `errors`) and it returns false. Errors: writing a file.
async fn put_metas(
    cli: &CephCli,
    w: &Writer,
    images: Vec<ImageRef>,
    width: usize,
    errors: &mut BTreeMap<String, String>,
) -> Result<bool, BundleError> {
    let read = |image: ImageRef| async move {
        let meta = ceph::read_image_meta(cli, &image).await;
        (image, meta)
    };
    let mut reads = futures::stream::iter(images).map(read).buffer_unordered(width.max(1));
    let mut unanswered = 0;
    while let Some((image, meta)) = reads.next().await {
        let no_answer = matches!(&meta.value, Err(CephReadError::Failed(e)) if e.is_unanswered());
        unanswered = if no_answer { unanswered + 1 } else { 0 };
        w.put_image_meta(&image, &meta, errors)?;
        if unanswered >= ceph::SCAN_UNANSWERED_STOP {
            drop(reads); // kills the reads in flight
            return Ok(false);
        }
    }
    Ok(true)
}

/// True for the reads a scan gave up on (not a failure of that image's own read).
fn not_read_by_scan(e: &CephReadError) -> bool {
    matches!(
        e,
        CephReadError::ScanStopped(_) | CephReadError::ScanUnanswered { .. } | CephReadError::ScanDeadline { .. }
    )
}

#[cfg(test)]
#[path = "collect_tests.rs"]
mod collect_tests;
