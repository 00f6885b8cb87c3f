use super::*;
use crate::remedy::action::precheck::{PrecheckError, ReadFailure};
use crate::remedy::action::safety::SafetyError;

fn t(s: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + s).unwrap()
}

#[test]
fn refusals_are_classified_from_the_safety_rule_that_refused() {
    let ready: Refusal = SafetyError::ReadyNode { node: "n1".into() }.into();
    let wide: Refusal = SafetyError::WideBlocklist { addr: "10.0.0.5:0/0".into(), ip: "10.0.0.5".into() }.into();
    let own: Refusal = SafetyError::OwnHost { addr: "127.0.0.1:0/0".into() }.into();
    let live: Refusal = SafetyError::LiveWatcher { addr: "10.0.0.5:0/1".into(), node: "n1".into() }.into();
    let has: Refusal = SafetyError::HasWatchers("10.0.0.5:0/1".into()).into();
    assert_eq!(risk_kind(&ready), Some("ready-node"));
    assert_eq!(risk_kind(&wide), Some("wide-blocklist"));
    assert_eq!(risk_kind(&own), Some("wide-blocklist"));
    assert_eq!(risk_kind(&live), Some("live-watcher"));
    assert_eq!(risk_kind(&has), Some("has-watchers"));
    assert_eq!(risk_kind(&PrecheckError::Changed(vec![]).into()), Some("state-changed"));
    assert_eq!(risk_kind(&Refusal::DryRunChanged(vec![])), Some("state-changed"));
    assert_eq!(risk_kind(&http_500()), None);
    // the wording does not matter: a read error that quotes a safety rule is still a read error
    let quoting =
        PrecheckError::Read { what: "pods".into(), error: ReadFailure::Api("image still has watcher(s) x".into()) };
    assert_eq!(risk_kind(&quoting.into()), None);
}

fn http_500() -> Refusal {
    PrecheckError::Read { what: "nodes".into(), error: ReadFailure::Api("HTTP 500".into()) }.into()
}

fn seen(kind: StepType, state: StepState, at: i64) -> StepSeen {
    StepSeen { id: format!("inc/x/{kind}"), kind, title: format!("{kind} step"), state, at: t(at) }
}

#[test]
fn debrief_marks_reference_steps_skips_and_risks() {
    let s = Scenario::embedded("stale-lock").unwrap().unwrap();
    let d = debrief(Input {
        scenario: &s,
        started: t(0),
        finished: t(125),
        sim_seconds: 625,
        hints_unlocked: 2,
        journals: vec![],
        seen: vec![
            seen(StepType::Backup, StepState::Done("ok".into()), 30),
            seen(StepType::Check, StepState::Skipped("in a hurry".into()), 40),
        ],
        refused: vec![(t(50), SafetyError::ReadyNode { node: "node1".into() }.into()), (t(60), http_500())],
    });
    assert_eq!(d.seconds, 125);
    assert_eq!(d.reference[0].done_after, Some(30), "Backup done 30 s in");
    assert_eq!(d.reference[1].done_after, None, "the Check was skipped");
    assert!(d.skipped.iter().any(|x| x.contains("skipped — in a hurry")));
    assert!(d.skipped.iter().any(|x| x.contains("Verify") && x.contains("never done")));
    assert_eq!(d.risky.len(), 1, "only the safety refusal is a risky attempt");
    assert!(d.risky[0].consequence.contains("node1 is Ready"), "the scenario's own words: {:?}", d.risky[0]);
    assert_eq!(d.risky[0].after, 50);
    let text = d.lines().join("\n");
    assert!(text.contains("solved in 2:05 (simulated 10:25); hints unlocked 2/3"), "{text}");
    assert!(text.contains("NOT DONE") && text.contains("not needed"), "required vs optional steps: {text}");
    assert!(text.contains("Risky actions attempted (1)"), "{text}");
}

#[test]
fn a_verify_step_still_pending_in_the_playbook_is_pending_not_missed() {
    let s = Scenario::embedded("stale-lock").unwrap().unwrap();
    let d = debrief(Input {
        scenario: &s,
        started: t(0),
        finished: t(60),
        sim_seconds: 300,
        hints_unlocked: 0,
        journals: vec![],
        seen: vec![
            seen(StepType::Backup, StepState::Done("ok".into()), 10),
            seen(StepType::Verify, StepState::Pending, 20),
        ],
        refused: vec![],
    });
    let v = d.reference.iter().find(|r| r.kind == StepType::Verify).expect("a Verify reference step");
    assert!(v.pending && v.done_after.is_none());
    assert!(!d.skipped.iter().any(|x| x.contains("Verify")), "{:?}", d.skipped);
    let text = d.lines().join("\n");
    assert!(text.contains("pending"), "{text}");
}

fn journal(dir: &std::path::Path, id: &str) -> crate::remedy::journal::Journal {
    let author = crate::remedy::journal::Author { operator: "t@h".into(), context: "train".into() };
    crate::remedy::journal::Journal::open(dir, id, author).unwrap()
}

fn ok(step: u32) -> crate::remedy::journal::ActionOutcome {
    crate::remedy::journal::ActionOutcome {
        step,
        ok: true,
        exit_code: None,
        api_status: Some(200),
        stderr: String::new(),
        duration_ms: 1,
    }
}

fn backup() -> crate::remedy::journal::BackupRecord {
    crate::remedy::journal::BackupRecord { files: vec![], snapshot: Some("k8s/img@s".into()), export: None }
}

/// The journals under `dir`, as the debrief reads them.
fn read_all(dir: &std::path::Path) -> Vec<(String, JournalReport)> {
    journals(dir)
}

#[test]
fn an_undone_blocklist_is_undone_and_counts_consistently() {
    use crate::remedy::action::WriteAction;
    use crate::remedy::journal::{StepRecord, StepResult};
    let s = Scenario::embedded("dead-node-watcher").unwrap().unwrap();
    let d = tempfile::tempdir().unwrap();
    let mut j = journal(d.path(), "20261122t041500z-dead-node-watcher-pv1");
    j.backup(backup()).unwrap();
    let add = WriteAction::BlocklistAdd { addr: "10.10.11.23:0/4208975345".into() };
    let n = j.intent("dead-node-watcher/3", &add, None, vec![]).unwrap();
    j.outcome(ok(n)).unwrap();
    let rm = WriteAction::BlocklistRm { addr: "10.10.11.23:0/4208975345".into() };
    let u = j.intent("undo of dead-node-watcher/3", &rm, Some(n), vec![]).unwrap();
    j.outcome(ok(u)).unwrap();
    let verify = StepRecord {
        step_id: "dead-node-watcher/4".into(),
        kind: StepType::Verify,
        result: StepResult::Skipped,
        detail: "in a hurry".into(),
    };
    j.step(verify).unwrap();
    let started = Timestamp::now() - jiff::SignedDuration::from_secs(100);
    let db = debrief(Input {
        scenario: &s,
        started,
        finished: Timestamp::now(),
        sim_seconds: 500,
        hints_unlocked: 0,
        journals: read_all(d.path()),
        // the console saw the backup done late (a reopened playbook): the journal's time wins
        seen: vec![seen(StepType::Backup, StepState::Done("ok".into()), 95)],
        refused: vec![],
    });
    let b = db.reference.iter().find(|r| r.kind == StepType::Backup).unwrap();
    assert!(b.done_after.is_some_and(|t| t >= 99), "the journal's backup time, not the console's: {b:?}");
    let bl = db.reference.iter().find(|r| r.text.contains("blocklist add")).unwrap();
    assert!(bl.undone && bl.done_after.is_none(), "undone is not done: {bl:?}");
    let text = db.lines().join("\n");
    assert!(text.contains("UNDONE"), "{text}");
    let done = db.reference.iter().filter(|r| r.done_after.is_some()).count();
    let required = db.reference.iter().filter(|r| !r.optional || r.done_after.is_some()).count();
    assert!(text.contains(&format!("{done}/{required} steps followed")), "{text}");
    // the skipped Verify is a skipped check with its reason, and then the count says so too
    assert_eq!(db.skipped.len(), 1, "{:?}", db.skipped);
    assert!(db.skipped[0].contains("skipped — in a hurry"), "{:?}", db.skipped);
    assert!(done < required);
    // every required check not done is listed, and nothing else
    let checks_missing = db
        .reference
        .iter()
        .filter(|r| r.done_after.is_none() && !r.optional && !r.pending)
        .filter(|r| matches!(r.kind, StepType::Backup | StepType::Check | StepType::Verify | StepType::Wait))
        .count();
    assert_eq!(checks_missing, db.skipped.len());
}

#[test]
fn a_step_done_on_several_nodes_shows_every_nodes_time() {
    use crate::remedy::action::WriteAction;
    let s = Scenario::embedded("mass-unmap-busy").unwrap().unwrap();
    let d = tempfile::tempdir().unwrap();
    for node in ["node201", "node202", "node203"] {
        let mut j = journal(d.path(), &format!("20261122t04150{}z-unmap-busy-pv-{node}", &node[6..]));
        j.backup(backup()).unwrap();
        let del = WriteAction::DeletePod {
            namespace: "monitoring".into(),
            name: format!("node-exporter-{node}"),
            uid: "u".into(),
        };
        let n = j.intent("unmap-busy/4", &del, None, vec![]).unwrap();
        j.outcome(ok(n)).unwrap();
    }
    let db = debrief(Input {
        scenario: &s,
        started: Timestamp::now() - jiff::SignedDuration::from_secs(30),
        finished: Timestamp::now(),
        sim_seconds: 150,
        hints_unlocked: 0,
        journals: read_all(d.path()),
        seen: vec![],
        refused: vec![],
    });
    let restart = db.reference.iter().find(|r| r.text.contains("restart the node-exporter")).unwrap();
    assert_eq!(restart.times.len(), 3, "{restart:?}");
    let b = db.reference.iter().find(|r| r.kind == StepType::Backup).unwrap();
    assert_eq!(b.times.len(), 3, "each volume's backup: {b:?}");
    let text = db.lines().join("\n");
    for node in ["node201", "node202", "node203"] {
        assert!(text.contains(&format!("Pod monitoring/node-exporter-{node}")), "{node}: {text}");
        assert!(text.contains(&format!("pv-{node}")), "{node}'s backup: {text}");
    }
}

#[test]
fn a_verify_of_a_change_undone_since_does_not_count() {
    use crate::remedy::action::WriteAction;
    use crate::remedy::journal::{StepRecord, StepResult};
    let s = Scenario::embedded("dead-node-watcher").unwrap().unwrap();
    let d = tempfile::tempdir().unwrap();
    let mut j = journal(d.path(), "20261122t041500z-dead-node-watcher-pv1");
    j.backup(backup()).unwrap();
    let add = WriteAction::BlocklistAdd { addr: "10.10.11.23:0/4208975345".into() };
    let n = j.intent("dead-node-watcher/3", &add, None, vec![]).unwrap();
    j.outcome(ok(n)).unwrap();
    let verify = |result| StepRecord {
        step_id: "dead-node-watcher/4".into(),
        kind: StepType::Verify,
        result,
        detail: "watcher gone: yes".into(),
    };
    j.step(verify(StepResult::Done)).unwrap();
    let rm = WriteAction::BlocklistRm { addr: "10.10.11.23:0/4208975345".into() };
    let u = j.intent("undo of dead-node-watcher/3", &rm, Some(n), vec![]).unwrap();
    j.outcome(ok(u)).unwrap();
    let input = |journals| Input {
        scenario: &s,
        started: Timestamp::now() - jiff::SignedDuration::from_secs(60),
        finished: Timestamp::now(),
        sim_seconds: 300,
        hints_unlocked: 0,
        journals,
        seen: vec![],
        refused: vec![],
    };
    let db = debrief(input(read_all(d.path())));
    let v = db.reference.iter().find(|r| r.kind == StepType::Verify).unwrap();
    assert!(v.done_after.is_none(), "the verification of the undone blocklist does not count: {v:?}");
    // done again after the undo: both count again
    let n2 = j.intent("dead-node-watcher/3", &add, None, vec![]).unwrap();
    j.outcome(ok(n2)).unwrap();
    j.step(verify(StepResult::Done)).unwrap();
    let db = debrief(input(read_all(d.path())));
    let v = db.reference.iter().find(|r| r.kind == StepType::Verify).unwrap();
    assert_eq!(v.times.len(), 1, "{v:?}");
    assert!(db.reference.iter().find(|r| r.text.contains("blocklist add")).unwrap().done_after.is_some());
}

/// The debrief of `s` from the journals under `dir`, with `seen` and `refused`.
fn debrief_of(s: &Scenario, dir: &std::path::Path, seen: Vec<StepSeen>, refused: Vec<(Timestamp, Refusal)>) -> Debrief {
    debrief(Input {
        scenario: s,
        started: Timestamp::now() - jiff::SignedDuration::from_secs(100),
        finished: Timestamp::now(),
        sim_seconds: 500,
        hints_unlocked: 0,
        journals: read_all(dir),
        seen,
        refused,
    })
}

#[test]
fn a_verify_is_followed_only_when_its_own_newest_journal_record_is_done() {
    use crate::remedy::journal::{StepRecord, StepResult};
    let s = Scenario::embedded("dead-node-watcher").unwrap().unwrap();
    let d = tempfile::tempdir().unwrap();
    let (watcher, attach) = ("20261122t041500z-dead-node-watcher-pv1", "20261122t041600z-multi-attach-node-lost-pv1");
    let rec = |id: &str, result| StepRecord { step_id: id.into(), kind: StepType::Verify, result, detail: "x".into() };
    let mut j = journal(d.path(), watcher);
    j.step(rec("dead-node-watcher/4", StepResult::Done)).unwrap();
    j.step(rec("dead-node-watcher/4", StepResult::Failed)).unwrap();
    // another playbook's Verify held: it is not "Verify the watcher is gone"
    journal(d.path(), attach).step(rec("multi-attach-node-lost/6", StepResult::Done)).unwrap();
    let titled = |inc: &str, id: &str, title: &str| StepSeen {
        id: format!("{inc}/{id}"),
        kind: StepType::Verify,
        title: title.into(),
        state: StepState::Pending,
        at: Timestamp::now(),
    };
    let seen = vec![
        titled(watcher, "dead-node-watcher/4", "Verify the watcher is gone"),
        titled(attach, "multi-attach-node-lost/6", "Verify the attachment is gone"),
    ];
    let db = debrief_of(&s, d.path(), seen, vec![]);
    let v = db.reference.iter().find(|r| r.kind == StepType::Verify).unwrap();
    assert!(v.done_after.is_none() && v.failed, "{v:?}");
    let text = db.lines().join("\n");
    assert!(text.contains("✗ Verify  FAILED"), "{text}");
    assert!(!text.contains("✓ Verify"), "{text}");
}

#[test]
fn a_backup_of_each_volume_counts_the_volumes_and_a_stale_refusal_is_not_risky() {
    use crate::remedy::action::precheck::PrecheckError;
    let s = Scenario::embedded("mass-unmap-busy").unwrap().unwrap();
    assert_eq!(s.volumes.len(), 3);
    let d = tempfile::tempdir().unwrap();
    let mut j = journal(d.path(), "20261122t041500z-unmap-busy-pv1");
    j.set_volume(Some(s.volumes[0].pv.clone()));
    let snap = crate::remedy::action::WriteAction::SnapCreate {
        image: crate::model::ImageRef::new("replicapool", "img"),
        snap: "s".into(),
    };
    let n = j.intent("unmap-busy/1", &snap, None, vec![]).unwrap();
    j.outcome(ok(n)).unwrap();
    j.backup(backup()).unwrap();
    let stale: Refusal = PrecheckError::Changed(vec![]).into();
    let db = debrief_of(&s, d.path(), vec![], vec![(Timestamp::now(), stale)]);
    let b = db.reference.iter().find(|r| r.kind == StepType::Backup).unwrap();
    assert_eq!(b.of, Some((1, 3)), "{b:?}");
    assert!(!b.followed());
    let text = db.lines().join("\n");
    assert!(text.contains("◐ Backup  PARTIAL") && text.contains("(1 of 3 volumes)"), "{text}");
    assert!(db.risky.is_empty() && db.stale.len() == 1, "{db:?}");
    assert!(text.contains("Risky actions attempted: none"), "{text}");
    assert!(text.contains("Refused by the live re-check"), "{text}");
}

#[test]
fn goals_that_held_with_no_step_done_are_not_called_met_by_the_trainee() {
    // seen in tmux on same-node-restage: the finding cleared before its playbook was opened, and
    // the debrief said "Every goal is met" beside "Reference path: 0/3"
    let s = Scenario::embedded("same-node-restage").unwrap().unwrap();
    let input = |seen: Vec<StepSeen>| Input {
        scenario: &s,
        started: t(0),
        finished: t(60),
        sim_seconds: 120,
        hints_unlocked: 0,
        journals: vec![],
        seen,
        refused: vec![],
    };
    let d = debrief(input(vec![]));
    let text = d.lines().join("\n");
    assert!(!d.acted() && !text.contains("Every goal is met"), "{text}");
    assert!(d.lines()[0].contains("no step of yours") && text.contains("settled by itself in 1:00"), "{text}");
    assert!(text.contains("Reference path: 0/3 steps followed"), "{text}");
    // every required step followed: the goals are met, and said so
    let all = |at| {
        [StepType::Backup, StepType::Check, StepType::Wait]
            .into_iter()
            .map(|k| seen(k, StepState::Done("ok".into()), at))
            .collect::<Vec<_>>()
    };
    let d = debrief(input(all(10)));
    assert_eq!(d.followed(), (3, 3));
    assert_eq!(d.lines()[0], "Every goal is met.");
    // in part: says how much
    let d = debrief(input(all(10).into_iter().take(1).collect()));
    assert!(d.lines()[0].contains("you followed 1 of the 3 reference steps"), "{:?}", d.lines());
}

#[test]
fn a_wait_left_pending_says_it_never_ran_and_the_count_says_why() {
    // seen in tmux: `Reference path: 1/2` after an Esc on a pending Wait, with nothing saying what
    // happened to the Wait
    let s = Scenario::embedded("same-node-restage").unwrap().unwrap();
    let d = debrief(Input {
        scenario: &s,
        started: t(0),
        finished: t(60),
        sim_seconds: 120,
        hints_unlocked: 0,
        journals: vec![],
        seen: vec![
            seen(StepType::Backup, StepState::Done("ok".into()), 10),
            seen(StepType::Check, StepState::Done("ok".into()), 20),
            seen(StepType::Wait, StepState::Pending, 30),
        ],
        refused: vec![],
    });
    let text = d.lines().join("\n");
    assert!(
        text.contains("Reference path: 2/3 steps followed (1 left pending: the goals held before it ran)"),
        "{text}"
    );
    assert!(text.contains("… Wait    NOT RUN"), "{text}");
    assert!(text.contains("the goals held without it, so it was never checked"), "{text}");
    assert!(d.lines()[0].contains("you followed 2 of the 3"), "{text}");
}

#[test]
fn an_optional_wait_left_pending_is_not_needed_not_missed() {
    // seen in tmux on unmap-busy: `3/3 steps followed (1 left pending …)` for its optional Wait
    let s = Scenario::embedded("unmap-busy").unwrap().unwrap();
    let d = debrief(Input {
        scenario: &s,
        started: t(0),
        finished: t(60),
        sim_seconds: 300,
        hints_unlocked: 0,
        journals: vec![],
        seen: vec![seen(StepType::Wait, StepState::Pending, 30)],
        refused: vec![],
    });
    let text = d.lines().join("\n");
    assert!(!text.contains("left pending") && !text.contains("NOT RUN"), "{text}");
    assert!(text.contains("– Wait    not needed"), "{text}");
}
