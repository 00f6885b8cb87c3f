//! Playbooks proven end to end on incidents made by the REAL controllers (kube-controller-manager,
//! kube-scheduler) and the harness's node agents (`tests/harness/cluster incident NAME`, SEED.md
//! "Live incidents"): the diagnosis finds the pattern in what they produced, the playbook runs
//! through the console's keys (backup, confirmation, live re-check) against a real remediation
//! worker, and afterwards the finding is gone, the workload runs again on a Ready node with its
//! volume, and the marker written through librbd before the incident reads back the same.
//! The harness is reseeded `default` (static, controllers stopped) afterwards.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams};
use unstick::config::Config;
use unstick::diagnose::PatternId;
use unstick::remedy::journal::{self, StepStatus};
use unstick::remedy::playbook::StepKind;

mod common;

use common::console::{ceph, findings, setup};
use common::remedy::Reseed;

fn live_json(h: &common::Harness) -> serde_json::Value {
    let text = std::fs::read_to_string(h.state_dir.join("live.json")).expect("live.json after an incident");
    serde_json::from_str(&text).expect("live.json is JSON")
}

fn s<'a>(v: &'a serde_json::Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_else(|| panic!("live.json has no {k}: {v}"))
}

/// The diagnosis clocks shortened like the harness's (node monitor grace 16 s).
fn config() -> Config {
    let mut cfg = Config::defaults();
    cfg.ceph.scan_on_start = false;
    cfg.diagnose.node_lost_grace_seconds = 5;
    cfg.diagnose.terminating_grace_seconds = 5;
    cfg.remedy.wait_poll_seconds = 1;
    cfg.remedy.wait_timeout_seconds = 120;
    cfg
}

/// Waits (bounded) until a pod of `app` runs Ready on a Ready node; returns that node.
async fn wait_running(h: &common::Harness, ns: &str, app: &str) -> String {
    let client = h.client().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let nodes: Api<Node> = Api::all(client);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        for p in pods.list(&ListParams::default().labels(&format!("app={app}"))).await.unwrap() {
            let st = p.status.clone().unwrap_or_default();
            let ready = st.container_statuses.iter().flatten().all(|c| c.ready);
            let node = p.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
            if st.phase.as_deref() == Some("Running") && ready && p.metadata.deletion_timestamp.is_none() {
                let n = nodes.get(&node).await.unwrap();
                let node_ready = n
                    .status
                    .and_then(|s| s.conditions)
                    .into_iter()
                    .flatten()
                    .any(|c| c.type_ == "Ready" && c.status == "True");
                if node_ready {
                    return node;
                }
            }
        }
        assert!(Instant::now() < deadline, "no Running pod of {ns}/{app} on a Ready node after 120 s");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn marker(incident: &str) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/harness/cluster");
    let out = std::process::Command::new(script).args(["marker", incident]).output().expect("cluster marker");
    assert!(out.status.success(), "cluster marker {incident}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// 001: a node powered off under a CSI Deployment. The real attach-detach controller reports
/// Multi-Attach for the replacement pod; the 1.20 playbook force-deletes the old pod, releases
/// the lost node's volumesInUse entry and waits for the controller to release the attachment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_001_multi_attach_released_with_the_real_attach_detach_controller() {
    let Some(h) = common::harness() else { return };
    let _reseed = Reseed;
    let t0 = Instant::now();
    common::cluster(&["incident", "001"]);
    eprintln!("incident 001 made in {:?}", t0.elapsed());
    let live = live_json(&h);
    let cfg = config();
    let dir = tempfile::tempdir().unwrap();
    let mut d = setup(&h, dir.path(), &cfg, |f| {
        f.pattern == PatternId::MultiAttachNodeLost && f.volume.as_deref() == Some(s(&live, "pv"))
    })
    .await;
    d.key(KeyCode::Char('p')).await;
    let pb = d.app.remedy.playbook.as_ref().expect("playbook open");
    let acts: Vec<String> = pb
        .playbook
        .steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::Act(a) => Some(a.summary()),
            _ => None,
        })
        .collect();
    assert_eq!(acts.len(), 2, "{acts:?}");
    assert!(acts[0].starts_with(&format!("force-delete (grace 0) pod live-001/{}", s(&live, "old_pod"))), "{acts:?}");
    assert!(acts[1].contains(&format!("from node {} status.volumesInUse", s(&live, "old_node"))), "{acts:?}");
    let took = d.run_all().await;
    eprintln!("001 steps: {took:?}");
    let r = d.app.remedy.playbook.as_ref().unwrap().runner.clone().unwrap();
    d.key(KeyCode::Esc).await;
    let rep = journal::read(&r.journal).unwrap();
    assert!(rep.problems.is_empty(), "{:?}", rep.problems);
    assert!(rep.steps().iter().all(|s| s.status == StepStatus::Done), "{:?}", rep.steps());
    assert!(!rep.backups().is_empty(), "backup journaled");

    let t1 = Instant::now();
    let node = wait_running(&h, "live-001", s(&live, "app")).await;
    eprintln!("001: Running again on {node} {:?} after the playbook", t1.elapsed());
    assert_ne!(node, s(&live, "old_node"));
    let f = findings(&h, &cfg).await;
    assert!(!f.iter().any(|f| f.volume.as_deref() == Some(s(&live, "pv"))), "no finding left on the volume: {f:#?}");
    assert_eq!(marker("001"), s(&live, "marker"), "the data written before the incident reads back");
}

/// 000: an in-tree RBD Deployment drained off its node, whose kubelet died after the unmap and
/// before the unlock. The new node's agent reports "is locked by other nodes"; the stale-lock
/// playbook removes the lock (taken at the old node's own address), and the pod mounts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_000_stale_lock_removed_and_the_pod_mounts() {
    let Some(h) = common::harness() else { return };
    let _reseed = Reseed;
    let t0 = Instant::now();
    common::cluster(&["incident", "000"]);
    eprintln!("incident 000 made in {:?}", t0.elapsed());
    let live = live_json(&h);
    let cfg = config();
    // the old pod stays Terminating on the dead node (deletionTimestamp = delete + 30 s grace); it
    // stops counting as holding the volume once overdue, then the lock is stale
    let deadline = Instant::now() + Duration::from_secs(120);
    while !findings(&h, &cfg).await.iter().any(|f| f.pattern == PatternId::StaleLock) {
        assert!(Instant::now() < deadline, "no stale-lock finding 120 s after incident 000");
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    eprintln!("000: stale-lock found {:?} after the incident began", t0.elapsed());
    let dir = tempfile::tempdir().unwrap();
    let mut d = setup(&h, dir.path(), &cfg, |f| {
        f.pattern == PatternId::StaleLock && f.volume.as_deref() == Some(s(&live, "pv"))
    })
    .await;
    d.key(KeyCode::Char('p')).await;
    let pb = d.app.remedy.playbook.as_ref().expect("playbook open");
    let acts: Vec<String> = pb
        .playbook
        .steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::Act(a) => Some(a.summary()),
            _ => None,
        })
        .collect();
    let lock = format!("kubelet_lock_magic_{}", s(&live, "old_node"));
    assert!(acts[0].contains(&format!("lock rm replicapool/{} {lock}", s(&live, "image"))), "{acts:?}");
    let took = d.run_all().await;
    eprintln!("000 steps: {took:?}");
    d.key(KeyCode::Esc).await;

    let node = wait_running(&h, "live-000", s(&live, "app")).await;
    assert_ne!(node, s(&live, "old_node"));
    let f = findings(&h, &cfg).await;
    assert!(!f.iter().any(|f| f.pattern == PatternId::StaleLock), "stale-lock gone: {f:#?}");
    // the lock now is the new node's own, taken from its own address
    let locks = ceph(&h)
        .run(unstick::sources::ceph::cli::Tool::Rbd, &["lock", "ls", &format!("replicapool/{}", s(&live, "image"))])
        .await
        .unwrap();
    assert!(locks.stdout.contains(&format!("kubelet_lock_magic_{node}")), "{}", locks.stdout);
    assert_eq!(marker("000"), s(&live, "marker"), "the data written before the incident reads back");
}
