//! `kubectl unstick` with the real kubectl against the REAL harness: the built binary, on PATH as
//! `kubectl-unstick` (what krew's link or a copy gives), is found by `kubectl plugin list`, and
//! `kubectl unstick diagnose -o json` reads the harness cluster (kubectl passes the plugin its
//! arguments and environment: `KUBECONFIG` from `tests/harness/cluster env`).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

mod common;

use std::process::{Command, Output, Stdio};

/// `kubectl ARGS` with `dir` first on PATH.
fn kubectl(dir: &std::path::Path, args: &[&str]) -> Output {
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    Command::new("kubectl")
        .args(args)
        .env("PATH", path)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .stdin(Stdio::null())
        .output()
        .expect("kubectl runs (the harness machine has it on PATH)")
}

#[test]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
fn kubectl_finds_the_plugin_and_runs_diagnose_against_the_harness() {
    let h = common::harness();
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("kubectl-unstick");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_unstick"), &plugin).unwrap();

    let list = kubectl(dir.path(), &["plugin", "list"]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(text.lines().any(|l| l.trim() == plugin.to_str().unwrap()), "plugin list: {text}");

    let help = kubectl(dir.path(), &["unstick", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: kubectl unstick"));

    let out = Command::new("kubectl")
        .args(["unstick", "diagnose", "-o", "json", "--ceph-conf", h.ceph_conf.to_str().unwrap()])
        .env("PATH", format!("{}:{}", dir.path().display(), std::env::var("PATH").unwrap_or_default()))
        .env("KUBECONFIG", &h.admin)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // 0 no findings, 1 findings: both a complete read of the harness (3 would be incomplete)
    assert!(matches!(out.status.code(), Some(0 | 1)), "exit {:?}: {stderr}", out.status.code());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("diagnose prints JSON");
    assert!(v["input"].as_str().unwrap().starts_with("live "), "{}", v["input"]);
    assert!(v["findings"].is_array());
    assert_eq!(v["missing"].as_array().map(Vec::len), Some(0), "{}", v["missing"]);
}
