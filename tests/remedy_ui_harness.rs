//! The console driven by key events through the stale-lock playbook on the REAL harness: the App
//! gets a live snapshot, its effects go to a real remediation worker (journal in a temp dir, real
//! Lease, real executor), the worker's answers come back as messages (first the API server version
//! it read). The stale-lock backup makes a full `rbd export` copy through the `e` prompt.
//! Afterwards a fresh snapshot has no stale-lock finding. The harness is reseeded `default` before and after.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::time::Duration;

use crossterm::event::KeyCode;
use unstick_core::config::Config;
use unstick_core::diagnose::PatternId;
use unstick_core::lineage::Lineage;
use unstick_core::remedy::journal::{self, WriteStatus};
use unstick_core::remedy::service;

mod common;

use common::console::{Driver, ceph, setup, snapshot};
use common::remedy::Reseed;

/// The console on the seeded harness with the first finding of `pattern` selected, and a real
/// worker journaling under `dir`.
async fn console(h: &common::Harness, dir: &std::path::Path, pattern: PatternId) -> (Driver, Config) {
    let mut cfg = Config::defaults();
    cfg.ceph.scan_on_start = false;
    (setup(h, dir, &cfg, |f| f.pattern == pattern).await, cfg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn stale_lock_fixed_by_keys_in_the_console() {
    let h = common::harness();
    common::cluster(&["seed", "default"]);
    let _reseed = Reseed;
    let dir = tempfile::tempdir().unwrap();
    let (mut d, cfg) = console(&h, dir.path(), PatternId::StaleLock).await;

    d.key(KeyCode::Char('p')).await;
    let pb = d.app.playbook().expect("playbook open");
    let runner = pb.runner.as_ref().unwrap_or_else(|| panic!("runner opened: {:?}", pb.message));
    assert!(matches!(runner.lease, service::LeaseView::Held(_)), "{:?}", runner.lease);
    let act = pb
        .playbook
        .steps
        .iter()
        .position(|s| matches!(s.kind, unstick_core::remedy::playbook::StepKind::Act(_)))
        .unwrap();

    // acting before the backup: the Act step is locked, nothing reaches the worker
    for _ in 0..act {
        d.key(KeyCode::Char('j')).await;
    }
    d.key(KeyCode::Enter).await;
    assert!(d.message().contains("until the backup"), "{}", d.message());
    for _ in 0..act {
        d.key(KeyCode::Char('k')).await;
    }

    // backup with the full copy: e opens the destination prompt (default under the incident
    // directory), Enter runs the backup with `rbd export`; progress comes back from the worker
    d.key(KeyCode::Char('e')).await;
    let default = d.app.popups().full_copy().expect("export prompt").input.lines().join("");
    assert!(
        default.ends_with("/backup/index-api-image.img")
            && default.starts_with(&dir.path().to_string_lossy().into_owned()),
        "{default}"
    );
    d.key(KeyCode::Enter).await;
    let pb = d.app.playbook().unwrap();
    let r = pb.runner.clone().unwrap();
    let b = r.backup.clone().unwrap_or_else(|| panic!("backup: {}", d.message()));
    assert!(b.snapshot.as_deref().is_some_and(|s| s.contains("@unstick-")), "{b:?}");
    let p = pb.export.expect("export progress reached the app");
    assert_eq!((p.bytes, p.total), (64 << 20, Some(64 << 20)));
    let e = b.export.clone().expect("export in the backup record");
    assert_eq!(e.path.to_string_lossy(), default);
    let bytes = std::fs::read(&e.path).unwrap();
    assert_eq!(
        (bytes.len() as u64, unstick_core::remedy::run::backup::sha256_hex(&bytes)),
        (e.bytes, e.sha256.clone())
    );
    assert!(d.message().contains(&e.sha256), "{}", d.message());
    d.key(KeyCode::Enter).await; // check
    assert_eq!(d.app.playbook().unwrap().runner.as_ref().unwrap().cursor, act, "{}", d.message());
    d.key(KeyCode::Enter).await; // prepare lock rm → confirm popup
    let c = d.app.popups().confirm().cloned().unwrap_or_else(|| panic!("popup: {}", d.message()));
    assert!(!c.view.reversible && c.view.warnings.iter().any(|w| w.contains("1 hour")), "{:?}", c.view);
    assert_eq!(c.view.typed_name.as_deref(), Some("index-api-image"));
    d.key(KeyCode::Char('y')).await;
    assert!(c.guard.holds(d.app.now), "the popup takes no key for a moment");
    assert!(d.popup("lock rm").input.lines().join("").is_empty(), "the key typed at once was not taken");
    d.read_popup().await;
    d.key(KeyCode::Char('y')).await;
    d.key(KeyCode::Enter).await; // "y" is not the name: refused locally
    assert!(d.app.popups().confirm().is_some(), "still open");
    d.key(KeyCode::Backspace).await;
    let part = c.to_type().expect("a name to type").to_string();
    d.type_text(&part).await;
    d.key(KeyCode::Enter).await; // send
    assert!(d.message().contains("done"), "{}", d.message());
    d.key(KeyCode::Enter).await; // verify
    assert!(d.message().contains("verified"), "{}", d.message());
    d.key(KeyCode::Char('s')).await; // skip the optional pod delete
    let r = d.app.playbook().unwrap().runner.clone().unwrap();
    assert_eq!(r.cursor, d.app.playbook().unwrap().playbook.steps.len(), "{}", d.message());
    d.key(KeyCode::Esc).await;
    assert!(d.app.playbook().is_none());
    tokio::time::sleep(Duration::from_millis(800)).await; // the Lease release

    let rep = journal::read(&r.journal).unwrap();
    assert!(rep.problems.is_empty());
    assert_eq!(
        rep.backups()[0].export.as_ref().map(|e| e.sha256.clone()),
        Some(e.sha256.clone()),
        "journaled with its checksum"
    );
    assert!(rep.steps().iter().all(|s| s.status == WriteStatus::Done), "{:?}", rep.steps());
    let snap = snapshot(&h).await;
    let lin = Lineage::build(&snap);
    let findings = unstick_core::diagnose::run(&snap, &lin, &cfg.diagnose, jiff::Timestamp::now());
    assert!(!findings.iter().any(|f| f.pattern == PatternId::StaleLock), "stale-lock gone: {findings:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn dead_node_watcher_blocklisted_then_undone_with_u() {
    let h = common::harness();
    common::cluster(&["seed", "default"]);
    let _reseed = Reseed;
    let dir = tempfile::tempdir().unwrap();
    let (mut d, _cfg) = console(&h, dir.path(), PatternId::DeadNodeWatcher).await;
    d.key(KeyCode::Char('p')).await;
    d.key(KeyCode::Enter).await; // backup
    d.key(KeyCode::Enter).await; // check
    // Act steps until the Verify step: force-delete (typed pod name), blocklist add (y)
    let mut addr = None;
    for _ in 0..4 {
        let pb = d.app.playbook().unwrap();
        let cursor = pb.runner.as_ref().unwrap().cursor;
        if !matches!(pb.playbook.steps[cursor].kind, unstick_core::remedy::playbook::StepKind::Act(_)) {
            break;
        }
        d.key(KeyCode::Enter).await;
        let c = d.popup("act");
        if c.typed_name.is_none() {
            addr = c.view.summary.split_whitespace().last().map(str::to_string);
        }
        d.confirm().await;
        assert!(d.message().contains("done"), "{}", d.message());
    }
    let addr = addr.expect("a blocklist step");
    d.key(KeyCode::Enter).await; // verify: the watcher is gone
    assert!(d.message().contains("verified"), "{}", d.message());
    let bl = ceph(&h).run(unstick_core::sources::ceph::cli::Tool::Ceph, &["osd", "blocklist", "ls"]).await.unwrap();
    assert!(bl.stdout.contains(&addr), "{addr} blocklisted: {}", bl.stdout);
    // u: the newest undoable step is the blocklist. Guarded unfence: node1 is not shown to have
    // rebooted (the static seed reports no bootID): refused until its name is typed (o); then u
    // again gives the same popup, reversible → y
    d.undo_typing_override("node1").await;
    let c = d.popup("undo");
    assert!(c.view.warnings.iter().any(|w| w.starts_with("OVERRIDE: node node1")), "{:?}", c.view.warnings);
    assert!(c.view.undo_of.is_some() && c.view.reversible && c.view.summary.contains("blocklist rm"), "{:?}", c.view);
    d.confirm().await;
    assert!(d.message().contains("undo done"), "{}", d.message());
    let bl = ceph(&h).run(unstick_core::sources::ceph::cli::Tool::Ceph, &["osd", "blocklist", "ls"]).await.unwrap();
    assert!(!bl.stdout.contains(&addr), "entry removed by undo: {}", bl.stdout);
    d.key(KeyCode::Esc).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
}
