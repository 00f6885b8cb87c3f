//! An in-tree RBD PV on a release without the plugin (1.31+): a finding with its `spec.rbd` and the
//! release as evidence, for a pod that waits on it, from the start; nothing on older releases, on
//! CSI PVs, or for a pod that runs.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::diagnose::tests::{at, snap_with};
use crate::fixtures::{csi_pv, node, pod, pvc};
use crate::model::objects::{Node, PersistentVolume};

/// An in-tree RBD PV shaped like Kubernetes' own `rbd` example and the harness's seed 000 PV.
fn in_tree_pv() -> Arc<PersistentVolume> {
    Arc::new(
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "index-api-pv", "labels": {"app": "index-api"}},
            "spec": {
                "capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "", "volumeMode": "Filesystem",
                "claimRef": {"namespace": "search", "name": "index-api-pvc"},
                "rbd": {"monitors": ["10.16.154.78:6789", "10.16.154.82:6789"], "pool": "kube",
                        "image": "index-api-image", "fsType": "ext4", "user": "admin", "keyring": "/etc/ceph/keyring",
                        "secretRef": {"name": "ceph-secret", "namespace": "search"}}
            },
            "status": {"phase": "Bound"}
        }))
        .unwrap(),
    )
}

fn with_kubelet(n: Arc<Node>, version: &str) -> Arc<Node> {
    let mut n = (*n).clone();
    let st = n.status.get_or_insert_with(Default::default);
    st.node_info.get_or_insert_with(Default::default).kubelet_version = version.into();
    Arc::new(n)
}

/// A pod created `since` seconds ago, in `state`, on an in-tree PV (or `pv`), the API server at
/// `server` (`None`: not read) and node n1's kubelet at `kubelet`.
fn snap(state: &str, since: i64, server: Option<(u32, u32)>, kubelet: &str, pv: Arc<PersistentVolume>) -> Snapshot {
    let mut s = snap_with(
        vec![with_kubelet(node("n1", "10.0.0.1", "True", &at(-3600), &[]), kubelet)],
        vec![pod("search", "index-api-0", "n1", "index-api-pvc", state, &at(since))],
        vec![pvc("search", "index-api-pvc", pv.metadata.name.as_deref().unwrap())],
        vec![pv],
        vec![],
    );
    s.server_version = server;
    s
}

fn all(s: &Snapshot) -> Vec<Finding> {
    run(s, &Lineage::build(s), &crate::config::Config::defaults().diagnose, crate::fixtures::now())
}

#[test]
fn on_1_37_a_pod_of_an_in_tree_rbd_pv_is_found_at_once_with_the_pv_and_the_release() {
    // 10 s old, no event at all: what the harness's 1.37.2 showed (scheduled, then nothing)
    let f = all(&snap("ContainerCreating", -10, Some((1, 37)), "v1.37.2", in_tree_pv()));
    assert_eq!(f.len(), 1, "{f:#?}");
    let f = &f[0];
    assert_eq!(f.pattern, PatternId::InTreeRbdUnsupported);
    assert_eq!(f.severity, Severity::Critical);
    assert_eq!(f.volume.as_deref(), Some("index-api-pv"));
    assert!(f.summary.contains("search/index-api-0") && f.summary.contains("no in-tree RBD plugin"), "{}", f.summary);
    let ev: Vec<(&EvidenceSource, &str)> = f.evidence.iter().map(|e| (&e.source, e.text.as_str())).collect();
    assert!(
        ev.contains(&(
            &EvidenceSource::PersistentVolume,
            "PV index-api-pv spec.rbd: monitors 10.16.154.78:6789,10.16.154.82:6789 pool kube image index-api-image (in-tree kubernetes.io/rbd, no CSI driver)"
        )),
        "{ev:#?}"
    );
    assert!(
        ev.iter().any(|(s, t)| **s == EvidenceSource::ServerVersion
            && t.starts_with("API server 1.37: the in-tree RBD plugin and its CSI migration were removed in 1.31")),
        "{ev:#?}"
    );
    assert!(f.explanation.contains("ceph-csi") && f.explanation.contains("1.31"), "{}", f.explanation);
}

#[test]
fn from_1_31_exactly_and_not_before() {
    let found = |v| {
        all(&snap("ContainerCreating", -10, Some(v), "", in_tree_pv()))
            .iter()
            .any(|f| f.pattern == PatternId::InTreeRbdUnsupported)
    };
    assert!(found((1, 31)));
    assert!(!found((1, 30)));
    assert!(!found((1, 20)));
    // on 1.30 a pod past the grace is still never silent, only not this cause
    let f = all(&snap("ContainerCreating", -600, Some((1, 30)), "", in_tree_pv()));
    assert_eq!(f.iter().map(|f| f.pattern).collect::<Vec<_>>(), [PatternId::Unexplained], "{f:#?}");
}

#[test]
fn without_the_server_version_the_nodes_kubelet_version_decides() {
    let f = all(&snap("ContainerCreating", -10, None, "v1.31.0-gke.1200", in_tree_pv()));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(
        f[0].evidence.iter().any(|e| e.source == EvidenceSource::NodeStatus
            && e.text.starts_with("node n1 kubelet v1.31.0-gke.1200: the in-tree RBD plugin")),
        "{:#?}",
        f[0].evidence
    );
    assert!(all(&snap("ContainerCreating", -10, None, "v1.30.4", in_tree_pv())).is_empty());
    assert!(all(&snap("ContainerCreating", -10, None, "", in_tree_pv())).is_empty(), "unknown release: nothing yet");
}

#[test]
fn csi_pvs_and_running_pods_are_not_this() {
    let csi = csi_pv("index-api-pv", "search", "index-api-pvc", "7a7c3f5e-1d2a-4c3b-9e8f-0a1b2c3d4e31");
    assert!(all(&snap("ContainerCreating", -10, Some((1, 37)), "v1.37.2", csi)).is_empty());
    assert!(all(&snap("Running", -600, Some((1, 37)), "v1.37.2", in_tree_pv())).is_empty());
}

#[test]
fn on_1_37_the_in_tree_answer_stands_beside_a_stale_lock_and_says_its_playbook_will_not_do() {
    // Seed 000's shape: the in-tree plugin's `kubelet_lock_magic_` lock left by a dead node, the
    // new pod waiting with kubelet's lock event. On 1.20 that is stale-lock (removing the lock
    // lets the pod mount); on 1.31+ nothing mounts the PV, so the lock's playbook alone won't do.
    let lock = crate::model::ceph::Lock {
        id: "kubelet_lock_magic_node9".into(),
        locker: "client.24128".into(),
        address: "10.0.0.9:0/1864102866".into(),
    };
    let text =
        "MountVolume.SetUp failed for volume \"index-api-pv\" : rbd: image index-api-image is locked by other nodes";
    let of = |server| {
        let mut s = snap("ContainerCreating", -600, Some(server), "v1.20.2", in_tree_pv());
        s.ceph.images.insert(
            crate::model::ImageRef::new("kube", "index-api-image"),
            crate::diagnose::tests::facts(vec![], vec![lock.clone()]),
        );
        s.events = vec![crate::fixtures::event("search", "index-api-0", "FailedMount", text, 12, &at(-30))];
        all(&s)
    };
    let patterns = |f: &[Finding]| f.iter().map(|f| f.pattern).collect::<Vec<_>>();
    let old = of((1, 20));
    assert_eq!(patterns(&old), vec![PatternId::StaleLock]);
    assert!(!old[0].evidence.iter().any(|e| e.text.contains("in-tree-rbd-unsupported")));
    let new = of((1, 37));
    let mut p = patterns(&new);
    p.sort_by_key(|p| p.as_str());
    assert_eq!(p, vec![PatternId::InTreeRbdUnsupported, PatternId::StaleLock], "{new:#?}");
    let lock_finding = new.iter().find(|f| f.pattern == PatternId::StaleLock).unwrap();
    assert!(
        lock_finding.evidence.iter().any(|e| e.text.contains("playbook alone will not make the pod run")),
        "{:#?}",
        lock_finding.evidence
    );
}
