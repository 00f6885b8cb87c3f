//! The console driven by key events on the real harness, as an operator drives it: an `App` on a
//! live snapshot with a finding selected, its effects sent to a real remediation service (journal in
//! a temp dir, real Lease, real executor), its messages fed back to the app.
//!
//! Confirmations are read to their end (`End`) and answered only once the popup's key guard has
//! passed on the console clock; the driver moves that clock itself (`skew`), never by sleeping.

use std::path::Path;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use jiff::{SignedDuration, Timestamp};
use unstick::theme::Theme;
use unstick::ui::app::{App, Effect, Msg, Pane};
use unstick::ui::popups::confirm::ConfirmUi;
use unstick_core::config::Config;
use unstick_core::diagnose::Finding;
use unstick_core::lineage::Lineage;
use unstick_core::model::Snapshot;
use unstick_core::remedy::action::precheck::Reader;
use unstick_core::remedy::journal::{self, Author};
use unstick_core::remedy::playbook::StepKind;
use unstick_core::remedy::service::{self, Clocks, RemedyMsg, RemedyRequest, ServiceParts};
use unstick_core::sources::ceph::cli::{Access, CephCli};
use unstick_core::sources::kube::{SourceState, WatchedKind};

use super::Harness;

/// The harness's Ceph through the local `rbd`/`ceph` CLI, with the default timeouts.
pub fn ceph(h: &Harness) -> CephCli {
    CephCli::new(
        Access::Local { conf: Some(h.ceph_conf.clone()), id: None, keyring: None },
        Config::defaults().ceph,
        None,
    )
}

/// A live snapshot of every kind, with the Ceph facts of the images it references.
pub async fn snapshot(h: &Harness) -> Snapshot {
    let (client, _) = unstick_core::sources::kube::client(Some(&h.admin), None).await.expect("client");
    let (mut snap, missing, _) =
        unstick::cmd::live::kube_snapshot(&client, None, Duration::from_secs(15), &unstick_core::clock::WallClock)
            .await;
    assert!(missing.is_empty(), "{missing:?}");
    let lin = Lineage::build(&snap);
    unstick::cmd::live::ceph_facts(ceph(h), &mut snap, &lin).await;
    snap
}

/// A fresh diagnosis of the live harness under `cfg`.
pub async fn findings(h: &Harness, cfg: &Config) -> Vec<Finding> {
    let snap = snapshot(h).await;
    let lin = Lineage::build(&snap);
    unstick_core::diagnose::run(&snap, &lin, &cfg.diagnose, Timestamp::now())
}

/// The console under test: the app, the worker's channels and how far the driver has moved the
/// console clock ahead of the wall clock.
pub struct Driver {
    /// The console's state.
    pub app: App,
    tx: tokio::sync::mpsc::UnboundedSender<RemedyRequest>,
    rx: tokio::sync::mpsc::UnboundedReceiver<RemedyMsg>,
    skew: SignedDuration,
}

impl Driver {
    /// Sends the effects to the worker and feeds its answers back until the app is idle (90 s for
    /// the first answer, then 400 ms of quiet).
    pub async fn pump(&mut self, fx: Vec<Effect>) {
        let mut sent = false;
        for e in fx {
            if let Effect::Remedy(r) = e {
                // Close answers nothing (it releases the Lease)
                sent |= r != RemedyRequest::Close;
                self.tx.send(r).expect("worker runs");
            }
        }
        if !sent {
            return;
        }
        let mut got = false;
        loop {
            let wait = if got { Duration::from_millis(400) } else { Duration::from_secs(90) };
            match tokio::time::timeout(wait, self.rx.recv()).await {
                Ok(Some(m)) => {
                    got = true;
                    self.app.update(Msg::Remedy(m));
                }
                Ok(None) => panic!("worker ended"),
                Err(_) if got => return,
                Err(_) => panic!("no answer from the worker"),
            }
        }
    }

    /// One key press, routed as the terminal's ([`unstick::ui::testing::press`]).
    pub async fn key(&mut self, c: KeyCode) {
        let fx = unstick::ui::testing::press(&mut self.app, c);
        self.pump(fx).await;
    }

    /// Types `s` key by key.
    pub async fn type_text(&mut self, s: &str) {
        for ch in s.chars() {
            self.key(KeyCode::Char(ch)).await;
        }
    }

    /// One console tick at the console clock (wall clock + what the driver advanced), after the
    /// messages the service sent on its own (its timers' Wait polls and Lease renewals).
    pub async fn tick(&mut self) {
        while let Ok(m) = self.rx.try_recv() {
            self.app.update(Msg::Remedy(m));
        }
        let now = Timestamp::now().saturating_add(self.skew).unwrap_or_else(|_| Timestamp::now());
        let fx = self.app.update(Msg::Tick(now));
        self.pump(fx).await;
    }

    /// Moves the console clock `secs` seconds ahead and ticks.
    pub async fn advance(&mut self, secs: i64) {
        self.skew += SignedDuration::from_secs(secs);
        self.tick().await;
    }

    /// The playbook's message line (empty without one).
    pub fn message(&self) -> String {
        self.app.playbook().and_then(|p| p.message.clone()).map(|m| m.1).unwrap_or_default()
    }

    /// The open confirmation popup; panics with the playbook's message when there is none.
    pub fn popup(&self, what: &str) -> ConfirmUi {
        self.app
            .popups()
            .confirm()
            .cloned()
            .unwrap_or_else(|| panic!("{what}: no confirmation popup: {}", self.message()))
    }

    /// Reads the open popup as an operator must before answering: to its end (`End`), and past
    /// its key guard (the console clock is moved 3 s ahead, longer than the 2 s guard).
    pub async fn read_popup(&mut self) {
        self.key(KeyCode::End).await;
        self.advance(3).await;
    }

    /// Answers the open popup: reads it, then types what it asks for (its short part of the name,
    /// then Enter) or `y` when no name is asked.
    pub async fn confirm(&mut self) {
        let c = self.popup("confirm");
        self.read_popup().await;
        match c.to_type() {
            Some(part) => {
                let part = part.to_string();
                self.type_text(&part).await;
                self.key(KeyCode::Enter).await;
            }
            None => self.key(KeyCode::Char('y')).await,
        }
    }

    /// After a refusal that asks for an override (no popup, the message says ``type `NAME` to
    /// override``): `o` opens the override prompt, `name` is typed, Enter.
    pub async fn type_override(&mut self, name: &str) {
        assert!(self.app.playbook().is_some(), "playbook open");
        let asked = format!("type `{name}` to override");
        assert!(self.app.popups().confirm().is_none() && self.message().contains(&asked), "{}", self.message());
        self.key(KeyCode::Char('o')).await;
        self.type_text(name).await;
        self.key(KeyCode::Enter).await;
        assert!(self.message().contains("override typed"), "{}", self.message());
    }

    /// `u` when the unfence is guarded: refused, the override typed ([`Driver::type_override`]),
    /// then `u` again opens the undo's confirmation.
    pub async fn undo_typing_override(&mut self, node: &str) {
        self.key(KeyCode::Char('u')).await;
        self.type_override(node).await;
        self.key(KeyCode::Char('u')).await;
    }

    /// The current Act step when the safety rules refuse it until `name` is typed: Enter (refused),
    /// the override typed, Enter again, then the confirmation answered; the step is done.
    pub async fn act_typing_override(&mut self, name: &str) {
        self.key(KeyCode::Enter).await;
        self.type_override(name).await;
        self.key(KeyCode::Enter).await;
        let c = self.popup("act after the override");
        assert!(c.view.warnings.iter().any(|w| w.starts_with("OVERRIDE")), "{:?}", c.view.warnings);
        self.confirm().await;
        assert!(self.message().contains("done"), "{}", self.message());
    }

    /// The playbook's current step and its number of steps.
    pub fn cursor(&self) -> (usize, usize) {
        let pb = self.app.playbook().expect("playbook open");
        (pb.runner.as_ref().expect("runner").cursor, pb.playbook.steps.len())
    }

    /// Runs every remaining step with the keys an operator uses: Enter, then the confirmation; a
    /// Wait step is polled on the console clock until its condition is met (150 s bound); optional
    /// steps are skipped with `s`. Returns each step's title and wall time.
    pub async fn run_all(&mut self) -> Vec<(String, Duration)> {
        let mut took = vec![];
        for _ in 0..20 {
            let (cursor, len) = self.cursor();
            if cursor >= len {
                return took;
            }
            let step = self.app.playbook().expect("playbook open").playbook.steps[cursor].clone();
            let t0 = Instant::now();
            match &step.kind {
                // optional steps are for when the usual path did not work (or only speed it up,
                // like deleting a stuck pod whose kubelet would retry anyway): an operator whose
                // workload recovers skips them, and their live re-check rightly refuses once the
                // volume is in use again
                _ if step.optional => self.key(KeyCode::Char('s')).await,
                StepKind::Act(_) => {
                    self.key(KeyCode::Enter).await;
                    self.popup(&step.title);
                    self.confirm().await;
                    assert!(self.message().contains("done"), "{}: {}", step.title, self.message());
                }
                StepKind::Wait { .. } => {
                    self.key(KeyCode::Enter).await;
                    let deadline = Instant::now() + Duration::from_secs(150);
                    // the runner's view (cursor moved on) can come before the Wait's own answer
                    // (`condition met`) on a loaded machine: wait for both
                    while self.app.playbook().expect("playbook open").waiting || self.cursor().0 == cursor {
                        assert!(Instant::now() < deadline, "{}: {}", step.title, self.message());
                        // the service polls the Wait on its own timer (wall clock here)
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        self.tick().await;
                    }
                    while !self.message().contains("condition met") {
                        assert!(Instant::now() < deadline, "{}: {}", step.title, self.message());
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        self.tick().await;
                    }
                }
                _ => self.key(KeyCode::Enter).await,
            }
            took.push((step.title.clone(), t0.elapsed()));
            assert!(self.cursor().0 > cursor, "step {} did not advance: {}", step.title, self.message());
        }
        panic!("playbook did not finish in 20 steps");
    }
}

/// An app on a live snapshot with the first finding that `pick` accepts selected, and a real
/// worker journaling under `dir`.
pub async fn setup(h: &Harness, dir: &Path, cfg: &Config, pick: impl Fn(&Finding) -> bool) -> Driver {
    let (client, _) = unstick_core::sources::kube::client(Some(&h.admin), None).await.expect("client");
    let api_timeout = Duration::from_secs(15);
    let exec = unstick_core::remedy::action::executor::Executor::new(false, client.clone(), ceph(h), api_timeout)
        .expect("executor");
    let (tx, mut rx) = service::spawn(ServiceParts {
        reader: Reader { kube: client.clone(), ceph: ceph(h), api_timeout, clock: unstick_core::clock::wall() },
        executor: Some(exec),
        cfg: cfg.remedy.clone(),
        base: dir.to_path_buf(),
        author: Author { operator: journal::operator(), context: "kh".into() },
        clocks: Clocks { records: unstick_core::clock::wall(), timers: unstick_core::clock::wall() },
    });
    let mut app = App::new(cfg.clone(), Theme::monochrome(), "kh".into(), None, false, jiff::Timestamp::now());
    app.remedy.worker = true;
    // the worker's first answer: the API server version (1.20 or the current control plane's),
    // read live (playbooks are built for it)
    let first =
        tokio::time::timeout(Duration::from_secs(30), rx.recv()).await.expect("worker answers").expect("worker runs");
    let version = h.server_version().await.to_string();
    assert!(matches!(&first, RemedyMsg::ServerVersion(Ok(v)) if v.to_string() == version), "{first:?}: not {version}");
    app.update(Msg::Remedy(first));
    for k in WatchedKind::ALL {
        app.update(Msg::KubeState(k, SourceState::Live));
    }
    let snap = snapshot(h).await;
    let ceph_facts = snap.ceph.clone();
    app.update(Msg::Objects(Box::new(snap)));
    app.data.snap.ceph = ceph_facts;
    app.data.diagnosed_at = None;
    app.update(Msg::Tick(Timestamp::now()));
    let row = app.data.findings.iter().position(&pick).unwrap_or_else(|| {
        panic!(
            "no such finding: {:#?}",
            app.data.findings.iter().map(|f| (f.pattern, f.volume.clone())).collect::<Vec<_>>()
        )
    });
    app.focus = Pane::Findings;
    app.select(Pane::Findings, row);
    Driver { app, tx, rx, skew: SignedDuration::ZERO }
}
