//! Ceph facts for the console: one image's watchers and locks, the blocklist, and a full scan of
//! every RBD-backed PV. All reads; each call bounded (see [`cli`]).
//!
//! The UI sends [`CephRequest`]s; answers come back as owned [`CephMsg`]s on a channel.

pub mod bulk;
mod bulk_scan;
pub mod cli;
pub mod parse;
pub mod rook;
pub mod transport;

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use futures::StreamExt;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use self::bulk::{BulkError, BulkRead, CephReader};
use self::cli::{CephCli, CephError, Tool};
use crate::model::ceph::{BlocklistEntry, Lock, Watcher};
use crate::model::{CephReadError, ImageFacts, ImageRef, Observed};

/// What the UI asks of Ceph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CephRequest {
    /// Read watchers and locks of one image.
    Image(ImageRef),
    /// Read `ceph osd blocklist ls`.
    Blocklist,
    /// Read watchers and locks of all these images (and the blocklist), with progress.
    Scan(Vec<ImageRef>),
    /// Stop the running scan (its processes are killed); the images read so far are kept.
    CancelScan,
}

/// How a scan read the watchers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanMethod {
    /// One `ceph tell osd.N dump_watchers` per OSD (needs admin caps).
    DumpWatchers,
    /// One `rbd status` per image.
    PerImage,
    /// Ceph did not answer the fast path (not a permission problem): no per-image reads were
    /// made; every image was reported failed.
    Failed,
}

/// Answers from the Ceph worker.
#[derive(Debug, Clone, PartialEq)]
pub enum CephMsg {
    /// Fresh facts for an image.
    Image {
        /// The image.
        image: ImageRef,
        /// Its watchers and locks (each may be an error).
        facts: ImageFacts,
    },
    /// An image's metadata (`rbd image-meta list`), read after its watchers and locks when it has
    /// any: ceph-csi's client addresses tie them to nodes ([`crate::attribution`]).
    ImageMeta {
        /// The image.
        image: ImageRef,
        /// Its metadata, or the error.
        meta: crate::model::ImageMeta,
    },
    /// A fresh blocklist (or the error).
    Blocklist(Observed<Result<Vec<BlocklistEntry>, CephReadError>>),
    /// Scan progress: `done` of `total` images read.
    ScanProgress {
        /// Images done.
        done: usize,
        /// Images in the scan.
        total: usize,
    },
    /// Where the calls run now ([`CephCli::via`]), sent after each image and blocklist read:
    /// `Some("rook toolbox rook-ceph/rook-ceph-tools-…")` in Rook mode once a pod is chosen.
    Via(Option<String>),
    /// The scan finished.
    ScanDone {
        /// Images read.
        total: usize,
        /// Wall time.
        elapsed: Duration,
        /// Which method was used.
        method: ScanMethod,
    },
}

/// Spawns the worker on the current runtime. It ends when `rx` closes.
pub fn spawn(cli: CephCli, mut rx: UnboundedReceiver<CephRequest>, tx: UnboundedSender<CephMsg>) {
    tokio::spawn(async move {
        let mut scanning: Option<tokio::task::AbortHandle> = None;
        while let Some(req) = rx.recv().await {
            let (cli, tx) = (cli.clone(), tx.clone());
            match req {
                CephRequest::Image(image) => {
                    tokio::spawn(async move {
                        let facts = read_image(&cli, &image).await;
                        let clients = has_clients(&facts);
                        let _ = tx.send(CephMsg::Image { image: image.clone(), facts });
                        let _ = tx.send(CephMsg::Via(cli.via()));
                        if clients {
                            let meta = read_image_meta(&cli, &image).await;
                            let _ = tx.send(CephMsg::ImageMeta { image, meta });
                        }
                    });
                }
                CephRequest::Blocklist => {
                    tokio::spawn(async move {
                        let _ = tx.send(CephMsg::Blocklist(read_blocklist(&cli).await));
                        let _ = tx.send(CephMsg::Via(cli.via()));
                    });
                }
                CephRequest::Scan(images) => {
                    let scanning_now = async move { scan(&cli, images, CONSOLE_SCAN_WIDTH, &tx).await };
                    scanning = Some(tokio::spawn(scanning_now).abort_handle());
                }
                // Aborting drops the scan's futures; the runner's children are kill_on_drop.
                CephRequest::CancelScan => {
                    if let Some(h) = scanning.take() {
                        h.abort();
                    }
                }
            }
        }
    });
}

fn observed<T>(cli: &CephCli, value: Result<T, CephError>) -> Observed<Result<T, CephReadError>> {
    Observed { value: value.map_err(CephReadError::Failed), at: cli.now() }
}

/// `rbd status` and `rbd lock ls` of one image, concurrently.
pub async fn read_image(cli: &CephCli, image: &ImageRef) -> ImageFacts {
    read_image_checked(cli, image).await.0
}

/// [`read_image`], and the error when neither read got an answer from the cluster (both failed,
/// neither for missing rights nor because the image is missing).
async fn read_image_checked(cli: &CephCli, image: &ImageRef) -> (ImageFacts, Option<CephError>) {
    let spec = image.spec();
    let status_args = ["status", spec.as_str()];
    let lock_args = ["lock", "ls", spec.as_str()];
    let (w, l) = tokio::join!(
        cli.run_parsed(Tool::Rbd, &status_args, parse::rbd_status),
        cli.run_parsed(Tool::Rbd, &lock_args, parse::rbd_lock_ls),
    );
    let unanswered = match (&w, &l) {
        (Err(a), Err(b)) if a.is_unanswered() && b.is_unanswered() => Some(a.clone()),
        _ => None,
    };
    (ImageFacts { watchers: observed(cli, w), locks: observed(cli, l) }, unanswered)
}

/// A per-image scan stops once this many images in a row got no answer from the cluster (the
/// rest are reported failed at once, like a fast path that got none): with Ceph gone mid-scan,
/// 2,000 images at up to 2 × 10 s each would otherwise take hours.
pub const SCAN_UNANSWERED_STOP: usize = 3;
/// A per-image scan ends after this long; the images not read by then are reported not read
/// (their last good values stay, marked unverified) and the next scan starts over.
pub const SCAN_DEADLINE: Duration = Duration::from_secs(15 * 60);

/// The console's scans read one image at a time (two processes of the runner's four), so the
/// selected image's reads always find a free slot.
pub const CONSOLE_SCAN_WIDTH: usize = 1;

/// True when `facts` name a client (a watcher or a lock): its metadata is worth reading.
pub fn has_clients(facts: &ImageFacts) -> bool {
    facts.watchers.value.as_ref().is_ok_and(|w| !w.is_empty())
        || facts.locks.value.as_ref().is_ok_and(|l| !l.is_empty())
}

/// `rbd image-meta list <image> --format json` (ceph-csi's client addresses are in it).
pub async fn read_image_meta(cli: &CephCli, image: &ImageRef) -> crate::model::ImageMeta {
    let spec = image.spec();
    observed(cli, cli.run_parsed(Tool::Rbd, &["image-meta", "list", spec.as_str()], parse::rbd_image_meta).await)
}

/// `ceph osd blocklist ls`.
pub async fn read_blocklist(cli: &CephCli) -> Observed<Result<Vec<BlocklistEntry>, CephReadError>> {
    observed(cli, cli.run_parsed(Tool::Ceph, &["osd", "blocklist", "ls"], parse::blocklist_ls).await)
}

/// How a scan reads locks (and, for the images with clients, metadata) on its fast path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// `rbd ls -l` per pool, then one `rbd lock ls` per locked image (metadata is not read).
    Cli,
    /// The bulk reader ([`bulk`]): one process reads every image's locks and metadata, which is
    /// sent as [`CephMsg::ImageMeta`] for each image with clients; when it cannot run here, [`Reading::Cli`].
    Bulk,
}

/// Reads the blocklist and, beside it, every image's watchers and locks (one `dump_watchers` per OSD when
/// allowed, else per image), `width` images at a time (each read still waits for the runner's
/// slots and has its timeouts); every image is reported on `tx`, then [`CephMsg::ScanDone`].
/// Ends without reading the rest when Ceph stops answering (see [`SCAN_UNANSWERED_STOP`]) or at
/// [`SCAN_DEADLINE`].
pub async fn scan(cli: &CephCli, images: Vec<ImageRef>, width: usize, tx: &UnboundedSender<CephMsg>) {
    scan_with(cli, images, width, Reading::Cli, tx).await;
}

/// [`scan`] reading locks as `reading` says; returns which reader read them (`None` when the fast
/// path did not run: Ceph did not answer, or per-image reads for want of `dump_watchers` rights).
pub async fn scan_with(
    cli: &CephCli,
    images: Vec<ImageRef>,
    width: usize,
    reading: Reading,
    tx: &UnboundedSender<CephMsg>,
) -> Option<CephReader> {
    let started = Instant::now();
    let total = images.len();
    let _ = tx.send(CephMsg::ScanProgress { done: 0, total });
    let width = width.max(1);
    // the blocklist beside the images' reads; the Rook pod they ran in is known after them
    let blocklist = async { tx.send(CephMsg::Blocklist(read_blocklist(cli).await)) };
    let (_, fast) = tokio::join!(blocklist, scan_dump_watchers(cli, &images, width, reading, tx));
    let _ = tx.send(CephMsg::Via(cli.via()));
    let mut reader = None;
    let method = match fast {
        Ok(r) => {
            reader = Some(r);
            ScanMethod::DumpWatchers
        }
        // Only missing caps justify one `rbd status` per image. A cluster that does not answer
        // (mon or OSD down, timeouts) would make that thousands of calls of 10 s each, starving
        // the selected image's reads: every image is reported failed at once instead (the
        // console keeps their last good values, marked unverified) and the next scan tries the
        // fast path again.
        Err(e) if !e.is_permission() => {
            tracing::warn!(error = %e, "scan: Ceph not answering, not falling back to per-image reads");
            report_not_read(cli, &images, 0, total, &CephReadError::ScanStopped(e), tx);
            ScanMethod::Failed
        }
        Err(e) => {
            tracing::info!(error = %e, "dump_watchers not allowed, scanning per image");
            scan_per_image(cli, &images, width, tx, tokio::time::Instant::now() + SCAN_DEADLINE).await
        }
    };
    let _ = tx.send(CephMsg::ScanDone { total, elapsed: started.elapsed(), method });
    reader
}

/// Reports `images` as not read (`why`), counting progress on from `done` of `total`.
fn report_not_read(
    cli: &CephCli,
    images: &[ImageRef],
    done: usize,
    total: usize,
    why: &CephReadError,
    tx: &UnboundedSender<CephMsg>,
) {
    let at = cli.now();
    for (k, image) in images.iter().enumerate() {
        let facts = ImageFacts {
            watchers: Observed { value: Err(why.clone()), at },
            locks: Observed { value: Err(why.clone()), at },
        };
        let _ = tx.send(CephMsg::Image { image: image.clone(), facts });
        let _ = tx.send(CephMsg::ScanProgress { done: done + k + 1, total });
    }
}

/// `width` images at a time (two processes each: status and lock ls; the console's width 1 leaves
/// the runner's other slots to the selected image), reported in order. Stops after
/// [`SCAN_UNANSWERED_STOP`] images in a row without an answer ([`ScanMethod::Failed`]: the next
/// scan tries the fast path again) or at `deadline`; either way every image is reported.
async fn scan_per_image(
    cli: &CephCli,
    images: &[ImageRef],
    width: usize,
    tx: &UnboundedSender<CephMsg>,
    deadline: tokio::time::Instant,
) -> ScanMethod {
    let total = images.len();
    let mut unanswered = 0;
    let read = |image: ImageRef| async move { read_image_checked(cli, &image).await };
    let mut reads = futures::stream::iter(images.iter().cloned()).map(read).buffered(width);
    for (done, image) in images.iter().enumerate() {
        let Ok(Some((facts, failed))) = tokio::time::timeout_at(deadline, reads.next()).await else {
            let why = CephReadError::ScanDeadline { minutes: SCAN_DEADLINE.as_secs() / 60 };
            tracing::warn!(read = done, total, "scan: deadline passed");
            report_not_read(cli, &images[done..], done, total, &why, tx);
            return ScanMethod::PerImage;
        };
        let _ = tx.send(CephMsg::Image { image: image.clone(), facts });
        let _ = tx.send(CephMsg::ScanProgress { done: done + 1, total });
        match failed {
            None => unanswered = 0,
            Some(e) => {
                unanswered += 1;
                if unanswered >= SCAN_UNANSWERED_STOP {
                    tracing::warn!(error = %e, "scan: Ceph stopped answering, per-image scan stopped");
                    let why = CephReadError::ScanUnanswered { images: unanswered, last: e };
                    report_not_read(cli, &images[done + 1..], done + 1, total, &why, tx);
                    return ScanMethod::Failed;
                }
            }
        }
    }
    ScanMethod::PerImage
}

/// Fast path: `rbd ls -l` per pool (image ids and which images are locked) while one
/// `dump_watchers` per OSD runs beside it, then `rbd lock ls` only for images that `ls -l` reports
/// locked, `width` at a time (images are reported as they are read, not in order).
/// Once [`SCAN_UNANSWERED_STOP`] lock reads in a row got no answer, the other images' locks are
/// reported not read (their watchers are known). With [`Reading::Bulk`] the bulk reader replaces
/// `ls -l` and the lock reads (ids, locks and metadata of every image in one process; see
/// [`bulk`]) unless it cannot run here. Returns which reader read the locks.
async fn scan_dump_watchers(
    cli: &CephCli,
    images: &[ImageRef],
    width: usize,
    reading: Reading,
    tx: &UnboundedSender<CephMsg>,
) -> Result<CephReader, CephError> {
    let mut pools: BTreeMap<String, Vec<&ImageRef>> = BTreeMap::new();
    for i in images {
        let key = if i.namespace.is_empty() { i.pool.clone() } else { format!("{}/{}", i.pool, i.namespace) };
        pools.entry(key).or_default().push(i);
    }
    // The listings and the watchers are independent reads: both at once (`ls -l` is the long one).
    let listings = async {
        let mut all = vec![];
        let mut bulk_unavailable = None;
        if reading == Reading::Bulk {
            let specs: Vec<String> = pools.keys().cloned().collect();
            match bulk::read(cli, &specs, images.len()).await {
                Ok(read) => return Ok(Listing::Bulk(read)),
                Err(BulkError::Failed(e)) => return Err(e),
                Err(BulkError::Unavailable(why)) => {
                    tracing::info!(error = %why, "scan: the bulk reader cannot run; reading with the rbd CLI");
                    bulk_unavailable = Some(why.to_string());
                }
            }
        }
        for (pool_spec, wanted) in &pools {
            // `ls -l` opens every image of the pool, not only the wanted ones: its time grows with
            // the pool's images, which `rbd ls` (names only) counts first
            let names = cli.run_parsed(Tool::Rbd, &["ls", pool_spec.as_str()], parse::rbd_ls).await?;
            let secs = cli.bulk_timeout(names.len().max(wanted.len()));
            let args = ["ls", "-l", pool_spec.as_str()];
            all.push((pool_spec, wanted, cli.run_parsed_within(Tool::Rbd, &args, secs, parse::rbd_ls_long).await?));
        }
        Ok::<_, CephError>(Listing::Cli(all, bulk_unavailable))
    };
    let watches = async {
        let osds = cli.run_parsed(Tool::Ceph, &["osd", "ls"], parse::osd_ls).await?;
        let mut all = vec![];
        for osd in osds {
            let target = format!("osd.{osd}");
            all.extend(cli.run_parsed(Tool::Ceph, &["tell", &target, "dump_watchers"], parse::dump_watchers).await?);
        }
        Ok::<_, CephError>(all)
    };
    // The watchers' error comes first (missing caps mean per-image reads, whatever `ls -l` says)
    // and ends both at once (the listing's process is killed as its future is dropped).
    tokio::pin!(listings, watches);
    let (listings, watches) = tokio::select! {
        w = &mut watches => {
            let w = w?;
            (listings.await?, w)
        }
        l = &mut listings => {
            let w = watches.await?;
            (l?, w)
        }
    };
    let (listings, bulk_unavailable) = match listings {
        Listing::Bulk(read) => {
            bulk_scan::report(cli, images, &read, watches, tx);
            return Ok(read.reader());
        }
        Listing::Cli(all, why) => (all, why),
    };
    // header object -> image, and the set of locked images
    let mut by_header: HashMap<String, ImageRef> = HashMap::new();
    let mut locked: Vec<ImageRef> = vec![];
    let mut listed: Vec<ImageRef> = vec![];
    for (pool_spec, wanted, listing) in listings {
        let by_name: HashMap<&str, _> = listing.iter().map(|l| (l.image.as_str(), l)).collect();
        for w in wanted {
            match by_name.get(w.image.as_str()) {
                Some(l) => {
                    if let Some(id) = &l.id {
                        by_header.insert(format!("rbd_header.{id}"), (*w).clone());
                    }
                    if l.lock_type.is_some() {
                        locked.push((*w).clone());
                    }
                    listed.push((*w).clone());
                }
                None => {
                    // Not in the pool: report it as rbd itself would.
                    let msg = CephReadError::NotListed { image: w.spec(), pool: pool_spec.clone() };
                    let at = cli.now();
                    let facts = ImageFacts {
                        watchers: Observed { value: Err(msg.clone()), at },
                        locks: Observed { value: Err(msg), at },
                    };
                    let _ = tx.send(CephMsg::Image { image: (*w).clone(), facts });
                }
            }
        }
    }
    let mut watchers: HashMap<ImageRef, Vec<Watcher>> = HashMap::new();
    for w in watches {
        if let Some(image) = by_header.get(&w.object) {
            watchers.entry(image.clone()).or_default().push(w.watcher);
        }
    }
    let at = cli.now();
    let total = images.len();
    let mut done = 0;
    let mut report = |image: ImageRef, locks: Result<Vec<Lock>, CephReadError>| {
        let facts = ImageFacts {
            watchers: Observed { value: Ok(watchers.remove(&image).unwrap_or_default()), at },
            locks: Observed { value: locks, at: cli.now() },
        };
        let _ = tx.send(CephMsg::Image { image, facts });
        done += 1;
        let _ = tx.send(CephMsg::ScanProgress { done, total });
    };
    // the unlocked images are known now; only the locked ones need a read each
    let (locked, unlocked): (Vec<ImageRef>, Vec<ImageRef>) = listed.into_iter().partition(|i| locked.contains(i));
    for image in unlocked {
        report(image, Ok(vec![]));
    }
    let read_locks = |image: ImageRef| async move {
        let read = cli.run_parsed(Tool::Rbd, &["lock", "ls", &image.spec()], parse::rbd_lock_ls).await;
        (image, read)
    };
    let mut reads = futures::stream::iter(locked.iter().cloned()).map(read_locks).buffer_unordered(width);
    let mut unanswered: Option<(usize, CephError)> = None;
    let mut reported = std::collections::HashSet::new();
    while let Some((image, read)) = reads.next().await {
        reported.insert(image.clone());
        match read {
            Ok(l) => {
                unanswered = None;
                report(image, Ok(l));
            }
            Err(e) => {
                let n = unanswered.as_ref().map_or(0, |(n, _)| *n) + 1;
                unanswered = e.is_unanswered().then(|| (n, e.clone()));
                report(image, Err(CephReadError::Failed(e)));
            }
        }
        if let Some((n, last)) = unanswered.as_ref().filter(|(n, _)| *n >= SCAN_UNANSWERED_STOP) {
            // the reads in flight are dropped (their processes killed); the rest not read
            let why = CephReadError::ScanUnanswered { images: *n, last: last.clone() };
            drop(reads);
            for image in locked.into_iter().filter(|i| !reported.contains(i)) {
                report(image, Err(why.clone()));
            }
            break;
        }
    }
    Ok(CephReader::Cli { bulk_unavailable })
}

/// What a scan's fast path listed: the bulk reader's images, or per pool `rbd ls -l` (with why
/// the bulk reader was not used, when it was asked for).
enum Listing<'a> {
    Bulk(BulkRead),
    Cli(Vec<(&'a String, &'a Vec<&'a ImageRef>, Vec<crate::model::ceph::ImageListing>)>, Option<String>),
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod scan_tests;
