//! The event loop: terminal keys, Kubernetes and Ceph messages and a clock tick go into
//! [`App::update`]; effects go out to the Ceph worker. Generic over ratatui's `Backend`.
//!
//! A frame is drawn only after something changed (ratatui then writes only the cells that
//! differ). Bursts of watch events are coalesced: the snapshot is rebuilt at most every 50 ms.

use std::time::Duration;

use crossterm::event::{Event as TermEvent, KeyEventKind};
use futures::{Stream, StreamExt};
use jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

use super::app::{App, Effect, Msg};
use super::worker::{RemedyMsg, RemedyRequest};
use super::{keys, view};
use crate::model::Snapshot;
use crate::sources::ceph::{CephMsg, CephRequest};
use crate::sources::kube::{KubeMsg, KubeStores};

/// The live sources the loop reads from.
pub struct Sources {
    /// Reflector stores (read when objects changed).
    pub stores: KubeStores,
    /// Change and state notifications from the watchers.
    pub kube_rx: UnboundedReceiver<KubeMsg>,
    /// Requests to the Ceph worker; `None` when Ceph access is off.
    pub ceph_tx: Option<UnboundedSender<CephRequest>>,
    /// Answers from the Ceph worker.
    pub ceph_rx: UnboundedReceiver<CephMsg>,
    /// Requests to the remediation worker; `None` in read-only mode.
    pub remedy_tx: Option<UnboundedSender<RemedyRequest>>,
    /// Answers from the remediation worker.
    pub remedy_rx: UnboundedReceiver<RemedyMsg>,
}

const COALESCE: Duration = Duration::from_millis(50);

/// Runs until the user quits or the key stream ends.
pub async fn run<B, K>(terminal: &mut Terminal<B>, app: &mut App, mut src: Sources, mut keys: K) -> color_eyre::Result<()>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    K: Stream<Item = std::io::Result<TermEvent>> + Unpin,
{
    app.ceph.enabled = src.ceph_tx.is_some();
    app.remedy.worker = src.remedy_tx.is_some();
    if let Ok(size) = terminal.size() {
        app.update(Msg::Resize(size.width, size.height));
    }
    let mut tick = tokio::time::interval(Duration::from_secs(app.cfg.ui.tick_seconds));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut rebuild_at: Option<Instant> = None;
    let mut dirty = true;
    loop {
        if dirty {
            terminal.draw(|f| view::draw(f, app))?;
            dirty = false;
        }
        if app.quit {
            return Ok(());
        }
        let deadline = rebuild_at.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
        let effects = tokio::select! {
            ev = keys.next() => match ev {
                None => return Ok(()),
                Some(Err(e)) => return Err(e.into()),
                Some(Ok(TermEvent::Key(k))) if k.kind != KeyEventKind::Release => {
                    dirty = true;
                    if let Some(m) = keys::to_msg(app, k) {
                        app.update(m)
                    } else {
                        dirty = false;
                        vec![]
                    }
                }
                Some(Ok(TermEvent::Resize(w, h))) => { dirty = true; app.update(Msg::Resize(w, h)) }
                Some(Ok(_)) => vec![],
            },
            Some(m) = src.kube_rx.recv() => match m {
                KubeMsg::Changed(_) => {
                    rebuild_at.get_or_insert_with(|| Instant::now() + COALESCE);
                    vec![]
                }
                KubeMsg::State(kind, state) => { dirty = true; app.update(Msg::KubeState(kind, state)) }
            },
            Some(m) = src.ceph_rx.recv() => { dirty = true; app.update(Msg::Ceph(m)) }
            Some(m) = src.remedy_rx.recv() => { dirty = true; app.update(Msg::Remedy(m)) }
            _ = tokio::time::sleep_until(deadline), if rebuild_at.is_some() => {
                rebuild_at = None;
                dirty = true;
                let mut snap = Snapshot::default();
                src.stores.fill(&mut snap);
                app.update(Msg::Objects(Box::new(snap)))
            }
            _ = tick.tick() => { dirty = true; app.update(Msg::Tick(Timestamp::now())) }
        };
        for e in effects {
            match e {
                Effect::Ceph(req) => {
                    if let Some(tx) = &src.ceph_tx {
                        let _ = tx.send(req);
                    }
                }
                Effect::Remedy(req) => {
                    if let Some(tx) = &src.remedy_tx {
                        let _ = tx.send(req);
                    }
                }
            }
        }
    }
}
