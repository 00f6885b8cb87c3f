use super::*;
use crate::remedy::action::safety::SafetyError;
use crate::remedy::playbook::condition::Condition;
use crate::remedy::playbook::{Step, StepKind};
use crate::remedy::run::{StepState, WaitStatus};

#[test]
fn safety_refusals_offer_the_typed_override() {
    let e = RunError::Safety(SafetyError::ReadyNode { node: "n1".into() });
    assert_eq!(override_need(&e), Some(OverrideNeed::ReadyNode("n1".into())));
    let e = RunError::Safety(SafetyError::WideBlocklist { addr: "10.0.0.9:0/0".into(), ip: "10.0.0.9".into() });
    assert_eq!(override_need(&e).as_ref().map(OverrideNeed::name), Some("10.0.0.9:0/0"));
    assert_eq!(override_need(&RunError::BackupFirst), None);
}

/// A live service on the dead-node-watcher simulation (its timers on the simulation's clock, Lease
/// times too), with one Wait step open: no watcher left on the image, which node1's watcher keeps
/// pending. With `volume`, the run holds that volume's Lease.
async fn waiting_on_the_simulation(
    dir: &std::path::Path,
    volume: Option<&str>,
) -> (crate::sources::sim::Sim, UnboundedSender<RemedyRequest>, UnboundedReceiver<RemedyMsg>) {
    on_the_simulation(dir, volume, |cond| StepKind::Wait {
        condition: cond,
        timeout: Duration::from_secs(600),
        poll: Duration::from_secs(POLL),
    })
    .await
}

/// A live service on the dead-node-watcher simulation with one step open, made by `kind` from the
/// condition "no watcher left on the image" (node1's watcher keeps it from holding).
async fn on_the_simulation(
    dir: &std::path::Path,
    volume: Option<&str>,
    kind: impl FnOnce(Condition) -> StepKind,
) -> (crate::sources::sim::Sim, UnboundedSender<RemedyRequest>, UnboundedReceiver<RemedyMsg>) {
    let scenario = crate::sources::sim::scenario::Scenario::embedded("dead-node-watcher").unwrap().unwrap();
    let sim = scenario.start("2026-11-22T03:00:00Z".parse().unwrap(), 0.0);
    let mut cfg = crate::config::Config::defaults();
    cfg.remedy.wait_poll_seconds = POLL;
    cfg.remedy.lease_duration_seconds = LEASE;
    cfg.remedy.verify_timeout_seconds = VERIFY;
    let api_timeout = Duration::from_secs(5);
    let (kube, ceph) = (sim.client(), sim.ceph_cli(cfg.ceph.clone()));
    let executor = Executor::new(false, kube.clone(), ceph.clone(), api_timeout).ok();
    let (tx, mut rx) = spawn(ServiceParts {
        reader: Reader { kube, ceph, api_timeout, clock: std::sync::Arc::new(sim.clone()) },
        executor,
        cfg: cfg.remedy.clone(),
        base: dir.to_path_buf(),
        author: Author { operator: "op@host".into(), context: "test".into() },
        clocks: Clocks { records: std::sync::Arc::new(sim.clone()), timers: std::sync::Arc::new(sim.clone()) },
    });
    let image = crate::model::ImageRef {
        pool: "k8s".into(),
        namespace: String::new(),
        image: "csi-vol-7250b242-c2ba-4a96-a015-36bfb4c0cadd".into(),
    };
    let wait = Step {
        id: "dead-node-watcher/1".into(),
        title: "Wait for the watcher to go".into(),
        explain: WAIT_NEXT.into(),
        kind: kind(Condition::NoWatchers { image }),
        optional: false,
    };
    let playbook = Playbook {
        pattern: "dead-node-watcher",
        title: "wait only".into(),
        scope: Default::default(),
        volume: volume.map(String::from),
        steps: vec![wait],
    };
    let baseline = LiveState::from_snapshot(&crate::model::Snapshot::default(), &playbook.scope, sim.now());
    tx.send(RemedyRequest::Open { playbook: Box::new(playbook), baseline: Box::new(baseline), subject: "pv".into() })
        .unwrap();
    assert!(matches!(next(&mut rx).await, RemedyMsg::ServerVersion(_)));
    assert!(matches!(next(&mut rx).await, RemedyMsg::View(v) if v.cursor == 0));
    (sim, tx, rx)
}

/// The service's next message (10 s bound).
async fn next(rx: &mut UnboundedReceiver<RemedyMsg>) -> RemedyMsg {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a message within 10 s")
        .expect("service runs")
}

#[tokio::test]
async fn a_pending_wait_is_polled_on_the_service_timer_by_the_console_clock() {
    let dir = tempfile::tempdir().unwrap();
    let (sim, tx, mut rx) = waiting_on_the_simulation(dir.path(), None).await;
    tx.send(RemedyRequest::WaitPoll).unwrap();
    let first = next(&mut rx).await;
    assert!(
        matches!(&first, RemedyMsg::Wait(WaitStatus::Pending { seen, .. }) if seen.contains("watcher")),
        "{first:?}"
    );
    assert!(matches!(next(&mut rx).await, RemedyMsg::View(v) if v.cursor == 0));
    // the simulation's clock stands still: past the poll period in real time, no poll
    let quiet = tokio::time::timeout(Duration::from_millis(1500), rx.recv()).await;
    assert!(quiet.is_err(), "polled before the period passed on the console clock: {quiet:?}");
    // the poll period passes on the console clock: the service polls unasked, again and again
    for _ in 0..2 {
        sim.advance(Duration::from_secs(POLL));
        let m = next(&mut rx).await;
        assert!(matches!(&m, RemedyMsg::Wait(WaitStatus::Pending { .. })), "{m:?}");
        assert!(matches!(next(&mut rx).await, RemedyMsg::View(v) if v.cursor == 0));
    }
    // closed: nothing left to poll
    tx.send(RemedyRequest::Close).unwrap();
    sim.advance(Duration::from_secs(POLL));
    let quiet = tokio::time::timeout(Duration::from_millis(1000), rx.recv()).await;
    assert!(quiet.is_err(), "polled after Close: {quiet:?}");
}

#[tokio::test]
async fn a_stopped_wait_is_not_polled_until_asked_again() {
    let dir = tempfile::tempdir().unwrap();
    let (sim, tx, mut rx) = waiting_on_the_simulation(dir.path(), None).await;
    tx.send(RemedyRequest::WaitPoll).unwrap();
    assert!(matches!(next(&mut rx).await, RemedyMsg::Wait(WaitStatus::Pending { .. })));
    assert!(matches!(next(&mut rx).await, RemedyMsg::View(v) if v.cursor == 0));
    tx.send(RemedyRequest::StopWait).unwrap();
    let m = next(&mut rx).await;
    assert!(matches!(&m, RemedyMsg::Done { ok: true, text } if text.contains("stopped waiting")), "{m:?}");
    assert!(matches!(next(&mut rx).await, RemedyMsg::View(v) if v.cursor == 0), "the step is still current");
    sim.advance(Duration::from_secs(POLL));
    let quiet = tokio::time::timeout(Duration::from_millis(1000), rx.recv()).await;
    assert!(quiet.is_err(), "polled after StopWait: {quiet:?}");
    tx.send(RemedyRequest::WaitPoll).unwrap();
    assert!(matches!(next(&mut rx).await, RemedyMsg::Wait(WaitStatus::Pending { .. })), "polls again when asked");
}

/// The service's next message that is not a session-log record.
async fn next_answer(rx: &mut UnboundedReceiver<RemedyMsg>) -> RemedyMsg {
    loop {
        match next(rx).await {
            RemedyMsg::Record(_) => continue,
            m => return m,
        }
    }
}

#[tokio::test]
async fn a_verify_reads_again_until_its_time_runs_out_then_fails_journaled_and_runs_again() {
    let dir = tempfile::tempdir().unwrap();
    let (sim, tx, mut rx) = on_the_simulation(dir.path(), None, |c| StepKind::Verify(vec![c])).await;
    tx.send(RemedyRequest::Verify { index: 0 }).unwrap();
    // the first read: not yet, and not failed — the service reads again on its timer
    let m = next_answer(&mut rx).await;
    assert!(
        matches!(&m, RemedyMsg::Verified { checks, remaining: Some(r), .. } if !checks[0].holds && r.as_secs() == VERIFY),
        "{m:?}"
    );
    assert!(
        matches!(next_answer(&mut rx).await, RemedyMsg::View(v) if v.cursor == 0 && v.states[0] == StepState::Pending)
    );
    sim.advance(Duration::from_secs(POLL));
    let m = next_answer(&mut rx).await;
    assert!(matches!(&m, RemedyMsg::Verified { remaining: Some(r), .. } if r.as_secs() == VERIFY - POLL), "{m:?}");
    assert!(matches!(next_answer(&mut rx).await, RemedyMsg::View(_)));
    // its time runs out on the console clock: failed, journaled, still the current step
    sim.advance(Duration::from_secs(VERIFY));
    let m = next_answer(&mut rx).await;
    assert!(matches!(&m, RemedyMsg::Verified { remaining: None, checks, .. } if !checks[0].holds), "{m:?}");
    let m = next_answer(&mut rx).await;
    assert!(
        matches!(&m, RemedyMsg::View(v) if v.cursor == 0 && matches!(&v.states[0], StepState::Failed(t) if t.contains("still not so after"))),
        "{m:?}"
    );
    let listed = crate::remedy::journal::incidents::list_incidents(dir.path()).unwrap();
    assert_eq!(listed.iter().map(|i| i.problems).sum::<usize>(), 1, "unstick journal counts the failed Verify");
    sim.advance(Duration::from_secs(POLL));
    let quiet = tokio::time::timeout(Duration::from_millis(800), rx.recv()).await;
    assert!(quiet.is_err(), "read again after it failed: {quiet:?}");
    // run again (the finding may have cleared meanwhile): its time starts again
    tx.send(RemedyRequest::Verify { index: 0 }).unwrap();
    let m = next_answer(&mut rx).await;
    assert!(matches!(&m, RemedyMsg::Verified { remaining: Some(r), .. } if r.as_secs() == VERIFY), "{m:?}");
}

/// What the Wait step of these tests says to do when its condition does not come.
const WAIT_NEXT: &str = "If it does not go: fence the watcher's exact address.";

/// A Wait whose condition does not come ends at its timeout (console clock), failed and
/// journaled, saying what it waited for, what it saw, and what to do next.
#[tokio::test]
async fn a_wait_ends_at_its_timeout_saying_what_it_waited_for_and_what_next() {
    let dir = tempfile::tempdir().unwrap();
    let (sim, tx, mut rx) = on_the_simulation(dir.path(), None, |cond| StepKind::Wait {
        condition: cond,
        timeout: Duration::from_secs(3),
        poll: Duration::from_secs(POLL),
    })
    .await;
    tx.send(RemedyRequest::WaitPoll).unwrap();
    assert!(matches!(next_answer(&mut rx).await, RemedyMsg::Wait(WaitStatus::Pending { .. })));
    assert!(matches!(next_answer(&mut rx).await, RemedyMsg::View(_)));
    sim.advance(Duration::from_secs(3));
    let m = loop {
        match next_answer(&mut rx).await {
            RemedyMsg::Wait(WaitStatus::Pending { .. }) | RemedyMsg::View(_) => sim.advance(Duration::from_secs(POLL)),
            m => break m,
        }
    };
    let RemedyMsg::Wait(WaitStatus::TimedOut(text)) = &m else { panic!("{m:?}") };
    assert!(text.starts_with("timed out after 3 s waiting for: "), "{text}");
    assert!(text.contains("watcher") && text.ends_with(WAIT_NEXT), "{text}");
    let listed = crate::remedy::journal::incidents::list_incidents(dir.path()).unwrap();
    assert_eq!(listed.iter().map(|i| i.problems).sum::<usize>(), 1, "journaled as failed");
    // nothing more is polled: the wait is over
    sim.advance(Duration::from_secs(POLL));
    let quiet = tokio::time::timeout(Duration::from_millis(800), async {
        loop {
            match rx.recv().await {
                Some(RemedyMsg::Wait(_)) | None => return,
                _ => continue,
            }
        }
    })
    .await;
    assert!(quiet.is_err(), "polled after the timeout");
}

/// The Verify time of these tests, seconds of console time.
const VERIFY: u64 = 3;

/// The Wait poll period of these tests, seconds: shorter than the quiet spells they watch, so a
/// poll timed on the wall clock would show.
const POLL: u64 = 1;

/// The Lease duration of these tests, seconds: renewed every 10 s.
const LEASE: u64 = 30;

/// When the volume's Lease was last renewed (or acquired), as the simulation's API server has it.
async fn renewed(sim: &crate::sources::sim::Sim, pv: &str) -> Option<jiff::Timestamp> {
    let ns = crate::config::Config::defaults().remedy.lease_namespace;
    let name = crate::remedy::run::lease::lease_name(pv);
    let h = crate::remedy::run::lease::read_holder(sim.client(), &ns, &name, Duration::from_secs(5), sim.now()).await;
    h.ok().flatten().and_then(|h| h.renewed)
}

#[tokio::test]
async fn the_held_lease_is_kept_alive_by_the_service_timer() {
    let dir = tempfile::tempdir().unwrap();
    let pv = "pvc-2de7d17c-04c6-11eb-b22b-5254002d96de";
    let (sim, tx, mut rx) = waiting_on_the_simulation(dir.path(), Some(pv)).await;
    let start = sim.now();
    assert_eq!(renewed(&sim, pv).await, Some(start), "acquired at open");
    // before a third of the duration has passed on the console clock: not renewed
    sim.advance(Duration::from_secs(LEASE / 3 - 1));
    let quiet = tokio::time::timeout(Duration::from_millis(1000), rx.recv()).await;
    assert!(quiet.is_err(), "{quiet:?}");
    assert_eq!(renewed(&sim, pv).await, Some(start));
    // a third has passed: renewed without a command and without a message
    sim.advance(Duration::from_secs(1));
    let due = sim.now();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while renewed(&sim, pv).await != Some(due) {
        assert!(std::time::Instant::now() < deadline, "not renewed within 10 s: {:?}", renewed(&sim, pv).await);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // someone deletes it: the next renewal fails, and the console is told the Lease is lost
    let leases: kube::Api<k8s_openapi::api::coordination::v1::Lease> =
        kube::Api::namespaced(sim.client(), &crate::config::Config::defaults().remedy.lease_namespace);
    leases.delete(&crate::remedy::run::lease::lease_name(pv), &Default::default()).await.unwrap();
    sim.advance(Duration::from_secs(LEASE / 3));
    let m = next(&mut rx).await;
    assert!(
        matches!(&m, RemedyMsg::Failed { refusal, .. } if matches!(refusal.run_error(), Some(RunError::Lease(Some(_))))),
        "{m:?}"
    );
    assert!(matches!(next(&mut rx).await, RemedyMsg::View(v) if matches!(v.lease, LeaseView::Other(_))));
    drop(tx);
}
