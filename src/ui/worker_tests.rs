use super::*;
use crate::remedy::action::WriteAction;
use crate::remedy::journal::Outcome;

#[test]
fn a_restarted_console_finds_the_incident_and_its_interrupted_steps() {
    let dir = tempfile::tempdir().unwrap();
    let now = jiff::Timestamp::now();
    let id = journal::new_incident_id("dead-node-watcher", "pv-1", now);
    let author = Author { operator: "op@host".into(), context: "kh".into() };
    let mut j = Journal::open(dir.path(), &id, author).unwrap();
    let a = WriteAction::BlocklistAdd { addr: "10.0.0.9:0/42".into() };
    let s = j.intent("dead-node-watcher/4", &a, None, vec![]).unwrap();
    j.outcome(Outcome {
        step: s,
        ok: true,
        exit_code: Some(0),
        api_status: None,
        stderr: String::new(),
        duration_ms: 1,
    })
    .unwrap();
    j.intent("dead-node-watcher/5", &a, None, vec![]).unwrap();
    let later = now + jiff::SignedDuration::from_secs(60);
    assert_eq!(find_incident(dir.path(), "dead-node-watcher", "pv-1", later), Some(id.clone()));
    assert_eq!(find_incident(dir.path(), "dead-node-watcher", "pv-2", later), None);
    let next_week = now + jiff::SignedDuration::from_hours(24 * 7);
    assert_eq!(
        find_incident(dir.path(), "dead-node-watcher", "pv-1", next_week),
        None,
        "a week later is a new incident"
    );
    let i = interrupted_steps(dir.path());
    assert_eq!(i, vec![(id, 2, "ceph osd blocklist add 10.0.0.9:0/42".to_string())]);
}

#[test]
fn safety_refusals_offer_the_typed_override() {
    let e = RunError::Safety(SafetyError::ReadyNode { node: "n1".into() });
    assert_eq!(override_need(&e), Some(OverrideNeed::ReadyNode("n1".into())));
    let e = RunError::Safety(SafetyError::WideBlocklist { addr: "10.0.0.9:0/0".into(), ip: "10.0.0.9".into() });
    assert_eq!(override_need(&e).as_ref().map(OverrideNeed::name), Some("10.0.0.9:0/0"));
    assert_eq!(override_need(&RunError::BackupFirst), None);
}
