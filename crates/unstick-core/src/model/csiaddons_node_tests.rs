//! CSIAddonsNode as the API server serves it (csi-addons v0.14.0's field names, `ClientDetails`
//! capitalised), and which blocklist entries its fence clients cover.

use serde_json::json;

use super::*;

/// What Rook's csi-addons sidecar registers for worker-3's RBD node plugin, after the controller
/// asked the driver for its fence clients (`kubectl get csiaddonsnodes -o json`, one item).
fn worker3() -> serde_json::Value {
    json!({
        "apiVersion": "csiaddons.openshift.io/v1alpha1", "kind": "CSIAddonsNode",
        "metadata": {"name": "worker-3-rook-ceph-daemonset-csi-rbdplugin", "namespace": "rook-ceph",
                     "annotations": {"csiaddons.openshift.io/networkfenceclass-names": "[\"rook-ceph-nfc\"]"}},
        "spec": {"driver": {"name": "rook-ceph.rbd.csi.ceph.com", "nodeID": "worker-3",
                            "endpoint": "pod://csi-rbdplugin-x7k2p.rook-ceph:9070"}},
        "status": {"state": "Connected", "message": "Successfully established connection with sidecar",
                   "capabilities": ["network_fence.GET_CLIENTS_TO_FENCE"],
                   "networkFenceClientStatus": [{"networkFenceClassName": "rook-ceph-nfc",
                       "ClientDetails": [{"id": "4f4a0d4e-8d1c-4a8e-9f8e-2d3c1b0a9e77", "cidrs": ["198.18.5.20/32"]}]}]}
    })
}

fn entry(target: BlocklistTarget) -> BlocklistEntry {
    BlocklistEntry { target, until: Some("2031-11-26T10:00:00.000000+0000".into()) }
}

#[test]
fn reads_the_published_fields_and_round_trips() {
    let n = CsiAddonsNode::from_json(worker3()).unwrap();
    assert_eq!(n.node_id, "worker-3");
    assert_eq!(n.driver, "rook-ceph.rbd.csi.ceph.com");
    assert_eq!(n.state, "Connected");
    assert_eq!(n.key(), "rook-ceph/worker-3-rook-ceph-daemonset-csi-rbdplugin");
    assert_eq!(n.fence_clients.len(), 1);
    assert_eq!(n.fence_clients[0].class, "rook-ceph-nfc");
    assert_eq!(n.fence_clients[0].cidrs, vec!["198.18.5.20/32".to_string()]);
    assert_eq!(CsiAddonsNode::from_json(n.to_json()).unwrap(), n);
    // a camelCase `clientDetails` is not the published field: nothing is read from it
    let mut v = worker3();
    let s = v["status"]["networkFenceClientStatus"][0].as_object_mut().unwrap();
    let d = s.remove("ClientDetails").unwrap();
    s.insert("clientDetails".into(), d);
    assert!(CsiAddonsNode::from_json(v).unwrap().fence_clients.is_empty());
}

#[test]
fn covers_its_own_range_and_hosts_inside_it_only() {
    let n = CsiAddonsNode::from_json(worker3()).unwrap();
    assert!(n.covers(&entry(BlocklistTarget::Range("cidr:198.18.5.20:0/32".into()))));
    assert!(n.covers(&entry(BlocklistTarget::Addr("198.18.5.20:0/0".into()))));
    // a nonce-specific entry is one client instance, not the node's fence
    assert!(!n.covers(&entry(BlocklistTarget::Addr("198.18.5.20:0/3710147553".into()))));
    assert!(!n.covers(&entry(BlocklistTarget::Addr("198.18.5.19:0/0".into()))));
    assert!(!n.covers(&entry(BlocklistTarget::Range("cidr:198.18.5.0:0/24".into()))));
    let nodes = vec![n];
    assert_eq!(
        covering(&nodes, &entry(BlocklistTarget::Addr("198.18.5.20:0/0".into()))).map(|n| n.node_id.as_str()),
        Some("worker-3")
    );
    // before the controller asked the driver (no networkFenceClientStatus): covers nothing
    let mut v = worker3();
    v["status"] = json!({"state": "Connected"});
    assert!(!CsiAddonsNode::from_json(v).unwrap().covers(&entry(BlocklistTarget::Addr("198.18.5.20:0/0".into()))));
}
