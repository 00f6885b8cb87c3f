//! Builders of Kubernetes objects from compact arguments, for tests and screen snapshots.
//!
//! [`incidents`] is a fixed snapshot shaped like the harness's default seed (the five seed
//! write-ups), with fixed timestamps so rendered screens are stable.

use std::sync::Arc;

use crate::model::objects::{Event, Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment};
use jiff::Timestamp;
use serde_json::json;

use crate::model::ceph::{BlocklistEntry, BlocklistTarget, Lock, Watcher};
use crate::model::kube::Readiness;
use crate::model::{CephError, CephFacts, CephReadError, ImageFacts, ImageRef, Observed, Snapshot};

#[allow(clippy::expect_used, reason = "fixed fixture JSON, exercised by the tests")]
fn from<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Arc<T> {
    Arc::new(serde_json::from_value(v).expect("fixture JSON matches the k8s-openapi type"))
}

/// A node with InternalIP `ip`, `Ready` status (`True`/`Unknown`/`False`) since `since`, and the
/// given `volumesInUse` unique names (also listed as attached).
pub fn node(name: &str, ip: &str, ready: &str, since: &str, in_use: &[&str]) -> Arc<Node> {
    let attached: Vec<_> = in_use.iter().map(|u| json!({"name": u, "devicePath": ""})).collect();
    let mut taints = vec![];
    let readiness = Readiness::from_status(Some(ready));
    if !readiness.is_ready() {
        taints.push(json!({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}));
    }
    from(json!({
        "metadata": {"name": name},
        "spec": {"taints": taints},
        "status": {
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": since,
                            "reason": if readiness.is_ready() {"KubeletReady"} else {"NodeStatusUnknown"}}],
            "volumesInUse": in_use,
            "volumesAttached": attached,
        }
    }))
}

/// A Ceph read that failed because `cmd` timed out after 10 s: "`cmd` timed out after 10 s (killed)".
pub fn timed_out(cmd: &str) -> CephReadError {
    CephError::Timeout { cmd: cmd.into(), secs: 10 }.into()
}

/// A pod on `node` mounting `claim`; `state` is `Running`, `ContainerCreating`, or `Terminating`
/// (deletionTimestamp = `at`).
pub fn pod(ns: &str, name: &str, node: &str, claim: &str, state: &str, at: &str) -> Arc<Pod> {
    let mut meta = json!({"namespace": ns, "name": name, "creationTimestamp": at, "labels": {"app": name}});
    let status = match state {
        "Running" => json!({"phase": "Running"}),
        "Terminating" => {
            meta["deletionTimestamp"] = json!(at);
            meta["finalizers"] = json!(["unstick.test/hold"]);
            json!({"phase": "Running"})
        }
        waiting => json!({"phase": "Pending", "containerStatuses": [{
            "name": "app", "image": "busybox", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"waiting": {"reason": waiting}}}]}),
    };
    from(json!({
        "metadata": meta,
        "spec": {"nodeName": node, "containers": [{"name": "app", "image": "busybox"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]},
        "status": status,
    }))
}

/// A bound RWO claim.
pub fn pvc(ns: &str, name: &str, pv: &str) -> Arc<PersistentVolumeClaim> {
    from(json!({
        "metadata": {"namespace": ns, "name": name},
        "spec": {"volumeName": pv, "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    }))
}

/// A ceph-csi PV for `replicapool/csi-vol-<uuid>` bound to `ns/claim`.
pub fn csi_pv(name: &str, ns: &str, claim: &str, uuid: &str) -> Arc<PersistentVolume> {
    from(json!({
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
            "claimRef": {"namespace": ns, "name": claim},
            "csi": {"driver": "rbd.csi.ceph.com",
                    "volumeHandle": format!("0001-0009-rook-ceph-0000000000000002-{uuid}"),
                    "volumeAttributes": {"clusterID": "rook-ceph", "pool": "replicapool",
                                         "imageName": format!("csi-vol-{uuid}"), "imageFeatures": "layering"}}
        },
        "status": {"phase": "Bound"}
    }))
}

/// An in-tree `kubernetes.io/rbd` PV for `pool/image` bound to `ns/claim`.
pub fn rbd_pv(name: &str, ns: &str, claim: &str, pool: &str, image: &str) -> Arc<PersistentVolume> {
    from(json!({
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"},
            "claimRef": {"namespace": ns, "name": claim},
            "rbd": {"monitors": ["127.0.0.1:16789"], "pool": pool, "image": image, "user": "admin"}
        },
        "status": {"phase": "Bound"}
    }))
}

/// A CSI VolumeAttachment of `pv` to `node`, attached, with the external-attacher finalizer.
pub fn va(name: &str, pv: &str, node: &str, deleting_since: Option<&str>) -> Arc<VolumeAttachment> {
    let mut meta = json!({"name": name, "finalizers": ["external-attacher/rbd-csi-ceph-com"]});
    if let Some(t) = deleting_since {
        meta["deletionTimestamp"] = json!(t);
    }
    from(json!({
        "metadata": meta,
        "spec": {"attacher": "rbd.csi.ceph.com", "nodeName": node, "source": {"persistentVolumeName": pv}},
        "status": {"attached": true}
    }))
}

/// A Warning event about pod `ns/pod`.
pub fn event(ns: &str, pod: &str, reason: &str, message: &str, count: i32, last: &str) -> Arc<Event> {
    from(json!({
        "metadata": {"namespace": ns, "name": format!("{pod}.{reason}").to_lowercase()},
        "involvedObject": {"kind": "Pod", "namespace": ns, "name": pod},
        "reason": reason, "message": message, "type": "Warning", "count": count,
        "firstTimestamp": last, "lastTimestamp": last,
        "source": {"component": "kubelet"}
    }))
}

const UUID_001: &str = "5b7c3f5e-1d2a-4c3b-9e8f-0a1b2c3d4e01";
const UUID_002: &str = "5b7c3f5e-1d2a-4c3b-9e8f-0a1b2c3d4e02";
const UUID_003: &str = "5b7c3f5e-1d2a-4c3b-9e8f-0a1b2c3d4e03";
const UUID_004: &str = "5b7c3f5e-1d2a-4c3b-9e8f-0a1b2c3d4e04";

/// The fixed clock of [`incidents`]: 2026-11-22T03:00:00Z.
#[allow(clippy::expect_used, reason = "a constant timestamp")]
pub fn now() -> Timestamp {
    "2026-11-22T03:00:00Z".parse().expect("valid timestamp")
}

/// A snapshot with all five seed incidents, consistent with itself:
/// - 000 stale-lock: `incident-000/index-api-...-pzxm8` ContainerCreating on `k8s-node-a`; in-tree PV
///   `index-api-pv` → `replicapool/index-api-image`, locked by `k8s-node-lost` (127.0.0.1).
/// - 001/002: `k8s-node-lost` NotReady since 02:40; old pods Terminating there, replacements
///   ContainerCreating on `k8s-node-b` with Multi-Attach events; VAs still on the lost node; a
///   watcher from 127.0.0.1 on 002's image.
/// - 003: `k8s-node-c` Ready, old pod Terminating with the exit-status-16 event.
/// - 004: `web-0` Terminating and its replacement ContainerCreating on `k8s-node-d`.
pub fn incidents() -> Snapshot {
    let csi = |u: &str| format!("kubernetes.io/csi/rbd.csi.ceph.com^0001-0009-rook-ceph-0000000000000002-{u}");
    let t = "2026-11-22T02:40:00Z";
    let nodes = vec![
        node("k8s-node-a", "10.46.181.146", "True", "2026-11-01T00:00:00Z", &[]),
        node("k8s-node-b", "10.10.11.22", "True", "2026-11-01T00:00:00Z", &[]),
        node("k8s-node-c", "10.125.54.133", "True", "2026-11-01T00:00:00Z", &[&csi(UUID_003)]),
        node("k8s-node-d", "10.20.0.14", "True", "2026-11-01T00:00:00Z", &[&csi(UUID_004)]),
        node("k8s-node-lost", "127.0.0.1", "Unknown", t, &[&csi(UUID_001), &csi(UUID_002)]),
    ];
    let pods = vec![
        pod(
            "incident-000",
            "index-api-3362878852-pzxm8",
            "k8s-node-a",
            "index-api-pvc",
            "ContainerCreating",
            "2026-11-22T02:50:00Z",
        ),
        pod(
            "incident-001",
            "user-db-79f7876cbc-dl8b8",
            "k8s-node-lost",
            "user-db-pvc",
            "Terminating",
            "2026-11-22T02:46:00Z",
        ),
        pod(
            "incident-001",
            "user-db-79f7876cbc-x7k2p",
            "k8s-node-b",
            "user-db-pvc",
            "ContainerCreating",
            "2026-11-22T02:46:05Z",
        ),
        pod("incident-002", "sleep-6f7c8cc954-rcpnc", "k8s-node-lost", "pvc1", "Terminating", "2026-11-22T02:46:00Z"),
        pod(
            "incident-002",
            "sleep-6f7c8cc954-5hptw",
            "k8s-node-b",
            "pvc1",
            "ContainerCreating",
            "2026-11-22T02:46:05Z",
        ),
        pod("incident-003", "mysql-0", "k8s-node-c", "data-mysql-0", "Terminating", "2026-11-22T02:30:00Z"),
        pod("incident-004", "web-0", "k8s-node-d", "www-web-0", "ContainerCreating", "2026-11-22T02:58:00Z"),
        pod("incident-004", "api-5d8f7-healthy", "k8s-node-d", "api-data", "Running", "2026-11-20T00:00:00Z"),
    ];
    let pvcs = vec![
        pvc("incident-000", "index-api-pvc", "index-api-pv"),
        pvc("incident-001", "user-db-pvc", "user-pv"),
        pvc("incident-002", "pvc1", "pvc-2de7d17c-04c6-11eb-b22b-5254002d96de"),
        pvc("incident-003", "data-mysql-0", "pvc-9984bdab-9c79-11e9-b8ba-fa163ed7c802"),
        pvc("incident-004", "www-web-0", "pvc-www-web-0"),
    ];
    let pvs = vec![
        rbd_pv("index-api-pv", "incident-000", "index-api-pvc", "replicapool", "index-api-image"),
        csi_pv("user-pv", "incident-001", "user-db-pvc", UUID_001),
        csi_pv("pvc-2de7d17c-04c6-11eb-b22b-5254002d96de", "incident-002", "pvc1", UUID_002),
        csi_pv("pvc-9984bdab-9c79-11e9-b8ba-fa163ed7c802", "incident-003", "data-mysql-0", UUID_003),
        csi_pv("pvc-www-web-0", "incident-004", "www-web-0", UUID_004),
    ];
    let volume_attachments = vec![
        va("csi-001", "user-pv", "k8s-node-lost", None),
        va("csi-002", "pvc-2de7d17c-04c6-11eb-b22b-5254002d96de", "k8s-node-lost", None),
        va("csi-003", "pvc-9984bdab-9c79-11e9-b8ba-fa163ed7c802", "k8s-node-c", None),
        va("csi-004", "pvc-www-web-0", "k8s-node-d", None),
    ];
    let events = vec![
        event(
            "incident-000",
            "index-api-3362878852-pzxm8",
            "FailedMount",
            "Unable to mount volumes for pod \"index-api-3362878852-pzxm8_incident-000(7e6c415a-f40c-11e6-ad11-00163e1625a9)\": timeout expired waiting for volumes to attach or mount for pod \"incident-000\"/\"index-api-3362878852-pzxm8\". list of unmounted volumes=[data]. list of unattached volumes=[data]",
            12,
            "2026-11-22T02:59:00Z",
        ),
        event(
            "incident-000",
            "index-api-3362878852-pzxm8",
            "FailedMount",
            "MountVolume.SetUp failed for volume \"index-api-pv\" : rbd: image index-api-image is locked by other nodes",
            12,
            "2026-11-22T02:59:00Z",
        ),
        event(
            "incident-001",
            "user-db-79f7876cbc-x7k2p",
            "FailedAttachVolume",
            "Multi-Attach error for volume \"user-pv\" Volume is already used by pod(s) user-db-79f7876cbc-dl8b8",
            8,
            "2026-11-22T02:58:00Z",
        ),
        event(
            "incident-002",
            "sleep-6f7c8cc954-5hptw",
            "FailedAttachVolume",
            "Multi-Attach error for volume \"pvc-2de7d17c-04c6-11eb-b22b-5254002d96de\" Volume is already exclusively attached to one node and can't be attached to another",
            5,
            "2026-11-22T02:57:00Z",
        ),
        event(
            "incident-002",
            "sleep-6f7c8cc954-5hptw",
            "FailedMount",
            &format!(
                "MountVolume.WaitForAttach failed for volume \"pvc-2de7d17c-04c6-11eb-b22b-5254002d96de\" : rbd image replicapool/csi-vol-{UUID_002} is still being used"
            ),
            2,
            "2026-11-22T02:59:30Z",
        ),
        event(
            "incident-003",
            "mysql-0",
            "FailedUnmount",
            "UnmountDevice failed for volume \"pvc-9984bdab-9c79-11e9-b8ba-fa163ed7c802\" : rbd: failed to unmap device /dev/rbd3, error exit status 16, rbd output: [114 98 100 58 32 115 121 115 102 115 32 119 114 105 116 101 32 102 97 105 108 101 100 10 114 98 100 58 32 117 110 109 97 112 32 102 97 105 108 101 100 58 32 40 49 54 41 32 68 101 118 105 99 101 32 111 114 32 114 101 115 111 117 114 99 101 32 98 117 115 121 10]\u{1b}[31m",
            30,
            "2026-11-22T02:59:50Z",
        ),
    ];
    let at = now();
    let mut ceph = CephFacts::default();
    let facts = |w: Vec<Watcher>, l: Vec<Lock>| ImageFacts {
        watchers: Observed { value: Ok(w), at },
        locks: Observed { value: Ok(l), at },
    };
    ceph.images.insert(
        ImageRef::new("replicapool", "index-api-image"),
        facts(
            vec![],
            vec![Lock {
                id: "kubelet_lock_magic_k8s-node-lost".into(),
                locker: "client.24128".into(),
                address: "127.0.0.1:0/1864102866".into(),
            }],
        ),
    );
    ceph.images.insert(
        ImageRef::new("replicapool", format!("csi-vol-{UUID_002}")),
        facts(
            vec![Watcher { address: "127.0.0.1:0/4208975345".into(), client: 364378, cookie: 18446462598732840961 }],
            vec![],
        ),
    );
    ceph.blocklist = Some(Observed {
        value: Ok(vec![BlocklistEntry {
            target: BlocklistTarget::Addr("127.0.0.1:0/3735928559".into()),
            until: Some("2026-11-22T03:50:00.000000+0000".into()),
        }]),
        at,
    });
    Snapshot { nodes, pods, pvcs, pvs, volume_attachments, events, ceph, taken_at: Some(at), ..Snapshot::default() }
}
