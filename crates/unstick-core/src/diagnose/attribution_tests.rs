//! dead-node-watcher and live-node-stale-map fire whichever proof ties the watcher to its node
//! ([`crate::attribution`]), and the evidence names the proof; an address nothing ties is no
//! node's finding and is shown unattributed with its candidates.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use super::tests::{at, facts, run_one, snap_with};
use super::*;
use crate::fixtures::{csi_pv, node, pod, pvc, va};
use crate::model::ceph::Watcher;
use crate::model::objects::Pod;
use crate::model::{ImageRef, Observed};

const UUID: &str = "7e184c3c-6cff-48e8-a51f-058cf8540fd9";

fn image() -> ImageRef {
    ImageRef::new("replicapool", format!("csi-vol-{UUID}"))
}

/// Rook's RBD node plugin on pod networking (Multus holder pods look the same to the rule).
fn plugin(name: &str, node: &str, ip: &str) -> Arc<Pod> {
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"namespace": "rook-ceph", "name": name, "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "csi-rbdplugin", "uid": "d"}]},
            "spec": {"nodeName": node, "containers": [{"name": "csi-rbdplugin", "image": "quay.io/cephcsi/cephcsi"}]},
            "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]}
        }))
        .unwrap(),
    )
}

/// Node `a` lost for a day (its watcher's address is not among its status.addresses), `b`
/// Ready, a pod of the claim waiting on `b`; the image has one watcher at `addr`.
fn lost_a_with_watcher(addr: &str) -> Snapshot {
    let mut s = snap_with(
        vec![node("a", "10.0.0.1", "Unknown", &at(-86400), &[]), node("b", "10.0.0.2", "True", &at(-86400), &[])],
        vec![pod("ns", "web-0", "b", "data", "ContainerCreating", &at(-3600))],
        vec![pvc("ns", "data", "pv1")],
        vec![csi_pv("pv1", "ns", "data", UUID)],
        vec![va("csi-a", "pv1", "a", None)],
    );
    let w = Watcher { address: addr.into(), client: 4155, cookie: 1 };
    s.ceph.images.insert(image(), facts(vec![w], vec![]));
    s
}

fn evidence(f: &Finding) -> String {
    f.evidence.iter().map(|e| e.text.as_str()).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_plugin_pod_ip_watcher_of_a_lost_node_is_a_dead_node_watcher() {
    let mut s = lost_a_with_watcher("10.244.1.7:0/3735928559");
    assert!(run_one(&s, PatternId::DeadNodeWatcher).is_empty(), "no proof yet: nobody's watcher");
    s.pods.push(plugin("csi-rbdplugin-x7k2p", "a", "10.244.1.7"));
    let f = run_one(&s, PatternId::DeadNodeWatcher);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!((f[0].node.as_deref(), f[0].severity), (Some("a"), Severity::Critical));
    assert!(evidence(&f[0]).contains("(node a by pod rook-ceph/csi-rbdplugin-x7k2p)"), "{}", evidence(&f[0]));
}

#[test]
fn image_metadata_ties_a_storage_network_watcher() {
    let mut s = lost_a_with_watcher("192.168.50.11:0/17");
    let key = format!(".rbd.csi.ceph.com/clientaddress/0001-0009-rook-ceph-0000000000000002-{UUID}/a");
    let meta = BTreeMap::from([(key.clone(), "192.168.50.11".to_string())]);
    s.ceph.image_meta.insert(image(), Observed { value: Ok(meta), at: crate::fixtures::now() });
    let f = run_one(&s, PatternId::DeadNodeWatcher);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(evidence(&f[0]).contains(&format!("(node a by image-meta {key})")), "{}", evidence(&f[0]));
}

#[test]
fn a_live_node_stale_map_through_an_operator_rule() {
    // `a` Ready, runs no pod of the claim; the pod waits on `b`
    let mut s = lost_a_with_watcher("192.168.50.11:0/17");
    s.nodes[0] = node("a", "10.0.0.1", "True", &at(-86400), &[]);
    let lin = Lineage::build(&s);
    let mut cfg = crate::config::Config::defaults().diagnose;
    let found = |cfg: &crate::config::DiagnoseConfig| {
        rule(PatternId::LiveNodeStaleMap)(&Ctx::new(&s, &lin, &Index::build(&s), cfg, crate::fixtures::now()))
    };
    assert!(found(&cfg).is_empty());
    cfg.address_rules = vec!["192.168.50.0/28=a".into()];
    let f = found(&cfg);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(evidence(&f[0]).contains("(node a by rule 192.168.50.0/28)"), "{}", evidence(&f[0]));
}

#[test]
fn an_unattributed_watcher_is_shown_with_its_candidates() {
    let s = lost_a_with_watcher("100.64.0.99:0/1");
    let f = run_one(&s, PatternId::Unexplained);
    let text: Vec<String> = f.iter().map(evidence).collect();
    assert!(
        text.iter().any(|t| t.contains("100.64.0.99:0/1 (unattributed (candidates: a (has the volume attached)))")),
        "{text:#?}"
    );
}
