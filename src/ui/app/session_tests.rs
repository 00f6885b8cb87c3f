//! The console's session log, driven through keys: what lands in the JSONL file, the note
//! editor, and a log that cannot be written.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::ui::app::App;
use crate::ui::app::Msg;
use crate::ui::app::tests::{incidents_app_with, screen};
use crate::ui::popups::playbook::WriteMode;
use unstick_core::console_state::session_rec::*;
use unstick_core::fixtures;
use unstick_core::remedy::journal::ActionOutcome;
use unstick_core::remedy::service::ConfirmView;
use unstick_core::remedy::service::RemedyMsg;
use unstick_core::session::{self, Format};
use unstick_core::session::{Mode, Redactor, SessionEvent, Writes};

/// A cephx secret: must never reach the file.
const SECRET: &str = "AQBvaBFZAAAAABAA9VHgwCg3rWn8fMaX8KL01A==";

fn spec(base: &Path, writes: Writes) -> SessionSpec {
    SessionSpec {
        base: base.to_path_buf(),
        mode: Mode::Live,
        context: "kh".into(),
        writes,
        redactor: Redactor::builtin(),
        unique: false,
    }
}

fn recorded_app(base: &Path) -> (App, PathBuf) {
    let rec = SessionRecorder::start(
        spec(base, Writes::Live),
        std::sync::Arc::new(unstick_core::clock::FixedClock(fixtures::now())),
    );
    let path = rec.path().to_path_buf();
    (incidents_app_with(false, Some(rec)), path)
}

use crate::ui::testing::{press, press_key, type_text};

fn ctrl_s(a: &mut App) {
    press_key(a, KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
}

fn tick(a: &mut App) {
    a.update(Msg::Tick(fixtures::now()));
}

fn events(path: &Path) -> Vec<SessionEvent> {
    let report = session::read(path).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    report.records.into_iter().map(|(_, r)| r.event).collect()
}

fn views(ev: &[SessionEvent]) -> Vec<(String, Option<String>)> {
    ev.iter()
        .filter_map(|e| match e {
            SessionEvent::Viewed { pane, object } => Some((pane.clone(), object.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn console_session_is_logged_and_exports_with_the_note() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, path) = recorded_app(dir.path());
    press(&mut a, KeyCode::Char('1'));
    let first = a.data.findings.first().expect("the incidents fixture has findings").clone();
    press(&mut a, KeyCode::Enter);
    assert!(a.is_open(crate::ui::popups::Kind::Detail));
    tick(&mut a);
    press(&mut a, KeyCode::Char('n'));
    assert!(a.is_open(crate::ui::popups::Kind::Note), "n opens the note editor over the finding detail");
    type_text(&mut a, "Lock holder k8s-node-lost is NotReady.\nNext: backup, then remove the lock --key ");
    type_text(&mut a, SECRET);
    ctrl_s(&mut a);
    assert!(!a.is_open(crate::ui::popups::Kind::Note));
    let notice = a.remedy.notice.clone().unwrap_or_default();
    assert!(notice.starts_with("note saved ") && notice.contains("UTC"), "{notice}");
    assert_eq!(a.end_session(), None);

    let raw = std::fs::read_to_string(&path).unwrap();
    assert!(!raw.contains(SECRET), "the writer redacts: {raw}");
    let ev = events(&path);
    match &ev[0] {
        SessionEvent::Start { context, mode, writes, operator, .. } => {
            assert_eq!((context.as_str(), *mode, *writes), ("kh", Mode::Live, Some(Writes::Live)));
            assert!(operator.contains('@'), "{operator}");
        }
        e => panic!("first record is not start: {e:?}"),
    }
    assert_eq!(ev.last(), Some(&SessionEvent::End));
    // findings: what appeared and did not clear is exactly what the console shows now
    let mut open: Vec<String> = vec![];
    for e in &ev {
        match e {
            SessionEvent::FindingAppeared { finding } => open.push(finding.id.clone()),
            SessionEvent::FindingCleared { id } => open.retain(|x| x != id),
            _ => {}
        }
    }
    let mut now: Vec<String> = a.data.findings.iter().map(|f| f.id.clone()).collect();
    open.sort();
    now.sort();
    assert_eq!(open, now);
    // the detail view once, although many keys were pressed on it
    let v = views(&ev);
    let detail = ("finding".to_string(), Some(first.id.clone()));
    assert_eq!(v.iter().filter(|x| **x == detail).count(), 1, "{v:?}");
    let note_at = ev.iter().position(|e| matches!(e, SessionEvent::Note { .. })).expect("a note record");
    let SessionEvent::Note { text } = &ev[note_at] else { unreachable!() };
    assert_eq!(text, "Lock holder k8s-node-lost is NotReady.\nNext: backup, then remove the lock --key [REDACTED]");
    let view_at = ev
        .iter()
        .position(|e| *e == SessionEvent::Viewed { pane: detail.0.clone(), object: detail.1.clone() })
        .unwrap();
    assert!(view_at < note_at);

    let md = session::export(&path, Format::Markdown).unwrap();
    assert!(
        md.contains("Lock holder k8s-node-lost is NotReady. Next: backup, then remove the lock --key [REDACTED]"),
        "{md}"
    );
    assert!(md.contains(&format!("### {} ({})", first.id, first.severity.as_str())), "{md}");
    assert!(md.contains("| Writes | live |") && md.contains("| Notes | 1 |"), "{md}");
    let json = session::export(&path, Format::Json).unwrap();
    assert!(json.contains("\"notes\": [") && json.contains("Lock holder k8s-node-lost"), "{json}");
}

#[test]
fn views_are_recorded_on_the_clock_tick_not_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, path) = recorded_app(dir.path());
    press(&mut a, KeyCode::Char('3'));
    for _ in 0..3 {
        press(&mut a, KeyCode::Char('j'));
    }
    tick(&mut a);
    let (pane, object) = a.current_view();
    assert_eq!(pane, "pods");
    assert!(object.as_deref().is_some_and(|o| o.starts_with("Pod ")), "{object:?}");
    tick(&mut a);
    // away and back before a tick: nothing new
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char('k'));
    tick(&mut a);
    a.end_session();
    let v = views(&events(&path));
    let pods: Vec<_> = v.iter().filter(|(p, _)| p == "pods").collect();
    assert_eq!(pods, vec![&("pods".to_string(), object)], "{v:?}");
}

#[test]
fn confirmations_and_worker_results_are_logged() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, path) = recorded_app(dir.path());
    a.remedy.worker = true;
    press(&mut a, KeyCode::Char('1'));
    let row = a
        .data
        .findings
        .iter()
        .position(|f| f.playbook == "remove-stale-lock" || f.id.starts_with("stale-lock"))
        .unwrap();
    a.select(crate::ui::app::Pane::Findings, row);
    press(&mut a, KeyCode::Char('p'));
    assert!(a.playbook().is_some());
    let view = ConfirmView {
        step_id: "stale-lock/3".into(),
        action: unstick_core::remedy::action::WriteAction::RbdLockRm {
            image: unstick_core::model::ImageRef {
                pool: "replicapool".into(),
                namespace: String::new(),
                image: "img".into(),
            },
            lock_id: "auto".into(),
            locker: "client.1".into(),
            address: "10.0.0.1:0/1".into(),
        },
        summary: "rbd lock rm".into(),
        command: "rbd lock rm replicapool/img auto client.1".into(),
        objects: vec!["RbdImage replicapool/img".into()],
        precheck: vec![],
        reversible: true,
        inverse: "rbd lock add".into(),
        warnings: vec![],
        typed_name: None,
        undo_of: None,
        dry_run: false,
        update_strategy: None,
    };
    a.update(Msg::Remedy(RemedyMsg::Confirm(view.clone())));
    crate::ui::popups::playbook::tests::settle(&mut a);
    press(&mut a, KeyCode::Esc);
    a.update(Msg::Remedy(RemedyMsg::Confirm(view.clone())));
    crate::ui::popups::playbook::tests::settle(&mut a);
    press(&mut a, KeyCode::Char('y'));
    let out = ActionOutcome {
        step: 3,
        ok: true,
        exit_code: Some(0),
        api_status: None,
        stderr: String::new(),
        duration_ms: 12,
    };
    let action = SessionEvent::action("stale-lock/3", &view.command, Some(&view.command), &out);
    a.update(Msg::Remedy(RemedyMsg::Record(action.clone())));
    let backup = SessionEvent::Backup { paths: vec!["/b/pv.yaml".into()], snapshot: Some("replicapool/img@s".into()) };
    a.update(Msg::Remedy(RemedyMsg::Record(backup.clone())));
    // n works in the Playbook view too
    press(&mut a, KeyCode::Char('n'));
    assert!(a.is_open(crate::ui::popups::Kind::Note));
    a.end_session();
    let ev = events(&path);
    let answers: Vec<bool> = ev
        .iter()
        .filter_map(|e| if let SessionEvent::Confirmation { accepted, .. } = e { Some(*accepted) } else { None })
        .collect();
    assert_eq!(answers, vec![false, true]);
    assert!(ev.contains(&confirmation_event(&view, true)));
    assert!(ev.contains(&action) && ev.contains(&backup), "{ev:?}");
    assert!(views(&ev).iter().any(|(p, _)| p == "playbook"), "{ev:?}");
}

#[test]
fn dry_run_confirmations_are_logged_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let rec = SessionRecorder::start(
        spec(dir.path(), Writes::DryRun),
        std::sync::Arc::new(unstick_core::clock::FixedClock(fixtures::now())),
    );
    let path = rec.path().to_path_buf();
    let id = rec.id().to_string();
    let mut a = incidents_app_with(false, Some(rec));
    a.remedy.mode = WriteMode::DryRun;
    a.end_session();
    assert!(id.ends_with("-live-kh"), "{id}");
    assert!(matches!(&events(&path)[0], SessionEvent::Start { writes: Some(Writes::DryRun), .. }));
}

#[test]
fn a_log_that_cannot_be_written_does_not_stop_the_console() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_dir = dir.path().join("sessions");
    std::fs::write(&not_a_dir, "a file where the log directory should be").unwrap();
    let rec = SessionRecorder::start(
        spec(&not_a_dir, Writes::Live),
        std::sync::Arc::new(unstick_core::clock::FixedClock(fixtures::now())),
    );
    let mut a = incidents_app_with(false, Some(rec));
    for _ in 0..300 {
        if a.log_alert {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
        tick(&mut a);
    }
    assert!(a.log_alert, "the writer's error reaches the app");
    let s = screen(&a, 80, 24);
    let status = s.lines().nth(23).unwrap_or_default();
    assert!(status.starts_with(" ⚠ session log not written: create directory:"), "{s}");
    // the next key: the console works, the status line keeps a short mark
    press(&mut a, KeyCode::Char('2'));
    assert_eq!(a.focus, crate::ui::app::Pane::Nodes);
    assert!(!a.log_alert);
    let s = screen(&a, 80, 24);
    assert!(s.lines().nth(23).unwrap_or_default().starts_with(" log ✗ │ kube"), "{s}");
    // a note is not lost: the editor stays open with its text and says why
    press(&mut a, KeyCode::Char('n'));
    type_text(&mut a, "keep me");
    ctrl_s(&mut a);
    let note = a
        .popups()
        .iter()
        .find_map(|p| match p {
            crate::ui::popups::Popup::Note(n) => Some(n.clone()),
            _ => None,
        })
        .expect("still open");
    assert_eq!(note.text(), "keep me");
    assert!(
        note.message.as_deref().is_some_and(|m| m.starts_with("not saved: the session log is failing")),
        "{:?}",
        note.message
    );
    // Esc twice discards
    press(&mut a, KeyCode::Esc);
    assert!(a.is_open(crate::ui::popups::Kind::Note));
    press(&mut a, KeyCode::Esc);
    assert!(!a.is_open(crate::ui::popups::Kind::Note));
    let err = a.end_session().expect("the error is reported at exit");
    assert!(err.contains("not written"), "{err}");
}

#[test]
fn esc_on_an_empty_note_closes_and_help_lists_n() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, _) = recorded_app(dir.path());
    press(&mut a, KeyCode::Char('n'));
    press(&mut a, KeyCode::Esc);
    assert!(!a.is_open(crate::ui::popups::Kind::Note));
    press(&mut a, KeyCode::Char('?'));
    let s = screen(&a, 80, 24);
    assert!(s.contains(" n ") && s.contains("write a note into the session log"), "{s}");
    a.end_session();
}

#[test]
fn snapshot_note_popup_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, _) = recorded_app(dir.path());
    press(&mut a, KeyCode::Char('1'));
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Char('n'));
    type_text(&mut a, "Lock holder k8s-node-lost is NotReady since 04:02.\nNext: backup, then remove the lock.");
    let s = screen(&a, 80, 24);
    assert!(s.contains("Ctrl-S save · Esc/Ctrl-C cancel · Enter new line"), "{s}");
    insta::assert_snapshot!("note_popup_80x24", s);
    a.end_session();
}

/// Issue 29: a finding that clears again while it awaits its restore is awaited once (the list
/// grew by one copy per clearing, each scanned against every pod), and a Running pod of its
/// volume ends the wait with one `restored` record per pod.
#[test]
fn a_cleared_finding_awaits_its_restore_once() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, path) = recorded_app(dir.path());
    let lin = &a.data.lineage;
    let f = a
        .data
        .findings
        .iter()
        .find(|f| f.volume.as_deref().and_then(|pv| lin.by_pv(pv)).is_some_and(|v| !v.pods.is_empty()))
        .expect("a finding on a volume with pods")
        .clone();
    let pods = lin.by_pv(f.volume.as_deref().unwrap()).unwrap().pods.clone();
    let mut gone = f.clone();
    gone.id = format!("{}-earlier", f.id);
    a.record_findings(std::slice::from_ref(&gone));
    a.record_findings(std::slice::from_ref(&gone));
    assert_eq!(a.awaiting_restore.iter().filter(|w| w.id == gone.id).count(), 1);

    for p in a.data.snap.pods.iter_mut() {
        if pods.contains(&unstick_core::model::key_of(&p.metadata)) {
            let mut running = (**p).clone();
            running.metadata.deletion_timestamp = None;
            let st = running.status.get_or_insert_with(Default::default);
            st.phase = Some("Running".into());
            *p = std::sync::Arc::new(running);
        }
    }
    a.record_findings(&[]);
    assert!(!a.awaiting_restore.iter().any(|w| w.id == gone.id));
    assert_eq!(a.end_session(), None);
    let restored: Vec<String> = events(&path)
        .into_iter()
        .filter_map(|e| match e {
            SessionEvent::Restored { finding, pod } if finding == gone.id => Some(pod),
            _ => None,
        })
        .collect();
    assert_eq!(restored, pods, "one record per pod of the volume");
}
