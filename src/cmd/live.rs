//! One-shot reads of a live cluster for `diagnose` and `collect`: a paginated list of each kind
//! (each page under a kill timer) and a Ceph scan of every RBD image the PVs reference. A kind or
//! a Ceph read that fails is reported in `missing`; the rest is still used.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::NamespaceResourceScope;
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use unstick_core::clock::Clock;
use unstick_core::lineage::Lineage;
use unstick_core::model::Snapshot;
use unstick_core::model::objects::{Event, Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment};
use unstick_core::sources::ceph::cli::CephCli;
use unstick_core::sources::ceph::{self, CephMsg, CephRequest};
use unstick_core::sources::kube::watched::Watched;

pub use super::raw_list::ListError;

/// A kube-rs error as one line (see [`unstick_core::sources::kube::describe_kube_error`]).
pub fn describe(e: &kube::Error) -> String {
    unstick_core::sources::kube::describe_kube_error(e)
}

/// Lists every object of one kind `L` (in `namespace`, else all; `None` for a cluster-scoped
/// kind) with [`super::raw_list::list_raw`] (from the watch cache, streamed item by item), each
/// item parsed into its slim type (which keeps neither `managedFields` nor the other fields the
/// console does not read); sorts by namespace/name. Errors: as `list_raw`, and an item that does
/// not parse as `L` (the list is then reported as failed, with how many).
pub async fn list_all<L: Listable>(
    client: &Client,
    namespace: Option<&str>,
    timeout: Duration,
) -> Result<Vec<Arc<L>>, ListError> {
    /// The parsed objects and how many items did not parse.
    type Sink<L> = (Vec<Arc<L>>, usize);
    let each: fn(&mut Sink<L>, &str) = |(out, bad), raw| match serde_json::from_str::<L::Wire>(raw) {
        Ok(w) => out.push(Arc::new(L::from_wire(w))),
        Err(_) => *bad += 1,
    };
    let ((mut out, bad), r) =
        super::raw_list::list_raw::<L::Wire, _>(client, namespace, timeout, (vec![], 0), each).await;
    r?;
    if bad > 0 {
        return Err(ListError::bad_items(&<L::Wire as Resource>::plural(&()), bad, "not of its shape"));
    }
    out.sort_by(|a: &Arc<L>, b: &Arc<L>| a.sort_key().cmp(&b.sort_key()));
    Ok(out)
}

/// The six kinds as listed, of any [`Listable`] object types.
#[derive(Debug, Clone)]
pub struct Lists<N, P, C, V, A, E> {
    /// Nodes.
    pub nodes: Vec<Arc<N>>,
    /// Pods.
    pub pods: Vec<Arc<P>>,
    /// PVCs.
    pub pvcs: Vec<Arc<C>>,
    /// PVs.
    pub pvs: Vec<Arc<V>>,
    /// VolumeAttachments.
    pub volume_attachments: Vec<Arc<A>>,
    /// Events.
    pub events: Vec<Arc<E>>,
}

/// Lists the six kinds concurrently. `namespace` limits Pods, PVCs and Events. Returns the
/// slim snapshot (taken now; events bounded as [`unstick_core::model::event_bound`] says), one `missing`
/// line per kind that could not be listed, and the short `incomplete` entry for each
/// (`pods (403 Forbidden)`).
pub async fn kube_snapshot(
    client: &Client,
    namespace: Option<&str>,
    timeout: Duration,
    clock: &dyn Clock,
) -> (Snapshot, Vec<String>, Vec<String>) {
    let (l, missing, incomplete) =
        kube_lists::<Node, Pod, PersistentVolumeClaim, PersistentVolume, VolumeAttachment, Event>(
            client, namespace, timeout,
        )
        .await;
    let mut snap = Snapshot {
        nodes: l.nodes,
        pods: l.pods,
        pvcs: l.pvcs,
        pvs: l.pvs,
        volume_attachments: l.volume_attachments,
        events: l.events,
        ceph: Default::default(),
        taken_at: Some(clock.now()),
        server_version: unstick_core::remedy::playbook::version::read_server_version(client, timeout)
            .await
            .ok()
            .map(|v| (v.major, v.minor)),
        probe_addresses: Default::default(),
        network_fences: None,
        remediators: None,
        network_fence_classes: vec![],
        csiaddons_nodes: None,
    };
    unstick_core::model::event_bound::bound(&mut snap.events);
    // csi-addons' NetworkFences own the blocklist entries they made (not leftovers): listed
    // when the cluster answered at all; a failure is logged and the diagnosis goes on without
    // them (the six kinds' `missing` count says whether anything could be listed)
    if snap.nodes.len() + snap.pvs.len() + snap.pods.len() > 0 {
        match unstick_core::sources::kube::network_fence::read_all(client, timeout).await {
            Ok(c) => c.apply(&mut snap),
            Err(e) => tracing::warn!(error = %e, "NetworkFences not read"),
        }
        // Medik8s remediators acting on nodes (the findings and confirmations say so)
        snap.remediators = Some(unstick_core::sources::kube::remediators::list(client, timeout).await);
    }
    (snap, missing, incomplete)
}

/// [`kube_snapshot`]'s lists, in any object types.
pub async fn kube_lists<N, P, C, V, A, E>(
    client: &Client,
    namespace: Option<&str>,
    timeout: Duration,
) -> (Lists<N, P, C, V, A, E>, Vec<String>, Vec<String>)
where
    N: Listable,
    P: Listable<Wire: Resource<Scope = NamespaceResourceScope>>,
    C: Listable<Wire: Resource<Scope = NamespaceResourceScope>>,
    V: Listable,
    A: Listable,
    E: Listable<Wire: Resource<Scope = NamespaceResourceScope>>,
{
    let c = client.clone();
    let (n, p, pc, pv, va, ev) = tokio::join!(
        list_all::<N>(&c, None, timeout),
        list_all::<P>(&c, namespace, timeout),
        list_all::<C>(&c, namespace, timeout),
        list_all::<V>(&c, None, timeout),
        list_all::<A>(&c, None, timeout),
        list_all::<E>(&c, namespace, timeout),
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
    let lists = Lists {
        nodes: take!("nodes", n),
        pods: take!("pods", p),
        pvcs: take!("persistentvolumeclaims", pc),
        pvs: take!("persistentvolumes", pv),
        volume_attachments: take!("volumeattachments", va),
        events: take!("events", ev),
    };
    (lists, missing, incomplete)
}

/// An object type [`list_all`] lists: the slim ones through [`Watched`] (kube's `Api` needs an `ObjectMeta`; the version it holds is dropped).
pub trait Listable: Sized + Send + Sync + 'static {
    /// What the API answers are parsed as.
    type Wire: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug;
    /// The listed object from a parsed one.
    fn from_wire(w: Self::Wire) -> Self;
    /// (namespace, name): the order of the lists.
    fn sort_key(&self) -> (Option<&str>, Option<&str>);
}

macro_rules! listable {
    (slim: $($t:ty),*) => {$(
        impl Listable for $t {
            type Wire = Watched<$t>;
            fn from_wire(w: Watched<$t>) -> $t {
                w.into_inner()
            }
            fn sort_key(&self) -> (Option<&str>, Option<&str>) {
                (self.metadata.namespace.as_deref(), self.metadata.name.as_deref())
            }
        }
    )*};
}
listable!(slim: Node, Pod, PersistentVolumeClaim, PersistentVolume, VolumeAttachment, Event);

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
