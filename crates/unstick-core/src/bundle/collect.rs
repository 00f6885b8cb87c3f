//! The Ceph part of `unstick collect`: the console's scan ([`crate::sources::ceph::scan`]) written
//! into a bundle as it reads, so that a bundle of thousands of images is never held whole and a
//! Ceph that stops answering ends the part with what was read.

use super::format::{BundleError, Manifest};
use super::write::Writer;
use crate::model::{CephReadError, ImageRef};
use crate::sources::ceph::cli::CephCli;
use crate::sources::ceph::{self, CephMsg, ScanMethod};

/// The manifest `errors` key saying the Ceph part ended before every image was read.
pub const CEPH_STOPPED: &str = "ceph";

/// Reads the blocklist and `images` with the console's scan, `width` images at a time (each
/// call still bounded by the runner's `max_concurrent` and timeouts), and writes each image's
/// `status.json` / `locks.json` as soon as it is read, then the `meta.json` (`rbd image-meta
/// list`) of each image with a watcher or lock. Failed reads go to `manifest.errors`;
/// when the scan ended before reading every image (Ceph stopped answering, or its deadline),
/// [`CEPH_STOPPED`] says how many were not read and why. `progress(done, total)` is called as
/// images are read. Errors: writing a file.
pub async fn ceph_to_bundle(
    cli: &CephCli,
    w: &Writer,
    images: Vec<ImageRef>,
    width: usize,
    manifest: &mut Manifest,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(), BundleError> {
    let total = images.len();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let scan = async move { ceph::scan(cli, images, width, &tx).await };
    let errors = &mut manifest.errors;
    let mut with_clients = vec![];
    let write = async {
        let (mut not_read, mut example, mut method) = (0, None, None);
        while let Some(msg) = rx.recv().await {
            match msg {
                CephMsg::Image { image, facts } => {
                    let results = [facts.watchers.value.as_ref().err(), facts.locks.value.as_ref().err()];
                    if let Some(e) = results.into_iter().flatten().find(|e| not_read_by_scan(e)) {
                        not_read += 1;
                        example.get_or_insert_with(|| e.to_string());
                    }
                    w.put_image(&image, &facts, errors)?;
                    if ceph::has_clients(&facts) {
                        with_clients.push(image);
                    }
                }
                CephMsg::ImageMeta { .. } | CephMsg::Via(_) => {}
                CephMsg::Blocklist(b) => w.put_blocklist(&b, errors)?,
                CephMsg::ScanProgress { done, total } => progress(done, total),
                CephMsg::ScanDone { method: m, .. } => method = Some(m),
            }
        }
        Ok::<_, BundleError>((not_read, example, method))
    };
    let ((), written) = tokio::join!(scan, write);
    let (not_read, example, method) = written?;
    // the metadata of the images with a client: ceph-csi's client addresses (attribution)
    for image in with_clients {
        let meta = ceph::read_image_meta(cli, &image).await;
        w.put_image_meta(&image, &meta, &mut manifest.errors)?;
    }
    if not_read > 0 || method == Some(ScanMethod::Failed) {
        let why = example.unwrap_or_else(|| "Ceph stopped answering".into());
        let line = format!(
            "the Ceph part ended early: {not_read} of {total} images not read (the files written hold what was read): {why}"
        );
        manifest.errors.insert(CEPH_STOPPED.into(), line);
    }
    Ok(())
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
