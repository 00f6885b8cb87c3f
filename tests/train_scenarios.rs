//! Every embedded scenario driven to its debrief through key events, on `TestBackend` at 80×24,
//! following the reference path: the console (the real event loop, reflectors, Ceph worker and
//! remediation worker with its journal and Lease) runs on the scenario's simulation. Each step of
//! the open playbook is run with Enter; confirmations get `y` or the typed object name; optional
//! Manual steps are skipped; Wait steps and Verify retries let simulated time pass (the trainee is
//! `tests/common/train.rs`, shared with tests/crash_kill.rs).
//!
//! Afterwards: the debrief lists every required reference step as done, no risky action, and the
//! simulation received exactly the writes the playbooks sent (no fencing of a Ready node).

mod common;

use std::time::Duration;

use common::train::Driver;
use crossterm::event::KeyCode;
use unstick::train::Phase;
use unstick::ui::app::Pane;

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
}
