//! Deriving a run's state from its journal: resume after Esc, the backup reused, an undone step.
use crate::remedy::journal::StepType;

use super::*;
use crate::lineage::Lineage;
use crate::remedy::action::WriteAction;
use crate::remedy::journal::{ActionOutcome, Author, BackupRecord, Journal, StepRecord, StepResult, read};
use crate::remedy::playbook::{Target, build};

fn playbook() -> Playbook {
    let snap = crate::fixtures::incidents();
    let lin = Lineage::build(&snap);
    let t = Target::for_volume(&snap, &lin, "index-api-pv").unwrap();
    build("stale-lock", &t, &crate::config::Config::defaults().remedy).unwrap()
}

fn ok(step: u32) -> ActionOutcome {
    ActionOutcome { step, ok: true, exit_code: Some(0), api_status: None, stderr: String::new(), duration_ms: 3 }
}

fn journal(dir: &std::path::Path) -> Journal {
    Journal::open(dir, "t-1", Author { operator: "a@b".into(), context: "kh".into() }).unwrap()
}

fn act(p: &Playbook, n: usize) -> (String, WriteAction) {
    let acts: Vec<_> = p
        .steps
        .iter()
        .filter_map(|s| if let StepKind::Act(a) = &s.kind { Some((s.id.clone(), a.clone())) } else { None })
        .collect();
    acts[n].clone()
}

/// Backup (snapshot intent + record), Check, first Act: what a run leaves before Esc.
fn backup_check_act(p: &Playbook, j: &mut Journal) -> u32 {
    let snap = WriteAction::SnapCreate { image: crate::model::ImageRef::new("rbd", "img"), snap: "s1".into() };
    let n = j.intent(&p.steps[0].id, &snap, None, vec![]).unwrap();
    j.outcome(ok(n)).unwrap();
    j.backup(BackupRecord { files: vec![], snapshot: Some("rbd/img@s1".into()), export: None }).unwrap();
    j.step(StepRecord {
        step_id: p.steps[1].id.clone(),
        kind: StepType::Check,
        result: StepResult::Done,
        detail: "state unchanged".into(),
    })
    .unwrap();
    let (id, a) = act(p, 0);
    let n = j.intent(&id, &a, None, vec![]).unwrap();
    j.outcome(ok(n)).unwrap();
    n
}

#[test]
fn an_empty_journal_is_a_fresh_run() {
    let d = tempfile::tempdir().unwrap();
    let p = playbook();
    let r = derive(&p, &journal(d.path()).report().unwrap());
    assert!(r.is_fresh());
    assert_eq!(r.cursor, 0);
    assert!(r.backup.is_none());
}

#[test]
fn resumes_at_the_step_after_the_last_one_done_with_the_same_backup() {
    let d = tempfile::tempdir().unwrap();
    let p = playbook();
    let mut j = journal(d.path());
    backup_check_act(&p, &mut j);
    let r = derive(&p, &read(j.path()).unwrap());
    assert_eq!(p.steps[2].kind.name(), "Act");
    assert_eq!(r.cursor, 3, "backup, check and the first act are done: {:?}", r.states);
    assert!(r.states[..3].iter().all(|s| matches!(s, StepState::Done(_))), "{:?}", r.states);
    assert!(r.states[3..].iter().all(|s| *s == StepState::Pending));
    assert_eq!(r.backup.as_ref().and_then(|b| b.snapshot.as_deref()), Some("rbd/img@s1"));
    assert!(summary(&p, &r).contains(&format!("next is step 4 ({})", p.steps[3].id)), "{}", summary(&p, &r));
}

#[test]
fn an_undone_step_is_undone_and_current_again() {
    let d = tempfile::tempdir().unwrap();
    let p = playbook();
    let mut j = journal(d.path());
    let n = backup_check_act(&p, &mut j);
    let (id, _) = act(&p, 0);
    // what undoes it does not matter here: an undo intent of that entry that succeeded
    let inv = WriteAction::BlocklistRm { addr: "10.0.0.9:0/1".into() };
    let u = j.intent(&crate::remedy::journal::step::undo_id(&id), &inv, Some(n), vec![]).unwrap();
    j.outcome(ok(u)).unwrap();
    let r = derive(&p, &read(j.path()).unwrap());
    assert_eq!(r.cursor, 2, "the undone act is current again: {:?}", r.states);
    assert!(matches!(&r.states[2], StepState::Undone(t) if t.contains("undone")), "{:?}", r.states[2]);
    assert!(r.backup.is_some(), "the backup still stands");
}

#[test]
fn a_failed_check_stops_there_and_a_skip_passes() {
    let d = tempfile::tempdir().unwrap();
    let p = playbook();
    let mut j = journal(d.path());
    j.backup(BackupRecord { files: vec![], snapshot: None, export: None }).unwrap();
    let check = |result, detail: &str| StepRecord {
        step_id: p.steps[1].id.clone(),
        kind: StepType::Check,
        result,
        detail: detail.into(),
    };
    j.step(check(StepResult::Failed, "state changed: watcher gone")).unwrap();
    let r = derive(&p, &read(j.path()).unwrap());
    assert_eq!(r.cursor, 1);
    assert!(matches!(&r.states[1], StepState::Failed(t) if t.contains("watcher gone")));
    // the newest record wins
    j.step(check(StepResult::Skipped, "in a hurry")).unwrap();
    let r = derive(&p, &read(j.path()).unwrap());
    assert_eq!(r.cursor, 2);
    assert!(matches!(&r.states[1], StepState::Skipped(t) if t == "in a hurry"));
}

#[test]
fn an_invalid_backup_makes_the_backup_step_current_again() {
    let d = tempfile::tempdir().unwrap();
    let p = playbook();
    let mut j = journal(d.path());
    backup_check_act(&p, &mut j);
    let mut r = derive(&p, &read(j.path()).unwrap());
    r.backup_invalid("snapshot rbd/img@s1 not listed");
    assert_eq!(r.cursor, 0);
    assert!(r.backup.is_none());
    assert!(matches!(&r.states[0], StepState::Failed(t) if t.contains("not listed")));
    assert!(r.states[1..].iter().all(|s| *s == StepState::Pending));
}

#[test]
fn an_act_of_another_action_under_the_same_id_is_not_taken_for_this_step() {
    let d = tempfile::tempdir().unwrap();
    let p = playbook();
    let mut j = journal(d.path());
    j.backup(BackupRecord { files: vec![], snapshot: None, export: None }).unwrap();
    let other = WriteAction::BlocklistRm { addr: "10.0.0.9:0/1".into() };
    let n = j.intent(&p.steps[2].id, &other, None, vec![]).unwrap();
    j.outcome(ok(n)).unwrap();
    let r = derive(&p, &read(j.path()).unwrap());
    assert_eq!(r.states[2], StepState::Pending, "a rebuilt playbook whose step 3 differs starts it afresh");
}
