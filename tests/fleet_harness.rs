//! `unstick diagnose --all-contexts` against the REAL harness: the admin context diagnosed (the
//! default seed's findings), the `nobody` context (every request 403) and an unreachable one as
//! rows saying so; the run exits 4, the worst row's, within the per-context bound. With a second
//! harness started beside the first (`UNSTICK_HARNESS_PORT_OFFSET=N`, its own
//! `UNSTICK_HARNESS_DIR`; its admin kubeconfig in `UNSTICK_HARNESS2_KUBECONFIG`), its admin context
//! is a fourth row, diagnosed too.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::cluster;

#[test]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
fn a_fleet_of_real_forbidden_and_unreachable_contexts() {
    let h = common::harness();
    cluster(&["seed", "default"]);
    let dir = tempfile::tempdir().unwrap();
    let down = dir.path().join("down.yaml");
    std::fs::write(
        &down,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: down\n  cluster:\n    server: https://127.0.0.1:1\nusers:\n- name: down\n  user:\n    token: t\ncontexts:\n- name: down\n  context:\n    cluster: down\n    user: down\ncurrent-context: down\n",
    )
    .unwrap();
    let mut files = vec![h.admin.clone(), h.nobody.clone(), down];
    let second = std::env::var_os("UNSTICK_HARNESS2_KUBECONFIG").map(|p| {
        let dst = dir.path().join("second.yaml");
        common::renamed_kubeconfig(Path::new(&p), &dst);
        dst
    });
    files.extend(second.clone());
    let joined = std::env::join_paths(&files).unwrap();
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_unstick"))
        .args(["diagnose", "--all-contexts", "-o", "json", "--context-timeout", "90s"])
        .args(["--ceph-conf", h.ceph_conf.to_str().unwrap()])
        .env("KUBECONFIG", joined)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(took < Duration::from_secs(100), "took {took:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["contexts"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["context"].as_str().unwrap()).collect();
    let mut want = vec!["unstick-harness-admin", "unstick-harness-nobody", "down"];
    if second.is_some() {
        want.push("unstick-harness-admin-2");
    }
    assert_eq!(names, want);

    let admin = &rows[0];
    assert_eq!(admin["status"], "diagnosed", "{admin}");
    assert_eq!(admin["exit_code"], 1, "the default seed's findings, complete: {admin}");
    assert!(admin["finding_ids"].as_array().unwrap().len() >= 5, "the five seed incidents: {admin}");
    assert!(admin["findings"]["critical"].as_u64().unwrap() > 0, "{admin}");
    assert!(admin["stuck_pods"].as_u64().unwrap() > 0, "{admin}");
    assert!(admin["finding_ids"].as_array().unwrap().iter().any(|i| i.as_str().unwrap().starts_with("stale-lock:")));

    let nobody = &rows[1];
    assert_eq!((nobody["status"].as_str(), nobody["exit_code"].as_u64()), (Some("error"), Some(4)), "{nobody}");
    assert!(nobody["error"].as_str().unwrap().contains("403 Forbidden"), "{nobody}");
    let down = &rows[2];
    assert_eq!(down["status"], "error", "{down}");
    assert!(down["error"].as_str().unwrap().contains("Connection refused"), "{down}");
    if second.is_some() {
        assert_eq!(rows[3]["status"], "diagnosed", "{}", rows[3]);
    }
}
