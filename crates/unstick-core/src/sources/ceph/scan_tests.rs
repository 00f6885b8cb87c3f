//! The scan's bounds (issue 10): a per-image scan stops when the cluster stops answering, and
//! ends at its deadline; every image is reported either way. Work is counted in calls.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;

use super::cli::{CephTransport, Completed, StartError};
use super::*;
use crate::config::Config;

/// A cluster where `dump_watchers` is not allowed (so scans go per image), and image `i` answers
/// when `answers(i)`, else `rbd` exits 110 (ETIMEDOUT). Every call takes `delay` (tokio time).
struct Fake {
    calls: AtomicUsize,
    delay: Duration,
    answers: fn(usize) -> bool,
}

impl CephTransport for Fake {
    fn prefix(&self, tool: Tool) -> Vec<String> {
        vec![if tool == Tool::Rbd { "rbd" } else { "ceph" }.into()]
    }

    fn run<'a>(&'a self, argv: &'a [String]) -> BoxFuture<'a, Result<Completed, StartError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(self.delay).await;
            let words: Vec<&str> = argv.iter().map(String::as_str).collect();
            if words.contains(&"osd") {
                return Ok((13, String::new(), "Error EACCES: access denied".into()));
            }
            let image = words.iter().find_map(|w| w.strip_prefix("rbd/img")).and_then(|n| n.parse::<usize>().ok());
            match image {
                Some(i) if (self.answers)(i) && words.contains(&"status") => {
                    Ok((0, r#"{"watchers":[]}"#.into(), "".into()))
                }
                Some(i) if (self.answers)(i) => Ok((0, "[]".into(), String::new())),
                _ => Ok((110, String::new(), "rbd: couldn't connect to the cluster!".into())),
            }
        })
    }

    fn name(&self) -> &'static str {
        "fake"
    }
}

fn images(n: usize) -> Vec<ImageRef> {
    (0..n).map(|i| ImageRef { pool: "rbd".into(), namespace: String::new(), image: format!("img{i}") }).collect()
}

/// Runs one scan of `n` images (or, with `deadline`, the per-image scan alone); returns (method,
/// images reported, images read ok, calls made).
async fn run_scan(
    n: usize,
    delay: Duration,
    answers: fn(usize) -> bool,
    deadline: Option<Duration>,
) -> (ScanMethod, usize, usize, usize) {
    let fake = Arc::new(Fake { calls: AtomicUsize::new(0), delay, answers });
    let cli = CephCli::with_transport(fake.clone(), Config::defaults().ceph);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    match deadline {
        None => scan(&cli, images(n), CONSOLE_SCAN_WIDTH, &tx).await,
        Some(d) => {
            let method =
                scan_per_image(&cli, &images(n), CONSOLE_SCAN_WIDTH, &tx, tokio::time::Instant::now() + d).await;
            let _ = tx.send(CephMsg::ScanDone { total: n, elapsed: Duration::ZERO, method });
        }
    }
    drop(tx);
    let (mut method, mut reported, mut ok) = (None, 0, 0);
    while let Some(m) = rx.recv().await {
        match m {
            CephMsg::Image { facts, .. } => {
                reported += 1;
                if facts.watchers.value.is_ok() {
                    ok += 1;
                }
            }
            CephMsg::ScanDone { method: m, total, .. } => {
                assert_eq!(total, n);
                method = Some(m);
            }
            _ => {}
        }
    }
    (method.expect("ScanDone"), reported, ok, fake.calls.load(Ordering::SeqCst))
}

/// Issue 10: 2005 images with the mon gone became ~1.5 h of per-image reads. Now the scan stops
/// after 3 images in a row without an answer: 3 + 13 × 2 calls, and every image is reported.
#[tokio::test]
async fn a_cluster_that_stops_answering_stops_the_per_image_scan() {
    let (method, reported, ok, calls) = run_scan(2005, Duration::from_millis(1), |i| i < 10, None).await;
    assert_eq!(method, ScanMethod::Failed);
    assert_eq!((reported, ok), (2005, 10));
    // blocklist, osd ls and the `rbd ls` (names) started beside it, 10 images read, 3 unanswered,
    // 2 calls each
    assert_eq!(calls, 3 + (10 + SCAN_UNANSWERED_STOP) * 2);
}

/// Single failures (one image's reads) do not stop the scan; it reads every image.
#[tokio::test]
async fn scattered_failures_do_not_stop_it() {
    let (method, reported, ok, _) = run_scan(100, Duration::from_millis(1), |i| i % 3 != 0, None).await;
    assert_eq!(method, ScanMethod::PerImage);
    assert_eq!((reported, ok), (100, 66));
}

/// A slow cluster: the scan ends at its deadline ([`SCAN_DEADLINE`], here 300 ms) and reports
/// the rest as not read.
#[tokio::test]
async fn a_slow_scan_ends_at_its_deadline() {
    let started = tokio::time::Instant::now();
    let (method, reported, ok, _) =
        run_scan(1000, Duration::from_millis(20), |_| true, Some(Duration::from_millis(300))).await;
    let took = started.elapsed();
    assert_eq!(method, ScanMethod::PerImage);
    assert_eq!(reported, 1000);
    // 20 ms an image (both reads run together): about 15 read before the deadline
    assert!((1..=16).contains(&ok), "{ok} read before the deadline");
    assert!(took < Duration::from_secs(3), "{took:?}");
}

/// A cluster whose scan reads never return (`rbd/img*` hang) while the selected image answers.
struct Hanging;

impl CephTransport for Hanging {
    fn prefix(&self, tool: Tool) -> Vec<String> {
        vec![if tool == Tool::Rbd { "rbd" } else { "ceph" }.into()]
    }

    fn run<'a>(&'a self, argv: &'a [String]) -> BoxFuture<'a, Result<Completed, StartError>> {
        Box::pin(async move {
            let words: Vec<&str> = argv.iter().map(String::as_str).collect();
            if words.contains(&"osd") {
                return Ok((13, String::new(), "Error EACCES: access denied".into()));
            }
            if words.iter().any(|w| w.starts_with("rbd/img")) {
                std::future::pending::<()>().await;
            }
            if words.contains(&"status") {
                Ok((0, r#"{"watchers":[]}"#.into(), String::new()))
            } else {
                Ok((0, "[]".into(), String::new()))
            }
        })
    }

    fn name(&self) -> &'static str {
        "hanging"
    }
}

/// Issue 10: the selected image waited behind the scan. A scan whose reads hang holds one
/// image's two calls at a time, so the selected image's reads still get slots and answer.
#[tokio::test]
async fn a_hanging_scan_never_starves_the_selected_image() {
    let cli = CephCli::with_transport(Arc::new(Hanging), Config::defaults().ceph);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let scan_cli = cli.clone();
    let scanning = tokio::spawn(async move { scan(&scan_cli, images(500), CONSOLE_SCAN_WIDTH, &tx).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let sel = ImageRef { pool: "rbd".into(), namespace: String::new(), image: "selected".into() };
    let facts = tokio::time::timeout(Duration::from_secs(5), read_image(&cli, &sel)).await;
    let facts = facts.expect("the selected image's reads are not queued behind the scan");
    assert_eq!(facts.watchers.value, Ok(vec![]));
    assert!(!scanning.is_finished(), "the scan is still hanging");
    scanning.abort();
}
