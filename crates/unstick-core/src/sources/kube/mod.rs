//! Live Kubernetes data: one kube-runtime `watcher` per kind (a streaming or paginated initial
//! list, [`InitialList`], then a watch, with our backoff) feeding one of our
//! [`Store`](crate::sources::kube::store::Store)s (kube's reflector store copied every object's key), on the slim types of
//! [`crate::model::objects`] (what is not used is skipped at parse time). Events pass through
//! [`crate::model::event_bound::Bounder`]: only those about the watched kinds, bounded per object.
//!
//! Each kind reports its [`SourceState`] separately, so a 403 on one kind degrades one pane only.

pub mod client;
pub mod exec;
mod initial_list;
pub mod kind;
pub mod network_fence;
pub mod optional_kind;
pub mod remediators;
pub mod store;
mod stores;
pub mod unchanged;
pub mod watched;

use std::fmt::Debug;

use futures::StreamExt;
use jiff::Timestamp;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::utils::ResetTimerBackoff;
use kube::runtime::watcher::{self, Event as WEvent};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::watch;

use self::store::{Keyed, Store};
use crate::clock::SharedClock;
use crate::config::InitialList;
use crate::sources::kube::client::ApiSignals;
use crate::sources::kube::unchanged::Unchanged;
use crate::sources::kube::watched::{Watched, unwrap_event};

pub use crate::sources::kube::kind::WatchedKind;
pub use crate::sources::kube::stores::{Deltas, KubeStores};

/// The request that failed: the initial list or the watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// `list` (the initial or a re-list).
    List,
    /// `watch`.
    Watch,
}

impl Verb {
    /// `list` / `watch`, as RBAC spells the verb.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::List => "list",
            Verb::Watch => "watch",
        }
    }

    /// Which request a watcher error comes from.
    pub fn of(err: &watcher::Error) -> Verb {
        match err {
            watcher::Error::InitialListFailed(_) => Verb::List,
            _ => Verb::Watch,
        }
    }
}

/// Connection state of one watched kind.
///
/// Live means the initial list is complete and, since the last failure, the watch is known to be
/// established again (its request was answered 200) or an event arrived, and the API server's
/// `/readyz` answered ok at its last check. Anything else is shown as what it is, with the error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceState {
    /// Initial list not finished yet.
    Connecting,
    /// Initial list done; watch established; API server ready.
    Live,
    /// Was live; since `since` the watch failed (and is retried with backoff) or the API server
    /// is not ready. The data listed before is kept and shown.
    Stale {
        /// When the first failure was seen.
        since: Timestamp,
        /// The last error, naming the request and the server.
        error: String,
    },
    /// The API answered 403 to a list or watch of this resource.
    Forbidden {
        /// Which request was refused.
        verb: Verb,
        /// The server's message (`pods is forbidden: User "nobody" cannot list ...`).
        message: String,
    },
    /// Never got a complete list; the last error, naming the request and the server.
    Error(String),
}

impl SourceState {
    /// Next state after a watcher error on `kind`, given the current one and when it happened.
    /// `server` names the API server in the message.
    pub fn on_error(&self, kind: WatchedKind, server: &str, err: &watcher::Error, now: Timestamp) -> SourceState {
        let verb = Verb::of(err);
        if let Some(message) = forbidden_message(err) {
            return SourceState::Forbidden { verb, message };
        }
        let error = format!("{} {} at {server}: {}", verb.as_str(), kind.resource(), describe(err));
        match self {
            SourceState::Live => SourceState::Stale { since: now, error },
            SourceState::Stale { since, .. } => SourceState::Stale { since: *since, error },
            _ => SourceState::Error(error),
        }
    }

    /// What to show given the API server's readiness: a Live kind is Stale while `/readyz` fails,
    /// a kind still connecting shows the readiness error.
    pub fn with_health(&self, health: &ApiHealth) -> SourceState {
        match (self, health) {
            (SourceState::Live, ApiHealth::NotReady { since, error }) => {
                SourceState::Stale { since: *since, error: error.clone() }
            }
            (SourceState::Connecting, ApiHealth::NotReady { error, .. }) => SourceState::Error(error.clone()),
            (s, _) => s.clone(),
        }
    }
}

/// The API server's readiness, from `GET /readyz` every [`HEALTH_PERIOD`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ApiHealth {
    /// Not checked yet, or the check is not allowed (401/403): says nothing.
    #[default]
    Unknown,
    /// `/readyz` answered ok.
    Ready,
    /// `/readyz` failed since `since` (500 during an etcd outage, refused, timed out).
    NotReady {
        /// First failed check.
        since: Timestamp,
        /// The last failure, naming the server.
        error: String,
    },
}

/// How often `/readyz` is checked; each check is bounded by the client's timeouts.
pub const HEALTH_PERIOD: std::time::Duration = std::time::Duration::from_secs(5);

fn api_error(err: &watcher::Error) -> Option<&kube::Error> {
    match err {
        watcher::Error::InitialListFailed(e) | watcher::Error::WatchStartFailed(e) | watcher::Error::WatchFailed(e) => {
            Some(e)
        }
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

/// A kube-rs error as one line: `403 Forbidden: pods is forbidden: ...` for API answers, a
/// [`RequestTimeout`](crate::sources::kube::client::RequestTimeout) as itself (it names the server and the
/// request), else the root cause ("connection refused" says more than "client error").
pub fn describe_kube_error(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} {}: {}", s.code, s.reason, s.message),
        e => {
            if let Some(t) = request_timeout(e) {
                return t.to_string();
            }
            if let Some(kube::client::AuthError::AuthExecRun { out, .. }) = exec::auth_error(e) {
                // its own message holds the command's environment and raw output
                return format!("exec credential plugin failed ({})", out.status);
            }
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

/// The [`RequestTimeout`](crate::sources::kube::client::RequestTimeout) in `e`'s source chain, if any.
pub fn request_timeout(e: &kube::Error) -> Option<&crate::sources::kube::client::RequestTimeout> {
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        if let Some(t) = s.downcast_ref::<crate::sources::kube::client::RequestTimeout>() {
            return Some(t);
        }
        src = s.source();
    }
    None
}

/// Messages from the Kubernetes sources to the UI loop.
#[derive(Debug, Clone, PartialEq)]
pub enum KubeMsg {
    /// Objects of this kind changed (coalesced: not sent for every initial-list page item).
    Changed(WatchedKind),
    /// The connection state of this kind changed.
    State(WatchedKind, SourceState),
}

/// Starts one watcher task per kind on the current tokio runtime and returns the stores.
/// `namespace` limits Pods, PVCs and Events (cluster-scoped kinds are always watched whole).
/// Tasks end when `tx` is closed. Without [`ApiSignals`] (a simulated API server) a kind is Live
/// again after a failure only once an event arrives.
/// Lists are paginated (a simulated API server has no streaming lists).
pub fn start(client: Client, namespace: Option<&str>, tx: UnboundedSender<KubeMsg>, clock: SharedClock) -> KubeStores {
    start_with(client, namespace, tx, None, InitialList::Paginated, clock)
}

/// [`start`] on a client from [`connect`](crate::sources::kube::client::connect): kinds also become Live
/// when their watch is re-established, and a `/readyz` check every [`HEALTH_PERIOD`] marks them
/// Stale while the API server is not ready. `lists` says how each watcher takes its initial list.
pub fn start_with(
    client: Client,
    namespace: Option<&str>,
    tx: UnboundedSender<KubeMsg>,
    signals: Option<&ApiSignals>,
    lists: InitialList,
    clock: SharedClock,
) -> KubeStores {
    let health = signals.map(|s| spawn_health(client.clone(), s.server.clone(), clock.clone()));
    let ctx = |kind: WatchedKind| Watch {
        kind,
        lists,
        tx: tx.clone(),
        server: signals.map(|s| s.server.clone()).unwrap_or_else(|| "the API server".into()),
        established: signals.map(|s| s.established(kind)),
        health: health.clone(),
        clock: clock.clone(),
    };
    KubeStores {
        nodes: spawn_store(ctx(WatchedKind::Node), Api::all(client.clone())),
        pods: spawn_store(ctx(WatchedKind::Pod), scoped(&client, namespace)),
        pvcs: spawn_store(ctx(WatchedKind::Pvc), scoped(&client, namespace)),
        pvs: spawn_store(ctx(WatchedKind::Pv), Api::all(client.clone())),
        volume_attachments: spawn_store(ctx(WatchedKind::VolumeAttachment), Api::all(client.clone())),
        events: {
            let mut b = crate::model::event_bound::Bounder::default();
            spawn_filtered(ctx(WatchedKind::Event), scoped(&client, namespace), move |e| b.on(e))
        },
    }
}

/// The `Api` of a namespaced kind in `namespace`, or in all namespaces.
pub fn scoped<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    K::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// What one kind's task needs besides its Api.
struct Watch {
    kind: WatchedKind,
    lists: InitialList,
    tx: UnboundedSender<KubeMsg>,
    server: String,
    established: Option<watch::Receiver<u64>>,
    health: Option<watch::Receiver<ApiHealth>>,
    clock: SharedClock,
}

/// Waits for a change on `rx`; never resolves when there is no receiver (a `select!` branch
/// guarded by `is_some()`).
async fn changed<T>(rx: Option<&mut watch::Receiver<T>>) -> Result<(), watch::error::RecvError> {
    match rx {
        Some(rx) => rx.changed().await,
        None => std::future::pending().await,
    }
}

/// Checks `GET /readyz` every [`HEALTH_PERIOD`] until every receiver is gone.
fn spawn_health(client: Client, server: String, clock: SharedClock) -> watch::Receiver<ApiHealth> {
    let (tx, rx) = watch::channel(ApiHealth::Unknown);
    tokio::spawn(async move {
        loop {
            let req = http::Request::get("/readyz").body(Vec::new());
            let res = match req {
                Ok(req) => client.request_text(req).await,
                Err(e) => return tracing::error!(error = %e, "cannot build the /readyz request"),
            };
            let next = match res {
                Ok(_) => ApiHealth::Ready,
                Err(kube::Error::Api(s)) if s.code == 401 || s.code == 403 => ApiHealth::Unknown,
                Err(e) => {
                    // `/readyz` answers 500 with one `[+]name ok` / `[-]name failed: …` line per
                    // check: name the failed ones.
                    let why = match &e {
                        kube::Error::Api(s) if s.message.contains("[-]") => {
                            let failed: Vec<&str> =
                                s.message.lines().filter(|l| l.trim_start().starts_with("[-]")).collect();
                            format!("GET /readyz: {} {}", s.code, failed.join("; "))
                        }
                        e @ kube::Error::Api(_) => format!("GET /readyz: {}", describe_kube_error(e)),
                        // a RequestTimeout names the server and the request itself
                        e if request_timeout(e).is_some() => describe_kube_error(e),
                        e => format!("GET /readyz: {}", describe_kube_error(e)),
                    };
                    let why: String = why.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(160).collect();
                    let since = match &*tx.borrow() {
                        ApiHealth::NotReady { since, .. } => *since,
                        _ => clock.now(),
                    };
                    ApiHealth::NotReady { since, error: format!("API server {server} not ready: {why}") }
                }
            };
            tx.send_if_modified(|h| {
                if *h != next {
                    *h = next;
                    true
                } else {
                    false
                }
            });
            if tx.receiver_count() == 0 {
                return;
            }
            tokio::time::sleep(HEALTH_PERIOD).await;
        }
    });
    rx
}

fn spawn_store<K>(w: Watch, api: Api<Watched<K>>) -> Store<K>
where
    K: k8s_openapi::Resource + Keyed + Unchanged + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    spawn_filtered(w, api, |e| vec![e])
}

/// [`spawn_store`] with `filter` between the watcher and the store: each watcher event
/// becomes the events it returns (the Events' [`Bounder`](crate::model::event_bound::Bounder)).
/// The slim types skip `managedFields` and annotations at parse time: nothing to strip; the
/// watcher sees each object's `resourceVersion` ([`Watched`]), the store keeps the object alone.
/// An update that changes nothing the console keeps ([`Unchanged`]) is stored without waking
/// the console.
fn spawn_filtered<K, F>(w: Watch, api: Api<Watched<K>>, mut filter: F) -> Store<K>
where
    K: k8s_openapi::Resource + Keyed + Unchanged + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    F: FnMut(WEvent<K>) -> Vec<WEvent<K>> + Send + 'static,
{
    let (reader, mut writer) = store::store();
    let stream = initial_list::watcher(api, w.lists)
        .backoff(ResetTimerBackoff::new(retry_backoff(), std::time::Duration::from_secs(120)))
        .flat_map(move |item| {
            let out: Vec<Result<WEvent<K>, watcher::Error>> = match item {
                Ok(e) => filter(unwrap_event(e)).into_iter().map(Ok).collect(),
                Err(e) => vec![Err(e)],
            };
            futures::stream::iter(out)
        });
    tokio::spawn(async move {
        let Watch { kind, tx, server, mut established, mut health, clock, .. } = w;
        // `state` is what the watch itself says; what is shown also depends on `/readyz`.
        let mut state = SourceState::Connecting;
        let mut shown = state.clone();
        let _ = tx.send(KubeMsg::State(kind, shown.clone()));
        let mut stream = std::pin::pin!(stream);
        loop {
            let failed = matches!(state, SourceState::Stale { .. } | SourceState::Error(_));
            let (next, changed) = tokio::select! {
                item = stream.next() => match item {
                    Some(item) => match item {
                        Ok(mut ev) => {
                            // the comparison before the write
                            let quiet = match &mut ev {
                                WEvent::Apply(new) => writer.get_like(new).is_some_and(|old| K::unchanged(&old, new)),
                                _ => false,
                            };
                            let next = match ev {
                                WEvent::InitDone => (SourceState::Live, true),
                                WEvent::Apply(_) | WEvent::Delete(_) => {
                                    (if failed { SourceState::Live } else { state.clone() }, !quiet || failed)
                                }
                                WEvent::Init | WEvent::InitApply(_) => (state.clone(), false),
                            };
                            let listing = matches!(ev, WEvent::Init | WEvent::InitApply(_));
                            writer.apply(ev);
                            if listing {
                                continue;
                            }
                            next
                        }
                        Err(e) => {
                            tracing::warn!(resource = kind.resource(), error = %e, "watch failed");
                            let next = state.on_error(kind, &server, &e, clock.now());
                            // Only a watch established after this failure counts.
                            if let Some(rx) = established.as_mut() {
                                rx.borrow_and_update();
                            }
                            (next, false)
                        }
                    },
                    None => return,
                },
                Ok(()) = changed(established.as_mut()), if established.is_some() => {
                    (if matches!(state, SourceState::Stale { .. }) { SourceState::Live } else { state.clone() }, false)
                }
                Ok(()) = changed(health.as_mut()), if health.is_some() => {
                    (state.clone(), false)
                }
            };
            state = next;
            let now_shown = match &health {
                Some(h) => state.with_health(&h.borrow()),
                None => state.clone(),
            };
            if now_shown != shown {
                shown = now_shown;
                if tx.send(KubeMsg::State(kind, shown.clone())).is_err() {
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

/// The watchers' retry delays: 0.5 s doubling up to 5 s, no jitter, never giving up (backon's
/// exponential builder, as kube-runtime's own default uses; that default goes to 30 s, so after
/// a few API server restarts a kind would stay stale up to 30 s after the server is back).
pub fn retry_backoff() -> watcher::ExponentialBackoff {
    backon::ExponentialBuilder::default()
        .with_min_delay(std::time::Duration::from_millis(500))
        .with_max_delay(std::time::Duration::from_secs(5))
        .with_factor(2.0)
        .without_max_times()
        .into()
}

/// Builds a client from `kubeconfig` (or `$KUBECONFIG` / `~/.kube/config`) and `context` (or the
/// current context), bounded as [`connect`](crate::sources::kube::client::connect) describes. Returns the
/// client and the context name for display. Does not contact the API server: connection problems
/// show up later as per-kind source states.
///
/// Errors: unreadable or invalid kubeconfig, unknown context, bad credentials files.
pub async fn client(
    kubeconfig: Option<&std::path::Path>,
    context: Option<&str>,
) -> color_eyre::Result<(Client, String)> {
    let c = crate::sources::kube::client::connect(kubeconfig, context).await?;
    Ok((c.client, c.context))
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
        let srv = "https://127.0.0.1:6443";
        let f = SourceState::Connecting.on_error(WatchedKind::Pod, srv, &api_err(403), now);
        assert!(
            matches!(f, SourceState::Forbidden { verb: Verb::List, ref message } if message.contains("cannot list"))
        );
        let s = SourceState::Live.on_error(WatchedKind::Pod, srv, &api_err(500), now);
        assert!(
            matches!(s, SourceState::Stale { since, ref error } if since == now && error.starts_with("list pods at https://127.0.0.1:6443: 500")),
            "{s:?}"
        );
        let later = now + jiff::SignedDuration::from_secs(5);
        let s2 = s.on_error(WatchedKind::Pod, srv, &api_err(503), later);
        assert!(matches!(s2, SourceState::Stale { since, .. } if since == now), "stale keeps its first time");
        assert!(matches!(
            SourceState::Connecting.on_error(WatchedKind::Pod, srv, &api_err(500), now),
            SourceState::Error(_)
        ));
        let mut s = Status::failure("pods is forbidden: User \"nobody\" cannot watch resource \"pods\"", "Forbidden");
        s.code = 403;
        let w = watcher::Error::WatchStartFailed(kube::Error::Api(Box::new(s)));
        assert!(matches!(
            SourceState::Live.on_error(WatchedKind::Pod, srv, &w, now),
            SourceState::Forbidden { verb: Verb::Watch, .. }
        ));
    }

    #[test]
    fn retries_back_off_to_five_seconds_and_reset() {
        use kube::runtime::utils::Backoff;
        let mut b = retry_backoff();
        let v: Vec<u64> = b.by_ref().take(6).map(|d| d.as_millis() as u64).collect();
        assert_eq!(v, [500, 1000, 2000, 4000, 5000, 5000]);
        b.reset();
        assert_eq!(b.next(), Some(std::time::Duration::from_millis(500)));
    }

    #[test]
    fn readiness_overlays_the_watch_state() {
        let now = Timestamp::now();
        let bad = ApiHealth::NotReady { since: now, error: "API server x not ready".into() };
        assert!(matches!(SourceState::Live.with_health(&bad), SourceState::Stale { since, .. } if since == now));
        assert!(matches!(SourceState::Connecting.with_health(&bad), SourceState::Error(_)));
        assert_eq!(SourceState::Live.with_health(&ApiHealth::Ready), SourceState::Live);
        assert_eq!(SourceState::Live.with_health(&ApiHealth::Unknown), SourceState::Live);
    }
}
