use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DeleteParams, ListParams};

use super::scenario::Scenario;
use super::*;

fn stale_lock() -> Sim {
    let s = Scenario::embedded("stale-lock").unwrap().unwrap();
    s.start("2026-11-22T03:00:00Z".parse().unwrap(), 0.0)
}

#[tokio::test]
async fn a_kube_client_lists_gets_and_deletes_through_the_simulation() {
    let sim = stale_lock();
    let client = sim.client();
    let nodes: Api<Node> = Api::all(client.clone());
    let list = nodes.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 2);
    let pods: Api<Pod> = Api::namespaced(client.clone(), "incident-000");
    let p = pods.get("index-api-3362878852-pzxm8").await.unwrap();
    let uid = p.metadata.uid.clone().unwrap();
    let e = pods.get("nope").await.unwrap_err();
    assert!(matches!(e, kube::Error::Api(ref s) if s.code == 404), "{e:?}");
    let wrong = DeleteParams {
        preconditions: Some(kube::api::Preconditions { uid: Some("x".into()), resource_version: None }),
        ..Default::default()
    };
    assert!(
        matches!(pods.delete("index-api-3362878852-pzxm8", &wrong).await, Err(kube::Error::Api(ref s)) if s.code == 409)
    );
    let ok = DeleteParams {
        grace_period_seconds: Some(0),
        preconditions: Some(kube::api::Preconditions { uid: Some(uid), resource_version: None }),
        ..Default::default()
    };
    pods.delete("index-api-3362878852-pzxm8", &ok).await.unwrap();
    assert!(pods.get_opt("index-api-3362878852-pzxm8").await.unwrap().is_none());
    assert!(sim.world().writes.iter().any(|(_, w)| w.contains("delete pods index-api-3362878852-pzxm8 (grace 0)")));
    let v = client.apiserver_version().await.unwrap();
    assert_eq!((v.major.as_str(), v.minor.as_str()), ("1", "20"));
}

#[tokio::test]
async fn reflector_watches_see_the_simulations_changes() {
    let sim = stale_lock();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let stores = crate::sources::kube::start(sim.client(), None, tx, crate::clock::wall());
    let live = async {
        let mut live = 0;
        while live < 6 {
            if let Some(crate::sources::kube::KubeMsg::State(_, crate::sources::kube::SourceState::Live)) =
                rx.recv().await
            {
                live += 1;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), live).await.expect("all six kinds go live");
    // the lock goes, the controller's pod mounts after mount_seconds: the store sees it Running
    sim.run_ceph(&[
        "rbd".into(),
        "lock".into(),
        "rm".into(),
        "mioss/index-api-image".into(),
        "kubelet_lock_magic_node1".into(),
        "client.24128".into(),
    ]);
    sim.advance(Duration::from_secs(20));
    let running = async {
        loop {
            let mut snap = crate::model::Snapshot::default();
            stores.fill(&mut snap, jiff::Timestamp::now());
            if snap.pods.iter().any(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")) {
                return;
            }
            rx.recv().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), running).await.expect("the watch delivers the Running pod");
}

#[test]
fn the_ceph_cli_runs_against_the_simulation() {
    let sim = stale_lock();
    let cli = sim.ceph_cli(crate::config::Config::defaults().ceph);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let facts =
        rt.block_on(crate::sources::ceph::read_image(&cli, &crate::model::ImageRef::new("mioss", "index-api-image")));
    assert_eq!(facts.locks.value.unwrap()[0].locker, "client.24128");
    assert!(facts.watchers.value.unwrap().is_empty());
}

#[test]
fn a_lost_nodes_in_tree_volume_is_force_detached_six_minutes_after_its_pod_is_gone() {
    let mut s = Scenario::embedded("node-loss-five-volumes").unwrap().unwrap();
    s.api_version = "1.20".into();
    let sim = s.start("2026-11-22T03:00:00Z".parse().unwrap(), 0.0);
    let attached = |sim: &Sim| -> Vec<String> {
        let n = sim.get(&store::ObjKey::new(store::Res::Node, "", "worker-7")).unwrap();
        n["status"]["volumesAttached"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|a| a["name"].as_str().map(String::from))
            .collect()
    };
    let legacy = "kubernetes.io/rbd/replicapool:legacy-index-image";
    sim.advance(Duration::from_secs(600));
    assert!(attached(&sim).iter().any(|a| a == legacy), "held while the old pod exists");
    let k = store::ObjKey::new(store::Res::Pod, "incident-loss", "legacy-index-5f6b-olda5");
    sim.delete(&k, None, None, Some(0)).unwrap();
    sim.advance(Duration::from_secs(300));
    assert!(attached(&sim).iter().any(|a| a == legacy), "not before maxWaitForUnmountDuration");
    sim.advance(Duration::from_secs(61));
    assert!(!attached(&sim).iter().any(|a| a == legacy), "force-detached after 6 minutes");
}

#[test]
fn ceph_writes_are_recorded_without_client_options() {
    let sim = stale_lock();
    let argv: Vec<String> = "rbd --client_mount_timeout 5 --rados_mon_op_timeout 10 lock rm mioss/index-api-image kubelet_lock_magic_node1 client.24128"
        .split(' ')
        .map(String::from)
        .collect();
    assert_eq!(sim.run_ceph(&argv).0, 0);
    sim.run_ceph(&["rbd".into(), "status".into(), "mioss/index-api-image".into()]);
    let writes: Vec<String> = sim.world().writes.iter().map(|(_, w)| w.clone()).collect();
    assert_eq!(writes, ["rbd lock rm mioss/index-api-image kubelet_lock_magic_node1 client.24128"]);
}

#[test]
fn a_pod_stopped_by_its_owner_releases_its_volume_and_the_waiting_pod_mounts() {
    let s = Scenario::embedded("rwo-claim-shared").unwrap().unwrap();
    let sim = s.start("2026-11-22T03:00:00Z".parse().unwrap(), 0.0);
    let img = "replicapool/csi-vol-7c9f0a1b-2c3d-4e5f-8a9b-0c1d2e3f4a5b".to_string();
    for _ in 0..40 {
        sim.advance(Duration::from_secs(10));
        sim.step();
    }
    let w = sim.world();
    let r: Vec<&String> = w.reactions.iter().map(|(_, r)| r).collect();
    let watchers: Vec<String> = w.ceph.images[&img].watchers.iter().map(|(wt, _)| wt.address.clone()).collect();
    assert!(watchers.iter().all(|a| a.starts_with("10.0.6.12:")), "{watchers:?} {r:#?}");
    let running = w.store.list(super::store::Res::Pod, Some("wiki"));
    assert_eq!(running.len(), 1, "{r:#?}");
    assert_eq!(running[0]["status"]["phase"], "Running", "{r:#?}");
}

/// What the real 1.37.2 controllers did on the harness (incident 001, tests/harness/SEED.md "The
/// current control plane"): the replacement pod's event reads `Waiting for detach for volume …`;
/// the console's taint (no `timeAdded`) is acted on at the controllers' next pass, the old pod
/// force-deleted and the attachment released together (real: 10.2 s, then 0.1 s).
#[test]
fn on_1_37_the_out_of_service_taint_releases_the_lost_node_after_out_of_service_seconds() {
    let mut s = Scenario::embedded("lost-node-multi-attach").unwrap().unwrap();
    s.api_version = "1.37".into();
    s.events.clear(); // the scenario's own (1.20-worded) event; the simulation posts its own
    let sim = s.start("2026-11-22T03:00:00Z".parse().unwrap(), 0.0);
    sim.step();
    let old = store::ObjKey::new(store::Res::Pod, "incident-001", "user-db-79f7876cbc-dl8b8");
    let vas = |sim: &Sim| sim.list(store::Res::VolumeAttachment, None).0.len();
    let w = sim.world();
    let ev: Vec<String> =
        w.store.list(store::Res::Event, Some("incident-001")).iter().map(|e| e["message"].to_string()).collect();
    assert!(ev.iter().any(|m| m.contains("Waiting for detach for volume \\\"user-pv\\\"")), "{ev:#?}");
    drop(w);
    let node = store::ObjKey::new(store::Res::Node, "", "worker-22-51");
    let taint = serde_json::json!([{"op": "add", "path": "/spec/taints/-", "value":
        {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}}]);
    sim.patch(&node, &taint, true).unwrap();
    sim.step();
    sim.advance(Duration::from_secs(9));
    assert!(sim.get(&old).is_some(), "not before out_of_service_seconds");
    assert_eq!(vas(&sim), 1);
    sim.advance(Duration::from_secs(2));
    assert!(sim.get(&old).is_none(), "force-deleted");
    assert_eq!(vas(&sim), 0, "detached");
}
