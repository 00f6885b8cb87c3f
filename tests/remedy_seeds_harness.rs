//! The playbooks of seeds 001 (multi-attach-node-lost), 003 (unmap-busy) and 004
//! (same-node-restage) driven through the runner on the REAL harness (kube-apiserver 1.20 + etcd +
//! single-node Ceph, `tests/harness/cluster up`), then a fresh diagnosis of the live state must no
//! longer have the finding; and `unstick undo` taking the volume's Lease.
//!
//! The harness has no kubelet and no controller-manager. Where a fix needs a node or a controller
//! (a Manual `rbd unmap`, kubelet finishing a pod, the attach-detach controller updating a node's
//! status), the test plays that part itself, the way SEED.md describes, and says so where it does.
//! Each test seeds what it needs and re-seeds `default` at the end (also on panic).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::process::Command;
use std::time::Duration;

use ::kube::api::{Api, Patch, PatchParams};
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::storage::v1::VolumeAttachment;
use unstick_core::config::Config;
use unstick_core::diagnose::PatternId;
use unstick_core::model::ImageRef;
use unstick_core::remedy::action::safety::{Overrides, approve};
use unstick_core::remedy::action::{HOST_TO_CONTAINER, WriteAction};
use unstick_core::remedy::journal::{self, Author, Journal, WriteStatus};
use unstick_core::remedy::playbook::StepKind;
use unstick_core::remedy::run::lease::{LeaseManager, lease_name, read_holder};
use unstick_core::remedy::run::{StepState, WaitStatus, confirm_undo, prepare_undo};

mod common;

use common::cluster;
use common::remedy::{Reseed, findings_of, rbd_json, release, seed_json};

const OLD_001: &str = "user-db-79f7876cbc-dl8b8";
const VA_001: &str = "csi-8d5ba7135d1a9d3ec535accec31cdc21a3d0c84c8e4a6d07027af77d1c1211dd";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn seed_001_before_1_28_force_delete_and_release_the_attachment_on_1_20() {
    if !common::on_kube("seed_001_before_1_28_force_delete_and_release_the_attachment_on_1_20", "1.20") {
        return;
    }
    let h = common::harness();
    cluster(&["seed", "001"]);
    let _reseed = Reseed;
    let v = h.server_version().await;
    assert_eq!((v.major, v.minor), (1, 20), "read live from GET /version");
    assert!(!v.honours_out_of_service());
    assert_eq!(findings_of(&h.diagnose().await, PatternId::MultiAttachNodeLost, "user-pv").len(), 1, "seeded finding");

    let dir = tempfile::tempdir().unwrap();
    let mut r = h.runner(dir.path(), "multi-attach-node-lost", "user-pv", None).await;
    let acts: Vec<&WriteAction> =
        r.playbook().steps.iter().filter_map(|s| if let StepKind::Act(a) = &s.kind { Some(a) } else { None }).collect();
    assert!(!acts.iter().any(|a| matches!(a, WriteAction::TaintOutOfService { .. })), "no taint on 1.20: {acts:?}");
    r.run_backup(None, |_| {}).await.expect("backup");
    r.check().await.expect("check");

    // the old pod is Running (not Terminating) on the lost node: force-delete, typed name
    let c = r.prepare(&Overrides::default()).await.expect("prepare force-delete");
    assert!(matches!(&c.action, WriteAction::ForceDeletePod { name, .. } if name == OLD_001), "{:?}", c.action);
    assert_eq!(c.typed_name.as_deref(), Some(OLD_001));
    assert!(r.confirm(c, Some(OLD_001)).await.expect("force-delete").ok);
    let pods: Api<Pod> = Api::namespaced(h.client().await, "incident-001");
    assert!(pods.get_opt(OLD_001).await.unwrap().is_none(), "grace 0 removed it from the API");
    assert!(pods.get_opt("user-db-79f7876cbc-chddt").await.unwrap().is_some(), "the new pod is untouched");

    // the lost node's volumesInUse entry (the dead kubelet's word that it still mounts the volume)
    let c = r.prepare(&Overrides::default()).await.expect("prepare volumesInUse release");
    assert!(
        matches!(&c.action, WriteAction::ReleaseVolumeInUse { node, volume } if node == "worker-22-51" && volume.ends_with("bbae4ef3-cabb-455e-9179-4b47b029aa3c")),
        "{:?}",
        c.action
    );
    assert!(!c.reversible && c.warnings.iter().any(|w| w.contains("powered off")), "{c:?}");
    assert!(r.confirm(c, Some("worker-22-51")).await.expect("volumesInUse release").ok);
    let nodes: Api<Node> = Api::all(h.client().await);
    let n = nodes.get_status("worker-22-51").await.unwrap();
    assert!(n.status.unwrap().volumes_in_use.unwrap_or_default().is_empty(), "entry removed");
    // The attach-detach controller's and the attacher's part (no controllers in the static seed;
    // tests/live_incidents_harness.rs proves it with the real ones): the VolumeAttachment goes.
    let vas: Api<VolumeAttachment> = Api::all(h.client().await);
    let p = serde_json::json!({"metadata": {"finalizers": null}});
    vas.patch(VA_001, &PatchParams::default(), &Patch::Merge(&p)).await.unwrap();
    vas.delete(VA_001, &Default::default()).await.unwrap();
    let w = r.wait().await.expect("wait");
    assert!(matches!(w, WaitStatus::Met(_)), "{w:?}");
    let v = r.verify().await.expect("verify");
    assert!(v.iter().all(|c| c.holds), "{v:?}");
    assert_eq!(r.cursor(), r.playbook().steps.len());
    release(&mut r).await;

    let rep = journal::read(r.journal().path()).unwrap();
    let steps = rep.steps();
    assert_eq!(steps.len(), 3, "snapshot, force-delete, volumesInUse release (the Wait writes no step record)");
    assert!(steps.iter().all(|s| s.status == WriteStatus::Done && s.intent.volume.as_deref() == Some("user-pv")));
    let plan = rep.undo_plan(None);
    assert!(plan.items.is_empty() && plan.skipped.iter().all(|(_, why)| why.starts_with("irreversible")), "{plan:?}");

    // ... and with the VolumeAttachment gone it drops the volume from the node's volumesAttached
    let p = serde_json::json!({"status": {"volumesAttached": []}});
    nodes.patch_status("worker-22-51", &PatchParams::default(), &Patch::Merge(&p)).await.unwrap();
    let after = h.diagnose().await;
    assert!(findings_of(&after, PatternId::MultiAttachNodeLost, "user-pv").is_empty(), "finding gone: {after:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn seed_003_unmap_busy_patch_restart_unmap_then_undo_the_patch() {
    let h = common::harness();
    cluster(&["seed", "003"]);
    let _reseed = Reseed;
    let seed = seed_json();
    let pv = seed["incidents"]["003"]["pv"].as_str().unwrap().to_string();
    let image = ImageRef::new("replicapool", seed["incidents"]["003"]["image"].as_str().unwrap());
    assert_eq!(findings_of(&h.diagnose().await, PatternId::UnmapBusy, &pv).len(), 1, "seeded finding");
    let dir = tempfile::tempdir().unwrap();
    let mut r = h.runner(dir.path(), "unmap-busy", &pv, Some(image.clone())).await;
    r.run_backup(None, |_| {}).await.expect("backup");
    r.check().await.expect("check");

    // patch the DaemonSet (reversible: y)
    let c = r.prepare(&Overrides::default()).await.expect("prepare patch");
    assert!(
        matches!(&c.action, WriteAction::SetMountPropagation { daemonset, from: None, to: Some(t), .. } if daemonset == "node-exporter" && t == HOST_TO_CONTAINER)
    );
    assert!(c.reversible && c.typed_name.is_none());
    assert!(r.confirm(c, None).await.unwrap().ok);
    let ds: Api<DaemonSet> = Api::namespaced(h.client().await, "incident-003");
    let root = |d: DaemonSet| {
        let c = d.spec.unwrap().template.spec.unwrap().containers.remove(0);
        c.volume_mounts.unwrap().into_iter().find(|m| m.mount_path == "/host").unwrap().mount_propagation
    };
    assert_eq!(root(ds.get("node-exporter").await.unwrap()).as_deref(), Some(HOST_TO_CONTAINER));
    assert!(r.verify().await.unwrap().iter().all(|c| c.holds));

    // restart the holder pod (irreversible: typed name)
    let c = r.prepare(&Overrides::default()).await.expect("prepare restart");
    assert!(matches!(&c.action, WriteAction::DeletePod { name, .. } if name == "node-exporter-7xq2m"));
    act_typed(&mut r, c).await;
    let pods: Api<Pod> = Api::namespaced(h.client().await, "incident-003");
    let old = pods.get("node-exporter-7xq2m").await.expect("Terminating until its kubelet confirms");
    assert!(old.metadata.deletion_timestamp.is_some(), "a graceful delete, not a force-delete");
    // kubelet's part: it stops the container (dropping its private copy of the mounts) and
    // finishes the deletion; the DaemonSet controller would then start the patched pod
    h.finish_pod("incident-003", "node-exporter-7xq2m").await;

    // Manual step on node133: `rbd unmap /dev/rbd3`. The node's part, played here: holder-003 is
    // the node's mapping (a librbd client on 127.0.0.1 = node133); stopping it closes the image.
    assert!(
        matches!(&r.current().unwrap().kind, StepKind::Manual { commands, .. } if commands.iter().any(|c| c == "rbd unmap /dev/rbd3"))
    );
    let status = rbd_json(&h, &["status", &image.spec()]).await;
    assert_eq!(status["watchers"].as_array().map(Vec::len), Some(1), "the node still maps it: {status}");
    h.stop_holder("holder-003");
    r.manual_done().expect("manual step journaled");
    let w = r.wait().await.expect("wait");
    assert!(matches!(&w, WaitStatus::Met(seen) if seen.contains("watchers: none")), "{w:?}");
    assert_eq!(r.cursor(), r.playbook().steps.len());
    release(&mut r).await;

    // kubelet's part after a successful unmap: UnmountDevice completes, the volume leaves the
    // node's volumesInUse/volumesAttached, and the Terminating pod is finished (delete, grace 0).
    let nodes: Api<Node> = Api::all(h.client().await);
    let p = serde_json::json!({"status": {"volumesAttached": [], "volumesInUse": []}});
    nodes.patch_status("node133", &PatchParams::default(), &Patch::Merge(&p)).await.unwrap();
    h.finish_pod("incident-003", "mariadb-5b8c7d9f6-kx4lq").await;
    let after = h.diagnose().await;
    assert!(findings_of(&after, PatternId::UnmapBusy, &pv).is_empty(), "finding gone: {after:#?}");

    // undo: the newest undoable step is the DaemonSet patch; it restores the previous value (unset)
    let plan = journal::read(r.journal().path()).unwrap().undo_plan(None);
    assert_eq!(plan.items.len(), 1, "the pod restart is irreversible: {plan:?}");
    let reader = h.reader().await;
    let exec = h.executor().await;
    let c = prepare_undo(&reader, &plan.items[0], &Overrides::default()).await.expect("prepare undo");
    assert!(
        matches!(&c.action, WriteAction::SetMountPropagation { from: Some(f), to: None, .. } if f == HOST_TO_CONTAINER)
    );
    let mut j = Journal::open(dir.path(), r.journal().incident(), r.journal().author().clone()).unwrap();
    assert!(confirm_undo(&exec, &mut j, &reader, c, None, &Config::defaults().remedy).await.unwrap().ok);
    assert_eq!(
        root(ds.get("node-exporter").await.unwrap()),
        None,
        "mountPropagation unset again on the live DaemonSet"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn seed_004_same_node_restage_wait_resolves_when_the_node_lets_go() {
    let h = common::harness();
    cluster(&["seed", "004"]);
    let _reseed = Reseed;
    let seed = seed_json();
    let pv = seed["incidents"]["004"]["pv"].as_str().unwrap().to_string();
    let image = ImageRef::new("replicapool", seed["incidents"]["004"]["image"].as_str().unwrap());
    assert_eq!(findings_of(&h.diagnose().await, PatternId::SameNodeRestage, &pv).len(), 1, "seeded finding");
    let dir = tempfile::tempdir().unwrap();
    let mut r = h.runner(dir.path(), "same-node-restage", &pv, Some(image.clone())).await;
    r.run_backup(None, |_| {}).await.expect("backup");
    r.check().await.expect("check");
    // the old web-0 is already gone from the API (StatefulSet names), so the Wait watches the
    // image: the node's unstage of the old incarnation still holds it
    assert!(matches!(&r.current().unwrap().kind, StepKind::Wait { .. }));
    let first = r.wait_poll().await.expect("poll");
    assert!(
        matches!(&first, WaitStatus::Pending { seen, .. } if seen.contains(&format!("{}:0/", common::host_ip()))),
        "{first:?}"
    );
    // the node's part: NodeUnstage finishes and unmaps (holder-004 stands for that mapping)
    h.stop_holder("holder-004");
    let w = r.wait().await.expect("wait");
    assert!(matches!(&w, WaitStatus::Met(seen) if seen.contains("watchers: none")), "{w:?}");
    // the delete of the new pod is only for the timeout path: skipped, and journaled as such
    let step = r.current().expect("the optional delete").clone();
    assert!(step.optional && matches!(step.kind, StepKind::Act(WriteAction::DeletePod { .. })));
    r.skip("the wait was met: no delete needed").expect("skip");
    assert!(matches!(r.states().last(), Some(StepState::Skipped(_))));
    release(&mut r).await;

    // kubelet's part: with the old unstage done, the new web-0's mount succeeds and it starts
    let pods: Api<Pod> = Api::namespaced(h.client().await, "incident-004");
    let p = serde_json::json!({"status": {"phase": "Running", "containerStatuses": [{
        "name": "web", "image": "nginx:1.19", "imageID": "", "ready": true, "restartCount": 0,
        "state": {"running": {"startedAt": jiff::Timestamp::now().to_string()}}}]}});
    pods.patch_status("web-0", &PatchParams::default(), &Patch::Merge(&p)).await.unwrap();
    let after = h.diagnose().await;
    assert!(findings_of(&after, PatternId::SameNodeRestage, &pv).is_empty(), "finding gone: {after:#?}");
    assert!(pods.get_opt("web-0").await.unwrap().is_some(), "web-0 was never deleted");
}

async fn act_typed(r: &mut unstick_core::remedy::run::Runner, c: unstick_core::remedy::run::Confirmation) {
    let typed = c.typed_name.clone();
    assert!(r.confirm(c, typed.as_deref()).await.expect("confirm").ok);
}

fn unstick_cli(h: &common::Harness, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_unstick"))
        .args(args)
        .args(["--kubeconfig", h.admin.to_str().unwrap(), "--ceph-conf", h.ceph_conf.to_str().unwrap()])
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn undo_cli_takes_the_volume_lease_and_refuses_another_holder() {
    let h = common::harness();
    cluster(&["seed", "default"]);
    let _reseed = Reseed;
    let dir = tempfile::tempdir().unwrap();
    // a journaled taint of the lost node worker-22-51 (volume user-pv), as the console writes it
    let mut r = h.runner(dir.path(), "multi-attach-node-lost", "user-pv", None).await;
    let incident = r.journal().incident().to_string();
    release(&mut r).await;
    drop(r);
    let mut j =
        Journal::open(dir.path(), &incident, Author { operator: journal::operator(), context: "kh".into() }).unwrap();
    j.set_volume(Some("user-pv".into()));
    let taint = WriteAction::TaintOutOfService { node: "worker-22-51".into() };
    let live = unstick_core::remedy::action::precheck::read_live(
        &h.reader().await,
        &unstick_core::remedy::run::scope_for(&taint),
    )
    .await
    .unwrap();
    let approved = approve(&taint, &live, &Overrides::default()).unwrap();
    let step = j.intent("multi-attach-node-lost/3", &taint, None, vec![]).unwrap();
    let res = h.executor().await.execute(&approved).await;
    assert!(res.ok, "{res:?}");
    j.outcome(res.outcome(step)).unwrap();
    drop(j);
    let nodes: Api<Node> = Api::all(h.client().await);
    let has_taint = |n: Node| {
        n.spec.and_then(|s| s.taints).unwrap_or_default().iter().any(|t| t.key == "node.kubernetes.io/out-of-service")
    };
    assert!(has_taint(nodes.get("worker-22-51").await.unwrap()));

    // another operator holds the volume's Lease: refused, exit 1, holder named, nothing sent
    let exec = h.executor().await;
    let other = LeaseManager::new(
        &exec,
        "kube-system",
        "alice@elsewhere#7",
        Duration::from_secs(60),
        unstick_core::clock::wall(),
    );
    let held = other.acquire(&lease_name("user-pv")).await.expect("alice takes the Lease");
    let base = dir.path().to_str().unwrap();
    // guarded unfence first: worker-22-51 is not shown to have rebooted since the taint
    let o = unstick_cli(&h, &["undo", &incident, "--dir", base, "--yes-i-typed", "y"]);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("node worker-22-51 has no journaled fence") && text.contains("to override"), "{text}");
    let unfence = ["--yes-i-typed", "y", "--not-rebooted", "worker-22-51"];
    let o = unstick_cli(&h, &[&["undo", &incident, "--dir", base][..], &unfence[..]].concat());
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("alice@elsewhere#7") && text.contains("nothing was sent"), "{text}");
    assert!(has_taint(nodes.get("worker-22-51").await.unwrap()), "still tainted");
    assert_eq!(
        journal::read(&dir.path().join(&incident).join(journal::JOURNAL_FILE)).unwrap().steps().len(),
        1,
        "no intent journaled"
    );
    other.release(held).await.unwrap();

    // free: the undo takes the Lease, sends, journals, and releases the Lease
    let since = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(1);
    let o = unstick_cli(&h, &[&["undo", &incident, "--dir", base][..], &unfence[..]].concat());
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains("OVERRIDE: node worker-22-51"), "{text}");
    assert!(!has_taint(nodes.get("worker-22-51").await.unwrap()), "taint removed by the undo");
    let lease = lease_name("user-pv");
    assert!(
        read_holder(h.client().await, "kube-system", &lease, Duration::from_secs(5), jiff::Timestamp::now())
            .await
            .unwrap()
            .is_none(),
        "released"
    );
    let rep = journal::read(&dir.path().join(&incident).join(journal::JOURNAL_FILE)).unwrap();
    let undo = rep.steps().into_iter().find(|s| s.intent.undo_of == Some(step)).expect("undo journaled");
    assert_eq!(undo.intent.volume.as_deref(), Some("user-pv"));
    // the audit log shows the Lease being created and deleted by this run, before and after
    tokio::time::sleep(Duration::from_secs(2)).await; // audit log flush
    let log = std::fs::read_to_string(&h.audit_log).unwrap_or_default();
    let mut seen = Vec::new();
    for line in log.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let at: Option<jiff::Timestamp> = v["requestReceivedTimestamp"].as_str().and_then(|t| t.parse().ok());
        let uri = v["requestURI"].as_str().unwrap_or("");
        if at.is_some_and(|t| t >= since)
            && uri.contains("/namespaces/kube-system/leases")
            && v["stage"] == "ResponseComplete"
        {
            let name = v["objectRef"]["name"].as_str().unwrap_or("");
            if name == lease || (v["verb"] == "create" && uri.ends_with("/leases")) {
                seen.push((
                    v["verb"].as_str().unwrap_or("").to_string(),
                    v["responseStatus"]["code"].as_i64().unwrap_or(0),
                ));
            }
        }
    }
    let create = seen.iter().position(|(verb, code)| verb == "create" && *code == 201);
    let delete = seen.iter().rposition(|(verb, code)| verb == "delete" && *code == 200);
    assert!(matches!((create, delete), (Some(c), Some(d)) if c < d), "Lease created then deleted: {seen:?}");
}
