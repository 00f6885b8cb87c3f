use super::*;
use crate::remedy::action::WriteAction;
use crate::remedy::journal::ActionOutcome;
use crate::remedy::journal::{self, Author, Journal};

#[test]
fn a_restarted_console_finds_the_incident_and_its_interrupted_steps() {
    let dir = tempfile::tempdir().unwrap();
    let now = jiff::Timestamp::now();
    let id = journal::new_incident_id("dead-node-watcher", "pv-1", now);
    let author = Author { operator: "op@host".into(), context: "kh".into() };
    let mut j = Journal::open(dir.path(), &id, author).unwrap();
    let a = WriteAction::BlocklistAdd { addr: "10.0.0.9:0/42".into() };
    let s = j.intent("dead-node-watcher/4", &a, None, vec![]).unwrap();
    j.outcome(ActionOutcome {
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
    let want = InterruptedStep { incident: id, step: 2, summary: "ceph osd blocklist add 10.0.0.9:0/42".to_string() };
    assert_eq!(i, vec![want]);
}

#[test]
fn the_topic_of_an_incident_id_is_what_follows_its_stamp() {
    let now: jiff::Timestamp = "2026-03-01T12:00:00Z".parse().unwrap();
    let id = journal::new_incident_id("stale-lock", "pv-1", now);
    assert_eq!(id, "20260301t120000z-stale-lock-pv-1");
    assert_eq!(journal::incident_topic(&id), Some("stale-lock-pv-1"));
    assert_eq!(journal::incident_topic("stale-lock-pv-1"), None, "no stamp");
    assert_eq!(journal::incident_topic("2026030xt120000z-a"), None, "not a stamp");
    assert_eq!(journal::incident_topic("20260301t120000z"), None, "a stamp alone");
}
