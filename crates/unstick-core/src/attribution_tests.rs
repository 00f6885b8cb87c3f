use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::config::Config;
use crate::model::objects::{Node, Pod};
use crate::model::{ImageRef, Observed};

fn cfg() -> DiagnoseConfig {
    Config::defaults().diagnose
}

/// A dual-stack node whose Ceph public network is on a second interface, as `kubectl get node -o
/// json` shows it (the storage address is not among `status.addresses`).
fn node(name: &str, internal: &str, v6: &str, annotations: serde_json::Value) -> Arc<Node> {
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": name, "annotations": annotations},
            "status": {"addresses": [
                {"type": "InternalIP", "address": internal},
                {"type": "InternalIP", "address": v6},
                {"type": "ExternalIP", "address": format!("203.0.113.{}", &name[name.len() - 1..])},
                {"type": "Hostname", "address": name},
            ]}
        }))
        .unwrap(),
    )
}

/// A Rook RBD node plugin / holder pod (a DaemonSet's, on pod networking unless `host`).
fn plugin_pod(name: &str, node: &str, ips: &[&str], host: bool) -> Arc<Pod> {
    let ips: Vec<_> = ips.iter().map(|ip| json!({"ip": ip})).collect();
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"namespace": "rook-ceph", "name": name, "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "csi-rbdplugin", "uid": "d", "controller": true}]},
            "spec": {"nodeName": node, "hostNetwork": host, "containers": [{"name": "csi-rbdplugin", "image": "cephcsi"}]},
            "status": {"phase": "Running", "podIP": ips.first().map(|i| i["ip"].clone()), "podIPs": ips}
        }))
        .unwrap(),
    )
}

fn snap() -> Snapshot {
    let mut s = Snapshot {
        nodes: vec![
            node(
                "worker-1",
                "10.0.0.11",
                "fd00::11",
                json!({"storage.example.com/addresses": "192.168.50.11, 192.168.60.0/28"}),
            ),
            node("worker-2", "10.0.0.12", "fd00::12", json!({})),
        ],
        pods: vec![
            plugin_pod("csi-rbdplugin-x7k2p", "worker-1", &["10.244.1.7", "fd10::1:7"], false),
            plugin_pod("csi-rbdplugin-holder-rook-ceph-q9z8w", "worker-2", &["100.64.0.6"], false),
            plugin_pod("csi-rbdplugin-hostnet", "worker-2", &["10.0.0.12"], true),
        ],
        ..Snapshot::default()
    };
    // `rbd image-meta list --format json` of a ceph-csi 3.15 image (the shape Ceph 16 prints:
    // one object, key → value)
    let meta: BTreeMap<String, String> = serde_json::from_str(
        r#"{".rbd.csi.ceph.com/clientaddress/0001-0009-rook-ceph-0000000000000002-7e184c3c-6cff-48e8-a51f-058cf8540fd9/worker-2":"100.64.0.5","csi.storage.k8s.io/pvc/name":"data"}"#,
    )
    .unwrap();
    let at = crate::fixtures::now();
    s.ceph.image_meta.insert(ImageRef::new("replicapool", "csi-vol-7e184c3c"), Observed { value: Ok(meta), at });
    s.probe_addresses.insert("worker-1".into(), vec!["172.16.5.11".parse().unwrap()]);
    s
}

fn tied(book: &AddressBook, addr: &str) -> (String, Proof) {
    match book.attribute(addr, &[]).unwrap() {
        Attribution::Tied(t) => (t.node, t.proof),
        other => panic!("{addr}: {other:?}"),
    }
}

#[test]
fn each_proof_ties_its_address_and_says_which() {
    let mut c = cfg();
    c.address_rules = vec!["192.168.70.0/24=worker-2".into()];
    c.node_address_annotation = "storage.example.com/addresses".into();
    let book = AddressBook::build(&snap(), &c);
    // every status.addresses entry, IPv6 and ExternalIP included
    assert_eq!(tied(&book, "10.0.0.11:0/1"), ("worker-1".into(), Proof::NodeAddress { kind: "InternalIP".into() }));
    assert_eq!(tied(&book, "[fd00::12]:0/7"), ("worker-2".into(), Proof::NodeAddress { kind: "InternalIP".into() }));
    assert_eq!(tied(&book, "203.0.113.1:0/9"), ("worker-1".into(), Proof::NodeAddress { kind: "ExternalIP".into() }));
    // ceph-csi's client-address metadata (the value is a bare IP)
    let (n, p) = tied(&book, "100.64.0.5:0/3735928559");
    assert_eq!(n, "worker-2");
    assert!(matches!(p, Proof::ImageMeta { ref key } if key.ends_with("/worker-2")), "{p:?}");
    // a node plugin's pod IPs (both families) and a Multus holder pod's
    assert_eq!(tied(&book, "10.244.1.7:0/5").1, Proof::ClientPod { pod: "rook-ceph/csi-rbdplugin-x7k2p".into() });
    assert_eq!(tied(&book, "[fd10::1:7]:0/5").0, "worker-1");
    assert_eq!(
        tied(&book, "100.64.0.6:0/1"),
        ("worker-2".into(), Proof::ClientPod { pod: "rook-ceph/csi-rbdplugin-holder-rook-ceph-q9z8w".into() })
    );
    // what the probe saw on the node, the operator's rule, the node's annotation (IP and CIDR)
    assert_eq!(tied(&book, "172.16.5.11:0/2"), ("worker-1".into(), Proof::Probe));
    assert_eq!(
        tied(&book, "192.168.70.9:0/2"),
        ("worker-2".into(), Proof::Rule { net: "192.168.70.0/24".parse().unwrap() })
    );
    let ann = Proof::Annotation { key: "storage.example.com/addresses".into() };
    assert_eq!(tied(&book, "192.168.50.11:0/2"), ("worker-1".into(), ann.clone()));
    assert_eq!(tied(&book, "192.168.60.14:0/2"), ("worker-1".into(), ann));
    // a whole-host blocklist entry and a bare IP are addresses too
    assert_eq!(tied(&book, "100.64.0.6:0/0").0, "worker-2");
    assert_eq!(tied(&book, "100.64.0.6").0, "worker-2");
    assert_eq!(book.attribute("not an address", &[]), None);
}

#[test]
fn an_earlier_proof_wins_and_a_shared_claim_ties_nobody() {
    let mut s = snap();
    // worker-1's plugin pod got the address worker-2's metadata names: the metadata (earlier) wins
    s.pods.push(plugin_pod("csi-rbdplugin-zz", "worker-1", &["100.64.0.5"], false));
    let book = AddressBook::build(&s, &cfg());
    assert_eq!(tied(&book, "100.64.0.5:0/1").0, "worker-2");
    // two plugin pods on two nodes with one IP (a reused pod IP, rook#7954): neither is proven
    s.pods.push(plugin_pod("csi-rbdplugin-yy", "worker-2", &["10.244.1.7"], false));
    let book = AddressBook::build(&s, &cfg());
    let Some(Attribution::Unattributed { candidates }) = book.attribute("10.244.1.7:0/5", &[]) else { panic!() };
    let nodes: Vec<&str> = candidates.iter().map(|c| c.node.as_str()).collect();
    assert_eq!(nodes, ["worker-1", "worker-2"]);
    assert!(matches!(candidates[0].why, CandidateWhy::Claimed(Proof::ClientPod { .. })));
}

#[test]
fn an_unattributed_address_lists_its_candidates() {
    let book = AddressBook::build(&snap(), &cfg());
    // a host-network plugin pod's IP is its node's and proves nothing more; 100.64.0.99 is nobody's
    let a = book.attribute("100.64.0.99:0/42", &["worker-1".to_string()]).unwrap();
    let Attribution::Unattributed { candidates } = &a else { panic!("{a:?}") };
    assert_eq!(candidates[0], Candidate { node: "worker-1".into(), why: CandidateWhy::Attached });
    // worker-2's holder pod (100.64.0.6) and metadata address (100.64.0.5) are in the same /24
    assert_eq!(candidates[1].node, "worker-2");
    assert_eq!(candidates[1].why, CandidateWhy::SameNetwork("100.64.0.0/24".parse().unwrap()));
    assert_eq!(candidates.len(), 2, "each node once: {candidates:?}");
    assert!(
        a.text().starts_with(
            "unattributed (candidates: worker-1 (has the volume attached), worker-2 (has an address in 100.64.0.0/24)"
        ),
        "{}",
        a.text()
    );
    let none = book.attribute("198.51.100.1:0/1", &[]).unwrap();
    assert_eq!(none.text(), "unattributed (no candidate)");
}

#[test]
fn the_attributor_takes_the_lineage_first_and_names_the_address_type() {
    let s = snap();
    let lin = Lineage::build(&s);
    let c = cfg();
    let at = Attributor::new(&s, &lin, &c);
    assert_eq!(at.tie("[fd00::11]:0/1").unwrap().to_string(), "node worker-1 by InternalIP");
    assert_eq!(at.tie("203.0.113.2:0/1").unwrap().to_string(), "node worker-2 by ExternalIP");
    assert_eq!(
        at.tie("100.64.0.6:0/1").unwrap().to_string(),
        "node worker-2 by pod rook-ceph/csi-rbdplugin-holder-rook-ceph-q9z8w"
    );
    assert!(at.tie("100.64.0.99:0/1").is_none());
}

#[test]
fn node_annotations_are_kept_only_for_cluster_scoped_objects() {
    let s = snap();
    assert!(s.nodes[0].metadata.annotations.as_ref().is_some_and(|a| a.contains_key("storage.example.com/addresses")));
    let p: Pod =
        serde_json::from_value(json!({"metadata": {"namespace": "a", "name": "p", "annotations": {"k": "v"}}}))
            .unwrap();
    assert_eq!(p.metadata.annotations, None);
}

/// A CSIAddonsNode's fence client (csi-addons v0.14.0 status, as the API server serves it) ties
/// its network to `spec.driver.nodeID`, after the metadata and before a plugin pod's IP.
#[test]
fn a_csiaddons_fence_client_ties_its_network_to_the_driver_node() {
    let mut s = snap();
    let cnode = |node: &str, cidr: &str| {
        crate::model::csiaddons_node::CsiAddonsNode::from_json(json!({
            "metadata": {"namespace": "rook-ceph", "name": format!("{node}-rook-ceph-daemonset-csi-rbdplugin")},
            "spec": {"driver": {"name": "rook-ceph.rbd.csi.ceph.com", "nodeID": node, "endpoint": "pod://x:9070"}},
            "status": {"state": "Connected", "networkFenceClientStatus": [{"networkFenceClassName": "rook-ceph-nfc",
                "ClientDetails": [{"id": "4f4a0d4e", "cidrs": [cidr]}]}]}
        }))
        .unwrap()
    };
    s.csiaddons_nodes = Some(vec![cnode("worker-1", "198.18.5.18/32")]);
    let book = AddressBook::build(&s, &cfg());
    let (n, p) = tied(&book, "198.18.5.18:0/1234");
    assert_eq!(n, "worker-1");
    assert_eq!(
        p,
        Proof::FenceClient {
            object: "rook-ceph/worker-1-rook-ceph-daemonset-csi-rbdplugin".into(),
            net: "198.18.5.18/32".parse().unwrap()
        }
    );
    assert_eq!(
        p.to_string(),
        "CSIAddonsNode rook-ceph/worker-1-rook-ceph-daemonset-csi-rbdplugin fence client 198.18.5.18/32"
    );
    // it wins over a plugin pod of another node with that IP; the metadata wins over it
    s.pods.push(plugin_pod("csi-rbdplugin-zz", "worker-2", &["198.18.5.18"], false));
    s.csiaddons_nodes.get_or_insert_default().push(cnode("worker-1", "100.64.0.5/32"));
    let book = AddressBook::build(&s, &cfg());
    assert_eq!(tied(&book, "198.18.5.18:0/1").0, "worker-1");
    assert!(matches!(tied(&book, "100.64.0.5:0/1"), (n, Proof::ImageMeta { .. }) if n == "worker-2"));
    // two nodes listing one network: neither is proven by it (the next proof, the pod, decides)
    s.csiaddons_nodes.get_or_insert_default().push(cnode("worker-2", "198.18.5.18/32"));
    let book = AddressBook::build(&s, &cfg());
    assert!(matches!(tied(&book, "198.18.5.18:0/1"), (n, Proof::ClientPod { .. }) if n == "worker-2"));
    s.pods.pop();
    let book = AddressBook::build(&s, &cfg());
    assert!(matches!(book.attribute("198.18.5.18:0/1", &[]), Some(Attribution::Unattributed { .. })));
}
