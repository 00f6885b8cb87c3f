use super::*;
use crate::model::ImageRef;
use std::fs::OpenOptions;
use std::io::Write;

fn author() -> Author {
    Author { operator: "alice@bastion".into(), context: "kh".into() }
}

fn ok(step: u32) -> ActionOutcome {
    ActionOutcome { step, ok: true, exit_code: Some(0), api_status: None, stderr: String::new(), duration_ms: 12 }
}

fn taint(node: &str) -> WriteAction {
    WriteAction::TaintOutOfService { node: node.into() }
}

#[test]
fn incident_ids_are_safe() {
    let t: Timestamp = "2026-11-22T04:15:00Z".parse().unwrap();
    let id = new_incident_id("stale-lock", "incident-000/Index_API pv", t);
    assert_eq!(id, "20261122t041500z-stale-lock-incident-000-index-api-pv");
    assert!(valid_incident(&id));
    assert!(!valid_incident("../x"));
    assert!(!valid_incident(""));
    let long = new_incident_id("p", &"x".repeat(500), t);
    assert!(long.len() <= 80 && valid_incident(&long));
}

#[test]
fn rejects_bad_incident_id() {
    let d = tempfile::tempdir().unwrap();
    assert!(matches!(Journal::open(d.path(), "../etc", author()), Err(JournalError::BadIncident(_))));
}

#[test]
fn intent_outcome_round_trip_and_step_numbers_continue() {
    let d = tempfile::tempdir().unwrap();
    let mut j = Journal::open(d.path(), "inc-1", author()).unwrap();
    let s1 = j.intent("multi-attach-node-lost/3", &taint("worker-22-51"), None, vec!["node NotReady".into()]).unwrap();
    j.outcome(ok(s1)).unwrap();
    let s2 = j.intent("x/4", &WriteAction::BlocklistAdd { addr: "127.0.0.1:0/5".into() }, None, vec![]).unwrap();
    assert_eq!((s1, s2), (1, 2));
    assert!(matches!(j.outcome(ok(9)), Err(JournalError::UnknownStep { step: 9, .. })));
    drop(j);
    let mut j = Journal::open(d.path(), "inc-1", author()).unwrap();
    let s3 = j.intent("x/5", &taint("n"), None, vec![]).unwrap();
    assert_eq!(s3, 3, "step numbers continue after reopening");
    let r = read(j.path()).unwrap();
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let steps = r.steps();
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[0].status, WriteStatus::Done);
    assert_eq!(steps[0].record.operator, "alice@bastion");
    assert_eq!(steps[0].record.context, "kh");
    assert_eq!(steps[0].record.v, SCHEMA_VERSION);
    assert_eq!(steps[0].intent.precheck, vec!["node NotReady".to_string()]);
    assert_eq!(steps[1].status, WriteStatus::Interrupted);
    let int = r.interrupted();
    assert_eq!(int.iter().map(|s| s.intent.step).collect::<Vec<_>>(), vec![2, 3]);
    // the raw file is JSONL with the documented field names
    let text = std::fs::read_to_string(j.path()).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["record"], "intent");
    assert_eq!(first["action"]["kind"], "taint-out-of-service");
    assert_eq!(first["inverse"]["action"]["kind"], "untaint-out-of-service");
    assert!(first["time"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn truncated_and_garbage_lines_are_reported_and_kept() {
    let d = tempfile::tempdir().unwrap();
    let mut j = Journal::open(d.path(), "inc-2", author()).unwrap();
    let s1 = j.intent("a/1", &taint("n1"), None, vec![]).unwrap();
    j.outcome(ok(s1)).unwrap();
    let path = j.path().to_path_buf();
    drop(j);
    // a crash in the middle of writing the next record
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(br#"{"v":1,"time":"2026-11-22T04:15:00Z","operator":"a@b","cont"#).unwrap();
    drop(f);
    let before = std::fs::read(&path).unwrap();
    let r = read(&path).unwrap();
    assert_eq!(r.problems.len(), 1);
    assert_eq!(r.problems[0].line, 3);
    assert!(r.problems[0].error.contains("truncated"), "{}", r.problems[0]);
    assert!(r.problems[0].to_string().contains("journal.jsonl:3"));
    assert_eq!(std::fs::read(&path).unwrap(), before, "reading never modifies the file");
    // reopening keeps the damaged bytes and starts the next record on a new line
    let mut j = Journal::open(d.path(), "inc-2", author()).unwrap();
    let s2 = j.intent("a/2", &taint("n2"), None, vec![]).unwrap();
    assert_eq!(s2, 2);
    let after = std::fs::read(&path).unwrap();
    assert!(after.starts_with(&before), "damaged line preserved");
    let r = read(&path).unwrap();
    assert_eq!(r.problems.len(), 1);
    assert!(r.problems[0].error.contains("not a journal record"));
    assert_eq!(r.steps().len(), 2);
    // garbage, blank lines, binary, newer schema
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"\n\xff\xfe\x1b[31mnope\n{\"v\":99,\"time\":\"2026-11-22T04:15:00Z\",\"operator\":\"a\",\"context\":\"c\",\"incident\":\"i\",\"record\":\"note\",\"text\":\"t\"}\n").unwrap();
    drop(f);
    let r = read(&path).unwrap();
    assert_eq!(r.problems.len(), 3, "{:?}", r.problems);
    assert!(r.problems[1].excerpt.chars().all(|c| !c.is_control()));
    assert!(r.problems[2].error.contains("schema v99"));
}

#[test]
fn undo_plan_newest_first_with_reasons() {
    let d = tempfile::tempdir().unwrap();
    let mut j = Journal::open(d.path(), "inc-3", author()).unwrap();
    let img = ImageRef::new("replicapool", "img");
    let snap =
        j.intent("p/1", &WriteAction::SnapCreate { image: img.clone(), snap: "s".into() }, None, vec![]).unwrap();
    j.outcome(ok(snap)).unwrap();
    let t = j.intent("p/2", &taint("node1"), None, vec![]).unwrap();
    j.outcome(ok(t)).unwrap();
    let b = j.intent("p/3", &WriteAction::BlocklistAdd { addr: "127.0.0.1:0/7".into() }, None, vec![]).unwrap();
    j.outcome(ok(b)).unwrap();
    let failed = j.intent("p/4", &WriteAction::BlocklistAdd { addr: "127.0.0.1:0/8".into() }, None, vec![]).unwrap();
    j.outcome(ActionOutcome {
        step: failed,
        ok: false,
        exit_code: Some(22),
        api_status: None,
        stderr: "EINVAL".into(),
        duration_ms: 1,
    })
    .unwrap();
    let lost = j.intent("p/5", &taint("node2"), None, vec![]).unwrap();
    let r = read(j.path()).unwrap();
    let plan = r.undo_plan(None);
    assert_eq!(plan.items.iter().map(|i| i.step).collect::<Vec<_>>(), vec![b, t], "newest first");
    assert_eq!(plan.items[0].action, WriteAction::BlocklistRm { addr: "127.0.0.1:0/7".into() });
    assert_eq!(plan.items[1].action, WriteAction::UntaintOutOfService { node: "node1".into() });
    let reason = |s: u32| plan.skipped.iter().find(|(n, _)| *n == s).map(|(_, r)| r.clone()).unwrap();
    assert!(reason(lost).contains("interrupted"));
    assert!(reason(failed).contains("exit 22"));
    assert!(reason(snap).contains("irreversible"));
    // undo the blocklist, then it is no longer offered; the undo record itself is not undone
    let u = j.intent("undo", &plan.items[0].action, Some(b), vec![]).unwrap();
    j.outcome(ok(u)).unwrap();
    let plan = read(j.path()).unwrap().undo_plan(None);
    assert_eq!(plan.items.iter().map(|i| i.step).collect::<Vec<_>>(), vec![t]);
    assert!(plan.skipped.iter().any(|(n, r)| *n == b && r.contains("already undone")));
    assert!(plan.skipped.iter().any(|(n, r)| *n == u && r.contains("undo of step")));
    // --step N
    let only = read(j.path()).unwrap().undo_plan(Some(t));
    assert_eq!(only.items.len(), 1);
    assert!(only.skipped.is_empty());
}

#[test]
fn lists_incidents() {
    let d = tempfile::tempdir().unwrap();
    assert!(crate::remedy::journal::incidents::list_incidents(&d.path().join("missing")).unwrap().is_empty());
    for id in ["20261122t040000z-b", "20261122t030000z-a"] {
        let mut j = Journal::open(d.path(), id, author()).unwrap();
        j.intent("x/1", &taint("n"), None, vec![]).unwrap();
    }
    std::fs::create_dir(d.path().join("not-an-incident")).unwrap();
    let l = crate::remedy::journal::incidents::list_incidents(d.path()).unwrap();
    assert_eq!(l.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(), vec!["20261122t030000z-a", "20261122t040000z-b"]);
    assert_eq!((l[0].steps, l[0].interrupted, l[0].problems), (1, 1, 0));
}

#[test]
fn the_journal_file_is_created_by_the_first_record_only() {
    let d = tempfile::tempdir().unwrap();
    let mut j = Journal::open(d.path(), "inc-lazy", author()).unwrap();
    assert!(!d.path().join("inc-lazy").exists(), "opening creates nothing");
    assert!(j.report().unwrap().records.is_empty());
    j.note(None, "first").unwrap();
    assert_eq!(read(j.path()).unwrap().records.len(), 1);
}

#[test]
fn undo_step_n_is_the_playbooks_step_number() {
    let d = tempfile::tempdir().unwrap();
    let mut j = Journal::open(d.path(), "inc-num", author()).unwrap();
    // journal entries 1 and 2 are playbook steps 3 and 4
    let a = j.intent("multi-attach-node-lost/3", &taint("n1"), None, vec![]).unwrap();
    j.outcome(ok(a)).unwrap();
    let b = j.intent("multi-attach-node-lost/4", &taint("n2"), None, vec![]).unwrap();
    j.outcome(ok(b)).unwrap();
    let rep = read(j.path()).unwrap();
    assert_eq!(rep.resolve_step("3"), Ok(a));
    assert_eq!(rep.resolve_step("multi-attach-node-lost/4"), Ok(b));
    assert!(
        matches!(rep.resolve_step("1"), Err(crate::remedy::run::undo::ResolveStepError::NoAction { .. })),
        "journal entry 1 is not playbook step 1"
    );
    assert_eq!(rep.label_of(a), "step 3 (multi-attach-node-lost/3)");
    let plan = rep.undo_plan(Some(rep.resolve_step("3").unwrap()));
    assert_eq!(plan.items.len(), 1);
    assert_eq!(plan.items[0].step_id, "multi-attach-node-lost/3");
}

#[test]
fn the_uid_names_the_operator_when_user_is_unset() {
    let passwd = "root:x:0:0:root:/root:/bin/bash\nbroken\noncall:x:1000:1000::/home/oncall:/bin/bash\n";
    assert_eq!(super::passwd_name(passwd, "1000").as_deref(), Some("oncall"));
    assert_eq!(super::passwd_name(passwd, "0").as_deref(), Some("root"));
    assert_eq!(super::passwd_name(passwd, "4242"), None);
    // this process: some name, never "unknown"
    assert!(super::uid_name().is_some_and(|n| !n.is_empty() && n != "unknown"));
}
