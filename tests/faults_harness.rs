//! Live faults on the REAL harness (see `tests/live_harness.rs` for how it is started): the API
//! server stopped and restarted (three times, then one 90 s outage), etcd down, the Ceph mon down,
//! a blackholed and a garbage-speaking API server (small fake servers on 127.0.0.1), no rights,
//! partial rights and the read-only role of `deploy/rbac/`. Each test asserts what the screen
//! (TestBackend) and `diagnose` claim — never ✓ or "no findings" on data that was not read — and
//! prints how long recovery took
//! (`cargo test --test faults_harness -- --nocapture --test-threads 1`).
//!
//! A test that stops a component starts it again in a drop guard, also when it fails.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ::kube::api::{Api, DeleteParams, PostParams};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use tokio::sync::mpsc;
use unstick::theme::Theme;
use unstick::ui::app::{App, Msg};
use unstick_core::config::{Config, InitialList};
use unstick_core::model::Snapshot;
use unstick_core::sources::ceph::{self, CephMsg};
use unstick_core::sources::kube::client;
use unstick_core::sources::kube::{self, KubeMsg, KubeStores, SourceState, WatchedKind};

mod common;

use common::{Harness, cluster};

fn harness() -> Harness {
    let h = common::harness();
    cluster(&["seed", "default"]);
    h
}

/// Starts `what` again when dropped (after a stop), so a failing test leaves the harness running.
struct Restart(&'static str);

impl Drop for Restart {
    fn drop(&mut self) {
        cluster(&[self.0, "start"]);
    }
}

/// The console's sources on a bounded client (as `unstick` starts them).
struct Live {
    stores: KubeStores,
    rx: mpsc::UnboundedReceiver<KubeMsg>,
    states: BTreeMap<WatchedKind, SourceState>,
}

impl Live {
    async fn start(kubeconfig: &Path, namespace: Option<&str>) -> Live {
        let conn = client::connect(Some(kubeconfig), None).await.expect("client");
        let (tx, rx) = mpsc::unbounded_channel();
        let stores = kube::start_with(
            conn.client,
            namespace,
            tx,
            Some(&conn.signals),
            InitialList::Auto,
            unstick_core::clock::wall(),
        );
        Live { stores, rx, states: BTreeMap::new() }
    }

    /// Drains notifications until `done` holds or `limit` passes; true when it held.
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

    fn any_live(&self) -> bool {
        self.states.values().any(|s| *s == SourceState::Live)
    }

    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        self.stores.fill(&mut s, jiff::Timestamp::now());
        s
    }

    /// A read-only console fed with these states and objects.
    fn app(&self) -> App {
        let mut app =
            App::new(Config::defaults(), Theme::monochrome(), "faults".into(), None, true, jiff::Timestamp::now());
        for (k, s) in &self.states {
            app.update(Msg::KubeState(*k, s.clone()));
        }
        if self.states.values().any(|s| matches!(s, SourceState::Live | SourceState::Stale { .. })) {
            app.update(Msg::Objects(Box::new(self.snapshot())));
        }
        app
    }
}

fn screen(app: &App) -> String {
    unstick::ui::testing::screen(app, 200, 50)
}

/// `unstick diagnose` as a process: (exit code, stdout, stderr). `UNSTICK_TEST_BIN` overrides the
/// binary (a copy, when several checkouts share one target directory and overwrite its binary).
fn diagnose(h: &Harness, kubeconfig: &Path, extra: &[&str]) -> (i32, String, String) {
    let bin = std::env::var_os("UNSTICK_TEST_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_unstick").into());
    let out = std::process::Command::new(bin)
        .args(["--kubeconfig".as_ref(), kubeconfig.as_os_str(), "--ceph-conf".as_ref(), h.ceph_conf.as_os_str()])
        .arg("diagnose")
        .args(extra)
        .env("XDG_STATE_HOME", h.state_dir.join("faults-xdg"))
        .output()
        .expect("run unstick diagnose");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

async fn admin(h: &Harness) -> ::kube::Client {
    kube::client(Some(&h.admin), None).await.expect("admin client").0
}

/// Binds `nobody` to a ClusterRole with `rules` (JSON) for the test; removed again on drop.
struct Grant {
    client: ::kube::Client,
    name: String,
}

impl Grant {
    async fn new(client: &::kube::Client, name: &str, role: serde_json::Value) -> Grant {
        let mut role: ClusterRole = serde_json::from_value(role).expect("role");
        role.metadata.name = Some(name.into());
        let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "nobody"}]
        }))
        .unwrap();
        let g = Grant { client: client.clone(), name: name.into() };
        g.remove().await;
        Api::<ClusterRole>::all(client.clone()).create(&PostParams::default(), &role).await.expect("create role");
        Api::<ClusterRoleBinding>::all(client.clone())
            .create(&PostParams::default(), &binding)
            .await
            .expect("create binding");
        g
    }

    async fn remove(&self) {
        let _ = Api::<ClusterRoleBinding>::all(self.client.clone()).delete(&self.name, &DeleteParams::default()).await;
        let _ = Api::<ClusterRole>::all(self.client.clone()).delete(&self.name, &DeleteParams::default()).await;
    }
}

fn yaml_role(path: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).expect("read role");
    let doc: serde_json::Value = serde_saphyr::from_str(&text).expect("role yaml");
    doc
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn no_and_partial_rights_say_what_could_not_be_read() {
    let h = harness();
    // No rights at all: every kind forbidden, Findings says it cannot diagnose (not "waiting").
    let mut live = Live::start(&h.nobody, None).await;
    assert!(
        live.until(Duration::from_secs(20), |l| l.all(|s| matches!(s, SourceState::Forbidden { .. }))).await,
        "{:?}",
        live.states
    );
    let s = screen(&live.app());
    assert!(s.contains("cannot diagnose") && s.contains("forbidden: list pods"), "{s}");
    assert!(!s.contains("waiting for the first complete list") && !s.contains("no findings"), "{s}");
    drop(live);

    // list+watch on nodes, list (no watch) on pods, nothing else.
    let client = admin(&h).await;
    let role = serde_json::json!({"rules": [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]});
    let grant = Grant::new(&client, "unstick-faults-partial", role).await;
    let t0 = Instant::now();
    let mut live = Live::start(&h.nobody, None).await;
    let settled = live
        .until(Duration::from_secs(20), |l| {
            l.states.get(&WatchedKind::Node) == Some(&SourceState::Live)
                && matches!(
                    l.states.get(&WatchedKind::Pod),
                    Some(SourceState::Forbidden { verb: kube::Verb::Watch, .. })
                )
                && [WatchedKind::Pv, WatchedKind::Pvc, WatchedKind::VolumeAttachment, WatchedKind::Event]
                    .iter()
                    .all(|k| matches!(l.states.get(k), Some(SourceState::Forbidden { verb: kube::Verb::List, .. })))
        })
        .await;
    eprintln!("partial rights: states settled after {:?}: {:?}", t0.elapsed(), live.states);
    assert!(settled, "{:?}", live.states);
    let s = screen(&live.app());
    assert!(s.contains("forbidden: watch pods"), "list without watch names the verb:\n{s}");
    assert!(s.contains("incomplete: could not read") || s.contains("could not be checked"), "{s}");
    assert!(!s.contains("no findings\n") && !s.contains("│no findings"), "{s}");
    drop(live);
    let (code, out, err) = diagnose(&h, &h.nobody, &["--no-ceph"]);
    eprintln!("partial rights: diagnose exit {code}; {}", out.lines().last().unwrap_or(""));
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("incomplete: could not read") && out.contains("persistentvolumes (403 Forbidden)"), "{out}");
    assert!(!out.contains("No findings.\n\nmissing") || out.contains("incomplete"), "{out}");
    let (code, json, _) = diagnose(&h, &h.nobody, &["--no-ceph", "-o", "json"]);
    assert_eq!(code, 3);
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert!(v["incomplete"].as_array().is_some_and(|a| a.len() >= 4), "{json}");
    grant.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn readonly_role_reads_everything_the_console_needs() {
    let h = harness();
    let client = admin(&h).await;
    let grant = Grant::new(&client, "unstick-faults-readonly", yaml_role("deploy/rbac/readonly.yaml")).await;
    let t0 = Instant::now();
    let mut live = Live::start(&h.nobody, None).await;
    let ok = live.until(Duration::from_secs(20), |l| l.all(|s| *s == SourceState::Live)).await;
    eprintln!("read-only role: all kinds Live after {:?}", t0.elapsed());
    assert!(ok, "{:?}", live.states);
    let s = screen(&live.app());
    assert!(!s.contains("forbidden") && !s.contains("incomplete"), "{s}");
    let (code, out, err) = diagnose(&h, &h.nobody, &[]);
    eprintln!("read-only role: diagnose exit {code}");
    assert_eq!(code, 1, "complete, with the seeded findings:\n{out}{err}");
    assert!(out.contains("dead-node-watcher") && !out.contains("incomplete"), "{out}");
    grant.remove().await;
}

/// Reads every image and the blocklist into `app` as the console's Ceph worker would.
async fn feed_ceph(app: &mut App, cli: &ceph::cli::CephCli) -> Duration {
    let t0 = Instant::now();
    for image in app.data.lineage.images() {
        let facts = ceph::read_image(cli, &image).await;
        app.update(Msg::Ceph(CephMsg::Image { image, facts }));
    }
    app.update(Msg::Ceph(CephMsg::Blocklist(ceph::read_blocklist(cli).await)));
    t0.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn ceph_outage_keeps_findings_marked_unverified() {
    let h = harness();
    let mut live = Live::start(&h.admin, None).await;
    assert!(live.until(Duration::from_secs(20), |l| l.all(|s| *s == SourceState::Live)).await);
    let mut app = live.app();
    let cli = h.ceph();
    feed_ceph(&mut app, &cli).await;
    let ids = |app: &App| app.data.findings.iter().map(|f| f.id.clone()).collect::<Vec<_>>();
    let before = ids(&app);
    assert!(before.iter().any(|i| i.starts_with("dead-node-watcher:")), "{before:?}");

    for (what, restart) in [("mon", "mon"), ("osd", "osd")] {
        cluster(&[what, "stop"]);
        let guard = Restart(restart);
        let took = feed_ceph(&mut app, &cli).await;
        eprintln!("{what} down: every Ceph read failed within {took:?}");
        assert!(!app.data.snap.ceph.unverified.is_empty(), "reads failed while {what} was down");
        assert_eq!(ids(&app), before, "{what} down: no finding is cleared from missing data");
        let dead = app.data.findings.iter().find(|f| f.id.starts_with("dead-node-watcher:")).unwrap();
        assert!(!dead.unverified.is_empty(), "{dead:?}");
        app.focus = unstick::ui::app::Pane::Findings;
        let s = screen(&app);
        assert!(s.contains("unverified"), "{s}");
        let (code, out, _) = diagnose(&h, &h.admin, &[]);
        eprintln!("{what} down: diagnose exit {code}");
        assert_eq!(code, 3, "{out}");
        assert!(out.contains("incomplete: could not read") && out.contains("ceph"), "{out}");
        let t0 = Instant::now();
        drop(guard);
        feed_ceph(&mut app, &cli).await;
        eprintln!("{what} back: Ceph re-read {:?} after the start command returned", t0.elapsed());
        assert!(app.data.snap.ceph.unverified.is_empty(), "{:?}", app.data.snap.ceph.unverified);
        assert!(app.data.findings.iter().all(|f| f.unverified.is_empty()));
    }
    // The seeded watchers are librbd processes: after an OSD restart they re-register, so the
    // finding is still there and verified again.
    assert!(ids(&app).iter().any(|i| i.starts_with("dead-node-watcher:")), "{:?}", ids(&app));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn api_server_restarts_are_never_shown_live_while_down() {
    let h = harness();
    let client = admin(&h).await;
    let mut live = Live::start(&h.admin, None).await;
    assert!(live.until(Duration::from_secs(20), |l| l.all(|s| *s == SourceState::Live)).await);
    // three quick restarts, then one long outage (90 s: past the watchers' longest back-off and
    // the client's own retries) during which nothing may turn Live
    for (round, outage) in [(1, 0), (2, 0), (3, 0), (4, 90)] {
        let t0 = Instant::now();
        cluster(&["apiserver", "stop"]);
        let guard = Restart("apiserver");
        let stop_took = t0.elapsed();
        let down = live.until(Duration::from_secs(20), |l| !l.any_live()).await;
        eprintln!(
            "apiserver restart {round}: stop command took {stop_took:?}; no kind Live {:?} after it began",
            t0.elapsed()
        );
        assert!(down, "{:?}", live.states);
        // Stays not-Live while the server is down (a few health periods, or the long outage).
        let relive = live.until(Duration::from_secs(6 + outage), |l| l.any_live()).await;
        assert!(!relive, "a kind turned Live with the API server down: {:?}", live.states);
        if outage > 0 {
            eprintln!("apiserver outage {round}: {:?} down, no kind Live meanwhile", t0.elapsed());
        }
        let s = screen(&live.app());
        assert!(s.contains("stale") && s.contains("127.0.0.1"), "stale with the error naming the server:\n{s}");
        let t1 = Instant::now();
        drop(guard);
        let ready = t1.elapsed();
        let back = live.until(Duration::from_secs(60), |l| l.all(|s| *s == SourceState::Live)).await;
        eprintln!(
            "apiserver restart {round}: start took {ready:?}; all kinds Live {:?} after readyz",
            t1.elapsed() - ready
        );
        assert!(back, "{:?}", live.states);
        // A change after the restart reaches the store.
        let ns = format!("faults-{round}-{}", std::process::id());
        let nsobj: k8s_openapi::api::core::v1::Namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": ns}})).unwrap();
        let _ = Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone())
            .create(&PostParams::default(), &nsobj)
            .await;
        let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), &ns);
        let pod = serde_json::from_value(
            serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}),
        )
        .unwrap();
        let t2 = Instant::now();
        pods.create(&PostParams::default(), &pod).await.expect("create pod after restart");
        let seen = live
            .until(Duration::from_secs(10), |l| {
                l.snapshot().pods.iter().any(|p| p.metadata.namespace.as_deref() == Some(&ns))
            })
            .await;
        eprintln!("apiserver restart {round}: new pod visible after {:?}", t2.elapsed());
        assert!(seen);
        let _ = pods.delete("p", &DeleteParams::default().grace_period(0)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn etcd_outage_is_not_shown_live() {
    let h = harness();
    let mut live = Live::start(&h.admin, None).await;
    assert!(live.until(Duration::from_secs(20), |l| l.all(|s| *s == SourceState::Live)).await);
    let t0 = Instant::now();
    cluster(&["etcd", "stop"]);
    let guard = Restart("etcd");
    let stale = live.until(Duration::from_secs(30), |l| !l.any_live()).await;
    eprintln!("etcd down: no kind Live {:?} after the stop; {:?}", t0.elapsed(), live.states.get(&WatchedKind::Pod));
    assert!(stale, "{:?}", live.states);
    // A console started now shows the error, not "listing…".
    let mut fresh = Live::start(&h.admin, None).await;
    let t1 = Instant::now();
    let shown = fresh.until(Duration::from_secs(20), |l| l.all(|s| matches!(s, SourceState::Error(_)))).await;
    eprintln!("etcd down: a new console shows errors after {:?}", t1.elapsed());
    assert!(shown, "{:?}", fresh.states);
    let s = screen(&fresh.app());
    assert!(!s.contains("listing…") && s.contains("not ready"), "{s}");
    drop(fresh);
    let t2 = Instant::now();
    drop(guard);
    let back = live.until(Duration::from_secs(60), |l| l.all(|s| *s == SourceState::Live)).await;
    eprintln!("etcd back: all kinds Live {:?} after the start command", t2.elapsed());
    assert!(back, "{:?}", live.states);
}

/// A fake API server on 127.0.0.1: `garbage` answers every connection with bytes that are not
/// HTTP; otherwise it accepts and never answers. Returns its kubeconfig.
async fn fake_server(dir: &Path, garbage: bool) -> (PathBuf, String, tokio::task::JoinHandle<()>) {
    use tokio::io::AsyncWriteExt;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let task = tokio::spawn(async move {
        let mut held = vec![];
        while let Ok((mut s, _)) = l.accept().await {
            if garbage {
                let _ = s.write_all(b"\xff\xfe\xfd not http at all\r\n\r\n").await;
            }
            held.push(s);
            held.truncate(64);
        }
    });
    let kc = dir.join(format!("fake-{}.kubeconfig", if garbage { "garbage" } else { "blackhole" }));
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: f\n  cluster:\n    server: http://{addr}\nusers:\n- name: u\n  user: {{}}\ncontexts:\n- name: f\n  context:\n    cluster: f\n    user: u\ncurrent-context: f\n"
        ),
    )
    .unwrap();
    (kc, addr, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn blackholed_and_garbage_api_servers_fail_with_named_errors() {
    let h = harness();
    let dir = tempfile::tempdir().unwrap();
    for garbage in [false, true] {
        let (kc, addr, task) = fake_server(dir.path(), garbage).await;
        let t0 = Instant::now();
        let mut live = Live::start(&kc, None).await;
        let failed = live.until(Duration::from_secs(25), |l| l.all(|s| matches!(s, SourceState::Error(_)))).await;
        let name = if garbage { "garbage-speaking" } else { "blackholed" };
        eprintln!("{name} API server: every kind in error after {:?}", t0.elapsed());
        assert!(failed, "{:?}", live.states);
        let SourceState::Error(e) = &live.states[&WatchedKind::Pod] else { unreachable!() };
        // The kind's own list error, or the /readyz check's (whichever failed first): both name
        // the server and the request.
        assert!(
            e.contains(&addr) && (e.contains("list pods") || e.contains("/readyz")),
            "the error names the server and the request: {e}"
        );
        let s = screen(&live.app());
        assert!(!s.contains("listing…") && !s.contains("no findings"), "{s}");
        drop(live);
        let t1 = Instant::now();
        let (code, out, err) = diagnose(&h, &kc, &["--no-ceph"]);
        eprintln!("{name} API server: diagnose exit {code} after {:?}: {}", t1.elapsed(), err.trim());
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains(&addr), "{err}");
        task.abort();
    }
}
