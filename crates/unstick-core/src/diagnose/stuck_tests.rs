//! The never-silent rule (issue 24): stuck pods with no recognised cause are `unexplained`, with
//! what was checked; named causes from their own words; healthy look-alikes stay quiet; the
//! session log carries the new findings.

use super::*;
use crate::diagnose::tests::{at, facts, snap_with};
use crate::fixtures::{csi_pv, event, node, pod, pvc, va};
use crate::session::FindingRecord;

const UUID: &str = "7a7c3f5e-1d2a-4c3b-9e8f-0a1b2c3d4e24";

fn stuck(state: &str, since: i64) -> Snapshot {
    let mut s = snap_with(
        vec![node("n1", "10.0.0.1", "True", &at(-3600), &[])],
        vec![pod("shop", "api-0", "n1", "data", state, &at(since))],
        vec![pvc("shop", "data", "pv-a")],
        vec![csi_pv("pv-a", "shop", "data", UUID)],
        vec![va("va-a", "pv-a", "n1", None)],
    );
    s.ceph.images.insert(ImageRef::new("replicapool", format!("csi-vol-{UUID}")), facts(vec![], vec![]));
    s
}

fn all(s: &Snapshot) -> Vec<Finding> {
    run(s, &Lineage::build(s), &crate::config::Config::defaults().diagnose, crate::fixtures::now())
}

#[test]
fn a_pod_waiting_past_the_grace_with_no_cause_is_unexplained_with_what_was_checked() {
    let s = stuck("ContainerCreating", -600);
    let f = all(&s);
    assert_eq!(f.len(), 1, "{f:#?}");
    let f = &f[0];
    assert_eq!(f.pattern, PatternId::Unexplained);
    assert_eq!(f.id, "unexplained:shop/api-0#pv-a");
    assert_eq!(f.severity, Severity::Critical);
    assert!(f.summary.contains("no known cause") && f.summary.contains("no failure event"), "{}", f.summary);
    let text: Vec<&str> = f.evidence.iter().map(|e| e.text.as_str()).collect();
    for needle in [
        "claim shop/data -> PV pv-a",
        "node n1 Ready=True",
        "VolumeAttachment va-a -> node n1",
        "no watchers",
        "no locks",
        "ceph osd blocklist ls: not read",
    ] {
        assert!(text.iter().any(|t| t.contains(needle)), "{needle} not in {text:#?}");
    }
    assert!(
        f.explanation.contains("unstick probe") && f.explanation.contains("rbd status replicapool/csi-vol-"),
        "{}",
        f.explanation
    );
    assert!(
        f.explanation.contains("kubectl get pods -A -l app=csi-rbdplugin --field-selector spec.nodeName=n1"),
        "{}",
        f.explanation
    );
    // the session log carries it as it is
    let r = FindingRecord::from(f);
    assert_eq!(r.pattern, "unexplained");
    let back: FindingRecord = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back, r);
}

#[test]
fn within_the_grace_or_running_is_no_finding() {
    assert!(all(&stuck("ContainerCreating", -30)).is_empty());
    assert!(all(&stuck("Running", -600)).is_empty());
    // Terminating within the grace
    assert!(all(&stuck("Terminating", -10)).is_empty());
    // Terminating past it
    let f = all(&stuck("Terminating", -900));
    assert_eq!(f.iter().map(|f| f.pattern).collect::<Vec<_>>(), vec![PatternId::Unexplained]);
    assert!(f[0].summary.contains("Terminating"), "{}", f[0].summary);
}

#[test]
fn the_newest_failure_names_the_cause() {
    let mut s = stuck("ContainerCreating", -600);
    let m = "MountVolume.MountDevice failed for volume \"pv-a\" : rpc error: code = Internal desc = rbd: map failed with error an error (exit status 110) occurred while running rbd args: [map], rbd error output: rbd: sysfs write failed\nrbd: map failed: (110) Connection timed out";
    s.events = vec![event("shop", "api-0", "FailedMount", m, 4, &at(-60))];
    let f = all(&s);
    assert_eq!(f.iter().map(|f| f.pattern).collect::<Vec<_>>(), vec![PatternId::CephUnreachable], "{f:#?}");
    assert_eq!(f[0].playbook, "none");
    // kubelet's generic timeout names nothing
    s.events = vec![event(
        "shop",
        "api-0",
        "FailedMount",
        "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data]: timed out waiting for the condition",
        4,
        &at(-60),
    )];
    assert_eq!(all(&s)[0].pattern, PatternId::Unexplained);
}

#[test]
fn a_driver_busy_message_alone_is_unexplained_not_a_restage() {
    let mut s = stuck("ContainerCreating", -600);
    let m = format!(
        "MountVolume.MountDevice failed for volume \"pv-a\" : rpc error: code = Aborted desc = an operation with the given Volume ID 0001-0009-rook-ceph-0000000000000002-{UUID} already exists"
    );
    s.events = vec![event("shop", "api-0", "FailedMount", &m, 9, &at(-60))];
    let f = all(&s);
    assert_eq!(f.iter().map(|f| f.pattern).collect::<Vec<_>>(), vec![PatternId::Unexplained], "{f:#?}");
    assert!(f[0].summary.contains("hypothesis"), "{}", f[0].summary);
}

#[test]
fn an_rwo_claim_used_on_two_ready_nodes_is_shared_not_lost() {
    let mut s = stuck("ContainerCreating", -600);
    s.nodes.push(node("n2", "10.0.0.2", "True", &at(-3600), &[]));
    s.pods.push(pod("shop", "api-1", "n2", "data", "Running", &at(-7200)));
    s.volume_attachments = vec![va("va-b", "pv-a", "n2", None)];
    let m = "Multi-Attach error for volume \"pv-a\" Volume is already used by pod(s) api-1";
    s.events = vec![event("shop", "api-0", "FailedAttachVolume", m, 5, &at(-60))];
    let f = all(&s);
    assert_eq!(f.iter().map(|f| f.pattern).collect::<Vec<_>>(), vec![PatternId::RwoClaimShared], "{f:#?}");
    assert!(f[0].explanation.contains("never force-delete"), "{}", f[0].explanation);
    // the holder and its node are affected objects too (what the operator stops), from this one finding
    for o in [ObjectRef::pod("shop/api-0"), ObjectRef::pod("shop/api-1"), ObjectRef::node("n1"), ObjectRef::node("n2")]
    {
        assert!(f[0].objects.contains(&o), "{o:?} not in {:#?}", f[0].objects);
    }
}

#[test]
fn a_pod_of_a_non_ceph_volume_is_not_ours() {
    let mut s = stuck("ContainerCreating", -600);
    let mut pv = (*s.pvs[0]).clone();
    if let Some(c) = pv.spec.as_mut().and_then(|sp| sp.csi.as_mut()) {
        c.driver = "ebs.csi.aws.com".into();
        c.volume_attributes = None;
    }
    s.pvs = vec![std::sync::Arc::new(pv)];
    assert!(all(&s).is_empty());
}

#[test]
fn a_not_registered_event_older_than_the_node_plugins_restart_names_no_cause() {
    let mut s = stuck("ContainerCreating", -600);
    let m = "MountVolume.MountDevice failed for volume \"pv-a\" : kubernetes.io/csi: attacher.MountDevice failed to create newCsiDriverClient: driver name rbd.csi.ceph.com not found in the list of registered CSI drivers";
    s.events = vec![event("shop", "api-0", "FailedMount", m, 9, &at(-60))];
    let plugin = |created: i64| -> std::sync::Arc<crate::model::objects::Pod> {
        std::sync::Arc::new(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "csi-rbdplugin-n1", "namespace": "rook-ceph", "uid": "u1",
                    "creationTimestamp": at(created),
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "csi-rbdplugin", "uid": "d"}]},
                "spec": {"nodeName": "n1", "containers": [{"name": "csi-rbdplugin", "image": "i"}]},
                "status": {"phase": "Running"}
            }))
            .unwrap(),
        )
    };
    // the plugin pod ran before the event: the event names the cause
    s.pods.push(plugin(-3600));
    assert_eq!(all(&s).iter().map(|f| f.pattern).collect::<Vec<_>>(), vec![PatternId::CsiDriverNotRegistered]);
    // restarted since: kubelet has not failed again (yet), the old event proves nothing now
    s.pods.pop();
    s.pods.push(plugin(-30));
    assert_eq!(all(&s).iter().map(|f| f.pattern).collect::<Vec<_>>(), vec![PatternId::Unexplained]);
}

/// `stuck` with the claim on a Rook CephFS volume instead of RBD.
fn stuck_cephfs() -> Snapshot {
    let mut s = stuck("ContainerCreating", -600);
    s.ceph.images.clear();
    s.volume_attachments.clear();
    s.pvs = vec![std::sync::Arc::new(
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "pv-a"},
            "spec": {"accessModes": ["ReadWriteMany"], "claimRef": {"namespace": "shop", "name": "data"},
                "csi": {"driver": "rook-ceph.cephfs.csi.ceph.com",
                    "volumeHandle": format!("0001-0009-rook-ceph-0000000000000001-{UUID}"),
                    "volumeAttributes": {"fsName": "myfs", "subvolumeName": "csi-vol-x", "clusterID": "rook-ceph"}}}
        }))
        .unwrap(),
    )];
    s
}

#[test]
fn cephfs_causes_are_worded_for_cephfs() {
    let mut s = stuck_cephfs();
    let gone = "MountVolume.MountDevice failed for volume \"pv-a\" : rpc error: code = Internal desc = rados: ret=-2, No such file or directory: \"subvolume 'csi-vol-x' does not exist\"";
    s.events = vec![event("shop", "api-0", "FailedMount", gone, 3, &at(-60))];
    let f = all(&s);
    assert_eq!(f.iter().map(|f| f.pattern).collect::<Vec<_>>(), vec![PatternId::BackingImageMissing], "{f:#?}");
    assert!(
        f[0].summary.contains("the CephFS subvolume myfs/csi/csi-vol-x the PV names does not exist"),
        "{}",
        f[0].summary
    );
    assert!(
        f[0].explanation.contains("ceph fs subvolume info") && !f[0].explanation.contains("rbd"),
        "{}",
        f[0].explanation
    );
    // a fenced CephFS client is evicted, not an RBD client blocklisted
    let fenced = "MountVolume.MountDevice failed for volume \"pv-a\" : rpc error: code = Internal desc = mount failed: (108) Cannot send after transport endpoint shutdown";
    s.events = vec![event("shop", "api-0", "FailedMount", fenced, 3, &at(-60))];
    let f = all(&s);
    assert_eq!(f.iter().map(|f| f.pattern).collect::<Vec<_>>(), vec![PatternId::CephfsClientEvicted], "{f:#?}");
    assert!(f[0].id.starts_with("cephfs-client-evicted:shop/api-0#pv-a"), "{}", f[0].id);
    assert!(!f[0].explanation.contains("rbd unmap"), "{}", f[0].explanation);
    // the session log carries the new finding as it is
    let r = FindingRecord::from(&f[0]);
    assert_eq!(r.pattern, "cephfs-client-evicted");
    // unexplained points at the subvolume and the MDS, not at rbd status
    s.events.clear();
    let f = all(&s);
    assert_eq!(f[0].pattern, PatternId::Unexplained);
    assert!(
        f[0].explanation.contains("ceph fs subvolume info myfs csi-vol-x --group_name csi"),
        "{}",
        f[0].explanation
    );
    assert!(!f[0].explanation.contains("rbd status"), "{}", f[0].explanation);
}

#[test]
fn a_stale_cephfs_mount_on_an_rbd_volume_names_nothing() {
    let mut s = stuck("ContainerCreating", -600);
    let m = "MountVolume.SetUp failed for volume \"pv-a\" : rpc error: code = Internal desc = stat /var/lib/kubelet/plugins/kubernetes.io/csi/pv/pv-a/globalmount: permission denied";
    s.events = vec![event("shop", "api-0", "FailedMount", m, 3, &at(-60))];
    assert_eq!(all(&s).iter().map(|f| f.pattern).collect::<Vec<_>>(), vec![PatternId::Unexplained]);
}

#[test]
fn current_clusters_say_why_a_controller_deletes_the_pod_and_what_the_attacher_returned() {
    // a pod the taint manager is deleting (DisruptionTarget, GA 1.31), stuck Terminating
    let mut s = stuck("Terminating", -900);
    let c = serde_json::json!([
        {"type": "Ready", "status": "False"},
        {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
         "message": "Taint manager: deleting due to NoExecute taint"}
    ]);
    std::sync::Arc::make_mut(&mut s.pods[0]).status.as_mut().unwrap().conditions =
        serde_json::from_value::<Vec<_>>(c.clone()).unwrap();
    let text: Vec<String> = all(&s).iter().flat_map(|f| f.evidence.iter().map(|e| e.text.clone())).collect();
    assert!(
        text.iter()
            .any(|t| t
                .contains("; DisruptionTarget DeletionByTaintManager: Taint manager: deleting due to NoExecute taint")),
        "{text:#?}"
    );
    // only DisruptionTarget is kept when a pod is read from the API's JSON
    let st: crate::model::objects::PodStatus = serde_json::from_value(serde_json::json!({"conditions": c})).unwrap();
    assert_eq!(st.conditions.len(), 1);
    assert_eq!(st.conditions[0].reason.as_deref(), Some("DeletionByTaintManager"));

    // the attacher's error on the VolumeAttachment, with the gRPC code recent releases record
    let mut s = stuck("ContainerCreating", -600);
    std::sync::Arc::make_mut(&mut s.volume_attachments[0]).status = Some(
        serde_json::from_value(serde_json::json!({
            "attached": false,
            "attachError": {"message": "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
                            "time": at(-300), "errorCode": 4}
        }))
        .unwrap(),
    );
    let f = all(&s);
    assert_eq!(f[0].pattern, PatternId::AttachError, "{f:#?}");
    assert!(
        f[0].evidence.iter().any(|e| e.text.ends_with(
            "status.attachError: rpc error: code = DeadlineExceeded desc = context deadline exceeded (errorCode 4)"
        )),
        "{:#?}",
        f[0].evidence
    );
}
