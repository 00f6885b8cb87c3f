use std::time::Duration;

use crossterm::event::KeyCode;
use jiff::SignedDuration;

use crate::ui::app::{App, Msg};
use crate::ui::popups::playbook::tests::press;
use unstick_core::sources::sim::scenario::Scenario;
use unstick_core::train::{Phase, Training};

/// A training console on stale-lock, briefing closed, the incident solved on the simulation.
fn solved(dir: &std::path::Path) -> (App, unstick_core::sources::sim::Sim) {
    let s = Scenario::embedded("stale-lock").unwrap().unwrap();
    let sim = s.start("2026-11-22T03:00:00Z".parse().unwrap(), 0.0);
    let mut a = crate::ui::app::tests::incidents_app(false);
    a.now = sim.now();
    a.start_training(Training::new(s, sim.clone(), dir.to_path_buf(), unstick_core::clock::wall()));
    press(&mut a, KeyCode::Enter);
    assert!(matches!(a.training.as_ref().unwrap().phase, Phase::Running));
    a.training.as_mut().unwrap().sim.set_speed(0.0);
    let argv: Vec<String> = "rbd lock rm mioss/index-api-image kubelet_lock_magic_node1 client.24128"
        .split(' ')
        .map(String::from)
        .collect();
    assert_eq!(sim.run_ceph(&argv).0, 0);
    sim.advance(Duration::from_secs(30));
    (a, sim)
}

fn tick(a: &mut App, secs: i64) {
    let t = a.now + SignedDuration::from_secs(secs);
    a.update(Msg::Tick(t));
}

#[test]
fn the_debrief_steals_no_key_and_enter_never_quits() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, _sim) = solved(dir.path());
    tick(&mut a, 1);
    assert!(matches!(a.training.as_ref().unwrap().phase, Phase::Debrief(_)), "every goal holds: the debrief opened");
    // keys typed for something else right as it opens are ignored, q included
    for k in [KeyCode::Enter, KeyCode::Esc, KeyCode::Char('q'), KeyCode::Char('n')] {
        press(&mut a, k);
        assert!(
            !a.quit && !a.is_open(crate::ui::popups::Kind::Note),
            "{k:?} was taken by the debrief that just opened"
        );
    }
    tick(&mut a, 3);
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Esc);
    assert!(!a.quit, "Enter and Esc never quit");
    press(&mut a, KeyCode::Char('n'));
    assert!(a.is_open(crate::ui::popups::Kind::Note), "n writes a note from the debrief");
    press(&mut a, KeyCode::Esc);
    assert!(!a.is_open(crate::ui::popups::Kind::Note));
    press(&mut a, KeyCode::Char('q'));
    assert!(a.quit);
}

#[test]
fn the_debrief_waits_for_the_open_playbooks_verify_step() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, _sim) = solved(dir.path());
    a.remedy.worker = true;
    let row = a
        .data
        .findings
        .iter()
        .position(|f| f.pattern == unstick_core::diagnose::PatternId::StaleLock)
        .expect("stale-lock finding");
    a.select(crate::ui::app::Pane::Findings, row);
    a.focus = crate::ui::app::Pane::Findings;
    press(&mut a, KeyCode::Char('p'));
    let n = a.playbook().unwrap().playbook.steps.len();
    let verify =
        a.playbook().unwrap().playbook.steps.iter().position(|s| s.kind.name() == "Verify").expect("a Verify step");
    let v = crate::ui::popups::playbook::tests::runner_view(&a, verify, true);
    a.update(Msg::Remedy(unstick_core::remedy::service::RemedyMsg::View(v)));
    tick(&mut a, 1);
    assert!(matches!(a.training.as_ref().unwrap().phase, Phase::Running), "the Verify step is still to run");
    assert!(a.remedy.notice.as_deref().unwrap().contains("remaining Verify/Wait"), "{:?}", a.remedy.notice);
    let v = crate::ui::popups::playbook::tests::runner_view(&a, n, true);
    a.update(Msg::Remedy(unstick_core::remedy::service::RemedyMsg::View(v)));
    tick(&mut a, 1);
    assert!(matches!(a.training.as_ref().unwrap().phase, Phase::Debrief(_)));
    // the debrief opened over the playbook (every step done): q leaves, as the debrief says,
    // without asking about the playbook under it
    assert!(a.playbook().is_some());
    tick(&mut a, 3);
    press(&mut a, KeyCode::Char('q'));
    assert!(!a.is_open(crate::ui::popups::Kind::Quit), "no quit confirmation over the debrief");
    assert!(a.quit);
}

#[tokio::test]
async fn ceph_answers_in_training_are_stamped_on_the_simulated_clock() {
    let dir = tempfile::tempdir().unwrap();
    let (_a, sim) = solved(dir.path());
    let cli = sim.ceph_cli(unstick_core::config::Config::defaults().ceph);
    let before = sim.now();
    let b = unstick_core::sources::ceph::read_blocklist(&cli).await;
    let after = sim.now();
    assert!(before <= b.at && b.at <= after, "read at the simulated time ({before}..{after}), not {}", b.at);
    assert!((jiff::Timestamp::now() - b.at).get_seconds().abs() > 3600, "the simulated clock is not the wall clock");
}
