//! A scan's images from a [`BulkRead`] (locks and metadata) and the OSDs' `dump_watchers`
//! (watchers): each image reported as the CLI path reports it ([`CephMsg::Image`], then
//! [`CephMsg::ImageMeta`] when it has clients, then [`CephMsg::ScanProgress`]).

use std::collections::HashMap;

use tokio::sync::mpsc::UnboundedSender;

use super::bulk::{BulkImage, BulkRead, ImageError};
use super::cli::{CephCli, CephError};
use super::{CephMsg, has_clients};
use crate::model::ceph::OsdWatch;
use crate::model::ceph::Watcher;
use crate::model::{CephReadError, ImageFacts, ImageRef, Observed};

/// How an error of the bulk reader names what it read, for messages.
fn cmd(image: &ImageRef) -> String {
    format!("bulk reader (python3 rados): locks and metadata of {}", image.spec())
}

fn failed(image: &ImageRef, e: &ImageError) -> CephReadError {
    let cmd = cmd(image);
    CephReadError::Failed(match e {
        ImageError::Ceph { errno, message } => CephError::Exit { cmd, code: *errno, stderr: message.clone() },
        ImageError::Shape(reason) => CephError::Parse { cmd, reason: reason.clone() },
    })
}

/// Why `image` has no line in `read`: its pool's error, the script's deadline, not in its pool,
/// or output that ended early or was not understood.
fn missing(image: &ImageRef, read: &BulkRead) -> CephReadError {
    let pool = read.pools.get(&(image.pool.clone(), image.namespace.clone()));
    let why = match (pool, read.end, &read.bad_lines) {
        (Some(Err(e)), _, _) => return failed(image, e),
        (_, Some(true), _) => return CephReadError::ScanDeadline { minutes: read.deadline_secs.div_ceil(60) },
        (Some(Ok(_)), Some(false), (0, _)) => {
            let pool = if image.namespace.is_empty() {
                image.pool.clone()
            } else {
                format!("{}/{}", image.pool, image.namespace)
            };
            return CephReadError::NotListed { image: image.spec(), pool };
        }
        (_, _, (n, Some(first))) => format!("{n} of its lines were not understood (the first: {first})"),
        (_, None, _) => "its output ended before its last line".to_string(),
        _ => "it printed no line for this image's pool".to_string(),
    };
    CephReadError::Failed(CephError::Parse { cmd: cmd(image), reason: why })
}

/// Reports every image of `images` from `read` and `watches` on `tx`, counting progress to
/// `images.len()`.
pub(super) fn report(
    cli: &CephCli,
    images: &[ImageRef],
    read: &BulkRead,
    watches: Vec<OsdWatch>,
    tx: &UnboundedSender<CephMsg>,
) {
    let mut by_image: HashMap<&ImageRef, &BulkImage> = read.images.iter().map(|i| (&i.image, i)).collect();
    let mut watchers: HashMap<String, Vec<Watcher>> = HashMap::new();
    for w in watches {
        watchers.entry(w.object).or_default().push(w.watcher);
    }
    let at = cli.now();
    let total = images.len();
    for (done, image) in images.iter().enumerate() {
        let (w, l, meta) = match by_image.remove(image) {
            Some(b) => {
                let header =
                    if b.id.is_empty() { format!("{}.rbd", image.image) } else { format!("rbd_header.{}", b.id) };
                let w = Ok(watchers.remove(&header).unwrap_or_default());
                match &b.read {
                    Ok((locks, meta)) => (w, Ok(locks.clone()), Some(meta.clone())),
                    Err(e) => (w, Err(failed(image, e)), None),
                }
            }
            None => {
                let e = missing(image, read);
                (Err(e.clone()), Err(e), None)
            }
        };
        let facts = ImageFacts { watchers: Observed { value: w, at }, locks: Observed { value: l, at } };
        let clients = has_clients(&facts);
        let _ = tx.send(CephMsg::Image { image: image.clone(), facts });
        if let Some(meta) = meta.filter(|_| clients) {
            let _ = tx.send(CephMsg::ImageMeta { image: image.clone(), meta: Observed { value: Ok(meta), at } });
        }
        let _ = tx.send(CephMsg::ScanProgress { done: done + 1, total });
    }
}
