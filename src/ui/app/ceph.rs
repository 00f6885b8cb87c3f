//! The Ceph side of [`App`]: which image the Ceph pane follows, requests to the Ceph worker
//! (image, blocklist, scan, periodic refresh while visible) and its answers.

use jiff::Timestamp;

use super::{App, Effect, Pane};
use unstick_core::model::ImageRef;
use unstick_core::sources::ceph::{CephMsg, CephRequest, ScanMethod};

impl App {
    /// The RBD image the Ceph pane shows: the subject volume's, or the subject pod's first RBD
    /// volume's.
    pub fn subject_image(&self) -> Option<ImageRef> {
        crate::ui::panes::image_of(&self.subject, &self.data.lineage)
    }

    pub(crate) fn request_image(&mut self, force: bool) -> Vec<Effect> {
        match self.subject_image() {
            Some(image) => self.request_image_of(image, force),
            None => vec![],
        }
    }

    /// Re-reads `image` (unless a read is in flight; unless known already, without `force`).
    pub(crate) fn request_image_of(&mut self, image: ImageRef, force: bool) -> Vec<Effect> {
        if !self.ceph.enabled {
            return vec![];
        }
        if self.ceph.pending.contains(&image) || (!force && self.data.snap.ceph.images.contains_key(&image)) {
            return vec![];
        }
        self.ceph.pending.insert(image.clone());
        vec![Effect::Ceph(CephRequest::Image(image))]
    }

    pub(crate) fn request_blocklist(&mut self) -> Vec<Effect> {
        if !self.ceph.enabled || self.ceph.blocklist_pending {
            return vec![];
        }
        self.ceph.blocklist_pending = true;
        vec![Effect::Ceph(CephRequest::Blocklist), Effect::Fences]
    }

    /// `s`: starts a scan of every RBD-backed PV, or cancels the one running.
    pub(crate) fn start_scan(&mut self) -> Vec<Effect> {
        if !self.ceph.enabled {
            return vec![];
        }
        // a scan started or cancelled by hand ends the automatic retries
        self.ceph.rescan_at = None;
        if let Some((done, total)) = self.ceph.scan.take() {
            self.ceph.last_scan = Some(format!("cancelled at {done}/{total} images"));
            return vec![Effect::Ceph(CephRequest::CancelScan)];
        }
        let images = self.data.lineage.images();
        self.ceph.scanned = true;
        self.ceph.scan = Some((0, images.len()));
        // the scan reads the blocklist too: the fences that own its entries with it
        vec![Effect::Ceph(CephRequest::Scan(images)), Effect::Fences]
    }

    /// Starts the scan again once the back-off after a failed one has passed (console clock).
    pub(crate) fn rescan_if_due(&mut self) -> Vec<Effect> {
        match self.ceph.rescan_at {
            Some(at) if self.now >= at && self.ceph.scan.is_none() => {
                let fx = self.start_scan();
                tracing::info!(failed = self.ceph.failed_scans, "rescan after a failed scan");
                fx
            }
            _ => vec![],
        }
    }

    /// After a playbook call: the image it acts on and the blocklist are re-read at once, so
    /// findings the action resolved disappear without waiting for the next refresh.
    pub(crate) fn refresh_after_action(&mut self) -> Vec<Effect> {
        let Some(image) = self.popups.playbook().and_then(|pb| pb.image().cloned()) else {
            return vec![];
        };
        let mut fx = self.request_image_of(image, true);
        fx.extend(self.request_blocklist());
        fx
    }

    pub(crate) fn refresh_if_due(&mut self) -> Vec<Effect> {
        // the Findings pane's preview shows the selected finding's Ceph evidence: keep it fresh
        if !crate::ui::view::ceph_visible(self.size, self.focus) && self.focus != Pane::Findings {
            return vec![];
        }
        let Some(image) = self.subject_image() else { return vec![] };
        let every = self.cfg.ceph.refresh_seconds as i64;
        let now = self.now;
        let due = move |at: Timestamp| (now - at).get_seconds() >= every;
        let mut fx = vec![];
        match self.data.snap.ceph.images.get(&image).map(|f| due(f.watchers.at)) {
            Some(true) => fx.extend(self.request_image(true)),
            None => fx.extend(self.request_image(false)),
            Some(false) => {}
        }
        if self.data.snap.ceph.blocklist.as_ref().is_none_or(|b| due(b.at)) {
            fx.extend(self.request_blocklist());
        }
        fx
    }

    pub(crate) fn on_ceph(&mut self, m: CephMsg) {
        // Answers are stamped on the program's clock by the Ceph runner (simulated time in
        // training: "read N ago" and evidence ages count simulated seconds).
        match m {
            CephMsg::Image { image, facts } => {
                self.ceph.pending.remove(&image);
                let ok = facts.watchers.value.is_ok() && facts.locks.value.is_ok();
                self.ceph.read_at(facts.watchers.at, ok);
                self.data.snap.ceph.apply_image(image, facts);
            }
            // a failed read keeps the metadata read before (the addresses do not go stale by it)
            CephMsg::ImageMeta { image, meta } => {
                let keep =
                    meta.value.is_err() && self.data.snap.ceph.image_meta.get(&image).is_some_and(|m| m.value.is_ok());
                if !keep {
                    self.data.snap.ceph.image_meta.insert(image, meta);
                }
            }
            CephMsg::Blocklist(b) => {
                self.ceph.blocklist_pending = false;
                self.ceph.read_at(b.at, b.value.is_ok());
                self.data.snap.ceph.apply_blocklist(b);
            }
            CephMsg::Via(via) => self.ceph.via = via,
            // after a cancel, late messages of the cancelled scan change nothing
            CephMsg::ScanProgress { done, total } if self.ceph.scan.is_some() => self.ceph.scan = Some((done, total)),
            CephMsg::ScanProgress { .. } => {}
            CephMsg::ScanDone { .. } if self.ceph.scan.is_none() => {}
            CephMsg::ScanDone { total, elapsed, method } => {
                self.ceph.scan = None;
                let secs = elapsed.as_secs_f64();
                // the status bar shows the part before " (" below 100 columns: a failed scan
                // must say so there too, not read as "N images in Xs"
                let text = match method {
                    ScanMethod::DumpWatchers => format!("{total} images in {secs:.1}s (dump_watchers)"),
                    ScanMethod::PerImage => format!("{total} images in {secs:.1}s (rbd status per image)"),
                    ScanMethod::Failed => {
                        self.ceph.failed_scans += 1;
                        let wait = rescan_backoff(self.ceph.failed_scans);
                        self.ceph.rescan_at = self.now.checked_add(wait).ok();
                        format!(
                            "FAILED, retry {}s (Ceph not answering after {secs:.1}s; last values of {total} images kept)",
                            wait.as_secs()
                        )
                    }
                };
                if method != ScanMethod::Failed {
                    self.ceph.failed_scans = 0;
                    self.ceph.rescan_at = None;
                }
                self.ceph.last_scan = Some(text);
            }
        }
    }
}

/// Wait before the automatic scan after `failed` failed scans in a row: 30 s, doubling, at
/// most 10 min. The selected image is still read every `refresh_seconds` meanwhile; the scan
/// tries the fast path (`dump_watchers`) first each time, so it returns to it once Ceph answers.
pub fn rescan_backoff(failed: u32) -> std::time::Duration {
    let secs = 30u64.saturating_mul(1u64 << failed.saturating_sub(1).min(10));
    std::time::Duration::from_secs(secs.min(600))
}
