//! Live Kubernetes data: one kube-runtime `watcher` + `reflector` Store per kind (list-then-watch
//! with the default backoff; streaming lists are refused by 1.20 API servers). `managedFields` and
//! the last-applied annotation are stripped before objects are stored.
//!
//! Each kind reports its [`SourceState`] separately, so a 403 on one kind degrades one pane only.

use std::fmt::Debug;
use std::hash::Hash;

use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kube::api::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher::{self, Event as WEvent};
use kube::runtime::WatchStreamExt;
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc::UnboundedSender;

use crate::model::Snapshot;

/// The kinds the console watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// core/v1 Node
    Node,
    /// core/v1 Pod
    Pod,
    /// core/v1 PersistentVolumeClaim
    Pvc,
    /// core/v1 PersistentVolume
    Pv,
    /// storage.k8s.io/v1 VolumeAttachment
    VolumeAttachment,
    /// core/v1 Event
    Event,
}

impl Kind {
    /// All kinds, in status-bar order.
    pub const ALL: [Kind; 6] =
        [Kind::Node, Kind::Pod, Kind::Pvc, Kind::Pv, Kind::VolumeAttachment, Kind::Event];

    /// The plural resource name as the API (and RBAC) spells it.
    pub fn resource(self) -> &'static str {
        match self {
            Kind::Node => "nodes",
            Kind::Pod => "pods",
            Kind::Pvc => "persistentvolumeclaims",
            Kind::Pv => "persistentvolumes",
            Kind::VolumeAttachment => "volumeattachments",
            Kind::Event => "events",
        }
    }

    /// Short name for the status bar (`no`, `po`, `pvc`, `pv`, `va`, `ev`).
    pub fn short(self) -> &'static str {
        match self {
            Kind::Node => "no",
            Kind::Pod => "po",
            Kind::Pvc => "pvc",
            Kind::Pv => "pv",
            Kind::VolumeAttachment => "va",
            Kind::Event => "ev",
        }
    }
}

/// Connection state of one watched kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceState {
    /// Initial list not finished yet.
    Connecting,
    /// Initial list done; watch running.
    Live,
    /// Was live; the watch failed at `since` and is reconnecting with backoff. Data is kept.
    Stale {
        /// When the first failure was seen.
        since: Timestamp,
        /// The last error.
        error: String,
    },
    /// The API answered 403 to list/watch of this resource.
    Forbidden {
        /// The server's message (`pods is forbidden: User "nobody" cannot list ...`).
        message: String,
    },
    /// Never got a complete list; the last error.
    Error(String),
}

impl SourceState {
    /// Next state after a watcher error, given the current one and when it happened.
    pub fn on_error(&self, err: &watcher::Error, now: Timestamp) -> SourceState {
        if let Some(message) = forbidden_message(err) {
            return SourceState::Forbidden { message };
        }
        let error = describe(err);
        match self {
            SourceState::Live => SourceState::Stale { since: now, error },
            SourceState::Stale { since, .. } => SourceState::Stale { since: *since, error },
            _ => SourceState::Error(error),
        }
    }
}

fn api_error(err: &watcher::Error) -> Option<&kube::Error> {
    match err {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => Some(e),
        _ => None,
    }
}

fn forbidden_message(err: &watcher::Error) -> Option<String> {
    match (api_error(err), err) {
        (Some(kube::Error::Api(s)), _) if s.code == 403 => Some(s.message.clone()),
        (_, watcher::Error::WatchError(s)) if s.code == 403 => Some(s.message.clone()),
        _ => None,
    }
}

/// A one-line description of a watcher error for the status bar / pane.
pub fn describe(err: &watcher::Error) -> String {
    match api_error(err) {
        Some(e) => describe_kube_error(e),
        None => err.to_string(),
    }
}

/// A kube-rs error as one line: `403 Forbidden: pods is forbidden: ...` for API answers, else the
/// root cause ("connection refused" says more than "client error").
pub fn describe_kube_error(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} {}: {}", s.code, s.reason, s.message),
        e => {
            let mut msg = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(s) = src {
                msg = s.to_string();
                src = s.source();
            }
            msg
        }
    }
}

/// Messages from the Kubernetes sources to the UI loop.
#[derive(Debug, Clone, PartialEq)]
pub enum KubeMsg {
    /// Objects of this kind changed (coalesced: not sent for every initial-list page item).
    Changed(Kind),
    /// The connection state of this kind changed.
    State(Kind, SourceState),
}

/// The reflector Stores, one per kind. Cloning shares the stores.
#[derive(Clone)]
pub struct KubeStores {
    /// Nodes.
    pub nodes: Store<Node>,
    /// Pods.
    pub pods: Store<Pod>,
    /// PVCs.
    pub pvcs: Store<PersistentVolumeClaim>,
    /// PVs.
    pub pvs: Store<PersistentVolume>,
    /// VolumeAttachments.
    pub volume_attachments: Store<VolumeAttachment>,
    /// Events.
    pub events: Store<Event>,
}

impl KubeStores {
    /// Copies the current store contents (Arc pointers) into `snap`, sorted by namespace/name so
    /// that rendering is deterministic.
    pub fn fill(&self, snap: &mut Snapshot) {
        fn sorted<K: Resource + Clone>(s: &Store<K>) -> Vec<std::sync::Arc<K>>
        where
            K::DynamicType: Eq + Hash + Clone,
        {
            let mut v = s.state();
            v.sort_by(|a, b| {
                (a.meta().namespace.as_deref(), a.meta().name.as_deref())
                    .cmp(&(b.meta().namespace.as_deref(), b.meta().name.as_deref()))
            });
            v
        }
        snap.nodes = sorted(&self.nodes);
        snap.pods = sorted(&self.pods);
        snap.pvcs = sorted(&self.pvcs);
        snap.pvs = sorted(&self.pvs);
        snap.volume_attachments = sorted(&self.volume_attachments);
        snap.events = sorted(&self.events);
        snap.taken_at = Some(Timestamp::now());
    }
}

/// Starts one watcher task per kind on the current tokio runtime and returns the stores.
/// `namespace` limits Pods, PVCs and Events (cluster-scoped kinds are always watched whole).
/// Tasks end when `tx` is closed.
pub fn start(client: Client, namespace: Option<&str>, tx: UnboundedSender<KubeMsg>) -> KubeStores {
    let ns_api = |c: &Client| -> (Api<Pod>, Api<PersistentVolumeClaim>, Api<Event>) {
        match namespace {
            Some(ns) => (Api::namespaced(c.clone(), ns), Api::namespaced(c.clone(), ns), Api::namespaced(c.clone(), ns)),
            None => (Api::all(c.clone()), Api::all(c.clone()), Api::all(c.clone())),
        }
    };
    let (pods, pvcs, events) = ns_api(&client);
    KubeStores {
        nodes: spawn_reflector(Kind::Node, Api::all(client.clone()), tx.clone()),
        pods: spawn_reflector(Kind::Pod, pods, tx.clone()),
        pvcs: spawn_reflector(Kind::Pvc, pvcs, tx.clone()),
        pvs: spawn_reflector(Kind::Pv, Api::all(client.clone()), tx.clone()),
        volume_attachments: spawn_reflector(Kind::VolumeAttachment, Api::all(client), tx.clone()),
        events: spawn_reflector(Kind::Event, events, tx),
    }
}

fn spawn_reflector<K>(kind: Kind, api: Api<K>, tx: UnboundedSender<KubeMsg>) -> Store<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Default,
{
    let (reader, writer) = reflector::store();
    let stream = watcher(api.clone())
        .default_backoff()
        .modify(|o: &mut K| {
            o.managed_fields_mut().clear();
            o.annotations_mut().remove("kubectl.kubernetes.io/last-applied-configuration");
        });
    let stream = reflector::reflector(writer, stream);
    tokio::spawn(async move {
        let mut state = SourceState::Connecting;
        let _ = tx.send(KubeMsg::State(kind, state.clone()));
        let mut stream = std::pin::pin!(stream);
        // A resumed watch (same resourceVersion) emits nothing when nothing changed, so after a
        // failure a probe (`list ?limit=1`) tells when the API server answers again.
        let (probe_tx, mut probe_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let mut probing = false;
        loop {
            let next = tokio::select! {
                item = stream.next() => match item {
                    Some(item) => match &item {
                        Ok(WEvent::InitDone) => Some((SourceState::Live, true)),
                        Ok(WEvent::Apply(_) | WEvent::Delete(_)) => {
                            let live = matches!(state, SourceState::Stale { .. } | SourceState::Error(_));
                            Some((if live { SourceState::Live } else { state.clone() }, true))
                        }
                        Ok(WEvent::Init | WEvent::InitApply(_)) => None,
                        Err(e) => {
                            tracing::warn!(resource = kind.resource(), error = %e, "watch failed");
                            Some((state.on_error(e, Timestamp::now()), false))
                        }
                    },
                    None => return,
                },
                Some(()) = probe_rx.recv() => {
                    probing = false;
                    matches!(state, SourceState::Stale { .. }).then_some((SourceState::Live, false))
                }
            };
            let Some((next, changed)) = next else { continue };
            if matches!(next, SourceState::Stale { .. }) && !probing {
                probing = true;
                spawn_probe(api.clone(), probe_tx.clone());
            }
            if next != state {
                state = next;
                if tx.send(KubeMsg::State(kind, state.clone())).is_err() {
                    return;
                }
            }
            if changed && tx.send(KubeMsg::Changed(kind)).is_err() {
                return;
            }
        }
    });
    reader
}

/// Lists one object every 2 s (each call bounded to 5 s) until the API server answers, then
/// signals `ok` once.
fn spawn_probe<K>(api: Api<K>, ok: UnboundedSender<()>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    tokio::spawn(async move {
        let params = kube::api::ListParams::default().limit(1);
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
            if ok.is_closed() {
                return;
            }
            if let Ok(Ok(_)) = tokio::time::timeout(std::time::Duration::from_secs(5), api.list(&params)).await {
                let _ = ok.send(());
                return;
            }
        }
    });
}

fn watcher<K>(api: Api<K>) -> impl futures::Stream<Item = Result<WEvent<K>, watcher::Error>> + Send
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    // ListWatch (the default); pages of 500.
    watcher::watcher(api, watcher::Config::default())
}

/// Builds a client from `kubeconfig` (or `$KUBECONFIG` / `~/.kube/config`) and `context` (or the
/// current context). Returns the client and the context name for display. Does not contact the
/// API server: connection problems show up later as per-kind source states.
///
/// Errors: unreadable or invalid kubeconfig, unknown context, bad credentials files.
pub async fn client(
    kubeconfig: Option<&std::path::Path>,
    context: Option<&str>,
) -> color_eyre::Result<(Client, String)> {
    use color_eyre::eyre::WrapErr;
    use kube::config::{KubeConfigOptions, Kubeconfig};
    let kc = match kubeconfig {
        Some(p) => Kubeconfig::read_from(p).wrap_err_with(|| format!("reading kubeconfig {}", p.display()))?,
        None => Kubeconfig::read().wrap_err("reading kubeconfig ($KUBECONFIG or ~/.kube/config)")?,
    };
    let name = context.map(str::to_string).or_else(|| kc.current_context.clone()).unwrap_or_default();
    let opts = KubeConfigOptions { context: context.map(str::to_string), ..Default::default() };
    let cfg = kube::Config::from_custom_kubeconfig(kc, &opts)
        .await
        .wrap_err_with(|| format!("loading kubeconfig context {name:?}"))?;
    let client = Client::try_from(cfg).wrap_err("building the Kubernetes client")?;
    Ok((client, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn api_err(code: u16) -> watcher::Error {
        let mut s = Status::failure("pods is forbidden: User \"nobody\" cannot list resource \"pods\"", "Forbidden");
        s.code = code;
        watcher::Error::InitialListFailed(kube::Error::Api(Box::new(s)))
    }

    #[test]
    fn forbidden_and_stale_transitions() {
        let now = Timestamp::now();
        let f = SourceState::Connecting.on_error(&api_err(403), now);
        assert!(matches!(f, SourceState::Forbidden { ref message } if message.contains("cannot list")));
        let s = SourceState::Live.on_error(&api_err(500), now);
        assert!(matches!(s, SourceState::Stale { since, .. } if since == now));
        let later = now + jiff::SignedDuration::from_secs(5);
        let s2 = s.on_error(&api_err(503), later);
        assert!(matches!(s2, SourceState::Stale { since, .. } if since == now), "stale keeps its first time");
        assert!(matches!(SourceState::Connecting.on_error(&api_err(500), now), SourceState::Error(_)));
    }
}
