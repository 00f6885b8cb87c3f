//! What the console knows of its Ceph reads: requests in flight, scans, the back-off after failed
//! scans. The Ceph pane and the status line show it; the app's Ceph side (`app/ceph.rs`) keeps it.

use std::collections::HashSet;

use jiff::Timestamp;
use unstick_core::model::ImageRef;

/// Ceph pane status.
#[derive(Debug, Clone, Default)]
pub struct CephStatus {
    /// When a Ceph read last succeeded (an answer that is an error does not count: the data
    /// shown is as old as the last success).
    pub last_refresh: Option<Timestamp>,
    /// When the last Ceph answer that was an error arrived (a read that failed: the status bar
    /// says the data is older than the last attempt).
    pub last_failure: Option<Timestamp>,
    /// Images with a request in flight.
    pub pending: HashSet<ImageRef>,
    /// Blocklist request in flight.
    pub blocklist_pending: bool,
    /// Scan progress (done, total) while a scan runs.
    pub scan: Option<(usize, usize)>,
    /// Summary of the last finished scan.
    pub last_scan: Option<String>,
    /// A scan has been started at least once.
    pub scanned: bool,
    /// Scans in a row that ended `Failed` (Ceph not answering).
    pub failed_scans: u32,
    /// When the next scan starts by itself after a failed one (back-off: 30 s doubling, at most
    /// 10 min).
    pub rescan_at: Option<Timestamp>,
    /// Where the Ceph calls run, when it is worth saying (Rook mode: `rook toolbox
    /// rook-ceph/rook-ceph-tools-…` or `rook operator …`, the pod chosen this session).
    pub via: Option<String>,
    /// False when the console runs without Ceph access.
    pub enabled: bool,
}

impl CephStatus {
    /// A Ceph answer stamped `at` arrived: a success moves [`CephStatus::last_refresh`], an
    /// error [`CephStatus::last_failure`].
    pub fn read_at(&mut self, at: Timestamp, ok: bool) {
        let slot = if ok { &mut self.last_refresh } else { &mut self.last_failure };
        *slot = Some(at);
    }

    /// True when the newest answer was an error (the data shown is older than the last attempt).
    pub fn failing(&self) -> bool {
        match (self.last_failure, self.last_refresh) {
            (Some(f), Some(r)) => f > r,
            (Some(_), None) => true,
            _ => false,
        }
    }
}
