//! Issue 28: `:ctx NAME` switches the context inside the running console, and quitting releases
//! the Lease, on the REAL harness. The debug binary runs in a tmux pane (a real terminal) with a
//! merged `KUBECONFIG`: the harness admin file and a copy of it whose names end in `-2` (a second
//! context to the same API server: one harness, so both contexts see the same cluster; what
//! proves the switch is the status bar, the findings read again through the new context's
//! watches after the panes were emptied, and the Lease and the session log).
//!
//! The console starts on `…-admin-2` with `--fleet` (the fleet view first; Esc closes it), opens the stale-lock playbook (the volume's Lease is then
//! held, read from the API server), switches with `:ctx unstick-harness-admin`: the Lease is
//! gone, the status bar names the new context, the stale-lock finding is back. Its playbook
//! again (Lease held), then `q`: the Lease is gone within a bound. Between the two, `:fleet`
//! lists the contexts diagnosed and Enter on the other one switches back in place; `:ctx` to a
//! context whose exec plugin fails leaves the console on the context it was on, saying why. The session log has the
//! `context-switch` record and `unstick export` shows it. Every wait polls with a deadline.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, DeleteParams, ListParams};

const BOUND: Duration = Duration::from_secs(90);

/// A tmux server of its own (socket in the test's directory) running one pane.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&self.socket);
        c
    }

    fn keys(&self, literal: Option<&str>, key: Option<&str>) {
        if let Some(text) = literal {
            assert!(self.cmd().args(["send-keys", "-t", "u", "-l", text]).status().unwrap().success());
        }
        if let Some(k) = key {
            assert!(self.cmd().args(["send-keys", "-t", "u", k]).status().unwrap().success());
        }
    }

    fn screen(&self) -> String {
        let out = self.cmd().args(["capture-pane", "-p", "-t", "u"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits (bounded) until the screen holds `what`.
    fn wait_screen(&self, what: &str) {
        let t0 = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(what) {
                return;
            }
            assert!(t0.elapsed() < BOUND, "timed out waiting for {what:?} on the screen:\n{s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn alive(&self) -> bool {
        let mut c = self.cmd();
        c.args(["has-session", "-t", "u"]).stderr(std::process::Stdio::null());
        c.status().is_ok_and(|s| s.success())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").stderr(std::process::Stdio::null()).status();
    }
}

/// The holders of the unstick Leases in `kube-system` (name, holder), empty holders left out.
async fn held(api: &Api<Lease>) -> Vec<(String, String)> {
    let list = api.list(&ListParams::default()).await.unwrap();
    list.items
        .into_iter()
        .filter(|l| l.metadata.name.as_deref().is_some_and(|n| n.starts_with("unstick-")))
        .filter_map(|l| {
            let holder = l.spec.and_then(|s| s.holder_identity).filter(|h| !h.is_empty())?;
            Some((l.metadata.name.unwrap_or_default(), holder))
        })
        .collect()
}

/// Polls the Leases until `want(held)` holds; returns how long it took.
async fn wait_leases(api: &Api<Lease>, what: &str, want: impl Fn(&[(String, String)]) -> bool) -> Duration {
    let t0 = Instant::now();
    loop {
        let h = held(api).await;
        if want(&h) {
            return t0.elapsed();
        }
        assert!(t0.elapsed() < BOUND, "timed out waiting for {what}: {h:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Opens the stale-lock finding's playbook: filter the Findings pane, `p`.
fn open_stale_lock(t: &Tmux) {
    t.wait_screen("stale-lock");
    t.keys(Some("/stale-lock"), Some("Enter"));
    t.keys(Some("p"), None);
    t.wait_screen("Lease held");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn ctx_switches_in_place_and_quit_releases_the_lease() {
    let h = common::harness();
    common::cluster(&["seed", "default"]);
    let dir = tempfile::tempdir().unwrap();
    let second = dir.path().join("second.yaml");
    common::renamed_kubeconfig(&h.admin, &second);
    // a third context whose credentials cannot be had: its exec plugin fails
    let broken = dir.path().join("broken.yaml");
    std::fs::write(
        &broken,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: broken\n  cluster:\n    server: https://127.0.0.1:1\nusers:\n- name: broken\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: /bin/false\n      interactiveMode: Never\ncontexts:\n- name: broken\n  context:\n    cluster: broken\n    user: broken\n",
    )
    .unwrap();
    let kubeconfig = std::env::join_paths([&h.admin, &second, &broken]).unwrap();
    let client = unstick_core::sources::kube::client(Some(&h.admin), None).await.unwrap().0;
    let leases: Api<Lease> = Api::namespaced(client, "kube-system");
    // an earlier run's Lease (a test stopped midway) would stand for ours
    for (name, _) in held(&leases).await {
        let _ = leases.delete(&name, &DeleteParams::default()).await;
    }

    let bin = std::env::var("UNSTICK_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_unstick").to_string());
    let t = Tmux { socket: dir.path().join("tmux.sock") };
    let started = t
        .cmd()
        .args(["new-session", "-d", "-s", "u", "-x", "160", "-y", "45"])
        .arg(&bin)
        .args(["--fleet", "--context", "unstick-harness-admin-2", "--ceph-conf"])
        .arg(&h.ceph_conf)
        .env("KUBECONFIG", &kubeconfig)
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("TERM", "xterm-256color")
        .status()
        .unwrap();
    assert!(started.success());
    // `--fleet`: the console opens on the fleet view; Esc leaves it on the context it started on
    t.wait_screen("fleet: 3 contexts");
    t.keys(None, Some("Escape"));
    t.wait_screen("unstick-harness-admin-2");

    // a Lease held on the first context
    open_stale_lock(&t);
    wait_leases(&leases, "the Lease of the first context's run", |h| h.len() == 1).await;
    let first_holder = held(&leases).await[0].1.clone();

    // the switch, from the Playbook view: the old context's Lease released, the panes refilled
    t.keys(Some(":ctx unstick-harness-admin"), Some("Enter"));
    let took = wait_leases(&leases, "the Lease released by the switch", |h| h.is_empty()).await;
    eprintln!("Lease released {took:?} after the :ctx switch was typed");
    assert!(took < Duration::from_secs(30), "released after {took:?}");
    t.wait_screen("context unstick-harness-admin: reading it");
    let screen = t.screen();
    let header = screen.lines().next().unwrap_or_default();
    assert!(header.contains("ctx unstick-harness-admin │"), "the header names the new context:\n{screen}");
    assert!(t.alive(), "the same process runs on (no re-exec ends the pane)");

    // the new context's data, through its own watches
    t.wait_screen("stale-lock");

    // the fleet view: both contexts diagnosed (the default seed's findings), Enter on the other
    // one switches back in place
    t.keys(Some(":fleet"), Some("Enter"));
    t.wait_screen("fleet: 3 contexts");
    let screen = t.screen();
    assert!(screen.contains("*unstick-harness-admin "), "the current context is marked:\n{screen}");
    assert_eq!(screen.matches(" findings ").count(), 2, "both harness contexts have findings:\n{screen}");
    assert!(screen.contains("broken") && screen.contains(" error "), "the broken context is a row:\n{screen}");
    t.keys(Some("j"), Some("Enter"));
    t.wait_screen("ctx unstick-harness-admin-2 │");

    // a context that cannot be started: the console stays on the one it was on, saying why
    t.keys(Some(":ctx broken"), Some("Enter"));
    t.wait_screen("cannot switch to broken");
    let screen = t.screen();
    assert!(screen.lines().next().unwrap_or_default().contains("ctx unstick-harness-admin-2 │"), "{screen}");

    // a Lease held on it, then quit
    open_stale_lock(&t);
    wait_leases(&leases, "the Lease of the second context's run", |h| h.len() == 1).await;
    // with the playbook open, q asks first (y quits)
    t.keys(Some("q"), None);
    t.wait_screen("y quit · n/Esc stay");
    t.keys(Some("y"), None);
    let took = wait_leases(&leases, "the Lease released on quit", |h| h.is_empty()).await;
    eprintln!("Lease released {took:?} after q");
    assert!(took < Duration::from_secs(30), "released after {took:?}");
    let t0 = Instant::now();
    while t.alive() {
        assert!(t0.elapsed() < BOUND, "the console did not end:\n{}", t.screen());
        std::thread::sleep(Duration::from_millis(100));
    }

    // the session log: one session, the switch recorded between the two contexts' findings
    let sessions = dir.path().join("state/unstick/sessions");
    let logs: Vec<PathBuf> = std::fs::read_dir(&sessions).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let text = std::fs::read_to_string(&logs[0]).unwrap();
    let records: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let names: Vec<&str> = records.iter().map(|r| r["event"].as_str().unwrap()).collect();
    let switch = names.iter().position(|n| *n == "context-switch").unwrap_or_else(|| panic!("{names:?}"));
    assert_eq!(records[switch]["from"], "unstick-harness-admin-2");
    assert_eq!(records[switch]["to"], "unstick-harness-admin");
    let back =
        switch + 1 + names[switch + 1..].iter().position(|n| *n == "context-switch").expect("the fleet's switch");
    assert_eq!(
        (&records[back]["from"], &records[back]["to"]),
        (&"unstick-harness-admin".into(), &"unstick-harness-admin-2".into())
    );
    assert!(
        names[..switch].contains(&"finding-appeared") && names[switch..].contains(&"finding-appeared"),
        "{names:?}"
    );
    assert_eq!(names.last(), Some(&"end"), "{names:?}");
    let export = Command::new(&bin)
        .args(["export", "--format", "md"])
        .arg(&logs[0])
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&export.stdout);
    assert!(
        md.contains("Context switched: unstick-harness-admin-2 → unstick-harness-admin"),
        "{}\n{md}",
        String::from_utf8_lossy(&export.stderr)
    );
    assert!(!first_holder.is_empty());
}
