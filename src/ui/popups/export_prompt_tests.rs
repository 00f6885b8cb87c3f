use std::time::Duration;

use crossterm::event::KeyCode;

use super::*;
use crate::ui::app::Msg;
use crate::ui::app::{App, Effect};
use crate::ui::popups::playbook::WriteMode;
use crate::ui::popups::playbook::tests::{app, pb, press, runner_view, screen};
use unstick_core::remedy::journal::FileRecord;
use unstick_core::remedy::service::RemedyMsg;
use unstick_core::remedy::service::RemedyRequest;

/// The stale-lock playbook open, the runner at the Backup step, journaling under `dir`.
fn at_backup(dir: &std::path::Path) -> App {
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    let mut v = runner_view(&a, 0, false);
    v.journal = dir.join("20261122t041500z-stale-lock-index-api-pv").join("journal.jsonl");
    a.update(Msg::Remedy(RemedyMsg::View(v)));
    a
}

fn half() -> ExportProgress {
    ExportProgress {
        bytes: 32 << 20,
        total: Some(64 << 20),
        rate: 128.0 * 1024.0 * 1024.0,
        eta: Some(Duration::from_millis(250)),
    }
}

#[test]
fn e_asks_for_the_destination_and_runs_the_backup_with_the_export() {
    let a = &mut at_backup(std::path::Path::new("/data/incidents"));
    assert!(press(a, KeyCode::Char('e')).is_empty(), "the prompt opens first; nothing runs");
    let e = a.popups().full_copy().expect("prompt open");
    let default = "/data/incidents/20261122t041500z-stale-lock-index-api-pv/backup/index-api-image.img";
    assert_eq!(e.input.lines().join(""), default);
    assert!(a.popups().top().is_some_and(|p| p.takes_text()), "keys go to the path field");
    // typed keys edit the path; q does not quit
    assert!(press(a, KeyCode::Char('2')).is_empty());
    assert!(!a.quit);
    let fx = press(a, KeyCode::Enter);
    let want = std::path::PathBuf::from(format!("{default}2"));
    assert_eq!(fx, vec![Effect::Remedy(RemedyRequest::Backup { export_to: Some(want) })]);
    assert!(a.popups().full_copy().is_none() && pb(a).busy.as_deref().is_some_and(|b| b.contains("full copy")));
}

#[test]
fn export_prompt_refuses_an_existing_file_and_esc_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = &mut at_backup(dir.path());
    let existing = dir.path().join("20261122t041500z-stale-lock-index-api-pv").join("backup");
    std::fs::create_dir_all(&existing).unwrap();
    std::fs::write(existing.join("index-api-image.img"), b"x").unwrap();
    press(a, KeyCode::Char('e'));
    assert!(press(a, KeyCode::Enter).is_empty(), "never overwrites");
    let err = a.popups().full_copy().and_then(|e| e.error.clone()).expect("refused in the prompt");
    assert!(err.contains("exists"), "{err}");
    assert!(press(a, KeyCode::Esc).is_empty());
    assert!(a.popups().full_copy().is_none() && pb(a).busy.is_none());
}

#[test]
fn e_only_on_the_pending_backup_step_and_never_read_only() {
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 2, true))));
    assert!(press(&mut a, KeyCode::Char('e')).is_empty());
    assert!(a.popups().full_copy().is_none());
    assert!(pb(&a).message.as_ref().is_some_and(|m| m.1.contains("Backup step")), "{:?}", pb(&a).message);
    let mut ro = app(WriteMode::ReadOnly);
    press(&mut ro, KeyCode::Char('p'));
    press(&mut ro, KeyCode::Char('e'));
    assert!(ro.popups().full_copy().is_none());
}

#[test]
fn progress_bar_then_path_and_checksum_on_screen() {
    let a = &mut at_backup(std::path::Path::new("/data/incidents"));
    press(a, KeyCode::Char('e'));
    press(a, KeyCode::Enter);
    a.update(Msg::Remedy(RemedyMsg::Export(ExportProgress { bytes: 0, total: Some(64 << 20), rate: 0.0, eta: None })));
    a.update(Msg::Remedy(RemedyMsg::Export(half())));
    assert_eq!(pb(a).export, Some(half()));
    let s = screen(a, 80, 24);
    assert!(s.contains("50% 32.0 MiB / 64.0 MiB · 128.0 MiB/s · ETA 0 s"), "{s}");
    assert!(s.contains("██████████░░░░░░░░░░"), "{s}");
    insta::assert_snapshot!("export_progress_80x24", s);
    // the worker's answer: the backup record with the export's path and sha256
    let mut v = runner_view(a, 1, true);
    let sha = "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef";
    let path = "/data/incidents/20261122t041500z-stale-lock-index-api-pv/backup/index-api-image.img";
    v.backup.as_mut().unwrap().export = Some(FileRecord { path: path.into(), bytes: 64 << 20, sha256: sha.into() });
    a.update(Msg::Remedy(RemedyMsg::View(v)));
    a.update(Msg::Remedy(RemedyMsg::Done {
        ok: true,
        text: format!("backup verified: 1 file(s), full copy {path} (67108864 bytes, sha256 {sha})"),
    }));
    press(a, KeyCode::Up);
    let s = screen(a, 120, 40);
    assert!(s.contains(&format!("Full copy: {path} (64.0 MiB)")), "{s}");
    assert!(s.contains(&format!("sha256 {sha}")), "{s}");
}

#[test]
fn sizes_and_ratios() {
    assert_eq!(human_bytes(512), "512 B");
    assert_eq!(human_bytes(1536), "1.5 KiB");
    assert_eq!(human_bytes(64 << 20), "64.0 MiB");
    assert_eq!(progress_ratio(&half()), Some(0.5));
    assert_eq!(progress_ratio(&ExportProgress { total: None, ..half() }), None);
    assert_eq!(progress_ratio(&ExportProgress { total: Some(0), ..half() }), None);
    let t = progress_text(&ExportProgress { total: None, eta: None, ..half() });
    assert_eq!(t, "32.0 MiB · 128.0 MiB/s");
}

#[test]
fn export_prompt_ctrl_u_clears_and_ctrl_c_cancels_without_quitting() {
    use crossterm::event::{KeyEvent, KeyModifiers};
    let a = &mut at_backup(std::path::Path::new("/data/incidents"));
    press(a, KeyCode::Char('e'));
    let ctrl = |c| Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
    a.update(ctrl('u'));
    assert_eq!(a.popups().full_copy().unwrap().input.lines().join(""), "", "Ctrl-U deletes the line");
    assert!(a.update(ctrl('c')).is_empty(), "nothing is sent");
    assert!(a.popups().full_copy().is_none() && pb(a).busy.is_none() && !a.quit);
}

#[test]
fn sizes_keep_their_binary_units() {
    assert_eq!(human_bytes(0), "0 B");
    assert_eq!(human_bytes(1023), "1023 B");
    assert_eq!(human_bytes(1024), "1.0 KiB");
    assert_eq!(human_bytes((1 << 20) - 1), "1024.0 KiB");
    assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    assert_eq!(human_bytes(5 << 40), "5.0 TiB");
}
