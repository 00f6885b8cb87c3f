//! `unstick journal` and `unstick undo` as a user runs them, without a cluster: listing, showing
//! an incident with an interrupted step and a corrupt last line, and undo's exit codes for a
//! missing incident (2) and an incident with nothing to undo (1).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::io::Write;
use std::process::{Command, Output};

use unstick_core::remedy::action::WriteAction;
use unstick_core::remedy::journal::{ActionOutcome, Author, Journal};

fn unstick(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_unstick"))
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env_remove("KUBECONFIG")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn journal_lists_and_shows_and_undo_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().to_str().unwrap();
    let id = "20261122t041500z-stale-lock-pv-1";
    let mut j = Journal::open(dir.path(), id, Author { operator: "op@host".into(), context: "kh".into() }).unwrap();
    let lock = WriteAction::RbdLockRm {
        image: unstick_core::model::ImageRef::new("rbd", "img"),
        lock_id: "l1".into(),
        locker: "client.7".into(),
        address: "10.0.0.1:0/7".into(),
    };
    let s = j.intent("stale-lock/3", &lock, None, vec!["locks of rbd/img: l1".into()]).unwrap();
    j.outcome(ActionOutcome {
        step: s,
        ok: true,
        exit_code: Some(0),
        api_status: None,
        stderr: String::new(),
        duration_ms: 90,
    })
    .unwrap();
    j.intent("stale-lock/5", &WriteAction::TaintOutOfService { node: "n1".into() }, None, vec![]).unwrap();
    drop(j);
    let path = dir.path().join(id).join("journal.jsonl");
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"{\"v\":1,\"ti").unwrap();

    let o = unstick(&["journal", "--dir", base]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains(id), "{}", text(&o));
    let o = unstick(&["journal", id, "--dir", base]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("rbd lock rm rbd/img l1 client.7") && t.contains("outcome: exit 0"), "{t}");
    assert!(t.contains("INTERRUPTED — state unknown, re-check") && t.contains("unreadable line"), "{t}");
    let before = std::fs::read(&path).unwrap();

    let o = unstick(&["journal", "nope", "--dir", base]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = unstick(&["undo", "nope", "--dir", base]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // lock rm is irreversible and the taint is interrupted: nothing to undo, nothing connected
    let o = unstick(&["undo", id, "--dir", base]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("irreversible") && text(&o).contains("interrupted"), "{}", text(&o));
    assert_eq!(std::fs::read(&path).unwrap(), before, "reading never rewrites the journal");
    let o = unstick(&["undo", "--help"]);
    assert!(text(&o).contains("Exit codes: 0") && text(&o).contains("1 refused or failed"), "{}", text(&o));
}

/// `unstick` with its data directory at `data` (where training journals go: `data/unstick/training`).
fn unstick_in(data: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_unstick"))
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("XDG_DATA_HOME", data)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap()
}

#[test]
fn training_journals_are_pointed_to_by_journal_and_refused_by_undo() {
    let data = tempfile::tempdir().unwrap();
    let session = data.path().join("unstick/training/20261126t120000z-stale-lock");
    let id = "20261126t120100z-stale-lock-pv";
    let mut j =
        Journal::open(&session, id, Author { operator: "trainee@vm".into(), context: "training".into() }).unwrap();
    let lock = WriteAction::RbdLockRm {
        image: unstick_core::model::ImageRef::new("rbd", "img"),
        lock_id: "l1".into(),
        locker: "client.7".into(),
        address: "10.0.0.1:0/7".into(),
    };
    j.intent("stale-lock/3", &lock, None, vec!["locks of rbd/img: l1".into()]).unwrap();
    drop(j);
    // the real incidents' list says where the training sessions are
    let o = unstick_in(data.path(), &["journal"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("no incidents under"), "{t}");
    assert!(
        t.contains("training journals are kept apart: 1 session(s)") && t.contains("20261126t120000z-stale-lock"),
        "{t}"
    );
    // undo on a training journal never goes to a cluster
    let o = unstick_in(data.path(), &["undo", "--dir", session.to_str().unwrap(), id]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("is a training journal") && !t.contains("kubeconfig"), "{t}");
}
