//! Shared by the integration tests that use the real harness (`tests/harness/cluster`).
//!
//! [`harness`] serialises tests: a mutex within one test binary, and an exclusive lock on
//! `$UNSTICK_HARNESS_DIR/.test-lock` across binaries run at the same time.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

static LOCK: Mutex<()> = Mutex::new(());

/// The harness's environment (from `eval "$(tests/harness/cluster env)"`), held exclusively.
pub struct Harness {
    _guard: MutexGuard<'static, ()>,
    _file_lock: std::fs::File,
    /// Admin kubeconfig (system:masters).
    pub admin: PathBuf,
    /// kubeconfig of user `nobody` (no RBAC rights).
    pub nobody: PathBuf,
    /// ceph.conf of the harness cluster.
    pub ceph_conf: PathBuf,
    /// kube-apiserver audit log (JSON lines).
    pub audit_log: PathBuf,
    /// `$UNSTICK_HARNESS_DIR` (run/*.pid, seed.json).
    pub state_dir: PathBuf,
}

/// Takes the harness for one test. Panics with a how-to when its environment is missing.
///
/// Every test that calls this carries `#[ignore = "needs the harness: tests/run-all ..."]`, so a
/// plain `cargo test` reports it ignored (not passed); `tests/run-all` brings the harness up and
/// runs the ignored tests too (`--include-ignored`). By hand: `tests/harness/cluster up && tests/harness/cluster
/// seed && eval "$(tests/harness/cluster env)"`, then `cargo test --test NAME -- --ignored`.
/// `tests/shape.rs` checks that no such test lacks the attribute.
pub fn harness() -> Harness {
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let var = |k: &str| {
        std::env::var_os(k).map(PathBuf::from).unwrap_or_else(|| {
            panic!("{k} is not set: run `tests/run-all`, or `tests/harness/cluster up && tests/harness/cluster seed && eval \"$(tests/harness/cluster env)\"` first")
        })
    };
    let state_dir = var("UNSTICK_HARNESS_DIR");
    let file_lock = std::fs::File::create(state_dir.join(".test-lock")).expect("create the harness test lock");
    file_lock.lock().expect("lock the harness test lock");
    Harness {
        _guard: guard,
        _file_lock: file_lock,
        admin: var("KUBECONFIG"),
        nobody: var("UNSTICK_NOBODY_KUBECONFIG"),
        ceph_conf: var("CEPH_CONF"),
        audit_log: var("UNSTICK_AUDIT_LOG"),
        state_dir,
    }
}

/// The address every host-side Ceph client connects from (the harness bridge,
/// `UNSTICK_HARNESS_HOST_IP`; 127.0.0.1 for an older harness).
pub fn host_ip() -> String {
    std::env::var("UNSTICK_HARNESS_HOST_IP").unwrap_or_else(|_| "127.0.0.1".into())
}

/// Runs `tests/harness/cluster ARGS...` and asserts it succeeded.
pub fn cluster(args: &[&str]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/harness/cluster");
    let st = std::process::Command::new(script).args(args).status().expect("run tests/harness/cluster");
    assert!(st.success(), "tests/harness/cluster {args:?} failed: {st}");
}
/// Whether the harness runs the control plane `want` (`"1.20"` or `"current"`), as `cluster env`
/// exports it in `UNSTICK_HARNESS_KUBE`; when not, prints `TEST: skipped: needs --kube WANT …` so
/// the run says so (cargo counts the test as passed). Tests that need 1.20 end their names in
/// `on_1_20`: `tests/run-all` runs them on its 1.20 harness and the rest on the current one.
pub fn on_kube(test: &str, want: &str) -> bool {
    let kube = std::env::var("UNSTICK_HARNESS_KUBE").unwrap_or_default();
    if kube != want {
        eprintln!(
            "{test}: skipped: needs --kube {want} (the harness runs {}); `tests/harness/cluster up --kube {want}`",
            if kube.is_empty() { "an unknown version" } else { kube.as_str() }
        );
        return false;
    }
    true
}

pub mod console;
pub mod live;
pub mod parity;
pub mod remedy;
pub mod train;

/// Writes `src` (a kubeconfig) to `dst` with every cluster, user and context name suffixed `-2`:
/// a second context beside the first when both files are merged (two harnesses name theirs
/// alike, and merged, the first file's entry would win).
pub fn renamed_kubeconfig(src: &std::path::Path, dst: &std::path::Path) {
    let text = std::fs::read_to_string(src).expect("read the kubeconfig");
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            let t = l.trim_start();
            let renames = ["- name: ", "name: ", "cluster: ", "user: ", "current-context: "];
            if renames.iter().any(|p| t.starts_with(p) && !t.ends_with(':')) { format!("{l}-2") } else { l.to_string() }
        })
        .collect();
    std::fs::write(dst, out.join("\n") + "\n").expect("write the renamed kubeconfig");
}
