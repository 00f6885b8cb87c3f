//! What the slim objects of [`super::objects`] keep and drop when parsed.

use super::objects::*;

#[test]
fn a_pv_keeps_only_the_volume_attributes_read() {
    let pv: PersistentVolume = serde_json::from_value(serde_json::json!({"metadata": {"name": "pv1"},
        "spec": {"csi": {"driver": "rbd.csi.ceph.com", "volumeHandle": "0001-h", "fsType": "ext4",
            "nodeStageSecretRef": {"name": "s", "namespace": "rook-ceph"},
            "volumeAttributes": {"pool": "replicapool", "imageName": "csi-vol-1", "clusterID": "rook-ceph",
                "imageFeatures": "layering", "radosNamespace": ""}}}}))
    .unwrap();
    let csi = pv.spec.as_ref().and_then(|s| s.csi.as_ref()).unwrap();
    let a = csi.volume_attributes.as_ref().unwrap();
    assert_eq!(
        (a.get("pool").map(String::as_str), a.get("imageName").map(String::as_str)),
        (Some("replicapool"), Some("csi-vol-1"))
    );
    assert_eq!(a.get("clusterID"), None);
    assert_eq!(
        serde_json::to_value(csi).unwrap(),
        serde_json::json!({"driver": "rbd.csi.ceph.com", "volumeHandle": "0001-h",
            "volumeAttributes": {"imageName": "csi-vol-1", "pool": "replicapool", "radosNamespace": ""}})
    );
}

#[test]
fn dropped_volumes_containers_and_statuses_leave_no_buffer() {
    let p: Pod = serde_json::from_value(serde_json::json!({"metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "volumeMounts": [{"name": "cfg", "mountPath": "/c"}]}, {"name": "b"}],
            "volumes": [{"name": "cfg", "configMap": {"name": "c"}}, {"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
                {"name": "tok", "projected": {}}]},
        "status": {"containerStatuses": [{"name": "a", "state": {"running": {}}}, {"name": "b", "state": {"running": {}}}]}}))
    .unwrap();
    let spec = p.spec.as_ref().unwrap();
    let vols = spec.volumes.as_ref().unwrap();
    assert_eq!((vols.len(), vols.capacity()), (1, 1));
    assert_eq!((spec.containers.len(), spec.containers.capacity()), (0, 0));
    let cs = p.status.as_ref().and_then(|s| s.container_statuses.as_ref()).unwrap();
    assert_eq!((cs.len(), cs.capacity()), (0, 0));
}

/// Parsed from text as the lists are (serde_json gives a sequence no length hint, where
/// `from_value` would): every kept list in a buffer of its size, an ownerReference with only what
/// is read, no annotations on a PV or a VolumeAttachment (a Node keeps its own).
#[test]
fn kept_lists_sit_in_buffers_of_their_size() {
    let p: Pod = serde_json::from_str(
        r#"{"metadata": {"name": "db-0", "namespace": "ns", "finalizers": ["f"],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "3f1c7a52-0d3e-4b8e-9a61-0c7d2f9e5b11",
                "controller": true, "blockOwnerDeletion": true}]},
          "status": {"phase": "Running", "podIPs": [{"ip": "10.244.1.7"}]}}"#,
    )
    .unwrap();
    let owners = p.metadata.owner_references.as_ref().unwrap();
    assert_eq!((owners.len(), owners.capacity()), (1, 1));
    assert_eq!(
        serde_json::to_value(&owners[0]).unwrap(),
        serde_json::json!({"apiVersion": "", "kind": "StatefulSet", "name": "db", "uid": "", "controller": true})
    );
    let f = p.metadata.finalizers.as_ref().unwrap();
    assert_eq!((f.len(), f.capacity()), (1, 1));
    let ips = p.status.as_ref().and_then(|s| s.pod_ips.as_ref()).unwrap();
    assert_eq!((ips.len(), ips.capacity()), (1, 1));

    let pv: PersistentVolume = serde_json::from_str(
        r#"{"metadata": {"name": "pv1", "annotations": {"pv.kubernetes.io/provisioned-by": "rbd.csi.ceph.com"}},
            "spec": {"accessModes": ["ReadWriteOnce"]}}"#,
    )
    .unwrap();
    assert_eq!(pv.metadata.annotations, None);
    let modes = pv.spec.as_ref().and_then(|s| s.access_modes.as_ref()).unwrap();
    assert_eq!((modes.len(), modes.capacity()), (1, 1));
    let va: VolumeAttachment = serde_json::from_str(
        r#"{"metadata": {"name": "csi-1", "annotations": {"csi.alpha.kubernetes.io/node-id": "n1"}},
            "spec": {"attacher": "rbd.csi.ceph.com", "nodeName": "n1", "source": {"persistentVolumeName": "pv1"}}}"#,
    )
    .unwrap();
    assert_eq!(va.metadata.annotations, None);
    let node: Node = serde_json::from_str(
        r#"{"metadata": {"name": "n1", "annotations": {"storage.example/addresses": "198.18.0.2"}},
            "status": {"addresses": [{"type": "InternalIP", "address": "198.18.0.2"}]}}"#,
    )
    .unwrap();
    assert_eq!(node.metadata.annotations.map(|a| a.len()), Some(1), "a Node keeps its annotations");
    let addrs = node.status.as_ref().and_then(|s| s.addresses.as_ref()).unwrap();
    assert_eq!((addrs.len(), addrs.capacity()), (1, 1));
}
