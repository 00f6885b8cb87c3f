//! Fencing through csi-addons on the live harness (issue 27, "Fencing where the cluster already
//! fences"): the harness serves the published NetworkFence / NetworkFenceClass CRDs
//! (`tests/harness/crds/`) and runs `tests/harness/fencer.py`, which acts on NetworkFences as the
//! csi-addons controller + ceph-csi do (blocklists each CIDR in the harness Ceph, reports the
//! result in the status). With a NetworkFenceClass for `rbd.csi.ceph.com`, live incident 002's
//! dead-node-watcher playbook creates a NetworkFence instead of a raw blocklist entry; the fence's
//! entries are its own (not a leftover) once the node is Ready again; a raw removal of them is
//! refused; the guarded unfence (`unstick undo`) sets the fence Unfenced and the entries go.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::time::{Duration, Instant};

use kube::api::{DynamicObject, PostParams};
use unstick_core::diagnose::PatternId;
use unstick_core::model::fence::{CLASS_PLURAL, KIND, NetworkFence, PLURAL};
use unstick_core::remedy::action::WriteAction;
use unstick_core::remedy::action::precheck::read_live;
use unstick_core::remedy::action::safety::{Overrides, SafetyError, approve};
use unstick_core::sources::ceph::cli::Tool;
use unstick_core::sources::ceph::parse;
use unstick_core::sources::kube::network_fence::api;

mod common;

use common::console::{ceph, findings};
use common::live::{
    boot_id, config, incident, on, open_playbook, run_playbook, s, undo_cli, wait_boot_id_change, wait_finding,
};
use common::remedy::Reseed;

/// The NetworkFence `name` as the API serves it.
async fn fence(h: &common::Harness, name: &str) -> NetworkFence {
    let o = api(&h.client().await, KIND, PLURAL).get(name).await.expect("the NetworkFence");
    NetworkFence::from_json(serde_json::to_value(o).unwrap()).unwrap()
}

/// Polls (every 500 ms, `secs` at most) until the fence's status message is `message`.
async fn wait_fence_message(h: &common::Harness, name: &str, message: &str, secs: u64) -> NetworkFence {
    let t = Instant::now();
    loop {
        let f = fence(h, name).await;
        if f.message == message {
            return f;
        }
        assert!(t.elapsed() < Duration::from_secs(secs), "NetworkFence {name} after {secs} s: {f:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `ceph osd blocklist ls`, each entry as Ceph prints it (`198.18.2.130:0/32` for a range).
async fn blocklist(h: &common::Harness) -> Vec<String> {
    let bl = ceph(h).run_parsed(Tool::Ceph, &["osd", "blocklist", "ls"], parse::blocklist_ls).await.unwrap();
    bl.iter().map(|e| e.text().to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_002_fenced_through_a_network_fence_and_unfenced_through_it() {
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "002");
    // csi-addons with a class for the harness's driver (after the incident: its reset removes classes)
    let class: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "csiaddons.openshift.io/v1alpha1", "kind": "NetworkFenceClass",
        "metadata": {"name": "harness-rbd"},
        "spec": {"provisioner": "rbd.csi.ceph.com", "parameters": {"clusterID": "rook-ceph"}},
    }))
    .unwrap();
    api(&h.client().await, "NetworkFenceClass", CLASS_PLURAL).create(&PostParams::default(), &class).await.unwrap();

    // the node's Ceph clients connect from its storage address (SEED.md "Storage addresses"),
    // tied to it by the annotation the live config names: that address is what is fenced
    let (pv, old_node, node_ip) = (s(&live, "pv"), s(&live, "old_node"), s(&live, "old_node_storage_ip"));
    let cfg = config();
    wait_finding(&h, &cfg, 60, |f| on(f, PatternId::DeadNodeWatcher, pv)).await;

    // the fencing step is a NetworkFence for the old node's proven address, not a raw entry
    let dir = tempfile::tempdir().unwrap();
    let (mut d, a) = open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::DeadNodeWatcher, pv)).await;
    let name = format!("unstick-{old_node}");
    assert_eq!(
        a[1],
        format!("create NetworkFence {name} fencing {node_ip}/32 of node {old_node} (class harness-rbd)"),
        "{a:?}"
    );
    assert!(!a.iter().any(|x| x.contains("blocklist add")), "{a:?}");
    let t1 = Instant::now();
    let journal = run_playbook(&mut d, "002 through csi-addons").await;
    eprintln!("fence: playbook (create, wait for the watcher to go) {:?}", t1.elapsed());
    let f = wait_fence_message(&h, &name, "fencing operation successful", 30).await;
    assert_eq!((f.fence_state.as_str(), f.result.as_str(), f.class.as_str()), ("Fenced", "Succeeded", "harness-rbd"));
    let bl = blocklist(&h).await;
    eprintln!("fence: blocklist after the fence: {bl:?}");
    // ceph-csi's range entry (Ceph 16.2.15 has `blocklist range add`)
    let entry = format!("{node_ip}:0/32");
    assert!(bl.contains(&entry), "{bl:?}");
    // the console read the fence with its blocklist (the scan's Effect::Fences is not run by the
    // test driver: the snapshot it was given carries what `kube_snapshot` listed)
    assert!(d.app.data.snap.network_fence_classes.iter().any(|c| c.name == "harness-rbd"));

    // the node reboots: Ready again, still covered by the fence's entry, which is the fence's
    // (no blocklist-leftover), and a raw removal of it is refused
    let boot0 = boot_id(&h, old_node).await;
    common::cluster(&["node", old_node, "reboot"]);
    let boot1 = wait_boot_id_change(&h, old_node, &boot0).await;
    let fs = findings(&h, &cfg).await;
    assert!(
        !fs.iter().any(|f| f.pattern == PatternId::BlocklistLeftover && f.node.as_deref() == Some(old_node)),
        "the fence's entry is no leftover: {:#?}",
        fs.iter().map(|f| (f.pattern, f.summary.clone())).collect::<Vec<_>>()
    );
    let raw = WriteAction::BlocklistRangeRm { range: entry.clone() };
    let state = read_live(&h.reader().await, &unstick_core::remedy::action::scope::scope_for(&raw)).await.unwrap();
    let ov = Overrides { unfence_not_rebooted: Some(old_node.to_string()), ..Default::default() };
    let e = approve(&raw, &state, &ov).unwrap_err();
    assert_eq!(e, SafetyError::FenceOwned { entry: entry.clone(), fence: name.clone() });
    eprintln!("fence: raw removal refused: {e}");

    // the guarded unfence goes through the fence: Unfenced, and ceph-csi's stand-in lifts it
    let o = undo_cli(&h, &journal, &["--yes-i-typed", "y"]);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    eprintln!("fence: undo:\n{text}");
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains(&format!("rebooted since it was fenced (bootID {boot0} → {boot1})")), "{text}");
    let f = wait_fence_message(&h, &name, "unfencing operation successful", 30).await;
    assert_eq!(f.fence_state, "Unfenced");
    let bl = blocklist(&h).await;
    assert!(!bl.contains(&entry), "the fence's entry is gone: {bl:?}");

    // CSIAddonsNode: the node agent keeps its node's (as the csi-addons sidecar and controller
    // do), with the node's Ceph client address as the fence client of the class. The console
    // reads it and ties the storage address to the node by it. A whole-host entry of it on the
    // Ready node that no NetworkFence owns is a blocklist-leftover, which names the fence client.
    let t2 = Instant::now();
    let cn = wait_csiaddons_node(&h, old_node, &format!("{node_ip}/32"), 30).await;
    eprintln!("csiaddonsnode: {} fence clients {:?} after {:?}", cn.key(), cn.fence_clients, t2.elapsed());
    let snap = common::console::snapshot(&h).await;
    assert!(snap.csiaddons_nodes.as_deref().unwrap_or_default().iter().any(|n| n == &cn), "the console read it");
    let lin = unstick_core::lineage::Lineage::build(&snap);
    let tie = unstick_core::attribution::Attributor::new(&snap, &lin, &cfg.diagnose).tie(node_ip).unwrap();
    assert_eq!(tie.node, old_node);
    assert!(matches!(tie.proof, unstick_core::attribution::Proof::FenceClient { .. }), "{tie}");
    eprintln!("csiaddonsnode: {node_ip} is {tie}");
    let host = format!("{node_ip}:0/0");
    ceph(&h).run(Tool::Ceph, &["osd", "blocklist", "add", &host]).await.unwrap();
    let fs = findings(&h, &cfg).await;
    let f = fs
        .iter()
        .find(|f| f.pattern == PatternId::BlocklistLeftover && f.node.as_deref() == Some(old_node))
        .unwrap_or_else(|| panic!("a leftover: {:#?}", fs.iter().map(|f| f.summary.clone()).collect::<Vec<_>>()));
    assert!(
        f.evidence.iter().any(|e| e.text.contains(&format!("node {old_node}'s csi-addons fence client"))),
        "{:#?}",
        f.evidence
    );
    ceph(&h).run(Tool::Ceph, &["osd", "blocklist", "rm", &host]).await.unwrap();
    eprintln!("fence: total {:?}", t0.elapsed());
}

/// Polls (every 500 ms, `secs` at most) until node `node`'s CSIAddonsNode lists `cidr` as a fence
/// client.
async fn wait_csiaddons_node(
    h: &common::Harness,
    node: &str,
    cidr: &str,
    secs: u64,
) -> unstick_core::model::csiaddons_node::CsiAddonsNode {
    let t = Instant::now();
    loop {
        let c = h.client().await;
        let nodes = unstick_core::sources::kube::network_fence::list_nodes(&c, Duration::from_secs(10)).await.unwrap();
        let found = nodes.unwrap_or_default().into_iter().find(|n| n.node_id == node);
        if let Some(n) = found.filter(|n| n.fence_clients.iter().any(|f| f.cidrs.iter().any(|c| c == cidr))) {
            return n;
        }
        assert!(t.elapsed() < Duration::from_secs(secs), "no CSIAddonsNode of {node} with {cidr} after {secs} s");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
