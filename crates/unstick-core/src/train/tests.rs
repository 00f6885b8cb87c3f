use std::time::Duration;

use super::*;

fn stale_lock() -> (Scenario, Sim) {
    let s = Scenario::embedded("stale-lock").unwrap().unwrap();
    let sim = s.start("2026-11-22T03:00:00Z".parse().unwrap(), 0.0);
    (s, sim)
}

#[test]
fn goals_hold_only_after_the_fix_and_the_mount() {
    let (s, sim) = stale_lock();
    let cfg = crate::config::Config::defaults().diagnose;
    assert_eq!(goals_met(&sim, &s.goals, &cfg), vec![false, false]);
    let argv: Vec<String> = "rbd lock rm mioss/index-api-image kubelet_lock_magic_node1 client.24128"
        .split(' ')
        .map(String::from)
        .collect();
    assert_eq!(sim.run_ceph(&argv).0, 0);
    // the lock is gone, but kubelet has not mounted yet: the pod is still waiting
    assert_eq!(goals_met(&sim, &s.goals, &cfg), vec![true, false]);
    sim.advance(Duration::from_secs(20));
    assert_eq!(goals_met(&sim, &s.goals, &cfg), vec![true, true]);
}

#[test]
fn briefing_stops_time_and_hints_unlock_with_simulated_time() {
    let (s, sim) = stale_lock();
    let mut t = Training::new(s, sim.clone(), std::env::temp_dir(), crate::clock::wall());
    let before = sim.now();
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(sim.now(), before, "speed 0 during the briefing");
    t.begin(0.0);
    assert_eq!(t.phase, Phase::Running);
    assert!(!t.unlock_hints());
    sim.advance(Duration::from_secs(61));
    assert!(t.unlock_hints());
    assert_eq!(t.unlocked, 1);
    assert!(!t.unlock_hints(), "announced once");
    sim.advance(Duration::from_secs(600));
    t.unlock_hints();
    assert_eq!(t.unlocked, 3);
}

#[test]
fn the_debrief_opens_when_every_goal_holds() {
    let (s, sim) = stale_lock();
    let dir = tempfile::tempdir().unwrap();
    let mut t = Training::new(s, sim.clone(), dir.path().to_path_buf(), crate::clock::wall());
    let cfg = crate::config::Config::defaults().diagnose;
    t.begin(0.0);
    assert!(!t.check(&cfg));
    let argv: Vec<String> = "rbd lock rm mioss/index-api-image kubelet_lock_magic_node1 client.24128"
        .split(' ')
        .map(String::from)
        .collect();
    sim.run_ceph(&argv);
    sim.advance(Duration::from_secs(20));
    // as the console does after an action (the check throttle runs on real time: a slow first
    // check on a loaded machine must not hold back the one after the fix)
    t.goals_may_have_changed();
    assert!(t.check(&cfg));
    let d = t.debrief().expect("debrief");
    assert_eq!(d.scenario, "stale-lock");
    assert!(d.reference.iter().all(|r| r.done_after.is_none()), "nothing went through the console's playbooks");
}
