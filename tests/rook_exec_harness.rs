//! Rook mode against the REAL harness (issue 27): `unstick diagnose --rook-namespace rook-ceph`
//! runs every `rbd` / `ceph` through the real kube-apiserver's `pods/exec`, which the node agent
//! serves as the kubelet does (tests/harness/kubelet_exec.py), and finds what local access finds:
//! once with the toolbox pod, once with only the operator pod (`--conf`/`--keyring` under
//! `/var/lib/rook/rook-ceph/`). A failing command's exit code and stderr come back through the
//! exec API's error channel; with neither pod the one-line error says so.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

mod common;

use std::collections::BTreeSet;
use std::process::{Command, Output};

use common::{Harness, cluster};
use unstick_core::config::Config;
use unstick_core::model::ceph_error::{CephError, RookError};
use unstick_core::sources::ceph::cli::{Access, CephCli, Tool};

/// The live tests' attribution (the harness's storage-address annotation) and short graces.
const CONFIG: &str = "[diagnose]\nnode_address_annotation = \"unstick.test/storage-addresses\"\n\
                      node_lost_grace_seconds = 5\nterminating_grace_seconds = 5\n";

fn unstick(h: &Harness, args: &[&str]) -> Output {
    let config = h.state_dir.join("rook-exec-test.toml");
    std::fs::write(&config, CONFIG).unwrap();
    Command::new(env!("CARGO_BIN_EXE_unstick"))
        .args(args)
        .args(["--kubeconfig", h.admin.to_str().unwrap(), "--config", config.to_str().unwrap()])
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .expect("run unstick")
}

/// `diagnose -o json` with `access` (`--ceph-conf F` or `--rook-namespace rook-ceph`).
fn diagnose(h: &Harness, access: &[&str]) -> serde_json::Value {
    let mut args = vec!["diagnose", "--output", "json"];
    args.extend_from_slice(access);
    let out = unstick(h, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "findings expected ({access:?}); stderr: {stderr}");
    serde_json::from_slice(&out.stdout).expect("diagnose prints JSON")
}

/// The findings as (pattern, id) pairs: what must not depend on where `rbd` ran.
fn findings(v: &serde_json::Value) -> BTreeSet<(String, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["pattern"].as_str().unwrap().to_string(), f["id"].as_str().unwrap().to_string()))
        .collect()
}

/// Every line the node agents wrote to RUN/kubelet-exec-*.log (requests and their results).
fn exec_log(h: &Harness) -> Vec<serde_json::Value> {
    let mut out = vec![];
    for e in std::fs::read_dir(h.state_dir.join("run")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with("kubelet-exec-") {
            let text = std::fs::read_to_string(e.path()).unwrap();
            out.extend(text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()));
        }
    }
    out
}

fn rook_cli(client: kube::Client) -> CephCli {
    let access = Access::Rook { namespace: "rook-ceph".into(), selector: "app=rook-ceph-tools".into() };
    CephCli::new(access, Config::defaults().ceph, Some(client))
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn rook_toolbox_and_operator_find_what_local_access_finds() {
    let h = common::harness();
    cluster(&["incident", "002"]);
    let local_access = ["--ceph-conf", h.ceph_conf.to_str().unwrap()];
    // the node lifecycle takes its time (lease, eviction, Multi-Attach): wait for both findings
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    let patterns = |v: &serde_json::Value| findings(v).into_iter().map(|(p, _)| p).collect::<BTreeSet<_>>();
    let mut local = diagnose(&h, &local_access);
    while !(patterns(&local).contains("dead-node-watcher") && patterns(&local).contains("multi-attach-node-lost")) {
        assert!(std::time::Instant::now() < deadline, "002 never showed both findings: {:?}", findings(&local));
        tokio::time::sleep(std::time::Duration::from_secs(3)).await;
        local = diagnose(&h, &local_access);
    }
    assert_eq!(local["missing"].as_array().map(Vec::len), Some(0), "{}", local["missing"]);

    for (which, pod) in
        [("toolbox", "rook-ceph-tools-5f7b9c6d4-x2x7q"), ("operator", "rook-ceph-operator-6d8f7b5c9-k4m2p")]
    {
        cluster(&["rook", which]);
        let t0 = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
        let rook = diagnose(&h, &["--rook-namespace", "rook-ceph"]);
        assert_eq!(rook["missing"].as_array().map(Vec::len), Some(0), "{which}: {}", rook["missing"]);
        // the same as local access just before or just after (the incident may still move)
        let after = diagnose(&h, &local_access);
        assert!(
            findings(&rook) == findings(&local) || findings(&rook) == findings(&after),
            "{which}: {:?} vs {:?}",
            findings(&rook),
            findings(&after)
        );
        local = after;
        // every Ceph read went through the API server into that pod's node agent
        let log = exec_log(&h);
        let calls: Vec<&serde_json::Value> =
            log.iter().filter(|e| e["method"].is_string() && e["time"].as_f64() >= Some(t0)).collect();
        assert!(!calls.is_empty(), "{which}: no exec reached a node agent");
        for c in &calls {
            assert!(c["path"].as_str().unwrap().starts_with(&format!("/exec/rook-ceph/{pod}/")), "{which}: {c}");
            assert_eq!(c["client_cn"], "kube-apiserver-kubelet-client", "{c}");
            let argv: Vec<&str> =
                c["query"]["command"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
            let conf = argv.contains(&"--conf=/var/lib/rook/rook-ceph/rook-ceph.config")
                && argv.contains(&"--keyring=/var/lib/rook/rook-ceph/client.admin.keyring");
            assert_eq!(conf, which == "operator", "{which}: {argv:?}");
        }
        let answers: BTreeSet<&str> = calls.iter().filter_map(|c| c["answer"].as_str()).collect();
        eprintln!("{which}: {} exec calls, answered {answers:?}, protocols {:?}", calls.len(), {
            calls.iter().filter_map(|c| c["protocol"].as_str()).collect::<BTreeSet<_>>()
        });
    }
    cluster(&["rook", "none"]);
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn a_failing_command_reaches_the_console_with_its_exit_code_and_stderr() {
    let h = common::harness();
    // the Rook pod runs on a live node whose agent serves exec: a live incident starts them (after
    // a static reseed none runs)
    cluster(&["incident", "004"]);
    cluster(&["rook", "toolbox"]);
    let client = unstick_core::sources::kube::client(Some(&h.admin), None).await.expect("admin client").0;
    let cli = rook_cli(client.clone());
    let e = cli.run(Tool::Rbd, &["info", "replicapool/no-such-image-27"]).await.unwrap_err();
    match &e {
        CephError::Exit { code, stderr, .. } => {
            assert_eq!(*code, 2, "{e}");
            assert!(stderr.contains("No such file or directory"), "{e}");
        }
        other => panic!("expected an exit error, got {other}"),
    }
    assert_eq!(cli.via().as_deref(), Some("rook toolbox rook-ceph/rook-ceph-tools-5f7b9c6d4-x2x7q"));

    // the toolbox goes: the same session moves to the operator pod
    cluster(&["rook", "operator"]);
    let out = cli.run(Tool::Ceph, &["osd", "blocklist", "ls"]).await.expect("blocklist through the operator pod");
    assert!(out.stdout.trim_start().starts_with('['), "{}", out.stdout);
    assert_eq!(cli.via().as_deref(), Some("rook operator rook-ceph/rook-ceph-operator-6d8f7b5c9-k4m2p"));

    // neither: one typed line
    cluster(&["rook", "none"]);
    let e = rook_cli(client).run(Tool::Ceph, &["osd", "blocklist", "ls"]).await.unwrap_err();
    assert!(matches!(&e, CephError::Rook { error, .. } if matches!(**error, RookError::NoPod { .. })), "{e}");
    assert!(!e.to_string().contains('\n'), "{e}");
}
