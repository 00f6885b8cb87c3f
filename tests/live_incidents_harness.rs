//! Playbooks proven end to end on incidents made by the REAL controllers (kube-controller-manager,
//! kube-scheduler) and the harness's node agents (`tests/harness/cluster incident NAME`, SEED.md
//! "Live incidents"): the diagnosis finds the pattern in what they produced, the playbook runs
//! through the console's keys (backup, confirmation, live re-check) against a real remediation
//! worker, and afterwards the finding is gone, the workload runs again on a Ready node with its
//! volume, and the marker written through librbd before the incident reads back the same.
//! Before its playbook, each test also compares the incident with its training scenario
//! (`tests/common/parity.rs`).
//! The harness is reseeded `default` (static, controllers stopped) afterwards. More incidents:
//! `tests/live_incidents_more_harness.rs`; shared helpers: `tests/common/live.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::time::Instant;

use crossterm::event::KeyCode;
use unstick_core::diagnose::PatternId;
use unstick_core::model::kube::OUT_OF_SERVICE_TAINT;
use unstick_core::sources::ceph::cli::Tool;

mod common;

use common::console::{ceph, findings};
use common::live::{
    config, incident, marker, on, open_playbook, recovered, run_playbook, s, wait_finding, wait_running,
};
use common::parity::{self, Differences};
use common::remedy::Reseed;

/// 001: a node powered off under a CSI Deployment. The real attach-detach controller reports
/// Multi-Attach for the replacement pod; the 1.20 playbook force-deletes the old pod, releases
/// the lost node's volumesInUse entry and waits for the controller to release the attachment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_001_multi_attach_released_with_the_real_attach_detach_controller_on_1_20() {
    if !common::on_kube("live_001_multi_attach_released_with_the_real_attach_detach_controller_on_1_20", "1.20") {
        return;
    }
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "001");
    parity::live(&h, "lost-node-multi-attach", t0, parity::same, Differences::default()).await;
    let cfg = config();
    let dir = tempfile::tempdir().unwrap();
    let (mut d, acts) =
        open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::MultiAttachNodeLost, s(&live, "pv"))).await;
    assert_eq!(acts.len(), 2, "{acts:?}");
    assert!(acts[0].starts_with(&format!("force-delete (grace 0) pod live-001/{}", s(&live, "old_pod"))), "{acts:?}");
    assert!(acts[1].contains(&format!("from node {} status.volumesInUse", s(&live, "old_node"))), "{acts:?}");
    run_playbook(&mut d, "001").await;

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
/// playbook removes the lock (taken at the old node's own address), and the pod mounts. On 1.20
/// only: the in-tree RBD plugin is gone from 1.31 (SEED.md "The current control plane").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_000_stale_lock_removed_and_the_pod_mounts_on_1_20() {
    if !common::on_kube("live_000_stale_lock_removed_and_the_pod_mounts_on_1_20", "1.20") {
        return;
    }
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "000");
    parity::live(&h, "stale-lock", t0, parity::same, Differences::default()).await;
    let cfg = config();
    // the old pod stays Terminating on the dead node (deletionTimestamp = delete + 30 s grace); it
    // stops counting as holding the volume once overdue, then the lock is stale
    wait_finding(&h, &cfg, 120, |f| f.pattern == PatternId::StaleLock).await;
    eprintln!("000: stale-lock found {:?} after the incident began", t0.elapsed());
    let dir = tempfile::tempdir().unwrap();
    let (mut d, acts) = open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::StaleLock, s(&live, "pv"))).await;
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
    let locks = ceph(&h).run(Tool::Rbd, &["lock", "ls", &format!("replicapool/{}", s(&live, "image"))]).await.unwrap();
    assert!(locks.stdout.contains(&format!("kubelet_lock_magic_{node}")), "{}", locks.stdout);
    assert_eq!(marker("000"), s(&live, "marker"), "the data written before the incident reads back");
}

/// 000's lock left by a dead node, as ceph-csi has it (SEED.md "Incidents 000 and 003 on
/// ceph-csi"): no advisory lock exists; the image's exclusive-lock owner (`auto <cookie>`, taken by
/// the node's first write) loses power holding it. The lock is no stale-lock (a new writer breaks
/// it by itself): what blocks the replacement is the attachment to the lost node, and
/// multi-attach-node-lost's out-of-service taint frees it; the replacement's client then takes the
/// lock over. On the current control plane (the taint branch).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs), with --kube current"]
async fn live_000_csi_a_dead_nodes_exclusive_lock_is_no_stale_lock_and_passes_to_the_new_node() {
    if !common::on_kube(
        "live_000_csi_a_dead_nodes_exclusive_lock_is_no_stale_lock_and_passes_to_the_new_node",
        "current",
    ) {
        return;
    }
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "000-csi");
    let (pv, old_node) = (s(&live, "pv"), s(&live, "old_node"));
    let dead_lock = s(&live["lock"], "address");
    let cfg = config();
    wait_finding(&h, &cfg, 60, |f| on(f, PatternId::MultiAttachNodeLost, pv)).await;
    eprintln!("000-csi: multi-attach-node-lost found {:?} after the incident began", t0.elapsed());
    let f = findings(&h, &cfg).await;
    assert!(!f.iter().any(|f| f.pattern == PatternId::StaleLock), "an exclusive-lock owner is no stale lock: {f:#?}");
    let dir = tempfile::tempdir().unwrap();
    let (mut d, acts) = open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::MultiAttachNodeLost, pv)).await;
    assert_eq!(acts, vec![format!("taint node {old_node} {OUT_OF_SERVICE_TAINT}=nodeshutdown:NoExecute")]);
    run_playbook(&mut d, "000-csi").await;

    let node = recovered(&h, &cfg, "000-csi", &live, t0).await;
    assert_ne!(node, old_node);
    // the replacement's first write broke the dead owner's lock and took it
    let spec = format!("replicapool/{}", s(&live, "image"));
    let o = ceph(&h).run(Tool::Rbd, &["lock", "ls", &spec]).await.unwrap();
    let locks: Vec<serde_json::Value> = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(locks.len(), 1, "{}", o.stdout);
    assert!(s(&locks[0], "id").starts_with("auto "), "{}", o.stdout);
    assert_ne!(s(&locks[0], "address"), dead_lock, "the lock passed from {old_node}: {}", o.stdout);
    let bl = ceph(&h).run(Tool::Ceph, &["osd", "blocklist", "ls"]).await.unwrap();
    eprintln!("000-csi: lock now {}; blocklist: {}", locks[0], bl.stdout.trim());
    eprintln!("000-csi: total {:?}", t0.elapsed());
}
