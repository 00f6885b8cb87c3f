//! The trainee: a training console (`cmd::train::setup`) on `TestBackend` at 80x24, driven by key
//! events along the reference path. Each step of the open playbook is run with Enter;
//! confirmations are read to their end and get `y` or the typed object name once the popup's key
//! guard has passed; optional steps are skipped; Wait steps and Verify retries let simulated time
//! pass. Used by tests/train_scenarios.rs and tests/crash_kill.rs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use futures::future::BoxFuture;
use futures::stream::{self, Stream};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use unstick::theme::Theme;
use unstick::ui::app::{App, Pane};
use unstick::ui::run::Loop;
use unstick_core::config::Config;
use unstick_core::sources::ceph::cli::{CephTransport, Completed, StartError, Tool};
use unstick_core::sources::sim::Sim;
use unstick_core::sources::sim::scenario::Scenario;
use unstick_core::train::Phase;

/// Makes the remediation worker's Ceph transport from the simulation.
pub type MakeTransport = Box<dyn FnOnce(&Sim) -> Arc<dyn CephTransport>>;

/// Where a trainee's console writes and what its remediation worker's Ceph goes through.
pub struct Setup {
    /// Incident journals and backups.
    pub journal_base: PathBuf,
    /// Session log directory; `None`: no session log.
    pub sessions: Option<PathBuf>,
    /// The remediation worker's Ceph transport, made from the simulation.
    pub remedy_ceph: MakeTransport,
}

impl Setup {
    /// Journals under `dir/incidents`, no session log, Ceph straight to the simulation.
    pub fn in_dir(dir: &Path) -> Setup {
        Setup { journal_base: dir.join("incidents"), sessions: None, remedy_ceph: Box::new(|s| Arc::new(s.clone())) }
    }
}

/// A training console and the trainee at its keys.
pub struct Driver {
    pub app: App,
    pub lp: Loop,
    pub sim: unstick_core::sources::sim::Sim,
    pub term: Terminal<TestBackend>,
    keys: std::pin::Pin<Box<dyn Stream<Item = std::io::Result<crossterm::event::Event>> + Send>>,
    _dir: Option<tempfile::TempDir>,
}

impl Driver {
    /// A console on the embedded scenario `name`, writing into a fresh temporary directory.
    pub fn new(name: &str) -> Driver {
        let dir = tempfile::tempdir().unwrap();
        let mut d = Driver::with(name, Setup::in_dir(dir.path()));
        d._dir = Some(dir);
        d
    }

    /// A console on the embedded scenario `name` as `setup` says.
    pub fn with(name: &str, setup: Setup) -> Driver {
        let scenario = Scenario::embedded(name).expect("embedded").expect("parses");
        let mut cfg = Config::defaults();
        cfg.remedy.wait_poll_seconds = 1;
        let parts = unstick::cmd::train::setup_with(
            scenario,
            cfg,
            Theme::monochrome(),
            setup.journal_base,
            (false, false),
            unstick_core::clock::wall(),
            setup.remedy_ceph,
        );
        let mut app = parts.app;
        if let Some(base) = setup.sessions {
            let spec = unstick_core::console_state::session_rec::SessionSpec {
                base,
                mode: unstick_core::session::Mode::Training,
                context: name.to_string(),
                writes: unstick_core::session::Writes::Live,
                redactor: unstick_core::session::redact::Redactor::builtin(),
                unique: true,
            };
            app.attach_session(unstick_core::console_state::session_rec::SessionRecorder::start(
                spec,
                unstick_core::clock::wall(),
            ));
        }
        let lp = Loop::new(&mut app, parts.sources);
        let term = Terminal::new(TestBackend::new(80, 24)).unwrap();
        Driver { app, lp, sim: parts.sim, term, keys: Box::pin(stream::pending()), _dir: None }
    }

    /// Runs the event loop for `d` of real time, drawing after each input.
    pub async fn pump(&mut self, d: Duration) {
        let end = tokio::time::Instant::now() + d;
        while let Ok(r) = tokio::time::timeout_at(end, self.lp.step(&mut self.app, &mut self.keys)).await {
            r.expect("loop step");
            self.term.draw(|f| unstick::ui::view::draw(f, &self.app)).unwrap();
        }
    }

    /// Presses `c` through the loop's key entry (the terminal's: the real routing down the popup
    /// stack), draws, and runs the loop for 150 ms.
    pub async fn key(&mut self, c: KeyCode) {
        self.lp.key(&mut self.app, KeyEvent::new(c, KeyModifiers::NONE));
        self.term.draw(|f| unstick::ui::view::draw(f, &self.app)).unwrap();
        self.pump(Duration::from_millis(150)).await;
    }

    /// Types `s` and Enter.
    pub async fn type_text(&mut self, s: &str) {
        for c in s.chars() {
            self.lp.key(&mut self.app, KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        self.key(KeyCode::Enter).await;
    }

    /// The screen as text at the driver's terminal size, one line per row
    /// ([`unstick::ui::testing::screen`]).
    pub fn screen(&self) -> String {
        let area = self.term.backend().buffer().area;
        unstick::ui::testing::screen(&self.app, area.width, area.height)
    }

    /// The training phase.
    pub fn phase(&self) -> &Phase {
        &self.app.training.as_ref().unwrap().phase
    }

    /// True once the debrief is open.
    pub fn done(&self) -> bool {
        matches!(self.phase(), Phase::Debrief(_))
    }

    /// One move of a trainee following the playbooks. Returns a description for the failure log.
    pub async fn play(&mut self) -> String {
        if let Some(pb) = self.app.playbook() {
            if let Some(c) = self.app.popups().confirm() {
                // read it all (the confirm key is refused before) and let the popup's key guard pass
                let typed = c.typed_name.clone();
                if c.guard.holds(self.app.now) {
                    self.sim.advance(Duration::from_secs(15));
                    self.pump(Duration::from_millis(1200)).await;
                    return "confirm popup just opened: reading".into();
                }
                self.key(KeyCode::End).await;
                match typed {
                    Some(name) => self.type_text(&name).await,
                    None => self.key(KeyCode::Char('y')).await,
                }
                return "confirmed".into();
            }
            if pb.waiting {
                // a Wait step polls on its own; let simulated time pass
                self.sim.advance(Duration::from_secs(5));
                self.pump(Duration::from_millis(500)).await;
                return "waiting: time passes".into();
            }
            if pb.busy.is_some() {
                self.pump(Duration::from_millis(300)).await;
                return "busy".into();
            }
            let Some(r) = pb.runner.as_ref() else {
                self.pump(Duration::from_millis(300)).await;
                return "runner opening".into();
            };
            if !r.interrupted.is_empty() {
                // a console killed between an intent and its outcome (tests/crash_kill.rs): the
                // runner refuses until the operator acknowledges after re-checking
                self.key(KeyCode::Char('a')).await;
                self.pump(Duration::from_millis(300)).await;
                return "interrupted step(s) acknowledged".into();
            }
            let Some(step) = pb.playbook.steps.get(r.cursor) else {
                self.key(KeyCode::Esc).await;
                return "playbook finished: closed".into();
            };
            let failed = matches!(r.states.get(r.cursor), Some(unstick_core::remedy::run::StepState::Failed(_)));
            let desc = format!("step {} {} {}", step.id, step.kind.name(), step.title);
            let why = pb.message.as_ref().map(|m| m.1.clone()).unwrap_or_default();
            let desc = if failed {
                format!("{desc} [failed: {why}]")
            } else if why.is_empty() {
                desc
            } else {
                format!("{desc} [{why}]")
            };
            if step.optional {
                // optional steps are for when the usual path did not work (a Wait that timed out)
                self.key(KeyCode::Char('s')).await;
                return format!("{desc}: optional, skipped");
            }
            if failed && step.kind.name() == "Check" {
                // the world moved on since the finding: close, and work from a fresh finding
                self.key(KeyCode::Esc).await;
                self.pump(Duration::from_millis(1200)).await;
                return format!("{desc}: state changed, playbook closed");
            }
            if failed {
                // e.g. Verify right after a blocklist: the fenced watch lingers for the watch timeout
                self.sim.advance(Duration::from_secs(20));
                self.pump(Duration::from_millis(1200)).await;
            }
            self.key(KeyCode::Enter).await;
            self.pump(Duration::from_millis(300)).await;
            return desc;
        }
        if self.app.data.findings.is_empty() {
            self.sim.advance(Duration::from_secs(5));
            self.pump(Duration::from_millis(1200)).await;
            return "no finding: time passes".into();
        }
        // the first finding with a playbook, in the order of the scenario's patterns (the
        // reference path), then as the console sorts them (most severe, oldest first)
        self.app.focus = Pane::Findings;
        let order = self.app.training.as_ref().unwrap().scenario.patterns.clone();
        let mut rows: Vec<usize> = (0..self.app.data.findings.len()).collect();
        rows.sort_by_key(|&i| {
            order.iter().position(|p| *p == self.app.data.findings[i].pattern.to_string()).unwrap_or(usize::MAX)
        });
        for i in rows {
            let id = self.app.data.findings.get(i).map(|f| f.id.clone()).unwrap_or_default();
            self.app.select(Pane::Findings, i);
            self.key(KeyCode::Char('p')).await;
            if self.app.playbook().is_some() {
                self.pump(Duration::from_millis(300)).await;
                return format!("opened the playbook of {id}");
            }
        }
        self.sim.advance(Duration::from_secs(5));
        self.pump(Duration::from_millis(1000)).await;
        "no finding with a playbook: time passes".into()
    }
}

/// The simulation's Ceph with `on_write` awaited before each write command it receives
/// (`rbd lock rm`, `ceph osd blocklist add`, …; reads pass straight through): tests count the
/// writes or make them slow. `name` is what the transport calls itself in messages.
pub struct HookedWrites {
    /// The simulation answering every command.
    pub sim: Sim,
    /// Run (and awaited) before each write is passed on.
    pub on_write: Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>,
    /// The transport's name.
    pub name: &'static str,
}

impl CephTransport for HookedWrites {
    fn prefix(&self, tool: Tool) -> Vec<String> {
        self.sim.prefix(tool)
    }

    fn run<'a>(&'a self, argv: &'a [String]) -> BoxFuture<'a, Result<Completed, StartError>> {
        Box::pin(async move {
            let (_, words) = unstick_core::sources::sim::ceph::command(argv);
            if unstick_core::sources::sim::ceph::is_write(&words) {
                (self.on_write)().await;
            }
            self.sim.run(argv).await
        })
    }

    fn name(&self) -> &'static str {
        self.name
    }
}
