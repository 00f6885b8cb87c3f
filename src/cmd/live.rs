//! One-shot reads of a live cluster for `diagnose` and `collect`: a paginated list of each kind
//! (each page under a kill timer) and a Ceph scan of every RBD image the PVs reference. A kind or
//! a Ceph read that fails is reported in `missing`; the rest is still used.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::Clock;
use k8s_openapi::api::core::v1::{Event, Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kube::api::{Api, ListParams};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::lineage::Lineage;
use crate::model::Snapshot;
use crate::sources::ceph::cli::CephCli;
use crate::sources::ceph::{self, CephMsg, CephRequest};

/// A kube-rs error as one line (see [`crate::sources::kube::describe_kube_error`]).
pub fn describe(e: &kube::Error) -> String {
    crate::sources::kube::describe_kube_error(e)
}

/// Why a kind could not be listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListError {
    /// A few words for the `incomplete` line (`403 Forbidden`, `timed out`, `error`).
    pub short: String,
    /// The whole error, naming the request.
    pub message: String,
}

/// Lists every object of one kind, 500 per page, each page within `timeout`; strips
/// `managedFields` and the last-applied annotation; sorts by namespace/name.
pub async fn list_all<K>(api: Api<K>, timeout: Duration) -> Result<Vec<Arc<K>>, ListError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
    K::DynamicType: Default,
{
    let mut out = vec![];
    let mut lp = ListParams::default().limit(500);
    let what = format!("list {}", K::plural(&Default::default()));
    loop {
        let page = match tokio::time::timeout(timeout, api.list(&lp)).await {
            Err(_) => {
                let message = format!("{what}: timed out after {} s", timeout.as_secs());
                return Err(ListError { short: "timed out".into(), message });
            }
            Ok(Err(e)) => {
                let short = match &e {
                    kube::Error::Api(s) => format!("{} {}", s.code, s.reason),
                    _ => "error".into(),
                };
                return Err(ListError { short, message: format!("{what}: {}", describe(&e)) });
            }
            Ok(Ok(p)) => p,
        };
        for mut o in page.items {
            o.managed_fields_mut().clear();
            o.annotations_mut().remove("kubectl.kubernetes.io/last-applied-configuration");
            out.push(Arc::new(o));
        }
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => lp = lp.continue_token(&c),
            _ => break,
        }
    }
    out.sort_by(|a: &Arc<K>, b: &Arc<K>| {
        (a.meta().namespace.as_deref(), a.meta().name.as_deref())
            .cmp(&(b.meta().namespace.as_deref(), b.meta().name.as_deref()))
    });
    Ok(out)
}

/// Lists the six kinds concurrently. `namespace` limits Pods, PVCs and Events. Returns the
/// snapshot (taken now), one `missing` line per kind that could not be listed, and the short
/// `incomplete` entry for each (`pods (403 Forbidden)`).
pub async fn kube_snapshot(
    client: &Client,
    namespace: Option<&str>,
    timeout: Duration,
    clock: &dyn Clock,
) -> (Snapshot, Vec<String>, Vec<String>) {
    let c = client.clone();
    let ns_api = |c: &Client| -> (Api<Pod>, Api<PersistentVolumeClaim>, Api<Event>) {
        match namespace {
            Some(ns) => {
                (Api::namespaced(c.clone(), ns), Api::namespaced(c.clone(), ns), Api::namespaced(c.clone(), ns))
            }
            None => (Api::all(c.clone()), Api::all(c.clone()), Api::all(c.clone())),
        }
    };
    let (pods, pvcs, events) = ns_api(&c);
    let (n, p, pc, pv, va, ev) = tokio::join!(
        list_all(Api::<Node>::all(c.clone()), timeout),
        list_all(pods, timeout),
        list_all(pvcs, timeout),
        list_all(Api::<PersistentVolume>::all(c.clone()), timeout),
        list_all(Api::<VolumeAttachment>::all(c.clone()), timeout),
        list_all(events, timeout),
    );
    let mut missing = vec![];
    let mut incomplete = vec![];
    let mut note = |what: &str, e: ListError| {
        missing.push(format!("kubernetes {what}: {}", e.message));
        incomplete.push(format!("{what} ({})", e.short));
    };
    macro_rules! take {
        ($what:expr, $r:expr) => {
            $r.unwrap_or_else(|e| {
                note($what, e);
                vec![]
            })
        };
    }
    let snap = Snapshot {
        nodes: take!("nodes", n),
        pods: take!("pods", p),
        pvcs: take!("persistentvolumeclaims", pc),
        pvs: take!("persistentvolumes", pv),
        volume_attachments: take!("volumeattachments", va),
        events: take!("events", ev),
        ceph: Default::default(),
        taken_at: Some(clock.now()),
    };
    (snap, missing, incomplete)
}

/// Reads watchers and locks of every image in `lineage` plus the blocklist into `snap`, with the
/// console's scan (one `dump_watchers` per OSD when allowed, else `rbd status` per image). Reads
/// that failed are returned as `missing` lines.
pub async fn ceph_facts(cli: CephCli, snap: &mut Snapshot, lineage: &Lineage) -> Vec<String> {
    let (req_tx, req_rx) = tokio::sync::mpsc::unbounded_channel();
    let (msg_tx, mut msg_rx) = tokio::sync::mpsc::unbounded_channel();
    ceph::spawn(cli, req_rx, msg_tx);
    let images = lineage.images();
    if req_tx.send(CephRequest::Scan(images)).is_err() {
        return vec!["ceph: the Ceph worker did not start".into()];
    }
    drop(req_tx);
    let mut missing = vec![];
    // the blocklist's failure, the example shown when every read failed
    let mut blocklist_failed = None;
    while let Some(msg) = msg_rx.recv().await {
        match msg {
            CephMsg::Image { image, facts } => {
                if let Err(e) = &facts.watchers.value {
                    missing.push(format!("ceph {image} watchers: {e}"));
                }
                if let Err(e) = &facts.locks.value {
                    missing.push(format!("ceph {image} locks: {e}"));
                }
                snap.ceph.images.insert(image, facts);
            }
            CephMsg::Blocklist(b) => {
                if let Err(e) = &b.value {
                    let line = format!("ceph blocklist: {e}");
                    blocklist_failed = Some(line.clone());
                    missing.push(line);
                }
                snap.ceph.blocklist = Some(b);
            }
            CephMsg::ScanDone { .. } => break,
            CephMsg::ScanProgress { .. } => {}
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }
    missing.sort();
    missing.dedup();
    // Ceph unreachable altogether: one line instead of one per image.
    let reads = snap.ceph.images.len() * 2 + usize::from(snap.ceph.blocklist.is_some());
    if missing.len() > 3 && missing.len() == reads {
        let first = blocklist_failed.unwrap_or_else(|| missing[0].clone());
        return vec![format!("ceph: all {reads} reads failed (nothing from Ceph was used); e.g. {first}")];
    }
    missing
}
