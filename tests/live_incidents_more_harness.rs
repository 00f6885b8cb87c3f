//! More playbooks proven end to end on incidents made by the real controllers and the harness's
//! node agents (`tests/harness/cluster incident NAME`, SEED.md "Live incidents"); the first ones
//! are in `tests/live_incidents_harness.rs`, the shared helpers in `tests/common/live.rs`. Each
//! test: the finding appears from what the controllers and agents produced, the playbook clears
//! it through the console's keys (backup, confirmation, live re-check), the workload's pod runs on
//! a healthy node with its volume, the marker written through librbd before the incident reads
//! back, and `unstick undo` works where a step is reversible. Before its playbook, each test of a
//! seed incident also compares it with its training scenario (`tests/common/parity.rs`). The
//! harness is reseeded `default` afterwards (static, controllers stopped).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::time::Instant;

use crossterm::event::KeyCode;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::Api;
use unstick_core::diagnose::{EvidenceSource, PatternId};
use unstick_core::model::kube::OUT_OF_SERVICE_TAINT;
use unstick_core::remedy::playbook::StepKind;
use unstick_core::remedy::playbook::condition::Condition;
use unstick_core::sources::ceph::cli::Tool;

mod common;

use common::console::ceph;
use common::live::{
    config, incident, marker, on, open_playbook, reboot, recovered, run_playbook, s, undo_cli, wait_finding,
    wait_no_finding, wait_running,
};
use common::parity::{self, Differences};
use common::remedy::Reseed;

/// 002: kubelet stops on a node (agent SIGTERMed) while the image stays mapped there (the holder,
/// a real watcher from the node's storage address, keeps running). Node lifecycle marks the node
/// Unknown, taint-based eviction leaves the old pod Terminating, the replacement gets the real
/// attach-detach controller's Multi-Attach. dead-node-watcher fences exactly that watcher and
/// force-deletes the old pod; multi-attach-node-lost then releases the node's volumesInUse entry
/// and waits for the controller to detach. Undo (guarded unfence): `unstick undo` refuses to
/// remove the blocklist entry while the old node has the bootID journaled with the fence, and
/// removes it once the node rebooted (`cluster node NODE reboot`: a new bootID).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_002_dead_node_watcher_fenced_then_multi_attach_released() {
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "002");
    parity::live(&h, "dead-node-watcher", t0, parity::same, Differences::default()).await;
    let (pv, old_node, ns, app) = (s(&live, "pv"), s(&live, "old_node"), s(&live, "namespace"), s(&live, "app"));
    let cfg = config();
    wait_finding(&h, &cfg, 60, |f| on(f, PatternId::DeadNodeWatcher, pv)).await;
    wait_finding(&h, &cfg, 60, |f| on(f, PatternId::MultiAttachNodeLost, pv)).await;
    eprintln!("002: both findings {:?} after the incident began", t0.elapsed());

    // 1. dead-node-watcher: force-delete the old pod, fence exactly the watcher from the old node
    let dir = tempfile::tempdir().unwrap();
    let (mut d, a) = open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::DeadNodeWatcher, pv)).await;
    assert_eq!(a.len(), 2, "{a:?}");
    assert_eq!(a[0], format!("force-delete (grace 0) pod {ns}/{}", s(&live, "old_pod")), "{a:?}");
    // the watcher comes from the node's storage address (not its InternalIP), tied by its proof
    let node_ip = s(&live, "old_node_storage_ip");
    assert_ne!(node_ip, s(&live, "old_node_ip"));
    assert!(
        a[1].contains(&format!("blocklist add {node_ip}:0/")),
        "the watcher from {old_node}'s storage address: {a:?}"
    );
    let fenced = a[1].split_whitespace().find(|w| w.starts_with(node_ip)).unwrap().to_string();
    let journal1 = run_playbook(&mut d, "002 dead-node-watcher").await;

    // 2. multi-attach-node-lost, diagnosed again: the old pod is gone already; on 1.20 only the
    // volumesInUse release is left to do, from 1.26 the out-of-service taint (the controllers
    // then detach), which stays until the node has rebooted
    let (mut d, a) = open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::MultiAttachNodeLost, pv)).await;
    let tainted = std::env::var("UNSTICK_HARNESS_KUBE").as_deref() == Ok("current");
    assert_eq!(a.len(), 1, "the old pod is gone already: {a:?}");
    if tainted {
        assert_eq!(a[0], format!("taint node {old_node} {OUT_OF_SERVICE_TAINT}=nodeshutdown:NoExecute"), "{a:?}");
    } else {
        assert!(a[0].contains(&format!("from node {old_node} status.volumesInUse")), "{a:?}");
    }
    let journal2 = run_playbook(&mut d, "002 multi-attach-node-lost").await;

    let node = recovered(&h, &cfg, "002", &live, t0).await;
    assert_ne!(node, old_node);

    // undo: the exact-address fence is reversible, but guarded: the old node did not reboot (its
    // bootID is the one journaled with the fence; the fenced client still runs there), refused
    let bl = ceph(&h).run(Tool::Ceph, &["osd", "blocklist", "ls"]).await.unwrap();
    assert!(bl.stdout.contains(&fenced), "{fenced} fenced: {}", bl.stdout);
    let o = undo_cli(&h, &journal1, &["--yes-i-typed", "y"]);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains(&format!("node {old_node} has not rebooted since it was fenced")), "{text}");
    // the node reboots (agent restarted with a new bootID, its old clients gone): allowed
    let (boot0, boot1, took) = reboot(&h, old_node).await;
    eprintln!("002: {old_node} rebooted, bootID {boot0} -> {boot1}, Ready after {took:?}");
    let o = undo_cli(&h, &journal1, &["--yes-i-typed", "y"]);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("blocklist rm")
            && text.contains(&format!("rebooted since it was fenced (bootID {boot0} → {boot1})")),
        "{text}"
    );
    let bl = ceph(&h).run(Tool::Ceph, &["osd", "blocklist", "ls"]).await.unwrap();
    assert!(!bl.stdout.contains(&fenced), "entry removed by undo: {}", bl.stdout);
    if tainted {
        // the node rebooted: the guarded unfence removes the taint too
        let o = undo_cli(&h, &journal2, &["--yes-i-typed", "y"]);
        let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{text}");
        let n = Api::<Node>::all(h.client().await).get(old_node).await.unwrap();
        let taints = n.spec.and_then(|s| s.taints).unwrap_or_default();
        assert!(!taints.iter().any(|t| t.key == OUT_OF_SERVICE_TAINT), "the undo removed the taint: {taints:?}");
    }
    let (_, still) = common::live::wait_running_within(&h, ns, app, 10).await;
    assert_eq!(still, node, "the workload keeps running after the undo");
    eprintln!("002: total {:?}", t0.elapsed());
}

/// 003: a node_exporter DaemonSet (host root at /host, no mountPropagation) started after an
/// in-tree RBD volume was mounted on the node; the volume's pod is drained off the node and the
/// unmap fails with exit status 16 (the container's own mount namespace still has the filesystem,
/// a real tmpfs copied by `unshare -m`). The playbook patches the DaemonSet; the real DaemonSet
/// controller (RollingUpdate) replaces its pods by itself, so the optional restart is skipped; the
/// node's unmap then goes through, the attach-detach controller moves the volume, the pod runs on
/// another node. Undo restores the previous (unset) mountPropagation. On 1.20 only: the incident's
/// volume is an in-tree RBD PV, and the in-tree plugin is gone from 1.31 (SEED.md).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_003_unmap_busy_released_by_the_daemonset_patch_on_1_20() {
    if !common::on_kube("live_003_unmap_busy_released_by_the_daemonset_patch_on_1_20", "1.20") {
        return;
    }
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "003");
    parity::live(&h, "unmap-busy", t0, parity::short_creating_grace, Differences::default()).await;
    let (pv, old_node) = (s(&live, "pv"), s(&live, "old_node"));
    let ds = &live["daemonset"];
    let cfg = config();
    wait_finding(&h, &cfg, 60, |f| on(f, PatternId::UnmapBusy, pv)).await;
    eprintln!("003: unmap-busy found {:?} after the incident began", t0.elapsed());

    let dir = tempfile::tempdir().unwrap();
    let (mut d, a) = open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::UnmapBusy, pv)).await;
    daemonset_patch_actions(&a, ds);
    let steps = &d.app.playbook().unwrap().playbook.steps;
    assert!(steps.iter().any(|st| st.optional && st.title.starts_with("Only for an OnDelete DaemonSet")), "{steps:#?}");
    let journal = run_playbook(&mut d, "003").await;

    let node = recovered(&h, &cfg, "003", &live, t0).await;
    assert_ne!(node, old_node, "{old_node} is cordoned");

    undo_restores_unset_propagation(&h, &journal, ds).await;
    eprintln!("003: total {:?}", t0.elapsed());
}

/// 003-csi: 003 on a ceph-csi volume, as it shows on the current control plane (SEED.md "Incident
/// 003-csi"). A host scanner DaemonSet (host root at /host, no mountPropagation) keeps files of the
/// volume open; the volume's pod is drained off its node. ceph-csi's NodeUnstage fails in `rbd
/// unmap` with exit status 16, which kubelet only logs: the old pod is deleted, the node keeps the
/// volume in use, the replacement elsewhere waits for the detach. unmap-busy is found without any
/// event, from the node's volumesInUse, the watcher from that node and the DaemonSet pod. The
/// playbook patches the DaemonSet; the real DaemonSet controller replaces its pods (the open files
/// close), the node's unstage goes through by itself, the volume moves, the data is intact. Undo
/// restores the previous (unset) mountPropagation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_003_csi_unmap_busy_found_without_an_event_and_released_by_the_daemonset_patch() {
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "003-csi");
    let (pv, old_node, ns) = (s(&live, "pv"), s(&live, "old_node"), s(&live, "namespace"));
    let ds = &live["daemonset"];
    let cfg = config();
    let f = wait_finding(&h, &cfg, 60, |f| on(f, PatternId::UnmapBusy, pv)).await;
    eprintln!("003-csi: unmap-busy found {:?} after the incident began", t0.elapsed());
    assert_eq!(f.node.as_deref(), Some(old_node), "{f:#?}");
    let has = |src: EvidenceSource, text: &str| f.evidence.iter().any(|e| e.source == src && e.text.contains(text));
    assert!(has(EvidenceSource::NodeStatus, &format!("status.volumesInUse of node {old_node}")), "{f:#?}");
    assert!(has(EvidenceSource::RbdStatus, s(&live, "old_node_storage_ip")), "the node's watcher: {f:#?}");
    let holder = format!("pod {}/{} of DaemonSet {}", s(ds, "namespace"), s(ds, "pod"), s(ds, "name"));
    assert!(has(EvidenceSource::Pod, &holder), "{f:#?}");
    // kubelet posted nothing about the unmap; the only events are the attach-detach controller's
    assert!(!f.evidence.iter().any(|e| e.source == EvidenceSource::Event && e.text.contains("unmap")), "{f:#?}");
    let pods: Api<Pod> = Api::namespaced(h.client().await, ns);
    assert!(pods.get_opt(s(&live, "old_pod")).await.unwrap().is_none(), "kubelet deleted the old pod");

    let dir = tempfile::tempdir().unwrap();
    let (mut d, a) = open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::UnmapBusy, pv)).await;
    daemonset_patch_actions(&a, ds);
    let journal = run_playbook(&mut d, "003-csi").await;

    let node = recovered(&h, &cfg, "003-csi", &live, t0).await;
    assert_ne!(node, old_node, "{old_node} is cordoned");
    undo_restores_unset_propagation(&h, &journal, ds).await;
    eprintln!("003-csi: total {:?}", t0.elapsed());
}

/// unmap-busy's two actions for the incident's DaemonSet `ds` (`live.json` `daemonset`): the
/// mountPropagation patch, then the optional restart of its pod on the node that cannot unmap.
fn daemonset_patch_actions(a: &[String], ds: &serde_json::Value) {
    assert_eq!(a.len(), 2, "{a:?}");
    let ds_name = format!("{}/{}", s(ds, "namespace"), s(ds, "name"));
    assert!(a[0].starts_with(&format!("set mountPropagation=HostToContainer on {ds_name} ")), "{a:?}");
    assert!(a[1].ends_with(&format!("{}/{}", s(ds, "namespace"), s(ds, "pod"))), "{a:?}");
}

/// `unstick undo` of the patch's journal exits 0 and restores the previous value (unset) of every
/// mount of `ds`'s first container.
async fn undo_restores_unset_propagation(h: &common::Harness, journal: &std::path::Path, ds: &serde_json::Value) {
    let o = undo_cli(h, journal, &["--yes-i-typed", "y"]);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{text}");
    let api: Api<DaemonSet> = Api::namespaced(h.client().await, s(ds, "namespace"));
    let got = api.get(s(ds, "name")).await.unwrap();
    let mounts = got.spec.unwrap().template.spec.unwrap().containers[0].volume_mounts.clone().unwrap_or_default();
    assert!(mounts.iter().all(|m| m.mount_propagation.is_none()), "previous value (unset) restored: {mounts:?}");
}

/// 004: a StatefulSet pod (pinned to its node) is deleted while the node's NodeUnstage of its CSI
/// volume is slow (the agent's slow-unstage hook); the controller recreates web-0 on the same node
/// at once and ceph-csi refuses its NodeStage ("an operation with the given Volume ID ... already
/// exists"). same-node-restage waits for the old mapping's own watcher to go (no write); web-0
/// then mounts by itself on the same node. Nothing is written, so there is nothing to undo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_004_same_node_restage_settles_by_itself() {
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "004");
    parity::live(&h, "same-node-restage", t0, parity::short_creating_grace, Differences::default()).await;
    let (pv, old_node, ns, app) = (s(&live, "pv"), s(&live, "old_node"), s(&live, "namespace"), s(&live, "app"));
    let mut cfg = config();
    cfg.diagnose.creating_grace_seconds = 5;
    wait_finding(&h, &cfg, 60, |f| on(f, PatternId::SameNodeRestage, pv)).await;
    eprintln!("004: same-node-restage found {:?} after the incident began", t0.elapsed());

    let dir = tempfile::tempdir().unwrap();
    let (mut d, a) = open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::SameNodeRestage, pv)).await;
    let pb = &d.app.playbook().unwrap().playbook;
    let wait = pb.steps.iter().find_map(|st| match &st.kind {
        StepKind::Wait { condition, .. } => Some(condition.clone()),
        _ => None,
    });
    // the old mapping's exact watcher (from the same node), not "no watcher at all"
    assert!(
        matches!(&wait, Some(Condition::WatcherGone { addr, .. }) if addr.starts_with(s(&live, "old_node_storage_ip"))),
        "{wait:?}"
    );
    assert_eq!(a, vec![format!("DELETE v1 pods {ns}/{}", s(&live, "new_pod"))], "only the optional delete");
    run_playbook(&mut d, "004").await;

    let (pod, node) = common::live::wait_running_within(&h, ns, app, 60).await;
    eprintln!("004: {pod} Running on {node} {:?} after the start", t0.elapsed());
    assert_eq!((pod.as_str(), node.as_str()), ("web-0", old_node), "the same pod name on the same node");
    wait_no_finding(&h, &cfg, 30, |f| f.volume.as_deref() == Some(pv)).await;
    assert_eq!(marker("004"), s(&live, "marker"), "the data written before the incident reads back");
}

/// va-finalizer-stuck: the CSI attacher is down while a node is drained and removed from the
/// cluster; the attach-detach controller deletes the VolumeAttachment, and the attacher, back,
/// cannot detach from the deleted node (`status.detachError`, the finalizer stays). The playbook
/// removes the finalizer (no watcher is the deleted node's: it unmapped before it went away); the
/// replacement pod then runs on another node. On 1.20 the controller attaches the volume there only
/// after the release; on 1.37 the replacement attached and opened the image by itself before it,
/// and the guard lets its watcher pass, proven to be the other node's (SEED.md "The whole harness
/// suite on 1.37.2"). Irreversible: no undo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_va_finalizer_stuck_released_and_the_pod_runs_elsewhere() {
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "va-finalizer-stuck");
    let (pv, va) = (s(&live, "pv"), s(&live, "va"));
    let mut cfg = config();
    cfg.diagnose.va_deleting_grace_seconds = 5;
    wait_finding(&h, &cfg, 60, |f| on(f, PatternId::VaFinalizerStuck, pv)).await;
    eprintln!("va-finalizer-stuck: found {:?} after the incident began", t0.elapsed());
    // on 1.37 the replacement opens the image by itself: when its watcher appeared after the
    // playbook's snapshot, the Check step rightly refused ("watchers …: was none, now …"; CI,
    // session 19). An operator reopens the playbook then; the test waits for it first (bounded)
    if std::env::var("UNSTICK_HARNESS_KUBE").as_deref() != Ok("1.20") {
        let vh = s(&live, "volume_handle");
        let spec = format!("replicapool/live-csi-vol-{}", &vh[vh.len().saturating_sub(36)..]);
        let end = Instant::now() + std::time::Duration::from_secs(60);
        let mut watched = false;
        while !watched && Instant::now() < end {
            let status = common::remedy::rbd_json(&h, &["status", &spec]).await;
            watched = status["watchers"].as_array().is_some_and(|w| !w.is_empty());
            if !watched {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
        }
        eprintln!("va-finalizer-stuck: {spec} watched: {watched} ({:?} after the start)", t0.elapsed());
    }

    let dir = tempfile::tempdir().unwrap();
    let (mut d, a) = open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::VaFinalizerStuck, pv)).await;
    assert_eq!(a, vec![format!("remove finalizer external-attacher/rbd-csi-ceph-com from VolumeAttachment {va}")]);
    run_playbook(&mut d, "va-finalizer-stuck").await;

    let node = recovered(&h, &cfg, "va-finalizer-stuck", &live, t0).await;
    assert_eq!(node, s(&live, "new_node"));
}

/// blocklist-leftover: a node loses power and is fenced by hand as a whole host; it boots again
/// (a new bootID), is Ready, and every Ceph client on it is still cut off. Guarded unfence: no
/// fence of it was journaled, so removing the entry is refused until the node's name is typed.
/// Afterwards the node's clients reach Ceph again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_blocklist_leftover_unfenced_with_the_typed_override() {
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "blocklist-leftover");
    let (node, entry, ns, app) = (s(&live, "old_node"), s(&live, "entry"), s(&live, "namespace"), s(&live, "app"));
    let cfg = config();
    wait_finding(&h, &cfg, 60, |f| f.pattern == PatternId::BlocklistLeftover).await;
    eprintln!("blocklist-leftover: found {:?} after the incident began", t0.elapsed());
    // the workload recovered by itself once the node's kubelet came back and finished the old pod
    let ran_on = wait_running(&h, ns, app).await;

    // a Ceph client of the node is cut off
    let spec = format!("replicapool/{}", s(&live, "image"));
    let o = common::live::node_rbd(&h, node, &["status", &spec]);
    assert!(!o.status.success(), "{node} is fenced: {}", String::from_utf8_lossy(&o.stdout));

    let dir = tempfile::tempdir().unwrap();
    let (mut d, a) = open_playbook(&h, dir.path(), &cfg, |f| f.pattern == PatternId::BlocklistLeftover).await;
    assert_eq!(a.len(), 1, "{a:?}");
    assert!(a[0].ends_with(&format!("osd blocklist rm {entry}")), "{a:?}");
    d.key(KeyCode::Enter).await; // backup
    d.key(KeyCode::Enter).await; // re-check
    d.act_typing_override(node).await;
    let journal = run_playbook(&mut d, "blocklist-leftover").await;
    let rep = unstick_core::remedy::journal::read(&journal).unwrap();
    assert!(rep.steps()[0].intent.boot_ids.is_empty(), "an unfence journals no bootID");

    wait_no_finding(&h, &cfg, 30, |f| f.pattern == PatternId::BlocklistLeftover).await;
    let bl = ceph(&h).run(Tool::Ceph, &["osd", "blocklist", "ls"]).await.unwrap();
    assert!(!bl.stdout.contains(entry), "{entry} removed: {}", bl.stdout);
    let o = common::live::node_rbd(&h, node, &["status", &spec]);
    assert!(o.status.success(), "{node} reaches Ceph again: {}", String::from_utf8_lossy(&o.stderr));
    let (_, still) = common::live::wait_running_within(&h, ns, app, 10).await;
    assert_eq!(still, ran_on);
    assert_eq!(marker("blocklist-leftover"), s(&live, "marker"), "the data written before the incident reads back");
    eprintln!("blocklist-leftover: total {:?}", t0.elapsed());
}
