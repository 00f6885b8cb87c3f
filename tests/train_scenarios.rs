//! Every embedded scenario driven to its debrief through key events, on `TestBackend` at 80×24,
//! following the reference path: the console (the real event loop, reflectors, Ceph worker and
//! remediation worker with its journal and Lease) runs on the scenario's simulation. Each step of
//! the open playbook is run with Enter; confirmations get `y` or the typed object name; optional
//! Manual steps are skipped; Wait steps and Verify retries let simulated time pass (the trainee is
//! `tests/common/train.rs`, shared with tests/crash_kill.rs).
//!
//! Afterwards: the debrief lists every required reference step as done, no risky action, and the
//! simulation received exactly the writes the playbooks sent (no fencing of a Ready node).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

mod common;

use std::time::Duration;

use common::train::{Driver, Setup};
use crossterm::event::KeyCode;
use unstick::ui::app::{App, Pane};
use unstick_core::train::Phase;

#[path = "common/export_check.rs"]
mod export_check;
#[path = "common/golden.rs"]
mod golden;
#[path = "common/journal_agrees.rs"]
mod journal_agrees;

async fn drive(name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let setup = Setup { sessions: Some(dir.path().join("sessions")), ..Setup::in_dir(dir.path()) };
    let d = play_to_the_debrief(name, setup).await;
    let tr = d.app.training.as_ref().unwrap();
    let db = tr.debrief().unwrap();
    let missed: Vec<_> = db.reference.iter().filter(|r| !r.followed() && !r.optional).map(|r| r.text.clone()).collect();
    assert!(missed.is_empty(), "{name}: reference steps not done: {missed:?}");
    assert!(db.risky.is_empty(), "{name}: {} risky, first: {:?}", db.risky.len(), db.risky.first());
    assert!(db.failed.is_empty(), "{name}: {:?}", db.failed);
    finish(name, d, dir.path(), true).await;
}

/// The first Ceph write the remediation worker sends (the backup's `rbd snap create`) fails; the
/// trainee runs the step again and goes on along the reference path. The debrief and the export
/// say what the journal says: the failed write listed, the Backup followed (its newest record).
async fn drive_with_a_failed_backup(name: &str) {
    use std::sync::atomic::AtomicBool;
    let dir = tempfile::tempdir().unwrap();
    let failed = std::sync::Arc::new(AtomicBool::new(false));
    let remedy_ceph: common::train::MakeTransport =
        Box::new(move |sim| std::sync::Arc::new(FailOnce { sim: sim.clone(), failed }) as std::sync::Arc<_>);
    let setup = Setup { sessions: Some(dir.path().join("sessions")), remedy_ceph, ..Setup::in_dir(dir.path()) };
    let d = play_to_the_debrief(name, setup).await;
    let db = d.app.training.as_ref().unwrap().debrief().unwrap();
    assert_eq!(db.failed.len(), 1, "{name}: the failed snapshot is listed: {:?}", db.failed);
    assert!(db.failed[0].contains("rbd snap create"), "{:?}", db.failed);
    let backup = db.reference.iter().find(|r| r.kind == unstick_core::remedy::journal::StepType::Backup).unwrap();
    assert!(backup.done_after.is_some(), "{name}: run again, the Backup is done: {backup:?}");
    finish(name, d, dir.path(), false).await;
}

/// The remediation worker's Ceph: the simulation, except that the first write answers exit 1.
struct FailOnce {
    sim: unstick_core::sources::sim::Sim,
    failed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl unstick_core::sources::ceph::cli::CephTransport for FailOnce {
    fn prefix(&self, tool: unstick_core::sources::ceph::cli::Tool) -> Vec<String> {
        self.sim.prefix(tool)
    }

    fn run<'a>(
        &'a self,
        argv: &'a [String],
    ) -> futures::future::BoxFuture<
        'a,
        Result<unstick_core::sources::ceph::cli::Completed, unstick_core::sources::ceph::cli::StartError>,
    > {
        Box::pin(async move {
            let (_, words) = unstick_core::sources::sim::ceph::command(argv);
            if unstick_core::sources::sim::ceph::is_write(&words)
                && !self.failed.swap(true, std::sync::atomic::Ordering::SeqCst)
            {
                return Ok((1, String::new(), "rbd: failed to create snapshot: (5) Input/output error".into()));
            }
            self.sim.run(argv).await
        })
    }

    fn name(&self) -> &'static str {
        "sim (first write fails)"
    }
}

/// The debrief compared with the journal, then the debrief's keys, the export and its golden
/// file (the success path's only: `golden` false skips it).
async fn finish(name: &str, mut d: Driver, dir: &std::path::Path, golden: bool) {
    let journals = journal_agrees::journals(&dir.join("incidents"));
    let db = d.app.training.as_ref().unwrap().debrief().unwrap();
    journal_agrees::debrief_agrees(name, db, &journals);
    // a reference step's own times (one per node or volume) name distinct things: each of
    // rwo-claim-shared's two Manual steps once listed both Manual steps' ends as the same volume
    let lines = db.lines();
    for (i, l) in lines.iter().enumerate().filter(|(_, l)| l.starts_with("  ✓")) {
        let subs: Vec<String> = lines[i + 1..]
            .iter()
            .take_while(|x| x.starts_with("            at "))
            .map(|x| x.split_whitespace().skip(2).collect::<Vec<_>>().join(" "))
            .collect();
        let mut distinct = subs.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), subs.len(), "{name}: {l} lists the same thing twice:\n{}", lines.join("\n"));
    }
    // the debrief opened by itself: Enter (typed for a step) never quits it; q does, after its
    // key guard has passed
    d.key(KeyCode::Enter).await;
    assert!(!d.app.quit, "Enter on the debrief does not quit");
    d.sim.advance(Duration::from_secs(60));
    // the console takes the clock's time at its next tick (each second of wall time; later under
    // load): pumped until it has, bounded
    let (target, end) = (d.sim.now(), std::time::Instant::now() + Duration::from_secs(30));
    while d.app.now < target && std::time::Instant::now() < end {
        d.pump(Duration::from_millis(200)).await;
    }
    d.key(KeyCode::Char('q')).await;
    assert!(d.app.quit, "q on the debrief leaves");
    check_export(name, &mut d, dir, &journals, golden);
}

/// A reference that asks for a backup of each volume: every finding on a volume has its
/// playbook opened and its Backup step run, then closed (the runs resume from their journals).
async fn back_up_each_volume(d: &mut Driver) {
    let volumes: std::collections::BTreeSet<String> =
        d.app.data.findings.iter().filter_map(|f| f.volume.clone()).collect();
    for pv in volumes {
        d.app.focus = Pane::Findings;
        let Some(row) = d.app.data.findings.iter().position(|f| f.volume.as_deref() == Some(pv.as_str())) else {
            continue;
        };
        d.app.select(Pane::Findings, row);
        d.key(KeyCode::Char('p')).await;
        for _ in 0..100 {
            d.pump(Duration::from_millis(100)).await;
            if d.app.playbook().is_some_and(|pb| pb.runner.is_some() && pb.busy.is_none()) {
                break;
            }
        }
        if d.app.playbook().and_then(|pb| pb.runner.as_ref()).is_some_and(|r| r.backup.is_none()) {
            d.key(KeyCode::Enter).await;
        }
        for _ in 0..100 {
            d.pump(Duration::from_millis(100)).await;
            let pb = d.app.playbook();
            if pb.and_then(|pb| pb.runner.as_ref()).is_some_and(|r| r.backup.is_some()) {
                break;
            }
            // a failed backup (tests with a failing write) is run again
            let failed = pb
                .and_then(|pb| pb.runner.as_ref())
                .is_some_and(|r| matches!(r.states.first(), Some(unstick_core::remedy::run::StepState::Failed(_))));
            if failed && pb.is_some_and(|pb| pb.busy.is_none()) {
                d.key(KeyCode::Enter).await;
            }
        }
        assert!(
            d.app.playbook().and_then(|pb| pb.runner.as_ref()).is_some_and(|r| r.backup.is_some()),
            "backup of {pv}:\n{}",
            d.screen()
        );
        d.key(KeyCode::Esc).await;
        d.pump(Duration::from_millis(300)).await;
    }
}

/// Plays `name` along the reference path to its debrief.
async fn play_to_the_debrief(name: &str, setup: Setup) -> Driver {
    let mut d = Driver::with(name, setup);
    d.pump(Duration::from_millis(800)).await;
    assert!(d.screen().contains(&format!("training: {name}")), "briefing first:\n{}", d.screen());
    d.key(KeyCode::Enter).await;
    assert_eq!(*d.phase(), Phase::Running);
    let sc = d.app.training.as_ref().unwrap().scenario.clone();
    let patterns = |d: &Driver| -> std::collections::BTreeSet<String> {
        d.app.data.findings.iter().map(|f| f.pattern.to_string()).collect()
    };
    // the watches list and the first Ceph scan answers: bounded (30 s; a loaded machine took
    // more than 10 s once), not timed
    for _ in 0..120 {
        d.pump(Duration::from_millis(250)).await;
        if sc.patterns.iter().all(|p| patterns(&d).contains(p)) {
            break;
        }
    }
    let seen = patterns(&d);
    for p in &sc.patterns {
        assert!(seen.contains(p), "{name}: the console shows {p} at the start (saw {seen:?})\n{}", d.screen());
    }
    if sc.reference.iter().any(|r| r.each_volume) {
        back_up_each_volume(&mut d).await;
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
    // the writes the simulation received are the playbooks' writes, and no Ready node was fenced
    let writes: Vec<String> = d.sim.world().writes.iter().map(|(_, w)| w.clone()).collect();
    assert!(!writes.is_empty());
    assert!(!writes.iter().any(|w| w.contains("blocklist add") && !w.contains('/')), "{writes:?}");
    d
}

/// The session's postmortem export is complete and exact: no placeholder, every write the
/// simulation received listed with the body sent, every step of the run in the timeline, the
/// debrief as its own record; its objects, confirmations and actions match
/// `tests/golden/train-<name>.md`.
fn check_export(
    name: &str,
    d: &mut Driver,
    dir: &std::path::Path,
    journals: &[(String, unstick_core::remedy::journal::JournalReport)],
    golden: bool,
) {
    assert_eq!(d.app.end_session(), None, "the session log was written");
    let base = dir.join("sessions");
    let logs: Vec<_> = std::fs::read_dir(&base).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let md = unstick_core::session::export(&logs[0], unstick_core::session::Format::Markdown).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&unstick_core::session::export(&logs[0], unstick_core::session::Format::Json).unwrap())
            .unwrap();
    assert_eq!(export_check::placeholders(&md), Vec::<String>::new(), "{name}: placeholders in the export:\n{md}");
    journal_agrees::export_agrees(name, &json, journals);
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
    let md = export_check::normalise(&md, &session, dir);
    if golden {
        golden::check(&format!("train-{name}.md"), &export_check::stable_part(&md));
    }
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
scenario_test!(driver_not_registered, "driver-not-registered");
scenario_test!(rwo_claim_shared, "rwo-claim-shared");

macro_rules! failed_backup_test {
    ($f:ident, $name:literal) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $f() {
            drive_with_a_failed_backup($name).await;
        }
    };
}

failed_backup_test!(stale_lock_failed_backup, "stale-lock");
failed_backup_test!(lost_node_multi_attach_failed_backup, "lost-node-multi-attach");
failed_backup_test!(dead_node_watcher_failed_backup, "dead-node-watcher");
failed_backup_test!(unmap_busy_failed_backup, "unmap-busy");
failed_backup_test!(same_node_restage_failed_backup, "same-node-restage");
failed_backup_test!(mass_unmap_busy_failed_backup, "mass-unmap-busy");
failed_backup_test!(node_loss_five_volumes_failed_backup, "node-loss-five-volumes");
failed_backup_test!(driver_not_registered_failed_backup, "driver-not-registered");
failed_backup_test!(rwo_claim_shared_failed_backup, "rwo-claim-shared");

/// Releasing the VolumeAttachment before fencing the dead node's watcher (the wrong order in
/// seed 002) is refused by the safety rules; the debrief lists the attempt with what it would have
/// done in this scenario, and the trainee still finishes along the reference path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_risky_attempt_is_refused_and_in_the_debrief() {
    let dir = tempfile::tempdir().unwrap();
    let setup = Setup { sessions: Some(dir.path().join("sessions")), ..Setup::in_dir(dir.path()) };
    let mut d = Driver::with("dead-node-watcher", setup);
    d.pump(Duration::from_millis(800)).await;
    d.key(KeyCode::Enter).await;
    d.pump(Duration::from_millis(1500)).await;
    let row = d
        .app
        .data
        .findings
        .iter()
        .position(|f| f.pattern.to_string() == "multi-attach-node-lost")
        .expect("multi-attach finding");
    d.app.focus = Pane::Findings;
    d.app.select(Pane::Findings, row);
    d.key(KeyCode::Char('p')).await;
    d.pump(Duration::from_millis(500)).await;
    let mut refused = false;
    for _ in 0..40 {
        let pb = d.app.playbook().expect("playbook open");
        if let Some(r) = &pb.runner
            && let Some(step) = pb.playbook.steps.get(r.cursor)
            && matches!(
                &step.kind,
                unstick_core::remedy::playbook::StepKind::Act(
                    unstick_core::remedy::action::WriteAction::ReleaseVolumeInUse { .. }
                )
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
    assert_eq!(unstick_core::train::debrief::risk_kind(&tr.refused[0].1), Some("has-watchers"));
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
    let base = dir.path().join("sessions");
    let log = std::fs::read_dir(&base).unwrap().flatten().map(|e| e.path()).next().unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&unstick_core::session::export(&log, unstick_core::session::Format::Json).unwrap())
            .unwrap();
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

impl Driver {
    /// Pumps (letting simulated time pass when asked) until `cond` holds; false after `tries`.
    async fn until(&mut self, tries: usize, advance: u64, cond: impl Fn(&App) -> bool) -> bool {
        for _ in 0..tries {
            if cond(&self.app) {
                return true;
            }
            if advance > 0 {
                self.sim.advance(Duration::from_secs(advance));
            }
            self.pump(Duration::from_millis(300)).await;
        }
        cond(&self.app)
    }

    /// Selects the first finding of `pattern` and presses `p`; waits for the runner.
    async fn open(&mut self, pattern: &str) {
        let found = self.until(40, 0, |a| a.data.findings.iter().any(|f| f.pattern.to_string() == pattern)).await;
        assert!(found, "a {pattern} finding:\n{}", self.screen());
        let row = self.app.data.findings.iter().position(|f| f.pattern.to_string() == pattern).unwrap();
        self.app.focus = Pane::Findings;
        self.app.select(Pane::Findings, row);
        self.key(KeyCode::Char('p')).await;
        let open = self.until(40, 0, |a| a.playbook().is_some_and(|p| p.runner.is_some())).await;
        assert!(open, "the {pattern} playbook opens:\n{}", self.screen());
        assert!(self.until(20, 0, |a| a.playbook().is_some_and(|p| p.busy.is_none())).await);
    }

    fn cursor(&self) -> usize {
        self.app.playbook().and_then(|p| p.runner.as_ref()).map(|r| r.cursor).unwrap_or(usize::MAX)
    }

    fn snapshot(&self) -> Option<String> {
        let r = self.app.playbook()?.runner.as_ref()?;
        r.backup.as_ref()?.snapshot.clone()
    }

    fn snap_creates(&self) -> usize {
        self.sim.world().writes.iter().filter(|(_, w)| w.contains("snap create")).count()
    }

    /// Runs the current step with Enter (answering its confirmation) until the cursor moves on.
    async fn run_step(&mut self) {
        let before = self.cursor();
        for _ in 0..20 {
            if self.cursor() != before {
                return;
            }
            self.play().await;
        }
        panic!("step {} did not finish:\n{}", before + 1, self.screen());
    }

    /// Esc, then the same pattern's playbook again.
    async fn reopen(&mut self, pattern: &str) {
        self.key(KeyCode::Esc).await;
        assert!(self.app.playbook().is_none(), "Esc closes the playbook");
        self.pump(Duration::from_millis(600)).await;
        self.open(pattern).await;
    }
}

async fn started(name: &str) -> Driver {
    let mut d = Driver::new(name);
    d.pump(Duration::from_millis(800)).await;
    d.key(KeyCode::Enter).await;
    d
}

/// Esc from a playbook keeps its progress: reopened, it resumes at the next step from the journal,
/// with the same (one) snapshot; opening and closing without acting leaves no journal at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_and_reopen_resume_with_the_same_snapshot() {
    let mut d = started("stale-lock").await;
    d.open("stale-lock").await;
    let base = d.app.training.as_ref().unwrap().journal_base.clone();
    d.key(KeyCode::Esc).await;
    d.pump(Duration::from_millis(500)).await;
    let journals = unstick_core::remedy::journal::incidents::list_incidents(&base).unwrap();
    assert!(journals.is_empty(), "opening and closing without acting journals nothing: {journals:?}");
    d.open("stale-lock").await;
    assert_eq!(d.cursor(), 0);
    d.run_step().await; // Backup
    let snap = d.snapshot().expect("the backup's snapshot");
    assert_eq!(d.snap_creates(), 1);
    d.run_step().await; // Check
    assert_eq!(d.cursor(), 2);
    d.reopen("stale-lock").await;
    assert_eq!(d.cursor(), 2, "resumed at step 3 after the backup and the check:\n{}", d.screen());
    assert_eq!(d.snapshot().as_deref(), Some(snap.as_str()), "the same snapshot, re-verified");
    assert_eq!(d.snap_creates(), 1, "no second snapshot");
    let screen = d.screen();
    assert!(screen.contains("resumed from the journal"), "{screen}");
    let pb = d.app.playbook().unwrap();
    assert_eq!(unstick::ui::popups::playbook::step_state(pb, 0), "done");
    assert_eq!(unstick::ui::popups::playbook::step_state(pb, 1), "done");
    // the first Act, then Esc and reopen once more: the next step, still one snapshot
    d.run_step().await;
    assert_eq!(d.cursor(), 3);
    d.key(KeyCode::Esc).await;
    d.pump(Duration::from_millis(600)).await;
    if d.app.data.findings.iter().any(|f| f.pattern.to_string() == "stale-lock") {
        d.open("stale-lock").await;
        assert_eq!(d.cursor(), 3, "resumed after the first act:\n{}", d.screen());
    }
    assert_eq!(d.snap_creates(), 1, "one snapshot in the whole run");
}

/// After an undo the playbook shows the undone step as undone (not done) and makes it current
/// again, also after Esc and reopen; the popup, the playbook and the journal name it by the same
/// number.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undone_step_shows_as_undone_with_one_numbering() {
    let mut d = started("dead-node-watcher").await;
    // every node reports a bootID, journaled with the fence; the guarded unfence lets the undo
    // through once it changed (the node rebooted)
    let boot = |d: &Driver, id: &str| {
        use unstick_core::sources::sim::store::{ObjKey, Res};
        for n in d.sim.list(Res::Node, None).0 {
            let name = n["metadata"]["name"].as_str().unwrap().to_string();
            let patch = serde_json::json!({"status": {"nodeInfo": {"bootID": id}}});
            d.sim.patch(&ObjKey::new(Res::Node, "", &name), &patch, false).unwrap();
        }
    };
    boot(&d, "boot-1");
    d.open("dead-node-watcher").await;
    let pb = d.app.playbook().unwrap();
    let blocklist = pb
        .playbook
        .steps
        .iter()
        .position(|s| {
            matches!(
                &s.kind,
                unstick_core::remedy::playbook::StepKind::Act(
                    unstick_core::remedy::action::WriteAction::BlocklistAdd { .. }
                )
            )
        })
        .expect("a blocklist step");
    let id = pb.playbook.steps[blocklist].id.clone();
    while d.cursor() <= blocklist {
        d.run_step().await;
    }
    // the fenced node reboots; u: the undo popup names the step by its playbook number
    boot(&d, "boot-2");
    d.pump(Duration::from_millis(600)).await;
    d.key(KeyCode::Char('u')).await;
    assert!(d.until(20, 0, |a| a.popups().confirm().is_some()).await);
    let title = format!("UNDO of step {} ({id})", blocklist + 1);
    assert!(d.screen().contains(&title), "{title}:\n{}", d.screen());
    let before = d.cursor();
    for _ in 0..10 {
        if d.app.popups().confirm().is_none() {
            break;
        }
        d.play().await;
    }
    let undone =
        |a: &App| a.playbook().is_some_and(|p| unstick::ui::popups::playbook::step_state(p, blocklist) == "undone");
    assert!(d.until(20, 0, undone).await, "the blocklist step shows undone:\n{}", d.screen());
    assert_eq!(d.cursor(), blocklist, "the undone step is current again (was {before})");
    d.reopen("dead-node-watcher").await;
    assert!(undone(&d.app), "still undone after Esc and reopen:\n{}", d.screen());
    assert_eq!(d.cursor(), blocklist);
    // the journal listing names the same step by the same number
    let base = d.app.training.as_ref().unwrap().journal_base.clone();
    let inc = unstick_core::remedy::journal::incidents::list_incidents(&base).unwrap();
    let inc = inc.iter().find(|i| i.id.contains("dead-node-watcher")).expect("the incident");
    let text = unstick::cmd::journal::show(&base, &inc.id).unwrap();
    assert!(text.contains(&format!("step {} ({id}): done", blocklist + 1)), "{text}");
    assert!(text.contains(&format!("undo of step {} ({id}): done", blocklist + 1)), "{text}");
}

/// dead-node-watcher: after the first playbook (force-delete, blocklist, verify) and Esc, the
/// second (multi-attach) playbook's Check passes against the state the first one left, and its
/// own run starts from its own backup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_playbook_rechecks_cleanly_after_the_first() {
    let mut d = started("dead-node-watcher").await;
    d.open("dead-node-watcher").await;
    let n = d.app.playbook().unwrap().playbook.steps.len();
    while d.cursor() < n {
        d.run_step().await;
    }
    d.key(KeyCode::Esc).await;
    d.pump(Duration::from_millis(800)).await;
    d.open("multi-attach-node-lost").await;
    assert_eq!(d.cursor(), 0, "another incident: its own run from step 1");
    d.run_step().await; // Backup
    d.run_step().await; // Check
    let pb = d.app.playbook().unwrap();
    assert_eq!(unstick::ui::popups::playbook::step_state(pb, 1), "done", "the re-check passed:\n{}", d.screen());
    assert_eq!(d.cursor(), 2);
}
