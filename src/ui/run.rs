//! The event loop: terminal keys, Kubernetes and Ceph messages and a clock tick go into
//! [`App::update`]; effects go out to the Ceph worker. Generic over ratatui's `Backend`.
//!
//! A frame is drawn only after something changed (ratatui then writes only the cells that
//! differ). Bursts of watch events are coalesced: the app's snapshot is patched at most every
//! 50 ms, with what the stores of the kinds whose watchers reported a change recorded since the
//! last patch ([`KubeStores::take_changes`]). A kind's `Live` state (its list read) is held
//! until that patch and applied with it, in the same step: the status bar never says a kind is
//! live before its objects are in the panes (at 50k pods the take of the list is seconds of work).

use std::time::Duration;

use crossterm::event::{Event as TermEvent, KeyEventKind};
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

use super::app::{App, Effect, Msg};
use super::shutdown::Stopped;
use super::view;
use unstick_core::clock::SharedClock;
use unstick_core::remedy::service::{RemedyMsg, RemedyRequest};
use unstick_core::sources::ceph::{CephMsg, CephRequest};
use unstick_core::sources::kube::{KubeMsg, KubeStores, SourceState};

/// Takes over the terminal (alternate screen, raw mode; restored on panic), or says why not:
/// the console needs stdin and stdout to be a terminal.
pub fn init_terminal() -> color_eyre::Result<ratatui::DefaultTerminal> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(crate::startup::UsageError(
            "the console needs a terminal: stdin and stdout must be a TTY (run it in a terminal, tmux or ssh -t)"
                .into(),
        )
        .into());
    }
    let t = ratatui::try_init().map_err(|e| color_eyre::eyre::eyre!("cannot take over the terminal: {e}"))?;
    super::shutdown::set_terminal_taken(true);
    // clicks and the wheel; restore_terminal (also on panic and signals) turns it off again
    if let Err(e) = crossterm::execute!(std::io::stdout(), crossterm::event::EnableMouseCapture) {
        tracing::warn!("no mouse: {e}");
    }
    Ok(t)
}

/// The live sources the loop reads from.
pub struct Sources {
    /// The watch stores (their changes taken when they report one).
    pub stores: KubeStores,
    /// Change and state notifications from the watchers.
    pub kube_rx: UnboundedReceiver<KubeMsg>,
    /// Requests to the Ceph worker; `None` when Ceph access is off.
    pub ceph_tx: Option<UnboundedSender<CephRequest>>,
    /// Answers from the Ceph worker.
    pub ceph_rx: UnboundedReceiver<CephMsg>,
    /// Commands to the remediation service; `None` in read-only mode.
    pub remedy_tx: Option<UnboundedSender<RemedyRequest>>,
    /// Messages from the remediation service.
    pub remedy_rx: UnboundedReceiver<RemedyMsg>,
    /// The program's clock (the wall clock, or a training scenario's simulated time): ticks and
    /// object snapshots are stamped with it.
    pub clock: SharedClock,
    /// The API client the describe / YAML popup reads objects with (`None`: none available).
    pub client: Option<kube::Client>,
    /// Diagnoses every kubeconfig context for the fleet view (`None`: no fleet here, e.g. in
    /// training).
    pub fleet: Option<FleetProbe>,
}

/// One fleet diagnosis, as `unstick diagnose --all-contexts` runs it: the report, or why the run
/// could not start (one line: the kubeconfig, the config).
pub type FleetProbe = std::sync::Arc<
    dyn Fn() -> futures::future::BoxFuture<'static, Result<unstick_core::fleet::FleetReport, String>> + Send + Sync,
>;

impl Sources {
    /// Closes this context's sources: the Ceph worker ends as its channel closes, each watch at
    /// its next event (its channel found closed), and the remediation service closes its run (its journal) and releases the Lease it
    /// holds (one API call, bounded by `remedy.api_timeout_seconds`). Waits until the service
    /// has ended (its messages, now unread, are dropped), at most [`CLOSE_BOUND`]; returns false
    /// when it had not ended by then.
    pub async fn close(self) -> bool {
        let Sources { remedy_tx, mut remedy_rx, ceph_tx, kube_rx, stores, .. } = self;
        drop((remedy_tx, ceph_tx, kube_rx, stores));
        tokio::time::timeout(CLOSE_BOUND, async { while remedy_rx.recv().await.is_some() {} }).await.is_ok()
    }
}

/// How long [`Sources::close`] waits for the remediation service to end: a step it is running
/// finishes first (each call bounded by the remedy timeouts), then the Lease is released.
pub const CLOSE_BOUND: Duration = Duration::from_secs(20);

const COALESCE: Duration = Duration::from_millis(50);

/// What one [`Loop::step`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stepped {
    /// State changed: draw a frame.
    Changed,
    /// Nothing visible changed.
    Unchanged,
    /// The key stream ended.
    KeysEnded,
}

/// The loop's state between inputs: the sources, the clock tick and the pending snapshot patch.
pub struct Loop {
    src: Sources,
    tick: tokio::time::Interval,
    rebuild_at: Option<Instant>,
    /// Kinds whose watchers reported a change since the last patch.
    changed: std::collections::BTreeSet<unstick_core::sources::kube::WatchedKind>,
    /// Kinds whose watchers said `Live` since the last patch: shown with the patch.
    live: std::collections::BTreeSet<unstick_core::sources::kube::WatchedKind>,
    described_tx: UnboundedSender<unstick_core::sources::describe::DescribeMsg>,
    described_rx: UnboundedReceiver<unstick_core::sources::describe::DescribeMsg>,
    fleet_tx: UnboundedSender<Result<unstick_core::fleet::FleetReport, String>>,
    fleet_rx: UnboundedReceiver<Result<unstick_core::fleet::FleetReport, String>>,
    fences_tx: UnboundedSender<FencesMsg>,
    fences_rx: UnboundedReceiver<FencesMsg>,
    remediators_tx: UnboundedSender<unstick_core::model::remediation::Remediators>,
    remediators_rx: UnboundedReceiver<unstick_core::model::remediation::Remediators>,
}

/// What a NetworkFence read answers ([`Msg::Fences`]).
type FencesMsg = Result<crate::ui::app::Fences, unstick_core::sources::kube::network_fence::FenceReadError>;

/// Bound of one NetworkFence read (each list).
const FENCES_TIMEOUT: Duration = Duration::from_secs(10);

/// Bound of one Medik8s remediators read (each kind's list).
const REMEDIATORS_TIMEOUT: Duration = Duration::from_secs(10);

impl Loop {
    /// Prepares `app` for these sources (Ceph / remediation availability) and starts the tick.
    pub fn new(app: &mut App, src: Sources) -> Self {
        app.ceph.enabled = src.ceph_tx.is_some();
        app.remedy.worker = src.remedy_tx.is_some();
        app.remediators.live = src.client.is_some();
        let mut tick = tokio::time::interval(Duration::from_secs(app.cfg.ui.tick_seconds.max(1)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let (described_tx, described_rx) = tokio::sync::mpsc::unbounded_channel();
        let (fleet_tx, fleet_rx) = tokio::sync::mpsc::unbounded_channel();
        let (fences_tx, fences_rx) = tokio::sync::mpsc::unbounded_channel();
        let (remediators_tx, remediators_rx) = tokio::sync::mpsc::unbounded_channel();
        Loop {
            src,
            tick,
            rebuild_at: None,
            changed: Default::default(),
            live: Default::default(),
            described_tx,
            described_rx,
            fleet_tx,
            fleet_rx,
            fences_tx,
            fences_rx,
            remediators_tx,
            remediators_rx,
        }
    }

    /// Waits for the next input (key, watch change, Ceph or remediation answer, clock tick),
    /// applies it to `app` and sends the effects to the workers.
    pub async fn step<K>(&mut self, app: &mut App, keys: &mut K) -> std::io::Result<Stepped>
    where
        K: Stream<Item = std::io::Result<TermEvent>> + Unpin,
    {
        let src = &mut self.src;
        let deadline = self.rebuild_at.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
        let mut changed = true;
        let effects = tokio::select! {
            ev = keys.next() => match ev {
                None => return Ok(Stepped::KeysEnded),
                Some(Err(e)) => return Err(e),
                Some(Ok(TermEvent::Key(k))) if k.kind != KeyEventKind::Release => app.update(Msg::Key(k)),
                Some(Ok(TermEvent::Resize(w, h))) => app.update(Msg::Resize(w, h)),
                Some(Ok(TermEvent::Mouse(m))) => app.update(Msg::Mouse(m)),
                Some(Ok(_)) => { changed = false; vec![] }
            },
            Some(m) = src.kube_rx.recv() => match m {
                KubeMsg::Changed(kind) => {
                    self.changed.insert(kind);
                    self.rebuild_at.get_or_insert_with(|| Instant::now() + COALESCE);
                    changed = false;
                    vec![]
                }
                // the watcher says Live (list done) just before the change that carries the list:
                // held to the patch that takes it
                KubeMsg::State(kind, SourceState::Live) => {
                    self.live.insert(kind);
                    self.changed.insert(kind);
                    self.rebuild_at.get_or_insert_with(|| Instant::now() + COALESCE);
                    changed = false;
                    vec![]
                }
                KubeMsg::State(kind, state) => {
                    self.live.remove(&kind);
                    app.update(Msg::KubeState(kind, state))
                }
            },
            Some(m) = src.ceph_rx.recv() => app.update(Msg::Ceph(m)),
            Some(m) = src.remedy_rx.recv() => app.update(Msg::Remedy(m)),
            Some(m) = self.described_rx.recv() => app.update(Msg::Described(m)),
            Some(m) = self.fleet_rx.recv() => app.update(Msg::Fleet(m)),
            Some(m) = self.fences_rx.recv() => app.update(Msg::Fences(m)),
            Some(m) = self.remediators_rx.recv() => app.update(Msg::Remediators(m)),
            _ = tokio::time::sleep_until(deadline), if self.rebuild_at.is_some() => {
                self.rebuild_at = None;
                // what the stores of the kinds that reported a change changed since the last
                // take, patched into the app's snapshot: the cost of the change, not the cluster
                let kinds: Vec<_> = std::mem::take(&mut self.changed).into_iter().collect();
                let d = src.stores.take_changes(&kinds, src.clock.now());
                // the states first: a first Ceph scan waits for the PVs to be Live and taken
                let mut fx = vec![];
                for kind in std::mem::take(&mut self.live) {
                    fx.extend(app.update(Msg::KubeState(kind, SourceState::Live)));
                }
                fx.extend(app.update(Msg::Watched(Box::new(d))));
                fx
            }
            _ = self.tick.tick() => app.update(Msg::Tick(src.clock.now())),
        };
        self.dispatch(effects);
        Ok(if changed { Stepped::Changed } else { Stepped::Unchanged })
    }

    /// Applies one key press as the terminal delivers it (the same entry as [`Loop::step`]'s;
    /// tests drive the console this way) and sends the effects to the workers.
    pub fn key(&mut self, app: &mut App, key: crossterm::event::KeyEvent) {
        let fx = app.update(Msg::Key(key));
        self.dispatch(fx);
    }

    fn dispatch(&self, effects: Vec<Effect>) {
        for e in effects {
            match e {
                Effect::Ceph(req) => {
                    if let Some(tx) = &self.src.ceph_tx {
                        let _ = tx.send(req);
                    }
                }
                Effect::Remedy(req) => {
                    if let Some(tx) = &self.src.remedy_tx {
                        let _ = tx.send(req);
                    }
                }
                // off the UI task, bounded; without an API client (scenarios) there is nothing to read
                Effect::Fences => {
                    if let Some(client) = self.src.client.clone() {
                        let tx = self.fences_tx.clone();
                        tokio::spawn(async move {
                            let r = unstick_core::sources::kube::network_fence::read_all(&client, FENCES_TIMEOUT).await;
                            let _ = tx.send(r);
                        });
                    }
                }
                // off the UI task, each kind's list bounded; 404 = not installed
                Effect::Remediators => {
                    if let Some(client) = self.src.client.clone() {
                        let tx = self.remediators_tx.clone();
                        tokio::spawn(async move {
                            let _ = tx.send(
                                unstick_core::sources::kube::remediators::list(&client, REMEDIATORS_TIMEOUT).await,
                            );
                        });
                    }
                }
                Effect::Fleet => {
                    let tx = self.fleet_tx.clone();
                    match self.src.fleet.clone() {
                        // off the UI task; each context bounded (`diagnose --all-contexts`' own)
                        Some(probe) => {
                            tokio::spawn(async move {
                                let _ = tx.send(probe().await);
                            });
                        }
                        None => {
                            let _ = tx.send(Err("no kubeconfig contexts in this console".to_string()));
                        }
                    }
                }
                Effect::Clipboard(text) => {
                    use crossterm::QueueableCommand as _;
                    use std::io::Write as _;
                    let mut out = std::io::stdout();
                    let copied = out
                        .queue(crossterm::clipboard::CopyToClipboard::to_clipboard_from(text))
                        .and_then(|o| o.flush());
                    if let Err(e) = copied {
                        tracing::warn!("copying to the clipboard: {e}");
                    }
                }
                Effect::Describe(target) => {
                    let tx = self.described_tx.clone();
                    match self.src.client.clone() {
                        // off the UI task, with a timeout (sources::describe::TIMEOUT)
                        Some(client) => {
                            tokio::spawn(async move {
                                let _ = tx.send(unstick_core::sources::describe::fetch(client, target).await);
                            });
                        }
                        None => {
                            let result = Err("no API client in this console".to_string());
                            let _ = tx.send(unstick_core::sources::describe::DescribeMsg { target, result });
                        }
                    }
                }
            }
        }
    }
}

/// Runs until the user quits (or asks for another context: [`App::switch_to`]), the key stream
/// ends or `stop` resolves (a termination signal, returned so the caller can say so and exit
/// 128 + its number). Returns that with the sources, still running: the caller closes them
/// ([`Sources::close`]) once the terminal is given back, or before starting another context's.
pub async fn run<B, K, S>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    src: Sources,
    keys: K,
    stop: S,
) -> (color_eyre::Result<Option<Stopped>>, Sources)
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    K: Stream<Item = std::io::Result<TermEvent>> + Unpin,
    S: std::future::Future<Output = Stopped>,
{
    let mut lp = Loop::new(app, src);
    if std::mem::take(&mut app.open_fleet_at_start) {
        let fx = app.open_fleet();
        lp.dispatch(fx);
    }
    let res = drive(terminal, app, &mut lp, keys, stop).await;
    (res, lp.src)
}

async fn drive<B, K, S>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    lp: &mut Loop,
    mut keys: K,
    stop: S,
) -> color_eyre::Result<Option<Stopped>>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    K: Stream<Item = std::io::Result<TermEvent>> + Unpin,
    S: std::future::Future<Output = Stopped>,
{
    tokio::pin!(stop);
    if let Ok(size) = terminal.size() {
        app.update(Msg::Resize(size.width, size.height));
    }
    let mut dirty = true;
    loop {
        if dirty {
            terminal.draw(|f| view::draw(f, app))?;
        }
        if app.quit {
            return Ok(None);
        }
        let stepped = tokio::select! {
            s = lp.step(app, &mut keys) => s?,
            sig = &mut stop => return Ok(Some(sig)),
        };
        dirty = match stepped {
            Stepped::KeysEnded => return Ok(None),
            Stepped::Changed => true,
            Stepped::Unchanged => false,
        };
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
