//! The Ceph side of [`App`]: which image the Ceph pane follows, requests to the Ceph worker
//! (image, blocklist, scan, periodic refresh while visible) and its answers.

use jiff::Timestamp;

use super::app::{App, Effect, Pane, Subject};
use crate::model::ImageRef;
use crate::sources::ceph::{CephMsg, CephRequest, ScanMethod};

impl App {
    /// The RBD image the Ceph pane shows: the subject volume's, or the subject pod's first RBD
    /// volume's.
    pub fn subject_image(&self) -> Option<ImageRef> {
        match &self.subject {
            Subject::Volume(pv) => self.lineage.by_pv(pv)?.image.clone(),
            Subject::Pod(key) => self.lineage.volumes_of_pod(key).find_map(|v| v.image.clone()),
            _ => None,
        }
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
        if self.ceph.pending.contains(&image) || (!force && self.snap.ceph.images.contains_key(&image)) {
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
        vec![Effect::Ceph(CephRequest::Blocklist)]
    }

    /// `s`: starts a scan of every RBD-backed PV, or cancels the one running.
    pub(crate) fn start_scan(&mut self) -> Vec<Effect> {
        if !self.ceph.enabled {
            return vec![];
        }
        if let Some((done, total)) = self.ceph.scan.take() {
            self.ceph.last_scan = Some(format!("cancelled at {done}/{total} images"));
            return vec![Effect::Ceph(CephRequest::CancelScan)];
        }
        let images = self.lineage.images();
        self.ceph.scanned = true;
        self.ceph.scan = Some((0, images.len()));
        vec![Effect::Ceph(CephRequest::Scan(images))]
    }

    /// After a playbook call: the image it acts on and the blocklist are re-read at once, so
    /// findings the action resolved disappear without waiting for the next refresh.
    pub(crate) fn refresh_after_action(&mut self) -> Vec<Effect> {
        let Some(image) = self.remedy.playbook.as_ref().and_then(|pb| pb.playbook.scope.image.clone()) else {
            return vec![];
        };
        let mut fx = self.request_image_of(image, true);
        fx.extend(self.request_blocklist());
        fx
    }

    pub(crate) fn refresh_if_due(&mut self) -> Vec<Effect> {
        // the Findings pane's preview shows the selected finding's Ceph evidence: keep it fresh
        if !super::view::ceph_visible(self.size, self.focus) && self.focus != Pane::Findings {
            return vec![];
        }
        let Some(image) = self.subject_image() else { return vec![] };
        let every = self.cfg.ceph.refresh_seconds as i64;
        let now = self.now;
        let due = move |at: Timestamp| (now - at).get_seconds() >= every;
        let mut fx = vec![];
        match self.snap.ceph.images.get(&image).map(|f| due(f.watchers.at)) {
            Some(true) => fx.extend(self.request_image(true)),
            None => fx.extend(self.request_image(false)),
            Some(false) => {}
        }
        if self.snap.ceph.blocklist.as_ref().is_none_or(|b| due(b.at)) {
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
                self.ceph.last_refresh = Some(facts.watchers.at);
                self.snap.ceph.apply_image(image, facts);
            }
            CephMsg::Blocklist(b) => {
                self.ceph.blocklist_pending = false;
                self.ceph.last_refresh = Some(b.at);
                self.snap.ceph.apply_blocklist(b);
            }
            // after a cancel, late messages of the cancelled scan change nothing
            CephMsg::ScanProgress { done, total } if self.ceph.scan.is_some() => self.ceph.scan = Some((done, total)),
            CephMsg::ScanProgress { .. } => {}
            CephMsg::ScanDone { .. } if self.ceph.scan.is_none() => {}
            CephMsg::ScanDone { total, elapsed, method } => {
                self.ceph.scan = None;
                let how = match method {
                    ScanMethod::DumpWatchers => "dump_watchers",
                    ScanMethod::PerImage => "rbd status per image",
                    ScanMethod::Failed => "FAILED: Ceph not answering; last values kept",
                };
                self.ceph.last_scan = Some(format!("{total} images in {:.1}s ({how})", elapsed.as_secs_f64()));
            }
        }
    }
}
