//! Session log → postmortem export: golden files for Markdown and JSON of a recorded session with
//! fixed timestamps, and a redaction test that plants secrets everywhere a log can carry text.
//!
//! Goldens live in `tests/golden/session.{md,json}` (`tests/common/golden.rs`): a missing one fails;
//! `UPDATE_GOLDEN=1 cargo test --test session_export` writes them after an intended change.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::io::Write as _;
use std::path::Path;

use jiff::Timestamp;
use unstick_core::diagnose::{Evidence, EvidenceSource, Finding, ObjectRef, PatternId, Severity};
use unstick_core::model::ImageRef;
use unstick_core::session::{self, Format, Mode, Redactor, SessionEvent, SessionLog, Writes};

#[path = "common/golden.rs"]
mod golden;

const ID: &str = "20261122t040000z-live-prod-east";

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn stale_lock() -> Finding {
    let img = ImageRef { pool: "replicapool".into(), namespace: String::new(), image: "csi-vol-7f3a".into() };
    Finding {
        id: "stale-lock:replicapool/csi-vol-7f3a".into(),
        pattern: PatternId::StaleLock,
        severity: Severity::Critical,
        summary: "Pod shop/api-0 cannot mount: lock held by node worker-2 | since 04:02".into(),
        since: None,
        volume: Some("pvc-7f3a".into()),
        node: Some("worker-2".into()),
        device: None,
        objects: vec![
            ObjectRef::pod("shop/api-0"),
            ObjectRef::pv("pvc-7f3a"),
            ObjectRef::image(&img),
            ObjectRef::node("worker-2"),
        ],
        evidence: vec![
            Evidence::new(
                EvidenceSource::Event,
                "MountVolume.MountDevice failed: rbd image replicapool/csi-vol-7f3a is still being used",
                t("2026-11-22T04:01:30Z"),
            ),
            Evidence::new(
                EvidenceSource::RbdLockLs,
                "locker client.4567 `auto 1` at 10.0.0.12:0/3211",
                t("2026-11-22T04:01:40Z"),
            ),
        ],
        explanation: "The lock outlived its node.".into(),
        playbook: "remove-stale-lock".into(),
        unverified: vec![],
    }
}

fn restage() -> Finding {
    Finding {
        id: "same-node-restage:shop/api-1".into(),
        pattern: PatternId::SameNodeRestage,
        severity: Severity::Warning,
        summary: "Pod shop/api-1 recreated on worker-1 while the old one unmounts".into(),
        since: None,
        volume: None,
        node: Some("worker-1".into()),
        device: None,
        objects: vec![ObjectRef::pod("shop/api-1"), ObjectRef::node("worker-1")],
        evidence: vec![Evidence::new(EvidenceSource::Pod, "old pod Terminating for 6m", t("2026-11-22T04:01:00Z"))],
        explanation: String::new(),
        playbook: "wait-for-restage".into(),
        unverified: vec![],
    }
}

/// A whole incident, as the console would log it.
fn record(base: &Path, extra: &[(&str, SessionEvent)]) -> std::path::PathBuf {
    let start = SessionEvent::Start {
        context: "prod-east".into(),
        operator: "ann@jump-1".into(),
        version: "0.1.0".into(),
        mode: Mode::Live,
        writes: Some(Writes::Live),
    };
    let mut log = SessionLog::start(base, ID, Redactor::builtin(), start, t("2026-11-22T04:00:00Z")).unwrap();
    let (a, b) = (stale_lock(), restage());
    let mut events: Vec<(&str, SessionEvent)> = Vec::new();
    for e in session::diff_findings(&[], &[a.clone(), b.clone()]) {
        events.push(("2026-11-22T04:02:00Z", e));
    }
    events.extend([
        ("2026-11-22T04:02:10Z", SessionEvent::Viewed { pane: "volumes".into(), object: Some("PV pvc-7f3a".into()) }),
        (
            "2026-11-22T04:03:00Z",
            SessionEvent::Backup {
                paths: vec!["/var/lib/unstick/incidents/x/backup/pv-pvc-7f3a.yaml".into()],
                snapshot: Some("replicapool/csi-vol-7f3a@unstick-20261122t040300z".into()),
            },
        ),
        (
            "2026-11-22T04:03:30Z",
            SessionEvent::Confirmation {
                step_id: "stale-lock/3".into(),
                command: "rbd lock rm replicapool/csi-vol-7f3a 'auto 1' client.4567".into(),
                objects: vec!["RbdImage replicapool/csi-vol-7f3a".into()],
                reversible: false,
                inverse: "irreversible: the holder is blocklisted for 1 h".into(),
                accepted: true,
            },
        ),
        (
            "2026-11-22T04:03:31Z",
            SessionEvent::Action {
                step_id: "stale-lock/3".into(),
                command: "rbd lock rm replicapool/csi-vol-7f3a 'auto 1' client.4567".into(),
                ok: true,
                outcome: "exit 0".into(),
                exit_code: Some(0),
                api_status: None,
                duration_ms: 1840,
                sent: Some(
                    "rbd --conf /etc/ceph/ceph.conf --client_mount_timeout 10 lock rm replicapool/csi-vol-7f3a 'auto 1' client.4567"
                        .into(),
                ),
            },
        ),
        (
            "2026-11-22T04:04:00Z",
            SessionEvent::Confirmation {
                step_id: "stale-lock/4".into(),
                command: "DELETE pods shop/api-0".into(),
                // the spelling older versions logged: exported as `Pod shop/api-0`, once
                objects: vec!["pod/shop/api-0".into()],
                reversible: false,
                inverse: "the controller recreates it".into(),
                accepted: false,
            },
        ),
        (
            "2026-11-22T04:05:00Z",
            SessionEvent::Action {
                step_id: "blocklist/2".into(),
                command: "ceph osd blocklist add 10.0.0.12:0/3211".into(),
                ok: false,
                outcome: "HTTP 403: forbidden".into(),
                exit_code: None,
                api_status: Some(403),
                duration_ms: 95,
                sent: None,
            },
        ),
        (
            "2026-11-22T04:06:00Z",
            SessionEvent::Undo {
                step: 2,
                command: "ceph osd blocklist rm 10.0.0.12:0/3211".into(),
                ok: true,
                outcome: "exit 0".into(),
            },
        ),
    ]);
    for (ts, e) in events {
        log.append_at(t(ts), e).unwrap();
    }
    for (ts, e) in extra {
        log.append_at(t(ts), e.clone()).unwrap();
    }
    for e in session::diff_findings(&[a, b.clone()], &[b]) {
        log.append_at(t("2026-11-22T04:07:00Z"), e).unwrap();
    }
    let step = |id: &str, kind: &str, title: &str, result, detail: &str| SessionEvent::Step {
        step_id: id.into(),
        kind: kind.into(),
        title: title.into(),
        result,
        detail: detail.into(),
    };
    use unstick_core::session::log::StepResult;
    for (ts, e) in [
        (
            "2026-11-22T04:07:10Z",
            step("stale-lock/5", "verify", "the pod runs", StepResult::Failed, "pod Running: NO (Pending)"),
        ),
        (
            "2026-11-22T04:07:40Z",
            step("stale-lock/5", "verify", "the pod runs", StepResult::Done, "pod Running: yes (Running)"),
        ),
        (
            "2026-11-22T04:07:41Z",
            step("stale-lock/6", "manual", "unmap on the node", StepResult::Skipped, "skipped by the operator"),
        ),
    ] {
        log.append_at(t(ts), e).unwrap();
    }
    // a record kind from a newer version: exported by name, not as an unreadable line
    let unknown = format!(
        r#"{{"v":1,"time":"2026-11-22T04:07:50Z","session":"{ID}","event":"lease-taken","holder":"bob@jump-2"}}"#
    );
    std::fs::OpenOptions::new()
        .append(true)
        .open(log.path())
        .unwrap()
        .write_all(format!("{unknown}\n").as_bytes())
        .unwrap();
    log.append_at(
        t("2026-11-22T04:07:55Z"),
        SessionEvent::Debrief {
            scenario: "stale-lock".into(),
            text: "Every goal is met.\nReference path: 5/5 steps".into(),
        },
    )
    .unwrap();
    log.append_at(
        t("2026-11-22T04:08:00Z"),
        SessionEvent::Note { text: "api-0 Running again;\nlock gone *for good*".into() },
    )
    .unwrap();
    log.append_at(t("2026-11-22T04:09:05Z"), SessionEvent::End).unwrap();
    log.path().to_path_buf()
}

#[test]
fn export_matches_goldens() {
    let dir = tempfile::tempdir().unwrap();
    let path = record(dir.path(), &[]);
    let md = session::export(&path, Format::Markdown).unwrap();
    let json = session::export(&path, Format::Json).unwrap();
    golden::check("session.md", &md);
    golden::check("session.json", &json);

    // Spot checks that do not depend on the goldens.
    assert!(md.contains("| Duration | 9m 05s |"), "{md}");
    assert!(md.contains("`rbd lock rm replicapool/csi-vol-7f3a 'auto 1' client.4567`"), "{md}");
    assert!(md.contains(r"lock held by node worker-2 \| since 04:02"), "{md}");
    assert!(!md.contains('\u{1b}'));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["format"], "unstick-postmortem");
    assert_eq!(v["summary"]["duration_seconds"], 545);
    assert_eq!(v["summary"]["counts"]["actions_failed"], 1);
    assert_eq!(v["findings"][0]["cleared"], "2026-11-22T04:07:00Z");
    assert!(v["findings"][1]["cleared"].is_null());
    assert_eq!(v["actions"][1]["api_status"], 403);
}

#[test]
fn list_summarises_sessions() {
    let dir = tempfile::tempdir().unwrap();
    record(dir.path(), &[]);
    std::fs::write(dir.path().join("20261121t000000z-training-x.jsonl"), "not json\n").unwrap();
    std::fs::write(dir.path().join("ignored.txt"), "x").unwrap();
    let l = session::list(dir.path()).unwrap();
    assert_eq!(l.len(), 2);
    assert_eq!(l[0].id, "20261121t000000z-training-x");
    assert_eq!(l[0].problems, 1);
    assert_eq!(l[1].id, ID);
    assert_eq!(l[1].context.as_deref(), Some("prod-east"));
    assert_eq!((l[1].findings, l[1].actions, l[1].notes, l[1].problems), (2, 2, 1, 0));
    assert_eq!(l[1].ended, Some(t("2026-11-22T04:09:05Z")));
    assert!(session::list(&dir.path().join("missing")).unwrap().is_empty());
}

#[test]
fn planted_secrets_never_reach_log_or_export() {
    const TOKEN: &str = "sha256~Xq7LmN2pRtY9vB4kZ8wE1cH6jU3sD0fG";
    const JWT: &str = "eyJhbGciOiJSUzI1NiIsImtpZCI6Ik1UIn0.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJlLWJ5dGVz";
    const CEPH_KEY: &str = "AQBvaBFZAAAAABAA9VHgwCg3rWn8fMaX8KL01A==";
    const PEM_BODY: &str = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun";
    const SECRET_DATA: &str = "c3VwZXItc2VjcmV0LXBhc3N3b3Jk";
    let pem = format!("-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----");
    let extra = [
        (
            "2026-11-22T04:06:30Z",
            SessionEvent::Note {
                text: format!(
                    "kubeconfig had token: {TOKEN}\nclient-key-data: {PEM_BODY}\nand key = {CEPH_KEY}\n{pem}"
                ),
            },
        ),
        (
            "2026-11-22T04:06:31Z",
            SessionEvent::Action {
                step_id: "debug/1".into(),
                command: format!("rbd --id admin --key {CEPH_KEY} -H 'Authorization: Bearer {JWT}' ls"),
                ok: true,
                outcome: format!("stderr: token={TOKEN}"),
                exit_code: Some(0),
                api_status: None,
                duration_ms: 3,
                sent: Some(format!("rbd --id admin --key {CEPH_KEY} ls # token={TOKEN}")),
            },
        ),
        (
            "2026-11-22T04:06:32Z",
            SessionEvent::FindingAppeared {
                finding: unstick_core::session::FindingRecord {
                    id: "stale-lock:planted".into(),
                    pattern: "stale-lock".into(),
                    severity: "critical".into(),
                    summary: format!("keyring {CEPH_KEY}"),
                    objects: vec![],
                    evidence: vec![unstick_core::session::log::EvidenceRecord {
                        source: "event".into(),
                        text: format!(
                            "kind: Secret\ndata:\n  userKey: {SECRET_DATA}\n{pem} bearer {TOKEN} rbd map --keyring=/etc/ceph/k"
                        ),
                        observed_at: t("2026-11-22T04:06:00Z"),
                    }],
                },
            },
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = record(dir.path(), &extra);
    let raw = std::fs::read(&path).unwrap();
    let raw = String::from_utf8_lossy(&raw);
    let md = session::export(&path, Format::Markdown).unwrap();
    let json = session::export(&path, Format::Json).unwrap();
    let secrets = [TOKEN, JWT, CEPH_KEY, PEM_BODY, SECRET_DATA, "AQBvaBFZ", "/etc/ceph/k", "PRIVATE KEY"];
    for (what, text) in [("log file", raw.as_ref()), ("markdown", md.as_str()), ("json", json.as_str())] {
        for s in secrets {
            assert!(!text.contains(s), "{s:?} leaked into the {what}:\n{text}");
        }
        assert!(text.contains("[REDACTED]"), "{what} shows where redaction happened");
    }
    // Context around the secrets survives.
    assert!(md.contains("kubeconfig had token: [REDACTED]"), "{md}");
    assert!(json.contains("rbd --id admin --key [REDACTED]"), "{json}");
}

#[test]
fn export_redacts_again_with_configured_patterns() {
    // A log written without the pattern (an older config) is still redacted on export.
    let dir = tempfile::tempdir().unwrap();
    let extra = [("2026-11-22T04:06:30Z", SessionEvent::Note { text: "ticket CORP-4711 opened".into() })];
    let path = record(dir.path(), &extra);
    assert!(std::fs::read_to_string(&path).unwrap().contains("CORP-4711"));
    let red = Redactor::new(&["CORP-[0-9]+"]).unwrap();
    for f in [Format::Markdown, Format::Json] {
        let out = session::export_with(&path, f, &red).unwrap();
        assert!(!out.contains("CORP-4711") && out.contains("ticket [REDACTED] opened"), "{out}");
    }
}

#[test]
fn crashed_session_with_damaged_lines_still_exports() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::start(
        dir.path(),
        "crashed",
        Redactor::builtin(),
        SessionEvent::Start {
            context: "c".into(),
            operator: "o@h".into(),
            version: "0".into(),
            mode: Mode::Training,
            writes: None,
        },
        t("2026-11-22T04:00:00Z"),
    )
    .unwrap();
    log.append_at(t("2026-11-22T04:00:30Z"), SessionEvent::Note { text: "first".into() }).unwrap();
    let path = log.path().to_path_buf();
    drop(log);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(
        b"\x1b[31mnot json | `x` --key AQBvaBFZAAAAABAA9VHgwCg3rWn8fMaX8KL01A==\n{\"v\":1,\"time\":\"2026-11-22T04:01",
    );
    std::fs::write(&path, &bytes).unwrap();
    let md = session::export(&path, Format::Markdown).unwrap();
    assert!(md.contains("no end record (last record 2026-11-22 04:00:30)"), "{md}");
    assert!(md.contains("| Duration | 30s |"), "{md}");
    assert!(md.contains("## Unreadable log lines") && md.contains("- line 3: not a session record"), "{md}");
    assert!(md.contains("- line 4: truncated last line"), "{md}");
    assert!(!md.contains('\u{1b}') && !md.contains("AQBvaBFZ"), "{md}");
    let v: serde_json::Value = serde_json::from_str(&session::export(&path, Format::Json).unwrap()).unwrap();
    assert!(v["summary"]["ended"].is_null());
    assert_eq!(v["unreadable_lines"][0]["line"], 3);
    assert_eq!(v["summary"]["counts"]["unreadable_lines"], 2);
    // Exporting changed nothing.
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

/// `unstick sessions` and `unstick export` from the command line, on a recorded session.
#[test]
fn sessions_and_export_commands() {
    let d = tempfile::tempdir().unwrap();
    record(d.path(), &[]);
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_unstick"))
            .args(args)
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .output()
            .unwrap()
    };
    let dir = d.path().to_str().unwrap();
    let out = run(&["sessions", "--dir", dir]);
    assert!(out.status.success());
    let list = String::from_utf8(out.stdout).unwrap();
    assert!(list.contains(ID) && list.contains("prod-east"), "{list}");

    let md = d.path().join("pm.md");
    let out = run(&["export", ID, "--format", "md", "--out", md.to_str().unwrap(), "--dir", dir]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let golden = std::fs::read_to_string(golden::path("session.md")).unwrap();
    assert_eq!(std::fs::read_to_string(&md).unwrap(), golden);

    let out = run(&["export", ID, "--format", "json", "--dir", dir]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON export");
    assert!(v.is_object());

    let out = run(&["export", "no-such-session", "--dir", dir]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["export", ID, "--format", "pdf", "--dir", dir]);
    assert_eq!(out.status.code(), Some(2), "usage error");
}
