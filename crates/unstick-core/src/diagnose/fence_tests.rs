//! Deliberate fences are not blocklist-leftover: a csi-addons NetworkFence's CIDRs, and ceph-csi's
//! out-of-service fence of a node's recorded client address.

use std::collections::BTreeMap;

use serde_json::json;

use super::tests::{at, run_one, snap_with};
use super::*;
use crate::fixtures::node;
use crate::model::Observed;
use crate::model::ceph::{BlocklistEntry, BlocklistTarget};
use crate::model::fence::NetworkFence;

/// Ready node `a` (10.0.0.1) fenced by `entry`.
fn fenced(entry: BlocklistTarget) -> Snapshot {
    let mut s = snap_with(vec![node("a", "10.0.0.1", "True", &at(-60), &[])], vec![], vec![], vec![], vec![]);
    let e = BlocklistEntry { target: entry, until: Some("2027-11-26T10:00:00.000000+0000".into()) };
    s.ceph.blocklist = Some(Observed { value: Ok(vec![e]), at: crate::fixtures::now() });
    s
}

/// A NetworkFence as `kubectl get networkfences -o json` serves it (Rook's name for a node's).
fn fence(state: &str, cidr: &str) -> NetworkFence {
    NetworkFence::from_json(json!({
        "apiVersion": "csiaddons.openshift.io/v1alpha1", "kind": "NetworkFence",
        "metadata": {"name": "a-rbd-rook-ceph", "resourceVersion": "7"},
        "spec": {"networkFenceClassName": "rook-ceph-nfc", "fenceState": state, "cidrs": [cidr]},
        "status": {"result": "Succeeded", "message": "fencing operation successful"}
    }))
    .unwrap()
}

#[test]
fn a_network_fences_range_is_its_own_not_a_leftover() {
    let mut s = fenced(BlocklistTarget::Range("10.0.0.1:0/32".into()));
    assert_eq!(run_one(&s, PatternId::BlocklistLeftover).len(), 1, "no csi-addons: a leftover");
    s.network_fences = Some(vec![fence("Fenced", "10.0.0.1/32")]);
    assert!(run_one(&s, PatternId::BlocklistLeftover).is_empty());
    // a fence set to Unfenced owns nothing any more: its entry left behind is a leftover
    s.network_fences = Some(vec![fence("Unfenced", "10.0.0.1/32")]);
    assert_eq!(run_one(&s, PatternId::BlocklistLeftover).len(), 1);
    assert_eq!(fence("Fenced", "10.0.0.1/32").class, "rook-ceph-nfc");
}

#[test]
fn ceph_csis_out_of_service_fence_is_not_a_leftover_while_the_taint_is_on() {
    let mut s = fenced(BlocklistTarget::Addr("100.64.0.5:0/0".into()));
    // a's plugin pod address, recorded by ceph-csi in the image's metadata
    let key =
        ".rbd.csi.ceph.com/clientaddress/0001-0009-rook-ceph-0000000000000002-7e184c3c-6cff-48e8-a51f-058cf8540fd9/a";
    let meta = BTreeMap::from([(key.to_string(), "100.64.0.5".to_string())]);
    s.ceph.image_meta.insert(
        crate::model::ImageRef::new("replicapool", "csi-vol-7e184c3c"),
        Observed { value: Ok(meta), at: crate::fixtures::now() },
    );
    assert_eq!(run_one(&s, PatternId::BlocklistLeftover).len(), 1, "no taint: a leftover, found by the metadata's tie");
    let mut n: crate::model::objects::Node = (*s.nodes[0]).clone();
    let taint = serde_json::from_value(
        json!({"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}),
    )
    .unwrap();
    n.spec.get_or_insert_with(Default::default).taints.get_or_insert_with(Vec::new).push(taint);
    s.nodes[0] = std::sync::Arc::new(n);
    assert!(run_one(&s, PatternId::BlocklistLeftover).is_empty());
}

/// A whole-host entry for the address a's CSIAddonsNode lists as its fence client, owned by no
/// NetworkFence, is still a leftover (every node lists its fence client, fenced or not); the
/// finding says whose client it covers.
#[test]
fn a_csiaddons_nodes_fence_client_entry_without_a_network_fence_is_a_leftover() {
    let mut s = fenced(BlocklistTarget::Addr("10.0.0.1:0/0".into()));
    assert_eq!(run_one(&s, PatternId::BlocklistLeftover).len(), 1);
    let n = crate::model::csiaddons_node::CsiAddonsNode::from_json(json!({
        "metadata": {"namespace": "rook-ceph", "name": "a-rook-ceph-daemonset-csi-rbdplugin"},
        "spec": {"driver": {"name": "rook-ceph.rbd.csi.ceph.com", "nodeID": "a", "endpoint": "pod://x:9070"}},
        "status": {"networkFenceClientStatus": [{"networkFenceClassName": "rook-ceph-nfc",
            "ClientDetails": [{"id": "4f4a0d4e", "cidrs": ["10.0.0.1/32"]}]}]}
    }))
    .unwrap();
    s.csiaddons_nodes = Some(vec![n]);
    let f = run_one(&s, PatternId::BlocklistLeftover);
    assert_eq!(f.len(), 1);
    assert!(
        f[0].evidence.iter().any(|e| e.text.contains("node a's csi-addons fence client")
            && e.text.contains("rook-ceph/a-rook-ceph-daemonset-csi-rbdplugin")
            && e.text.contains("no NetworkFence owns it")),
        "{:#?}",
        f[0].evidence
    );
    // another address of the same /24 is not its fence client
    let mut s = fenced(BlocklistTarget::Addr("10.0.0.1:0/0".into()));
    s.csiaddons_nodes = Some(vec![crate::model::csiaddons_node::CsiAddonsNode {
        node_id: "a".into(),
        fence_clients: vec![crate::model::csiaddons_node::FenceClient {
            cidrs: vec!["10.0.0.2/32".into()],
            ..Default::default()
        }],
        ..Default::default()
    }]);
    let f = run_one(&s, PatternId::BlocklistLeftover);
    assert_eq!(f.len(), 1);
    assert!(!f[0].evidence.iter().any(|e| e.text.contains("fence client")), "{:#?}", f[0].evidence);
}

/// ceph-csi's out-of-service fence as Ceph prints it: `ceph osd blocklist add <clientAddress>
/// 157784760` (ceph-csi's design doc "Non graceful node shutdown": about five years, so the entry
/// outlives any reboot) stores `IP:0/0` with that expiry; `ceph osd blocklist ls --format json`
/// prints it in the first of its two arrays. With the image's `rbd image-meta list --format json`
/// naming node a for that IP and a's out-of-service taint on, it is ceph-csi's (no leftover);
/// once the taint is gone it is a leftover again, with the node tied by the metadata.
#[test]
fn ceph_csis_out_of_service_entry_as_ceph_prints_it() {
    let raw = "\n[{\"addr\":\"100.64.0.5:0/0\",\"until\":\"2031-11-26T08:01:40.374628+0000\"}][]";
    let entries = crate::sources::ceph::parse::blocklist_ls(raw).unwrap();
    let mut s = fenced(BlocklistTarget::Addr("unused:0/0".into()));
    s.ceph.blocklist = Some(Observed { value: Ok(entries), at: crate::fixtures::now() });
    let meta: BTreeMap<String, String> = serde_json::from_str(
        r#"{".rbd.csi.ceph.com/clientaddress/0001-0009-rook-ceph-0000000000000002-7e184c3c-6cff-48e8-a51f-058cf8540fd9/a":"100.64.0.5","csi.storage.k8s.io/pv/name":"pvc-7e184c3c"}"#,
    )
    .unwrap();
    s.ceph.image_meta.insert(
        crate::model::ImageRef::new("replicapool", "csi-vol-7e184c3c"),
        Observed { value: Ok(meta), at: crate::fixtures::now() },
    );
    let untainted = s.clone();
    let mut n: crate::model::objects::Node = (*s.nodes[0]).clone();
    let taint = serde_json::from_value(
        json!({"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}),
    )
    .unwrap();
    n.spec.get_or_insert_with(Default::default).taints.get_or_insert_with(Vec::new).push(taint);
    s.nodes[0] = std::sync::Arc::new(n);
    assert!(run_one(&s, PatternId::BlocklistLeftover).is_empty(), "ceph-csi's, while the taint is on");
    let f = run_one(&untainted, PatternId::BlocklistLeftover);
    assert_eq!(f.len(), 1, "taint removed, entry still there: it fences the Ready node until ceph-csi lifts it");
    assert!(f[0].summary.contains("100.64.0.5:0/0"), "{}", f[0].summary);
}
