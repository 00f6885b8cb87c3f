use proptest::prelude::*;

use super::*;
use crate::diagnose::{EvidenceSource, ObjectRef, PatternId, Severity};
use crate::fixtures;

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn start() -> SessionEvent {
    SessionEvent::Start {
        context: "prod".into(),
        operator: "ann@host".into(),
        version: "0.1.0".into(),
        mode: Mode::Live,
        writes: Some(Writes::ReadOnly),
    }
}

fn finding(id: &str) -> Finding {
    Finding {
        id: id.into(),
        pattern: PatternId::StaleLock,
        severity: Severity::Critical,
        summary: format!("summary of {id}"),
        since: None,
        volume: None,
        node: None,
        device: None,
        objects: vec![ObjectRef::pod("shop/api-0")],
        evidence: vec![Evidence::new(EvidenceSource::RbdLockLs, "locker client.4567", t("2026-11-22T04:00:00Z"))],
        explanation: String::new(),
        playbook: "remove-stale-lock".into(),
        unverified: vec![],
    }
}

#[test]
fn write_then_read_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::start(dir.path(), "s1", Redactor::builtin(), start(), t("2026-11-22T04:00:00Z")).unwrap();
    log.append_at(t("2026-11-22T04:00:05Z"), SessionEvent::Note { text: "looking".into() }).unwrap();
    log.append_at(t("2026-11-22T04:00:06Z"), SessionEvent::End).unwrap();
    assert_eq!(log.path(), dir.path().join("s1.jsonl"));
    let r = read(log.path()).unwrap();
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert_eq!(r.records.len(), 3);
    assert_eq!(r.records[1].0, 2);
    assert_eq!(r.records[1].1.event, SessionEvent::Note { text: "looking".into() });
    assert_eq!(r.start().map(|s| s.context), Some("prod"));
    assert_eq!(r.ended(), Some(t("2026-11-22T04:00:06Z")));
    let first = std::fs::read_to_string(log.path()).unwrap();
    let line = first.lines().next().unwrap();
    assert!(line.contains(r#""event":"start""#) && line.contains(r#""v":1"#), "{line}");
    // A second start on the same id is refused.
    assert!(matches!(
        SessionLog::start(dir.path(), "s1", Redactor::builtin(), start(), t("2026-11-22T04:00:00Z")),
        Err(SessionError::Exists(_))
    ));
    assert!(matches!(SessionLog::open(dir.path(), "../x", Redactor::builtin()), Err(SessionError::BadId(_))));
}

#[test]
fn a_context_switch_is_a_record_and_a_timeline_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::start(dir.path(), "s2", Redactor::builtin(), start(), t("2026-11-22T04:00:00Z")).unwrap();
    let switch = SessionEvent::ContextSwitch { from: "prod".into(), to: "stage".into() };
    log.append_at(t("2026-11-22T04:00:05Z"), switch.clone()).unwrap();
    let line = std::fs::read_to_string(log.path()).unwrap().lines().nth(1).unwrap().to_string();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (&v["event"], &v["from"], &v["to"]),
        (&"context-switch".into(), &"prod".into(), &"stage".into()),
        "{line}"
    );
    assert_eq!(read(log.path()).unwrap().records[1].1.event, switch);
    let md =
        crate::session::export::export_with(log.path(), crate::session::export::Format::Markdown, &Redactor::builtin())
            .unwrap();
    assert!(md.contains("Context switched: prod → stage"), "{md}");
}

#[test]
fn corrupt_and_truncated_lines_are_reported_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::start(dir.path(), "s2", Redactor::builtin(), start(), t("2026-11-22T04:00:00Z")).unwrap();
    drop(log);
    let path = dir.path().join("s2.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"garbage token: abc123secret\n{\"v\":9,\"time\":\"2026-11-22T04:00:00Z\",\"session\":\"s2\",\"event\":\"end\"}\n{\"v\":1,\"ti");
    std::fs::write(&path, &bytes).unwrap();
    let r = read(&path).unwrap();
    assert_eq!(r.records.len(), 1);
    let lines: Vec<usize> = r.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, vec![2, 3, 4]);
    assert!(r.problems[0].excerpt.contains("[REDACTED]") && !r.problems[0].excerpt.contains("abc123secret"));
    assert!(r.problems[1].error.contains("newer"), "{}", r.problems[1].error);
    assert!(r.problems[2].error.contains("truncated"), "{}", r.problems[2].error);
    assert!(r.problems[2].to_string().contains("s2.jsonl:4"), "{}", r.problems[2]);
    // Reading did not change the file; reopening keeps the damaged line and starts a fresh one.
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    log = SessionLog::open(dir.path(), "s2", Redactor::builtin()).unwrap();
    log.append_at(t("2026-11-22T04:01:00Z"), SessionEvent::End).unwrap();
    let r = read(&path).unwrap();
    assert_eq!(r.records.len(), 2);
    assert_eq!(r.records[1].0, 5);
    assert!(std::fs::read(&path).unwrap().starts_with(&bytes));
}

#[test]
fn diff_findings_reports_cleared_then_appeared() {
    let (a, b, c) = (finding("stale-lock:a"), finding("stale-lock:b"), finding("stale-lock:c"));
    let ev = diff_findings(&[a.clone(), b.clone()], &[b.clone(), c.clone()]);
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0], SessionEvent::FindingCleared { id: "stale-lock:a".into() });
    match &ev[1] {
        SessionEvent::FindingAppeared { finding } => {
            assert_eq!(finding.id, "stale-lock:c");
            assert_eq!(finding.pattern, "stale-lock");
            assert_eq!(finding.severity, "critical");
            assert_eq!(finding.objects, vec!["Pod shop/api-0".to_string()]);
            assert_eq!(finding.evidence[0].source, "rbd-lock-ls");
        }
        other => panic!("{other:?}"),
    }
    assert!(diff_findings(std::slice::from_ref(&a), std::slice::from_ref(&a)).is_empty());
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::open(dir.path(), "s3", Redactor::builtin()).unwrap();
    assert_eq!(log.findings_changed(fixtures::now(), &[], &[b, c]).unwrap(), 2);
    assert_eq!(read(log.path()).unwrap().records.len(), 2);
}

#[test]
fn secrets_are_redacted_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let red = Redactor::new(&["corp-[0-9]+"]).unwrap();
    let mut log = SessionLog::open(dir.path(), "s4", red).unwrap();
    log.note(fixtures::now(), "token: abcdef0123 and key AQBvaBFZAAAAABAA9VHgwCg3rWn8fMaX8KL01A== and corp-99")
        .unwrap();
    log.append_at(
        fixtures::now(),
        SessionEvent::Action {
            step_id: "x/1".into(),
            command: "rbd --keyring /etc/ceph/secret.keyring lock rm p/i".into(),
            ok: true,
            outcome: "exit 0".into(),
            exit_code: Some(0),
            api_status: None,
            duration_ms: 12,
            sent: Some("rbd --keyring /etc/ceph/secret.keyring lock rm p/i".into()),
        },
    )
    .unwrap();
    let text = std::fs::read_to_string(log.path()).unwrap();
    for s in ["abcdef0123", "AQBvaBFZ", "corp-99", "secret.keyring"] {
        assert!(!text.contains(s), "{s} leaked: {text}");
    }
    // the keyring path in `command` and again in `sent`
    assert_eq!(text.matches("[REDACTED]").count(), 5, "{text}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn reader_never_panics_on_garbage(lines in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..120), 0..12)) {
        let bytes = lines.join(&b'\n');
        let r = parse(Path::new("g.jsonl"), &bytes, &Redactor::builtin());
        let nonblank = bytes.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)).count();
        prop_assert_eq!(r.records.len() + r.problems.len(), nonblank);
    }

    #[test]
    fn reader_never_panics_on_mangled_records(cut in 0usize..200, flip in 0usize..200, byte in any::<u8>()) {
        let line = r#"{"v":1,"time":"2026-11-22T04:00:00Z","session":"s","event":"action","step_id":"a","command":"rbd ls","ok":true,"outcome":"exit 0","duration_ms":3}"#;
        let mut b = line.as_bytes().to_vec();
        if flip < b.len() { b[flip] = byte; }
        b.truncate(cut.min(b.len()));
        let _ = parse(Path::new("g.jsonl"), &b, &Redactor::builtin());
    }
}
