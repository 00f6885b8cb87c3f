//! Issue 24's causes outside the eight patterns, as live incidents made on the harness
//! (`tests/harness/cluster incident NAME`, SEED.md "Live incidents"): the node agent plays
//! kubelet + ceph-csi and posts NodeStage's failure the way ceph-csi words it (`an error (exit
//! status N) occurred while running rbd args: […], rbd error output: …`) with the stderr of the
//! real `rbd` that failed inside the node's network namespace.
//! - ceph-unreachable: the node's packets to the monitors and OSDs are lost (rbd exits 110);
//! - ceph-auth-failed: the node presents a wrong cephx key (rbd exits 13);
//! - rwo-claim-shared: a second pod of an RWO claim on another Ready node (the real
//!   attach-detach controller's Multi-Attach).
//!
//! Each is diagnosed live with its cause and never as something to fence or force-delete; then the
//! fault is undone the way its owner would (the network, the key, the second user stopped) and the
//! pod runs with the data written before the incident. The harness is reseeded `default` after.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::time::Instant;

use crossterm::event::KeyCode;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams};

use unstick_core::diagnose::{Finding, PatternId};
use unstick_core::remedy::playbook::StepKind;

mod common;

use common::live::{
    config, incident, marker, on, open_playbook, run_playbook, s, wait_finding, wait_no_finding, wait_running,
};
use common::remedy::Reseed;

/// No finding on `pv` proposes what would be wrong on a healthy node: fencing it, or releasing
/// its volume as if the node were lost.
fn nothing_to_fence(all: &[Finding], pv: &str) {
    let wrong = [PatternId::DeadNodeWatcher, PatternId::MultiAttachNodeLost, PatternId::LiveNodeStaleMap];
    let bad: Vec<_> = all.iter().filter(|f| f.volume.as_deref() == Some(pv) && wrong.contains(&f.pattern)).collect();
    assert!(bad.is_empty(), "a healthy node's volume diagnosed as a lost node's: {bad:#?}");
}

/// The finding's evidence quotes the FailedMount event, with rbd's exit status.
fn quotes_the_failure(f: &Finding, status: &str) {
    let ev = f.evidence.iter().find(|e| e.text.contains("FailedMount")).expect("the FailedMount event in the evidence");
    assert!(ev.text.contains(&format!("exit status {status}")), "{}", ev.text);
    assert_eq!(f.playbook, "none", "no safe write fixes a node's Ceph access: {}", f.playbook);
}

/// Incident `name` (a node's Ceph access broken, the workload's pod replaced there): diagnosed as
/// `pattern` on the waiting node, quoting rbd's exit `status`, with nothing to fence; then `undo`
/// repairs the node as its owner would, kubelet's next retry maps the volume on that same node,
/// no finding is left on the volume, and the marker written before the incident reads back.
async fn node_fault_diagnosed_then_recovers(
    name: &str,
    pattern: PatternId,
    status: &str,
    undo: impl FnOnce(&serde_json::Value),
) {
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, name);
    let (pv, node) = (s(&live, "pv"), s(&live, "new_node"));
    let cfg = config();
    let f = wait_finding(&h, &cfg, 60, |f| on(f, pattern, pv)).await;
    eprintln!("{name}: found {:?} after the incident began", t0.elapsed());
    assert_eq!(f.node.as_deref(), Some(node));
    quotes_the_failure(&f, status);
    nothing_to_fence(&common::console::findings(&h, &cfg).await, pv);

    undo(&live);
    let ran_on = wait_running(&h, s(&live, "namespace"), s(&live, "app")).await;
    assert_eq!(ran_on, node);
    wait_no_finding(&h, &cfg, 30, |f| f.volume.as_deref() == Some(pv)).await;
    assert_eq!(marker(name), s(&live, "marker"), "the data written before the incident reads back");
    eprintln!("{name}: total {:?}", t0.elapsed());
}

/// ceph-unreachable: diagnosed from kubelet's event on the waiting pod (the node stays Ready); once
/// the node's path to Ceph is back, kubelet's next retry maps the volume.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_ceph_unreachable_from_one_node_diagnosed_then_recovers() {
    node_fault_diagnosed_then_recovers("ceph-unreachable", PatternId::CephUnreachable, "110", |live| {
        // the storage network comes back (the incident's neighbour entry removed)
        let o = std::process::Command::new("ip")
            .args(["-n", s(live, "netns"), "neigh", "del", s(live, "host_ip"), "dev", "eth0"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    })
    .await;
}

/// ceph-auth-failed: the monitors refuse the node's key; once the key is right again, kubelet's
/// next retry maps the volume.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_ceph_auth_failed_on_one_node_diagnosed_then_recovers() {
    node_fault_diagnosed_then_recovers("ceph-auth-failed", PatternId::CephAuthFailed, "13", |live| {
        // the node's secret is fixed (the wrong key removed: the agent uses the cluster's again)
        std::fs::remove_file(s(live, "keyring")).unwrap();
    })
    .await;
}

/// rwo-claim-shared: the real attach-detach controller's Multi-Attach for a second user of an RWO
/// claim on another Ready node. The playbook is read-only guidance (no Act step at all); the
/// operator scales the holder's Deployment to zero as it says (after the live re-check: before it,
/// the re-check rightly refuses a changed state), its Wait sees the holder go, and the
/// second pod then gets the volume with the data written before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_rwo_claim_shared_guided_without_a_write() {
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "rwo-claim-shared");
    let (pv, ns, app) = (s(&live, "pv"), s(&live, "namespace"), s(&live, "app"));
    let cfg = config();
    let f = wait_finding(&h, &cfg, 60, |f| on(f, PatternId::RwoClaimShared, pv)).await;
    eprintln!("rwo-claim-shared: found {:?} after the incident began", t0.elapsed());
    assert_eq!(f.node.as_deref(), Some(s(&live, "new_node")));
    // the attach-detach controller's words: `Multi-Attach error …` to 1.36, `Waiting for detach …`
    // from 1.37 (unstick_core::diagnose::events::is_multi_attach)
    let multi_attach = |t: &str| t.contains("Multi-Attach error") || t.contains("Waiting for detach for volume");
    assert!(f.evidence.iter().any(|e| multi_attach(&e.text)), "{:#?}", f.evidence);
    nothing_to_fence(&common::console::findings(&h, &cfg).await, pv);

    let dir = tempfile::tempdir().unwrap();
    let (mut d, acts) = open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::RwoClaimShared, pv)).await;
    assert!(acts.is_empty(), "guidance only: {acts:?}");
    // backup, live re-check and the read-only steps, up to the Wait for the holder to stop
    loop {
        let (cursor, len) = d.cursor();
        assert!(cursor < len, "no Wait step for the holder");
        let pb = d.app.playbook().expect("playbook open");
        if matches!(pb.playbook.steps[cursor].kind, StepKind::Wait { .. }) {
            break;
        }
        d.key(KeyCode::Enter).await;
        assert!(d.cursor().0 > cursor, "step {cursor} did not advance: {}", d.message());
    }
    // the owner scales the holder's workload away, as the guidance says (in another terminal)
    let deployments: Api<Deployment> = Api::namespaced(h.client().await, ns);
    let zero = serde_json::json!({"spec": {"replicas": 0}});
    deployments.patch(app, &PatchParams::default(), &Patch::Merge(&zero)).await.unwrap();
    run_playbook(&mut d, "rwo-claim-shared").await;

    let second = format!("{app}-second");
    let ran_on = wait_running(&h, ns, &second).await;
    assert_eq!(ran_on, s(&live, "new_node"));
    wait_no_finding(&h, &cfg, 30, |f| f.volume.as_deref() == Some(pv)).await;
    assert_eq!(marker("rwo-claim-shared"), s(&live, "marker"), "the data written before the incident reads back");
    eprintln!("rwo-claim-shared: total {:?}", t0.elapsed());
}
