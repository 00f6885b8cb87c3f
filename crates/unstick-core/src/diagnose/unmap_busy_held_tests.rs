//! unmap-busy without an event (incident 003-csi): kubelet posts none for a failed UnmountDevice.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::sync::Arc;

use serde_json::json;

use crate::diagnose::finding::{EvidenceSource, PatternId, Severity};
use crate::diagnose::tests::{at, facts, image, patterns, run_all, run_one, two_nodes, unique, watcher};
use crate::fixtures::{event, node, pod};
use crate::model::objects::Pod;

/// A DaemonSet's pod on `node` with the host root at /host (`propagation`: its mountPropagation).
fn scanner(node: &str, propagation: Option<&str>) -> Arc<Pod> {
    let mut mount = json!({"name": "rootfs", "mountPath": "/host", "readOnly": true});
    if let Some(p) = propagation {
        mount["mountPropagation"] = json!(p);
    }
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"namespace": "monitoring", "name": format!("host-scanner-{node}"),
                         "creationTimestamp": at(-600), "labels": {"app": "host-scanner"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "host-scanner",
                                              "uid": "d5", "controller": true}]},
            "spec": {"nodeName": node, "containers": [{"name": "scanner", "image": "clamav/clamav:1.4",
                                                       "volumeMounts": [mount]}],
                     "volumes": [{"name": "rootfs", "hostPath": {"path": "/"}}]},
            "status": {"phase": "Running"}
        }))
        .unwrap(),
    )
}

/// Node a (Ready) still has pv1 in use and watched after its pod left, db-0b waits on b, a
/// DaemonSet pod on a has the host root: as 003-csi shows on the current control plane.
fn left_in_use(propagation: Option<&str>) -> crate::model::Snapshot {
    let mut s = two_nodes("True", -86400);
    s.nodes[0] = node("a", "10.0.0.1", "True", &at(-86400), &[&unique()]);
    s.pods = vec![pod("ns", "db-0b", "b", "data", "ContainerCreating", &at(-900)), scanner("a", propagation)];
    s.ceph.images.insert(image(), facts(vec![watcher("10.0.0.1:0/1")], vec![]));
    s
}

#[test]
fn found_without_an_event_from_the_node_in_use_and_its_host_root_daemonset() {
    let s = left_in_use(None);
    let f = run_all(&s);
    assert_eq!(patterns(&f), ["unmap-busy"], "the live-node-stale-map it explains is hidden: {f:#?}");
    let f = &f[0];
    assert_eq!((f.node.as_deref(), f.volume.as_deref(), f.severity), (Some("a"), Some("pv1"), Severity::Critical));
    assert_eq!(f.id, "unmap-busy:pv1@a");
    assert!(f.summary.contains("DaemonSet pod monitoring/host-scanner-a"), "{}", f.summary);
    let has = |src: EvidenceSource, text: &str| f.evidence.iter().any(|e| e.source == src && e.text.contains(text));
    assert!(has(EvidenceSource::NodeStatus, "status.volumesInUse of node a"), "{:#?}", f.evidence);
    assert!(has(EvidenceSource::RbdStatus, "10.0.0.1:0/1"), "{:#?}", f.evidence);
    assert!(has(EvidenceSource::Pod, "container scanner mounts the host root at /host"), "{:#?}", f.evidence);
    assert!(!f.evidence.iter().any(|e| e.source == EvidenceSource::Event), "no event exists");
    assert_eq!(run_one(&s, PatternId::UnmapBusy).len(), 1, "the rule alone finds it too");
}

#[test]
fn not_without_a_holder_candidate_nor_once_kubelet_let_go() {
    // the DaemonSet sees host unmounts: a stale map with another cause
    let f = run_all(&left_in_use(Some("HostToContainer")));
    assert_eq!(patterns(&f), ["live-node-stale-map"], "{f:#?}");
    // volumesInUse no longer lists it: kubelet finished its unmount (the watcher is someone else's)
    let mut s = left_in_use(None);
    s.nodes[0] = node("a", "10.0.0.1", "True", &at(-86400), &[]);
    assert_eq!(patterns(&run_all(&s)), ["live-node-stale-map"]);
}

#[test]
fn an_unmap_busy_event_gives_the_same_finding_once() {
    let mut s = left_in_use(None);
    let msg = "UnmountDevice failed for volume \"pv1\" on node \"a\" : rbd: failed to unmap device /dev/rbd3, error exit status 16";
    s.events = vec![event("ns", "db-0", "FailedUnMount", msg, 9, &at(-20))];
    for f in [run_all(&s), run_one(&s, PatternId::UnmapBusy)] {
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].device.as_deref(), Some("/dev/rbd3"), "the event's: {f:#?}");
    }
}
