//! The live console's own list of the Medik8s remediators (issue 27, "Not racing a remediator"):
//! the console's event loop ([`unstick::ui::run::Loop`]) on the harness's API server, with no
//! Ceph and no remediation service, reads the remediators as not installed (every list answers
//! 404), then, after `cluster medik8s install` and `cluster medik8s remediate worker-1`, the
//! NodeHealthCheck and the SelfNodeRemediation on worker-1 within its next lists.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::time::{Duration, Instant};

use unstick::theme::Theme;
use unstick::ui::app::App;
use unstick::ui::run::{Loop, Sources};
use unstick_core::config::Config;
use unstick_core::model::remediation::{RemediatorKind, Remediators};

mod common;

/// Removes the CRDs when dropped (also when the test panics).
struct RemoveCrds;
impl Drop for RemoveCrds {
    fn drop(&mut self) {
        common::cluster(&["medik8s", "remove"]);
    }
}

/// Steps the console's loop (no keys) until `done` holds for what it listed, `secs` at most.
async fn step_until(lp: &mut Loop, app: &mut App, secs: u64, done: impl Fn(&Remediators) -> bool) -> Remediators {
    let t = Instant::now();
    let mut keys = futures::stream::pending();
    loop {
        if let Some(r) = app.data.snap.remediators.as_ref().filter(|r| done(r)) {
            return r.clone();
        }
        assert!(t.elapsed() < Duration::from_secs(secs), "after {secs} s: {:?}", app.data.snap.remediators);
        let _ = tokio::time::timeout(Duration::from_secs(1), lp.step(app, &mut keys)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_the_console_lists_the_remediators_itself() {
    let h = common::harness();
    let _crds = RemoveCrds;
    common::cluster(&["medik8s", "remove"]);
    let client = h.client().await;
    let cfg = Config::defaults();
    let clock = unstick_core::clock::wall();
    let (ktx, kube_rx) = tokio::sync::mpsc::unbounded_channel();
    let stores =
        unstick_core::sources::kube::start_with(client.clone(), None, ktx, None, cfg.kube.initial_list, clock.clone());
    let (_ceph_tx, ceph_rx) = tokio::sync::mpsc::unbounded_channel();
    let (_remedy_tx, remedy_rx) = tokio::sync::mpsc::unbounded_channel();
    let src = Sources {
        stores,
        kube_rx,
        ceph_tx: None,
        ceph_rx,
        remedy_tx: None,
        remedy_rx,
        clock: clock.clone(),
        client: Some(client),
        fleet: None,
    };
    let mut app = App::new(cfg, Theme::monochrome(), "harness".into(), None, true, jiff::Timestamp::now());
    let mut lp = Loop::new(&mut app, src);
    assert!(app.remediators.live, "an API client: the console lists them");

    let t0 = Instant::now();
    let r = step_until(&mut lp, &mut app, 30, |_| true).await;
    assert_eq!(r.absent, RemediatorKind::ALL.to_vec(), "not installed: {r:?}");
    eprintln!("console remediators: first list (all absent) after {:?}", t0.elapsed());

    common::cluster(&["medik8s", "install"]);
    common::cluster(&["medik8s", "remediate", "worker-1"]);
    let t1 = Instant::now();
    let r = step_until(&mut lp, &mut app, 60, |r| r.objects.len() >= 2).await;
    assert!(r.absent.is_empty() && r.unreadable.is_empty(), "{r:?}");
    let by: Vec<String> = r.objects.iter().map(ToString::to_string).collect();
    assert!(by.iter().any(|b| b.starts_with("NodeHealthCheck nhc-workers")), "{by:?}");
    assert!(by.iter().any(|b| b.starts_with("SelfNodeRemediation medik8s/worker-1")), "{by:?}");
    assert!(r.objects.iter().all(|o| o.node == "worker-1"), "{r:?}");
    eprintln!("console remediators: {by:?} {:?} after the objects were made", t1.elapsed());
}
