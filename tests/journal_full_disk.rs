//! Issue 10, "Logs after a full disk": an ACCEPTED confirmation whose journal write fails sends
//! nothing and is recorded in the session log, and the console says so whole; once the disk has
//! room again the same step runs.
//!
//! The training console (`cmd::train::setup_with`, the trainee of `tests/common/train.rs`) runs
//! stale-lock in a child process: this test binary again, running [`full_disk_child`] under
//! `unshare --mount --propagation private` (a private mount namespace, so nothing is mounted for
//! anyone else). The child mounts a 2 MiB tmpfs on its journal base directory (the session log
//! stays outside it), plays to the first Act step's confirmation (`rbd lock rm`, typed name),
//! fills the tmpfs until ENOSPC, accepts the confirmation and checks:
//! - the simulation received no write (a counting Ceph transport);
//! - the journal holds no intent for the step (and no torn line);
//! - the session log holds a failed `action` record for the step, with nothing sent;
//! - the screen (80x24) shows the error whole: "No space left on device" on the screen;
//! - after the filler is removed, the same step is confirmed again and runs (one write, journaled).
//!
//! This needs root (or CAP_SYS_ADMIN) for `unshare --mount` and `mount -t tmpfs`; CI runs as root.
//! It FAILS, never skips, when the namespace or the mount cannot be set up: the parent asserts
//! that the child ran every check (its last line) and passed.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::train::{Driver, HookedWrites, Setup};
use crossterm::event::KeyCode;
use futures::future::BoxFuture;
use unstick_core::remedy::journal;
use unstick_core::remedy::playbook::StepKind;
use unstick_core::sources::ceph::cli::CephTransport;
use unstick_core::sources::sim::Sim;

const CHILD_DIR: &str = "UNSTICK_FULL_DISK_CHILD_DIR";
/// The child's last line when every check passed.
const ALL_CHECKED: &str = "full_disk_child: every check passed";

/// Runs `cmd ARGS` (argv, no shell) and asserts it succeeded.
fn run(cmd: &str, args: &[&str]) {
    let out = Command::new(cmd).args(args).output().unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(out.status.success(), "{cmd} {args:?}: {}{}", out.status, String::from_utf8_lossy(&out.stderr));
}

/// Fills the filesystem of `dir` with `dir/filler` until a write gets ENOSPC; returns the bytes.
fn fill(dir: &Path) -> u64 {
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let buf = vec![0u8; 64 * 1024];
    let mut n = 0u64;
    loop {
        match f.write(&buf) {
            Ok(0) => break,
            Ok(k) => n += k as u64,
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => panic!("fill: {e}"),
        }
    }
    n
}

/// tmpfs allocates whole pages, so on a full tmpfs an append that fits the free bytes of the
/// file's last page still succeeds. Blank lines (which the journal's reader skips) bring the
/// journal to a page boundary, so its next record needs a new page, as on a full disk.
fn pad_to_page(path: &Path) {
    // SAFETY: sysconf has no preconditions.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap();
    let len = std::fs::metadata(path).unwrap().len();
    let pad = (page - len % page) % page;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(&vec![b'\n'; pad as usize]).unwrap();
    f.sync_all().unwrap();
}

fn session_log(dir: &Path) -> unstick_core::session::SessionReport {
    let logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(logs.len(), 1, "one session log: {logs:?}");
    unstick_core::session::read(&logs[0]).expect("session log reads")
}

/// Only as the child of [`accepted_confirmation_with_a_full_journal_disk_sends_nothing_and_is_logged`]
/// (`UNSTICK_FULL_DISK_CHILD_DIR` set, in a private mount namespace); otherwise it returns at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "child process of accepted_confirmation_with_a_full_journal_disk_…; run by that test with --ignored"]
async fn full_disk_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR).map(PathBuf::from) else { return };
    let base = dir.join("incidents");
    std::fs::create_dir_all(&base).unwrap();
    run("mount", &["-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", base.to_str().unwrap()]);
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(mounts.lines().any(|l| l.contains(base.to_str().unwrap()) && l.contains("tmpfs")), "{mounts}");

    let writes = Arc::new(AtomicUsize::new(0));
    let w = writes.clone();
    let setup = Setup {
        journal_base: base.clone(),
        sessions: Some(dir.join("sessions")),
        remedy_ceph: Box::new(move |s: &Sim| {
            let on_write = move || -> BoxFuture<'static, ()> {
                w.fetch_add(1, Ordering::SeqCst);
                Box::pin(std::future::ready(()))
            };
            Arc::new(HookedWrites {
                sim: s.clone(),
                on_write: Box::new(on_write),
                name: "the simulation (writes counted)",
            }) as Arc<dyn CephTransport>
        }),
    };
    let mut d = Driver::with("stale-lock", setup);
    d.pump(Duration::from_millis(300)).await;
    d.key(KeyCode::Enter).await;
    // play along the reference path up to the first confirmation, read to its end
    for _ in 0..100 {
        let open = d.app.popups().confirm();
        if open.is_some_and(|c| !c.guard.holds(d.app.now)) {
            break;
        }
        d.play().await;
    }
    let pb = d.app.playbook().expect("playbook open");
    let c = d.app.popups().confirm().cloned().expect("a confirmation is open");
    let r = pb.runner.clone().expect("runner");
    let step = pb.playbook.steps[r.cursor].clone();
    assert!(matches!(&step.kind, StepKind::Act(_)), "the first confirmation is an Act step: {step:?}");
    let typed = c.typed_name.clone().expect("lock rm is irreversible: the name is typed");
    d.key(KeyCode::End).await;

    // the disk fills up while the operator reads
    pad_to_page(&r.journal);
    let filled = fill(&base);
    let before = writes.load(Ordering::SeqCst);
    let intents_before = journal::read(&r.journal).unwrap().steps().len();
    d.type_text(&typed).await;
    d.pump(Duration::from_millis(1500)).await;
    let screen = d.screen();
    eprintln!("after accepting with a full disk ({filled} bytes of filler):\n{screen}");

    assert_eq!(writes.load(Ordering::SeqCst), before, "nothing was sent to the cluster");
    let rep = journal::read(&r.journal).unwrap();
    assert!(rep.problems.is_empty(), "no torn line: {:?}", rep.problems);
    assert_eq!(rep.steps().len(), intents_before, "no intent journaled");
    assert!(!rep.steps().iter().any(|s| s.intent.step_id == step.id), "{:?}", rep.steps());
    let log = session_log(&dir.join("sessions"));
    let failed: Vec<_> = log
        .records
        .iter()
        .filter_map(|(_, rec)| match &rec.event {
            unstick_core::session::SessionEvent::Action { step_id, ok, outcome, sent, .. } if *step_id == step.id => {
                Some((*ok, outcome.clone(), sent.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "one action record for {}: {failed:?}", step.id);
    let (ok, outcome, sent) = &failed[0];
    assert!(!ok && sent.is_none(), "failed, nothing sent: {failed:?}");
    assert!(outcome.contains("journal write failed") && outcome.contains("No space left on device"), "{outcome}");
    // the error whole, every character in order (wrapped in the playbook panel, above its keys)
    let squeeze = |t: &str| t.chars().filter(|c| !c.is_whitespace() && *c != '│').collect::<String>();
    let error = format!("{}: append: No space left on device (os error 28)", r.journal.display());
    assert!(squeeze(&screen).contains(&squeeze(&error)), "{error} on the screen, whole:\n{screen}");

    // room again: the same step is prepared, confirmed and sent once
    std::fs::remove_file(base.join("filler")).unwrap();
    for _ in 0..40 {
        if writes.load(Ordering::SeqCst) > before {
            break;
        }
        d.play().await;
    }
    d.pump(Duration::from_millis(500)).await;
    assert_eq!(writes.load(Ordering::SeqCst), before + 1, "sent once the journal could be written");
    let rep = journal::read(&r.journal).unwrap();
    assert!(rep.problems.is_empty(), "{:?}", rep.problems);
    assert!(rep.steps().iter().any(|s| s.intent.step_id == step.id), "intent journaled: {:?}", rep.steps());
    // the tmpfs goes with this process's mount namespace
    eprintln!("{ALL_CHECKED}");
}

#[test]
fn accepted_confirmation_with_a_full_journal_disk_sends_nothing_and_is_logged() {
    if std::env::var_os(CHILD_DIR).is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("timeout")
        .args(["120", "unshare", "--mount", "--propagation", "private", "--"])
        .arg(&exe)
        .args(["--exact", "full_disk_child", "--ignored", "--nocapture", "--test-threads", "1"])
        .env(CHILD_DIR, dir.path())
        .output()
        .expect("run unshare");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("{text}");
    assert!(out.status.success(), "the child (needs root: unshare --mount, mount -t tmpfs) failed: {}", out.status);
    assert!(text.contains(ALL_CHECKED), "the child ran every check");
}
