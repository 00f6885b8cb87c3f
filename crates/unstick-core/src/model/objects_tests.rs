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
