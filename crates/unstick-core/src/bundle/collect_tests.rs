//! Issue 29: a Ceph that stops answering ends `collect`'s Ceph part with what was read, and the
//! manifest says so. The fakes are shell scripts standing in for `ceph` and `rbd` (as in
//! `sources/ceph/cli_tests.rs`), with a 1 s call timeout.

use std::time::{Duration, Instant};

use super::*;
use crate::config::Config;
use crate::sources::ceph::cli::Access;

/// A fake binary running `body` under /bin/sh.
fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.display().to_string()
}

fn images(n: usize) -> Vec<ImageRef> {
    (0..n).map(|i| ImageRef { pool: "rbd".into(), namespace: String::new(), image: format!("img{i}") }).collect()
}

/// Runs the Ceph part of a collect of `n` images with these fake CLIs into a fresh bundle
/// directory; returns the manifest, the directory and the wall time.
async fn collect(ceph: &str, rbd: &str, n: usize) -> (Manifest, tempfile::TempDir, Duration) {
    collect_with(ceph, rbd, NO_MODULE, n).await
}

/// The bulk reader's exit status without the rados module: the scan uses the fake CLIs.
const NO_MODULE: &str = "echo \"No module named 'rados'\" >&2; exit 3";

/// [`collect`] with a fake `python3` running `python`.
async fn collect_with(ceph: &str, rbd: &str, python: &str, n: usize) -> (Manifest, tempfile::TempDir, Duration) {
    let bin = tempfile::tempdir().unwrap();
    let mut cfg = Config::defaults().ceph;
    cfg.ceph = script(bin.path(), "ceph", ceph);
    cfg.rbd = script(bin.path(), "rbd", rbd);
    cfg.python = script(bin.path(), "python3", python);
    cfg.timeout_seconds = 1;
    let cli = CephCli::new(Access::Local { conf: None, id: None, keyring: None }, cfg, None);
    let out = tempfile::tempdir().unwrap();
    let w = Writer::create(out.path()).unwrap();
    let mut m = Manifest::default();
    let t0 = Instant::now();
    let seen = std::sync::Mutex::new(0);
    let progress = |done: usize, _total: usize| *seen.lock().unwrap() = done;
    ceph_to_bundle(&cli, &w, images(n), 4, &mut m, &progress).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), n, "progress reached the end");
    (m, out, t0.elapsed())
}

/// `ceph` hangs from the start: two calls time out (blocklist, `osd ls`), no per-image read is
/// made, every image is reported not read, and the manifest says so.
#[tokio::test]
async fn a_ceph_that_never_answers_ends_the_ceph_part_at_once() {
    let (m, dir, took) = collect("exec sleep 30", "exec sleep 30", 50).await;
    assert!(took < Duration::from_secs(8), "took {took:?}");
    let stopped = &m.errors[CEPH_STOPPED];
    assert!(stopped.contains("50 of 50 images not read"), "{stopped}");
    let part = m.ceph.as_ref().unwrap();
    assert_eq!((part.images, part.not_read, part.ended), (50, 50, Some(CephEnded::Unanswered)));
    assert!(m.errors.contains_key(crate::bundle::BLOCKLIST), "{:?}", m.errors.keys());
    assert!(m.errors.contains_key("ceph/images/rbd/img7/status.json"));
    assert!(!dir.path().join("ceph/images/rbd/img7/status.json").exists());
}

/// Ceph answers the bulk reads (every image locked, one watcher on img0) but `rbd lock ls` hangs:
/// the watchers of all images are written, the lock reads stop after three in a row got no
/// answer (not 100 × 1 s), and the manifest says how many images were not read.
#[tokio::test]
async fn lock_reads_that_hang_stop_after_three_and_keep_what_was_read() {
    let listing: Vec<String> = (0..100)
        .map(|i| format!(r#"{{"image":"img{i}","id":"id{i}","size":1,"format":2,"lock_type":"exclusive"}}"#))
        .collect();
    let watchers = r#"[{"namespace":"","object":"rbd_header.id0","entity_name":{"type":"client","num":4121},
        "cookie":1,"timeout":30,"entity_addr_t":{"type":"v1","addr":"10.0.0.5:0","nonce":77}}]"#;
    let ceph = format!(
        "case \"$*\" in *'blocklist ls'*) echo '[]';; *'osd ls'*) echo '[0]';; *dump_watchers*) echo '{}';; *) exit 22;; esac",
        watchers.replace('\n', " ")
    );
    let rbd = format!(
        "case \"$*\" in *'ls -l'*) echo '[{}]';; *' ls rbd '*) echo '[]';; *) exec sleep 30;; esac",
        listing.join(",")
    );
    let (m, dir, took) = collect(&ceph, &rbd, 100).await;
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let stopped = &m.errors[CEPH_STOPPED];
    // 3 unanswered in a row, in flight 4 at a time: the other 96 or 97 images' locks not read
    assert!(stopped.contains("of 100 images not read") && stopped.contains("in a row"), "{stopped}");
    let part = m.ceph.as_ref().unwrap();
    assert_eq!((part.images, part.ended), (100, Some(CephEnded::Unanswered)));
    assert!(part.not_read >= 96, "{part:?}");
    let status = std::fs::read_to_string(dir.path().join("ceph/images/rbd/img0/status.json")).unwrap();
    assert!(status.contains("10.0.0.5:0/77") || status.contains("10.0.0.5"), "{status}");
    assert!(dir.path().join("ceph/images/rbd/img99/status.json").exists());
    assert!(!dir.path().join("ceph/images/rbd/img99/locks.json").exists());
    assert!(dir.path().join("ceph/blocklist.json").exists());
    let why = "the Python rados/rbd modules are missing: No module named 'rados'";
    let cli = crate::sources::ceph::bulk::CephReader::Cli { bulk_unavailable: Some(why.into()) };
    assert_eq!(part.reader, Some(cli));
}

/// The bulk reader hangs (Ceph answers `dump_watchers`): its timer ends it and the Ceph part with
/// it, every image not read and the manifest saying so; no per-image CLI read is made instead.
#[tokio::test]
async fn a_bulk_reader_that_hangs_ends_the_ceph_part_without_cli_reads() {
    let ceph = "case \"$*\" in *'blocklist ls'*) echo '[]';; *'osd ls'*) echo '[0]';; *dump_watchers*) echo '[]';; *) exit 22;; esac";
    let (m, _dir, took) = collect_with(ceph, "echo called >&2; exit 99", "exec sleep 30", 20).await;
    assert!(took < Duration::from_secs(8), "took {took:?}");
    let part = m.ceph.as_ref().unwrap();
    assert_eq!((part.images, part.not_read, part.ended), (20, 20, Some(CephEnded::Unanswered)), "{part:?}");
    assert!(m.errors[CEPH_STOPPED].contains("timed out"), "{}", m.errors[CEPH_STOPPED]);
}
