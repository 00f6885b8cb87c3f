//! The out-of-service branch of multi-attach-node-lost (non-graceful node shutdown, KEP-2268)
//! proven on the REAL controllers of the current control plane (`cluster up --kube current`,
//! kube-controller-manager 1.37): incident 001 (a node powered off under a CSI Deployment), the
//! playbook driven through the console's keys taints the lost node
//! `node.kubernetes.io/out-of-service=nodeshutdown:NoExecute` after its guards (node not Ready, the
//! node's name typed), the real pod GC controller force-deletes the old pod, the real attach-detach
//! controller detaches the volume (the harness's attacher drops the VolumeAttachment's finalizer),
//! the replacement pod runs with the marker written before the incident. Then the guarded unfence:
//! `unstick undo` refuses to remove the taint while the node has the bootID journaled with the
//! taint, and removes it once the node booted again (a new bootID).
//!
//! Before the playbook, the scenario of 001 (`lost-node-multi-attach`) with its simulated API
//! server at the harness's version is compared with the incident (`tests/common/parity.rs`).
//!
//! On a 1.20 harness nothing acts on the taint (its playbook force-deletes and releases
//! volumesInUse instead: `tests/live_incidents_harness.rs`), so there the test says
//! `skipped: needs --kube current` and returns. Timings seen: tests/harness/SEED.md "The current
//! control plane".

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::time::Instant;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kube::api::Api;
use unstick_core::diagnose::PatternId;
use unstick_core::model::kube::OUT_OF_SERVICE_TAINT;

mod common;

use common::live::{
    config, incident, on, open_playbook, reboot, recovered, run_playbook, s, undo_cli, wait_finding,
    wait_running_within,
};
use common::parity::{self, Differences};
use common::remedy::Reseed;

async fn has_taint(h: &common::Harness, node: &str) -> bool {
    let n = Api::<Node>::all(h.client().await).get(node).await.unwrap();
    n.spec.and_then(|s| s.taints).unwrap_or_default().iter().any(|t| t.key == OUT_OF_SERVICE_TAINT)
}

/// 001 on 1.37: taint, the real controllers force-delete and detach, the workload runs again with
/// its data; the taint stays until the node has a new bootID.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs), with --kube current"]
async fn live_001_out_of_service_taint_acted_on_by_the_real_controllers() {
    if !common::on_kube("live_001_out_of_service_taint_acted_on_by_the_real_controllers", "current") {
        return;
    }
    let h = common::harness();
    let v = h.server_version().await;
    assert!((v.major, v.minor) >= (1, 26), "the current control plane acts on the taint: {v}");
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "001");
    let (pv, old_node, old_pod, ns) =
        (s(&live, "pv"), s(&live, "old_node"), s(&live, "old_pod"), s(&live, "namespace"));
    // the scenario of 001 played on this release shows the same findings and playbook
    parity::live(&h, "lost-node-multi-attach", t0, parity::same, Differences::default()).await;
    let cfg = config();
    let f = wait_finding(&h, &cfg, 60, |f| on(f, PatternId::MultiAttachNodeLost, pv)).await;
    eprintln!("001 on {v}: multi-attach-node-lost found {:?} after the incident began", t0.elapsed());
    assert!(
        f.evidence.iter().any(|e| e.text.contains("Waiting for detach for volume")),
        "the 1.37 wording of the attach-detach controller's event is evidence: {:#?}",
        f.evidence
    );
    // the powered-off node's watch timed out before the incident was handed over (live.json
    // seconds.watch_timeout): no watcher remains, so there is nothing to fence before the taint
    let dir = tempfile::tempdir().unwrap();
    let (mut d, acts) = open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::MultiAttachNodeLost, pv)).await;
    assert_eq!(
        acts,
        vec![format!("taint node {old_node} {OUT_OF_SERVICE_TAINT}=nodeshutdown:NoExecute")],
        "on {v} the playbook taints and waits; nothing is force-deleted by hand"
    );
    let t1 = Instant::now();
    let journal = run_playbook(&mut d, "001 out-of-service").await;
    eprintln!("001: taint applied and the attachment released {:?} after the playbook began", t1.elapsed());

    // what the real controllers did: the old pod is gone (pod GC force-deleted it), so is the
    // VolumeAttachment on the old node
    let pods: Api<Pod> = Api::namespaced(h.client().await, ns);
    assert!(pods.get_opt(old_pod).await.unwrap().is_none(), "the old pod {old_pod} was force-deleted");
    let vas: Api<VolumeAttachment> = Api::all(h.client().await);
    assert!(vas.get_opt(s(&live, "va")).await.unwrap().is_none(), "the old node's VolumeAttachment is gone");
    let node = recovered(&h, &cfg, "001", &live, t0).await;
    assert_ne!(node, old_node);
    assert!(has_taint(&h, old_node).await, "the taint stays until the node is repaired");

    // guarded unfence: the node is still off, its bootID the one journaled with the taint
    let o = undo_cli(&h, &journal, &["--yes-i-typed", "y"]);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains(&format!("node {old_node} has not rebooted since it was fenced")), "{text}");
    assert!(has_taint(&h, old_node).await, "refused: the taint stays");
    // the node is powered on again: a new bootID, Ready (still tainted)
    let (boot0, boot1, took) = reboot(&h, old_node).await;
    eprintln!("001: {old_node} powered on, bootID {boot0} -> {boot1}, Ready after {took:?}");
    let o = undo_cli(&h, &journal, &["--yes-i-typed", "y"]);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains(&format!("rebooted since it was fenced (bootID {boot0} → {boot1})")), "{text}");
    assert!(!has_taint(&h, old_node).await, "the undo removed the taint");
    let (_, still) = wait_running_within(&h, ns, s(&live, "app"), 10).await;
    assert_eq!(still, node, "the workload keeps running after the undo");
    eprintln!("001 out-of-service: total {:?}", t0.elapsed());
}
