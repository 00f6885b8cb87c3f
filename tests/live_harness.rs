//! Integration tests against the REAL harness: kube-apiserver 1.20 + etcd + single-node Ceph on
//! 127.0.0.1, seeded with the five incidents (`tests/harness/cluster up && seed default`).
//! `tests/run-all` brings it up, sets the environment and runs them; a plain `cargo test` reports
//! them ignored (`cargo test --test live_harness -- --ignored` runs them against a harness you
//! started; without one they fail with a message saying how to start it).
//!
//! The tests share one cluster, so they run one at a time (a global lock).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::time::{Duration, Instant};

use ::kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc;
use unstick::theme::Theme;
use unstick::ui::app::{App, Msg};
use unstick_core::config::{Config, InitialList};
use unstick_core::lineage::Lineage;
use unstick_core::model::Snapshot;
use unstick_core::model::kube::{PodState, internal_ips, node_ready, pod_state};
use unstick_core::sources::ceph::{self, CephMsg, CephRequest, ScanMethod};
use unstick_core::sources::kube::{self, KubeMsg, KubeStores, SourceState, WatchedKind};

mod common;

use common::{Harness, cluster};

/// The harness, reset to the default seed (another test may have changed it).
fn harness() -> Harness {
    let h = common::harness();
    cluster(&["seed", "default"]);
    h
}

/// Live stores plus the channel of their notifications.
struct Live {
    stores: KubeStores,
    rx: mpsc::UnboundedReceiver<KubeMsg>,
    states: std::collections::BTreeMap<WatchedKind, SourceState>,
}

impl Live {
    async fn start(kubeconfig: &std::path::Path) -> (Live, ::kube::Client) {
        // As the console starts them: with the watch-established signals and the /readyz check
        // (without them a kind is Live again after a failure only once an event arrives).
        let conn = unstick_core::sources::kube::client::connect(Some(kubeconfig), None)
            .await
            .expect("client from harness kubeconfig");
        let client = conn.client.clone();
        let (tx, rx) = mpsc::unbounded_channel();
        let stores = kube::start_with(
            client.clone(),
            None,
            tx,
            Some(&conn.signals),
            InitialList::Auto,
            unstick_core::clock::wall(),
        );
        (Live { stores, rx, states: Default::default() }, client)
    }

    /// Drains notifications until `done(states)` holds or `limit` passes.
    async fn until(&mut self, limit: Duration, done: impl Fn(&Self) -> bool) -> bool {
        let end = Instant::now() + limit;
        loop {
            if done(self) {
                return true;
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            match tokio::time::timeout(left.min(Duration::from_millis(50)), self.rx.recv()).await {
                Ok(Some(KubeMsg::State(k, s))) => {
                    self.states.insert(k, s);
                }
                Ok(Some(KubeMsg::Changed(_))) | Err(_) => {}
                Ok(None) => return false,
            }
        }
    }

    fn all(&self, pred: impl Fn(&SourceState) -> bool) -> bool {
        WatchedKind::ALL.iter().all(|k| self.states.get(k).is_some_and(&pred))
    }

    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        self.stores.fill(&mut s, jiff::Timestamp::now());
        s
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn seeded_lineage_reaches_watcher_node() {
    let h = harness();
    let (mut live, _) = Live::start(&h.admin).await;
    assert!(
        live.until(Duration::from_secs(20), |l| l.all(|s| *s == SourceState::Live)).await,
        "sources not live: {:?}",
        live.states
    );
    let mut snap = live.snapshot();
    let lineage = Lineage::build(&snap);
    // Every RBD-backed PV of the seed: read its image from the real Ceph.
    let cli = h.ceph();
    for image in lineage.images() {
        let facts = ceph::read_image(&cli, &image).await;
        snap.ceph.images.insert(image, facts);
    }
    let local = snap
        .nodes
        .iter()
        .find(|n| internal_ips(n).iter().any(|ip| ip.to_string() == common::host_ip()))
        .expect("a seeded node owns the harness's host address");
    let local_name = local.metadata.name.clone().unwrap();

    // pod → PVC → PV → image → watcher → node(127.0.0.1), for a ContainerCreating pod.
    let mut found_watcher = false;
    for pod in snap
        .pods
        .iter()
        .filter(|p| matches!(pod_state(p), PodState::Waiting { ref reason } if reason == "ContainerCreating"))
    {
        let key = unstick_core::model::key_of(&pod.metadata);
        for v in lineage.volumes_of_pod(&key) {
            let Some(image) = &v.image else { continue };
            let facts = &snap.ceph.images[image];
            let watchers = facts.watchers.value.as_ref().expect("rbd status works on the harness");
            for w in watchers {
                assert_eq!(lineage.node_for_address(&w.address), Some(local_name.as_str()), "watcher {w:?} of {image}");
                found_watcher = true;
            }
        }
    }
    assert!(found_watcher, "no ContainerCreating pod's image has a real watcher");

    // The in-tree PV's image carries a real kubelet_lock_magic_ lock from the 127.0.0.1 node.
    let in_tree = lineage.by_pv("index-api-pv").expect("seed 000's PV");
    assert_eq!(in_tree.driver, unstick_core::lineage::IN_TREE_RBD);
    let locks = snap.ceph.images[in_tree.image.as_ref().unwrap()].locks.value.clone().expect("rbd lock ls works");
    let lock = locks.iter().find(|l| l.id.starts_with("kubelet_lock_magic_")).expect("seeded lock");
    assert_eq!(lineage.node_for_address(&lock.address), Some(local_name.as_str()));

    // The blocklist parses from the real two-document output.
    let bl = ceph::read_blocklist(&cli).await.value.expect("blocklist ls works");
    assert!(!bl.is_empty(), "the seed adds a blocklist entry");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn api_writes_show_up_in_the_model_within_2s() {
    let h = harness();
    let (mut live, client) = Live::start(&h.admin).await;
    assert!(live.until(Duration::from_secs(20), |l| l.all(|s| *s == SourceState::Live)).await);

    let nodes: Api<Node> = Api::all(client.clone());
    let name = "unstick-live-test-node";
    let _ = nodes.delete(name, &DeleteParams::default()).await;
    let node: Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                                   "lastTransitionTime": Timestamp::now().to_string()}],
                   "addresses": [{"type": "InternalIP", "address": "10.99.0.1"}]}
    }))
    .unwrap();
    nodes.create(&PostParams::default(), &node).await.expect("create node");
    assert!(
        live.until(Duration::from_secs(5), |l| l
            .snapshot()
            .nodes
            .iter()
            .any(|n| n.metadata.name.as_deref() == Some(name)))
            .await,
        "created node never appeared"
    );

    // Node turned Ready through the status subresource.
    let t0 = Instant::now();
    let patch = serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
        "lastTransitionTime": Timestamp::now().to_string()}]}});
    nodes.patch_status(name, &PatchParams::default(), &Patch::Strategic(&patch)).await.expect("patch node status");
    let seen = live
        .until(Duration::from_secs(2), |l| {
            l.snapshot().nodes.iter().any(|n| n.metadata.name.as_deref() == Some(name) && node_ready(n).is_ready())
        })
        .await;
    eprintln!("node Ready visible after {:?}", t0.elapsed());
    assert!(seen, "node Ready=True not in the model within 2 s");

    // A pod deleted (grace 0) disappears.
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "unstick-live-test-pod"},
        "spec": {"nodeName": name, "containers": [{"name": "c", "image": "busybox"}]}
    }))
    .unwrap();
    let _ = pods.delete("unstick-live-test-pod", &DeleteParams::default().grace_period(0)).await;
    // a pod left by an earlier run is gone before it is made again (5 s at most)
    let t0 = Instant::now();
    while pods.get_opt("unstick-live-test-pod").await.ok().flatten().is_some() && t0.elapsed() < Duration::from_secs(5)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    pods.create(&PostParams::default(), &pod).await.expect("create pod");
    assert!(
        live.until(Duration::from_secs(5), |l| l
            .snapshot()
            .pods
            .iter()
            .any(|p| p.metadata.name.as_deref() == Some("unstick-live-test-pod")))
            .await
    );
    let t0 = Instant::now();
    pods.delete("unstick-live-test-pod", &DeleteParams::default().grace_period(0)).await.expect("delete pod");
    let gone = live
        .until(Duration::from_secs(2), |l| {
            !l.snapshot().pods.iter().any(|p| p.metadata.name.as_deref() == Some("unstick-live-test-pod"))
        })
        .await;
    eprintln!("pod deletion visible after {:?}", t0.elapsed());
    assert!(gone, "deleted pod still in the model after 2 s");
    nodes.delete(name, &DeleteParams::default()).await.expect("delete test node");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn no_rights_user_gets_forbidden_panes_not_a_crash() {
    let h = harness();
    let (mut live, _) = Live::start(&h.nobody).await;
    let all_forbidden =
        live.until(Duration::from_secs(20), |l| l.all(|s| matches!(s, SourceState::Forbidden { .. }))).await;
    assert!(all_forbidden, "states: {:?}", live.states);
    let SourceState::Forbidden { message, .. } = &live.states[&WatchedKind::Pod] else { unreachable!() };
    assert!(message.contains("nobody") && message.contains("pods"), "{message}");

    // The console renders each pane's reason.
    let mut app =
        App::new(Config::defaults(), Theme::monochrome(), "kh-nobody".into(), None, true, jiff::Timestamp::now());
    for (k, s) in &live.states {
        app.update(Msg::KubeState(*k, s.clone()));
    }
    app.update(Msg::Objects(Box::new(live.snapshot())));
    let mut term = Terminal::new(TestBackend::new(200, 50)).unwrap();
    term.draw(|f| unstick::ui::view::draw(f, &app)).unwrap();
    let screen: String = term.backend().buffer().content().iter().map(|c| c.symbol()).collect();
    for r in ["forbidden: list nodes", "forbidden: list pods", "forbidden: list events"] {
        assert!(screen.contains(r), "{r} missing");
    }
    assert!(screen.contains("READ-ONLY"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn full_scan_agrees_with_per_image_status() {
    let h = harness();
    let (mut live, _) = Live::start(&h.admin).await;
    assert!(live.until(Duration::from_secs(20), |l| l.all(|s| *s == SourceState::Live)).await);
    let lineage = Lineage::build(&live.snapshot());
    let images = lineage.images();
    assert!(images.len() >= 4, "{images:?}");
    let cli = h.ceph();
    let (req_tx, req_rx) = mpsc::unbounded_channel();
    let (msg_tx, mut msg_rx) = mpsc::unbounded_channel();
    ceph::spawn(cli.clone(), req_rx, msg_tx);
    req_tx.send(CephRequest::Scan(images.clone())).unwrap();
    let mut scanned = std::collections::BTreeMap::new();
    let method = loop {
        match tokio::time::timeout(Duration::from_secs(60), msg_rx.recv()).await.expect("scan finished within 60 s") {
            Some(CephMsg::Image { image, facts }) => {
                scanned.insert(image, facts);
            }
            Some(CephMsg::ScanDone { method, total, elapsed }) => {
                eprintln!("scan of {total} images took {elapsed:?} via {method:?}");
                break method;
            }
            Some(_) => {}
            None => panic!("worker ended"),
        }
    };
    assert_eq!(method, ScanMethod::DumpWatchers, "the admin user can dump_watchers");
    for image in &images {
        let per_image = ceph::read_image(&cli, image).await;
        let mut a = scanned[image].watchers.value.clone().unwrap();
        let mut b = per_image.watchers.value.clone().unwrap();
        a.sort_by(|x, y| x.address.cmp(&y.address));
        b.sort_by(|x, y| x.address.cmp(&y.address));
        let addrs =
            |v: &Vec<unstick_core::model::ceph::Watcher>| v.iter().map(|w| w.address.clone()).collect::<Vec<_>>();
        assert_eq!(addrs(&a), addrs(&b), "{image}");
        assert_eq!(scanned[image].locks.value, per_image.locks.value, "{image}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn stopped_mon_turns_ceph_calls_into_bounded_errors() {
    let h = harness();
    let cli = h.ceph();
    let image = unstick_core::model::ImageRef::new("replicapool", "index-api-image");
    // Sanity: works while the mon runs.
    assert!(ceph::read_image(&cli, &image).await.locks.value.is_ok());
    cluster(&["mon", "stop"]);
    let restart = scopeguard(|| cluster(&["mon", "start"]));
    let t0 = Instant::now();
    let (facts, bl) = tokio::join!(ceph::read_image(&cli, &image), ceph::read_blocklist(&cli));
    let took = t0.elapsed();
    eprintln!("calls with a stopped mon failed after {took:?}");
    let cfg = Config::defaults().ceph;
    assert!(took <= Duration::from_secs(cfg.timeout_seconds + 3), "not bounded: {took:?}");
    for e in [facts.watchers.value.unwrap_err(), facts.locks.value.unwrap_err(), bl.value.unwrap_err()] {
        let e = e.to_string();
        assert!(e.contains("rbd") || e.contains("ceph"), "error names the command: {e}");
    }
    drop(restart);
    // And it recovers once the mon is back.
    let t0 = Instant::now();
    loop {
        if ceph::read_image(&cli, &image).await.locks.value.is_ok() {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "Ceph did not recover after mon start");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Runs `f` when dropped (restores the mon even if an assertion fails).
fn scopeguard(f: impl FnOnce()) -> impl Drop {
    struct G<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for G<F> {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f()
            }
        }
    }
    G(Some(f))
}

/// Kills the harness's kube-apiserver (SIGKILL: the API server "going away"; a SIGTERM would wait
/// up to 60 s for open watches to drain) by the PID in its pid file, after checking the command
/// line (PIDs get reused), and waits for it to exit. etcd keeps the data.
fn stop_apiserver(state_dir: &std::path::Path) {
    let pid_file = state_dir.join("run/apiserver.pid");
    let pid = std::fs::read_to_string(&pid_file).expect("apiserver pid file");
    let pid = pid.trim();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    assert!(String::from_utf8_lossy(&cmdline).contains("kube-apiserver"), "pid {pid} is not the apiserver");
    let st = std::process::Command::new("kill").args(["-KILL", pid]).status().expect("kill");
    assert!(st.success());
    let t0 = Instant::now();
    while std::path::Path::new(&format!("/proc/{pid}")).exists() && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn api_server_restart_marks_data_stale_then_live_again() {
    let h = harness();
    let state_dir = h.state_dir.clone();
    let (mut live, client) = Live::start(&h.admin).await;
    assert!(live.until(Duration::from_secs(20), |l| l.all(|s| *s == SourceState::Live)).await);
    let before = live.snapshot().pods.len();
    assert!(before > 0);

    stop_apiserver(&state_dir);
    let restart = scopeguard(|| cluster(&["up"]));
    let stale = live
        .until(Duration::from_secs(30), |l| matches!(l.states.get(&WatchedKind::Pod), Some(SourceState::Stale { .. })))
        .await;
    assert!(stale, "pods not marked stale: {:?}", live.states);
    // Data is kept while stale, and the pane title says so with the age.
    assert_eq!(live.snapshot().pods.len(), before);
    let mut app = App::new(Config::defaults(), Theme::monochrome(), "kh".into(), None, false, jiff::Timestamp::now());
    for (k, s) in &live.states {
        app.update(Msg::KubeState(*k, s.clone()));
    }
    app.update(Msg::Objects(Box::new(live.snapshot())));
    app.update(Msg::Tick(Timestamp::now() + jiff::SignedDuration::from_secs(7)));
    let mut term = Terminal::new(TestBackend::new(200, 50)).unwrap();
    term.draw(|f| unstick::ui::view::draw(f, &app)).unwrap();
    let screen: String = term.backend().buffer().content().iter().map(|c| c.symbol()).collect();
    assert!(screen.contains("po:stale"), "status bar shows stale pods");

    drop(restart); // cluster up: starts the apiserver again
    let back = live.until(Duration::from_secs(90), |l| l.all(|s| *s == SourceState::Live)).await;
    assert!(back, "sources did not reconnect: {:?}", live.states);
    // the store holds what the API server holds again: the controllers restarted with it may
    // have made or removed pods meanwhile (an earlier test's workloads), so the server decides
    let pods: Api<Pod> = Api::all(client);
    let t0 = Instant::now();
    loop {
        let server = pods.list(&Default::default()).await.unwrap().items.len();
        if live.until(Duration::from_secs(2), |l| l.snapshot().pods.len() == server).await {
            break;
        }
        let held = live.snapshot().pods.len();
        assert!(t0.elapsed() < Duration::from_secs(30), "the store holds {held} pods, the API server {server}");
    }
}
