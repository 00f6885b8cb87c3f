//! The Kubernetes client the console and `diagnose` use: kube-rs with bounded requests and a
//! signal per kind when a watch is established.
//!
//! - connect timeout 10 s ([`CONNECT_TIMEOUT`]); response headers within 15 s
//!   ([`HEADERS_TIMEOUT`], every request, watches included: the API server sends a watch's headers
//!   at once); the body of a non-watch request within 60 s ([`BODY_TIMEOUT`]). A server that
//!   accepts and never answers, or trickles bytes, fails the request instead of hanging it.
//! - kube-client's built-in retries (15 attempts on 429/503/504, minutes in total) are off: the
//!   watchers have their own backoff, and a console started during an etcd outage must show the
//!   error at once, not "listing…".
//! - A watch request answered `200` bumps that kind's counter in [`ApiSignals`]: after a failure,
//!   that (or an event) is what makes the kind Live again, not a successful list.

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use color_eyre::eyre::WrapErr;
use futures::future::BoxFuture;
use http::{Request, Response};
use kube::client::{Body, ClientBuilder};
use kube::config::{KubeConfigOptions, Kubeconfig};
use tokio::sync::watch;
use tower::{BoxError, Layer, Service};

use crate::sources::kube::kind::WatchedKind;

/// TCP + TLS connect timeout.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Time from sending a request to its response headers.
pub const HEADERS_TIMEOUT: Duration = Duration::from_secs(15);
/// Time from sending a non-watch request to the end of its body (one page of a list).
pub const BODY_TIMEOUT: Duration = Duration::from_secs(60);

/// A request that took too long. Typed so that callers can tell it from a server's answer.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{what} {method} {path}: no {part} within {} s", after.as_secs())]
pub struct RequestTimeout {
    /// The server URL (`https://10.0.0.1:6443`).
    pub what: String,
    /// HTTP method.
    pub method: String,
    /// Path and query of the request.
    pub path: String,
    /// `response headers` or `complete response body`.
    pub part: &'static str,
    /// The bound that was exceeded.
    pub after: Duration,
}

/// Shared between the client layer and the watcher tasks: one counter per kind, bumped each time
/// a watch request of that kind is answered 200 (the watch is established).
#[derive(Clone)]
pub struct ApiSignals {
    /// The API server URL, for messages.
    pub server: String,
    established: Arc<Vec<(WatchedKind, watch::Sender<u64>)>>,
}

impl ApiSignals {
    fn new(server: String) -> Self {
        let established = WatchedKind::ALL.iter().map(|k| (*k, watch::channel(0u64).0)).collect();
        ApiSignals { server, established: Arc::new(established) }
    }

    /// A receiver of `kind`'s established-watch counter.
    pub fn established(&self, kind: WatchedKind) -> watch::Receiver<u64> {
        self.sender(kind).subscribe()
    }

    fn sender(&self, kind: WatchedKind) -> &watch::Sender<u64> {
        // every kind is in the list (built from WatchedKind::ALL)
        &self.established.iter().find(|(k, _)| *k == kind).unwrap_or(&self.established[0]).1
    }

    fn watch_established(&self, path: &str) {
        let resource = path.split('?').next().unwrap_or("").rsplit('/').next().unwrap_or("");
        if let Some(kind) = WatchedKind::ALL.iter().find(|k| k.resource() == resource) {
            self.sender(*kind).send_modify(|n| *n += 1);
        }
    }
}

/// A client from the kubeconfig, with the bounds of the module doc, plus its [`ApiSignals`].
pub struct ApiConnection {
    /// The client.
    pub client: kube::Client,
    /// The context name, for display.
    pub context: String,
    /// Watch-established signals and the server URL.
    pub signals: ApiSignals,
}

/// How to connect: kubectl's `--kubeconfig`, `--context`, `--as`, `--as-group` and
/// `--request-timeout`.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// One kubeconfig file; `None`: `$KUBECONFIG` (several files joined by the platform's path
    /// separator, merged as kubectl merges them: the first file to set a name or
    /// `current-context` wins), then `~/.kube/config`.
    pub kubeconfig: Option<PathBuf>,
    /// The context; `None`: the kubeconfig's `current-context`.
    pub context: Option<String>,
    /// Act as this user and groups (the `Impersonate-User` / `Impersonate-Group` headers).
    pub impersonate: Option<Impersonate>,
    /// Bound on each non-watch request, whole (headers and body); `None`: [`HEADERS_TIMEOUT`] and
    /// [`BODY_TIMEOUT`]. Watches keep [`HEADERS_TIMEOUT`] for their headers either way.
    pub request_timeout: Option<Duration>,
}

/// A user (and groups) to act as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Impersonate {
    /// `Impersonate-User`.
    pub user: String,
    /// One `Impersonate-Group` header each.
    pub groups: Vec<String>,
}

/// The context asked for (or the kubeconfig's current one) is not in the kubeconfig.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownContext {
    /// The context asked for; `None` when none was and the kubeconfig has no current-context.
    pub name: Option<String>,
    /// The kubeconfig's contexts, in file order (merged files: first file first).
    pub known: Vec<String>,
}

impl std::fmt::Display for UnknownContext {
    /// `no context "prod" in the kubeconfig; its contexts: a, b` (or `the kubeconfig sets no
    /// current-context; …`, `…; it has no contexts`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.name {
            Some(n) => write!(f, "no context {n:?} in the kubeconfig; ")?,
            None => write!(f, "the kubeconfig sets no current-context; ")?,
        }
        match self.known.as_slice() {
            [] => write!(f, "it has no contexts"),
            k => write!(f, "its contexts: {}", k.join(", ")),
        }
    }
}

impl std::error::Error for UnknownContext {}

/// Reads the kubeconfig of `opts` and checks the context is in it; returns the kubeconfig and the
/// context's name. Errors: [`kube::config::KubeconfigError`] (unreadable or invalid file),
/// [`UnknownContext`].
pub fn read_kubeconfig(opts: &ConnectOptions) -> color_eyre::Result<(Kubeconfig, String)> {
    let kc = load_kubeconfig(opts)?;
    let name = opts.context.clone().or_else(|| kc.current_context.clone()).filter(|n| !n.is_empty());
    match name {
        Some(n) if kc.contexts.iter().any(|c| c.name == n) => Ok((kc, n)),
        name => Err(UnknownContext { name, known: kc.contexts.iter().map(|c| c.name.clone()).collect() }.into()),
    }
}

/// The kubeconfig of `opts` (`opts.context` aside), merged as [`ConnectOptions::kubeconfig`]
/// says. Errors: [`kube::config::KubeconfigError`] (unreadable or invalid file).
pub fn load_kubeconfig(opts: &ConnectOptions) -> color_eyre::Result<Kubeconfig> {
    Ok(match &opts.kubeconfig {
        Some(p) => Kubeconfig::read_from(p).wrap_err_with(|| format!("reading kubeconfig {}", p.display()))?,
        None => Kubeconfig::read().wrap_err("reading kubeconfig ($KUBECONFIG or ~/.kube/config)")?,
    })
}

/// Builds an [`ApiConnection`] from `kubeconfig` (or `$KUBECONFIG` / `~/.kube/config`) and
/// `context` (or the current one): [`connect_with`] with no other option.
pub async fn connect(kubeconfig: Option<&std::path::Path>, context: Option<&str>) -> color_eyre::Result<ApiConnection> {
    connect_with(&ConnectOptions {
        kubeconfig: kubeconfig.map(PathBuf::from),
        context: context.map(str::to_string),
        ..Default::default()
    })
    .await
}

/// Builds an [`ApiConnection`] as `opts` say. Does not contact the API server.
///
/// Runs the user's exec credential plugin, if any, bounded ([`super::exec`]).
///
/// Errors: unreadable or invalid kubeconfig, [`UnknownContext`], bad credential files,
/// [`ExecPluginError`](super::exec::ExecPluginError).
pub async fn connect_with(opts: &ConnectOptions) -> color_eyre::Result<ApiConnection> {
    let (kc, name) = read_kubeconfig(opts)?;
    let kopts = KubeConfigOptions { context: Some(name.clone()), ..Default::default() };
    let mut cfg = kube::Config::from_custom_kubeconfig(kc, &kopts)
        .await
        .wrap_err_with(|| format!("loading kubeconfig context {name:?}"))?;
    if let Some(imp) = &opts.impersonate {
        cfg.auth_info.impersonate = Some(imp.user.clone());
        cfg.auth_info.impersonate_groups = (!imp.groups.is_empty()).then(|| imp.groups.clone());
    }
    cfg.connect_timeout = Some(CONNECT_TIMEOUT);
    cfg.default_retry = false;
    let server = cfg.cluster_url.to_string().trim_end_matches('/').to_string();
    let signals = ApiSignals::new(server);
    let layer = Bounded { signals: signals.clone(), request_timeout: opts.request_timeout };
    let builder = match cfg.auth_info.exec.clone() {
        // kube-rs runs the plugin while it builds: bounded, on a thread of its own
        Some(exec) => {
            super::exec::bounded_build(&exec, super::exec::EXEC_PLUGIN_TIMEOUT, move || ClientBuilder::try_from(cfg))
                .await
                .wrap_err_with(|| format!("loading credentials of context {name:?}"))?
        }
        None => ClientBuilder::try_from(cfg).wrap_err("building the Kubernetes client")?,
    };
    let client = builder.with_layer(&layer).build();
    Ok(ApiConnection { client, context: name, signals })
}

/// The tower layer of the module doc.
#[derive(Clone)]
struct Bounded {
    signals: ApiSignals,
    request_timeout: Option<Duration>,
}

impl<S> Layer<S> for Bounded {
    type Service = BoundedService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        BoundedService { inner, signals: self.signals.clone(), request_timeout: self.request_timeout }
    }
}

#[derive(Clone)]
struct BoundedService<S> {
    inner: S,
    signals: ApiSignals,
    request_timeout: Option<Duration>,
}

fn is_watch(req: &Request<Body>) -> bool {
    req.uri().query().is_some_and(|q| q.split('&').any(|kv| kv == "watch=true" || kv == "watch=1"))
}

impl<S, B> Service<Request<Body>> for BoundedService<S>
where
    S: Service<Request<Body>, Response = Response<B>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<DeadlineBody<B>>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let watch = is_watch(&req);
        let path = req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
        let timeout = |part, after| RequestTimeout {
            what: self.signals.server.clone(),
            method: req.method().to_string(),
            path: path.clone(),
            part,
            after,
        };
        let (headers_after, body_after) = match (watch, self.request_timeout) {
            (false, Some(t)) => (t, t),
            _ => (HEADERS_TIMEOUT, BODY_TIMEOUT),
        };
        let (headers, body) =
            (timeout("response headers", headers_after), timeout("complete response body", body_after));
        let signals = self.signals.clone();
        let started = tokio::time::Instant::now();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let resp = match tokio::time::timeout(headers_after, fut).await {
                Err(_) => return Err(Box::new(headers) as BoxError),
                Ok(r) => r.map_err(Into::into)?,
            };
            if watch && resp.status().is_success() {
                signals.watch_established(&path);
            }
            let deadline = (!watch).then(|| (Box::pin(tokio::time::sleep_until(started + body_after)), body));
            Ok(resp.map(|inner| DeadlineBody { inner, deadline }))
        })
    }
}

/// A response body that fails with [`RequestTimeout`] when it is not complete by its deadline.
pub struct DeadlineBody<B> {
    inner: B,
    deadline: Option<(Pin<Box<tokio::time::Sleep>>, RequestTimeout)>,
}

impl<B> http_body::Body for DeadlineBody<B>
where
    B: http_body::Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        if let Some((sleep, err)) = &mut self.deadline
            && sleep.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Some(Err(Box::new(err.clone()))));
        }
        Pin::new(&mut self.inner).poll_frame(cx).map_err(Into::into)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

use std::future::Future as _;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_requests_are_recognised_by_their_query() {
        let req = |uri: &str| Request::get(uri).body(Body::empty()).unwrap();
        assert!(is_watch(&req("/api/v1/pods?allowWatchBookmarks=true&watch=true&resourceVersion=5")));
        assert!(!is_watch(&req("/api/v1/pods?limit=500")));
        assert!(!is_watch(&req("/api/v1/pods?watchfoo=true")));
    }

    #[tokio::test]
    async fn an_established_watch_bumps_its_kind_only() {
        let s = ApiSignals::new("https://127.0.0.1:1".into());
        let (pods, nodes) = (s.established(WatchedKind::Pod), s.established(WatchedKind::Node));
        s.watch_established("/api/v1/namespaces/a/pods?watch=true");
        s.watch_established("/apis/storage.k8s.io/v1/volumeattachments?watch=true");
        assert_eq!(*pods.borrow(), 1);
        assert_eq!(*nodes.borrow(), 0);
        assert_eq!(*s.established(WatchedKind::VolumeAttachment).borrow(), 1);
    }
}
