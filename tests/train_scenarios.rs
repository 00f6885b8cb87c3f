//! Every embedded scenario driven to its debrief through key events, on `TestBackend` at 80×24,
//! following the reference path: the console (the real event loop, reflectors, Ceph worker and
//! remediation worker with its journal and Lease) runs on the scenario's simulation. Each step of
//! the open playbook is run with Enter; confirmations get `y` or the typed object name; optional
//! Manual steps are skipped; Wait steps and Verify retries let simulated time pass.
//!
//! Afterwards: the debrief lists every required reference step as done, no risky action, and the
//! simulation received exactly the writes the playbooks sent (no fencing of a Ready node).

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use futures::stream::{self, Stream};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use unstick::config::Config;
use unstick::sources::sim::scenario::Scenario;
use unstick::theme::Theme;
use unstick::train::Phase;
use unstick::ui::app::{App, Pane};
use unstick::ui::run::Loop;

#[path = "common/export_check.rs"]
mod export_check;

struct Driver {
    app: App,
    lp: Loop,
    sim: unstick::sources::sim::Sim,
    term: Terminal<TestBackend>,
    keys: std::pin::Pin<Box<dyn Stream<Item = std::io::Result<crossterm::event::Event>> + Send>>,
    _dir: tempfile::TempDir,
}

impl Driver {
    fn new(name: &str) -> Driver {
        let scenario = Scenario::embedded(name).expect("embedded").expect("parses");
        let mut cfg = Config::defaults();
        cfg.remedy.wait_poll_seconds = 1;
        let dir = tempfile::tempdir().unwrap();
        let parts =
            unstick::cmd::train::setup(scenario, cfg, Theme::monochrome(), dir.path().join("incidents"), false, false);
        let mut app = parts.app;
        // the session log, as `unstick train` writes it (exported at the end of the run)
        let spec = unstick::ui::session_rec::SessionSpec {
            base: dir.path().join("sessions"),
            mode: unstick::session::Mode::Training,
            context: name.to_string(),
            writes: unstick::session::Writes::Live,
            redactor: unstick::session::Redactor::builtin(),
            unique: false,
        };
        app.attach_session(unstick::ui::session_rec::SessionRecorder::start(spec, jiff::Timestamp::now()));
        let lp = Loop::new(&mut app, parts.sources);
        let term = Terminal::new(TestBackend::new(80, 24)).unwrap();
        Driver { app, lp, sim: parts.sim, term, keys: Box::pin(stream::pending()), _dir: dir }
    }

    /// Runs the event loop for `d` of real time, drawing after each input.
    async fn pump(&mut self, d: Duration) {
        let end = tokio::time::Instant::now() + d;
        while let Ok(r) = tokio::time::timeout_at(end, self.lp.step(&mut self.app, &mut self.keys)).await {
            r.expect("loop step");
            self.term.draw(|f| unstick::ui::view::draw(f, &self.app)).unwrap();
        }
    }

    async fn key(&mut self, c: KeyCode) {
        self.lp.key(&mut self.app, KeyEvent::new(c, KeyModifiers::NONE));
        self.term.draw(|f| unstick::ui::view::draw(f, &self.app)).unwrap();
        self.pump(Duration::from_millis(150)).await;
    }

    async fn type_text(&mut self, s: &str) {
        for c in s.chars() {
            self.lp.key(&mut self.app, KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        self.key(KeyCode::Enter).await;
    }

    fn screen(&self) -> String {
        let b = self.term.backend().buffer();
        (0..b.area.height).map(|y| (0..b.area.width).map(|x| b[(x, y)].symbol()).collect::<String>() + "\n").collect()
    }

    fn phase(&self) -> &Phase {
        &self.app.training.as_ref().unwrap().phase
    }

    fn done(&self) -> bool {
        matches!(self.phase(), Phase::Debrief(_))
    }

    /// One move of a trainee following the playbooks. Returns a description for the failure log.
    async fn play(&mut self) -> String {
        if let Some(pb) = self.app.remedy.playbook.as_ref() {
            if let Some(c) = &pb.confirm {
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
            let Some(step) = pb.playbook.steps.get(r.cursor) else {
                self.key(KeyCode::Esc).await;
                return "playbook finished: closed".into();
            };
            let failed = matches!(r.states.get(r.cursor), Some(unstick::remedy::runner::StepState::Failed(_)));
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
        if self.app.findings.is_empty() {
            self.sim.advance(Duration::from_secs(5));
            self.pump(Duration::from_millis(1200)).await;
            return "no finding: time passes".into();
        }
        // the first finding with a playbook, in the order of the scenario's patterns (the
        // reference path), then as the console sorts them (most severe, oldest first)
        self.app.focus = Pane::Findings;
        let order = self.app.training.as_ref().unwrap().scenario.patterns.clone();
        let mut rows: Vec<usize> = (0..self.app.findings.len()).collect();
        rows.sort_by_key(|&i| {
            order.iter().position(|p| *p == self.app.findings[i].pattern.to_string()).unwrap_or(usize::MAX)
        });
        for i in rows {
            let id = self.app.findings.get(i).map(|f| f.id.clone()).unwrap_or_default();
            self.app.selected[Pane::Findings.index()] = i;
            self.key(KeyCode::Char('p')).await;
            if self.app.remedy.playbook.is_some() {
                self.pump(Duration::from_millis(300)).await;
                return format!("opened the playbook of {id}");
            }
        }
        self.sim.advance(Duration::from_secs(5));
        self.pump(Duration::from_millis(1000)).await;
        "no finding with a playbook: time passes".into()
    }
}

async fn drive(name: &str) {
    let mut d = Driver::new(name);
    d.pump(Duration::from_millis(800)).await;
    assert!(d.screen().contains(&format!("training: {name}")), "briefing first:\n{}", d.screen());
    d.key(KeyCode::Enter).await;
    assert_eq!(*d.phase(), Phase::Running);
    let sc = d.app.training.as_ref().unwrap().scenario.clone();
    let patterns = |d: &Driver| -> std::collections::BTreeSet<String> {
        d.app.findings.iter().map(|f| f.pattern.to_string()).collect()
    };
    // the watches list and the first Ceph scan answers: bounded, not timed
    for _ in 0..40 {
        d.pump(Duration::from_millis(250)).await;
        if sc.patterns.iter().all(|p| patterns(&d).contains(p)) {
            break;
        }
    }
    let seen = patterns(&d);
    for p in &sc.patterns {
        assert!(seen.contains(p), "{name}: the console shows {p} at the start (saw {seen:?})\n{}", d.screen());
    }
    let mut log = vec![];
    for _ in 0..150 {
        if d.done() {
            break;
        }
        log.push(d.play().await);
    }
    let _ = std::fs::write(std::env::temp_dir().join(format!("unstick-train-{name}.log")), log.join("\n"));
    let tail = |log: &[String]| log.iter().rev().take(25).rev().cloned().collect::<Vec<_>>().join("\n");
    assert!(
        d.done(),
        "{name}: no debrief after the reference path; last moves:\n{}\nscreen:\n{}",
        tail(&log),
        d.screen()
    );
    let screen = d.screen();
    assert!(screen.contains(&format!("debrief: {name}")) && screen.contains("Every goal is met."), "{screen}");
    let tr = d.app.training.as_ref().unwrap();
    let db = tr.debrief().unwrap();
    let missed: Vec<_> =
        db.reference.iter().filter(|r| r.done_after.is_none() && !r.optional).map(|r| r.text.clone()).collect();
    assert!(missed.is_empty(), "{name}: reference steps not done: {missed:?}\nlast moves:\n{}", tail(&log));
    assert!(db.risky.is_empty(), "{name}: {} risky, first: {:?}", db.risky.len(), db.risky.first());
    assert!(db.failed.is_empty(), "{name}: {:?}", db.failed);
    // the writes the simulation received are the playbooks' writes, and no Ready node was fenced
    let writes: Vec<String> = d.sim.world().writes.iter().map(|(_, w)| w.clone()).collect();
    assert!(!writes.is_empty());
    assert!(!writes.iter().any(|w| w.contains("blocklist add") && !w.contains('/')), "{writes:?}");
    // the debrief opened by itself: Enter (typed for a step) never quits it; q does, after its
    // key guard has passed
    d.key(KeyCode::Enter).await;
    assert!(!d.app.quit, "Enter on the debrief does not quit");
    d.sim.advance(Duration::from_secs(60));
    d.pump(Duration::from_millis(1200)).await;
    d.key(KeyCode::Char('q')).await;
    assert!(d.app.quit, "q on the debrief leaves");
    check_export(name, &mut d);
}

/// The session's postmortem export is complete and exact: no placeholder, every write the
/// simulation received listed with the body sent, every step of the run in the timeline, the
/// debrief as its own record; its objects, confirmations and actions match
/// `tests/golden/train-<name>.md`.
fn check_export(name: &str, d: &mut Driver) {
    assert_eq!(d.app.end_session(), None, "the session log was written");
    let base = d._dir.path().join("sessions");
    let logs: Vec<_> = std::fs::read_dir(&base).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let md = unstick::session::export(&logs[0], unstick::session::Format::Markdown).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&unstick::session::export(&logs[0], unstick::session::Format::Json).unwrap()).unwrap();
    assert_eq!(export_check::placeholders(&md), Vec::<String>::new(), "{name}: placeholders in the export:\n{md}");
    // every write the simulation received is in the export with the exact body sent
    let sent = export_check::sent_bodies(&json);
    // (the console's own Lease is not part of the remediation)
    let writes: Vec<String> =
        d.sim.world().writes.iter().map(|(_, w)| w.clone()).filter(|w| !w.contains(" leases ")).collect();
    for w in &writes {
        if let Some((_, patch)) = w.split_once(": ") {
            let patch: serde_json::Value = serde_json::from_str(patch).unwrap();
            assert!(sent.contains(&patch), "{name}: the patch the simulation received is not in the export: {w}\n{md}");
        }
    }
    let api_writes = writes.iter().filter(|w| w.starts_with("patch ") || w.starts_with("delete ")).count();
    assert_eq!(sent.len(), api_writes, "{name}: one sent request per API write: {writes:?}\n{md}");
    for body in &sent {
        let text = body.to_string();
        assert!(!text.contains("<"), "{text}");
        if let Some(pre) = body.get("preconditions") {
            assert!(pre["uid"].as_str().is_some_and(|u| u.starts_with("5e000000-")), "a real UID: {text}");
        }
    }
    // steps other than writes, and the debrief, are records of their own
    let kinds: Vec<&str> = json["steps"].as_array().unwrap().iter().filter_map(|s| s["kind"].as_str()).collect();
    assert!(kinds.contains(&"check"), "{name}: the Check step in the export: {kinds:?}\n{md}");
    assert!(
        kinds.iter().any(|k| ["verify", "wait"].contains(k)),
        "{name}: Verify/Wait steps in the export: {kinds:?}\n{md}"
    );
    assert_eq!(json["debriefs"].as_array().map(Vec::len), Some(1), "{md}");
    assert_eq!(json["summary"]["counts"]["notes"], 0, "no note nobody wrote: {md}");
    let session = logs[0].file_stem().unwrap().to_string_lossy().into_owned();
    let md = export_check::normalise(&md, &session, d._dir.path());
    export_check::golden(&format!("train-{name}.md"), &export_check::stable_part(&md));
}

macro_rules! scenario_test {
    ($f:ident, $name:literal) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $f() {
            drive($name).await;
        }
    };
}

scenario_test!(stale_lock, "stale-lock");
scenario_test!(lost_node_multi_attach, "lost-node-multi-attach");
scenario_test!(dead_node_watcher, "dead-node-watcher");
scenario_test!(unmap_busy, "unmap-busy");
scenario_test!(same_node_restage, "same-node-restage");
scenario_test!(mass_unmap_busy, "mass-unmap-busy");
scenario_test!(node_loss_five_volumes, "node-loss-five-volumes");

/// Releasing the VolumeAttachment before fencing the dead node's watcher (the wrong order in
/// seed 002) is refused by the safety rules; the debrief lists the attempt with what it would have
/// done in this scenario, and the trainee still finishes along the reference path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_risky_attempt_is_refused_and_in_the_debrief() {
    let mut d = Driver::new("dead-node-watcher");
    d.pump(Duration::from_millis(800)).await;
    d.key(KeyCode::Enter).await;
    d.pump(Duration::from_millis(1500)).await;
    let row = d
        .app
        .findings
        .iter()
        .position(|f| f.pattern.to_string() == "multi-attach-node-lost")
        .expect("multi-attach finding");
    d.app.focus = Pane::Findings;
    d.app.selected[Pane::Findings.index()] = row;
    d.key(KeyCode::Char('p')).await;
    d.pump(Duration::from_millis(500)).await;
    let mut refused = false;
    for _ in 0..40 {
        let pb = d.app.remedy.playbook.as_ref().expect("playbook open");
        if let Some(r) = &pb.runner
            && let Some(step) = pb.playbook.steps.get(r.cursor)
            && matches!(
                &step.kind,
                unstick::remedy::playbook::StepKind::Act(unstick::remedy::action::Action::ReleaseVolumeInUse { .. })
            )
            && pb.message.as_ref().is_some_and(|m| !m.0 && m.1.contains("still has watcher"))
        {
            refused = true;
            break;
        }
        d.play().await;
    }
    assert!(refused, "the volumesInUse release is refused while node1's watcher exists:\n{}", d.screen());
    let tr = d.app.training.as_ref().unwrap();
    assert_eq!(tr.refused.len(), 1, "{:?}", tr.refused);
    assert_eq!(unstick::train::debrief::risk_kind(&tr.refused[0].1), Some("has-watchers"));
    // the VolumeAttachment is untouched: nothing was sent
    assert!(!d.sim.world().writes.iter().any(|(_, w)| w.contains("volumeattachments")), "{:?}", d.sim.world().writes);
    d.key(KeyCode::Esc).await;
    d.pump(Duration::from_millis(800)).await;
    for _ in 0..150 {
        if d.done() {
            break;
        }
        d.play().await;
    }
    assert!(d.done(), "finished after the refusal:\n{}", d.screen());
    let db = d.app.training.as_ref().unwrap().debrief().unwrap().clone();
    assert_eq!(db.risky.len(), 1, "{:?}", db.risky);
    assert!(db.risky[0].consequence.contains("fence the watcher first"), "{:?}", db.risky[0]);
    assert!(db.lines().iter().any(|l| l.starts_with("Risky actions attempted (1)")));
    // the refusal is in the session log: a failed Act step with the safety rule's reason
    assert_eq!(d.app.end_session(), None);
    let base = d._dir.path().join("sessions");
    let log = std::fs::read_dir(&base).unwrap().flatten().map(|e| e.path()).next().unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&unstick::session::export(&log, unstick::session::Format::Json).unwrap()).unwrap();
    let refused: Vec<&serde_json::Value> =
        json["steps"].as_array().unwrap().iter().filter(|s| s["kind"] == "act" && s["result"] == "failed").collect();
    assert!(
        refused.iter().any(|s| s["detail"].as_str().is_some_and(|d| d.contains("still has watcher"))),
        "{refused:?}"
    );
    // the release sent later, once the watcher was fenced, is the only one
    let sent: Vec<&str> = json["actions"].as_array().unwrap().iter().filter_map(|a| a["sent"].as_str()).collect();
    assert_eq!(sent.iter().filter(|c| c.contains("volumesInUse")).count(), 1, "{sent:?}");
}
