use super::*;
use crate::fixtures;

#[test]
fn volume_handle_round_trip() {
    let h = parse_volume_handle("0001-0009-rook-ceph-0000000000000002-b8a4b7e0-1d2a-4c3b-9e8f-0a1b2c3d4e01").unwrap();
    assert_eq!(h.version, 1);
    assert_eq!(h.cluster_id, "rook-ceph");
    assert_eq!(h.pool_id, 2);
    assert_eq!(h.uuid, "b8a4b7e0-1d2a-4c3b-9e8f-0a1b2c3d4e01");
    for bad in [
        "",
        "0001",
        "0001-0009-rook",
        "0001-0009-rook-ceph-00000000000000zz-x",
        "zzzz-0009-rook-ceph-0000000000000002-b8a4b7e0-1d2a-4c3b-9e8f-0a1b2c3d4e01",
    ] {
        assert_eq!(parse_volume_handle(bad), None, "{bad}");
    }
}

#[test]
fn rbd_csi_driver_names() {
    assert!(is_rbd_csi_driver("rbd.csi.ceph.com"));
    assert!(is_rbd_csi_driver("rook-ceph.rbd.csi.ceph.com"));
    assert!(!is_rbd_csi_driver("cephfs.csi.ceph.com"));
    assert!(!is_rbd_csi_driver("xrbd.csi.ceph.com"));
}

#[test]
fn joins_pod_to_watcher_node() {
    let snap = fixtures::incidents();
    let l = Lineage::build(&snap);
    let vols: Vec<_> = l.volumes_of_pod("incident-002/sleep-6f7c8cc954-5hptw").collect();
    assert_eq!(vols.len(), 1);
    let v = vols[0];
    assert_eq!(v.pvc.as_deref(), Some("incident-002/pvc1"));
    assert_eq!(v.driver, "rbd.csi.ceph.com");
    let image = v.image.clone().unwrap();
    assert_eq!(image.spec(), "replicapool/csi-vol-5b7c3f5e-1d2a-4c3b-9e8f-0a1b2c3d4e02");
    assert_eq!(v.attachments[0].node, "k8s-node-lost");
    assert!(v.attachments[0].attached);
    assert_eq!(v.in_use_on, ["k8s-node-lost"]);
    assert_eq!(v.pods, ["incident-002/sleep-6f7c8cc954-5hptw", "incident-002/sleep-6f7c8cc954-rcpnc"]);
    let w = &snap.ceph.images[&image].watchers.value.as_ref().unwrap()[0];
    assert_eq!(l.node_for_address(&w.address), Some("k8s-node-lost"));
}

#[test]
fn in_tree_rbd_pv() {
    let l = Lineage::build(&fixtures::incidents());
    let v = l.by_pv("index-api-pv").unwrap();
    assert_eq!(v.driver, IN_TREE_RBD);
    assert_eq!(v.image, Some(ImageRef::new("replicapool", "index-api-image")));
    assert_eq!(v.unique_name.as_deref(), Some("kubernetes.io/rbd/replicapool:index-api-image"));
    assert_eq!(l.by_pvc("incident-000/index-api-pvc").unwrap().pv, "index-api-pv");
}

#[test]
fn image_name_from_handle_when_attribute_missing() {
    let pv: PersistentVolume = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "p"},
        "spec": {"csi": {"driver": "rook-ceph.rbd.csi.ceph.com",
            "volumeHandle": "0001-0009-rook-ceph-0000000000000002-b8a4b7e0-1d2a-4c3b-9e8f-0a1b2c3d4e01",
            "volumeAttributes": {"pool": "replicapool", "radosNamespace": "ns1"}}}
    }))
    .unwrap();
    let v = volume_of(&pv);
    assert_eq!(v.image.unwrap().spec(), "replicapool/ns1/csi-vol-b8a4b7e0-1d2a-4c3b-9e8f-0a1b2c3d4e01");
}

#[test]
fn unknown_address_matches_no_node() {
    let l = Lineage::build(&fixtures::incidents());
    assert_eq!(l.node_for_address("10.9.9.9:0/1"), None);
    assert_eq!(l.node_for_address("garbage"), None);
}

#[test]
fn cephfs_pv_leads_to_its_subvolume_not_an_image() {
    let pv: PersistentVolume = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "p"},
        "spec": {"csi": {"driver": "rook-ceph.cephfs.csi.ceph.com",
            "volumeHandle": "0001-0009-rook-ceph-0000000000000001-b8a4b7e0-1d2a-4c3b-9e8f-0a1b2c3d4e01",
            "volumeAttributes": {"fsName": "myfs", "subvolumeName": "csi-vol-abc", "pool": "myfs-replicated"}}}
    }))
    .unwrap();
    let v = volume_of(&pv);
    assert_eq!(v.image, None);
    let s = v.subvolume.unwrap();
    assert_eq!(s.spec(), "myfs/csi/csi-vol-abc");
    assert_eq!(s.info_command(), "ceph fs subvolume info myfs csi-vol-abc --group_name csi");
    // without attributes: the name from the handle, the filesystem unknown
    let pv: PersistentVolume = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "q"},
        "spec": {"csi": {"driver": "cephfs.csi.ceph.com",
            "volumeHandle": "0001-0009-rook-ceph-0000000000000001-b8a4b7e0-1d2a-4c3b-9e8f-0a1b2c3d4e01"}}
    }))
    .unwrap();
    let s = volume_of(&pv).subvolume.unwrap();
    assert_eq!(s.spec(), "?/csi/csi-vol-b8a4b7e0-1d2a-4c3b-9e8f-0a1b2c3d4e01");
    assert!(is_cephfs_driver("cephfs") && !is_cephfs_driver("rbd.csi.ceph.com"));
}
